//! The closed loop. Discover the loops of PATHS, order them, and for each loop try every
//! factor x mode: static gates, build and check in a working copy, then interleaved A/B
//! measurement against the current baseline until [`crate::stats::assess`] decides. The best
//! accepted variant of a loop becomes the new baseline (greedy, one variant per loop). At the
//! end a confirmation compares the final state with the original, and the accepted edits are
//! applied to the user's files (or shown as a diff, or only reported for `--dry-run`).
//!
//! Parallelism: the variants of one loop are prepared in parallel, one working copy each
//! (`--jobs`); measurement starts only when all preparation is done, and samples are taken one
//! at a time, so nothing the tuner does competes with a measured run.
//!
//! Reuse: every decision is stored in the ledger under (settings, baseline content, variant
//! content). Before building anything the search looks the decision up; the baseline itself is
//! built and measured only when some comparison must really be made (or when the backend ranks
//! loops by the baseline's profile), so a second `tune` over an unchanged tree builds and
//! compiles nothing.

use crate::apply;
use crate::backend::{Backend, Failure, Slot as BackendSlot};
use crate::discover::{self, Discovery, LoopInfo};
use crate::error::Error;
use crate::gates::{self, Gates};
use crate::ledger::{self, Decision, Ledger};
use crate::orphans;
use crate::report::{self, Applied, Candidate, Report, Status};
use crate::stats::{self, Assessment, Pair, Plan, Verdict};
use crate::workcopy::{Overlay, Slot, Tree};
use pipeline::{Edit, Mode};
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;

/// How long a start waits for the commands of a killed earlier tune to die after SIGKILL.
const REAP_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// What to do with the accepted edits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApplyMode {
    /// Write them into the user's files (atomically).
    Write,
    /// Write nothing; report what would be applied.
    DryRun,
    /// Write nothing; return the unified diff.
    Diff,
}

/// The settings of one tune.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Files or directories holding the loops that may change (relative to the tree root).
    pub paths: Vec<PathBuf>,
    pub factors: Vec<u32>,
    pub modes: Vec<Mode>,
    /// Working copies prepared in parallel.
    pub jobs: usize,
    pub plan: Plan,
    /// Largest relative spread of the baseline repeats (fraction).
    pub max_noise: f64,
    pub state_dir: PathBuf,
    pub resume: bool,
    pub gates: Gates,
    pub apply: ApplyMode,
    /// Everything that shapes a decision (backend, commands, regex, plan, arch, compile
    /// command...), as text: part of every decision's key.
    pub fingerprint: String,
    /// Where `#include "..."` is looked for after the including file's directory (`-I`,
    /// `[check] include-dirs`, the `-I` of `[compile]`/`[tune] compile-flags`): the headers'
    /// helpers and macros are in the guards' reach and the manual rewrite's proof.
    pub include_dirs: Vec<PathBuf>,
}

/// Progress callbacks (the CLI draws bars; tests stay quiet).
pub trait Progress: Sync {
    /// A new phase: `building the baseline`, `measuring k:0 pragma x4`...
    fn phase(&self, _message: &str) {}
    /// Measurement progress within a phase: `done` of at most `max` samples.
    fn measured(&self, _done: usize, _max: usize) {}
    /// A candidate has its final status.
    fn decided(&self, _c: &Candidate) {}
}

/// No progress output.
pub struct Quiet;
impl Progress for Quiet {}

/// The result of a tune.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub report: Report,
    /// The unified diff (`ApplyMode::Diff`).
    pub diff: Option<String>,
    /// Ctrl-C stopped the search: nothing was applied.
    pub interrupted: bool,
    pub run_id: i64,
}

fn settings_hash(fingerprint: &str) -> String {
    blake3::hash(fingerprint.as_bytes()).to_hex().to_string()
}

/// Run the closed loop with `backend` over the tree at `root` (the directory `--build` runs in).
pub fn tune<B: Backend>(
    backend: &B,
    settings: &Settings,
    root: &Path,
    stop: &Arc<AtomicBool>,
    progress: &dyn Progress,
) -> Result<Outcome, Error> {
    validate(settings)?;
    progress.phase("discovering loops");
    let disc = discover(settings, root)?;
    fsio::testpoint::hit("tuner.search.discovered");
    tune_discovered(backend, settings, root, disc, stop, progress)
}

/// The loops of `settings.paths` under `root`, the state directory left out: what [`tune`]
/// searches. A caller that needs them before the search (the rocprofv3 backend's kernel names)
/// discovers once and passes them to [`tune_discovered`], so every file is parsed once.
pub fn discover(settings: &Settings, root: &Path) -> Result<Discovery, Error> {
    let includes = pipeline::Includes::new(settings.include_dirs.clone(), Default::default());
    discover::discover(
        root,
        &settings.paths,
        &[state_dir(settings, root)],
        &includes,
    )
}

fn state_dir(settings: &Settings, root: &Path) -> PathBuf {
    if settings.state_dir.is_absolute() {
        settings.state_dir.clone()
    } else {
        root.join(&settings.state_dir)
    }
}

fn validate(settings: &Settings) -> Result<(), Error> {
    crate::limits::check(settings)
}

