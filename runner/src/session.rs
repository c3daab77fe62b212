//! A bench session: one device, the spec's buffers on it, and kernels prepared against them.
//! This is the library API the `bench` command and the tuner's `bench` backend share:
//! [`Session::open`] (device, buffers, the baseline kernel), [`Session::prepare`] (compile a
//! variant, launch it once on fresh outputs and compare them with the baseline's) and
//! [`Session::sample`] (one timed launch; outputs are reset first, outside the timed part, so
//! every launch of every kernel sees the same memory).
//!
//! Host work is only what a check needs, and host memory does not grow with the kernels: the
//! session keeps the baseline's outputs (the reference every kernel is compared with) and one
//! reusable buffer that buffers are generated in and read back into; of every other kernel it
//! keeps only its outputs' digests and first differences. Generation, hashing and comparison
//! run on every core, piece by piece ([`crate::digest`], [`crate::compare::check`]), with
//! results that do not depend on the number of threads. Inputs are uploaded once and copied on
//! the device to make the outputs' pristine copies; they are checked unchanged by fingerprint
//! ([`crate::digest::fingerprint`]).

use crate::build::{build, BuildOptions, Built, Target, DEFAULT_CUDA_ARCH};
pub use crate::compare::OutputDiff;
use crate::device::{Api, Device, DeviceError, DevicePtr, KernelHandle, Launch};
use crate::digest::Digest;
use crate::elem::generate_into;
use crate::error::{RunnerError, Setting};
use crate::spec::{ArgKind, Init, Spec};
use serde::Serialize;
use std::path::Path;
use std::time::Duration;

/// Which runtime to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    /// A HIP device if there is one, else a CUDA device.
    Auto,
    Hip,
    Cuda,
}

/// How a session finds its device and compiles.
#[derive(Debug, Clone)]
pub struct Options {
    pub backend: Backend,
    /// Compile target (`gfx90a`, `sm_90`); default: the device's ([`target_for`]).
    pub arch: Option<String>,
    pub device: i32,
    /// Bounds runtime initialisation and every wait for a launch.
    pub timeout: Duration,
    pub build: BuildOptions,
}

/// The longest wait for a launch or the runtime's start (one day).
pub const MAX_TIMEOUT: Duration = Duration::from_secs(86_400);
/// The most timed launches, and the most warm-up launches, per kernel.
pub const MAX_ITERATIONS: u64 = 1_000_000;

impl Options {
    /// Check the settings (the time limit): `Session::open` and [`open_device`] call it.
    pub fn validate(&self) -> Result<(), RunnerError> {
        check_timeout(self.timeout)
    }
}

/// A time limit from seconds (`--timeout`): positive, at most [`MAX_TIMEOUT`].
pub fn timeout_from_secs(secs: f64) -> Result<Duration, RunnerError> {
    if !(secs > 0.0 && secs <= MAX_TIMEOUT.as_secs_f64()) {
        return Err(RunnerError::Setting {
            setting: Setting::Timeout,
            message: format!(
                "must be more than 0 and at most {} seconds (got {secs:?})",
                MAX_TIMEOUT.as_secs()
            ),
        });
    }
    Ok(Duration::from_secs_f64(secs))
}

fn check_timeout(t: Duration) -> Result<(), RunnerError> {
    if t.is_zero() || t > MAX_TIMEOUT {
        return Err(RunnerError::Usage(format!(
            "the launch time limit must be more than 0 and at most {} seconds (got {} s)",
            MAX_TIMEOUT.as_secs(),
            t.as_secs_f64()
        )));
    }
    Ok(())
}

/// Check `--iterations` (at least 1) and `--warmup` (at least 0), each at most
/// [`MAX_ITERATIONS`].
pub fn check_counts(iterations: u64, warmup: u64) -> Result<(), RunnerError> {
    for (setting, n, min) in [
        (Setting::Iterations, iterations, 1),
        (Setting::Warmup, warmup, 0),
    ] {
        if n < min || n > MAX_ITERATIONS {
            return Err(RunnerError::Setting {
                setting,
                message: format!("must be {min} to {MAX_ITERATIONS} (got {n})"),
            });
        }
    }
    Ok(())
}

