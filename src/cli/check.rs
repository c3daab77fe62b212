//! `hip-unroll check`.

use std::process::ExitCode;

#[derive(clap::Args)]
pub struct CheckArgs {
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub rest: Vec<String>,
}

pub fn run(_args: CheckArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`hip-unroll check` is not built yet")
}
