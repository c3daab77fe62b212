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
mod lint;
pub mod report;
mod resolve;
pub mod rules;
mod suppress;
mod util;

pub use engine::{Blocker, Evidence, LoopVerdict};
pub use fix::{Applicability, Fix};
pub use report::*;
pub use suppress::Suppressions;

use std::collections::BTreeMap;
use std::path::Path;

use frontend::tu::{Includes, TranslationUnit};
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
    /// Run the hint rules (`Enable::Hint`: `candidate`, unrollable loops without a pragma).
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
    /// Follow the `#include "..."`s of the file named by `check_source`'s `path` (relative to
    /// the working directory) through these search directories, with this run's header cache:
    /// the helpers and macros of the headers then join the file's in the guards' reach, and
    /// each include not found is reported (`include-not-found`). `None`: the file alone.
    pub includes: Option<Includes>,
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
                let names_blockers = rules::blockers()
                    .iter()
                    .any(|(x, _)| sel.iter().any(|r| r == x.id()));
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

    /// Whether diagnostic rule `id`, enabled as `how`, runs: `ignore` wins; a selection runs
    /// what it names (and `unroll-blocked` whenever it names a blocker); otherwise the rules on
    /// by default run, and the hints when `hints` is on.
    fn enables(&self, id: &str, how: lint::Enable) -> bool {
        if self.ignored(id) {
            return false;
        }
        let by_select = || self.selected(id);
        match how {
            lint::Enable::Default => self.select.is_none() || by_select(),
            lint::Enable::WithBlockers => {
                self.select.is_none()
                    || by_select()
                    || rules::blockers().iter().any(|(b, _)| self.selected(b.id()))
            }
            lint::Enable::Hint => self.hints || by_select(),
        }
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
    analyze_with(file, &TranslationUnit::empty(), settings, &sup)
}

/// Runs every blocker rule over a parsed file, whatever a selection or an inline
/// `allow(...)` says: the verdicts a rewrite must respect. Suppressions quiet the lint; they
/// never make a loop safe to rewrite. A loop `check` reports blocked is blocked here too.
pub fn analyze_for_rewrite(file: &SourceFile) -> FileAnalysis {
    analyze_for_rewrite_in(file, &TranslationUnit::empty())
}

/// [`analyze_for_rewrite`] with the file's translation unit: the functions and macros of its
/// headers join the file's in the reach.
pub fn analyze_for_rewrite_in(file: &SourceFile, tu: &TranslationUnit) -> FileAnalysis {
    analyze_with(file, tu, &Settings::default(), &Suppressions::default())
}

impl FileAnalysis {
    /// The verdict of the loop at `loc`.
    pub fn verdict(&self, loc: LoopLoc) -> &LoopVerdict {
        &self.loops[loc.function][loc.index]
    }
}

fn analyze_with(
    file: &SourceFile,
    tu: &TranslationUnit,
    settings: &Settings,
    sup: &Suppressions,
) -> FileAnalysis {
    let blockers = rules::blockers();
    let active: Vec<bool> = blockers
        .iter()
        .map(|&(b, _)| settings.blocker_active(b) && !sup.file_allows(b.id()))
        .collect();
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
    let reaches: Vec<callgraph::Reaches> = blockers.iter().map(|(_, r)| r.reaches).collect();
    let reach = callgraph::Reach::build(file, tu, &reaches);
    let loops = (0..file.functions.len())
        .map(|i| engine::analyse_function(file, i, &reach, blockers, &active, sup))
        .collect();
    FileAnalysis { loops }
}

/// What one kernel of a file reaches: the functions of its translation unit it calls,
/// transitively (itself first).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelReach {
    /// The kernel's index in the file's `functions`.
    pub kernel: usize,
    /// `(file, function index)`: file 0 is the file itself, `k` the unit's header `k - 1`
    /// (`TranslationUnit::headers`).
    pub functions: Vec<(usize, usize)>,
}

