//! The session: the protocol's life cycle (initialize, shutdown, exit), the open documents,
//! and the scheduling of analyses. One thread owns the state and reads the client's messages,
//! the results of the workers and the debounce timer; analyses and requests run on a pool of
//! large-stack worker threads.
//!
//! Staleness: every scheduled analysis of a document gets a new generation number and a
//! cancellation token; a newer edit sets the older token (the analysis stops at its next
//! check) and a result is published only while its generation is the document's latest and
//! its version the document's version. An edit waits `debounce` before its analysis starts
//! (an open starts at once); an edit of a header re-checks the open documents whose units
//! hold it, an edit of `hip-unroll.toml` every open document. A panic in an analysis or a
//! request is caught, logged once (`window/logMessage`), and the session goes on.

use crate::analysis::{self, Analysis, Snapshot};
use crate::documents::{Documents, Kind};
use crate::features::{self, EditStyle};
use crate::{convert, Error, Exit, Options};
use crossbeam_channel::{Receiver, Sender};
use frontend::tu::HeaderCache;
use lsp_server::{ErrorCode, Message, Notification, Request, RequestId, Response};
use lsp_types::notification::{self as note, Notification as _};
use lsp_types::request::{self as req, Request as _};
use lsp_types::Uri;
use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// The custom request that reports the session's state (documents and cache entries), for
/// tests and for users who wonder what the server holds.
pub const STATUS: &str = "hip-unroll/status";

/// Header contents parsed before the header cache is replaced by an empty one (it keys by
/// content, so every edit of an open header adds an entry).
pub const HEADER_PARSES_BOUND: usize = 512;

const WORKER_PREFIX: &str = "hip-unroll-server-";
/// Stack of each worker thread: deeply nested input must not overflow it (as `check`).
const STACK_SIZE: usize = 256 << 20;

/// A panic caught on a worker.
#[derive(Debug, Clone)]
struct Panic {
    message: String,
    at: Option<String>,
}

impl Panic {
    fn line(&self, what: &str) -> String {
        format!(
            "hip-unroll: internal error while {what} (panicked{}: {}); please report it",
            self.at
                .as_ref()
                .map_or(String::new(), |a| format!(" at {a}")),
            self.message
        )
    }
}

/// What a worker sends back.
enum Done {
    Analysis {
        uri: Uri,
        generation: u64,
        result: Result<Option<Analysis>, Panic>,
    },
    /// A document's rewrite-policy source, made for a request: kept while its version is
    /// current.
    Source {
        uri: Uri,
        version: i32,
        generation: Option<u64>,
        source: Arc<pipeline::Source>,
    },
    /// The GPU specifier macros the workspace's files define (learned once, in the
    /// background, after `initialize`).
    Learned(Option<workspace::GpuMacros>),
}

struct Session {
    to_client: Sender<Message>,
    options: Options,
    style: EditStyle,
    watch_registration: bool,
    docs: Documents,
    /// The latest published analysis of each open document.
    analyses: HashMap<Uri, Arc<Analysis>>,
    /// The rewrite-policy source of open documents, with the version and generation it was
    /// made for.
    sources: HashMap<Uri, (i32, Option<u64>, Arc<pipeline::Source>)>,
    /// Debounced analyses: when each may start.
    pending: HashMap<Uri, Instant>,
    /// Analyses running: their generation and cancellation token.
    in_flight: HashMap<Uri, (u64, Arc<AtomicBool>)>,
    /// The latest generation scheduled for each document.
    generations: HashMap<Uri, u64>,
    next_generation: u64,
    headers: Arc<HeaderCache>,
    pool: rayon::ThreadPool,
    done_tx: Sender<Done>,
    done_rx: Receiver<Done>,
    shutdown: bool,
    /// The GPU specifier macros (`#define DS_D_INLINE __device__ __forceinline__`) defined by
    /// the workspace's files on disk (as `check DIR` learns them from the files of its run)...
    learned_disk: Option<Arc<workspace::GpuMacros>>,
    /// ... by each open source document's text ...
    doc_defines: HashMap<Uri, Vec<String>>,
    /// ... and both together: a document that uses one is analysed even when it includes no
    /// header that defines it (a header included by its includer).
    learned: Option<Arc<workspace::GpuMacros>>,
}

