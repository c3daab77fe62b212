//! `hip-unroll explain RULE`: prints a rule's documentation from the `guards` registry;
//! `explain --list` lists every rule id with its summary.

use crate::render::RuleInfo;
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
    let rules = rule_infos();
    let text = if args.list {
        let width = rules.iter().map(|r| r.id.len()).max().unwrap_or(0);
        rules
            .iter()
            .map(|r| format!("{:<width$}  {}\n", r.id, r.summary))
            .collect::<String>()
    } else {
        let id = args.rule.unwrap_or_default();
        match rules.iter().find(|r| r.id == id) {
            Some(r) => crate::render::human::explain(r),
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

/// Every rule of the registry (`guards::rules::all`), as renderers see it.
pub fn rule_infos() -> Vec<RuleInfo> {
    guards::rules::all()
        .iter()
        .map(|r| RuleInfo {
            id: r.id.to_string(),
            summary: r.summary.to_string(),
            doc: r.doc(),
            severity: r.severity,
            kind: match r.kind {
                guards::rules::RuleKind::Blocker => "blocker",
                guards::rules::RuleKind::Diagnostic => "lint",
                guards::rules::RuleKind::CodeObject => "code object",
            },
        })
        .collect()
}

/// `; did you mean "wave-size"?` when a registered rule id is close to `id`, else nothing.
pub fn did_you_mean(id: &str) -> String {
    guards::rules::closest(id).map_or(String::new(), |c| format!("; did you mean {c:?}?"))
}

/// Every known rule id, in registry order.
pub fn rule_ids() -> Vec<String> {
    rule_infos().into_iter().map(|r| r.id).collect()
}
