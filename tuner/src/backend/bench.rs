//! The `bench` backend: a candidate is the slot's copy of a spec's kernel source, compiled
//! alone (kernel only, through codeobj's cache) and launched on the machine's GPU by the
//! `runner` crate with that spec's launch and buffers. A tune has one or more specs (the
//! objectives, [`crate::objective`]); the slot says which one a preparation or a sample is for
//! ([`Slot::spec`]). Preparing launches the kernel once on fresh outputs and compares them with
//! the spec's baseline's (the spec's tolerances; the session's baseline, the spec's first,
//! which the session keeps: a later baseline of accepted steps is measured against, not
//! compared with); a sample is one launch timed with GPU events, in microseconds.
//!
//! One `runner::Session` per spec (its buffers allocated once, every kernel of that spec loaded
//! into it), all on the lane's one device and its one thread ([`super::worker`]): the device is
//! opened by [`Backend::preflight`] and shared by the sessions, so a check launch of one spec
//! never runs while another spec is sampled. A spec whose baseline does not build or check
//! fails alone (its session is never opened); the others go on.

use super::worker::{broken, Worker, GONE};
use super::{Backend, Failure, Slot};
use crate::error::Error;
use crate::objective::Objective;
use runner::build::{build, Target};
use runner::device::{Device, DeviceError, DeviceInfo, DevicePtr, KernelHandle, Launch};
use runner::session::{open_device, KernelId, Options, Session};
use runner::{RunnerError, Spec};
use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::{Arc, OnceLock};

/// Opens the device (on the session's thread).
pub type OpenDevice = Arc<dyn Fn() -> Result<Box<dyn Device>, RunnerError> + Send + Sync>;

/// The lane's device, shared by the sessions of its specs (all on the session thread).
struct Shared {
    device: Rc<RefCell<Box<dyn Device>>>,
    info: DeviceInfo,
}

impl Device for Shared {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }
    fn load(
        &mut self,
        image: &[u8],
        symbol: &str,
        param_offsets: &[u32],
        kernarg_size: u32,
    ) -> Result<KernelHandle, DeviceError> {
        self.device
            .borrow_mut()
            .load(image, symbol, param_offsets, kernarg_size)
    }
    fn alloc(&mut self, bytes: usize) -> Result<DevicePtr, DeviceError> {
        self.device.borrow_mut().alloc(bytes)
    }
    fn upload(&mut self, dst: DevicePtr, src: &[u8]) -> Result<(), DeviceError> {
        self.device.borrow_mut().upload(dst, src)
    }
    fn download(&mut self, src: DevicePtr, dst: &mut [u8]) -> Result<(), DeviceError> {
        self.device.borrow_mut().download(src, dst)
    }
    fn copy(&mut self, dst: DevicePtr, src: DevicePtr, bytes: usize) -> Result<(), DeviceError> {
        self.device.borrow_mut().copy(dst, src, bytes)
    }
    fn launch_timed(
        &mut self,
        kernel: KernelHandle,
        launch: &Launch,
        args: &[Vec<u8>],
        count: u32,
    ) -> Result<f64, DeviceError> {
        self.device
            .borrow_mut()
            .launch_timed(kernel, launch, args, count)
    }
    fn differ(
        &mut self,
        a: DevicePtr,
        b: DevicePtr,
        bytes: usize,
    ) -> Result<Option<bool>, DeviceError> {
        self.device.borrow_mut().differ(a, b, bytes)
    }
    fn memory(&self) -> Option<(u64, u64)> {
        self.device.borrow().memory()
    }
}

/// One spec's session, on the session thread.
enum SpecState {
    /// Not opened yet: its first baseline opens it.
    Closed,
    Open(Box<Session>),
    /// Its baseline failed (the spec's kernel is not tuned): the failure, given again.
    Failed(Failure),
}

/// The session thread's state.
struct State {
    device: Rc<RefCell<Box<dyn Device>>>,
    info: DeviceInfo,
    specs: Vec<SpecState>,
    /// The device cannot be used any more (it timed out).
    broken: Option<String>,
}

/// One spec of the backend: its objective, and the spec loaded with its source relative to
/// the tree (`None`: it could not be, `Objective::failed` says why).
pub type Loaded = (Objective, Option<(Spec, PathBuf)>);

pub struct BenchBackend {
    /// The specs, by objective index.
    specs: Vec<Loaded>,
    options: Options,
    open: OpenDevice,
    worker: OnceLock<Worker<State>>,
    /// The session's compile target, known once a baseline is prepared: variants are
    /// compiled on the preparing threads (in parallel, into the cache) before the session
    /// thread loads them.
    target: OnceLock<Target>,
}

