//! The report of a tune: plain data (the JSON shape is the public contract of
//! `tune --format json`, version 1) and four renderers to strings: JSON, human, markdown
//! ([`markdown`], a table per kernel) and HTML ([`html`], one self-contained page with inline
//! SVG plots). Renderers do no I/O and no analysis.
//!
//! Everything a renderer needs is data here, not only text: per candidate its speedup and
//! interval, the per-pair ratios it was decided on (`ratios`) and its decision key (the ledger's
//! samples), the predicted occupancy change (`occupancy`), and for a variant that lost to the
//! one kept (`tie`, `superseded`) the comparison with it (`versus`); per report the `timing`
//! of the run. Fields added after version 1 was published are left out where they are empty, so
//! a version-1 reader reads every report as before. What only the human, markdown and HTML
//! reports show (not the JSON contract) is in [`Extra`]: the backend, the A/A check, the
//! decision rule's minimum speedup and confidence, notes, and the unified diff of the accepted
//! edits.

mod html;
mod markdown;
mod summary;
mod svg;

pub use html::html;
pub use markdown::markdown;

use serde::{Deserialize, Serialize};
use std::fmt::Write;

/// What happened to a candidate (a loop, or one variant of a loop).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// Measured and faster (by at least the minimum, at the confidence).
    Accepted,
    /// Measured, not faster enough.
    Rejected,
    /// A guard blocks the loop: never built.
    Blocked,
    /// The transform refused the variant (or the loop carries the author's pragma).
    Refused,
    /// A static gate failed: signature or vgpr-pressure.
    Gated,
    BuildFailed,
    /// The run failed or `--check` did not pass.
    CheckFailed,
    /// The loop's kernel never ran in the baseline (rocprofv3).
    NotRun,
    /// No compiler here and the carried cache lacks the variant's object: not decided.
    NotCached,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Accepted => "accepted",
            Status::Rejected => "rejected",
            Status::Blocked => "blocked",
            Status::Refused => "refused",
            Status::Gated => "gated",
            Status::BuildFailed => "build-failed",
            Status::CheckFailed => "check-failed",
            Status::NotRun => "not-run",
            Status::NotCached => "not-cached",
        }
    }

    pub fn parse(s: &str) -> Option<Status> {
        [
            Status::Accepted,
            Status::Rejected,
            Status::Blocked,
            Status::Refused,
            Status::Gated,
            Status::BuildFailed,
            Status::CheckFailed,
            Status::NotRun,
            Status::NotCached,
        ]
        .into_iter()
        .find(|x| x.as_str() == s)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Baseline {
    pub figure: f64,
    pub unit: String,
    pub runs: u32,
    /// Launches timed back to back as one run, where the backend batches them (`bench`: a
    /// short kernel's); each run's figure is their mean per launch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub launches_per_sample: Option<u32>,
}

impl Baseline {
    /// The launches a run is the mean of, where a run is a batch of more than one.
    pub fn batched(&self) -> Option<u32> {
        self.launches_per_sample.filter(|&k| k > 1)
    }

    /// `median of N runs`, and `, each the mean of K launches` where a run is a batch.
    pub fn runs_text(&self) -> String {
        match self.batched() {
            Some(k) => format!(
                "median of {} runs, each the mean of {k} launches",
                self.runs
            ),
            None => format!("median of {} runs", self.runs),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Final {
    pub figure: f64,
    /// Original baseline / final (> 1: faster).
    pub speedup: f64,
    /// `null` when nothing was accepted (no confirmation was measured).
    pub ci: Option<[f64; 2]>,
}

pub use crate::occupancy::{Occupancy, OccupancyUnit, Registers};

/// A variant of a loop as the report names one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VariantRef {
    pub mode: String,
    /// `null` for a full unroll (`full` is then `true`).
    #[serde(serialize_with = "factor_or_null")]
    pub factor: u32,
    #[serde(default, skip_serializing_if = "is_false")]
    pub full: bool,
}

impl VariantRef {
    pub fn new(mode: &str, factor: u32) -> VariantRef {
        VariantRef {
            mode: mode.to_string(),
            factor,
            full: factor == FULL,
        }
    }
}

impl std::fmt::Display for VariantRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.mode, factor_text(self.factor))
    }
}

