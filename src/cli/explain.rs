//! `hip-unroll explain RULE`: prints a rule's documentation from the `guards` registry;
//! `explain --list` lists every rule id with its summary.

use anyhow::bail;
use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct ExplainArgs {
    /// Rule id (`barrier`, `unroll-blocked`, ...).
    #[arg(value_name = "RULE", required_unless_present = "list")]
    pub rule: Option<String>,
    /// List every rule id with a one-line summary.
    #[arg(long, conflicts_with = "rule")]
    pub list: bool,
}

pub fn run(args: ExplainArgs) -> anyhow::Result<ExitCode> {
    let rules = render::rules();
    let text = if args.list {
        let width = rules.iter().map(|r| r.id.len()).max().unwrap_or(0);
        rules
            .iter()
            .map(|r| format!("{:<width$}  {}\n", r.id, r.summary))
            .collect::<String>()
    } else {
        let id = args.rule.unwrap_or_default();
        match rules.iter().find(|r| r.id == id) {
            Some(r) => render::human::explain(r),
            None => bail!(
                "unknown rule id {id:?}{} (known rule ids: {})",
                did_you_mean(&id),
                rules
                    .iter()
                    .map(|r| r.id.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    };
    crate::files::stdout(&text)?;
    Ok(ExitCode::SUCCESS)
}

/// `; did you mean "wave-size"?` when a registered rule id is close to `id`, else nothing.
pub fn did_you_mean(id: &str) -> String {
    guards::rules::closest(id).map_or(String::new(), |c| format!("; did you mean {c:?}?"))
}
