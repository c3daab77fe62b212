//! The rule registry: every rule with its kind and its default severity, one line each in
//! `registry!` (nowhere else states a rule's kind or severity). Each rule owns the rest in its
//! own file: its id, summary and documentation (the file's `//!` block), its detection and its
//! messages, its fix where it has one, and what the engine runs (`BLOCKER`, `DIAGNOSTIC`). `hip-unroll explain RULE` prints [`Rule::doc`]; `check --select/--ignore` validate
//! ids against [`all`].

use std::sync::LazyLock;

use crate::engine::{Blocker, BlockerRule};
use crate::lint::DiagnosticRule;
use crate::report::Severity;

pub use crate::lint::Finding;

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
    imp: Imp,
}

/// What the engine runs for a rule: a blocker's reach predicates and detection, or a
/// diagnostic rule's check and how it is enabled.
#[derive(Clone, Copy)]
enum Imp {
    Blocker(&'static BlockerRule),
    Diagnostic(&'static DiagnosticRule),
    /// Run elsewhere (`codeobj::judge`).
    None,
}

impl std::fmt::Debug for Imp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Imp::Blocker(_) => "Blocker",
            Imp::Diagnostic(_) => "Diagnostic",
            Imp::None => "None",
        })
    }
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

/// The registry: one line per rule, `module: Kind, default severity;`, in the order
/// `explain --list` shows them. Each line declares the rule's module (`rules/<module>.rs`,
/// which holds `ID`, `SUMMARY`, its documentation, and `BLOCKER` or `DIAGNOSTIC`, its
/// registry entry; a code-object rule's `DOC`) and adds the rule to [`REGISTRY`]. A blocker's
/// slot is its position among the blockers here.
macro_rules! registry {
    ($($module:ident: $kind:ident, $severity:ident;)*) => {
        $(pub mod $module;)*

        /// Every rule, in the order `explain --list` shows them.
        pub static REGISTRY: &[Rule] = &[$(registry!(@rule $module, $kind, $severity)),*];
    };
    (@rule $module:ident, Blocker, $severity:ident) => {
        registry!(@entry $module, Blocker, $severity, Imp::Blocker(&$module::BLOCKER),
            Doc::ModuleSource(include_str!(concat!(stringify!($module), ".rs"))))
    };
    (@rule $module:ident, Diagnostic, $severity:ident) => {
        registry!(@entry $module, Diagnostic, $severity, Imp::Diagnostic(&$module::DIAGNOSTIC),
            Doc::ModuleSource(include_str!(concat!(stringify!($module), ".rs"))))
    };
    (@rule $module:ident, CodeObject, $severity:ident) => {
        registry!(@entry $module, CodeObject, $severity, Imp::None, Doc::Text($module::DOC))
    };
    (@entry $module:ident, $kind:ident, $severity:ident, $imp:expr, $doc:expr) => {
        Rule {
            id: $module::ID,
            kind: RuleKind::$kind,
            severity: Severity::$severity,
            summary: $module::SUMMARY,
            doc: $doc,
            imp: $imp,
        }
    };
}

registry! {
    barrier: Blocker, Hint;
    atomic: Blocker, Hint;
    dynamic_lds: Blocker, Hint;
    early_exit: Blocker, Hint;
    unroll_blocked: Diagnostic, Hint;
    wave_size: Diagnostic, Warning;
    candidate: Diagnostic, Hint;
    include_not_found: Diagnostic, Hint;
    vgpr_pressure: CodeObject, Warning;
}

/// The blocker rules in registry order (index = slot), each with its [`Blocker`].
pub(crate) fn blockers() -> &'static [(Blocker, &'static BlockerRule)] {
    static BLOCKERS: LazyLock<Vec<(Blocker, &'static BlockerRule)>> = LazyLock::new(|| {
        REGISTRY
            .iter()
            .filter_map(|r| match r.imp {
                Imp::Blocker(b) => Some((Blocker::new(r.id), b)),
                _ => None,
            })
            .collect()
    });
    &BLOCKERS
}

/// The diagnostic rules in registry order, with their ids.
pub(crate) fn diagnostics() -> impl Iterator<Item = (&'static str, &'static DiagnosticRule)> {
    REGISTRY.iter().filter_map(|r| match r.imp {
        Imp::Diagnostic(d) => Some((r.id, d)),
        _ => None,
    })
}

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

    /// The blockers are the registry's `Blocker`-kind entries, once each, in registry order
    /// (their slots), and the diagnostic rules its `Diagnostic`-kind ones.
    #[test]
    fn blockers_and_diagnostics_come_from_the_registry() {
        let kind_ids = |k: RuleKind| -> Vec<&str> {
            all().iter().filter(|r| r.kind == k).map(|r| r.id).collect()
        };
        let blocker_ids: Vec<&str> = blockers().iter().map(|(b, _)| b.id()).collect();
        assert_eq!(blocker_ids, kind_ids(RuleKind::Blocker));
        // Today's blockers are all there, in this order (a new one may stand anywhere: adding a
        // blocker is its file plus its registry line, nothing here).
        let real = ["barrier", "atomic", "dynamic-lds", "early-exit"];
        let kept: Vec<&str> = blocker_ids
            .iter()
            .copied()
            .filter(|id| real.contains(id))
            .collect();
        assert_eq!(kept, real);
        let diag_ids: Vec<&str> = diagnostics().map(|(id, _)| id).collect();
        assert_eq!(diag_ids, kind_ids(RuleKind::Diagnostic));
        assert!(matches!(lookup("vgpr-pressure").unwrap().imp, Imp::None));
    }
}
