//! A lane: one device with its own working copies, doing what the search asks of it. The
//! search (the coordinator, [`crate::search`]) hands a lane [`Task`]s and hears back from it in
//! [`Event`]s; it never measures anything itself, and it alone writes the ledger. A lane runs
//! in-process (a thread of [`crate::executor::local`]) or in a `tune-worker` on a Slurm node
//! ([`crate::executor::worker`]), where the tasks and events travel as JSON lines: every type
//! here is plain serde data.
//!
//! A comparison (all the pairs of one baseline/variant decision) is measured by one lane from
//! its first pair to its verdict; its pairs are only comparable on one device. Preparation
//! ([`prepare`]: working copies, the baseline's build, the code-object gates, the same-code
//! check, the variants' builds in parallel) and measurement ([`measure`]: interleaved pairs,
//! the A/A repeats) are the two halves of a task. With a GPU backend the next task is prepared
//! while the current one is measured ([`Lane::run`]), and the gate compiles of the next
//! loops' variants a task carries (`ahead`) go to the lane's compile workers (`--jobs` threads
//! beside the preparing one, [`prepare::AheadQueue`]), which the gates wait on only for the
//! variants at hand (one compile per key in flight, `codeobj::compile`); with the CPU's
//! `command` backend nothing is prepared or compiled while a sample is taken.
//!
//! A variant whose machine code (the gates' digest) is that of another variant measured
//! against the same baseline, on this lane or (as the task says, `known`) on another, is not
//! measured: it takes that variant's decision ([`ItemResult::SameCodeAs`]).

pub mod measure;
pub mod prepare;

use crate::backend::{Backend, KernelShare, LaneDevice};
use crate::error::Error;
use crate::gates::Gates;
use crate::report::{Occupancy, Status};
use crate::stats::Plan;
use crate::workcopy::{Overlay, Tree};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Receiver;
use std::sync::Arc;

pub use crate::devices::Device;

/// A state of the tree: its content hash and the files that differ from the user's tree.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StateSpec {
    pub hash: String,
    #[serde(with = "overlay_wire")]
    pub overlay: Overlay,
}

impl StateSpec {
    /// The user's tree as scanned.
    pub fn original(tree: &Tree) -> StateSpec {
        StateSpec {
            hash: tree.hash.clone(),
            overlay: Overlay::new(),
        }
    }
}

/// One variant to decide against a task's baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Item {
    /// The comparison's id: the decision key (samples are recorded under it).
    pub key: String,
    pub variant: StateSpec,
    /// The file the variant changes: the code-object gates compile it. `None`: no gates (the
    /// final confirmation).
    pub file: Option<PathBuf>,
    /// A variant whose machine code is the baseline's is rejected without a run.
    pub same_code: bool,
    /// An accept is measured again by fresh pairs (recorded under `replicate:KEY`) before it
    /// stands; not for the final confirmation.
    pub replicate: bool,
    /// Which attempt at this comparison (a comparison lost with its lane is measured again
    /// from scratch under the next attempt).
    pub attempt: u32,
    /// One of several specs judging the variant: measured until [`crate::stats::joint_done`]
    /// (its interval is needed) instead of its own verdict alone.
    #[serde(default)]
    pub joint: bool,
}

/// A gate compile ahead of its loop: a variant of the next loop of a chain, made on the text of
/// the task's baseline, compiled (into the content-addressed cache) while the task is measured,
/// so that its gates find it compiled when its loop's turn comes (unless the current loop
/// accepts an edit, which changes the next loop's variants: they are then compiled again).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ahead {
    pub variant: StateSpec,
    /// The file the gates compile.
    pub file: PathBuf,
}