/// Serve one client: the `initialize` handshake, then messages until `exit` (or the end of
/// input).
pub fn serve(
    to_client: Sender<Message>,
    from_client: Receiver<Message>,
    malformed: Receiver<crate::transport::Malformed>,
    mut options: Options,
) -> Result<Exit, Error> {
    let mut malformed = Some(malformed);
    let params = loop {
        let msg = match from_client.recv() {
            Ok(m) => m,
            Err(_) => return Ok(Exit::WithoutShutdown),
        };
        match msg {
            Message::Request(r) if r.method == req::Initialize::METHOD => {
                let params: lsp_types::InitializeParams = match serde_json::from_value(r.params) {
                    Ok(p) => p,
                    Err(e) => {
                        let _ = to_client.send(
                            Response::new_err(
                                r.id,
                                ErrorCode::InvalidParams as i32,
                                format!("initialize: {e}"),
                            )
                            .into(),
                        );
                        continue;
                    }
                };
                let result = lsp_types::InitializeResult {
                    capabilities: crate::capabilities(),
                    server_info: Some(lsp_types::ServerInfo {
                        name: "hip-unroll".into(),
                        version: Some(env!("CARGO_PKG_VERSION").into()),
                    }),
                };
                let _ = to_client.send(Response::new_ok(r.id, result).into());
                break params;
            }
            Message::Request(r) => {
                let _ = to_client.send(
                    Response::new_err(
                        r.id,
                        ErrorCode::ServerNotInitialized as i32,
                        "the server is not initialized".into(),
                    )
                    .into(),
                );
            }
            Message::Notification(n) if n.method == note::Exit::METHOD => {
                return Ok(Exit::WithoutShutdown)
            }
            _ => {}
        }
    };
    if let Some(ms) = params
        .initialization_options
        .as_ref()
        .and_then(|o| o.get("debounceMs"))
        .and_then(|v| v.as_u64())
    {
        options.debounce = std::time::Duration::from_millis(ms.min(10_000));
    }
    let caps = &params.capabilities;
    let style = EditStyle {
        versioned: caps
            .workspace
            .as_ref()
            .and_then(|w| w.workspace_edit.as_ref())
            .and_then(|e| e.document_changes)
            .unwrap_or(false),
    };
    let watch_registration = caps
        .workspace
        .as_ref()
        .and_then(|w| w.did_change_watched_files.as_ref())
        .and_then(|d| d.dynamic_registration)
        .unwrap_or(false);
    let threads = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .clamp(2, 8);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .stack_size(STACK_SIZE)
        .thread_name(|i| format!("{WORKER_PREFIX}{i}"))
        .build()
        .map_err(Error::Threads)?;
    let (done_tx, done_rx) = crossbeam_channel::unbounded();
    let mut s = Session {
        to_client,
        options,
        style,
        watch_registration,
        docs: Documents::default(),
        analyses: HashMap::new(),
        sources: HashMap::new(),
        pending: HashMap::new(),
        in_flight: HashMap::new(),
        generations: HashMap::new(),
        next_generation: 0,
        headers: Arc::new(HeaderCache::new()),
        pool,
        done_tx,
        done_rx,
        shutdown: false,
        learned_disk: None,
        doc_defines: HashMap::new(),
        learned: None,
    };
    // The workspace's specifier macros, learned off the session's thread.
    let roots = workspace_roots(&params);
    if !roots.is_empty() {
        let tx = s.done_tx.clone();
        let spawned = std::thread::Builder::new()
            .name(format!("{WORKER_PREFIX}learn"))
            .spawn(move || {
                let _ = tx.send(Done::Learned(workspace::GpuMacros::learn_dirs(&roots)));
            });
        if let Err(e) = spawned {
            s.log(
                lsp_types::MessageType::WARNING,
                format!("hip-unroll: the workspace's specifier macros are not learned: {e}"),
            );
        }
    }
    loop {
        let timer = match s.pending.values().min() {
            Some(t) => crossbeam_channel::at(*t),
            None => crossbeam_channel::never(),
        };
        let never = crossbeam_channel::never();
        let bad = malformed.as_ref().unwrap_or(&never);
        crossbeam_channel::select! {
            recv(from_client) -> msg => match msg {
                Ok(msg) => {
                    if let Some(exit) = s.handle(msg) {
                        return Ok(exit);
                    }
                }
                Err(_) => {
                    return Ok(if s.shutdown { Exit::AfterShutdown } else { Exit::WithoutShutdown })
                }
            },
            recv(s.done_rx) -> done => {
                if let Ok(done) = done {
                    s.finish(done);
                }
            },
            recv(bad) -> m => match m {
                Ok(m) => s.log(lsp_types::MessageType::WARNING, format!("hip-unroll: {}", m.0)),
                Err(_) => malformed = None,
            },
            recv(timer) -> _ => s.fire_due(),
        }
    }
}