/// [`tune`] over loops already discovered by [`discover`] with the same settings and root.
pub fn tune_discovered<B: Backend>(
    backend: &B,
    settings: &Settings,
    root: &Path,
    disc: Discovery,
    stop: &Arc<AtomicBool>,
    progress: &dyn Progress,
) -> Result<Outcome, Error> {
    validate(settings)?;
    let state_dir = state_dir(settings, root);
    let exclude = [state_dir.clone()];
    if disc.kernels().next().is_none() {
        let shown: Vec<String> = settings
            .paths
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        return Err(Error::NoKernels(shown.join(", ")));
    }
    backend.preflight()?;
    let _lock = Ledger::lock(&state_dir)?;
    // Commands of an earlier tune that was killed may still be running in the working copies
    // (a build writing ./app): end them before any working copy is touched.
    let records_dir = orphans::records_dir(&state_dir);
    orphans::reap(&records_dir, &state_dir.join("slots"), REAP_WAIT)?;
    // An apply a kill interrupted is rolled back before the tree is read (see apply.rs); the
    // loops found in the half-written tree are then found again in the restored one.
    let recovered = apply::recover(&state_dir)?;
    let disc = match &recovered {
        Some(r) if !r.restored.is_empty() => discover(settings, root)?,
        _ => disc,
    };
    let ledger = Ledger::open(&state_dir)?;
    let tree = Tree::scan(root, &exclude)?;
    let shash = settings_hash(&format!("{}\n{}", backend.name(), settings.fingerprint));
    let run = ledger.begin(&tree.hash, &shash, &settings.fingerprint, settings.resume)?;
    let mut s = Search {
        backend,
        settings,
        ledger: &ledger,
        tree: &tree,
        stop,
        progress,
        session: run.session_id,
        settings_hash: shash,
        slots_dir: state_dir.join("slots"),
        records_dir,
        slots: (0..=settings.jobs.max(1)).map(|_| None).collect(),
        base_slot: 0,
        base_prepared: None,
        original_state: tree.hash.clone(),
        base_state: tree.hash.clone(),
        overlay: Overlay::new(),
        history: HashMap::new(),
        parsed: HashMap::new(),
        candidates: Vec::new(),
        applied: Vec::new(),
        baseline: None,
        noise: None,
        compiles: AtomicU32::new(0),
        builds: AtomicU32::new(0),
        reused: 0,
        notes: BTreeSet::new(),
        baseline_objects: HashMap::new(),
        stash: None,
        aa_done: false,
        later_baseline: None,
    };
    let (mut written, mut edited) = (Vec::new(), Vec::new());
    if let Some(r) = recovered {
        s.notes.insert(apply::recovered_note(&r, &tree.root));
    }
    if disc.loops().next().is_none() {
        s.notes.insert(format!(
            "no loop to tune: the kernels of {} have no loop",
            settings
                .paths
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let result = s.run(&disc);
    let interrupted = matches!(result, Err(Error::Interrupted));
    match result {
        Ok(()) | Err(Error::Interrupted) => {}
        Err(e) => {
            let _ = ledger.finish(run.run_id, failed_status(&e), None);
            return Err(e);
        }
    }
    let mut diff = None;
    let mut outcome = if interrupted {
        "interrupted"
    } else {
        match settings.apply {
            ApplyMode::Write => "applied",
            ApplyMode::DryRun => "dry-run",
            ApplyMode::Diff => "diff",
        }
    };
    let mut final_ = report::Final {
        figure: s.baseline.as_ref().map(|b| b.figure).unwrap_or(f64::NAN),
        speedup: 1.0,
        ci: None,
    };
    if !interrupted && !s.overlay.is_empty() {
        match s.confirm() {
            Ok(c) => {
                final_ = c.0;
                if !c.1 {
                    s.notes.insert(format!(
                        "the confirmation did not show the final state faster than the original ({:.3}x): nothing applied",
                        final_.speedup
                    ));
                    s.applied.clear();
                }
            }
            Err(Error::Interrupted) => outcome = "interrupted",
            Err(e) => {
                let _ = ledger.finish(run.run_id, failed_status(&e), None);
                return Err(e);
            }
        }
    }
    if outcome != "interrupted" && !s.applied.is_empty() {
        match settings.apply {
            ApplyMode::Write => {
                // An error leaves every file as the run found it: the run stays resumable.
                let a = apply::apply(&tree, &s.overlay, &state_dir, run.run_id)?;
                if !a.edited.is_empty() {
                    outcome = "edited";
                    s.notes.insert(apply::edited_note(&a.edited));
                }
                written = a.written.iter().map(|p| p.display().to_string()).collect();
                edited.extend(a.edited.iter().map(|p| p.display().to_string()));
            }
            ApplyMode::Diff => diff = Some(apply::diff(&tree, &s.overlay)?),
            ApplyMode::DryRun => {}
        }
    }
    if outcome == "interrupted" {
        s.notes
            .insert("interrupted: nothing was applied; the ledger keeps what was decided (--resume continues)".into());
    }
    if s.baseline.is_none() {
        s.baseline = match ledger.baseline(&s.settings_hash, &s.original_state)? {
            Some(b) => Some(b),
            None => ledger.baseline_from_samples(
                &s.settings_hash,
                &s.original_state,
                &backend.unit(),
            )?,
        }
        .or(s.later_baseline.clone());
    }
    let baseline = s.baseline.clone().unwrap_or(ledger::Baseline {
        figure: f64::NAN,
        unit: backend.unit(),
        runs: 0,
        spread: f64::NAN,
    });
    if final_.figure.is_nan() {
        final_.figure = baseline.figure;
    }
    let report = Report {
        version: 1,
        baseline: report::Baseline {
            figure: baseline.figure,
            unit: baseline.unit.clone(),
            runs: baseline.runs,
        },
        final_,
        candidates: s.candidates.clone(),
        applied: s.applied.clone(),
        written,
        edited,
        extra: report::Extra {
            backend: backend.name().to_string(),
            noise: s.noise,
            compiles: s.compiles.load(Ordering::Relaxed),
            builds: s.builds.load(Ordering::Relaxed),
            reused: s.reused,
            outcome: outcome.to_string(),
            notes: s.notes.iter().cloned().collect(),
        },
    };
    let status = if outcome == "interrupted" {
        "interrupted"
    } else {
        "done"
    };
    ledger.finish(run.run_id, status, Some(&report::json(&report)))?;
    apply::release(&state_dir)?;
    Ok(Outcome {
        report,
        diff,
        interrupted: outcome == "interrupted",
        run_id: run.run_id,
    })
}

/// The status a run ends with after `e`: a full disk leaves it resumable (`interrupted`), as
/// Ctrl-C does; anything else is `failed`.
fn failed_status(e: &Error) -> &'static str {
    match e {
        Error::DiskFull { .. } | Error::Interrupted => "interrupted",
        _ => "failed",
    }
}

/// Free space below which a failed build or compile is blamed on the disk, not the variant.
const FULL_DISK_BYTES: u64 = 1 << 20;

/// Whether `message` (a failed command's or compiler's) or the free space of the file system
/// holding `dir` says that the disk is full.
fn disk_full(dir: &Path, message: &str) -> bool {
    if message.contains("No space left on device") || message.contains("ENOSPC") {
        return true;
    }
    rustix::fs::statvfs(dir).is_ok_and(|v| v.f_bavail.saturating_mul(v.f_frsize) < FULL_DISK_BYTES)
}

/// A variant waiting for a decision.
struct Pending {
    mode: Mode,
    factor: u32,
    overlay: Overlay,
    state: String,
    key: String,
    edits: Vec<Edit>,
    file: PathBuf,
}

/// A decided variant of the current loop.
struct Decided {
    mode: Mode,
    factor: u32,
    status: Status,
    assessment: Option<Assessment>,
    reason: Option<String>,
    overlay: Overlay,
    state: String,
    edits: Vec<Edit>,
    file: PathBuf,
    /// The slot that holds its prepared build (measured this session).
    slot: Option<usize>,
}

struct Search<'a, B: Backend> {
    backend: &'a B,
    settings: &'a Settings,
    ledger: &'a Ledger,
    tree: &'a Tree,
    stop: &'a Arc<AtomicBool>,
    progress: &'a dyn Progress,
    session: i64,
    settings_hash: String,
    slots_dir: PathBuf,
    records_dir: PathBuf,
    slots: Vec<Option<Slot>>,
    base_slot: usize,
    base_prepared: Option<B::Prepared>,
    original_state: String,
    base_state: String,
    overlay: Overlay,
    history: HashMap<PathBuf, Vec<Vec<Edit>>>,
    /// The overlay's files, each parsed and guarded once per accepted edit.
    parsed: HashMap<PathBuf, Arc<pipeline::Source>>,
    candidates: Vec<Candidate>,
    applied: Vec<Applied>,
    baseline: Option<ledger::Baseline>,
    noise: Option<(f64, f64)>,
    compiles: AtomicU32,
    builds: AtomicU32,
    reused: u32,
    notes: BTreeSet<String>,
    /// Code objects of the baseline's files, per (state, file).
    baseline_objects: HashMap<(String, PathBuf), Result<codeobj::compile::Compiled, String>>,
    /// The prepared build of the last chunk's fastest accepted variant, with its slot.
    stash: Option<(usize, B::Prepared)>,
    /// Whether this session measured the A/A repeats.
    aa_done: bool,
    /// The A/A figures when they were of a state after reused accepted decisions.
    later_baseline: Option<ledger::Baseline>,
}

fn mode_str(m: Mode) -> &'static str {
    match m {
        Mode::Pragma => "pragma",
        Mode::Manual => "manual",
    }
}