/// What a lane is asked to do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Task {
    /// Build and check `base` as a baseline, take `samples` samples of it (recorded under
    /// `comparison`: the A/A repeats), and with `kernels` report its kernels' shares.
    Baseline {
        id: u64,
        base: StateSpec,
        samples: usize,
        comparison: String,
        kernels: bool,
        /// The objective (a launch spec of the `bench` backend) the baseline is prepared and
        /// sampled for; `None` for a backend with one objective.
        #[serde(default)]
        spec: Option<usize>,
    },
    /// Decide every item against `base`: gates, builds (in parallel), then pairs until each
    /// verdict, one comparison at a time.
    Compare {
        id: u64,
        base: StateSpec,
        items: Vec<Item>,
        /// Machine-code digests of variants already decided against `base`, with their
        /// comparison keys: an item of the same code takes that decision.
        #[serde(default)]
        known: Vec<(String, String)>,
        /// Gate compiles of the next loop's variants, done while this task is measured (GPU
        /// lanes only; empty otherwise).
        #[serde(default)]
        ahead: Vec<Ahead>,
        /// The objective the baseline and the items are prepared and sampled for.
        #[serde(default)]
        spec: Option<usize>,
    },
}

impl Task {
    pub fn id(&self) -> u64 {
        match self {
            Task::Baseline { id, .. } | Task::Compare { id, .. } => *id,
        }
    }

    /// The objective the task is for.
    pub fn spec(&self) -> Option<usize> {
        match self {
            Task::Baseline { spec, .. } | Task::Compare { spec, .. } => *spec,
        }
    }
}

/// The lane's key of a state prepared for objective `spec`: a state is prepared (built,
/// checked, loaded) for one objective, so the working copies holding it prepared, and the
/// machine codes decided against it, are kept apart per objective.
pub fn state_for(hash: &str, spec: Option<usize>) -> String {
    match spec {
        Some(i) => format!("{hash}#spec{i}"),
        None => hash.to_string(),
    }
}

/// How an item ended on the lane.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ItemResult {
    /// Measured to a verdict: the pairs are the samples sent before; `skipped` says why the
    /// code-object gates were skipped, if they were.
    Measured { skipped: Option<String> },
    /// Not measured: `gated`, `build-failed`, `check-failed` (also while being measured) or
    /// `not-cached`.
    Failed { status: Status, reason: String },
    /// The variant's machine code is byte-identical to the baseline's: nothing to measure.
    SameCode,
    /// The variant's machine code is that of the variant compared under `key` (measured, or
    /// failed while measured, against the same baseline): it takes that decision.
    SameCodeAs { key: String },
}

/// A phase of a lane's work, timed ([`Event::Span`]; see [`crate::report::Timing`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Phase {
    Measure,
    Compile,
    Prepare,
    Gates,
}

/// The kind of an error that ends the tune, kept across the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ErrorKind {
    Interrupted,
    /// The state directory's disk is full (the message is its path).
    DiskFull,
    Baseline,
    Environment,
    Usage,
    Other,
}

/// An error that ends the tune, as a lane reports it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LaneError {
    pub kind: ErrorKind,
    pub message: String,
}

impl From<Error> for LaneError {
    fn from(e: Error) -> LaneError {
        let (kind, message) = match e {
            Error::Interrupted => (ErrorKind::Interrupted, "interrupted".to_string()),
            Error::DiskFull { path } => (ErrorKind::DiskFull, path),
            Error::Baseline(m) => (ErrorKind::Baseline, m),
            Error::Environment(m) => (ErrorKind::Environment, m),
            Error::Usage(m) => (ErrorKind::Usage, m),
            other => (ErrorKind::Other, other.to_string()),
        };
        LaneError { kind, message }
    }
}

impl LaneError {
    pub fn into_error(self) -> Error {
        match self.kind {
            ErrorKind::Interrupted => Error::Interrupted,
            ErrorKind::DiskFull => Error::DiskFull { path: self.message },
            ErrorKind::Baseline => Error::Baseline(self.message),
            ErrorKind::Environment => Error::Environment(self.message),
            ErrorKind::Usage => Error::Usage(self.message),
            ErrorKind::Other => Error::Lane(self.message),
        }
    }
}