/// The workspace folders of `initialize` (else its root), as directories.
fn workspace_roots(params: &lsp_types::InitializeParams) -> Vec<std::path::PathBuf> {
    let mut roots: Vec<std::path::PathBuf> = params
        .workspace_folders
        .iter()
        .flatten()
        .filter_map(|f| crate::documents::file_path(&f.uri))
        .collect();
    if roots.is_empty() {
        #[allow(deprecated)]
        let root = params.root_uri.as_ref();
        roots.extend(root.and_then(crate::documents::file_path));
    }
    roots.retain(|r| r.is_dir());
    roots.sort();
    roots.dedup();
    roots
}

impl Session {
    fn send(&self, msg: impl Into<Message>) {
        let _ = self.to_client.send(msg.into());
    }

    fn notify<N: lsp_types::notification::Notification>(&self, params: N::Params) {
        self.send(Notification::new(N::METHOD.to_string(), params));
    }

    fn log(&self, typ: lsp_types::MessageType, message: String) {
        self.notify::<note::LogMessage>(lsp_types::LogMessageParams { typ, message });
    }

    /// One message from the client; `Some` when the session ends.
    fn handle(&mut self, msg: Message) -> Option<Exit> {
        match msg {
            Message::Request(r) => self.request(r),
            Message::Notification(n) => return self.notification(n),
            Message::Response(_) => {} // to our registration request
        }
        None
    }

    fn request(&mut self, r: Request) {
        if self.shutdown {
            self.send(Response::new_err(
                r.id,
                ErrorCode::InvalidRequest as i32,
                "the server is shutting down".into(),
            ));
            return;
        }
        match r.method.as_str() {
            req::Shutdown::METHOD => {
                self.shutdown = true;
                for (_, t) in self.in_flight.values() {
                    t.store(true, Ordering::Relaxed);
                }
                self.pending.clear();
                self.send(Response::new_ok(r.id, ()));
            }
            req::CodeActionRequest::METHOD => {
                match serde_json::from_value::<lsp_types::CodeActionParams>(r.params) {
                    Ok(p) => self.spawn_request(
                        r.id,
                        p.text_document.uri.clone(),
                        Query::Actions(p.range),
                    ),
                    Err(e) => self.invalid(r.id, e),
                }
            }
            req::HoverRequest::METHOD => {
                match serde_json::from_value::<lsp_types::HoverParams>(r.params) {
                    Ok(p) => {
                        let at = p.text_document_position_params;
                        self.spawn_request(r.id, at.text_document.uri, Query::Hover(at.position))
                    }
                    Err(e) => self.invalid(r.id, e),
                }
            }
            STATUS => {
                let status = serde_json::json!({
                    "documents": self.docs.count(),
                    "analyses": self.analyses.len(),
                    "sources": self.sources.len(),
                    "pending": self.pending.len(),
                    "inFlight": self.in_flight.len(),
                    "generations": self.generations.len(),
                    "headerParses": self.headers.parses(),
                    "debounceMs": self.options.debounce.as_millis() as u64,
                    "specifierMacros": self.learned.as_ref().map_or(Vec::new(), |g| g.names().to_vec()),
                });
                self.send(Response::new_ok(r.id, status));
            }
            _ => self.send(Response::new_err(
                r.id,
                ErrorCode::MethodNotFound as i32,
                format!("unknown method {}", r.method),
            )),
        }
    }

    fn invalid(&self, id: RequestId, e: serde_json::Error) {
        self.send(Response::new_err(
            id,
            ErrorCode::InvalidParams as i32,
            e.to_string(),
        ));
    }