/// Open the device `opts` asks for; the error is one line (no library, no GPU).
pub fn open_device(opts: &Options) -> Result<Box<dyn Device>, RunnerError> {
    opts.validate()?;
    let hip = || {
        crate::hip::HipDevice::open(opts.device, opts.timeout)
            .map(|d| Box::new(d) as Box<dyn Device>)
    };
    let cuda = || {
        crate::cuda::CudaDevice::open(opts.device, opts.timeout)
            .map(|d| Box::new(d) as Box<dyn Device>)
    };
    match opts.backend {
        Backend::Hip => Ok(hip()?),
        Backend::Cuda => Ok(cuda()?),
        Backend::Auto => match hip() {
            Ok(d) => Ok(d),
            Err(DeviceError::Unavailable(h) | DeviceError::NoRuntime(_, h)) => match cuda() {
                Ok(d) => Ok(d),
                Err(DeviceError::Unavailable(c) | DeviceError::NoRuntime(_, c)) => Err(
                    RunnerError::Device(DeviceError::Unavailable(format!("no GPU: {h}; {c}"))),
                ),
                Err(e) => Err(e.into()),
            },
            Err(e) => Err(e.into()),
        },
    }
}

/// The compile target for a device: `arch` (`--arch`) when given, else the device's own
/// (`gfx90a` from the AMD topology, `sm_90` from the CUDA driver's compute capability), else
/// [`DEFAULT_CUDA_ARCH`] for an NVIDIA device that cannot tell. An `arch` of the other vendor
/// is refused.
pub fn target_for(
    api: Api,
    device_arch: Option<&str>,
    arch: Option<&str>,
) -> Result<Target, RunnerError> {
    let nvidia = |a: &str| a.starts_with("sm_") || a.starts_with("compute_");
    match (api, arch) {
        (Api::Hip, Some(a)) if nvidia(a) => Err(RunnerError::Setting {
            setting: Setting::Arch,
            message: format!(
                "{a} is an NVIDIA architecture, and the GPU is an AMD one: name its gfx... architecture, or none"
            ),
        }),
        (Api::Cuda, Some(a)) if !nvidia(a) => Err(RunnerError::Setting {
            setting: Setting::Arch,
            message: format!(
                "{a} is not an NVIDIA architecture, and the GPU is an NVIDIA one: name sm_80, sm_90... or none (the device's)"
            ),
        }),
        (Api::Hip, _) => match arch.or(device_arch) {
            Some(a) => Ok(Target::Hip(a.to_string())),
            None => Err(RunnerError::Setting {
                setting: Setting::Arch,
                message: "must be given (gfx...): the AMD GPU's cannot be told (no /sys/class/kfd topology)".into(),
            }),
        },
        (Api::Cuda, _) => Ok(Target::Cuda(
            arch.or(device_arch).unwrap_or(DEFAULT_CUDA_ARCH).to_string(),
        )),
    }
}

struct Buf {
    ptr: DevicePtr,
    /// Outputs: a device copy of the initial contents, copied over `ptr` before every launch.
    pristine: Option<DevicePtr>,
    bytes: usize,
    /// Inputs: the fingerprint of the initial contents, to prove the kernel left them alone.
    initial: Option<u128>,
    /// Where the device compares buffers ([`Device::differ`]) and has the room: inputs, a
    /// device copy of the initial contents; outputs, of the baseline's outputs (made once the
    /// baseline ran). A variant's buffer equal to it is checked without reading it back.
    copy: Option<DevicePtr>,
}

/// One output of one kernel after a launch on fresh memory: its digest (the bytes are not kept).
#[derive(Debug, Clone, Serialize)]
pub struct Output {
    pub arg: usize,
    pub name: String,
    /// blake3 of the output's bytes (hex).
    pub checksum: String,
}

