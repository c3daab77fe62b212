//! `tune`'s setup: from what the user asked ([`Request`]: the command line's values and the
//! `[tune]`, `[tune.slurm]`, `[compile]` and `[vgpr-pressure]` sections of the config) to the
//! settings of the search, the backend's [`BackendSpec`] and where the lanes run ([`Tune`],
//! by [`resolve`]), then the tune itself ([`run`]): one backend built from the spec per local
//! lane thread (each bench lane on its own device), or the spec sent to every worker process
//! (each Slurm step; each local lane of a backend that
//! [`BackendSpec::needs_own_process`], one per `--devices` id).
//!
//! A value given on the command line wins over the config's. Errors say which setting is at
//! fault as data ([`SetupError`], [`Setting`], [`Origin`]): the binary names its flag.

use crate::backend::spec::{AnyBackend, BackendSpec, DEVICE_TIMEOUT};
use crate::backend::{Backend, LaneDevice};
use crate::error::Error;
use crate::executor::local::LocalLane;
use crate::executor::slurm::{DirectSettings, Launcher, SlurmSettings};
use crate::gates::Gates;
use crate::lane::Device;
use crate::search::{self, Progress, Tuned};
use crate::settings::{ApplyMode, Settings};
use crate::stats::Plan;
use pipeline::Mode;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

pub use crate::setting::{BackendKind, ExecutorKind, ModeChoice, Origin, Setting, SetupError};

/// What the user asked, before resolution: the command line's values (`None` or empty: not
/// given) and the config's sections.
#[derive(Debug, Clone, Default)]
pub struct Request {
    pub paths: Vec<PathBuf>,
    pub build: Option<String>,
    pub run: Option<String>,
    pub check: Option<String>,
    pub backend: Option<BackendKind>,
    /// bench: launch specs (files, directories, globs), relative to the working directory.
    pub spec: Vec<String>,
    pub snapshot: Option<PathBuf>,
    pub source: Option<PathBuf>,
    pub time_regex: Option<String>,
    pub time_unit: Option<String>,
    pub kernel: Option<String>,
    /// Unroll factors; [`crate::report::FULL`] (0) is `full`, `#pragma unroll` with no count.
    pub factors: Option<Vec<u32>>,
    pub mode: Option<ModeChoice>,
    pub devices: Option<String>,
    pub executor: Option<ExecutorKind>,
    pub lanes: Option<usize>,
    pub slurm_args: Vec<String>,
    pub jobs: Option<usize>,
    pub min_speedup: Option<f64>,
    pub confidence: Option<f64>,
    pub min_runs: Option<usize>,
    pub max_runs: Option<usize>,
    pub max_noise: Option<f64>,
    pub timeout: Option<u64>,
    pub state: Option<PathBuf>,
    pub resume: bool,
    pub apply: Option<ApplyMode>,
    pub arch: Option<String>,
    /// `-I DIR`.
    pub include: Vec<PathBuf>,
    pub nvcc: Option<PathBuf>,
    pub compile_flags: Vec<String>,
    pub skip_same_code: bool,
    /// The config found for the current directory (defaults where there is none).
    pub config: config::Config,
    /// The config file found (`None`: defaults): `[tune] specs` are relative to it.
    pub config_path: Option<PathBuf>,
    /// The include directories the config names ([`config::include_dirs`]).
    pub config_include_dirs: Vec<PathBuf>,
    /// The `hip-unroll` binary Slurm steps run.
    pub program: PathBuf,
    /// Whether this process runs inside a Slurm allocation.
    pub in_allocation: bool,
}

/// Where the lanes run.
#[derive(Debug, Clone)]
pub enum Lanes {
    /// Lanes on this machine: one per device, or one on the default device (`None`); threads,
    /// or `tune-worker` processes where the backend needs a process per lane.
    Local(Option<Vec<Device>>),
    /// Slurm job steps.
    Slurm(SlurmSettings),
}

/// A resolved tune: ready to [`run`].
#[derive(Debug, Clone)]
pub struct Tune {
    pub settings: Settings,
    pub backend: BackendSpec,
    pub lanes: Lanes,
    /// The fingerprint's fields (`settings.fingerprint` is their text), for what a lane's
    /// device adds to it.
    fingerprint: serde_json::Value,
    /// replay: the source the user named (relative to the tree once resolved); `None`: the one
    /// file of the tuned paths that defines the captured kernel.
    replay_source: Option<PathBuf>,
    /// The `hip-unroll` binary worker processes run (local lanes of a backend that needs a
    /// process per lane).
    program: PathBuf,
}

