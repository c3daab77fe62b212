//! `hip-unroll pressure`.

use std::process::ExitCode;

#[derive(clap::Args)]
pub struct PressureArgs {
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub rest: Vec<String>,
}

pub fn run(_args: PressureArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`hip-unroll pressure` is not built yet")
}
