//! `hip-unroll server`: the language server on stdin/stdout (the `server` crate); this module
//! only turns its end into the exit status the protocol asks (0 after `shutdown`, 1 without).

use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct ServerArgs {
    /// Milliseconds between an edit and its analysis (a newer edit restarts the wait); the
    /// client's `debounceMs` initialization option overrides it.
    #[arg(long, value_name = "MS", default_value_t = server::DEFAULT_DEBOUNCE_MS)]
    pub debounce: u64,
}

pub fn run(args: ServerArgs) -> anyhow::Result<ExitCode> {
    let options = server::Options {
        debounce: std::time::Duration::from_millis(args.debounce),
    };
    let exit = server::run_stdio(options)?;
    Ok(ExitCode::from(exit.code()))
}