fn pick<T>(arg: Option<T>, cfg: Option<T>, default: T) -> T {
    arg.or(cfg).unwrap_or(default)
}

/// Which of a flag and a config value is given, and from where.
fn given<T>(arg: &Option<T>, cfg: &Option<T>) -> Option<Origin> {
    if arg.is_some() {
        Some(Origin::Given)
    } else if cfg.is_some() {
        Some(Origin::Config)
    } else {
        None
    }
}

fn regex(setting: Setting, pattern: Option<&str>) -> Result<Option<regex::Regex>, SetupError> {
    pattern
        .map(|p| {
            regex::Regex::new(p).map_err(|e| SetupError::Regex {
                setting,
                pattern: p.to_string(),
                reason: profiler::error::regex_reason(&e),
            })
        })
        .transpose()
}

fn absolute(p: &Path, cwd: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        cwd.join(p)
    }
}

/// Check `req` and resolve it against the config and the tree at `root` (the current
/// directory): the settings, the backend's spec and the lanes. Reads (and checks) the launch
/// spec or the snapshot; builds and writes nothing.
pub fn resolve(req: Request, root: &Path) -> Result<Tune, Error> {
    let tune_cfg = req.config.tune;
    let compile_cfg = req.config.compile;
    let pressure_cfg = req.config.vgpr_pressure;
    let slurm_cfg = tune_cfg.slurm.clone().unwrap_or_default();
    let backend = match req.backend {
        Some(b) => b,
        None => match tune_cfg.backend.as_deref() {
            None => BackendKind::Command,
            Some(name) => BackendKind::from_name(name).ok_or_else(|| SetupError::BadName {
                setting: Setting::Backend,
                value: name.to_string(),
                expected: "`command`, `rocprofv3`, `bench` or `replay`",
            })?,
        },
    };
    let not_for = |setting, origin| SetupError::NotForBackend {
        setting,
        origin,
        backend,
    };
    if backend.in_process() {
        for (setting, v) in [
            (Setting::Build, &req.build),
            (Setting::Run, &req.run),
            (Setting::Check, &req.check),
        ] {
            if v.is_some() {
                return Err(not_for(setting, Origin::Given).into());
            }
        }
        if tune_cfg.check.is_some() {
            return Err(not_for(Setting::Check, Origin::Config).into());
        }
    }
    let spec_origin = if !req.spec.is_empty() {
        Some(Origin::Given)
    } else if tune_cfg.spec.is_some() || tune_cfg.specs.is_some() {
        Some(Origin::Config)
    } else {
        None
    };
    if let (Some(o), true) = (spec_origin, backend != BackendKind::Bench) {
        return Err(not_for(Setting::Spec, o).into());
    }
    if backend != BackendKind::Replay {
        if let Some(o) = given(&req.snapshot, &tune_cfg.snapshot) {
            return Err(not_for(Setting::Snapshot, o).into());
        }
        if let Some(o) = given(&req.source, &tune_cfg.source) {
            return Err(not_for(Setting::Source, o).into());
        }
    }
    // The command line's specs win over the config's; `[tune] specs` are relative to the
    // config file, `spec` (one) to the working directory as before.
    let config_dir = req
        .config_path
        .as_deref()
        .and_then(Path::parent)
        .map(|d| absolute(d, root))
        .unwrap_or_else(|| root.to_path_buf());
    let specs: Vec<crate::specfiles::SpecPath> = if !req.spec.is_empty() {
        crate::specfiles::expand(&req.spec, root, root)
    } else if let Some(list) = &tune_cfg.specs {
        crate::specfiles::expand(list, &config_dir, root)
    } else if let Some(one) = &tune_cfg.spec {
        crate::specfiles::expand(&[one.display().to_string()], root, root)
    } else {
        Ok(Vec::new())
    }
    .map_err(|e| Error::Usage(e.to_string()))?;
    let spec = (!specs.is_empty()).then_some(());
    let snapshot = req.snapshot.or(tune_cfg.snapshot);
    let source = req.source.or(tune_cfg.source);
    if backend == BackendKind::Bench && spec.is_none() {
        return Err(SetupError::Missing {
            backend,
            needs: &[Setting::Spec],
        }
        .into());
    }
    if backend == BackendKind::Replay && snapshot.is_none() {
        return Err(SetupError::Missing {
            backend,
            needs: &[Setting::Snapshot],
        }
        .into());
    }
    let (build, run, check) = if backend.in_process() {
        (String::new(), String::new(), None)
    } else {
        let build = req.build.or(tune_cfg.build);
        let run = req.run.or(tune_cfg.run);
        let (Some(build), Some(run)) = (build, run) else {
            return Err(SetupError::Missing {
                backend,
                needs: &[Setting::Build, Setting::Run],
            }
            .into());
        };
        (build, run, req.check.or(tune_cfg.check))
    };
    let regex_origin = given(&req.time_regex, &tune_cfg.time_regex);
    let time_regex = req.time_regex.or(tune_cfg.time_regex);
    regex(Setting::TimeRegex, time_regex.as_deref())?;
    if let (Some(o), true) = (regex_origin, backend != BackendKind::Command) {
        return Err(not_for(Setting::TimeRegex, o).into());
    }
    let kernel_origin = given(&req.kernel, &tune_cfg.kernel);
    let kernel = req.kernel.or(tune_cfg.kernel);
    regex(Setting::Kernel, kernel.as_deref())?;
    if let (Some(o), true) = (kernel_origin, backend != BackendKind::Rocprofv3) {
        return Err(not_for(Setting::Kernel, o).into());
    }
    let mode = match req.mode {
        Some(m) => Some(m),
        None => match tune_cfg.mode.as_deref() {
            None => None,
            Some("pragma") => Some(ModeChoice::Pragma),
            Some("manual") => Some(ModeChoice::Manual),
            Some("both") => Some(ModeChoice::Both),
            Some(o) => {
                return Err(SetupError::BadName {
                    setting: Setting::Mode,
                    value: o.to_string(),
                    expected: "pragma, manual or both",
                }
                .into())
            }
        },
    };
    let modes = match mode {
        Some(ModeChoice::Pragma) => vec![Mode::Pragma],
        Some(ModeChoice::Manual) => vec![Mode::Manual],
        Some(ModeChoice::Both) | None => vec![Mode::Pragma, Mode::Manual],
    };
    let cfg_factors = match tune_cfg.factors {
        None => None,
        Some(list) => Some(
            list.into_iter()
                .map(|f| match f {
                    config::Factor::Count(n) if n >= 1 => Ok(n),
                    config::Factor::Count(_) => Err(SetupError::OutOfRange {
                        setting: Setting::Factors,
                        rule: "must list factors of at least 1 (or `full`)".into(),
                    }),
                    config::Factor::Full => Ok(crate::report::FULL),
                })
                .collect::<Result<Vec<u32>, SetupError>>()?,
        ),
    };
    // `full` is [`crate::report::FULL`] (0): `#pragma unroll` with no count.
    let factors = pick(req.factors, cfg_factors, vec![2, 4, 8]);
    if factors.is_empty() {
        return Err(SetupError::OutOfRange {
            setting: Setting::Factors,
            rule: "must list factors of at least 1 (or `full`)".into(),
        }
        .into());
    }
    let jobs = pick(
        req.jobs,
        tune_cfg.jobs,
        std::thread::available_parallelism().map_or(1, |n| n.get()),
    );
    if jobs < 1 {
        return Err(SetupError::OutOfRange {
            setting: Setting::Jobs,
            rule: "must be at least 1".into(),
        }
        .into());
    }
    let min_speedup = pick(req.min_speedup, tune_cfg.min_speedup, 2.0);
    let plan = Plan {
        min_runs: pick(
            req.min_runs,
            tune_cfg.min_runs,
            crate::stats::DEFAULT_MIN_RUNS,
        ),
        max_runs: pick(
            req.max_runs,
            tune_cfg.max_runs,
            crate::stats::DEFAULT_MAX_RUNS,
        ),
        step: crate::stats::DEFAULT_STEP,
        confidence: pick(
            req.confidence,
            tune_cfg.confidence,
            crate::stats::DEFAULT_CONFIDENCE,
        ),
        min_speedup: min_speedup / 100.0,
    };
    plan.validate()?;
    let max_noise = pick(req.max_noise, tune_cfg.max_noise, 20.0);
    if max_noise.is_nan() || max_noise <= 0.0 {
        return Err(SetupError::OutOfRange {
            setting: Setting::MaxNoise,
            rule: "must be a positive percentage".into(),
        }
        .into());
    }
    // 0 and more than a day are refused (the search checks it again).
    let timeout = Duration::from_secs(pick(req.timeout, tune_cfg.timeout, 600));
    crate::limits::check_timeout(timeout)?;
    let state = pick(req.state, tune_cfg.state, PathBuf::from(".hip-unroll"));
    let paths = if !req.paths.is_empty() {
        req.paths
    } else {
        tune_cfg.paths.unwrap_or_else(|| vec![PathBuf::from(".")])
    };
    for p in &paths {
        if !p.exists() {
            return Err(SetupError::NoSuchPath(p.clone()).into());
        }
    }
    // What the bench backend measures, read (and checked) before anything else: one spec must
    // load (a usage error otherwise); of several, one that does not fails alone (its kernel is
    // not tuned, the report's `specs` says why).
    if let [(_, p)] = specs.as_slice() {
        match fsio::regular(p) {
            Ok(_) => {}
            Err(fsio::Error::Io { path, err, .. }) => {
                return Err(Error::Io {
                    path: path.display().to_string(),
                    reason: fsio::reason(&err),
                })
            }
            Err(e) => return Err(e.into()),
        }
        runner::Spec::load(p).map_err(|e| Error::Usage(e.to_string()))?;
        fsio::read(p, fsio::TEXT_CAP, "a launch spec")?;
    }
    let snap = match &snapshot {
        Some(dir) => Some(crate::backend::replay::open_snapshot(dir)?),
        None => None,
    };
    // An architecture the user asked for, as against the default of the AMD gates.
    let explicit_arch = req.arch.clone().or(tune_cfg.arch.clone());
    let arch = explicit_arch
        .clone()
        .or_else(|| {
            snap.as_ref()
                .and_then(crate::backend::replay::captured_arch)
        })
        .or(compile_cfg.arch)
        .unwrap_or_else(|| codeobj::compile::DEFAULT_ARCH.to_string());
    let mut compile_command = compile_cfg
        .command
        .unwrap_or_else(|| codeobj::compile::DEFAULT_COMMAND.to_string());
    let mut flags = tune_cfg.compile_flags.unwrap_or_default();
    flags.extend(req.compile_flags);
    // `-I DIR`: for the analysis (the headers' helpers and macros) and for the gates' compile.
    flags.extend(req.include.iter().map(|d| format!("-I{}", d.display())));
    let include_dirs: Vec<PathBuf> = req
        .include
        .iter()
        .cloned()
        .chain(req.config_include_dirs)
        .collect();
    for f in &flags {
        compile_command.push(' ');
        compile_command.push_str(f);
    }
    let cache_dir = compile_cfg
        .cache_dir
        .unwrap_or_else(|| absolute(&state, root).join("objects"));
    // A compile of the gates: `[compile] timeout`, else the per-command time limit.
    let compile_timeout = compile_cfg.timeout.map_or(timeout, Duration::from_secs);
    // Unset: an occupancy loss is a prediction, measured; set (also to 0): a veto.
    let max_occupancy_loss = pressure_cfg.max_occupancy_loss;
    let time_unit = req.time_unit.or(tune_cfg.time_unit).unwrap_or_default();
    let skip_same_code = backend != BackendKind::Command || req.skip_same_code;
    let mut fingerprint = serde_json::json!({
        "build": build, "run": run, "check": check,
        "time_regex": time_regex, "time_unit": time_unit, "kernel": kernel,
        "min_runs": plan.min_runs, "max_runs": plan.max_runs, "step": plan.step,
        "confidence": plan.confidence, "min_speedup": plan.min_speedup,
        // The accept rule's version: a decision the rule would now take otherwise is not
        // reused (an accept whose pooled speedup misses the minimum).
        "rule": crate::stats::RULE,
        "max_noise": max_noise, "skip_same_code": skip_same_code, "arch": arch,
        "compile": compile_command,
        // `null` (measure) and a number (veto) give different keys: a decision gated under a
        // veto is never reused by a tune that measures, nor one measured by a tune that vetoes.
        "max_occupancy_loss": max_occupancy_loss,
        // The specs' contents are not here: each is in the keys of the decisions it judges
        // ([`crate::objective`]), so that adding a spec leaves the others' decisions standing.
        "spec": spec.map(|_| "per-spec"),
        "snapshot": snap.as_ref().map(crate::backend::replay::snapshot_fingerprint),
        "source": source,
    });
    // Include directories shape the verdicts; named only when there are some, so that the
    // decisions of earlier runs without them are still found.
    if !include_dirs.is_empty() {
        fingerprint["include_dirs"] = serde_json::json!(include_dirs);
    }
    let settings = Settings {
        paths,
        factors,
        modes,
        jobs,
        plan,
        max_noise: max_noise / 100.0,
        state_dir: state,
        resume: req.resume,
        gates: crate::gates::Gates {
            compiler: codeobj::compile::Compiler::new(compile_command, arch, cache_dir.clone())
                .with_timeout(compile_timeout),
            max_occupancy_loss,
            // A bench tune's, once its device is known (`BackendSpec::device_gates`).
            instances: Vec::new(),
        },
        apply: req.apply.unwrap_or(ApplyMode::Write),
        skip_same_code,
        fingerprint: fingerprint.to_string(),
        include_dirs,
    };
    let timeout_ms = timeout.as_millis() as u64;
    let backend_spec = match backend {
        BackendKind::Command => BackendSpec::Command {
            build,
            run,
            check,
            timeout_ms,
            time_regex,
            regex_unit: time_unit,
        },
        BackendKind::Rocprofv3 => BackendSpec::Rocprofv3 {
            build,
            run,
            check,
            timeout_ms,
            kernel_regex: kernel,
            // Known once the loops are discovered ([`run`]).
            path_kernels: Default::default(),
        },
        BackendKind::Bench => {
            let nvcc = runner::build::find_nvcc(req.nvcc.as_deref(), compile_cfg.nvcc.as_deref())
                .map_err(|e| Error::Usage(e.to_string()))?;
            BackendSpec::Bench {
                specs: specs.clone(),
                root: root.to_path_buf(),
                arch: explicit_arch,
                timeout_ms: timeout.min(DEVICE_TIMEOUT).as_millis() as u64,
                cache_dir,
                nvcc,
                gate_flags: flags,
            }
        }
        BackendKind::Replay => BackendSpec::Replay {
            snapshot: absolute(&snapshot.expect("checked above"), root),
            // Known once the loops are discovered ([`run`]), unless named.
            source: PathBuf::new(),
            timeout_ms: timeout.min(DEVICE_TIMEOUT).as_millis() as u64,
        },
    };
    let executor = match req.executor {
        Some(e) => e,
        None => match tune_cfg.executor.as_deref() {
            None | Some("local") => ExecutorKind::Local,
            Some("slurm") => ExecutorKind::Slurm,
            Some(o) => {
                return Err(SetupError::BadName {
                    setting: Setting::Executor,
                    value: o.to_string(),
                    expected: "`local` or `slurm`",
                }
                .into())
            }
        },
    };
    let lanes = match executor {
        ExecutorKind::Local => {
            // Only what the command line says is refused: the config's [tune.slurm] serves
            // the runs that choose Slurm.
            if req.lanes.is_some() {
                return Err(SetupError::NotForExecutor {
                    setting: Setting::Lanes,
                    executor,
                }
                .into());
            }
            if !req.slurm_args.is_empty() {
                return Err(SetupError::NotForExecutor {
                    setting: Setting::SlurmArgs,
                    executor,
                }
                .into());
            }
            Lanes::Local(match &req.devices {
                Some(list) => Some(crate::devices::local(list)?),
                None => None,
            })
        }
        ExecutorKind::Slurm => {
            if req.devices.is_some() {
                return Err(SetupError::NotForExecutor {
                    setting: Setting::Devices,
                    executor,
                }
                .into());
            }
            let lanes = pick(req.lanes, slurm_cfg.lanes, 1);
            if lanes == 0 || lanes > crate::limits::MAX_LANES {
                return Err(SetupError::OutOfRange {
                    setting: Setting::Lanes,
                    rule: format!("must be 1 to {}", crate::limits::MAX_LANES),
                }
                .into());
            }
            let mut args = slurm_cfg.args.unwrap_or_default();
            args.extend(req.slurm_args);
            Lanes::Slurm(SlurmSettings {
                lanes,
                args,
                program: req.program.clone(),
                srun: slurm_cfg.srun.unwrap_or_else(|| PathBuf::from("srun")),
                in_allocation: req.in_allocation,
            })
        }
    };
    Ok(Tune {
        settings,
        backend: backend_spec,
        lanes,
        fingerprint,
        replay_source: source,
        program: req.program,
    })
}

