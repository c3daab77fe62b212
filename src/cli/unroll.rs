//! `hip-unroll unroll`.

use std::process::ExitCode;

#[derive(clap::Args)]
pub struct UnrollArgs {
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub rest: Vec<String>,
}

pub fn run(_args: UnrollArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`hip-unroll unroll` is not built yet")
}