/// How the variant kept for a loop compares with another accepted variant of it: `ratio` is
/// the kept one's speedup over the other's (> 1: the kept one is faster), `ci` its interval at
/// the tune's confidence ([`crate::stats::versus`]). `superseded` when `ci[0] > 1`, `tie`
/// otherwise.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Versus {
    pub kept: VariantRef,
    pub ratio: f64,
    pub ci: [f64; 2],
}

/// The per-pair ratios (`baseline / variant`, > 1: the variant was faster) a decision was
/// made from, in the order measured; `replication` those of an accept's replication pairs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Ratios {
    pub pairs: Vec<f64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub replication: Vec<f64>,
}

/// The factor of a full unroll (`#pragma unroll` with no count).
pub use pipeline::FULL;

/// `x4`, or `full`.
pub fn factor_text(factor: u32) -> String {
    if factor == FULL {
        "full".into()
    } else {
        format!("x{factor}")
    }
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn factor_or_null<S: serde::Serializer>(f: &u32, s: S) -> Result<S::Ok, S::Error> {
    if *f == FULL {
        s.serialize_none()
    } else {
        s.serialize_some(f)
    }
}

fn opt_factor_or_null<S: serde::Serializer>(f: &Option<u32>, s: S) -> Result<S::Ok, S::Error> {
    match f {
        Some(f) => factor_or_null(f, s),
        None => s.serialize_none(),
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Candidate {
    pub file: String,
    #[serde(rename = "loop")]
    pub loop_id: String,
    pub line: u32,
    /// `null` for a whole loop (blocked, not-run).
    pub mode: Option<String>,
    /// `null` for a whole loop, and for a full unroll (then `full` is `true`; inside the
    /// library a full unroll is factor [`FULL`]).
    #[serde(serialize_with = "opt_factor_or_null")]
    pub factor: Option<u32>,
    pub status: Status,
    pub speedup: Option<f64>,
    pub ci: Option<[f64; 2]>,
    pub p_value: Option<f64>,
    /// Interleaved pairs measured.
    pub runs: Option<u32>,
    pub reason: Option<String>,
    /// The device the decision was measured on (absent when nothing was measured).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device: Option<crate::devices::Device>,
    /// A full unroll (`#pragma unroll` with no count); absent otherwise.
    #[serde(default, skip_serializing_if = "is_false")]
    pub full: bool,
    /// The decision's key: its pairs are the ledger's samples under this comparison (and
    /// `replicate:KEY` for an accept's replication). Absent when nothing was decided.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// The per-pair ratios of the decision (absent when nothing was measured).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ratios: Option<Ratios>,
    /// The predicted occupancy change, where the gates compiled both (absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub occupancy: Option<Occupancy>,
    /// For an accepted variant that is not the one kept (`tie`, `superseded`): the comparison
    /// with the one kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub versus: Option<Versus>,
    /// A variant whose machine code is another variant's, measured: it took that decision
    /// without a run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub same_code_as: Option<VariantRef>,
    /// The launch specs (`bench` backend) that measured the variant, one entry each (also
    /// when there is one): each spec's own speedup, interval and per-pair ratios. The
    /// candidate's `speedup`/`ci` are then the specs' geometric mean and its interval. Absent
    /// when the backend has no specs, or nothing was measured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub judged_by: Option<Vec<JudgedBy>>,
}

/// One spec's judgement of a variant (`judged_by`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JudgedBy {
    /// The spec's path as given (relative to the working directory where it was given so).
    pub spec: String,
    /// The kernel it launches.
    pub kernel: String,
    /// Its speedup (baseline time / variant time, median of the pairs' ratios).
    pub speedup: f64,
    /// Its interval at the plan's confidence.
    pub interval: [f64; 2],
    /// Its per-pair ratios (baseline / variant), in the order measured.
    pub ratios: Vec<f64>,
}

/// A launch spec of the tune (`specs`): whether its kernel was tuned, and its own figures.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SpecStatus {
    /// The spec's path as given.
    pub spec: String,
    pub kernel: String,
    pub status: SpecOutcome,
    /// Why it failed: one line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Its kernel's baseline (the median of its A/A runs), when measured or recorded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baseline: Option<Baseline>,
    /// Its kernel with the applied combination, when the spec judged an applied loop and the
    /// confirmation measured it in this run: figure, speedup against its own baseline, interval.
    #[serde(rename = "final", skip_serializing_if = "Option::is_none")]
    pub final_: Option<Final>,
}

/// Whether a spec could be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SpecOutcome {
    Ok,
    /// It does not load, its baseline does not build or fails its check, or its baseline is
    /// too noisy: its kernel is not tuned; the other specs' are.
    Failed,
}

