//! `hip-unroll explain`.

use std::process::ExitCode;

#[derive(clap::Args)]
pub struct ExplainArgs {
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub rest: Vec<String>,
}

pub fn run(_args: ExplainArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`hip-unroll explain` is not built yet")
}
