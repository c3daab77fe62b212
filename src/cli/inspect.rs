//! `hip-unroll inspect`.

use std::process::ExitCode;

#[derive(clap::Args)]
pub struct InspectArgs {
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub rest: Vec<String>,
}

pub fn run(_args: InspectArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`hip-unroll inspect` is not built yet")
}
