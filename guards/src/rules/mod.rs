//! The rule registry: every rule with its kind and its default severity, in one place (nowhere
//! else states a rule's severity). Each rule owns the rest in its own file: its id, summary and
//! documentation (the file's `//!` block), its detection and its messages, and its fix where it
//! has one. `hip-unroll explain RULE` prints [`Rule::doc`]; `check --select/--ignore` validate
//! ids against [`all`].

pub mod atomic;
pub mod barrier;
pub mod candidate;
pub mod dynamic_lds;
pub mod early_exit;
pub mod unroll_blocked;
pub mod vgpr_pressure;
pub mod wave_size;

use frontend::Span;

use crate::engine::{Cx, Sink};
use crate::fix::Fix;
use crate::report::Severity;

/// A loop blocker rule: its evidence lands in a loop's `blockers` (and, under a pragma, in
/// `unroll-blocked`). Each variant's detection is the `evidence` function of its own file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Blocker {
    Atomic,
    Barrier,
    DynamicLds,
    EarlyExit,
}

impl Blocker {
    /// Every blocker, in id order.
    pub const ALL: [Blocker; 4] = [
        Blocker::Atomic,
        Blocker::Barrier,
        Blocker::DynamicLds,
        Blocker::EarlyExit,
    ];

    pub fn id(self) -> &'static str {
        match self {
            Blocker::Atomic => atomic::ID,
            Blocker::Barrier => barrier::ID,
            Blocker::DynamicLds => dynamic_lds::ID,
            Blocker::EarlyExit => early_exit::ID,
        }
    }

    /// Collects this rule's evidence in one function.
    pub(crate) fn evidence(self, cx: &Cx<'_>, sink: &mut Sink<'_>) {
        match self {
            Blocker::Atomic => atomic::evidence(cx, sink),
            Blocker::Barrier => barrier::evidence(cx, sink),
            Blocker::DynamicLds => dynamic_lds::evidence(cx, sink),
            Blocker::EarlyExit => early_exit::evidence(cx, sink),
        }
    }

    pub(crate) fn slot(self) -> usize {
        self as usize
    }
}

/// What a diagnostic rule reports, before selection, suppression and severity are applied:
/// where, the message, secondary locations with their labels, and the fix if there is one.
#[derive(Debug, Clone)]
pub struct Finding {
    pub span: Span,
    pub message: String,
    pub related: Vec<(Span, String)>,
    pub fix: Option<Fix>,
}

/// What a rule produces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleKind {
    /// Blocks unrolling of a loop; appears in a loop's `blockers` (and through `unroll-blocked`).
    Blocker,
    /// Emits diagnostics of its own.
    Diagnostic,
    /// Judges compiled code objects (`hip-unroll pressure`, `check --hsaco`).
    CodeObject,
}