/// A kernel loaded in a session.
#[derive(Debug, Clone, Serialize)]
pub struct Prepared {
    pub built: Built,
    /// Outputs of its first launch on fresh memory.
    pub outputs: Vec<Output>,
    /// Its outputs outside their tolerance of the baseline's (the first difference of each).
    #[serde(skip)]
    pub differences: Vec<OutputDiff>,
    #[serde(skip)]
    handle: KernelHandle,
}

/// The baseline's output of one argument: what every kernel's is compared with.
struct Reference {
    arg: usize,
    bytes: Vec<u8>,
    digest: Digest,
}

/// Index of a prepared kernel in its session (0 is the baseline).
pub type KernelId = usize;

pub struct Session {
    device: Box<dyn Device>,
    pub spec: Spec,
    pub target: Target,
    build: BuildOptions,
    launch: Launch,
    buffers: Vec<Option<Buf>>,
    pub kernels: Vec<Prepared>,
    /// The baseline's outputs, once it ran (kernel 0).
    reference: Vec<Reference>,
    /// The one host buffer that buffers are generated in and read back into (as long as the
    /// largest buffer).
    staging: Vec<u8>,
    /// Whether the device compares buffers itself ([`Device::differ`]).
    on_device: bool,
    /// Launches timed back to back as one sample ([`Session::launches_per_sample`]).
    batch: u32,
    /// Why a short kernel is not batched ([`Session::batch_note`]).
    batch_note: Option<String>,
}

/// How much longer or shorter (as a factor) a launch on the outputs a launch left may take
/// than one on reset outputs (medians of [`BATCH_STATE_PAIRS`] pairs) before a short kernel is
/// not batched.
pub const BATCH_STATE_TOLERANCE: f64 = 1.25;
/// Pairs of launches (one on reset outputs, one on the outputs it left) whose medians decide
/// whether a short kernel's time depends on its outputs' state. One launch of a few
/// microseconds is timed with event jitter of up to 3x (on an H200 an 11 us kernel's per-pair
/// ratios ran from 0.62 to 2.90): with the least of three launches each way, gelu (which never
/// reads its outputs) was timed launch by launch in three of six runs (1.32-1.38x) and batched
/// in the others.
pub const BATCH_STATE_PAIRS: usize = 7;

/// A kernel whose warm launch takes less than this (milliseconds) is timed in batches of
/// back-to-back launches ([`auto_batch`]).
pub const AUTO_BATCH_BELOW_MS: f64 = 0.05;
/// What a batch of a short kernel's launches should take (milliseconds).
pub const AUTO_BATCH_TARGET_MS: f64 = 0.1;
/// The most launches [`auto_batch`] puts in a batch.
pub const AUTO_BATCH_MAX: u32 = 64;
/// How a session takes a sample, named for the tuner's settings fingerprint: it changes when
/// that way changes (here: short kernels timed as batches of back-to-back launches,
/// [`auto_batch`]), so that a tune never reuses decisions measured another way (an earlier
/// binary's launch-by-launch samples of an 8 us kernel).
pub const SAMPLING: &str = "auto-batch below 50 us, one event pair per batch";

/// Launches per sample for a kernel whose warm launch takes `ms` milliseconds: 1 from
/// [`AUTO_BATCH_BELOW_MS`] up; below, the power of two that makes a batch take at least
/// [`AUTO_BATCH_TARGET_MS`] (at most [`AUTO_BATCH_MAX`]). A launch of a few microseconds is
/// timed by GPU events whose jitter is a good part of it (an 8 us kernel: per-pair ratios of
/// 0.77-1.38 on an H200); a batch shares that jitter among its launches. Powers of two keep the
/// choice the same when the baseline's time moves a little between runs.
pub fn auto_batch(ms: f64) -> u32 {
    if !ms.is_finite() || ms >= AUTO_BATCH_BELOW_MS {
        return 1;
    }
    let need = (AUTO_BATCH_TARGET_MS / ms.max(1e-6)).ceil() as u32;
    need.next_power_of_two().clamp(1, AUTO_BATCH_MAX)
}

