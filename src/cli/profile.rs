//! `hip-unroll profile`.

use std::process::ExitCode;

#[derive(clap::Args)]
pub struct ProfileArgs {
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub rest: Vec<String>,
}

pub fn run(_args: ProfileArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`hip-unroll profile` is not built yet")
}