impl<'a, B: Backend> Search<'a, B> {
    fn check_stop(&self) -> Result<(), Error> {
        if self.stop.load(Ordering::SeqCst) {
            Err(Error::Interrupted)
        } else {
            Ok(())
        }
    }

    /// Why a failure must not become a decision: Ctrl-C stopped the search (a command or
    /// compile it ended fails), or the state directory's disk is full (a build or compile that
    /// could not write its output says nothing about the variant). Decisions are reused by
    /// every later run, so a failure that is not the variant's is an error instead.
    fn not_the_variants(&self, message: &str) -> Option<Error> {
        if self.stop.load(Ordering::SeqCst) {
            return Some(Error::Interrupted);
        }
        if disk_full(&self.slots_dir, message) {
            return Some(Error::DiskFull {
                path: self
                    .slots_dir
                    .parent()
                    .unwrap_or(&self.slots_dir)
                    .display()
                    .to_string(),
            });
        }
        None
    }

    fn slot(&mut self, i: usize) -> Result<&mut Slot, Error> {
        if self.slots[i].is_none() {
            self.slots[i] = Some(Slot::open(&self.slots_dir, i)?);
        }
        Ok(self.slots[i].as_mut().expect("opened"))
    }

    fn bslot<'s>(&'s self, slot: &'s Slot) -> BackendSlot<'s> {
        BackendSlot {
            index: slot.index,
            root: &slot.root,
            user_root: &self.tree.root,
            stop: self.stop,
            records: Some(&self.records_dir),
        }
    }

    fn push(&mut self, c: Candidate, key: Option<&str>, reused: bool) -> Result<(), Error> {
        self.ledger.record_candidate(
            self.session,
            key,
            &c.file,
            &c.loop_id,
            c.line,
            c.mode.as_deref(),
            c.factor,
            c.status.as_str(),
            c.reason.as_deref(),
            reused,
        )?;
        self.progress.decided(&c);
        self.candidates.push(c);
        Ok(())
    }

    /// Make sure the baseline slot holds the current baseline, built and checked; on the first
    /// call also measure the A/A repeats.
    fn ensure_baseline(&mut self) -> Result<(), Error> {
        if self.base_prepared.is_some() {
            return Ok(());
        }
        self.check_stop()?;
        self.progress.phase("building the baseline");
        let i = self.base_slot;
        let (tree, overlay) = (self.tree, self.overlay.clone());
        self.slot(i)?.sync(tree, &overlay)?;
        let slot = self.slots[i].as_ref().expect("opened");
        let t0 = std::time::Instant::now();
        self.builds.fetch_add(1, Ordering::Relaxed);
        let prepared = self.backend.prepare(&self.bslot(slot), None)?;
        let secs = t0.elapsed().as_secs_f64();
        let prepared = match prepared {
            Ok(p) => {
                self.ledger
                    .record_build(self.session, &self.base_state, i, "ok", None, secs)?;
                p
            }
            Err(f) => {
                if let Some(e) = self.not_the_variants(f.message()) {
                    return Err(e);
                }
                let (outcome, what) = match &f {
                    Failure::Build(_) => ("build-failed", "does not build"),
                    Failure::Check(_) => ("check-failed", "fails its run or --check"),
                    Failure::NotCached(_) => (
                        "not-cached",
                        "cannot be compiled here (no compiler, and not in the carried cache)",
                    ),
                };
                self.ledger.record_build(
                    self.session,
                    &self.base_state,
                    i,
                    outcome,
                    Some(f.message()),
                    secs,
                )?;
                return Err(Error::Baseline(format!("it {what}: {}", f.message())));
            }
        };
        self.base_prepared = Some(prepared);
        if !self.aa_done {
            self.aa_check()?;
        }
        Ok(())
    }