impl Session {
    /// Open the device, compile and check the spec's kernel from `baseline` (default: the
    /// spec's source), allocate and fill the buffers, and prepare the baseline.
    pub fn open(
        spec: Spec,
        baseline: Option<&Path>,
        opts: &Options,
    ) -> Result<Session, RunnerError> {
        let device = open_device(opts)?;
        Session::with_device(device, spec, baseline, opts)
    }

    /// [`Session::open`] on a device already opened.
    pub fn with_device(
        mut device: Box<dyn Device>,
        spec: Spec,
        baseline: Option<&Path>,
        opts: &Options,
    ) -> Result<Session, RunnerError> {
        let info = device.info().clone();
        let target = target_for(info.api, info.arch.as_deref(), opts.arch.as_deref())?;
        let source = baseline
            .map(Path::to_path_buf)
            .unwrap_or_else(|| spec.source.clone());
        let built = build(&spec, &source, &target, &opts.build)?;
        info.limits
            .check(
                spec.grid,
                spec.block,
                spec.shared_bytes,
                built.static_shared,
            )
            .map_err(|m| RunnerError::Invalid {
                path: spec.path.display().to_string(),
                message: format!("{m} ({})", info.name),
            })?;
        let largest = spec
            .args
            .iter()
            .filter_map(|a| match &a.kind {
                ArgKind::Buffer(b) => Some(b.bytes() as usize),
                ArgKind::Scalar { .. } => None,
            })
            .max()
            .unwrap_or(0);
        let mut staging = zeroed(&spec, largest, "the staging buffer")?;
        // Whether the device compares buffers itself (asked with nothing to compare).
        let on_device = matches!(device.differ(DevicePtr(0), DevicePtr(0), 0), Ok(Some(_)));
        let mut buffers = Vec::new();
        for (i, a) in spec.args.iter().enumerate() {
            let ArgKind::Buffer(b) = &a.kind else {
                buffers.push(None);
                continue;
            };
            let bytes = b.bytes() as usize;
            let file;
            let data: &[u8] = match &b.init {
                Init::Fill(f) => {
                    generate_into(b.elem, f, &mut staging[..bytes]);
                    &staging[..bytes]
                }
                Init::File(_) => {
                    file = contents(&spec, i)?;
                    &file
                }
            };
            let ptr = device.alloc(bytes)?;
            device.upload(ptr, data)?;
            let (pristine, initial) = match b.output {
                Some(_) => {
                    let p = device.alloc(bytes)?;
                    device.copy(p, ptr, bytes)?;
                    (Some(p), None)
                }
                None => (None, Some(crate::digest::fingerprint(data))),
            };
            let copy = match (b.output, on_device) {
                (None, true) => device_copy(device.as_mut(), ptr, bytes)?,
                _ => None,
            };
            buffers.push(Some(Buf {
                ptr,
                pristine,
                bytes,
                initial,
                copy,
            }));
        }
        let launch = Launch {
            grid: spec.grid,
            block: spec.block,
            shared_bytes: spec.shared_bytes,
        };
        let mut s = Session {
            device,
            spec,
            target,
            build: opts.build.clone(),
            launch,
            buffers,
            kernels: Vec::new(),
            reference: Vec::new(),
            staging,
            on_device,
            batch: 1,
            batch_note: None,
        };
        s.add(built)?;
        s.batch = match s.spec.launches_per_sample {
            Some(n) => n,
            None => s.choose_batch()?,
        };
        Ok(s)
    }