/// What a lane tells the coordinator, in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Event {
    /// A build (baseline or variant) in slot `slot`.
    Build {
        state: String,
        slot: usize,
        outcome: String,
        detail: Option<String>,
        seconds: f64,
    },
    /// One code-object gate of the comparison `key`.
    Gate {
        key: String,
        gate: String,
        outcome: String,
        detail: Option<String>,
    },
    /// One raw sample; `seconds`: how long the sample took (the run, the launch).
    Sample {
        comparison: String,
        attempt: u32,
        round: usize,
        role: String,
        value: f64,
        #[serde(default)]
        seconds: f64,
    },
    /// A span of work of `phase` that took `seconds` and ended `ago` seconds before the
    /// event.
    Span {
        phase: Phase,
        seconds: f64,
        #[serde(default)]
        ago: f64,
    },
    /// A line for the report's notes.
    Note(String),
    /// Code-object compiles (not from the cache) and builds run.
    Counts { compiles: u32, builds: u32 },
    /// An item of a `compare` task is over; with the gates' occupancy prediction and its
    /// machine code's digest where the gates gave them.
    Item {
        key: String,
        attempt: u32,
        result: ItemResult,
        #[serde(default)]
        occupancy: Option<Occupancy>,
        #[serde(default)]
        code: Option<String>,
    },
    /// A `baseline` task is over; its kernels when asked.
    Baseline {
        id: u64,
        kernels: Option<Vec<KernelShare>>,
        /// Launches per sample of the baseline where the backend batches them
        /// ([`crate::backend::Backend::launches_per_sample`]).
        #[serde(default)]
        launches_per_sample: Option<u32>,
    },
    /// The baseline of a `baseline` task for objective `spec` failed (it does not build, or
    /// fails its check or a run): that objective alone is not tuned, the tune goes on.
    SpecFailed {
        id: u64,
        spec: usize,
        reason: String,
    },
    /// The task is finished: the lane can take another.
    Done { id: u64 },
    /// What stops the whole tune (the baseline fails, the device is gone, Ctrl-C).
    Error(LaneError),
}

/// What a lane works with.
pub struct LaneContext<'a> {
    /// The user's tree (as scanned here: on a Slurm node, scanned by the worker).
    pub tree: &'a Tree,
    /// Where the lane's working copies live.
    pub slots_dir: PathBuf,
    /// Where commands record their process groups ([`crate::orphans`]).
    pub records: Option<PathBuf>,
    /// Set to stop the lane's work (Ctrl-C, or another lane's fatal error).
    pub halt: Arc<AtomicBool>,
    pub plan: Plan,
    /// Variants prepared in parallel.
    pub jobs: usize,
    pub gates: Gates,
    pub device: LaneDevice,
    /// Prepare the next task while this one is measured (GPU backends).
    pub overlap: bool,
}

/// One lane: a backend on one device and a pool of working copies.
pub struct Lane<'a, B: Backend> {
    pub(crate) backend: &'a B,
    pub(crate) cx: LaneContext<'a>,
    pub(crate) pool: std::sync::Mutex<prepare::Pool<B::Prepared>>,
    pub(crate) objects: std::sync::Mutex<prepare::Objects>,
    /// Machine-code digests of the variants this lane measured, per baseline state: (state,
    /// digest) -> the comparison's key.
    pub(crate) codes: std::sync::Mutex<std::collections::HashMap<(String, String), String>>,
    /// Gate compiles sent ahead, waiting for the compile workers (overlapping lanes only).
    pub(crate) ahead: std::sync::Mutex<prepare::AheadQueue>,
    pub(crate) ahead_ready: std::sync::Condvar,
}

/// Where a lane's events go.
pub type Emit<'e> = &'e (dyn Fn(Event) + Sync);

/// A span of `phase` that took `seconds` and has just ended.
pub(crate) fn span(phase: Phase, seconds: f64) -> Event {
    Event::Span {
        phase,
        seconds,
        ago: 0.0,
    }
}