    fn notification(&mut self, n: Notification) -> Option<Exit> {
        match n.method.as_str() {
            note::Exit::METHOD => {
                return Some(if self.shutdown {
                    Exit::AfterShutdown
                } else {
                    Exit::WithoutShutdown
                })
            }
            _ if self.shutdown => {}
            note::Initialized::METHOD => self.register_watchers(),
            note::DidOpenTextDocument::METHOD => {
                if let Ok(p) = n.extract::<lsp_types::DidOpenTextDocumentParams>(
                    note::DidOpenTextDocument::METHOD,
                ) {
                    let d = p.text_document;
                    let doc = self
                        .docs
                        .open(d.uri.clone(), d.version, d.text.into_bytes());
                    let (kind, path) = (doc.kind, doc.path.clone());
                    match kind {
                        Kind::Source => self.schedule(&d.uri),
                        Kind::Config => self.recheck_all(false),
                        Kind::Other => {}
                    }
                    if let Some(p) = path {
                        for u in self.dependents(&p, true) {
                            self.schedule(&u);
                        }
                    }
                }
            }
            note::DidChangeTextDocument::METHOD => {
                if let Ok(p) = n.extract::<lsp_types::DidChangeTextDocumentParams>(
                    note::DidChangeTextDocument::METHOD,
                ) {
                    let uri = p.text_document.uri;
                    match self
                        .docs
                        .change(&uri, p.text_document.version, p.content_changes)
                    {
                        Ok(doc) => {
                            let (kind, path) = (doc.kind, doc.path.clone());
                            self.cancel(&uri);
                            match kind {
                                Kind::Source => self.debounce(&uri),
                                Kind::Config => self.recheck_all(true),
                                Kind::Other => {}
                            }
                            if let Some(p) = path {
                                for u in self.dependents(&p, false) {
                                    self.cancel(&u);
                                    self.debounce(&u);
                                }
                            }
                        }
                        Err(e) => {
                            self.log(lsp_types::MessageType::WARNING, format!("hip-unroll: {e}"))
                        }
                    }
                }
            }
            note::DidSaveTextDocument::METHOD => {
                if let Ok(p) = n.extract::<lsp_types::DidSaveTextDocumentParams>(
                    note::DidSaveTextDocument::METHOD,
                ) {
                    // The disk changed: headers read from it before are read again.
                    self.headers = Arc::new(HeaderCache::new());
                    if self
                        .docs
                        .get(&p.text_document.uri)
                        .is_some_and(|d| d.kind == Kind::Config)
                    {
                        self.recheck_all(false);
                    }
                }
            }
            note::DidCloseTextDocument::METHOD => {
                if let Ok(p) = n.extract::<lsp_types::DidCloseTextDocumentParams>(
                    note::DidCloseTextDocument::METHOD,
                ) {
                    let uri = p.text_document.uri;
                    self.forget(&uri);
                    let closed = self.docs.close(&uri);
                    self.note_defines(&uri, Vec::new());
                    if let Some(doc) = closed {
                        // The disk's copy stands in again.
                        self.headers = Arc::new(HeaderCache::new());
                        if doc.kind == Kind::Source {
                            self.notify::<note::PublishDiagnostics>(
                                lsp_types::PublishDiagnosticsParams {
                                    uri: uri.clone(),
                                    diagnostics: Vec::new(),
                                    version: None,
                                },
                            );
                        }
                        if doc.kind == Kind::Config {
                            self.recheck_all(false);
                        } else if let Some(p) = &doc.path {
                            for u in self.dependents(p, false) {
                                self.schedule(&u);
                            }
                        }
                    }
                }
            }
            note::DidChangeWatchedFiles::METHOD => {
                if let Ok(p) = n.extract::<lsp_types::DidChangeWatchedFilesParams>(
                    note::DidChangeWatchedFiles::METHOD,
                ) {
                    self.headers = Arc::new(HeaderCache::new());
                    let mut all = false;
                    let mut some: Vec<Uri> = Vec::new();
                    for ev in p.changes {
                        let Some(path) = crate::documents::file_path(&ev.uri) else {
                            continue;
                        };
                        if crate::documents::kind_of(&path) == Kind::Config
                            || ev.typ != lsp_types::FileChangeType::CHANGED
                        {
                            all = true;
                        } else {
                            for u in self.dependents(&path, false) {
                                if !some.contains(&u) {
                                    some.push(u);
                                }
                            }
                        }
                    }
                    if all {
                        self.recheck_all(false);
                    } else {
                        for u in some {
                            self.schedule(&u);
                        }
                    }
                }
            }
            _ => {}
        }
        None
    }