    /// [`auto_batch`] of the baseline's warm launches on reset outputs (the least of three; the
    /// output check's launch was the first, cold), unless a launch on its own outputs takes
    /// another time: a kernel whose work depends on what its outputs hold (a flag or counter it
    /// leaves set, a scan's tile states, an early-out on a filled buffer) is timed launch by
    /// launch, each on reset outputs, since within a batch the outputs are reset only once.
    /// That is decided on the medians of [`BATCH_STATE_PAIRS`] interleaved pairs (a launch on
    /// reset outputs, then one on the outputs it left), which one launch's jitter cannot move.
    fn choose_batch(&mut self) -> Result<u32, RunnerError> {
        let mut least = self.time(0, 1)?;
        // Twice the bound: a launch of a kernel just under it can take longer once (adamw,
        // 38 us, was batched in one run and not in the next on an H200); a long kernel is not
        // launched twice more to see.
        if least >= 2.0 * AUTO_BATCH_BELOW_MS {
            return Ok(1);
        }
        for _ in 0..2 {
            least = least.min(self.time(0, 1)?);
        }
        let batch = auto_batch(least);
        if batch == 1 {
            return Ok(1);
        }
        // As large as the largest output (a kernel this short writes little): kept for the
        // session's life (a device has no free).
        let largest = self
            .buffers
            .iter()
            .flatten()
            .filter(|b| b.pristine.is_some())
            .map(|b| b.bytes)
            .max();
        let scratch = largest.map(|n| self.device.alloc(n)).transpose()?;
        let mut fresh = Vec::with_capacity(BATCH_STATE_PAIRS);
        let mut again = Vec::with_capacity(BATCH_STATE_PAIRS);
        for _ in 0..BATCH_STATE_PAIRS {
            fresh.push(self.time(0, 1)?);
            // The outputs now hold that launch's results. Before its timed launch, as before
            // `time`'s, the same copies are queued, into a scratch buffer (the outputs stay as
            // they are): so that in both arms the GPU is busy when the launch is submitted. A
            // launch submitted to an idle GPU is timed with the host's submission gap in it: on
            // an H200 gelu (11 us, never reads its outputs) took 1.25-1.38x on its own outputs
            // that way and was batched in some runs and not in others.
            if scratch.is_some() {
                self.reset_copies(scratch)?;
            }
            again.push(self.launch(0, 1)?);
        }
        let ratio = samplestats::median(&again) / samplestats::median(&fresh);
        self.batch_note = if (1.0 / BATCH_STATE_TOLERANCE..=BATCH_STATE_TOLERANCE).contains(&ratio)
        {
            None
        } else {
            Some(format!(
                "timed launch by launch: a launch on its own outputs took {ratio:.2}x the time of one on reset outputs"
            ))
        };
        Ok(if self.batch_note.is_some() { 1 } else { batch })
    }

    /// Why a short kernel is timed launch by launch although [`auto_batch`] would batch it.
    pub fn batch_note(&self) -> Option<&str> {
        self.batch_note.as_deref()
    }

    /// Launches timed back to back as one [`Session::sample`]: the spec's
    /// `launches-per-sample`, else [`auto_batch`] of the baseline's warm launch.
    pub fn launches_per_sample(&self) -> u32 {
        self.batch
    }

    pub fn device(&self) -> &crate::device::DeviceInfo {
        self.device.info()
    }

    /// Compile `source` as a variant of the baseline, launch it once and compare its outputs
    /// with the baseline's: `OutputsDiffer` when any output is outside its tolerance.
    pub fn prepare(&mut self, source: &Path) -> Result<KernelId, RunnerError> {
        let id = self.prepare_unchecked(source)?;
        let diffs = self.differences(id);
        if !diffs.is_empty() {
            return Err(RunnerError::OutputsDiffer(diffs.to_vec()));
        }
        Ok(id)
    }

    /// Prepare without refusing differences (the caller reports them: [`Session::differences`]).
    pub fn prepare_unchecked(&mut self, source: &Path) -> Result<KernelId, RunnerError> {
        let built = build(&self.spec, source, &self.target, &self.build)?;
        self.add(built)
    }

