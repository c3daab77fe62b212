//! One module per subcommand; each exposes an `Args` struct and `run(args) -> Result<ExitCode>`.

pub mod check;
pub mod explain;
pub mod inspect;
pub mod profile;
pub mod unroll;
