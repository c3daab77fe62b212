//! The `bench` backend: a candidate is the slot's copy of the spec's kernel source, compiled
//! alone (kernel only, through codeobj's cache) and launched on the machine's GPU by the
//! `runner` crate with the spec's launch and buffers. Preparing launches it once on fresh
//! outputs and compares them with the baseline's (the spec's tolerances; the session's
//! baseline, the tune's first, which the session keeps: a later baseline of accepted steps is
//! measured against, not compared with); a sample is one launch timed with GPU events, in
//! microseconds.
//!
//! One `runner::Session` serves the whole tune (buffers allocated once, every kernel loaded
//! into it); it lives on its own thread ([`super::worker`]), opened by [`Backend::preflight`].

use super::worker::{broken, Worker, GONE};
use super::{Backend, Failure, Slot};
use crate::error::Error;
use runner::build::{build, Target};
use runner::device::{Device, DeviceError};
use runner::session::{open_device, KernelId, Options, Session};
use runner::{RunnerError, Spec};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

/// Opens the device (on the session's thread).
pub type OpenDevice = Arc<dyn Fn() -> Result<Box<dyn Device>, RunnerError> + Send + Sync>;

/// The session thread's state.
enum State {
    /// Preflight opened the device; the first baseline opens the session on it.
    Device(Box<dyn Device>),
    Open(Box<Session>),
    /// The device cannot be used any more (it timed out, or opening the session failed).
    Broken(String),
}

pub struct BenchBackend {
    spec: Spec,
    /// The spec's source, relative to the tuned tree (the same path in every slot).
    rel_source: PathBuf,
    options: Options,
    open: OpenDevice,
    worker: OnceLock<Worker<State>>,
    /// The session's compile target, known once the baseline is prepared: variants are
    /// compiled on the preparing threads (in parallel, into the cache) before the session
    /// thread loads them.
    target: OnceLock<Target>,
}

/// A kernel loaded in the session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Prepared {
    pub id: KernelId,
}

impl BenchBackend {
    /// A backend for `spec`, whose source must lie inside the tuned tree `root`; the device is
    /// the one `options` selects.
    pub fn new(spec: Spec, root: &Path, options: Options) -> Result<BenchBackend, Error> {
        let opts = options.clone();
        let open: OpenDevice = Arc::new(move || open_device(&opts));
        BenchBackend::with_device(spec, root, options, open)
    }

    /// [`BenchBackend::new`] with a device of the caller's (tests bring a simulated one).
    pub fn with_device(
        spec: Spec,
        root: &Path,
        options: Options,
        open: OpenDevice,
    ) -> Result<BenchBackend, Error> {
        let rel_source = source_in_tree(&spec, root)?;
        Ok(BenchBackend {
            spec,
            rel_source,
            options,
            open,
            worker: OnceLock::new(),
            target: OnceLock::new(),
        })
    }

    /// The launch spec.
    pub fn spec(&self) -> &Spec {
        &self.spec
    }

    /// The runner's options (the device it opens: `options().device`).
    pub fn options(&self) -> &Options {
        &self.options
    }

    /// The kernel source, relative to the tree.
    pub fn source(&self) -> &Path {
        &self.rel_source
    }

    /// What the kernel is compiled for on the device [`Backend::preflight`] opened: `--arch`
    /// when given, else the device's own (`sm_90` on an H100, read through the driver). The
    /// caller sets the gates for it (nvcc cubins on NVIDIA, never AMD's code-object gates).
    pub fn target(&self) -> Result<Target, Error> {
        let arch = self.options.arch.clone();
        self.worker()?
            .call(move |st| match st {
                State::Device(d) => {
                    let info = d.info();
                    runner::session::target_for(info.api, info.arch.as_deref(), arch.as_deref())
                        .map_err(|e| Error::Usage(e.to_string()))
                }
                State::Open(s) => Ok(s.target.clone()),
                State::Broken(m) => Err(broken(m)),
            })
            .unwrap_or_else(|| Err(Error::Environment(GONE.into())))
    }

    fn worker(&self) -> Result<&Worker<State>, Error> {
        self.worker
            .get()
            .ok_or_else(|| Error::Environment("the bench backend was not preflighted".into()))
    }
}

/// The spec's source relative to `root`; a source outside the tree cannot be tuned.
fn source_in_tree(spec: &Spec, root: &Path) -> Result<PathBuf, Error> {
    let src = std::fs::canonicalize(&spec.source).map_err(crate::error::io_err(&spec.source))?;
    let root_c = std::fs::canonicalize(root).map_err(crate::error::io_err(root))?;
    match src.strip_prefix(&root_c) {
        Ok(rel) => Ok(rel.to_path_buf()),
        Err(_) => Err(Error::Usage(format!(
            "{}: the spec's source {} lies outside the tuned tree {}; run tune from a directory that contains it",
            spec.path.display(),
            spec.source.display(),
            root.display()
        ))),
    }
}

