//! The `replay` backend: a candidate is measured by replaying one captured dispatch (a
//! `hip-unroll capture` snapshot) with the code object compiled from the slot's copy of the
//! source that defines the captured kernel (through codeobj's cache). Preparing checks the
//! variant's signature and kernarg layout against the captured kernel, replays it once and
//! compares every written region with the captured kernel's on identical memory; a sample is
//! one replay on restored memory, timed by the dispatch's GPU timestamps, in nanoseconds.
//!
//! The baseline is the slot's source compiled the same way (not the captured code object), so
//! baseline and variants share one compiler; it too must write what the capture writes.
//! One `replay::backend::Session` serves the whole tune, on its own thread
//! ([`super::worker`]), opened by [`Backend::preflight`].

use super::worker::{broken, Worker, GONE};
use super::{kernel_function_name, same_function, Backend, Failure, Slot};
use crate::error::{io_err, Error};
use codeobj::compile::Compiler;
use replay::backend::{BackendError, Session};
use replay::device::{DeviceError, KernelId, Options};
use replay::diff::{FloatRegion, Tolerance};
use replay::Snapshot;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// How the session is opened and variants compiled.
#[derive(Debug, Clone)]
pub struct ReplaySettings {
    pub snapshot: PathBuf,
    pub options: Options,
    /// Compiles the slot's source (its arch is the snapshot's).
    pub compiler: Compiler,
    pub float_regions: Vec<FloatRegion>,
    pub tolerance: Tolerance,
}

enum State {
    Open(Box<Session>),
    /// A replay timed out: the device is not touched again.
    Broken(String),
}

pub struct ReplayBackend {
    settings: ReplaySettings,
    /// The source defining the captured kernel, relative to the tuned tree.
    rel_source: PathBuf,
    worker: OnceLock<Worker<State>>,
}

/// A kernel loaded in the replay session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Prepared {
    pub id: KernelId,
}

/// The source-level function of the snapshot's kernel (`ns::k`), from the code object's
/// mangled name or, failing that, the capture's demangled name.
pub fn captured_function(s: &Snapshot) -> String {
    let name = replay::hsaco::kernel_name(&s.kernel.name);
    match codeobj::metadata::demangle(name) {
        Some(_) => kernel_function_name(name),
        None if !s.dispatch.demangled_name.is_empty() => {
            kernel_function_name(&s.dispatch.demangled_name)
        }
        None => name.to_string(),
    }
}

/// The GPU architecture the snapshot was captured on (`gfx90a`): [`Snapshot::processor`].
pub fn captured_arch(s: &Snapshot) -> Option<String> {
    let gfx = s.processor();
    gfx.starts_with("gfx").then(|| gfx.to_string())
}

/// Open a snapshot for the CLI (checks it): a bad snapshot is one line.
pub fn open_snapshot(dir: &Path) -> Result<Snapshot, Error> {
    Snapshot::open(dir).map_err(|e| Error::Usage(format!("snapshot {}: {e}", dir.display())))
}

