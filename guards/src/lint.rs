//! The diagnostic rules' one signature and their one sink. A diagnostic rule is a
//! [`DiagnosticRule`]: a [`Check`] from what `check` knows of a file ([`FileCx`]) to
//! [`Finding`]s, and how it is enabled ([`Enable`]). The rule only finds; [`run`] applies the
//! suppression comments (`allow-file`, and `allow` on a finding's line or its
//! [`Finding::also_at`] line) and gives each diagnostic its rule's severity. Which rules run is
//! decided once, by `Settings::enables`, from the registry's [`Enable`].

use frontend::tu::TranslationUnit;
use frontend::{Loop, SourceFile, Span};

use crate::engine::Evidence;
use crate::fix::Fix;
use crate::report::{Diagnostic, Related, Severity};
use crate::suppress::Suppressions;

/// What a diagnostic rule reports, before selection, suppression and severity are applied:
/// where, the message, secondary locations with their labels, and the fix if there is one.
#[derive(Debug, Clone)]
pub struct Finding {
    pub span: Span,
    pub message: String,
    pub related: Vec<(Span, String)>,
    pub fix: Option<Fix>,
    /// Another line whose `// hip-unroll: allow(...)` silences the finding besides its own (a
    /// loop's keyword line for a finding on the loop's pragma).
    pub also_at: Option<u32>,
}

/// How a diagnostic rule is turned on (`select`/`ignore`, `hints`); `ignore` always wins.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Enable {
    /// On unless a selection leaves it out.
    Default,
    /// On by default, and whenever a selection names a blocker (it reports the blockers).
    WithBlockers,
    /// Off unless selected or `hints` is on.
    Hint,
}

/// What a diagnostic rule's check sees: the file, its translation unit, every loop of its
/// kernels and device functions with the blocker evidence that survived suppression.
pub(crate) struct FileCx<'a> {
    pub file: &'a SourceFile,
    pub tu: &'a TranslationUnit,
    pub loops: &'a [LoopFacts<'a>],
    sup: &'a Suppressions,
    rule: &'static str,
}

impl FileCx<'_> {
    /// True when this rule is silenced on `line` (`allow` there or before, `allow-file`): for
    /// a rule whose findings depend on each other (`wave-size` withholds fixes).
    pub fn suppressed(&self, line: u32) -> bool {
        self.sup.allows(self.rule, line)
    }
}

/// One loop of a kernel or device function, as the diagnostic rules see it.
pub(crate) struct LoopFacts<'a> {
    pub lp: &'a Loop,
    /// The loop's identity (`k:0`).
    pub id: String,
    /// Its blocker evidence, loop-level suppressions applied, blockers in id order.
    pub evidence: Vec<&'a Evidence>,
    /// The distinct blocker ids of `evidence`, sorted.
    pub blockers: Vec<&'static str>,
}

/// The one signature of a diagnostic rule.
pub(crate) type Check = fn(&FileCx<'_>) -> Vec<Finding>;

/// A diagnostic rule's registry entry.
pub(crate) struct DiagnosticRule {
    pub check: Check,
    pub enable: Enable,
}

/// A diagnostic rule that this run enables, with the severity its diagnostics get.
pub(crate) struct Enabled {
    pub id: &'static str,
    pub rule: &'static DiagnosticRule,
    pub severity: Severity,
}

/// The sink: runs each enabled rule not allowed for the whole file, drops the findings an
/// `allow` silences, gives the rest the rule's severity, and sorts them by position (then rule
/// id).
pub(crate) fn run<'a>(
    path: &str,
    file: &'a SourceFile,
    tu: &'a TranslationUnit,
    loops: &'a [LoopFacts<'a>],
    sup: &'a Suppressions,
    rules: impl IntoIterator<Item = Enabled>,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for r in rules {
        if sup.file_allows(r.id) {
            continue;
        }
        let cx = FileCx {
            file,
            tu,
            loops,
            sup,
            rule: r.id,
        };
        for f in (r.rule.check)(&cx) {
            let silenced = sup.allows(r.id, f.span.line)
                || f.also_at.is_some_and(|line| sup.allows(r.id, line));
            if !silenced {
                out.push(diagnostic(path, r.id, r.severity, f));
            }
        }
    }
    out.sort_by(|a, b| (a.line, a.column, &a.rule).cmp(&(b.line, b.column, &b.rule)));
    out
}

/// A rule's finding as a diagnostic of `path`.
fn diagnostic(path: &str, rule: &str, severity: Severity, f: Finding) -> Diagnostic {
    Diagnostic {
        path: path.to_string(),
        line: f.span.line,
        column: f.span.column,
        rule: rule.to_string(),
        severity,
        message: f.message,
        span: (f.span.start, f.span.end),
        related: f
            .related
            .into_iter()
            .map(|(s, label)| Related {
                line: s.line,
                column: s.column,
                span: (s.start, s.end),
                label,
            })
            .collect(),
        fix: f.fix,
    }
}