/// The device ordinal a local lane's backend opens: its id, 0 for the default lane.
fn ordinal(d: Option<&Device>) -> u32 {
    d.and_then(|d| d.id.as_deref())
        .and_then(|i| i.parse().ok())
        .unwrap_or(0)
}

/// One backend per local lane (`devices`; `None`: one lane on the default device), each built
/// from `spec` for its own device.
pub fn local_backends(
    spec: &BackendSpec,
    devices: Option<&[Device]>,
    gates: &Gates,
) -> Result<Vec<AnyBackend>, Error> {
    match devices {
        None => Ok(vec![spec.build(0, gates)?]),
        Some(ds) => ds
            .iter()
            .map(|d| spec.build(ordinal(Some(d)), gates))
            .collect(),
    }
}

/// Run a resolved tune over the tree at `root`.
pub fn run(
    mut tune: Tune,
    root: &Path,
    stop: &Arc<AtomicBool>,
    progress: &dyn Progress,
) -> Result<Tuned, Error> {
    crate::limits::check(&tune.settings)?;
    if let Lanes::Local(Some(ds)) = &tune.lanes {
        crate::devices::same_model(ds)?;
    }
    progress.phase("discovering loops");
    let disc = search::discover(&tune.settings, root)?;
    fsio::testpoint::hit("tuner.search.discovered");
    // What the backend learns from the loops: the kernels' names, the captured kernel's file.
    match &mut tune.backend {
        BackendSpec::Rocprofv3 { path_kernels, .. } => {
            *path_kernels = disc.kernels().map(|(_, k)| k.to_string()).collect();
        }
        BackendSpec::Replay {
            snapshot, source, ..
        } => {
            *source = match &tune.replay_source {
                Some(f) => crate::backend::replay::relative_to_tree(f, root)?,
                None => {
                    let snap = crate::backend::replay::open_snapshot(snapshot)?;
                    crate::backend::replay::find_source(&snap, &disc)?
                }
            };
        }
        _ => {}
    }
    match &tune.lanes {
        Lanes::Slurm(slurm) => search::tune_workers(
            &tune.backend,
            &Launcher::Srun(slurm.clone()),
            &tune.settings,
            root,
            disc,
            stop,
            progress,
        ),
        // One `tune-worker` process per device: nothing of the backend opens here.
        Lanes::Local(Some(devices)) if tune.backend.needs_own_process() => search::tune_workers(
            &tune.backend,
            &Launcher::Direct(DirectSettings {
                program: tune.program.clone(),
                devices: devices.clone(),
            }),
            &tune.settings,
            root,
            disc,
            stop,
            progress,
        ),
        Lanes::Local(devices) => {
            let backends = local_backends(&tune.backend, devices.as_deref(), &tune.settings.gates)?;
            // The first lane's device decides the gates of a bench kernel (one model).
            if let Some(first) = backends.first() {
                first.preflight()?;
                let (gates, extra) = tune.backend.device_gates(first, &tune.settings.gates)?;
                if let Some(extra) = extra {
                    tune.settings.gates = gates;
                    for (k, v) in extra {
                        tune.fingerprint[k] = v;
                    }
                    tune.settings.fingerprint = tune.fingerprint.to_string();
                }
            }
            let lanes: Vec<LocalLane<'_, AnyBackend>> = backends
                .iter()
                .enumerate()
                .map(|(i, b)| {
                    let d = devices.as_ref().and_then(|ds| ds.get(i));
                    LocalLane {
                        backend: b,
                        device: d.cloned().unwrap_or_else(|| Device::probe(None)),
                        lane: d
                            .and_then(|d| d.id.as_deref())
                            .map(LaneDevice::local)
                            .unwrap_or(LaneDevice::DEFAULT),
                    }
                })
                .collect();
            search::tune_lanes(&lanes, &tune.settings, root, disc, stop, progress)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gates() -> Gates {
        crate::executor::worker::CompileSpec {
            command: "true".into(),
            arch: "gfx90a".into(),
            cache_dir: "/nonexistent".into(),
            args: Vec::new(),
            timeout_ms: 1000,
            max_occupancy_loss: None,
        }
        .gates()
    }

    fn device(id: &str) -> Device {
        Device {
            model: "cpu".into(),
            id: Some(id.into()),
            host: "h".into(),
        }
    }

    #[test]
    fn each_bench_lane_opens_its_own_device() {
        let t = tempfile::tempdir().unwrap();
        std::fs::write(t.path().join("k.cu"), "__global__ void k(int* o) {}\n").unwrap();
        std::fs::write(
            t.path().join("k.toml"),
            "version = 1\nsource = \"k.cu\"\nkernel = \"k\"\ngrid = [1]\nblock = [1]\n\n[[args]]\nname = \"o\"\nbuffer = \"i32\"\nlength = 1\noutput = \"exact\"\n",
        )
        .unwrap();
        let spec = BackendSpec::Bench {
            specs: vec![("k.toml".into(), t.path().join("k.toml"))],
            root: t.path().to_path_buf(),
            arch: None,
            timeout_ms: 1000,
            cache_dir: t.path().join("objects"),
            nvcc: None,
            gate_flags: Vec::new(),
        };
        let devices = [device("0"), device("3")];
        let built = local_backends(&spec, Some(&devices), &gates()).unwrap();
        let opened: Vec<i32> = built
            .iter()
            .map(|b| match b {
                AnyBackend::Bench(b) => b.options().device,
                _ => panic!("a bench backend"),
            })
            .collect();
        assert_eq!(opened, [0, 3]);
        // One lane on the default device: device 0.
        let one = local_backends(&spec, None, &gates()).unwrap();
        assert!(matches!(&one[..], [AnyBackend::Bench(b)] if b.options().device == 0));
    }

    fn request(dir: &Path) -> Request {
        Request {
            build: Some("true".into()),
            run: Some("true".into()),
            paths: vec![dir.to_path_buf()],
            program: "/bin/hip-unroll".into(),
            ..Request::default()
        }
    }

    #[test]
    fn the_command_line_wins_over_tune_slurm() {
        let t = tempfile::tempdir().unwrap();
        let mut req = request(t.path());
        req.config.tune.executor = Some("slurm".into());
        req.config.tune.slurm = Some(config::SlurmSection {
            lanes: Some(3),
            args: Some(vec!["--partition=gpu".into()]),
            srun: Some("/opt/slurm/bin/srun".into()),
        });
        let Lanes::Slurm(s) = resolve(req.clone(), t.path()).unwrap().lanes else {
            panic!("slurm lanes from the config");
        };
        assert_eq!(s.lanes, 3);
        assert_eq!(s.args, ["--partition=gpu"]);
        assert_eq!(s.srun, Path::new("/opt/slurm/bin/srun"));
        req.lanes = Some(2);
        req.slurm_args = vec!["--qos=high".into()];
        let Lanes::Slurm(s) = resolve(req.clone(), t.path()).unwrap().lanes else {
            panic!("slurm lanes");
        };
        assert_eq!(s.lanes, 2);
        assert_eq!(s.args, ["--partition=gpu", "--qos=high"]);
        // The command line's executor wins: local lanes, the config's [tune.slurm] unused.
        req.lanes = None;
        req.slurm_args.clear();
        req.executor = Some(ExecutorKind::Local);
        assert!(matches!(
            resolve(req.clone(), t.path()).unwrap().lanes,
            Lanes::Local(None)
        ));
        req.lanes = Some(2);
        let e = resolve(req, t.path()).err().unwrap();
        assert!(matches!(
            e,
            Error::Setup(SetupError::NotForExecutor {
                setting: Setting::Lanes,
                executor: ExecutorKind::Local
            })
        ));
    }

    /// The occupancy policy is part of every decision's key: a tune that measures occupancy
    /// losses (unset) never reuses a decision gated under a veto (set, also to 0, as every
    /// tune before this policy was), nor the reverse.
    #[test]
    fn the_occupancy_policy_keys_the_decisions() {
        let t = tempfile::tempdir().unwrap();
        let fingerprint = |loss: Option<u32>| {
            let mut req = request(t.path());
            req.config.vgpr_pressure.max_occupancy_loss = loss;
            let tune = resolve(req, t.path()).unwrap();
            assert_eq!(tune.settings.gates.max_occupancy_loss, loss);
            let v: serde_json::Value = serde_json::from_str(&tune.settings.fingerprint).unwrap();
            (tune.settings.fingerprint, v["max_occupancy_loss"].clone())
        };
        let (measure, m) = fingerprint(None);
        let (veto0, v0) = fingerprint(Some(0));
        let (veto2, _) = fingerprint(Some(2));
        assert!(m.is_null(), "{measure}");
        assert_eq!(v0, serde_json::json!(0), "{veto0}");
        assert!(measure != veto0 && veto0 != veto2 && measure != veto2);
    }

    /// The decision rule's version is part of every decision's key: a decision an earlier rule
    /// took (an accept whose pooled speedup misses the minimum) is measured again.
    #[test]
    fn the_decision_rule_keys_the_decisions() {
        let t = tempfile::tempdir().unwrap();
        let tune = resolve(request(t.path()), t.path()).unwrap();
        let v: serde_json::Value = serde_json::from_str(&tune.settings.fingerprint).unwrap();
        assert_eq!(v["rule"], serde_json::json!(crate::stats::RULE));
    }

    #[test]
    fn specs_from_the_command_line_or_relative_to_the_config_file() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path();
        let spec = |kernel: &str| {
            format!("version = 1\nsource = \"../k.cu\"\nkernel = \"{kernel}\"\ngrid = [1]\nblock = [1]\n\n[[args]]\nname = \"o\"\nbuffer = \"i32\"\nlength = 1\noutput = \"exact\"\n")
        };
        std::fs::write(
            d.join("k.cu"),
            "__global__ void k(int* o) {}\n__global__ void j(int* o) {}\n",
        )
        .unwrap();
        std::fs::create_dir_all(d.join("conf/bench")).unwrap();
        std::fs::create_dir_all(d.join("bench")).unwrap();
        std::fs::write(d.join("bench/k.toml"), spec("k")).unwrap();
        std::fs::write(d.join("bench/j.toml"), spec("j")).unwrap();
        std::fs::write(
            d.join("conf/bench/k.toml"),
            spec("k").replace("../k.cu", "../../k.cu"),
        )
        .unwrap();
        let mut req = request(d);
        req.build = None;
        req.run = None;
        req.backend = Some(BackendKind::Bench);
        req.config_path = Some(d.join("conf/hip-unroll.toml"));
        req.config.tune.specs = Some(vec!["bench/*.toml".into()]);
        let names = |req: Request| match resolve(req, d).unwrap().backend {
            BackendSpec::Bench { specs, .. } => {
                specs.into_iter().map(|(n, _)| n).collect::<Vec<_>>()
            }
            _ => panic!("bench"),
        };
        // The config's patterns are relative to the config file's directory.
        assert_eq!(names(req.clone()), ["conf/bench/k.toml"]);
        // The command line wins; its patterns are relative to the working directory.
        req.spec = vec!["bench/*.toml".into()];
        assert_eq!(names(req.clone()), ["bench/j.toml", "bench/k.toml"]);
        req.spec = vec!["nothing/*.toml".into()];
        let e = resolve(req.clone(), d).err().unwrap().to_string();
        assert_eq!(e, "spec pattern `nothing/*.toml` matches no file");
        // A spec for another backend is a misfit, from wherever it comes.
        req.spec = Vec::new();
        req.backend = Some(BackendKind::Command);
        req.build = Some("true".into());
        req.run = Some("true".into());
        assert!(matches!(
            resolve(req, d).err().unwrap(),
            Error::Setup(SetupError::NotForBackend {
                setting: Setting::Spec,
                origin: Origin::Config,
                ..
            })
        ));
    }

    #[test]
    fn misfits_say_which_setting_and_from_where() {
        let t = tempfile::tempdir().unwrap();
        let mut req = request(t.path());
        req.backend = Some(BackendKind::Bench);
        let e = resolve(req.clone(), t.path()).err().unwrap();
        assert!(matches!(
            e,
            Error::Setup(SetupError::NotForBackend {
                setting: Setting::Build,
                origin: Origin::Given,
                backend: BackendKind::Bench
            })
        ));
        // Library messages name settings by their config key, never a flag.
        assert_eq!(e.to_string(), "`build` does not apply to the bench backend");
        req.build = None;
        req.run = None;
        req.config.tune.check = Some("true".into());
        assert!(matches!(
            resolve(req.clone(), t.path()).err().unwrap(),
            Error::Setup(SetupError::NotForBackend {
                setting: Setting::Check,
                origin: Origin::Config,
                ..
            })
        ));
        req.config.tune.check = None;
        assert_eq!(
            resolve(req, t.path()).err().unwrap().to_string(),
            "the bench backend needs `spec`"
        );
    }
}