impl<'a, B: Backend> Lane<'a, B> {
    pub fn new(backend: &'a B, cx: LaneContext<'a>) -> Lane<'a, B> {
        let pool = prepare::Pool::new(cx.slots_dir.clone());
        Lane {
            backend,
            cx,
            pool: std::sync::Mutex::new(pool),
            objects: std::sync::Mutex::new(Default::default()),
            codes: std::sync::Mutex::new(Default::default()),
            ahead: std::sync::Mutex::new(Default::default()),
            ahead_ready: std::sync::Condvar::new(),
        }
    }

    pub(crate) fn check_stop(&self) -> Result<(), Error> {
        if self.cx.halt.load(Ordering::SeqCst) {
            Err(Error::Interrupted)
        } else {
            Ok(())
        }
    }

    /// Why a failure must not become a decision: the lane was halted (Ctrl-C: a command or
    /// compile it ended fails), or the state directory's disk is full (a build or compile that
    /// could not write its output says nothing about the variant). Decisions are reused by
    /// every later run, so a failure that is not the variant's is an error instead.
    pub(crate) fn not_the_variants(&self, message: &str) -> Option<Error> {
        if self.cx.halt.load(Ordering::SeqCst) {
            return Some(Error::Interrupted);
        }
        if disk_full(&self.cx.slots_dir, message) {
            let dir = &self.cx.slots_dir;
            // STATE/slots or STATE/slots/lane-N: the state directory is what the user knows.
            let state = dir
                .ancestors()
                .find(|a| a.file_name().is_some_and(|n| n == "slots"))
                .and_then(Path::parent)
                .unwrap_or(dir);
            return Some(Error::DiskFull {
                path: state.display().to_string(),
            });
        }
        None
    }

    /// Flush what the builds wrote (the working copies' file system) before samples are
    /// taken, so that no write-back of a build runs during a measured run.
    pub(crate) fn settle(&self) {
        if let Ok(d) = std::fs::File::open(&self.cx.slots_dir) {
            let _ = rustix::fs::syncfs(&d);
        }
    }

    pub(crate) fn backend_slot<'s>(
        &'s self,
        root: &'s Path,
        spec: Option<usize>,
    ) -> crate::backend::Slot<'s> {
        crate::backend::Slot {
            spec,
            index: 0,
            root,
            user_root: &self.cx.tree.root,
            stop: &self.cx.halt,
            records: self.cx.records.as_deref(),
            device: &self.cx.device,
        }
    }

    /// Do every task of `tasks`, in order, until the channel closes or the lane is halted;
    /// every task ends with [`Event::Done`] (after an [`Event::Error`] when it failed).
    pub fn run(&self, tasks: Receiver<Task>, emit: Emit<'_>) {
        if !self.cx.overlap {
            for task in tasks {
                let id = task.id();
                let failed = spec_baseline(&task);
                if let Err(e) = self.prepare(task, emit).and_then(|p| self.measure(p, emit)) {
                    emit(fatal(id, failed, e));
                }
                emit(Event::Done { id });
                if self.cx.halt.load(Ordering::SeqCst) {
                    break;
                }
            }
            return;
        }
        // Overlap: one thread prepares the next task while this one measures, and hands what
        // the task asks to compile ahead (the next loops' variants) to the compile workers.
        type Handed<P> = (u64, Option<usize>, Result<prepare::Prepared<P>, Error>);
        let (tx, rx) = std::sync::mpsc::sync_channel::<Handed<B::Prepared>>(0);
        std::thread::scope(|s| {
            for _ in 0..self.cx.jobs.max(1) {
                s.spawn(|| self.ahead_worker(emit));
            }
            let preparing = s.spawn(move || {
                for task in tasks {
                    let id = task.id();
                    let ahead = match &task {
                        Task::Compare { base, ahead, .. } => Some((base.clone(), ahead.clone())),
                        Task::Baseline { .. } => None,
                    };
                    let failed = spec_baseline(&task);
                    let p = self.prepare(task, emit);
                    let ok = p.is_ok();
                    if tx.send((id, failed, p)).is_err() {
                        break;
                    }
                    // Handed over: the task is being measured now.
                    if let (true, Some((base, ahead))) = (ok, ahead) {
                        self.compile_ahead(&base, &ahead);
                    }
                }
            });
            for (id, failed, p) in rx {
                if let Err(e) = p.and_then(|p| self.measure(p, emit)) {
                    emit(fatal(id, failed, e));
                }
                emit(Event::Done { id });
            }
            // The preparing thread is done: so is the work it sent ahead (a compile running
            // ends first).
            let joined = preparing.join();
            self.close_ahead();
            if let Err(p) = joined {
                std::panic::resume_unwind(p);
            }
        });
    }
}

