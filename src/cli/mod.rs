//! One module per subcommand; each exposes an `Args` struct and `run(args) -> Result<ExitCode>`.

pub mod bench;
pub mod capture;
pub mod check;
pub mod explain;
pub mod inspect;
pub mod pressure;
pub mod profile;
pub mod replay;
pub mod tune;
pub mod unroll;

/// `--fail-on` and `[check.severity]` levels as the guards' severities.
pub(crate) trait FailOnSeverity {
    fn severity(self) -> guards::Severity;
}

impl FailOnSeverity for config::FailOn {
    fn severity(self) -> guards::Severity {
        match self {
            config::FailOn::Hint => guards::Severity::Hint,
            config::FailOn::Warning => guards::Severity::Warning,
            config::FailOn::Error => guards::Severity::Error,
        }
    }
}

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