    fn add(&mut self, built: Built) -> Result<KernelId, RunnerError> {
        if let (Some(need), Some(have)) = (
            built.ptx_cc,
            self.device.info().arch.as_deref().and_then(cc_of),
        ) {
            if need > have {
                return Err(RunnerError::Invalid {
                    path: built.object.display().to_string(),
                    message: format!(
                        "PTX for sm_{}{} cannot run on {} (sm_{}{}): compile for sm_{}{}",
                        need.0,
                        need.1,
                        self.device.info().name,
                        have.0,
                        have.1,
                        have.0,
                        have.1
                    ),
                });
            }
        }
        let offsets: Vec<u32> = built.signature.params.iter().map(|p| p.offset).collect();
        let arch = self.device.info().arch.clone();
        let handle = self.device.load(
            built.loadable(arch.as_deref()),
            &built.signature.symbol,
            &offsets,
            built.signature.kernarg_size,
        )?;
        self.kernels.push(Prepared {
            built,
            outputs: Vec::new(),
            differences: Vec::new(),
            handle,
        });
        let id = self.kernels.len() - 1;
        // One launch: the outputs checked are those of a single launch on reset outputs.
        self.time(id, 1)?;
        let (outputs, differences) = self.read_outputs()?;
        self.kernels[id].outputs = outputs;
        self.kernels[id].differences = differences;
        Ok(id)
    }

    /// One sample of kernel `id` on reset outputs: [`Session::launches_per_sample`] launches
    /// back to back, timed together; mean milliseconds of GPU time per launch.
    pub fn sample(&mut self, id: KernelId) -> Result<f64, RunnerError> {
        self.time(id, self.batch)
    }

    /// `count` launches of kernel `id` back to back on outputs reset once; mean milliseconds
    /// per launch.
    fn time(&mut self, id: KernelId, count: u32) -> Result<f64, RunnerError> {
        self.reset_copies(None)?;
        self.launch(id, count)
    }

    /// Each output's pristine copy queued onto the output (`into` `None`: the reset before a
    /// timed launch), or onto `into` (the same work, the outputs left as they are).
    fn reset_copies(&mut self, into: Option<DevicePtr>) -> Result<(), RunnerError> {
        for b in self.buffers.iter().flatten() {
            if let Some(p) = b.pristine {
                self.device.copy(into.unwrap_or(b.ptr), p, b.bytes)?;
            }
        }
        Ok(())
    }

    /// `count` launches of kernel `id` on the outputs as they are; mean milliseconds.
    fn launch(&mut self, id: KernelId, count: u32) -> Result<f64, RunnerError> {
        let args = self.args()?;
        let handle = self
            .kernels
            .get(id)
            .ok_or_else(|| RunnerError::Build(format!("no kernel {id} in the session")))?
            .handle;
        Ok(self
            .device
            .launch_timed(handle, &self.launch, &args, count)?)
    }

    fn args(&self) -> Result<Vec<Vec<u8>>, RunnerError> {
        Ok(self
            .spec
            .args
            .iter()
            .zip(&self.buffers)
            .map(|(a, b)| match (&a.kind, b) {
                (ArgKind::Scalar { bytes, .. }, _) => bytes.clone(),
                (ArgKind::Buffer(_), Some(b)) => b.ptr.0.to_le_bytes().to_vec(),
                (ArgKind::Buffer(_), None) => unreachable!("every buffer is allocated"),
            })
            .collect())
    }