/// A kernel loaded in a spec's session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Prepared {
    /// The spec (objective index).
    pub spec: usize,
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
        let rel = source_in_tree(&spec, root)?;
        let objective = Objective {
            name: spec.path.display().to_string(),
            kernel: spec.kernel.clone(),
            source: Some(rel.clone()),
            digest: spec_digest(&spec.path),
            failed: None,
        };
        Ok(BenchBackend::with_specs(
            vec![(objective, Some((spec, rel)))],
            options,
            open,
        ))
    }

    /// A backend for several specs (objective `i` is `specs[i]`: loaded with its source
    /// relative to the tree, or why it cannot be used) on the device `open` opens.
    pub fn with_specs(specs: Vec<Loaded>, options: Options, open: OpenDevice) -> BenchBackend {
        BenchBackend {
            specs,
            options,
            open,
            worker: OnceLock::new(),
            target: OnceLock::new(),
        }
    }

    /// Load the specs at `paths` (absolute; each with the name the user gave it) for the tree
    /// at `root`: each one loaded, or why not (a spec that cannot be read, or whose source lies
    /// outside the tree, fails alone).
    pub fn load_specs(paths: &[(String, PathBuf)], root: &Path) -> Vec<Loaded> {
        paths
            .iter()
            .map(|(name, p)| {
                let mut o = Objective {
                    name: name.clone(),
                    kernel: String::new(),
                    source: None,
                    digest: spec_digest(p),
                    failed: None,
                };
                let loaded = Spec::load(p).map_err(|e| e.to_string()).and_then(|spec| {
                    o.kernel = spec.kernel.clone();
                    let rel = source_in_tree(&spec, root).map_err(|e| e.to_string())?;
                    o.source = Some(rel.clone());
                    Ok((spec, rel))
                });
                match loaded {
                    Ok(l) => (o, Some(l)),
                    Err(m) => {
                        o.failed = Some(m);
                        (o, None)
                    }
                }
            })
            .collect()
    }

    /// The first spec that loaded (the launch spec of a one-spec tune).
    pub fn spec(&self) -> Option<&Spec> {
        self.specs().next()
    }

    /// Every spec that loaded.
    pub fn specs(&self) -> impl Iterator<Item = &Spec> {
        self.specs
            .iter()
            .filter_map(|(_, s)| s.as_ref().map(|(s, _)| s))
    }

    /// The specs' template kernels with their sources relative to the tree: what the gates
    /// instantiate where a file does not ([`crate::gates::Instance`]).
    pub fn instances(&self) -> Vec<crate::gates::Instance> {
        let mut out: Vec<crate::gates::Instance> = Vec::new();
        for (spec, rel) in self.specs.iter().filter_map(|(_, s)| s.as_ref()) {
            let i = crate::gates::Instance {
                source: rel.clone(),
                kernel: spec.kernel.clone(),
            };
            if spec.kernel.contains('<') && !out.contains(&i) {
                out.push(i);
            }
        }
        out
    }

    /// The runner's options (the device it opens: `options().device`).
    pub fn options(&self) -> &Options {
        &self.options
    }

    /// The first spec's kernel source, relative to the tree.
    pub fn source(&self) -> Option<&Path> {
        self.specs
            .iter()
            .find_map(|(_, s)| s.as_ref().map(|(_, r)| r.as_path()))
    }

    /// What the kernel is compiled for on the device [`Backend::preflight`] opened: `--arch`
    /// when given, else the device's own (`sm_90` on an H100, read through the driver). The
    /// caller sets the gates for it (nvcc cubins on NVIDIA, never AMD's code-object gates).
    pub fn target(&self) -> Result<Target, Error> {
        let arch = self.options.arch.clone();
        self.worker()?
            .call(move |st| {
                if let Some(m) = &st.broken {
                    return Err(broken(m));
                }
                runner::session::target_for(st.info.api, st.info.arch.as_deref(), arch.as_deref())
                    .map_err(|e| Error::Usage(e.to_string()))
            })
            .unwrap_or_else(|| Err(Error::Environment(GONE.into())))
    }

    fn worker(&self) -> Result<&Worker<State>, Error> {
        self.worker
            .get()
            .ok_or_else(|| Error::Environment("the bench backend was not preflighted".into()))
    }

    /// Spec `i`, loaded, or the failure of every preparation for it.
    fn spec_at(&self, i: usize) -> Result<&(Spec, PathBuf), Failure> {
        match self.specs.get(i) {
            Some((_, Some(s))) => Ok(s),
            Some((o, None)) => Err(Failure::Build(o.failed.clone().unwrap_or_default())),
            None => Err(Failure::Build(format!("no spec {i} in this tune"))),
        }
    }
}

/// The content digest of the spec at `path` (of its path when it cannot be read: such a spec
/// fails anyway).
pub fn spec_digest(path: &Path) -> String {
    match std::fs::read(path) {
        Ok(b) => crate::workcopy::hash_bytes(&b),
        Err(_) => crate::workcopy::hash_bytes(path.as_os_str().as_encoded_bytes()),
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
        state.broken = Some(m);
    }
    r.map(Err)
}