    /// Baseline repeats: the A/A check and the baseline figure.
    fn aa_check(&mut self) -> Result<(), Error> {
        let n = 2 * self.settings.plan.min_runs;
        self.progress
            .phase(&format!("measuring the baseline ({n} runs, A/A check)"));
        let comparison = format!("aa:{}:{}", self.settings_hash, self.base_state);
        let unit = self.backend.unit();
        self.settle();
        // A warm-up run, recorded but not counted (the first run after a build).
        let v = self.sample_base()?;
        self.ledger
            .record_sample(self.session, &comparison, 0, "baseline-warm-up", v, &unit)?;
        let mut samples = Vec::with_capacity(n);
        for k in 0..n {
            let v = self.sample_base()?;
            self.ledger
                .record_sample(self.session, &comparison, k / 2, "baseline", v, &unit)?;
            fsio::testpoint::hit("tuner.search.sample");
            samples.push(v);
            self.progress.measured(k + 1, n);
        }
        let noise = stats::aa_check(&samples, &self.settings.plan, self.settings.max_noise)
            .map_err(|e| Error::Baseline(e.to_string()))?;
        let b = ledger::Baseline {
            figure: noise.median,
            unit,
            runs: n as u32,
            spread: noise.spread,
        };
        self.ledger
            .record_baseline(self.session, &self.settings_hash, &self.base_state, &b)?;
        self.noise = Some((noise.spread, noise.detectable));
        self.aa_done = true;
        if self.base_state == self.original_state {
            self.baseline = Some(b);
        } else {
            // Decisions reused from the ledger had already moved the baseline.
            self.later_baseline = Some(b);
        }
        Ok(())
    }

    fn sample_base(&self) -> Result<f64, Error> {
        self.check_stop()?;
        let slot = self.slots[self.base_slot].as_ref().expect("baseline slot");
        let p = self.base_prepared.as_ref().expect("prepared baseline");
        match self.backend.sample(&self.bslot(slot), p)? {
            Ok(v) => Ok(v),
            Err(f) => Err(Error::Baseline(format!(
                "it failed while being measured: {}",
                f.message()
            ))),
        }
    }

    fn run(&mut self, disc: &Discovery) -> Result<(), Error> {
        let mut loops: Vec<&LoopInfo> = disc.loops().collect();
        loops.sort_by(|a, b| {
            (a.height, &a.file, a.line, &a.id).cmp(&(b.height, &b.file, b.line, &b.id))
        });
        // Rank by the baseline's profile when the backend has one.
        let mut not_run: BTreeSet<String> = BTreeSet::new();
        let needs_profile = loops.iter().any(|l| !l.blocked);
        if needs_profile && self.backend_ranks()? {
            let shares = self
                .backend
                .kernels(self.base_prepared.as_ref().expect("prepared"))
                .unwrap_or_default();
            let share_of = |l: &LoopInfo| -> Option<f64> {
                shares
                    .iter()
                    .filter(|s| crate::backend::same_function(&s.function, &l.function))
                    .map(|s| s.share)
                    .reduce(f64::max)
            };
            for l in &loops {
                if l.in_kernel && share_of(l).is_none() {
                    not_run.insert(l.function.clone());
                }
            }
            loops.sort_by(|a, b| {
                let (sa, sb) = (share_of(a).unwrap_or(0.0), share_of(b).unwrap_or(0.0));
                sb.total_cmp(&sa)
                    .then((a.height, &a.file, a.line).cmp(&(b.height, &b.file, b.line)))
            });
        }
        for l in loops {
            self.check_stop()?;
            let file = l.file.display().to_string();
            let whole = |status: Status, reason: String| Candidate {
                file: file.clone(),
                loop_id: l.id.to_string(),
                line: l.line,
                mode: None,
                factor: None,
                status,
                speedup: None,
                ci: None,
                p_value: None,
                runs: None,
                reason: Some(reason),
            };
            if l.blocked {
                self.push(
                    whole(
                        Status::Blocked,
                        format!("blocked by {}", l.blockers.join(", ")),
                    ),
                    None,
                    false,
                )?;
                continue;
            }
            if l.in_kernel && not_run.contains(&l.function) {
                self.push(
                    whole(
                        Status::NotRun,
                        format!("kernel {} never ran in the baseline", l.function),
                    ),
                    None,
                    false,
                )?;
                continue;
            }
            self.tune_loop(disc, l)?;
        }
        Ok(())
    }

    /// Whether the backend ranks loops; if so the baseline is prepared now.
    fn backend_ranks(&mut self) -> Result<bool, Error> {
        if !self.backend.ranks() {
            return Ok(false);
        }
        self.ensure_baseline()?;
        Ok(true)
    }

    /// The file as it is now (the original, or the overlay's content once a variant of one of
    /// its loops was accepted), parsed and guarded.
    fn current_source(&self, disc: &Discovery, file: &Path) -> Option<Arc<pipeline::Source>> {
        self.parsed
            .get(file)
            .or_else(|| disc.file(file).map(|f| &f.source))
            .cloned()
    }

