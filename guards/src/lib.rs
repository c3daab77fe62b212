//! guards: decides, for every loop of the IR, whether unrolling it is safe, and why not.
//!
//! One file per rule under `rules/`; [`rules::REGISTRY`] lists them. Rules return data
//! (evidence, findings); [`check_source`] turns them into the report and diagnostics that the
//! renderers in the binary print. Everything is computed from the `frontend` IR: comments and
//! string literals never trigger a rule.

mod callgraph;
mod engine;
pub mod fix;
pub mod hsaco;
pub mod report;
pub mod rules;
mod suppress;
mod util;

pub use engine::{Blocker, Evidence, LoopVerdict};
pub use fix::{Applicability, Fix};
pub use report::*;
pub use suppress::Suppressions;

use std::collections::BTreeMap;

use frontend::{FunctionKind, LoopLoc, SourceFile, UnrollHint};

/// What `check` should report: which rules are on, whether hints are emitted.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    /// Rule ids to run; `None` = the default set. Selecting only non-blocker rules (e.g.
    /// `unroll-blocked`) keeps every blocker active; selecting some blockers restricts the
    /// blockers to those.
    pub select: Option<Vec<String>>,
    /// Rule ids to turn off.
    pub ignore: Vec<String>,
    /// Emit `candidate` hints for unrollable loops without a pragma.
    pub hints: bool,
    /// Parse every file, even one with no GPU code (no `__global__`, `__device__` or
    /// `__launch_bounds__` anywhere in its bytes) and no possible warp-size constant (`warp`
    /// or `wave` and `32`). Off by default: such a file cannot hold a kernel, a device
    /// function or a `wave-size` finding, so `check_source` skips its parse and reports it with
    /// `parsed: false`; turn this on to count parse errors over all files.
    pub parse_all: bool,
    /// Severity of the diagnostics of a rule, by rule id, instead of the rule's default
    /// (`[check.severity]` in hip-unroll.toml: `unroll-blocked = "warning"`).
    pub severity: BTreeMap<String, Severity>,
}

impl Settings {
    fn ignored(&self, id: &str) -> bool {
        self.ignore.iter().any(|r| r == id)
    }

    fn selected(&self, id: &str) -> bool {
        self.select
            .as_ref()
            .is_some_and(|s| s.iter().any(|r| r == id || r == "all" || r == "ALL"))
    }

    fn blocker_active(&self, b: Blocker) -> bool {
        if self.ignored(b.id()) {
            return false;
        }
        match &self.select {
            None => true,
            Some(sel) => {
                let names_blockers = Blocker::ALL.iter().any(|x| sel.iter().any(|r| r == x.id()));
                !names_blockers || self.selected(b.id())
            }
        }
    }

    /// The severity of `id`'s diagnostics: the configured one, else the rule's default.
    pub fn severity_of(&self, id: &str) -> Severity {
        self.severity
            .get(id)
            .copied()
            .or_else(|| rules::lookup(id).map(|r| r.severity))
            .unwrap_or(Severity::Warning)
    }

    fn diagnostic_active(&self, id: &str) -> bool {
        !self.ignored(id) && self.select.as_ref().is_none_or(|_| self.selected(id))
    }
}

/// The blocker verdicts of one file, per function (index into `SourceFile::functions`) and loop.
#[derive(Debug, Clone)]
pub struct FileAnalysis {
    /// `loops[f][l]`: the verdict of loop `l` of function `f` (host functions: no evidence).
    pub loops: Vec<Vec<LoopVerdict>>,
}

/// Runs the blocker rules over a parsed file (suppressions and selection applied): the
/// verdicts `check` reports.
pub fn analyze(file: &SourceFile, source: &[u8], settings: &Settings) -> FileAnalysis {
    let sup = Suppressions::from_file(file, source);
    analyze_with(file, settings, &sup)
}

/// Runs every blocker rule over a parsed file, whatever a selection or an inline
/// `allow(...)` says: the verdicts a rewrite must respect. Suppressions quiet the lint; they
/// never make a loop safe to rewrite. A loop `check` reports blocked is blocked here too.
pub fn analyze_for_rewrite(file: &SourceFile) -> FileAnalysis {
    analyze_with(file, &Settings::default(), &Suppressions::default())
}

impl FileAnalysis {
    /// The verdict of the loop at `loc`.
    pub fn verdict(&self, loc: LoopLoc) -> &LoopVerdict {
        &self.loops[loc.function][loc.index]
    }
}

fn analyze_with(file: &SourceFile, settings: &Settings, sup: &Suppressions) -> FileAnalysis {
    let mut active = [false; Blocker::ALL.len()];
    for b in Blocker::ALL {
        active[b.slot()] = settings.blocker_active(b) && !sup.file_allows(b.id());
    }
    let active = engine::Active(active);
    let any_loops = file
        .functions
        .iter()
        .any(|f| f.kind != FunctionKind::Host && !f.loops.is_empty());
    if !any_loops {
        return FileAnalysis {
            loops: file
                .functions
                .iter()
                .map(|f| vec![LoopVerdict::default(); f.loops.len()])
                .collect(),
        };
    }
    let reach = callgraph::Reach::build(file);
    let loops = (0..file.functions.len())
        .map(|i| engine::analyse_function(file, i, &reach, &active, sup))
        .collect();
    FileAnalysis { loops }
}