impl Candidate {
    /// A candidate with only its place and status (the rest empty).
    pub fn new(
        file: &str,
        loop_id: &str,
        line: u32,
        variant: Option<(&str, u32)>,
        status: Status,
        reason: Option<String>,
    ) -> Candidate {
        Candidate {
            file: file.to_string(),
            loop_id: loop_id.to_string(),
            line,
            mode: variant.map(|v| v.0.to_string()),
            factor: variant.map(|v| v.1),
            status,
            speedup: None,
            ci: None,
            p_value: None,
            runs: None,
            reason,
            device: None,
            full: variant.is_some_and(|v| v.1 == FULL),
            key: None,
            ratios: None,
            occupancy: None,
            versus: None,
            same_code_as: None,
            judged_by: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Applied {
    pub file: String,
    #[serde(rename = "loop")]
    pub loop_id: String,
    pub line: u32,
    pub mode: String,
    /// `null` for a full unroll (then `full` is `true`).
    #[serde(serialize_with = "factor_or_null")]
    pub factor: u32,
    #[serde(default, skip_serializing_if = "is_false")]
    pub full: bool,
}

/// Where a tune's wall time went, in seconds (`timing` in the JSON report; the human and
/// markdown reports end with one line of it). The phases partition `wall`: each instant of
/// the run counts once, for the first of these that some lane was doing then:
/// - `measure`: taking samples (the A/A repeats, the pairs of a comparison with its warm-up
///   and replication, the confirmation);
/// - `compile`: a code-object compile of the gates (baseline or variant, cache misses only;
///   compiles ahead of the next loop included);
/// - `prepare`: preparing a slot (syncing a working copy, then the backend's `prepare`: the
///   build, one run and the check for `command`; compile, load, one launch and the output
///   check for `bench` and `replay`);
/// - `gates`: judging the compiles (signatures, registers, machine code);
/// - `waiting`: none of these, but a lane holding a task (handing it over, a Slurm step
///   starting, a lane idle between its tasks' phases);
/// - `other`: the coordinator alone (discovering and rewriting loops, the ledger, lanes
///   starting, the apply, the report).
///
/// `work` sums each phase over every thread and lane (it exceeds `wall` when they run in
/// parallel); `work.samples` is the samples' own time (each run or launch as the lane timed
/// it). `counts`: compiles run, builds run, samples taken.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Timing {
    pub wall: f64,
    pub measure: f64,
    pub compile: f64,
    pub prepare: f64,
    pub gates: f64,
    pub waiting: f64,
    pub other: f64,
    pub work: Work,
    pub counts: Counts,
}

/// Per-phase time summed over threads and lanes (see [`Timing`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Work {
    pub measure: f64,
    pub compile: f64,
    pub prepare: f64,
    pub gates: f64,
    pub samples: f64,
}

/// How much work a tune did.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Counts {
    pub compiles: u32,
    pub builds: u32,
    pub samples: u32,
}