fn prepare_on(
    state: &mut State,
    index: usize,
    spec: &Spec,
    options: &Options,
    source: &Path,
    baseline: Option<KernelId>,
) -> Answer<Prepared> {
    if let Some(m) = &state.broken {
        return Err(broken(m));
    }
    let at = |id| Ok(Ok(Prepared { spec: index, id }));
    match std::mem::replace(&mut state.specs[index], SpecState::Closed) {
        SpecState::Closed => {
            if baseline.is_some() {
                return Err(Error::Environment(
                    "the bench backend prepares a spec's baseline before any variant".into(),
                ));
            }
            let device = Box::new(Shared {
                device: state.device.clone(),
                info: state.info.clone(),
            });
            match Session::with_device(device, spec.clone(), Some(source), options) {
                Ok(mut s) => {
                    let r = s.check_inputs();
                    state.specs[index] = SpecState::Open(Box::new(s));
                    match r {
                        Ok(()) => at(0),
                        Err(e) => fail(state, e),
                    }
                }
                Err(e) => {
                    // The spec's baseline fails: that spec alone is never tuned.
                    let mut poison = None;
                    let r = classify(e, &mut poison);
                    if let Some(m) = poison {
                        state.broken = Some(m);
                    }
                    if let Ok(f) = &r {
                        state.specs[index] = SpecState::Failed(f.clone());
                    }
                    r.map(Err)
                }
            }
        }
        SpecState::Open(mut s) => {
            let r = s.prepare_unchecked(source);
            let id = match r {
                Ok(id) => id,
                Err(e) => {
                    state.specs[index] = SpecState::Open(s);
                    return fail(state, e);
                }
            };
            if baseline.is_some() {
                // Compared with the session's baseline, the spec's first: a chain of accepted
                // steps cannot drift away from the user's outputs one tolerance at a time.
                let diffs = s.differences(id).to_vec();
                if !diffs.is_empty() {
                    state.specs[index] = SpecState::Open(s);
                    return fail(state, RunnerError::OutputsDiffer(diffs));
                }
            }
            let r = s.check_inputs();
            state.specs[index] = SpecState::Open(s);
            match r {
                Ok(()) => at(id),
                Err(e) => fail(state, e),
            }
        }
        SpecState::Failed(f) => {
            state.specs[index] = SpecState::Failed(f.clone());
            Ok(Err(f))
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
        let n = self.specs.len();
        let w = Worker::start("hip-unroll-bench", move || match open() {
            Ok(d) => Ok(State {
                info: d.info().clone(),
                device: Rc::new(RefCell::new(d)),
                specs: (0..n).map(|_| SpecState::Closed).collect(),
                broken: None,
            }),
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
        let index = slot.spec.unwrap_or(0);
        let (spec, rel) = match self.spec_at(index) {
            Ok(s) => s,
            Err(f) => return Ok(Err(f)),
        };
        let source = slot.root.join(rel);
        let worker = self.worker()?;
        if let Some(target) = self.target.get() {
            // Compile here, in parallel with the other slots; the session finds it cached.
            if let Err(e) = build(spec, &source, target, &self.options.build) {
                return classify(e, &mut None).map(Err);
            }
        }
        let spec = spec.clone();
        let options = self.options.clone();
        let base = baseline.map(|b| b.id);
        let r = worker
            .call(move |st| prepare_on(st, index, &spec, &options, &source, base))
            .unwrap_or_else(|| Err(Error::Environment(GONE.into())));
        if self.target.get().is_none() && matches!(r, Ok(Ok(_))) {
            let target = worker.call(move |st| match &st.specs[index] {
                SpecState::Open(s) => Some(s.target.clone()),
                _ => None,
            });
            if let Some(Some(t)) = target {
                let _ = self.target.set(t);
            }
        }
        r
    }

    fn objectives(&self) -> Vec<Objective> {
        self.specs.iter().map(|(o, _)| o.clone()).collect()
    }

    fn launches_per_sample(&self, p: &Prepared) -> Option<u32> {
        let spec = p.spec;
        self.worker()
            .ok()?
            .call(move |st| match st.specs.get(spec) {
                Some(SpecState::Open(s)) => Some(s.launches_per_sample()),
                _ => None,
            })
            .flatten()
    }

    fn sample(&self, _slot: &Slot<'_>, p: &Prepared) -> Result<Result<f64, Failure>, Error> {
        let Prepared { spec, id } = *p;
        self.worker()?
            .call(move |st| {
                if let Some(m) = &st.broken {
                    return Err(broken(m));
                }
                match std::mem::replace(&mut st.specs[spec], SpecState::Closed) {
                    SpecState::Open(mut s) => {
                        let r = s.sample(id);
                        st.specs[spec] = SpecState::Open(s);
                        match r {
                            // Milliseconds of GPU time -> microseconds.
                            Ok(ms) => Ok(Ok(ms * 1000.0)),
                            Err(e) => fail(st, e),
                        }
                    }
                    other => {
                        st.specs[spec] = other;
                        Err(Error::Environment(
                            "the bench backend samples only prepared kernels".into(),
                        ))
                    }
                }
            })
            .unwrap_or_else(|| Err(Error::Environment(GONE.into())))
    }
}