/// `null`, `"unroll"`, `"unroll N"` or `"nounroll"`.
pub fn pragma_text(h: &UnrollHint) -> String {
    match h {
        UnrollHint::Unroll(None) => "unroll".into(),
        UnrollHint::Unroll(Some(n)) => format!("unroll {n}"),
        UnrollHint::NoUnroll => "nounroll".into(),
    }
}

/// A rule's [`rules::Finding`] as a diagnostic of `path`, with the configured severity.
fn diagnostic(path: &str, rule: &str, settings: &Settings, f: rules::Finding) -> Diagnostic {
    Diagnostic {
        path: path.to_string(),
        line: f.span.line,
        column: f.span.column,
        rule: rule.to_string(),
        severity: settings.severity_of(rule),
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

/// Analyse one file: the per-loop report and the diagnostics (suppressions already applied).
pub fn check_source(
    path: &str,
    source: &[u8],
    settings: &Settings,
) -> (FileReport, Vec<Diagnostic>) {
    if !settings.parse_all
        && !frontend::may_contain_gpu_code(source)
        && !rules::wave_size::may_define_warp_size(source)
    {
        let report = FileReport {
            path: path.to_string(),
            parse_errors: 0,
            parse_error_locations: Vec::new(),
            parsed: false,
            functions: Vec::new(),
        };
        return (report, Vec::new());
    }
    let file = frontend::parse(source);
    check_parsed(path, source, &file, settings)
}

/// [`check_source`] for a file that is already parsed.
pub fn check_parsed(
    path: &str,
    source: &[u8],
    file: &SourceFile,
    settings: &Settings,
) -> (FileReport, Vec<Diagnostic>) {
    let sup = Suppressions::from_file(file, source);
    let analysis = analyze_with(file, settings, &sup);
    let mut diags = Vec::new();
    let blocked_on = settings.diagnostic_active(rules::unroll_blocked::ID)
        || settings
            .select
            .as_ref()
            .is_some_and(|_| Blocker::ALL.iter().any(|b| settings.selected(b.id())))
            && !settings.ignored(rules::unroll_blocked::ID);
    let hints_on = !settings.ignored(rules::candidate::ID)
        && (settings.hints || settings.selected(rules::candidate::ID));
    let mut functions = Vec::new();
    for (fi, f) in file.functions.iter().enumerate() {
        if f.kind == FunctionKind::Host {
            continue;
        }
        let mut loops = Vec::with_capacity(f.loops.len());
        for (li, l) in f.loops.iter().enumerate() {
            let v = &analysis.loops[fi][li];
            // Loop-level suppressions: on the loop's line (or before), or on its pragma's line.
            let lines: Vec<u32> = std::iter::once(l.keyword.line)
                .chain(l.pragma.as_ref().map(|p| p.span.line))
                .collect();
            let evidence: Vec<&Evidence> = v
                .evidence
                .iter()
                .filter(|e| !lines.iter().any(|&ln| sup.allows(e.rule.id(), ln)))
                .collect();
            let mut blockers: Vec<&'static str> = evidence.iter().map(|e| e.rule.id()).collect();
            blockers.sort();
            blockers.dedup();
            let verdict = if blockers.is_empty() {
                Verdict::Candidate
            } else {
                Verdict::Blocked
            };
            let id = file
                .loop_id(LoopLoc {
                    function: fi,
                    index: li,
                })
                .to_string();
            if blocked_on {
                let found = rules::unroll_blocked::check(l, &id, &blockers, &evidence);
                let allowed = || {
                    lines
                        .iter()
                        .any(|&ln| sup.allows(rules::unroll_blocked::ID, ln))
                };
                if let Some(found) = found.filter(|_| !allowed()) {
                    diags.push(diagnostic(path, rules::unroll_blocked::ID, settings, found));
                }
            }
            if hints_on {
                let found = rules::candidate::check(l, &id, !blockers.is_empty());
                if let Some(found) =
                    found.filter(|_| !sup.allows(rules::candidate::ID, l.keyword.line))
                {
                    diags.push(diagnostic(path, rules::candidate::ID, settings, found));
                }
            }
            loops.push(LoopReport {
                id,
                line: l.keyword.line,
                column: l.keyword.column,
                kind: l.kind,
                depth: l.depth,
                trip_count: l.trip_count,
                unroll_pragma: l.pragma.as_ref().map(|p| pragma_text(&p.hint)),
                verdict,
                blockers: blockers.iter().map(|s| s.to_string()).collect(),
            });
        }
        functions.push(FunctionReport {
            name: f.name.clone(),
            kind: f.kind,
            line: f.name_span.line,
            loops,
            resources: Vec::new(),
        });
    }
    if settings.diagnostic_active(rules::wave_size::ID) && !sup.file_allows(rules::wave_size::ID) {
        let suppressed = |line: u32| sup.allows(rules::wave_size::ID, line);
        for w in rules::wave_size::check(file, &suppressed) {
            if sup.allows(rules::wave_size::ID, w.span.line) {
                continue;
            }
            diags.push(diagnostic(path, rules::wave_size::ID, settings, w));
        }
    }
    diags.sort_by_key(|d| (d.line, d.column));
    (
        FileReport {
            path: path.to_string(),
            parse_errors: file.parse_errors.len(),
            parse_error_locations: file
                .parse_errors
                .iter()
                .map(|e| ParseErrorLocation {
                    line: e.span.line,
                    column: e.span.column,
                    message: e.message.clone(),
                })
                .collect(),
            parsed: true,
            functions,
        },
        diags,
    )
}