impl Timing {
    /// The one line of the human and markdown reports.
    pub fn line(&self) -> String {
        format!(
            "timing: {:.2} s wall = measure {:.2} + compile {:.2} + prepare {:.2} + gates {:.2} + waiting {:.2} + other {:.2} (samples' own time {:.2} s, {} samples)",
            self.wall,
            self.measure,
            self.compile,
            self.prepare,
            self.gates,
            self.waiting,
            self.other,
            self.work.samples,
            self.counts.samples
        )
    }
}

/// How a tune ended.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// The accepted edits were written (or there were none).
    #[default]
    Applied,
    /// `--dry-run`: nothing written.
    DryRun,
    /// `--diff`: the diff printed, nothing written.
    Diff,
    /// A file was edited meanwhile: nothing written.
    Edited,
    /// Ctrl-C: nothing written.
    Interrupted,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Applied => "applied",
            Outcome::DryRun => "dry-run",
            Outcome::Diff => "diff",
            Outcome::Edited => "edited",
            Outcome::Interrupted => "interrupted",
        }
    }
}

/// What is shown besides the contract (human and markdown only).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Extra {
    pub backend: String,
    /// The A/A check: relative spread of the baseline repeats and the smallest speedup the
    /// plan can detect under it.
    pub noise: Option<(f64, f64)>,
    /// Code-object compiles run (not taken from the cache) and builds run.
    pub compiles: u32,
    pub builds: u32,
    /// Candidates whose decision came from the ledger.
    pub reused: u32,
    pub outcome: Outcome,
    pub notes: Vec<String>,
    /// The decision rule: the smallest speedup accepted, as a fraction (0.02: 2%), and the
    /// confidence of the test (0.99); `None` where unknown. The HTML report draws the minimum.
    pub min_speedup: Option<f64>,
    pub confidence: Option<f64>,
    /// The unified diff of the accepted edits against the tree the run read (what the diff
    /// apply mode prints), whatever the apply mode; `None` when nothing was accepted (or the
    /// run was interrupted).
    pub diff: Option<String>,
}

/// The whole report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    pub version: u32,
    pub baseline: Baseline,
    #[serde(rename = "final")]
    pub final_: Final,
    pub candidates: Vec<Candidate>,
    pub applied: Vec<Applied>,
    /// Files written to the user's tree, relative to it (all of `applied`'s files, or none).
    pub written: Vec<String>,
    /// Files found edited since tune read them: left as saved, and nothing was written (exit 3).
    pub edited: Vec<String>,
    /// Where the wall time went.
    pub timing: Timing,
    /// The launch specs of a `bench` tune, in the order given (absent for other backends).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub specs: Option<Vec<SpecStatus>>,
    #[serde(skip)]
    pub extra: Extra,
}

/// `tune --format json`.
pub fn json(r: &Report) -> String {
    let mut s = serde_json::to_string_pretty(r).expect("report serializes");
    s.push('\n');
    s
}

/// `, confirmed [lo, hi]` for a confirmation's interval, empty without one.
fn confirmed(ci: Option<[f64; 2]>) -> String {
    match ci {
        Some([lo, hi]) => format!(", confirmed [{lo:.3}, {hi:.3}]"),
        None => String::new(),
    }
}

fn fig(x: f64) -> String {
    if x.abs() >= 100.0 {
        format!("{x:.1}")
    } else if x.abs() >= 1.0 {
        format!("{x:.3}")
    } else {
        format!("{x:.4}")
    }
}

fn speed(c: &Candidate) -> String {
    match (c.speedup, c.ci) {
        (Some(s), Some([lo, hi])) => format!("{s:.3}x [{lo:.3}, {hi:.3}]"),
        (Some(s), None) => format!("{s:.3}x"),
        _ => String::new(),
    }
}

fn variant(c: &Candidate) -> String {
    match (&c.mode, c.factor) {
        (Some(m), Some(f)) => format!("{m} {}", factor_text(f)),
        _ => "-".into(),
    }
}