    /// Ask the client to tell us when a config or a header changes on disk.
    fn register_watchers(&self) {
        if !self.watch_registration {
            return;
        }
        let globs = [
            format!("**/{}", config::CONFIG_NAME),
            format!("**/*.{{{}}}", workspace::EXTENSIONS.join(",")),
        ];
        let options = lsp_types::DidChangeWatchedFilesRegistrationOptions {
            watchers: globs
                .into_iter()
                .map(|g| lsp_types::FileSystemWatcher {
                    glob_pattern: lsp_types::GlobPattern::String(g),
                    kind: None,
                })
                .collect(),
        };
        let params = lsp_types::RegistrationParams {
            registrations: vec![lsp_types::Registration {
                id: "hip-unroll-watch".into(),
                method: note::DidChangeWatchedFiles::METHOD.into(),
                register_options: serde_json::to_value(options).ok(),
            }],
        };
        self.send(Request::new(
            RequestId::from("hip-unroll-register-watchers".to_string()),
            req::RegisterCapability::METHOD.into(),
            params,
        ));
    }

    /// Open sources whose last analysis holds `path` among its headers (and, when `new`, those
    /// with an include not found: a newly opened buffer may be it).
    /// (A document still in its first analysis has no known unit yet: it is one too.)
    fn dependents(&self, path: &Path, new: bool) -> Vec<Uri> {
        self.docs
            .iter()
            .filter(|d| d.kind == Kind::Source && d.path.as_deref() != Some(path))
            .filter(|d| match self.analyses.get(&d.uri) {
                Some(a) => a.headers.iter().any(|h| h == path) || (new && a.missing),
                None => self.in_flight.contains_key(&d.uri),
            })
            .map(|d| d.uri.clone())
            .collect()
    }

    fn recheck_all(&mut self, debounced: bool) {
        let uris: Vec<Uri> = self
            .docs
            .iter()
            .filter(|d| d.kind == Kind::Source)
            .map(|d| d.uri.clone())
            .collect();
        for u in uris {
            self.cancel(&u);
            if debounced {
                self.debounce(&u);
            } else {
                self.schedule(&u);
            }
        }
    }

    /// What was computed for the document's text and units so far is out of date: the running
    /// analysis is cancelled (and its result would no longer be current: the generation is
    /// dropped), the kept rewrite source too.
    fn cancel(&mut self, uri: &Uri) {
        if let Some((_, t)) = self.in_flight.get(uri) {
            t.store(true, Ordering::Relaxed);
        }
        self.generations.remove(uri);
        self.sources.remove(uri);
    }

    /// Everything held for a document that is closed.
    fn forget(&mut self, uri: &Uri) {
        self.cancel(uri);
        self.in_flight.remove(uri);
        self.pending.remove(uri);
        self.analyses.remove(uri);
        self.sources.remove(uri);
        self.generations.remove(uri);
    }

    fn debounce(&mut self, uri: &Uri) {
        self.pending
            .insert(uri.clone(), Instant::now() + self.options.debounce);
    }

    fn fire_due(&mut self) {
        let now = Instant::now();
        let due: Vec<Uri> = self
            .pending
            .iter()
            .filter(|(_, t)| **t <= now)
            .map(|(u, _)| u.clone())
            .collect();
        for u in due {
            self.schedule(&u);
        }
    }

    fn snapshot(&self, uri: &Uri) -> Option<Snapshot> {
        let doc = self.docs.get(uri)?;
        Some(Snapshot {
            path: doc.path.clone(),
            version: doc.version,
            text: doc.text.clone(),
            overlay: self.docs.overlay(),
            headers: self.headers.clone(),
            learned: self.learned.clone(),
        })
    }