    /// Read the outputs of the launch that just ran: the first kernel's become the reference
    /// (kept); every later kernel's are read into the staging buffer and checked against it.
    fn read_outputs(&mut self) -> Result<(Vec<Output>, Vec<OutputDiff>), RunnerError> {
        let first = self.kernels.len() == 1;
        let mut outputs = Vec::new();
        let mut differences = Vec::new();
        let mut reference = Vec::new();
        let mut copies = Vec::new();
        for (i, (a, b)) in self.spec.args.iter().zip(&self.buffers).enumerate() {
            let (ArgKind::Buffer(spec_b), Some(b)) = (&a.kind, b) else {
                continue;
            };
            let Some(tol) = spec_b.output else {
                continue;
            };
            let name = a.name.clone().unwrap_or_else(|| format!("arg{}", i + 1));
            let checksum = if first {
                let mut bytes = zeroed(&self.spec, b.bytes, "the baseline's outputs")?;
                self.device.download(b.ptr, &mut bytes)?;
                let digest = Digest::of(&bytes);
                let hex = digest.hex();
                reference.push(Reference {
                    arg: i,
                    bytes,
                    digest,
                });
                if self.on_device {
                    copies.push((i, device_copy(self.device.as_mut(), b.ptr, b.bytes)?));
                }
                hex
            } else {
                let r = self
                    .reference
                    .iter()
                    .find(|r| r.arg == i)
                    .expect("the baseline read every output");
                // The baseline's outputs to the bit, seen on the device: nothing to read back.
                if let Some(c) = b.copy {
                    if self.device.differ(b.ptr, c, b.bytes)? == Some(false) {
                        outputs.push(Output {
                            arg: i,
                            name,
                            checksum: r.digest.hex(),
                        });
                        continue;
                    }
                }
                let staged = &mut self.staging[..b.bytes];
                self.device.download(b.ptr, staged)?;
                let checked = crate::compare::check(spec_b.elem, &tol, &r.bytes, &r.digest, staged);
                if let Some(first) = checked.mismatch {
                    differences.push(OutputDiff {
                        name: name.clone(),
                        tolerance: tol,
                        first,
                    });
                }
                checked.digest.hex()
            };
            outputs.push(Output {
                arg: i,
                name,
                checksum,
            });
        }
        if first {
            self.reference = reference;
            for (i, c) in copies {
                if let Some(b) = self.buffers[i].as_mut() {
                    b.copy = c;
                }
            }
        }
        Ok((outputs, differences))
    }

    /// The outputs of kernel `id` outside their tolerance of the baseline's (kernel 0, whose
    /// outputs every kernel of the session is compared with); empty when they agree.
    pub fn differences(&self, id: KernelId) -> &[OutputDiff] {
        self.kernels
            .get(id)
            .map(|k| k.differences.as_slice())
            .unwrap_or(&[])
    }

    /// Every buffer that is not an output still holds its initial contents (read back into
    /// the staging buffer and compared by fingerprint).
    pub fn check_inputs(&mut self) -> Result<(), RunnerError> {
        for (i, (a, b)) in self.spec.args.iter().zip(&self.buffers).enumerate() {
            let (ArgKind::Buffer(_), Some(b)) = (&a.kind, b) else {
                continue;
            };
            let Some(initial) = b.initial else {
                continue;
            };
            let wrote = match b.copy {
                Some(c) => self.device.differ(b.ptr, c, b.bytes)?,
                None => None,
            };
            let wrote = match wrote {
                Some(w) => w,
                None => {
                    let staged = &mut self.staging[..b.bytes];
                    self.device.download(b.ptr, staged)?;
                    crate::digest::fingerprint(staged) != initial
                }
            };
            if wrote {
                return Err(RunnerError::WroteInput(format!(
                    "{}: the kernel wrote to {}, which is not marked as an output: mark it `output = ...` so that every launch starts from the same memory",
                    self.spec.path.display(),
                    a.label(i)
                )));
            }
        }
        Ok(())
    }