/// The occupancy cell: shown where the occupancy changes.
fn occupancy(c: &Candidate) -> String {
    match &c.occupancy {
        Some(o) if o.before != o.after => o.shown(),
        _ => String::new(),
    }
}

fn p(c: &Candidate) -> String {
    c.p_value.map(|p| format!("{p:.1e}")).unwrap_or_default()
}

fn counts(r: &Report) -> String {
    let mut by: Vec<(Status, usize)> = Vec::new();
    for c in &r.candidates {
        match by.iter_mut().find(|(s, _)| *s == c.status) {
            Some(e) => e.1 += 1,
            None => by.push((c.status, 1)),
        }
    }
    by.iter()
        .map(|(s, n)| format!("{n} {}", s.as_str()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The head of a multi-spec human report: the combination's speed-up (the geometric mean over
/// the specs that judged an applied loop), then each spec's own figures, before and after.
fn human_specs(o: &mut String, r: &Report, specs: &[SpecStatus]) {
    let measured = specs.iter().filter(|s| s.final_.is_some()).count();
    if r.applied.is_empty() {
        let _ = writeln!(o, "final:    nothing applied");
    } else {
        let _ = writeln!(
            o,
            "final:    {:.3}x, the geometric mean over the {} reaching an applied loop{}",
            r.final_.speedup,
            match measured {
                0 => "specs".to_string(),
                1 => "1 spec".to_string(),
                n => format!("{n} specs"),
            },
            confirmed(r.final_.ci)
        );
    }
    for s in specs {
        let what = match (&s.status, &s.baseline, &s.final_) {
            (SpecOutcome::Failed, _, _) => {
                format!("failed: {}", s.reason.as_deref().unwrap_or("(no reason)"))
            }
            (_, Some(b), Some(f)) => format!(
                "{} {u} -> {} {u} ({:.3}x{}){}",
                fig(b.figure),
                fig(f.figure),
                f.speedup,
                confirmed(f.ci),
                b.batched()
                    .map(|k| format!(", each run the mean of {k} launches"))
                    .unwrap_or_default(),
                u = b.unit
            ),
            (_, Some(b), None) => format!(
                "{} {} ({}){}",
                fig(b.figure),
                b.unit,
                b.runs_text(),
                if r.applied.is_empty() {
                    ""
                } else if judged_an_applied_loop(r, &s.spec) {
                    ", its final figure not measured in this run (the confirmation was reused)"
                } else {
                    ", unchanged: its kernel reaches no applied loop"
                }
            ),
            (_, None, _) => "not measured".to_string(),
        };
        let _ = writeln!(o, "  {} ({}): {what}", s.spec, s.kernel);
    }
}

/// Whether spec `spec` judged one of the applied variants.
fn judged_an_applied_loop(r: &Report, spec: &str) -> bool {
    r.applied.iter().any(|a| {
        r.candidates.iter().any(|c| {
            c.file == a.file
                && c.loop_id == a.loop_id
                && c.mode.as_deref() == Some(a.mode.as_str())
                && (c.full || c.factor == Some(a.factor))
                && c.full == a.full
                && c.judged_by
                    .as_ref()
                    .is_some_and(|j| j.iter().any(|j| j.spec == spec))
        })
    })
}

/// The head of a one-objective human report: the baseline and the final figure.
fn human_head(o: &mut String, r: &Report) {
    let u = &r.baseline.unit;
    if r.baseline.figure.is_nan() && r.candidates.is_empty() {
        let _ = writeln!(o, "baseline: not measured (no loop to tune)");
    } else if r.baseline.figure.is_nan() {
        let _ = writeln!(o, "baseline: not measured (no variant needed measuring)");
    } else {
        let _ = writeln!(
            o,
            "baseline: {} {u} ({}{})",
            fig(r.baseline.figure),
            r.baseline.runs_text(),
            match r.extra.noise {
                Some((s, d)) => format!(
                    ", spread {:.1}%, smallest detectable speedup {:.1}%",
                    s * 100.0,
                    d * 100.0
                ),
                None => String::new(),
            }
        );
    }
    if r.final_.figure.is_nan() {
        let _ = writeln!(o, "final:    not measured");
    } else {
        let _ = writeln!(
            o,
            "final:    {} {u} ({:.3}x{})",
            fig(r.final_.figure),
            r.final_.speedup,
            confirmed(r.final_.ci)
        );
    }
}

/// `tune --format human`: a summary table for people.
pub fn human(r: &Report) -> String {
    let mut o = String::new();
    match &r.specs {
        Some(specs) => human_specs(&mut o, r, specs),
        None => human_head(&mut o, r),
    }
    let _ = writeln!(o);
    let rows: Vec<[String; 8]> = r
        .candidates
        .iter()
        .map(|c| {
            [
                format!("{}:{}", c.file, c.line),
                c.loop_id.clone(),
                variant(c),
                c.status.as_str().to_string(),
                speed(c),
                c.runs.map(|n| n.to_string()).unwrap_or_default(),
                occupancy(c),
                c.reason.clone().unwrap_or_default(),
            ]
        })
        .collect();
    let head = [
        "location",
        "loop",
        "variant",
        "status",
        "speedup [ci]",
        "runs",
        "occupancy",
        "reason",
    ];
    let mut w = head.map(|h| h.len());
    for row in &rows {
        for (i, cell) in row.iter().enumerate() {
            w[i] = w[i].max(cell.chars().count());
        }
    }
    // The occupancy column only when some candidate's occupancy changes.
    let shown_occ = rows.iter().any(|r| !r[6].is_empty());
    let line = |cells: &[String]| {
        let mut s = String::new();
        for (i, c) in cells.iter().enumerate() {
            if i == 6 && !shown_occ {
                continue;
            }
            if i + 1 == cells.len() {
                s.push_str(c);
            } else {
                let _ = write!(s, "{c:<width$}  ", width = w[i]);
            }
        }
        s.trim_end().to_string()
    };
    let _ = writeln!(o, "{}", line(&head.map(String::from)));
    for row in &rows {
        let _ = writeln!(o, "{}", line(row));
    }
    let _ = writeln!(o);
    let _ = writeln!(o, "{} candidates: {}", r.candidates.len(), counts(r));
    if r.extra.compiles == 0 && r.extra.builds == 0 {
        let _ = writeln!(
            o,
            "nothing compiled or built ({} decisions reused from the ledger)",
            r.extra.reused
        );
    } else {
        let _ = writeln!(
            o,
            "reused from the ledger: {}, code-object compiles: {}, builds: {}",
            r.extra.reused, r.extra.compiles, r.extra.builds
        );
    }
    if r.applied.is_empty() {
        let _ = writeln!(o, "applied: nothing");
    } else {
        let verb = match r.extra.outcome {
            Outcome::DryRun => "would apply (dry run)",
            Outcome::Diff => "diff printed, not applied",
            Outcome::Interrupted => "not applied (interrupted)",
            Outcome::Edited => "not applied (a file was edited meanwhile)",
            Outcome::Applied => "applied",
        };
        let _ = writeln!(o, "{verb}:");
        for a in &r.applied {
            let _ = writeln!(
                o,
                "  {}:{} {} {} {}",
                a.file,
                a.line,
                a.loop_id,
                a.mode,
                factor_text(a.factor)
            );
        }
    }
    if !r.written.is_empty() {
        let _ = writeln!(o, "written: {}", r.written.join(", "));
    }
    if !r.edited.is_empty() {
        let _ = writeln!(
            o,
            "edited meanwhile, left as saved: {}",
            r.edited.join(", ")
        );
    }
    for n in &r.extra.notes {
        let _ = writeln!(o, "note: {n}");
    }
    let _ = writeln!(o, "{}", r.timing.line());
    o
}