    /// Start the analysis of a document now (cancelling the one running).
    fn schedule(&mut self, uri: &Uri) {
        self.pending.remove(uri);
        if self.shutdown {
            return;
        }
        let Some(snap) = self.snapshot(uri) else {
            return;
        };
        if self.docs.get(uri).is_some_and(|d| d.kind != Kind::Source) {
            return;
        }
        self.cancel(uri);
        self.next_generation += 1;
        let generation = self.next_generation;
        let token = Arc::new(AtomicBool::new(false));
        self.in_flight
            .insert(uri.clone(), (generation, token.clone()));
        self.generations.insert(uri.clone(), generation);
        let tx = self.done_tx.clone();
        let uri = uri.clone();
        self.pool.spawn(move || {
            if token.load(Ordering::Relaxed) {
                let _ = tx.send(Done::Analysis {
                    uri,
                    generation,
                    result: Ok(None),
                });
                return;
            }
            let result = catch(|| analysis::analyse(&snap, &token));
            let _ = tx.send(Done::Analysis {
                uri,
                generation,
                result,
            });
        });
    }

    fn finish(&mut self, done: Done) {
        match done {
            Done::Analysis {
                uri,
                generation,
                result,
            } => {
                if self
                    .in_flight
                    .get(&uri)
                    .is_some_and(|(g, _)| *g == generation)
                {
                    self.in_flight.remove(&uri);
                }
                let current = self.generations.get(&uri) == Some(&generation);
                let Some(doc) = self.docs.get(&uri).filter(|_| current) else {
                    return;
                };
                let version = doc.version;
                let path = doc.path.clone();
                match result {
                    Ok(Some(a)) if a.version == version => {
                        let defines = a.defines.clone();
                        self.publish(&uri, a);
                        self.note_defines(&uri, defines);
                    }
                    Ok(_) => {} // cancelled or stale: a newer analysis is scheduled
                    Err(p) => {
                        let what = format!(
                            "analysing {}",
                            path.map_or_else(
                                || uri.as_str().to_string(),
                                |p| p.display().to_string()
                            )
                        );
                        self.log(lsp_types::MessageType::ERROR, p.line(&what));
                        self.analyses.remove(&uri);
                        self.notify::<note::PublishDiagnostics>(
                            lsp_types::PublishDiagnosticsParams {
                                uri,
                                diagnostics: Vec::new(),
                                version: Some(version),
                            },
                        );
                    }
                }
                if self.headers.parses() > HEADER_PARSES_BOUND {
                    self.headers = Arc::new(HeaderCache::new());
                }
            }
            Done::Source {
                uri,
                version,
                generation,
                source,
            } => {
                let current = self.docs.get(&uri).is_some_and(|d| d.version == version)
                    && self.generations.get(&uri).copied() == generation;
                if current {
                    self.sources.insert(uri, (version, generation, source));
                }
            }
            Done::Learned(g) => {
                self.learned_disk = g.map(Arc::new);
                self.relearn();
            }
        }
    }

    /// Record the specifier macros that the open document `uri` defines now (read by its
    /// analysis; none once it is closed); when what the session knows changes, every open
    /// source is checked again.
    fn note_defines(&mut self, uri: &Uri, now: Vec<String>) {
        let before = self.doc_defines.get(uri).map_or(&[][..], |v| v.as_slice());
        if before == now.as_slice() {
            return;
        }
        if now.is_empty() {
            self.doc_defines.remove(uri);
        } else {
            self.doc_defines.insert(uri.clone(), now);
        }
        self.relearn();
    }

    /// Join the disk's and the open documents' specifier macros; when the set changed,
    /// re-check the open sources it may concern: those the pre-filter skipped or let through
    /// only for a learned macro, and those whose analysis has not been published yet.
    fn relearn(&mut self) {
        let mut extra: Vec<String> = self.doc_defines.values().flatten().cloned().collect();
        extra.sort();
        extra.dedup();
        let joined = workspace::GpuMacros::with(self.learned_disk.as_deref(), &extra);
        let names = |g: Option<&workspace::GpuMacros>| g.map(|g| g.names().to_vec());
        let changed = names(joined.as_ref()) != names(self.learned.as_deref());
        self.learned = joined.map(Arc::new);
        if !changed {
            return;
        }
        let uris: Vec<Uri> = self
            .docs
            .iter()
            .filter(|d| d.kind == Kind::Source)
            .filter(|d| self.analyses.get(&d.uri).is_none_or(|a| a.by_learned))
            .map(|d| d.uri.clone())
            .collect();
        for u in uris {
            self.cancel(&u);
            self.debounce(&u);
        }
    }

