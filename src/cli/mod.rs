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