    fn tune_loop(&mut self, disc: &Discovery, l: &LoopInfo) -> Result<(), Error> {
        let file = l.file.display().to_string();
        let Some(current) = self.current_source(disc, &l.file) else {
            return Ok(());
        };
        let history = self.history.get(&l.file).cloned().unwrap_or_default();
        let mut decided: Vec<Decided> = Vec::new();
        let mut pending: Vec<Pending> = Vec::new();
        let mut seen_states: BTreeSet<String> = BTreeSet::new();
        for &mode in &self.settings.modes {
            for &factor in &self.settings.factors {
                let cand = |status: Status, reason: String| Candidate {
                    file: file.clone(),
                    loop_id: l.id.to_string(),
                    line: l.line,
                    mode: Some(mode_str(mode).into()),
                    factor: Some(factor),
                    status,
                    speedup: None,
                    ci: None,
                    p_value: None,
                    runs: None,
                    reason: Some(reason),
                };
                let rw = match discover::rewrite(l, &current, &history, factor, mode) {
                    Ok(r) if r.edits.is_empty() => {
                        self.push(
                            cand(
                                Status::Refused,
                                "no-change: the variant is the current source".into(),
                            ),
                            None,
                            false,
                        )?;
                        continue;
                    }
                    Ok(r) => r,
                    Err(r) => {
                        self.push(
                            cand(Status::Refused, format!("{}: {}", r.id, r.message)),
                            None,
                            false,
                        )?;
                        continue;
                    }
                };
                let mut overlay = self.overlay.clone();
                overlay.insert(l.file.clone(), rw.source);
                let state = self.tree.state_hash(&overlay);
                if !seen_states.insert(state.clone()) {
                    self.push(
                        cand(
                            Status::Refused,
                            "duplicate: another factor or mode gives the same source".into(),
                        ),
                        None,
                        false,
                    )?;
                    continue;
                }
                let key = ledger::decision_key(&self.settings_hash, &self.base_state, &state);
                match self.ledger.decision(&key)? {
                    Some(d) => {
                        self.reused += 1;
                        decided.push(Decided {
                            mode,
                            factor,
                            // The ledger only returns decisions of a known status.
                            status: Status::parse(&d.status).ok_or_else(|| Error::Ledger {
                                path: self.ledger.path.display().to_string(),
                                reason: format!("unknown decision status '{}'", d.status),
                            })?,
                            assessment: d.speedup.map(|sp| Assessment {
                                n: d.runs.unwrap_or(0) as usize,
                                speedup: sp,
                                ci: d.ci.unwrap_or((f64::NAN, f64::NAN)),
                                p_value: d.p_value.unwrap_or(f64::NAN),
                                verdict: Verdict::Continue,
                            }),
                            reason: d.reason.clone(),
                            overlay,
                            state,
                            edits: rw.edits,
                            file: l.file.clone(),
                            slot: None,
                        });
                    }
                    None => pending.push(Pending {
                        mode,
                        factor,
                        overlay,
                        state,
                        key,
                        edits: rw.edits,
                        file: l.file.clone(),
                    }),
                }
            }
        }
        let reused_count = decided.len();
        // Decided variants are reported even when Ctrl-C stops the loop half-way.
        let mut stopped = None;
        if !pending.is_empty() {
            match self.decide_pending(pending, &mut decided) {
                Ok(()) => {}
                Err(Error::Interrupted) => stopped = Some(Error::Interrupted),
                Err(e) => return Err(e),
            }
        }
        // Report in the order of --mode and --factors, whatever order they were decided in.
        let order = |d: &Decided| {
            (
                self.settings.modes.iter().position(|m| *m == d.mode),
                self.settings.factors.iter().position(|f| *f == d.factor),
            )
        };
        let reused_states: BTreeSet<String> = decided[..reused_count]
            .iter()
            .map(|d| d.state.clone())
            .collect();
        decided.sort_by_key(|d| order(d));
        // One variant per loop: the best accepted one wins; of equally fast ones the first in
        // the order of --mode and --factors (max_by would take the last).
        let best = decided
            .iter()
            .enumerate()
            .filter(|(_, d)| d.status == Status::Accepted)
            .min_by(|a, b| {
                let sa = a.1.assessment.map(|x| x.speedup).unwrap_or(0.0);
                let sb = b.1.assessment.map(|x| x.speedup).unwrap_or(0.0);
                sb.total_cmp(&sa)
            })
            .map(|(i, _)| i);
        let best_label = best.map(|i| {
            let d = &decided[i];
            format!(
                "{} x{} ({:.3}x)",
                mode_str(d.mode),
                d.factor,
                d.assessment.map(|a| a.speedup).unwrap_or(1.0)
            )
        });
        for (i, d) in decided.iter().enumerate() {
            let mut status = d.status;
            let mut reason = d.reason.clone();
            if status == Status::Accepted && Some(i) != best {
                let tie = best.and_then(|b| decided[b].assessment).map(|a| a.speedup)
                    == d.assessment.map(|a| a.speedup);
                status = Status::Rejected;
                reason = Some(format!(
                    "superseded: {} of this loop was {}",
                    best_label.clone().unwrap_or_default(),
                    if tie {
                        "as fast and comes first"
                    } else {
                        "faster"
                    }
                ));
            }
            let key = ledger::decision_key(&self.settings_hash, &self.base_state, &d.state);
            let a = d.assessment;
            self.push(
                Candidate {
                    file: file.clone(),
                    loop_id: l.id.to_string(),
                    line: l.line,
                    mode: Some(mode_str(d.mode).into()),
                    factor: Some(d.factor),
                    status,
                    speedup: a.map(|a| a.speedup),
                    ci: a.and_then(|a| {
                        (a.ci.0.is_finite() && a.ci.1.is_finite()).then_some([a.ci.0, a.ci.1])
                    }),
                    p_value: a.map(|a| a.p_value).filter(|p| p.is_finite()),
                    runs: a.map(|a| a.n as u32),
                    reason,
                },
                Some(&key),
                reused_states.contains(&d.state),
            )?;
        }
        if let Some(e) = stopped {
            return Err(e);
        }
        if let Some(i) = best {
            let d = decided.swap_remove(i);
            self.overlay = d.overlay;
            if let Some(content) = self.overlay.get(&d.file) {
                // The rewritten text keeps the original's translation unit.
                let unit = self
                    .current_source(disc, &d.file)
                    .map(|s| s.unit().clone())
                    .unwrap_or_default();
                self.parsed.insert(
                    d.file.clone(),
                    Arc::new(pipeline::Source::with_unit(content.clone(), unit)),
                );
            }
            self.history
                .entry(d.file.clone())
                .or_default()
                .push(d.edits);
            self.base_state = d.state;
            self.applied.push(Applied {
                file: file.clone(),
                loop_id: l.id.to_string(),
                line: l.line,
                mode: mode_str(d.mode).into(),
                factor: d.factor,
            });
            match (d.slot, self.stash.take()) {
                // Its slot holds the prepared build: it becomes the baseline's.
                (Some(s), Some((k, prep))) if s == k => {
                    self.base_slot = s;
                    self.base_prepared = Some(prep);
                }
                _ => self.base_prepared = None,
            }
        }
        Ok(())
    }

    /// Decide pending variants, `--jobs` at a time, appending to `decided`.
    fn decide_pending(
        &mut self,
        pending: Vec<Pending>,
        decided: &mut Vec<Decided>,
    ) -> Result<(), Error> {
        self.ensure_baseline()?;
        let jobs = self.settings.jobs.max(1);
        let mut rest = pending;
        while !rest.is_empty() {
            // A new chunk reuses the slots: earlier builds are gone.
            for d in decided.iter_mut() {
                d.slot = None;
            }
            self.stash = None;
            let take = rest.len().min(jobs);
            let chunk: Vec<Pending> = rest.drain(..take).collect();
            self.decide_chunk(chunk, decided)?;
        }
        Ok(())
    }