/// The one file of the discovered tree (relative to its root) that defines the captured
/// kernel's function; none or several is a usage error listing what was found.
pub fn find_source(
    snapshot: &Snapshot,
    disc: &crate::discover::Discovery,
) -> Result<PathBuf, Error> {
    let function = captured_function(snapshot);
    let mut files: Vec<&Path> = disc
        .kernels()
        .filter(|(_, k)| same_function(&function, k))
        .map(|(f, _)| f)
        .collect();
    files.dedup();
    match files.as_slice() {
        [one] => Ok(one.to_path_buf()),
        [] => {
            let all: Vec<String> = disc
                .kernels()
                .map(|(f, k)| format!("{k} ({})", f.display()))
                .collect();
            Err(Error::NeedsSetting {
                message: format!(
                    "no file among the tuned paths defines the captured kernel `{function}` (kernels found: {})",
                    if all.is_empty() { "none".to_string() } else { all.join(", ") }
                ),
                fix: crate::setting::Setting::Source,
            })
        }
        many => Err(Error::NeedsSetting {
            message: format!(
                "several files define the captured kernel `{function}`: {}",
                many.iter()
                    .map(|f| f.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            fix: crate::setting::Setting::Source,
        }),
    }
}

/// `file` relative to the tree `root`; a file outside the tree cannot be tuned.
pub fn relative_to_tree(file: &Path, root: &Path) -> Result<PathBuf, Error> {
    let abs = if file.is_absolute() {
        file.to_path_buf()
    } else {
        root.join(file)
    };
    let f = std::fs::canonicalize(&abs).map_err(io_err(file))?;
    let r = std::fs::canonicalize(root).map_err(io_err(root))?;
    f.strip_prefix(&r).map(Path::to_path_buf).map_err(|_| {
        Error::Usage(format!(
            "{} lies outside the tuned tree {}",
            file.display(),
            root.display()
        ))
    })
}

impl ReplayBackend {
    /// `source` is the file defining the captured kernel, relative to the tuned tree.
    pub fn new(settings: ReplaySettings, source: PathBuf) -> ReplayBackend {
        ReplayBackend {
            settings,
            rel_source: source,
            worker: OnceLock::new(),
        }
    }

    fn worker(&self) -> Result<&Worker<State>, Error> {
        self.worker
            .get()
            .ok_or_else(|| Error::Environment("the replay backend was not preflighted".into()))
    }
}

type Answer<T> = Result<Result<T, Failure>, Error>;

/// What a replay error means for a candidate.
fn classify<T>(state: &mut State, e: BackendError) -> Answer<T> {
    match e {
        BackendError::Compile(_) | BackendError::Variant(_) => {
            Ok(Err(Failure::Build(e.to_string())))
        }
        BackendError::Mismatch { .. } => Ok(Err(Failure::Check(e.to_string()))),
        BackendError::Device(DeviceError::Timeout { .. }) => {
            let m = e.to_string();
            *state = State::Broken(m.clone());
            Ok(Err(Failure::Check(m)))
        }
        BackendError::Device(DeviceError::Hsa { .. }) => Ok(Err(Failure::Check(e.to_string()))),
        BackendError::Device(_) | BackendError::Snapshot(_) => {
            Err(Error::Environment(e.to_string()))
        }
    }
}

impl Backend for ReplayBackend {
    type Prepared = Prepared;

    fn name(&self) -> &'static str {
        "replay"
    }

    fn unit(&self) -> String {
        "ns".into()
    }

    /// Compiles overlap measurement (GPU time); the session thread runs one dispatch at a time, so a check
    /// launch never shares the device with a measured one.
    fn overlaps(&self) -> bool {
        true
    }

    /// Snapshot checked, runtime loaded, GPU agent found, memory restored at the captured
    /// addresses and the captured kernel loaded.
    fn preflight(&self) -> Result<(), Error> {
        if self.worker.get().is_some() {
            return Ok(());
        }
        let s = self.settings.clone();
        let w = Worker::start("hip-unroll-replay", move || {
            Session::open(
                &s.snapshot,
                s.options,
                s.compiler,
                s.float_regions,
                s.tolerance,
            )
            .map(|x| State::Open(Box::new(x)))
            .map_err(|e| match e {
                BackendError::Snapshot(e) => {
                    format!("snapshot {}: {e}", s.snapshot.display())
                }
                e => e.to_string(),
            })
        })
        .map_err(Error::Environment)?;
        let _ = self.worker.set(w);
        Ok(())
    }

    fn prepare(
        &self,
        slot: &Slot<'_>,
        _baseline: Option<&Prepared>,
    ) -> Result<Result<Prepared, Failure>, Error> {
        // Every candidate, the baseline included, is compared with the captured kernel.
        let source = slot.root.join(&self.rel_source);
        // Messages name the file as the user knows it, not the slot's copy.
        let (copy, rel) = (
            source.display().to_string(),
            self.rel_source.display().to_string(),
        );
        let worker = self.worker()?;
        // Compile here, in parallel with the other slots; the session finds it cached.
        if let Err(e) = self.settings.compiler.compile(&source) {
            let m = BackendError::Compile(e).to_string();
            return Ok(Err(Failure::Build(m.replace(&copy, &rel))));
        }
        let answer = worker
            .call(move |st| match st {
                State::Open(s) => match s.prepare(&source) {
                    Ok(v) => Ok(Ok(Prepared { id: v.id })),
                    Err(e) => classify(st, e),
                },
                State::Broken(m) => Err(broken(m)),
            })
            .unwrap_or_else(|| Err(Error::Environment(GONE.into())))?;
        Ok(answer.map_err(|f| match f {
            Failure::Build(m) => Failure::Build(m.replace(&copy, &rel)),
            Failure::Check(m) => Failure::Check(m.replace(&copy, &rel)),
            Failure::NotCached(m) => Failure::NotCached(m.replace(&copy, &rel)),
        }))
    }

    fn sample(&self, _slot: &Slot<'_>, p: &Prepared) -> Result<Result<f64, Failure>, Error> {
        let id = p.id;
        self.worker()?
            .call(move |st| match st {
                State::Open(s) => match s.sample(id) {
                    Ok(ns) => Ok(Ok(ns as f64)),
                    Err(e) => classify(st, e),
                },
                State::Broken(m) => Err(broken(m)),
            })
            .unwrap_or_else(|| Err(Error::Environment(GONE.into())))
    }
}

/// A hash of what a snapshot replays (dispatch, kernel arguments, code object, every region's
/// address, size and contents), for the tune's settings fingerprint: decisions measured on one
/// capture are not reused for another.
pub fn snapshot_fingerprint(s: &Snapshot) -> String {
    use replay::snapshot::Contents;
    let mut h = blake3::Hasher::new();
    h.update(
        serde_json::to_string(&s.dispatch)
            .unwrap_or_default()
            .as_bytes(),
    );
    h.update(s.kernarg_blake3.as_bytes());
    h.update(s.hsaco_blake3.as_bytes());
    for r in &s.regions {
        h.update(&r.base().to_le_bytes());
        h.update(&r.size().to_le_bytes());
        match &r.contents {
            Contents::File { blake3, .. } => h.update(blake3.as_bytes()),
            Contents::Missing { .. } => h.update(b"missing"),
        };
    }
    h.finalize().to_hex().to_string()
}
