//! `hip-unroll tune`: the closed loop. Parses arguments (and the `[tune]` section of
//! `hip-unroll.toml`), draws progress bars, installs the Ctrl-C handler, runs `tuner::search`
//! with the chosen backend and prints the report.
//!
//! Exit status: 0 the loop finished (whatever it accepted); 2 usage, input, environment or
//! baseline errors (one line; an I/O error while applying says that every file was restored);
//! 3 a file was edited while tune ran (left as saved, nothing applied, the report printed);
//! 130 interrupted by Ctrl-C (nothing applied, the report so far printed, the ledger kept for
//! `--resume`). `-o REPORT` is checked before the search starts (see `files::output`).

use anyhow::{bail, Context};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tuner::backend::bench::BenchBackend;
use tuner::backend::command::{CommandBackend, Commands};
use tuner::backend::replay::{ReplayBackend, ReplaySettings};
use tuner::backend::rocprof::RocprofBackend;
use tuner::backend::Backend as _;
use tuner::search::{self, ApplyMode, Progress};
use tuner::stats::Plan;

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum BackendArg {
    /// Wall time of --run, or the number --time-regex finds in its output.
    Command,
    /// GPU time of the kernels, from rocprofv3 (needs ROCm and a GPU).
    Rocprofv3,
    /// One kernel launched alone from a launch spec (--spec), timed with GPU events, in us.
    Bench,
    /// A captured dispatch (--snapshot) replayed with each variant's code object, in ns.
    Replay,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExecutorArg {
    /// Lanes on this machine (`--devices`).
    Local,
    /// Lanes as Slurm job steps (`--lanes`, `--slurm-arg`).
    Slurm,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModeArg {
    Pragma,
    Manual,
    Both,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum FormatArg {
    Human,
    Json,
    Markdown,
}

#[derive(clap::Args, Debug)]
pub struct TuneArgs {
    /// Files or directories holding the loops that may change [default: `[tune] paths` or `.`].
    pub paths: Vec<PathBuf>,
    /// Build command (`sh -c`, run in a private working copy of the current directory;
    /// `{root}` and `{copy}` expand to the user's tree and the working copy, shell-quoted).
    #[arg(long, value_name = "CMD")]
    pub build: Option<String>,
    /// Run command: must exit 0; its wall time (or --time-regex) is the figure.
    #[arg(long, value_name = "CMD")]
    pub run: Option<String>,
    /// Check command after a run: must exit 0, else the variant is `check-failed`.
    #[arg(long, value_name = "CMD")]
    pub check: Option<String>,
    /// Measurement backend [default: command].
    #[arg(long, value_enum)]
    pub backend: Option<BackendArg>,
    /// bench: the launch spec (TOML) of the kernel to time; its source must lie in the tree.
    #[arg(long, value_name = "SPEC")]
    pub spec: Option<PathBuf>,
    /// replay: the snapshot directory (from `hip-unroll capture`).
    #[arg(long, value_name = "DIR")]
    pub snapshot: Option<PathBuf>,
    /// replay: the file that defines the captured kernel [default: the one file among PATHS
    /// that defines it].
    #[arg(long, value_name = "FILE")]
    pub source: Option<PathBuf>,
    /// The figure is the first capture group of this regex in the run's stdout or stderr.
    #[arg(long, value_name = "RE")]
    pub time_regex: Option<String>,
    /// Unit shown for --time-regex figures.
    #[arg(long, value_name = "UNIT")]
    pub time_unit: Option<String>,
    /// rocprofv3: the objective is the GPU time of kernels matching RE [default: the kernels
    /// defined in PATHS].
    #[arg(long, value_name = "RE")]
    pub kernel: Option<String>,
    /// Unroll factors to try, at most 16 factors of 1 to 1024 [default: 2,4,8].
    #[arg(long, value_delimiter = ',', value_name = "N,...")]
    pub factors: Option<Vec<u32>>,
    /// pragma inserts `#pragma unroll N`; manual replicates the body [default: both].
    #[arg(long, value_enum)]
    pub mode: Option<ModeArg>,
    /// Measure on these devices at once, one lane each: `all` (every visible GPU; they must be
    /// of one model) or ids `0,1,...`. A lane's commands get `HIP_VISIBLE_DEVICES` and
    /// `CUDA_VISIBLE_DEVICES` set to its id, and `{device}` in commands expands to it
    /// [default: one lane on the default device]. command and rocprofv3 backends.
    #[arg(long, value_name = "LIST|all")]
    pub devices: Option<String>,
    /// Where lanes run: `local` (this machine) or `slurm` (one job step per lane:
    /// `srun --ntasks=1 --gres=gpu:1 --exclusive ARGS... hip-unroll tune-worker`; inside an
    /// allocation the steps run in it). Slurm: command backend.
    #[arg(long, value_enum, default_value_t = ExecutorArg::Local)]
    pub executor: ExecutorArg,
    /// Slurm lanes (job steps) [default: 1].
    #[arg(long, value_name = "N")]
    pub lanes: Option<usize>,
    /// Extra srun argument for every lane (repeatable), e.g. `--slurm-arg=--partition=gpu`.
    #[arg(long = "slurm-arg", value_name = "ARG", allow_hyphen_values = true)]
    pub slurm_args: Vec<String>,
    /// Working copies prepared in parallel, 1 to 256 [default: the number of CPUs].
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,
    /// Smallest median improvement to accept, in percent [default: 2].
    #[arg(long, value_name = "PCT")]
    pub min_speedup: Option<f64>,
    /// Confidence of the test over all looks [default: 0.99].
    #[arg(long, value_name = "P")]
    pub confidence: Option<f64>,
    /// Interleaved pairs before the first decision, at most 10000 [default: 10].
    #[arg(long, value_name = "N")]
    pub min_runs: Option<usize>,
    /// Pairs at most per comparison, at most 10000 [default: 30].
    #[arg(long, value_name = "N")]
    pub max_runs: Option<usize>,
    /// Largest spread of the baseline repeats, in percent (A/A check) [default: 20].
    #[arg(long, value_name = "PCT")]
    pub max_noise: Option<f64>,
    /// Time limit of each build, run or check (and of each compile of the gates, unless
    /// `[compile] timeout` says otherwise), 1 to 86400 seconds [default: 600].
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<u64>,
    /// State directory: ledger, working copies, code objects [default: .hip-unroll].
    #[arg(long, value_name = "DIR")]
    pub state: Option<PathBuf>,
    /// Continue the last interrupted run of this tree with these settings.
    #[arg(long)]
    pub resume: bool,
    /// Write nothing to the user's files; report what would be applied.
    #[arg(long, conflicts_with = "diff")]
    pub dry_run: bool,
    /// Print the unified diff of the accepted edits instead of applying them.
    #[arg(long)]
    pub diff: bool,
    /// Target of the code-object gates and, with the bench backend, of the kernel's compile
    /// [default: the GPU's own with the bench backend, else `[compile] arch` or gfx90a].
    #[arg(long, value_name = "ARCH")]
    pub arch: Option<String>,
    /// Look for `#include "..."` in DIR too (repeatable; after the including file's own
    /// directory, before `[check] include-dirs` and the `-I` of `[compile]`/`[tune]`); also
    /// passed to the gates' compile.
    #[arg(short = 'I', value_name = "DIR")]
    pub include: Vec<PathBuf>,
    /// nvcc for NVIDIA targets [default: `[compile] nvcc`, `$CUDA_HOME/bin/nvcc`, `nvcc` on
    /// PATH; none: clang-19 with hip-unroll's prelude].
    #[arg(long, value_name = "PATH")]
    pub nvcc: Option<PathBuf>,
    /// Extra flag for the code-object compile of the gates (repeatable), e.g. `-Iinclude`.
    #[arg(long = "compile-flag", value_name = "FLAG", allow_hyphen_values = true)]
    pub compile_flags: Vec<String>,
    /// command: reject a variant whose machine code (the `.text` of every kernel of the file
    /// the gates compile) is byte-identical to the baseline's, with no run (`same-code`); say
    /// so only when the `[compile]` command matches the build. Always on for the other
    /// backends (what the gates compile is what runs).
    #[arg(long)]
    pub skip_same_code: bool,
    /// Report format.
    #[arg(long, value_enum, default_value_t = FormatArg::Human)]
    pub format: FormatArg,
    /// Write the report to this file (atomically) instead of stdout.
    #[arg(short = 'o', long = "output", value_name = "REPORT")]
    pub output: Option<PathBuf>,
}

/// Progress on stderr: one bar, hidden when stderr is not a terminal.
struct Bars {
    bar: indicatif::ProgressBar,
}

impl Bars {
    fn new() -> Bars {
        let bar = if std::io::stderr().is_terminal() {
            indicatif::ProgressBar::new_spinner()
        } else {
            indicatif::ProgressBar::hidden()
        };
        bar.enable_steady_tick(Duration::from_millis(120));
        Bars { bar }
    }
}

impl Progress for Bars {
    fn phase(&self, message: &str) {
        self.bar.set_style(
            indicatif::ProgressStyle::with_template("{spinner} {msg}").expect("valid template"),
        );
        self.bar.set_message(message.to_string());
    }

    fn measured(&self, done: usize, max: usize) {
        self.bar.set_style(
            indicatif::ProgressStyle::with_template(
                "{spinner} {msg} [{bar:30}] {pos}/{len} (stops when decided)",
            )
            .expect("valid template")
            .progress_chars("=> "),
        );
        self.bar.set_length(max as u64);
        self.bar.set_position(done as u64);
    }

    fn decided(&self, c: &tuner::report::Candidate) {
        let variant = match (&c.mode, c.factor) {
            (Some(m), Some(f)) => format!(" {m} x{f}"),
            _ => String::new(),
        };
        let speed = c.speedup.map(|s| format!(" {s:.3}x")).unwrap_or_default();
        self.bar.println(format!(
            "{}:{} {}{variant}: {}{speed}",
            c.file,
            c.line,
            c.loop_id,
            c.status.as_str()
        ));
    }
}

/// The backend's name as the command line spells it (clap's value name).
fn backend_name(b: BackendArg) -> String {
    use clap::ValueEnum;
    b.to_possible_value()
        .map_or_else(String::new, |v| v.get_name().to_string())
}

fn pick<T>(arg: Option<T>, cfg: Option<T>, default: T) -> T {
    arg.or(cfg).unwrap_or(default)
}

pub fn run(args: TuneArgs) -> anyhow::Result<ExitCode> {
    if let Some(out) = &args.output {
        crate::files::check_output(out)?;
    }
    let found = config::discover(std::path::Path::new("."))?;
    let config_dirs = found
        .path
        .as_ref()
        .map_or_else(Vec::new, |p| config::include_dirs(&found.config, p));
    let cfg = found.config;
    let (tune_cfg, compile_cfg, pressure_cfg) = (cfg.tune, cfg.compile, cfg.vgpr_pressure);
    let backend = match args.backend {
        Some(b) => b,
        None => match tune_cfg.backend.as_deref() {
            None => BackendArg::Command,
            Some(name) => match <BackendArg as clap::ValueEnum>::from_str(name, false) {
                Ok(b) => b,
                Err(_) => bail!(
                    "[tune] backend must be `command`, `rocprofv3`, `bench` or `replay`, not `{name}`"
                ),
            },
        },
    };
    // The bench and replay backends build and run the kernel themselves.
    let in_process = matches!(backend, BackendArg::Bench | BackendArg::Replay);
    let name = backend_name(backend);
    if in_process {
        for (flag, given) in [
            ("--build", args.build.is_some()),
            ("--run", args.run.is_some()),
            ("--check", args.check.is_some()),
        ] {
            if given {
                bail!("{flag} does not apply to the {name} backend: it compiles, launches and checks the kernel itself");
            }
        }
        if tune_cfg.check.is_some() {
            bail!("`check` in [tune] does not apply to the {name} backend: it compares the kernel's outputs itself");
        }
    }
    let spec = args.spec.or(tune_cfg.spec);
    let snapshot = args.snapshot.or(tune_cfg.snapshot);
    let source = args.source.or(tune_cfg.source);
    if spec.is_some() && backend != BackendArg::Bench {
        bail!("--spec applies to the bench backend (--backend bench)");
    }
    if backend != BackendArg::Replay {
        if snapshot.is_some() {
            bail!("--snapshot applies to the replay backend (--backend replay)");
        }
        if source.is_some() {
            bail!("--source applies to the replay backend (--backend replay)");
        }
    }
    if backend == BackendArg::Bench && spec.is_none() {
        bail!("the bench backend needs --spec SPEC (or `spec` in the [tune] section of hip-unroll.toml)");
    }
    if backend == BackendArg::Replay && snapshot.is_none() {
        bail!("the replay backend needs --snapshot DIR (or `snapshot` in the [tune] section of hip-unroll.toml)");
    }
    let (build, run, check) = if in_process {
        (String::new(), String::new(), None)
    } else {
        let build = args.build.or(tune_cfg.build);
        let run = args.run.or(tune_cfg.run);
        let (Some(build), Some(run)) = (build, run) else {
            bail!("tune needs --build CMD and --run CMD (or `build` and `run` in the [tune] section of hip-unroll.toml)");
        };
        (build, run, args.check.or(tune_cfg.check))
    };
    let time_regex = args.time_regex.or(tune_cfg.time_regex);
    let regex = time_regex
        .as_deref()
        .map(|r| crate::cli::regex_arg("--time-regex", r))
        .transpose()?;
    if backend != BackendArg::Command && regex.is_some() {
        bail!("--time-regex applies to the command backend; {name} measures GPU time");
    }
    let kernel = args.kernel.or(tune_cfg.kernel);
    let kernel_re = kernel
        .as_deref()
        .map(|r| crate::cli::regex_arg("--kernel", r))
        .transpose()?;
    if backend != BackendArg::Rocprofv3 && kernel_re.is_some() {
        bail!(
            "--kernel selects kernels for the rocprofv3 backend; the {name} backend times {}",
            match backend {
                BackendArg::Command => "the whole run",
                BackendArg::Bench => "the spec's kernel",
                _ => "the captured kernel",
            }
        );
    }
    let modes = match args.mode.or(match tune_cfg.mode.as_deref() {
        None => None,
        Some("pragma") => Some(ModeArg::Pragma),
        Some("manual") => Some(ModeArg::Manual),
        Some("both") => Some(ModeArg::Both),
        Some(o) => bail!("[tune] mode must be pragma, manual or both, not `{o}`"),
    }) {
        Some(ModeArg::Pragma) => vec![transforms::Mode::Pragma],
        Some(ModeArg::Manual) => vec![transforms::Mode::Manual],
        Some(ModeArg::Both) | None => vec![transforms::Mode::Pragma, transforms::Mode::Manual],
    };
    let factors = pick(args.factors, tune_cfg.factors, vec![2, 4, 8]);
    if factors.is_empty() || factors.iter().any(|&f| f < 1) {
        bail!("--factors must list factors of at least 1");
    }
    let jobs = pick(
        args.jobs,
        tune_cfg.jobs,
        std::thread::available_parallelism().map_or(1, |n| n.get()),
    );
    if jobs < 1 {
        bail!("--jobs must be at least 1");
    }
    let min_speedup = pick(args.min_speedup, tune_cfg.min_speedup, 2.0);
    let plan = Plan {
        min_runs: pick(
            args.min_runs,
            tune_cfg.min_runs,
            tuner::stats::DEFAULT_MIN_RUNS,
        ),
        max_runs: pick(
            args.max_runs,
            tune_cfg.max_runs,
            tuner::stats::DEFAULT_MAX_RUNS,
        ),
        step: tuner::stats::DEFAULT_STEP,
        confidence: pick(
            args.confidence,
            tune_cfg.confidence,
            tuner::stats::DEFAULT_CONFIDENCE,
        ),
        min_speedup: min_speedup / 100.0,
    };
    plan.validate()?;
    let max_noise = pick(args.max_noise, tune_cfg.max_noise, 20.0);
    if max_noise.is_nan() || max_noise <= 0.0 {
        bail!("--max-noise must be a positive percentage");
    }
    // 0 and more than a day are refused (the library checks it again).
    let timeout = Duration::from_secs(pick(args.timeout, tune_cfg.timeout, 600));
    tuner::limits::check_timeout(timeout)?;
    let state = pick(args.state, tune_cfg.state, PathBuf::from(".hip-unroll"));
    let paths = if !args.paths.is_empty() {
        args.paths
    } else {
        tune_cfg.paths.unwrap_or_else(|| vec![PathBuf::from(".")])
    };
    for p in &paths {
        if !p.exists() {
            bail!("{}: no such file or directory", p.display());
        }
    }
    // What the bench and replay backends measure, read (and checked) before anything else.
    let spec = match &spec {
        Some(p) => {
            crate::files::require_file(p)?;
            Some((
                runner::Spec::load(p)?,
                fsio::read(p, fsio::TEXT_CAP, "a launch spec")?,
            ))
        }
        None => None,
    };
    let snapshot = match &snapshot {
        Some(dir) => Some((dir.clone(), tuner::backend::replay::open_snapshot(dir)?)),
        None => None,
    };
    // An architecture the user asked for, as against the default of the AMD gates.
    let explicit_arch = args.arch.clone().or(tune_cfg.arch.clone());
    let arch = args
        .arch
        .or(tune_cfg.arch)
        .or_else(|| {
            snapshot
                .as_ref()
                .and_then(|(_, s)| tuner::backend::replay::captured_arch(s))
        })
        .or(compile_cfg.arch)
        .unwrap_or_else(|| codeobj::compile::DEFAULT_ARCH.to_string());
    let mut compile_command = compile_cfg
        .command
        .unwrap_or_else(|| codeobj::compile::DEFAULT_COMMAND.to_string());
    let mut flags = tune_cfg.compile_flags.unwrap_or_default();
    flags.extend(args.compile_flags);
    // `-I DIR`: for the analysis (the headers' helpers and macros) and for the gates' compile.
    flags.extend(args.include.iter().map(|d| format!("-I{}", d.display())));
    let include_dirs: Vec<PathBuf> = args.include.iter().cloned().chain(config_dirs).collect();
    for f in &flags {
        compile_command.push(' ');
        compile_command.push_str(f);
    }
    let cache_dir = compile_cfg.cache_dir.unwrap_or_else(|| {
        if state.is_absolute() {
            state.join("objects")
        } else {
            std::env::current_dir()
                .unwrap_or_default()
                .join(&state)
                .join("objects")
        }
    });
    // A compile of the gates: `[compile] timeout`, else --timeout.
    let compile_timeout = compile_cfg.timeout.map_or(timeout, Duration::from_secs);
    let thresholds = codeobj::judge::Thresholds {
        max_occupancy_loss: pressure_cfg.max_occupancy_loss.unwrap_or(0),
    };
    let time_unit = args.time_unit.or(tune_cfg.time_unit).unwrap_or_default();
    let mut fingerprint = serde_json::json!({
        "build": build, "run": run, "check": check,
        "time_regex": time_regex, "time_unit": time_unit, "kernel": kernel,
        "min_runs": plan.min_runs, "max_runs": plan.max_runs, "step": plan.step,
        "confidence": plan.confidence, "min_speedup": plan.min_speedup,
        "max_noise": max_noise, "skip_same_code": backend != BackendArg::Command || args.skip_same_code, "arch": arch, "compile": compile_command,
        "max_occupancy_loss": thresholds.max_occupancy_loss,
        "spec": spec.as_ref().map(|(_, bytes)| tuner::workcopy::hash_bytes(bytes)),
        "snapshot": snapshot.as_ref().map(|(_, s)| tuner::backend::replay::snapshot_fingerprint(s)),
        "source": source,
    });
    // Include directories shape the verdicts; named only when there are some, so that the
    // decisions of earlier runs without them are still found.
    if !include_dirs.is_empty() {
        fingerprint["include_dirs"] = serde_json::json!(include_dirs);
    }
    let mut settings = search::Settings {
        paths,
        factors,
        modes,
        jobs,
        plan,
        max_noise: max_noise / 100.0,
        state_dir: state,
        resume: args.resume,
        gates: tuner::gates::Gates {
            compiler: codeobj::compile::Compiler::new(
                compile_command.clone(),
                arch.clone(),
                cache_dir.clone(),
            )
            .with_timeout(compile_timeout),
            thresholds,
        },
        apply: if args.dry_run {
            ApplyMode::DryRun
        } else if args.diff {
            ApplyMode::Diff
        } else {
            ApplyMode::Write
        },
        skip_same_code: backend != BackendArg::Command || args.skip_same_code,
        fingerprint: fingerprint.to_string(),
        include_dirs,
    };
    let commands = Commands {
        build,
        run,
        check,
        timeout,
    };

    let stop = Arc::new(AtomicBool::new(false));
    {
        let stop = stop.clone();
        // A second Ctrl-C ends at once: user files are only ever replaced whole, the ledger is
        // transactional.
        let _ = ctrlc::set_handler(move || {
            if stop.swap(true, Ordering::SeqCst) {
                std::process::exit(130);
            }
        });
    }
    let slurm = match args.executor {
        ExecutorArg::Local => {
            if args.lanes.is_some() || !args.slurm_args.is_empty() {
                bail!("--lanes and --slurm-arg apply to --executor slurm (local lanes: --devices)");
            }
            None
        }
        ExecutorArg::Slurm => {
            if backend != BackendArg::Command {
                bail!("--executor slurm runs the command backend; the {name} backend runs on this machine (--devices)");
            }
            if args.devices.is_some() {
                bail!("--devices chooses local lanes; with --executor slurm Slurm gives each step its GPU (--lanes N)");
            }
            let lanes = args.lanes.unwrap_or(1);
            if lanes == 0 || lanes > tuner::limits::MAX_LANES {
                bail!("--lanes must be 1 to {}", tuner::limits::MAX_LANES);
            }
            Some(tuner::executor::slurm::SlurmSettings {
                lanes,
                args: args.slurm_args.clone(),
                program: std::env::current_exe().context("cannot find the hip-unroll binary")?,
                srun: PathBuf::from("srun"),
                in_allocation: std::env::var_os("SLURM_JOB_ID").is_some(),
            })
        }
    };
    let devices = match &args.devices {
        Some(spec) => {
            if matches!(backend, BackendArg::Bench | BackendArg::Replay) {
                bail!("--devices applies to the command and rocprofv3 backends; the {name} backend measures on one device");
            }
            Some(tuner::devices::local(spec)?)
        }
        None => None,
    };
    let bars = Bars::new();
    let root = std::env::current_dir().context("cannot read the current directory")?;
    let result = match backend {
        BackendArg::Command => {
            let b = CommandBackend {
                commands,
                time_regex: regex,
                regex_unit: time_unit,
            };
            match &slurm {
                Some(s) => search::tune_slurm(&b, s, &settings, &root, &stop, &bars),
                None => {
                    search::tune_on(&b, devices.as_deref(), &settings, &root, None, &stop, &bars)
                }
            }
        }
        BackendArg::Rocprofv3 => {
            // Discovered once: the backend needs the kernel names, the search the loops.
            bars.phase("discovering loops");
            let disc = search::discover(&settings, &root)?;
            let kernels = disc
                .kernels()
                .map(|(_, k)| k.to_string())
                .collect::<std::collections::BTreeSet<_>>();
            let b = RocprofBackend::new(commands, kernel_re, kernels);
            search::tune_on(
                &b,
                devices.as_deref(),
                &settings,
                &root,
                Some(disc),
                &stop,
                &bars,
            )
        }
        BackendArg::Bench => {
            let (spec, _) = spec.expect("checked above");
            let nvcc = runner::build::find_nvcc(args.nvcc.as_deref(), compile_cfg.nvcc.as_deref())?;
            let build = runner::build::BuildOptions::new(&cache_dir).with_nvcc(nvcc.clone());
            let options = runner::Options {
                backend: runner::Backend::Auto,
                // The device decides, unless --arch (or [tune] arch) says otherwise.
                arch: explicit_arch.clone(),
                device: 0,
                // Bounds the runtime's start and every launch (--timeout is per build or run).
                timeout: timeout.min(Duration::from_secs(60)),
                build: build.clone(),
            };
            let spec_args = runner::build::spec_args(&spec);
            let b = BenchBackend::new(spec, &root, options)?;
            b.preflight()?;
            let target = b.target()?;
            let identity = match &target {
                runner::build::Target::Cuda(arch) => {
                    // The gates compile cubins with nvcc and read their registers and spills;
                    // without nvcc they are skipped (or served by a carried cache).
                    let mut gate_args = flags.clone();
                    gate_args.extend(spec_args);
                    let program = nvcc.clone().unwrap_or_else(|| PathBuf::from("nvcc"));
                    settings.gates.compiler =
                        runner::build::nvcc_compiler(&program, arch, &cache_dir, true, gate_args)?;
                    runner::build::cuda_identity(&build, arch)
                }
                runner::build::Target::Hip(arch) => {
                    if explicit_arch.is_none() {
                        settings.gates.compiler.arch = arch.clone();
                    }
                    settings.gates.compiler.identity().ok()
                }
            };
            fingerprint["target"] = serde_json::json!(target);
            fingerprint["gates"] = serde_json::json!(settings.gates.compiler.key_words());
            fingerprint["compiler"] = serde_json::json!(identity);
            settings.fingerprint = fingerprint.to_string();
            search::tune(&b, &settings, &root, &stop, &bars)
        }
        BackendArg::Replay => {
            let (dir, snap) = snapshot.expect("checked above");
            // Discovered once: the backend may need the file defining the kernel, the search
            // the loops.
            bars.phase("discovering loops");
            let disc = search::discover(&settings, &root)?;
            let rel = match &source {
                Some(f) => tuner::backend::replay::relative_to_tree(f, &root)?,
                None => tuner::backend::replay::find_source(&snap, &disc)?,
            };
            drop(snap);
            let b = ReplayBackend::new(
                ReplaySettings {
                    snapshot: dir,
                    options: replay::device::Options {
                        timeout: timeout.min(Duration::from_secs(60)),
                        runtime_library: None,
                        allow_missing_regions: false,
                    },
                    compiler: settings.gates.compiler.clone(),
                    float_regions: Vec::new(),
                    tolerance: Default::default(),
                },
                rel,
            );
            search::tune_discovered(&b, &settings, &root, disc, &stop, &bars)
        }
    };
    bars.bar.finish_and_clear();
    let outcome = result.map_err(|e| anyhow::anyhow!("{e}"))?;
    let text = match args.format {
        FormatArg::Human => tuner::report::human(&outcome.report),
        FormatArg::Json => tuner::report::json(&outcome.report),
        FormatArg::Markdown => tuner::report::markdown(&outcome.report),
    };
    match (&outcome.diff, &args.output) {
        (_, Some(out)) => crate::files::output(out, text.as_bytes())?,
        (Some(_), None) => eprint!("{text}"),
        (None, None) => crate::files::stdout(&text)?,
    }
    if let Some(d) = &outcome.diff {
        crate::files::stdout(d)?;
    }
    Ok(if outcome.interrupted {
        ExitCode::from(130)
    } else if !outcome.report.edited.is_empty() {
        ExitCode::from(crate::files::EXIT_EDITED)
    } else {
        ExitCode::SUCCESS
    })
}

/// `hip-unroll tune-worker` (hidden): one Slurm lane, serving the coordinator's tasks.
pub fn worker() -> anyhow::Result<ExitCode> {
    let stdin = std::io::BufReader::new(std::io::stdin());
    tuner::executor::worker::serve(stdin, Box::new(std::io::stdout()))
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(ExitCode::SUCCESS)
}