/// What a runner error means for a candidate: a status of the variant, or the end of the tune.
/// A timed-out device is never touched again (`poison`).
fn classify(e: RunnerError, poison: &mut Option<String>) -> Result<Failure, Error> {
    match e {
        RunnerError::Compile(codeobj::compile::CompileError::CompilerMissing { .. }) => {
            Ok(Failure::NotCached(e.to_string()))
        }
        RunnerError::Compile(_)
        | RunnerError::Build(_)
        | RunnerError::Refused { .. }
        | RunnerError::Invalid { .. } => Ok(Failure::Build(e.to_string())),
        RunnerError::OutputsDiffer(_) | RunnerError::WroteInput(_) => {
            Ok(Failure::Check(e.to_string()))
        }
        RunnerError::Device(DeviceError::Unavailable(m) | DeviceError::NoRuntime(_, m)) => {
            Err(Error::Environment(m))
        }
        RunnerError::Device(d @ DeviceError::Timeout { .. }) => {
            let m = d.to_string();
            *poison = Some(m.clone());
            Ok(Failure::Check(m))
        }
        RunnerError::Device(d) => Ok(Failure::Check(d.to_string())),
        RunnerError::Usage(m) => Err(Error::Usage(m)),
        RunnerError::Setting { .. } => Err(Error::Usage(e.to_string())),
        RunnerError::Spec(_) | RunnerError::Io { .. } => Err(Error::Environment(e.to_string())),
    }
}

type Answer<T> = Result<Result<T, Failure>, Error>;

/// Apply a classified error to the state and turn it into an answer.
fn fail<T>(state: &mut State, e: RunnerError) -> Answer<T> {
    let mut poison = None;
    let r = classify(e, &mut poison);
    if let Some(m) = poison {
        *state = State::Broken(m);
    }
    r.map(Err)
}

fn prepare_on(
    state: &mut State,
    spec: &Spec,
    options: &Options,
    source: &Path,
    baseline: Option<KernelId>,
) -> Answer<Prepared> {
    match std::mem::replace(state, State::Broken(String::new())) {
        State::Device(device) => {
            if baseline.is_some() {
                *state = State::Device(device);
                return Err(Error::Environment(
                    "the bench backend prepares the baseline before any variant".into(),
                ));
            }
            match Session::with_device(device, spec.clone(), Some(source), options) {
                Ok(mut s) => {
                    let r = s.check_inputs();
                    *state = State::Open(Box::new(s));
                    match r {
                        Ok(()) => Ok(Ok(Prepared { id: 0 })),
                        Err(e) => fail(state, e),
                    }
                }
                Err(e) => {
                    // The device went into the failed session: nothing more can run.
                    *state = State::Broken(format!("the baseline failed: {e}"));
                    classify(e, &mut None).map(Err)
                }
            }
        }
        State::Open(mut s) => {
            let r = s.prepare_unchecked(source);
            let id = match r {
                Ok(id) => id,
                Err(e) => {
                    *state = State::Open(s);
                    return fail(state, e);
                }
            };
            if baseline.is_some() {
                // Compared with the session's baseline, the tune's first: a chain of accepted
                // steps cannot drift away from the user's outputs one tolerance at a time.
                let diffs = s.differences(id).to_vec();
                if !diffs.is_empty() {
                    *state = State::Open(s);
                    return fail(state, RunnerError::OutputsDiffer(diffs));
                }
            }
            let r = s.check_inputs();
            *state = State::Open(s);
            match r {
                Ok(()) => Ok(Ok(Prepared { id })),
                Err(e) => fail(state, e),
            }
        }
        State::Broken(m) => {
            *state = State::Broken(m.clone());
            Err(broken(&m))
        }
    }
}

impl Backend for BenchBackend {
    type Prepared = Prepared;

    fn name(&self) -> &'static str {
        "bench"
    }

    fn unit(&self) -> String {
        "us".into()
    }

    /// Compiles overlap measurement (GPU time); the session thread runs one launch at a time, so a check
    /// launch never shares the device with a measured one.
    fn overlaps(&self) -> bool {
        true
    }

    fn preflight(&self) -> Result<(), Error> {
        if self.worker.get().is_some() {
            return Ok(());
        }
        let open = self.open.clone();
        let w = Worker::start("hip-unroll-bench", move || match open() {
            Ok(d) => Ok(State::Device(d)),
            Err(e) => Err(e.to_string()),
        })
        .map_err(Error::Environment)?;
        let _ = self.worker.set(w);
        Ok(())
    }

    fn prepare(
        &self,
        slot: &Slot<'_>,
        baseline: Option<&Prepared>,
    ) -> Result<Result<Prepared, Failure>, Error> {
        let source = slot.root.join(&self.rel_source);
        let worker = self.worker()?;
        if let Some(target) = self.target.get() {
            // Compile here, in parallel with the other slots; the session finds it cached.
            if let Err(e) = build(&self.spec, &source, target, &self.options.build) {
                return classify(e, &mut None).map(Err);
            }
        }
        let spec = self.spec.clone();
        let options = self.options.clone();
        let base = baseline.map(|b| b.id);
        let r = worker
            .call(move |st| prepare_on(st, &spec, &options, &source, base))
            .unwrap_or_else(|| Err(Error::Environment(GONE.into())));
        if self.target.get().is_none() && matches!(r, Ok(Ok(_))) {
            let target = worker.call(|st| match st {
                State::Open(s) => Some(s.target.clone()),
                _ => None,
            });
            if let Some(Some(t)) = target {
                let _ = self.target.set(t);
            }
        }
        r
    }

    fn sample(&self, _slot: &Slot<'_>, p: &Prepared) -> Result<Result<f64, Failure>, Error> {
        let id = p.id;
        self.worker()?
            .call(move |st| match st {
                State::Open(s) => match s.sample(id) {
                    // Milliseconds of GPU time -> microseconds.
                    Ok(ms) => Ok(Ok(ms * 1000.0)),
                    Err(e) => fail(st, e),
                },
                State::Broken(m) => Err(broken(m)),
                State::Device(_) => Err(Error::Environment(
                    "the bench backend samples only prepared kernels".into(),
                )),
            })
            .unwrap_or_else(|| Err(Error::Environment(GONE.into())))
    }
}