/// For every kernel (`__global__`) of `file` in its unit `tu`: the functions it reaches through
/// calls, resolved as the blockers' reach resolves them (by name, overloads merged, local
/// callables and functors followed, through macros): which kernels a loop in a header helper
/// runs in. Conservative: a function that may be called counts.
pub fn kernel_reach(file: &SourceFile, tu: &TranslationUnit) -> Vec<KernelReach> {
    callgraph::Reach::build(file, tu, &[])
        .kernel_reach()
        .into_iter()
        .map(|(kernel, functions)| KernelReach { kernel, functions })
        .collect()
}

/// `null`, `"unroll"`, `"unroll N"` or `"nounroll"`.
pub fn pragma_text(h: &UnrollHint) -> String {
    match h {
        UnrollHint::Unroll(None) => "unroll".into(),
        UnrollHint::Unroll(Some(n)) => format!("unroll {n}"),
        UnrollHint::NoUnroll => "nounroll".into(),
    }
}

/// Analyse one file: the per-loop report and the diagnostics (suppressions already applied).
pub fn check_source(
    path: &str,
    source: &[u8],
    settings: &Settings,
) -> (FileReport, Vec<Diagnostic>) {
    // A file that names no GPU qualifier may still hold device code through a specifier
    // macro of a header it includes (rocPRIM's `ROCPRIM_DEVICE`, from `config.hpp`).
    if !settings.parse_all
        && !frontend::may_contain_gpu_code(source)
        && !rules::wave_size::may_define_warp_size(source)
        && !settings.includes.as_ref().is_some_and(|inc| {
            inc.gpu_macro_from_headers(Path::new(path), source)
                .is_some()
        })
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
    let (file, tu) = match &settings.includes {
        Some(inc) => inc.open(Path::new(path), source),
        None => (std::sync::Arc::new(frontend::parse(source)), alone(path)),
    };
    check_unit(path, source, &file, &tu, settings)
}

/// The unit of the file at `path` alone: no header, closed when `path` names a source file.
fn alone(path: &str) -> TranslationUnit {
    TranslationUnit {
        closed: frontend::tu::is_source_path(Path::new(path)),
        ..TranslationUnit::empty()
    }
}

/// [`check_source`] for a file that is already parsed (alone: no include is followed).
pub fn check_parsed(
    path: &str,
    source: &[u8],
    file: &SourceFile,
    settings: &Settings,
) -> (FileReport, Vec<Diagnostic>) {
    check_unit(path, source, file, &alone(path), settings)
}

/// [`check_source`] for a file that is already parsed, in its translation unit: the helpers
/// and macros of its headers are in reach, and the includes that were not found are reported
/// in one `include-not-found` diagnostic.
pub fn check_unit(
    path: &str,
    source: &[u8],
    file: &SourceFile,
    tu: &TranslationUnit,
    settings: &Settings,
) -> (FileReport, Vec<Diagnostic>) {
    let sup = Suppressions::from_file(file, source);
    let analysis = analyze_with(file, tu, settings, &sup);
    let mut facts: Vec<lint::LoopFacts<'_>> = Vec::new();
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
            loops.push(LoopReport {
                id: id.clone(),
                line: l.keyword.line,
                column: l.keyword.column,
                kind: l.kind,
                depth: l.depth,
                trip_count: l.trip_count,
                unroll_pragma: l.pragma.as_ref().map(|p| pragma_text(&p.hint)),
                verdict,
                blockers: blockers.iter().map(|s| s.to_string()).collect(),
                unresolved: v.unresolved.clone(),
            });
            facts.push(lint::LoopFacts {
                lp: l,
                id,
                evidence,
                blockers,
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
    let enabled = rules::diagnostics()
        .filter(|(id, r)| settings.enables(id, r.enable))
        .map(|(id, rule)| lint::Enabled {
            id,
            rule,
            severity: settings.severity_of(id),
        });
    let diags = lint::run(path, file, tu, &facts, &sup, enabled);
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