/// Where a rule's documentation comes from.
#[derive(Debug, Clone, Copy)]
enum Doc {
    /// The source of the rule's module: its leading `//!` comment is the documentation.
    ModuleSource(&'static str),
    /// Documentation text as is.
    Text(&'static str),
}

#[derive(Debug, Clone, Copy)]
pub struct Rule {
    /// Stable kebab-case id.
    pub id: &'static str,
    pub kind: RuleKind,
    /// Default severity of the diagnostics the rule emits (for blockers: of the `unroll-blocked`
    /// they cause); `[check.severity]` in hip-unroll.toml overrides it per rule.
    pub severity: Severity,
    /// One line: what the rule reports.
    pub summary: &'static str,
    doc: Doc,
}

impl Rule {
    /// The full documentation (markdown, ruff/clippy shape).
    pub fn doc(&self) -> String {
        match self.doc {
            Doc::Text(t) => t.trim().to_string(),
            Doc::ModuleSource(src) => module_doc(src),
        }
    }
}

/// The leading `//!` block of a Rust source file, without the markers.
fn module_doc(src: &str) -> String {
    let mut out = String::new();
    for line in src.lines() {
        let Some(rest) = line.strip_prefix("//!") else {
            break;
        };
        out.push_str(rest.strip_prefix(' ').unwrap_or(rest));
        out.push('\n');
    }
    out.trim_end().to_string()
}

/// Every rule, in the order `explain --list` shows them.
pub static REGISTRY: &[Rule] = &[
    Rule {
        id: barrier::ID,
        kind: RuleKind::Blocker,
        severity: Severity::Hint,
        summary: barrier::SUMMARY,
        doc: Doc::ModuleSource(include_str!("barrier.rs")),
    },
    Rule {
        id: atomic::ID,
        kind: RuleKind::Blocker,
        severity: Severity::Hint,
        summary: atomic::SUMMARY,
        doc: Doc::ModuleSource(include_str!("atomic.rs")),
    },
    Rule {
        id: dynamic_lds::ID,
        kind: RuleKind::Blocker,
        severity: Severity::Hint,
        summary: dynamic_lds::SUMMARY,
        doc: Doc::ModuleSource(include_str!("dynamic_lds.rs")),
    },
    Rule {
        id: early_exit::ID,
        kind: RuleKind::Blocker,
        severity: Severity::Hint,
        summary: early_exit::SUMMARY,
        doc: Doc::ModuleSource(include_str!("early_exit.rs")),
    },
    Rule {
        id: unroll_blocked::ID,
        kind: RuleKind::Diagnostic,
        severity: Severity::Hint,
        summary: unroll_blocked::SUMMARY,
        doc: Doc::ModuleSource(include_str!("unroll_blocked.rs")),
    },
    Rule {
        id: wave_size::ID,
        kind: RuleKind::Diagnostic,
        severity: Severity::Warning,
        summary: wave_size::SUMMARY,
        doc: Doc::ModuleSource(include_str!("wave_size.rs")),
    },
    Rule {
        id: candidate::ID,
        kind: RuleKind::Diagnostic,
        severity: Severity::Hint,
        summary: candidate::SUMMARY,
        doc: Doc::ModuleSource(include_str!("candidate.rs")),
    },
    Rule {
        id: vgpr_pressure::ID,
        kind: RuleKind::CodeObject,
        severity: Severity::Warning,
        summary: vgpr_pressure::SUMMARY,
        doc: Doc::Text(vgpr_pressure::DOC),
    },
];

/// Every registered rule.
pub fn all() -> &'static [Rule] {
    REGISTRY
}

/// The rule with this id.
pub fn lookup(id: &str) -> Option<&'static Rule> {
    REGISTRY.iter().find(|r| r.id == id)
}

/// The registered rule id closest to `id`, when one is close enough to be what was meant
/// (`wave_size` -> `wave-size`, `barier` -> `barrier`): for "did you mean" messages.
pub fn closest(id: &str) -> Option<&'static str> {
    let norm = |s: &str| s.trim().to_ascii_lowercase().replace('_', "-");
    let wanted = norm(id);
    REGISTRY
        .iter()
        .map(|r| (strsim::jaro_winkler(&wanted, r.id), r.id))
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, id)| id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closest_rule_ids() {
        assert_eq!(closest("wave_size"), Some("wave-size"));
        assert_eq!(closest("barier"), Some("barrier"));
        assert_eq!(closest("Atomic"), Some("atomic"));
        assert_eq!(closest("unroll-block"), Some("unroll-blocked"));
        assert_eq!(closest("dynamic_lds"), Some("dynamic-lds"));
        assert_eq!(closest("xyzzy"), None);
    }

    #[test]
    fn ids_are_unique_kebab_case_and_documented() {
        let mut ids: Vec<&str> = all().iter().map(|r| r.id).collect();
        ids.sort();
        let n = ids.len();
        ids.dedup();
        assert_eq!(ids.len(), n, "duplicate rule id");
        for r in all() {
            assert!(
                r.id.chars().all(|c| c.is_ascii_lowercase() || c == '-'),
                "{}",
                r.id
            );
            let doc = r.doc();
            for section in ["## What it does", "## Why", "## Example", "## Fix safety"] {
                assert!(doc.contains(section), "{} lacks {section}", r.id);
            }
            assert!(!r.summary.is_empty());
        }
        assert_eq!(lookup("barrier").map(|r| r.kind), Some(RuleKind::Blocker));
        assert!(lookup("nope").is_none());
        assert!(lookup("barrier").unwrap().doc().starts_with("`barrier`:"));
    }

    /// The blockers and the registry agree: each `Blocker` has a `Blocker`-kind entry under its
    /// id, each such entry is a `Blocker`, and the slots are `0..n` in `ALL` order.
    #[test]
    fn blockers_are_registered_once() {
        for (i, b) in Blocker::ALL.iter().enumerate() {
            assert_eq!(
                lookup(b.id()).map(|r| r.kind),
                Some(RuleKind::Blocker),
                "{b:?}"
            );
            assert_eq!(b.slot(), i);
        }
        let registered = all().iter().filter(|r| r.kind == RuleKind::Blocker).count();
        assert_eq!(registered, Blocker::ALL.len());
        let mut sorted = Blocker::ALL.map(|b| b.id());
        sorted.sort_unstable();
        assert_eq!(sorted, Blocker::ALL.map(|b| b.id()), "ALL is in id order");
    }
}