    /// The host memory the session holds, in bytes: the staging buffer, the baseline's outputs
    /// and their digests, and per kernel its code and what is kept of its outputs (an
    /// accounting of the session's own allocations, not of the process).
    pub fn host_bytes(&self) -> usize {
        let kernels: usize = self
            .kernels
            .iter()
            .map(|k| {
                std::mem::size_of::<Prepared>()
                    + k.built.image.capacity()
                    + k.built.cubin.as_ref().map_or(0, Vec::capacity)
                    + k.outputs
                        .iter()
                        .map(|o| {
                            std::mem::size_of::<Output>()
                                + o.name.capacity()
                                + o.checksum.capacity()
                        })
                        .sum::<usize>()
                    + k.differences
                        .iter()
                        .map(|d| {
                            std::mem::size_of::<OutputDiff>()
                                + d.name.capacity()
                                + d.first.baseline.capacity()
                                + d.first.variant.capacity()
                        })
                        .sum::<usize>()
            })
            .sum();
        let reference: usize = self
            .reference
            .iter()
            .map(|r| r.bytes.capacity() + r.digest.heap_bytes())
            .sum();
        self.staging.capacity() + reference + kernels
    }
}

/// A device copy of `bytes` at `ptr` for [`Device::differ`], where the device has the room:
/// after it, a quarter of its memory stays free (the buffers of other sessions and of the
/// kernels come first); `None` otherwise, and where the allocation fails.
fn device_copy(
    device: &mut dyn Device,
    ptr: DevicePtr,
    bytes: usize,
) -> Result<Option<DevicePtr>, RunnerError> {
    let Some((free, total)) = device.memory() else {
        return Ok(None);
    };
    if free < bytes as u64 + total / 4 {
        return Ok(None);
    }
    let Ok(copy) = device.alloc(bytes) else {
        return Ok(None);
    };
    device.copy(copy, ptr, bytes)?;
    Ok(Some(copy))
}

/// `n` zero bytes of host memory for `what`, or an error when the host cannot give them (asked
/// for first: a failed `vec!` would abort the process; the zeroed allocation then maps fresh
/// pages without writing them).
fn zeroed(spec: &Spec, n: usize, what: &str) -> Result<Vec<u8>, RunnerError> {
    Vec::<u8>::new()
        .try_reserve_exact(n)
        .map_err(|e| RunnerError::Invalid {
            path: spec.path.display().to_string(),
            message: format!("cannot allocate {n} bytes of host memory for {what}: {e}"),
        })?;
    Ok(vec![0u8; n])
}

/// `sm_86` -> (8, 6).
fn cc_of(arch: &str) -> Option<(u32, u32)> {
    let n: u32 = arch
        .strip_prefix("sm_")?
        .trim_end_matches(|c: char| c.is_ascii_alphabetic())
        .parse()
        .ok()?;
    Some((n / 10, n % 10))
}

/// The initial contents of buffer argument `i`.
pub fn contents(spec: &Spec, i: usize) -> Result<Vec<u8>, RunnerError> {
    let ArgKind::Buffer(b) = &spec.args[i].kind else {
        return Err(RunnerError::Build(format!(
            "argument {} is not a buffer",
            i + 1
        )));
    };
    match &b.init {
        Init::Fill(f) => Ok(crate::elem::generate(b.elem, b.length as usize, f)),
        Init::File(path) => {
            // A regular file (a device or a FIFO is refused) of exactly the buffer's size,
            // checked before it is read.
            let io = |e: fsio::Error| RunnerError::Io {
                path: path.display().to_string(),
                error: e.into_io(),
            };
            let len = fsio::regular(path).map_err(io)?.len();
            let data = if len == b.bytes() {
                fsio::read(path, b.bytes(), "this buffer").map_err(io)?
            } else {
                Vec::new()
            };
            if len != b.bytes() || data.len() as u64 != b.bytes() {
                return Err(RunnerError::Invalid {
                    path: spec.path.display().to_string(),
                    message: format!(
                        "{}: {} holds {} bytes, the buffer is {} x {} = {} bytes",
                        spec.args[i].label(i),
                        path.display(),
                        len,
                        b.length,
                        b.elem,
                        b.bytes()
                    ),
                });
            }
            Ok(data)
        }
    }
}