    fn publish(&mut self, uri: &Uri, a: Analysis) {
        let mut diagnostics: Vec<lsp_types::Diagnostic> = a
            .diagnostics
            .iter()
            .map(|d| convert::diagnostic(d, uri, &a.text, &a.lines))
            .collect();
        if let Some(e) = &a.config_error {
            diagnostics.push(lsp_types::Diagnostic {
                range: lsp_types::Range::default(),
                severity: Some(lsp_types::DiagnosticSeverity::ERROR),
                source: Some(convert::SOURCE.into()),
                message: format!("hip-unroll.toml cannot be used, nothing was checked: {e}"),
                ..lsp_types::Diagnostic::default()
            });
        }
        let version = a.version;
        self.analyses.insert(uri.clone(), Arc::new(a));
        self.notify::<note::PublishDiagnostics>(lsp_types::PublishDiagnosticsParams {
            uri: uri.clone(),
            diagnostics,
            version: Some(version),
        });
    }

    /// Answer a code-action or hover request on a worker, from the document as it is now.
    fn spawn_request(&mut self, id: RequestId, uri: Uri, query: Query) {
        let Some(snap) = self.snapshot(&uri) else {
            self.send(Response::new_ok(id, serde_json::Value::Null));
            return;
        };
        // What was published stands only when nothing newer is on its way (an edit of the text,
        // of a header or of the config cancels and reschedules); else the worker recomputes.
        let settled = !self.pending.contains_key(&uri) && !self.in_flight.contains_key(&uri);
        let analysis = self
            .analyses
            .get(&uri)
            .filter(|a| settled && a.version == snap.version)
            .cloned();
        let generation = self.generations.get(&uri).copied();
        let source = self
            .sources
            .get(&uri)
            .filter(|(v, g, _)| *v == snap.version && *g == generation)
            .map(|(_, _, s)| s.clone());
        let is_source = self.docs.get(&uri).is_some_and(|d| d.kind == Kind::Source);
        let to_client = self.to_client.clone();
        let done = self.done_tx.clone();
        let style = self.style;
        self.pool.spawn(move || {
            let result = catch(|| {
                if !is_source {
                    return serde_json::Value::Null;
                }
                let never = AtomicBool::new(false);
                let Some(analysis) =
                    analysis.or_else(|| analysis::analyse(&snap, &never).map(Arc::new))
                else {
                    return serde_json::Value::Null;
                };
                let source = source.or_else(|| {
                    let s = Arc::new(analysis::source(&snap)?);
                    let _ = done.send(Done::Source {
                        uri: uri.clone(),
                        version: snap.version,
                        generation,
                        source: s.clone(),
                    });
                    Some(s)
                });
                match query {
                    Query::Actions(range) => serde_json::to_value(features::code_actions(
                        &uri,
                        &analysis,
                        source.as_deref(),
                        range,
                        style,
                    )),
                    Query::Hover(pos) => {
                        let at = convert::offset(&analysis.text, &analysis.lines, pos);
                        serde_json::to_value(features::hover(&analysis, source.as_deref(), at))
                    }
                }
                .unwrap_or(serde_json::Value::Null)
            });
            let response = match result {
                Ok(v) => Response::new_ok(id, v),
                Err(p) => {
                    let line = p.line(&format!("answering {} on {}", query.method(), uri.as_str()));
                    let _ = to_client.send(
                        Notification::new(
                            note::LogMessage::METHOD.into(),
                            lsp_types::LogMessageParams {
                                typ: lsp_types::MessageType::ERROR,
                                message: line.clone(),
                            },
                        )
                        .into(),
                    );
                    Response::new_err(id, ErrorCode::InternalError as i32, line)
                }
            };
            let _ = to_client.send(response.into());
        });
    }
}

/// A request answered on a worker.
#[derive(Debug, Clone, Copy)]
enum Query {
    Actions(lsp_types::Range),
    Hover(lsp_types::Position),
}

impl Query {
    fn method(&self) -> &'static str {
        match self {
            Query::Actions(_) => req::CodeActionRequest::METHOD,
            Query::Hover(_) => req::HoverRequest::METHOD,
        }
    }
}

/// `f()`, its panic caught (with where it happened).
fn catch<T>(f: impl FnOnce() -> T) -> Result<T, Panic> {
    workspace::panics::catch(f).map_err(|c| Panic {
        message: c.message,
        at: c.at,
    })
}
