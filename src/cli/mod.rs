//! One module per subcommand; each exposes an `Args` struct and `run(args) -> Result<ExitCode>`.

pub mod bench;
pub mod capture;
pub mod check;
pub mod explain;
pub mod inspect;
pub mod pressure;
pub mod profile;
pub mod replay;
pub mod server;
pub mod tune;
pub mod unroll;

/// A regex argument (`--time-regex`, `--kernel`); the error is one line naming the flag, the
/// pattern and the reason (the regex crate's own message is a multi-line code frame).
pub(crate) fn regex_arg(flag: &str, pattern: &str) -> anyhow::Result<regex::Regex> {
    regex::Regex::new(pattern).map_err(|e| {
        anyhow::anyhow!(
            "{flag}: `{pattern}` is not a regex: {}",
            profiler::error::regex_reason(&e)
        )
    })
}
