//! The closed loop. Discover the loops of PATHS, order them, and for each loop try every
//! factor x mode: static gates, build and check in a working copy, then interleaved A/B
//! measurement against the current baseline until [`crate::stats::assess`] decides. The best
//! accepted variant of a loop becomes the baseline of the next loop of the same kernel (greedy,
//! one variant per loop, per kernel). At the end the accepted variants of every kernel are
//! combined, a confirmation compares the combination with the original, and the accepted
//! edits are applied to the user's files (or shown as a diff, or only reported for
//! `--dry-run`).
//!
//! The work is split three ways: [`session`] is the lifecycle of one tune (lock, orphans, an
//! interrupted apply, the ledger, the tree, the confirmation, the apply and the report);
//! [`coordinate`] is the search itself (the kernels' chains of loops, the decisions, which lane
//! measures what); the lanes ([`crate::lane`]) prepare and measure, each on its own device,
//! behind an [`crate::executor::Executor`] (threads here, or `tune-worker` processes: Slurm
//! job steps, or local processes for backends that need one per device).
//!
//! Parallelism: lanes measure different comparisons at the same time (loops of different
//! kernels are independent, and so are the variants of one loop); a comparison's pairs are
//! measured on one lane. Within a lane the variants of a batch are prepared in parallel, one
//! working copy each (`--jobs`).
//!
//! Reuse: every decision is stored in the ledger under (settings and device model, baseline
//! content, variant content). Before building anything the search looks the decision up; the
//! baseline itself is built and measured only when some comparison must really be made (or
//! when the backend ranks loops by the baseline's profile), so a second `tune` over an
//! unchanged tree builds and compiles nothing.

pub mod coordinate;
pub mod session;

use crate::backend::{Backend, LaneDevice};
use crate::discover::Discovery;
use crate::error::Error;
use crate::executor::local::{self, LocalLane};
use crate::lane::Device;
use crate::report::{Candidate, Report};
pub use crate::settings::{ApplyMode, Settings};
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

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
pub struct Tuned {
    pub report: Report,
    /// The unified diff (`ApplyMode::Diff`).
    pub diff: Option<String>,
    /// Ctrl-C stopped the search: nothing was applied.
    pub interrupted: bool,
    pub run_id: i64,
}

/// Run the closed loop with `backend` over the tree at `root` (the directory `--build` runs in),
/// on one lane: the default device.
pub fn tune<B: Backend>(
    backend: &B,
    settings: &Settings,
    root: &Path,
    stop: &Arc<AtomicBool>,
    progress: &dyn Progress,
) -> Result<Tuned, Error> {
    crate::limits::check(settings)?;
    progress.phase("discovering loops");
    let disc = discover(settings, root)?;
    fsio::testpoint::hit("tuner.search.discovered");
    tune_discovered(backend, settings, root, disc, stop, progress)
}

/// The loops of `settings.paths` under `root`, the state directory left out: what [`tune`]
/// searches. A caller that needs them before the search (the rocprofv3 backend's kernel names)
/// discovers once and passes them to [`tune_discovered`], so every file is parsed once.
pub fn discover(settings: &Settings, root: &Path) -> Result<Discovery, Error> {
    // The guards see the macros the gates compile with (`-D`/`-U` of the compile command:
    // `[compile] command`, `[tune] compile-flags`, the command line's).
    let defines = pipeline::Defines::from_flags(settings.gates.compiler.command.split_whitespace());
    let includes = pipeline::Includes::new(settings.include_dirs.clone(), Default::default())
        .with_defines(&defines);
    crate::discover::discover(
        root,
        &settings.paths,
        &[session::state_dir(settings, root)],
        &includes,
    )
}

/// [`tune`] over loops already discovered by [`discover`] with the same settings and root.
pub fn tune_discovered<B: Backend>(
    backend: &B,
    settings: &Settings,
    root: &Path,
    disc: Discovery,
    stop: &Arc<AtomicBool>,
    progress: &dyn Progress,
) -> Result<Tuned, Error> {
    let lane = LocalLane {
        backend,
        device: Device::probe(None),
        lane: LaneDevice::DEFAULT,
    };
    tune_lanes(
        std::slice::from_ref(&lane),
        settings,
        root,
        disc,
        stop,
        progress,
    )
}

/// [`tune_discovered`] on local lanes, one per device, each with its own backend: comparisons
/// run on every lane at once.
pub fn tune_lanes<B: Backend>(
    lanes: &[LocalLane<'_, B>],
    settings: &Settings,
    root: &Path,
    disc: Discovery,
    stop: &Arc<AtomicBool>,
    progress: &dyn Progress,
) -> Result<Tuned, Error> {
    crate::limits::check(settings)?;
    session::require_kernels(settings, &disc)?;
    for l in lanes {
        l.backend.preflight()?;
    }
    let session = session::Session::open(settings, root, disc)?;
    let setup = session.lane_setup();
    std::thread::scope(|scope| {
        let exec = local::Local::start(scope, lanes, &setup, stop)?;
        let r = session.run(&exec, stop, progress);
        drop(exec);
        r
    })
}

/// The tune of `backend` (a spec: built by each worker for its lane) on lanes that are
/// `hip-unroll tune-worker` processes ([`crate::executor::slurm`]): Slurm job steps, or
/// processes on this machine (one per device, for backends that need one), over loops already
/// discovered by [`discover`]; this process coordinates and alone writes the ledger. Each
/// Slurm worker keeps its working copies in `STATE/slots/step-N`, each local one where a local
/// lane would.
pub fn tune_workers(
    backend: &crate::backend::spec::BackendSpec,
    launcher: &crate::executor::slurm::Launcher,
    settings: &Settings,
    root: &Path,
    disc: Discovery,
    stop: &Arc<AtomicBool>,
    progress: &dyn Progress,
) -> Result<Tuned, Error> {
    use crate::executor::slurm::Launcher;
    use crate::executor::worker::{CompileSpec, Init};
    crate::limits::check(settings)?;
    session::require_kernels(settings, &disc)?;
    let session = session::Session::open(settings, root, disc)?;
    let setup = session.lane_setup();
    let init = |i: usize| Init {
        lane: i,
        root: setup.tree.root.clone(),
        tree_hash: setup.tree.hash.clone(),
        state_dir: setup.state_dir.to_path_buf(),
        slots_dir: match launcher {
            Launcher::Srun(_) => setup.state_dir.join("slots").join(format!("step-{i}")),
            Launcher::Direct(_) => local::slots_dir(setup.state_dir, i),
        },
        records_dir: Some(setup.records_dir.clone()),
        plan: settings.plan,
        jobs: settings.jobs,
        compile: CompileSpec::of(&settings.gates),
        backend: backend.clone(),
        device: match launcher {
            Launcher::Srun(_) => None,
            Launcher::Direct(d) => d.devices.get(i).cloned(),
        },
    };
    progress.phase(&match launcher {
        Launcher::Srun(s) => format!("starting {} Slurm job steps", s.lanes),
        Launcher::Direct(d) => format!("starting {} worker processes", d.devices.len()),
    });
    let exec = crate::executor::slurm::Workers::start(launcher, &init)?;
    let r = session.run(&exec, stop, progress);
    drop(exec);
    r
}