    /// Gate, prepare (in parallel) and measure (one at a time) a chunk of pending variants,
    /// appending each decision to `out` as soon as it is made.
    fn decide_chunk(&mut self, chunk: Vec<Pending>, out: &mut Vec<Decided>) -> Result<(), Error> {
        let first_new = out.len();
        // Slots other than the baseline's.
        let free: Vec<usize> = (0..self.slots.len())
            .filter(|&i| i != self.base_slot)
            .take(chunk.len())
            .collect();
        for &i in &free {
            self.slot(i)?;
        }
        // The baseline's code objects of the files these variants change.
        let base_root = self.slots[self.base_slot]
            .as_ref()
            .expect("baseline slot")
            .root
            .clone();
        for p in &chunk {
            let k = (self.base_state.clone(), p.file.clone());
            if !self.baseline_objects.contains_key(&k) {
                let gates = Gates {
                    compiler: self.settings.gates.compiler.in_dir(&base_root),
                    thresholds: self.settings.gates.thresholds,
                };
                let r = gates.baseline(&base_root.join(&p.file));
                fsio::testpoint::hit("tuner.search.baseline-compiled");
                if let Ok(c) = &r {
                    if !c.cached {
                        self.compiles.fetch_add(1, Ordering::Relaxed);
                    }
                }
                if let Err(why) = &r {
                    self.notes.insert(format!(
                        "code-object gates skipped for {}: {why}",
                        p.file.display()
                    ));
                }
                self.baseline_objects.insert(k, r);
            }
        }
        self.progress.phase(&format!(
            "preparing {} variant{} in parallel",
            chunk.len(),
            if chunk.len() == 1 { "" } else { "s" }
        ));
        let tree = self.tree;
        let backend = self.backend;
        let stop = self.stop;
        let records_dir = self.records_dir.as_path();
        let base_prepared = self.base_prepared.as_ref().expect("prepared baseline");
        let settings = self.settings;
        let compiles = &self.compiles;
        let builds = &self.builds;
        let baseline_objects = &self.baseline_objects;
        let base_state = self.base_state.clone();
        // Take the slots out so that each thread owns one.
        let mut owned: Vec<Slot> = free
            .iter()
            .map(|&i| self.slots[i].take().expect("opened"))
            .collect();
        type Prep<P> = (Result<Result<P, Failure>, Error>, gates::Report, f64);
        let results: Vec<Prep<B::Prepared>> = std::thread::scope(|sc| {
            let handles: Vec<_> = owned
                .iter_mut()
                .zip(&chunk)
                .map(|(slot, p)| {
                    let base_state = base_state.clone();
                    sc.spawn(move || -> Prep<B::Prepared> {
                        let t0 = std::time::Instant::now();
                        if let Err(e) = slot.sync(tree, &p.overlay) {
                            return (
                                Err(e),
                                gates::Report {
                                    gates: vec![],
                                    compiled: false,
                                },
                                0.0,
                            );
                        }
                        let g = Gates {
                            compiler: settings.gates.compiler.in_dir(&slot.root),
                            thresholds: settings.gates.thresholds,
                        };
                        let base = &baseline_objects[&(base_state, p.file.clone())];
                        let report = g.check(base, &slot.root.join(&p.file));
                        if report.compiled {
                            compiles.fetch_add(1, Ordering::Relaxed);
                        }
                        if report.failure().is_some() {
                            return (Ok(Err(Failure::Build(String::new()))), report, 0.0);
                        }
                        builds.fetch_add(1, Ordering::Relaxed);
                        let bs = BackendSlot {
                            index: slot.index,
                            root: &slot.root,
                            user_root: &tree.root,
                            stop,
                            records: Some(records_dir),
                        };
                        let r = backend.prepare(&bs, Some(base_prepared));
                        (r, report, t0.elapsed().as_secs_f64())
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                .collect()
        });
        for (i, s) in free.iter().zip(owned) {
            self.slots[*i] = Some(s);
        }
        // Record gates and builds, collect the ready ones.
        let mut ready: Vec<(Pending, usize, B::Prepared, Option<String>)> = Vec::new();
        let mut first_err: Option<Error> = None;
        for ((p, slot_i), (res, gate_report, secs)) in chunk.into_iter().zip(free).zip(results) {
            for (g, o) in &gate_report.gates {
                self.ledger
                    .record_gate(self.session, &p.key, g, o.name(), o.detail())?;
            }
            let skipped = gate_report.skipped().map(|s| s.to_string());
            let mk = |p: Pending, status: Status, reason: String| Decided {
                mode: p.mode,
                factor: p.factor,
                status,
                assessment: None,
                reason: Some(reason),
                overlay: p.overlay,
                state: p.state,
                edits: p.edits,
                file: p.file,
                slot: None,
            };
            if let Some((g, detail)) = gate_report.failure() {
                if let Some(e) = self.not_the_variants(detail) {
                    first_err.get_or_insert(e);
                    continue;
                }
                let status = if g == gates::COMPILE {
                    Status::BuildFailed
                } else {
                    Status::Gated
                };
                let reason = format!("{g}: {detail}");
                self.store(&p, status, None, &reason)?;
                out.push(mk(p, status, reason));
                continue;
            }
            match res {
                Err(e) => {
                    first_err.get_or_insert(e);
                }
                Ok(Err(f)) => {
                    if let Some(e) = self.not_the_variants(f.message()) {
                        first_err.get_or_insert(e);
                        continue;
                    }
                    let (status, outcome) = match f {
                        Failure::Build(_) => (Status::BuildFailed, "build-failed"),
                        Failure::Check(_) => (Status::CheckFailed, "check-failed"),
                        Failure::NotCached(_) => (Status::NotCached, "not-cached"),
                    };
                    self.ledger.record_build(
                        self.session,
                        &p.state,
                        slot_i,
                        outcome,
                        Some(f.message()),
                        secs,
                    )?;
                    let reason = f.message().to_string();
                    // Not cached is this machine's lack, not the variant's: decided where it
                    // can be compiled.
                    if status != Status::NotCached {
                        self.store(&p, status, None, &reason)?;
                    }
                    out.push(mk(p, status, reason));
                }
                Ok(Ok(prep)) => {
                    self.ledger
                        .record_build(self.session, &p.state, slot_i, "ok", None, secs)?;
                    ready.push((p, slot_i, prep, skipped));
                }
            }
        }
        if let Some(e) = first_err {
            return Err(e);
        }
        fsio::testpoint::hit("tuner.search.prepared");
        self.settle();
        // Measure one at a time.
        let mut winners: Vec<(usize, B::Prepared, f64)> = Vec::new();
        for (p, slot_i, prep, skipped) in ready {
            self.progress.phase(&format!(
                "measuring {} {} x{}",
                p.file.display(),
                mode_str(p.mode),
                p.factor
            ));
            let a = match self.compare(&p.key, slot_i, &prep)? {
                Ok(a) => a,
                Err(f) => {
                    if let Some(e) = self.not_the_variants(f.message()) {
                        return Err(e);
                    }
                    let reason = format!("during measurement: {}", f.message());
                    self.store(&p, Status::CheckFailed, None, &reason)?;
                    out.push(Decided {
                        mode: p.mode,
                        factor: p.factor,
                        status: Status::CheckFailed,
                        assessment: None,
                        reason: Some(reason),
                        overlay: p.overlay,
                        state: p.state,
                        edits: p.edits,
                        file: p.file,
                        slot: None,
                    });
                    continue;
                }
            };
            let (status, mut reason) = match a.verdict {
                Verdict::Accept => (Status::Accepted, None),
                Verdict::Reject(r) => (
                    Status::Rejected,
                    Some(rejection_text(r, &a, &self.settings.plan)),
                ),
                Verdict::Continue => (Status::Rejected, Some("undecided".into())),
            };
            if let Some(s) = skipped {
                let note = format!("code-object gates skipped: {s}");
                reason = Some(match reason {
                    Some(r) => format!("{r}; {note}"),
                    None => note,
                });
            }
            self.store(&p, status, Some(&a), reason.as_deref().unwrap_or(""))?;
            if status == Status::Accepted {
                winners.push((slot_i, prep, a.speedup));
            }
            out.push(Decided {
                mode: p.mode,
                factor: p.factor,
                status,
                assessment: Some(a),
                reason,
                overlay: p.overlay,
                state: p.state,
                edits: p.edits,
                file: p.file,
                slot: Some(slot_i),
            });
        }
        // Keep the prepared build of the fastest accepted variant of this chunk: if it wins the
        // loop, its slot becomes the baseline's without a rebuild.
        winners.sort_by(|a, b| b.2.total_cmp(&a.2));
        let keep = winners.into_iter().next();
        for d in out[first_new..].iter_mut() {
            if d.slot.is_some() && keep.as_ref().map(|k| k.0) != d.slot {
                d.slot = None;
            }
        }
        if let Some((slot_i, prep, _)) = keep {
            self.stash = Some((slot_i, prep));
        }
        Ok(())
    }

    /// Store a decision (status and figures) in the ledger.
    fn store(
        &self,
        p: &Pending,
        status: Status,
        a: Option<&Assessment>,
        reason: &str,
    ) -> Result<(), Error> {
        self.ledger.record_decision(
            self.session,
            &Decision {
                key: p.key.clone(),
                settings_hash: self.settings_hash.clone(),
                base_state: self.base_state.clone(),
                variant_state: p.state.clone(),
                status: status.as_str().into(),
                speedup: a.map(|a| a.speedup),
                ci: a.and_then(|a| (a.ci.0.is_finite()).then_some(a.ci)),
                p_value: a.map(|a| a.p_value),
                runs: a.map(|a| a.n as u32),
                reason: (!reason.is_empty()).then(|| reason.to_string()),
                figure: None,
            },
        )?;
        fsio::testpoint::hit("tuner.search.decided");
        Ok(())
    }

    /// Interleaved A/B rounds of the baseline against the prepared variant in `slot_i`.
    fn compare(
        &self,
        comparison: &str,
        slot_i: usize,
        prep: &B::Prepared,
    ) -> Result<Result<Assessment, Failure>, Error> {
        let vslot = self.slots[slot_i].as_ref().expect("variant slot");
        let variant = || -> Result<Result<f64, Failure>, Error> {
            self.check_stop()?;
            self.backend.sample(&self.bslot(vslot), prep)
        };
        let plan = &self.settings.plan;
        let decided = |p: &[Pair]| stats::assess(p, plan).verdict != Verdict::Continue;
        let pairs =
            match self.interleave(comparison, &|| self.sample_base(), &variant, true, &decided)? {
                Ok(p) => p,
                Err(f) => return Ok(Err(f)),
            };
        let a = stats::assess(&pairs, plan);
        if a.verdict != Verdict::Accept {
            return Ok(Ok(a));
        }
        // An accept stands only if the pairs measured right after say the same.
        let n = stats::replication_runs(a.n);
        let again = match self.interleave(
            &format!("replicate:{comparison}"),
            &|| self.sample_base(),
            &variant,
            false,
            &|p: &[Pair]| p.len() >= n,
        )? {
            Ok(p) => p,
            Err(f) => return Ok(Err(f)),
        };
        let (ok, p) = stats::replicated(&again);
        Ok(Ok(if ok {
            a
        } else {
            Assessment {
                verdict: Verdict::Reject(stats::Rejection::NotReplicated),
                // The replication's p-value: why the accept did not stand.
                p_value: p,
                ..a
            }
        }))
    }

    /// Measure `base` (the baseline role) against `variant` in rounds of one run each until
    /// `done` says so, every sample recorded under `comparison` as it is taken: with `warm_up`
    /// a warm-up round first (recorded as `baseline-warm-up` and `variant-warm-up`, not
    /// counted), then the rounds in the order [`stats::baseline_first`] gives. A failure of
    /// `variant` ends the comparison (`Ok(Err)`); one of `base` is the caller's error.
    fn interleave(
        &self,
        comparison: &str,
        base: &dyn Fn() -> Result<f64, Error>,
        variant: &dyn Fn() -> Result<Result<f64, Failure>, Error>,
        warm_up: bool,
        done: &dyn Fn(&[Pair]) -> bool,
    ) -> Result<Result<Vec<Pair>, Failure>, Error> {
        let unit = self.backend.unit();
        let max = self.settings.plan.max_runs;
        if warm_up {
            let b = base()?;
            self.ledger
                .record_sample(self.session, comparison, 0, "baseline-warm-up", b, &unit)?;
            let v = match variant()? {
                Ok(v) => v,
                Err(f) => return Ok(Err(f)),
            };
            self.ledger
                .record_sample(self.session, comparison, 0, "variant-warm-up", v, &unit)?;
        }
        let mut pairs: Vec<Pair> = Vec::new();
        loop {
            let round = pairs.len();
            let baseline_first = stats::baseline_first(comparison, round);
            let (b, v) = if baseline_first {
                let b = base()?;
                match variant()? {
                    Ok(v) => (b, v),
                    Err(f) => return Ok(Err(f)),
                }
            } else {
                let v = match variant()? {
                    Ok(v) => v,
                    Err(f) => return Ok(Err(f)),
                };
                (base()?, v)
            };
            let (first, second) = if baseline_first {
                (("baseline", b), ("variant", v))
            } else {
                (("variant", v), ("baseline", b))
            };
            for (role, x) in [first, second] {
                self.ledger
                    .record_sample(self.session, comparison, round, role, x, &unit)?;
                fsio::testpoint::hit("tuner.search.sample");
            }
            pairs.push(Pair {
                baseline: b,
                variant: v,
                baseline_first,
            });
            self.progress.measured(pairs.len(), max);
            if done(&pairs) {
                return Ok(Ok(pairs));
            }
        }
    }

    /// Flush what the builds wrote (the state directory's file system) before samples are
    /// taken, so that no write-back of a build runs during a measured run.
    fn settle(&self) {
        if let Ok(d) = std::fs::File::open(&self.slots_dir) {
            let _ = rustix::fs::syncfs(&d);
        }
    }

    /// Compare the final state with the original baseline. Returns the final figures and
    /// whether the final state is shown faster.
    fn confirm(&mut self) -> Result<(report::Final, bool), Error> {
        let key = ledger::decision_key(
            &self.settings_hash,
            &format!("confirm:{}", self.original_state),
            &self.base_state,
        );
        if let Some(d) = self.ledger.decision(&key)? {
            let sp = d.speedup.unwrap_or(1.0);
            let figure = d.figure.unwrap_or(f64::NAN);
            let ci = d.ci.map(|c| [c.0, c.1]);
            return Ok((
                report::Final {
                    figure,
                    speedup: sp,
                    ci,
                },
                d.status == "accepted",
            ));
        }
        self.ensure_baseline_original_figure()?;
        // The final state in the baseline slot, the original in another slot.
        self.ensure_baseline()?;
        self.progress
            .phase("confirming: final state against the original");
        let other = (0..self.slots.len())
            .find(|&i| i != self.base_slot)
            .expect("two slots");
        let tree = self.tree;
        self.slot(other)?.sync(tree, &Overlay::new())?;
        let slot = self.slots[other].as_ref().expect("opened");
        self.builds.fetch_add(1, Ordering::Relaxed);
        let orig = match self.backend.prepare(&self.bslot(slot), None)? {
            Ok(p) => p,
            Err(f) => {
                return Err(Error::Baseline(format!(
                    "the original no longer builds or checks for the confirmation: {}",
                    f.message()
                )))
            }
        };
        // Pairs of (original = baseline role, final = variant role).
        self.settle();
        let oslot = self.slots[other].as_ref().expect("opened");
        let sample_orig = || -> Result<f64, Error> {
            self.check_stop()?;
            match self.backend.sample(&self.bslot(oslot), &orig)? {
                Ok(v) => Ok(v),
                Err(f) => Err(Error::Baseline(format!(
                    "the original failed during the confirmation: {}",
                    f.message()
                ))),
            }
        };
        let final_ = || -> Result<Result<f64, Failure>, Error> { self.sample_base().map(Ok) };
        let plan = &self.settings.plan;
        let decided = |p: &[Pair]| stats::assess(p, plan).verdict != Verdict::Continue;
        let pairs = match self.interleave(&key, &sample_orig, &final_, true, &decided)? {
            Ok(r) => r,
            Err(f) => return Err(Error::Baseline(f.message().to_string())),
        };
        let assessment = stats::assess(&pairs, plan);
        let finals: Vec<f64> = pairs.iter().map(|p| p.variant).collect();
        let figure = stats::median(&finals);
        let faster = assessment.verdict == Verdict::Accept || assessment.ci.0 > 1.0;
        self.ledger.record_decision(
            self.session,
            &Decision {
                key,
                settings_hash: self.settings_hash.clone(),
                base_state: self.original_state.clone(),
                variant_state: self.base_state.clone(),
                status: if faster { "accepted" } else { "rejected" }.into(),
                speedup: Some(assessment.speedup),
                ci: Some(assessment.ci),
                p_value: Some(assessment.p_value),
                runs: Some(assessment.n as u32),
                reason: Some("confirmation".into()),
                figure: Some(figure),
            },
        )?;
        fsio::testpoint::hit("tuner.search.decided");
        Ok((
            report::Final {
                figure,
                speedup: assessment.speedup,
                ci: Some([assessment.ci.0, assessment.ci.1]),
            },
            faster,
        ))
    }

    /// The report needs the original baseline's figure; when every decision came from the
    /// ledger it is read from there.
    fn ensure_baseline_original_figure(&mut self) -> Result<(), Error> {
        if self.baseline.is_none() {
            self.baseline = self
                .ledger
                .baseline(&self.settings_hash, &self.original_state)?;
        }
        Ok(())
    }
}

fn rejection_text(r: stats::Rejection, a: &Assessment, plan: &Plan) -> String {
    let min = plan.min_speedup * 100.0;
    match r {
        stats::Rejection::NotFaster => format!(
            "not-faster: p = {:.2} after {} runs (needs <= {:.1e})",
            a.p_value,
            a.n,
            plan.alpha_per_look()
        ),
        stats::Rejection::BelowMinSpeedup => format!(
            "below-min-speedup: {:.3}x is less than the {min:.1}% minimum",
            a.speedup
        ),
        stats::Rejection::Futile => format!(
            "futile: the interval [{:.3}, {:.3}] rules out a {min:.1}% speedup",
            a.ci.0, a.ci.1
        ),
        stats::Rejection::Superseded => "superseded".into(),
        stats::Rejection::NotReplicated => format!(
            "not-replicated: accepted, but {} more pairs gave p = {:.2} (needs <= {})",
            stats::replication_runs(a.n),
            a.p_value,
            stats::REPLICATION_ALPHA
        ),
    }
}
