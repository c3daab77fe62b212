//! server: `hip-unroll server`, the lint and the safe rewrites inside every editor, over the
//! Language Server Protocol on stdin/stdout (as `ruff_server`): `check`'s diagnostics for every
//! open HIP/CUDA document from its unsaved text, its fixes as quick fixes, the unroll rewrites
//! the guards allow as refactors, and each loop's verdict on hover.
//!
//! `lsp-server` frames and types the JSON-RPC messages and `lsp-types` the protocol; the
//! modules: `transport` (stdio, a reader that survives invalid UTF-8), `documents` (the open
//! documents and their overlay), `analysis` (one document as `check` sees it, and as `unroll`
//! sees it), `convert` (findings in LSP terms), `features` (code actions, hover) and `session`
//! (life cycle, scheduling, staleness, panics). The library spawns no process and prints
//! nothing: it talks to the client through the transport's channels only.

mod analysis;
mod convert;
mod documents;
mod features;
mod session;
pub mod transport;

pub use analysis::PANIC_ENV;
pub use session::{HEADER_PARSES_BOUND, STATUS};

use std::time::Duration;

/// How the server behaves; the client may change `debounce` with the initialization option
/// `debounceMs`.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// How long after an edit its analysis starts (a newer edit restarts the wait).
    pub debounce: Duration,
}

/// The default debounce, in milliseconds.
pub const DEFAULT_DEBOUNCE_MS: u64 = 100;

impl Default for Options {
    fn default() -> Options {
        Options {
            debounce: Duration::from_millis(DEFAULT_DEBOUNCE_MS),
        }
    }
}

/// How the session ended, for the exit status the protocol asks: 0 after `shutdown`, 1
/// without.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    AfterShutdown,
    WithoutShutdown,
}

impl Exit {
    pub fn code(self) -> u8 {
        match self {
            Exit::AfterShutdown => 0,
            Exit::WithoutShutdown => 1,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot start the analysis threads")]
    Threads(#[source] rayon::ThreadPoolBuildError),
    #[error("cannot write to the client")]
    Io(#[source] std::io::Error),
}

/// What the server offers: full or incremental text sync with saves, hover, quick fixes and
/// rewrite refactors.
pub fn capabilities() -> lsp_types::ServerCapabilities {
    use lsp_types::*;
    ServerCapabilities {
        position_encoding: Some(PositionEncodingKind::UTF16),
        text_document_sync: Some(TextDocumentSyncCapability::Options(
            TextDocumentSyncOptions {
                open_close: Some(true),
                change: Some(TextDocumentSyncKind::INCREMENTAL),
                save: Some(TextDocumentSyncSaveOptions::Supported(true)),
                ..TextDocumentSyncOptions::default()
            },
        )),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        code_action_provider: Some(CodeActionProviderCapability::Options(CodeActionOptions {
            code_action_kinds: Some(vec![
                CodeActionKind::QUICKFIX,
                CodeActionKind::REFACTOR_REWRITE,
            ]),
            resolve_provider: Some(false),
            work_done_progress_options: WorkDoneProgressOptions::default(),
        })),
        ..ServerCapabilities::default()
    }
}

/// Serve one client on stdin/stdout until it says `exit` or closes the input.
pub fn run_stdio(options: Options) -> Result<Exit, Error> {
    let (to_client, from_client, malformed, threads) = transport::stdio();
    let exit = session::serve(to_client, from_client, malformed, options)?;
    threads.flush(Duration::from_secs(2)).map_err(Error::Io)?;
    Ok(exit)
}