/// The objective of a `baseline` task: its baseline's failure is that objective's alone.
fn spec_baseline(task: &Task) -> Option<usize> {
    match task {
        Task::Baseline { spec, .. } => *spec,
        Task::Compare { .. } => None,
    }
}

/// The event of a task's error: a baseline of one objective that fails ends that objective
/// ([`Event::SpecFailed`]); anything else ends the tune.
fn fatal(id: u64, spec: Option<usize>, e: Error) -> Event {
    match (spec, e) {
        (Some(spec), Error::Baseline(reason)) => Event::SpecFailed { id, spec, reason },
        (_, e) => Event::Error(e.into()),
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

/// Overlays on the wire: each file's content as text when it is UTF-8 (sources are), else as
/// hex.
mod overlay_wire {
    use crate::workcopy::Overlay;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};
    use std::collections::BTreeMap;
    use std::path::PathBuf;

    #[derive(Serialize, Deserialize)]
    #[serde(rename_all = "kebab-case")]
    enum Content {
        Text(String),
        Hex(String),
    }

    pub fn serialize<S: Serializer>(o: &Overlay, s: S) -> Result<S::Ok, S::Error> {
        let m: BTreeMap<&PathBuf, Content> = o
            .iter()
            .map(|(p, b)| {
                let c = match std::str::from_utf8(b) {
                    Ok(t) => Content::Text(t.to_string()),
                    Err(_) => Content::Hex(b.iter().map(|x| format!("{x:02x}")).collect()),
                };
                (p, c)
            })
            .collect();
        m.serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Overlay, D::Error> {
        let m: BTreeMap<PathBuf, Content> = BTreeMap::deserialize(d)?;
        let mut out = Overlay::new();
        for (p, c) in m {
            let bytes = match c {
                Content::Text(t) => t.into_bytes(),
                Content::Hex(h) => {
                    if h.len() % 2 != 0 {
                        return Err(serde::de::Error::custom("odd hex length"));
                    }
                    (0..h.len())
                        .step_by(2)
                        .map(|i| u8::from_str_radix(&h[i..i + 2], 16))
                        .collect::<Result<Vec<u8>, _>>()
                        .map_err(serde::de::Error::custom)?
                }
            };
            out.insert(p, bytes);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tasks_and_events_round_trip_as_json_lines() {
        let mut overlay = Overlay::new();
        overlay.insert("k.cu".into(), b"#pragma unroll 4\n".to_vec());
        overlay.insert("bin.dat".into(), vec![0xff, 0x00, 0x7f]);
        let t = Task::Compare {
            id: 3,
            base: StateSpec {
                hash: "b".into(),
                overlay: Overlay::new(),
            },
            items: vec![Item {
                key: "k".into(),
                variant: StateSpec {
                    hash: "v".into(),
                    overlay,
                },
                file: Some("k.cu".into()),
                same_code: true,
                replicate: true,
                attempt: 1,
                joint: false,
            }],
            known: vec![("digest".into(), "other".into())],
            ahead: Vec::new(),
            spec: Some(2),
        };
        let line = serde_json::to_string(&t).unwrap();
        assert!(!line.contains('\n'));
        assert_eq!(serde_json::from_str::<Task>(&line).unwrap(), t);
        let e = Event::Item {
            key: "k".into(),
            attempt: 0,
            result: ItemResult::Failed {
                status: Status::BuildFailed,
                reason: "--build exit 1".into(),
            },
            occupancy: None,
            code: None,
        };
        let line = serde_json::to_string(&e).unwrap();
        assert_eq!(serde_json::from_str::<Event>(&line).unwrap(), e);
        let err = LaneError::from(Error::Baseline("it does not build".into()));
        assert!(matches!(err.clone().into_error(), Error::Baseline(m) if m == "it does not build"));
    }
}
