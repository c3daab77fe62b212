//! One module per subcommand; each exposes an `Args` struct and `run(args) -> Result<ExitCode>`.

pub mod bench;
pub mod capture;
pub mod check;
pub mod config;
pub mod explain;
pub mod hsaco;
pub mod inspect;
pub mod pressure;
pub mod profile;
pub mod replay;
pub mod tune;
pub mod unroll;
