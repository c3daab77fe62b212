//! `hip-unroll tune`: the closed loop. Parses arguments into a `tuner::setup::Request` (with
//! the config found for the current directory), lets `tuner::setup` resolve and run it, draws
//! progress bars, installs the Ctrl-C handler, words the tuner's errors with the flag of the
//! setting at fault and prints the report.
//!
//! Exit status: 0 the loop finished (whatever it accepted); 2 usage, input, environment or
//! baseline errors (one line; an I/O error while applying says that every file was restored);
//! 3 a file was edited while tune ran (left as saved, nothing applied, the report printed);
//! 130 interrupted by Ctrl-C (nothing applied, the report so far printed, the ledger kept for
//! `--resume`). `-o REPORT` is checked before the search starts (see `files::output`).

use anyhow::Context;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tuner::search::{ApplyMode, Progress};
use tuner::setup::{BackendKind, ExecutorKind, ModeChoice, Origin, Request, Setting, SetupError};
use tuner::stats::PlanError;

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
    /// One self-contained page (inline SVG plots, no script), for `-o REPORT.html`.
    Html,
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
    /// Unroll factors to try, at most 16 factors of 1 to 1024, and `full` (`#pragma unroll`
    /// with no count, pragma mode only, on loops of constant trip count) [default: 2,4,8].
    #[arg(long, value_delimiter = ',', value_name = "N,...", value_parser = parse_factor)]
    pub factors: Option<Vec<u32>>,
    /// pragma inserts `#pragma unroll N`; manual replicates the body [default: both].
    #[arg(long, value_enum)]
    pub mode: Option<ModeArg>,
    /// Measure on these devices at once, one lane each: `all` (every visible GPU; they must be
    /// of one model) or ids `0,1,...`. A lane's commands get `HIP_VISIBLE_DEVICES` and
    /// `CUDA_VISIBLE_DEVICES` set to its id, and `{device}` in commands expands to it
    /// [default: one lane on the default device]. bench and replay lanes open their session
    /// on their own device; each replay lane is a `hip-unroll tune-worker` process of its own.
    #[arg(long, value_name = "LIST|all")]
    pub devices: Option<String>,
    /// Where lanes run: `local` (this machine) or `slurm` (one job step per lane:
    /// `srun --ntasks=1 --gres=gpu:1 --exclusive ARGS... hip-unroll tune-worker`; inside an
    /// allocation the steps run in it); every backend runs under either [default: `[tune]
    /// executor` or local].
    #[arg(long, value_enum)]
    pub executor: Option<ExecutorArg>,
    /// Slurm lanes (job steps) [default: `[tune.slurm] lanes` or 1].
    #[arg(long, value_name = "N")]
    pub lanes: Option<usize>,
    /// Extra srun argument for every lane (repeatable, after `[tune.slurm] args`), e.g.
    /// `--slurm-arg=--partition=gpu`.
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
    /// Define a macro, `NAME` or `NAME=VALUE` (repeatable): for the guards' view of every file
    /// and the gates' compile (it joins the compile flags).
    #[arg(short = 'D', value_name = "NAME[=VALUE]")]
    pub define: Vec<String>,
    /// Undefine a macro (repeatable): for the guards' view and the gates' compile.
    #[arg(short = 'U', value_name = "NAME")]
    pub undefine: Vec<String>,
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

/// One `--factors` value: a count of at least 1, or `full` (`tuner::report::FULL`).
fn parse_factor(s: &str) -> Result<u32, String> {
    if s == "full" {
        return Ok(tuner::report::FULL);
    }
    match s.parse::<u32>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!(
            "`{s}` is not an unroll factor: a whole number of at least 1, or `full`"
        )),
    }
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
            (Some(m), Some(f)) => format!(" {m} {}", tuner::report::factor_text(f)),
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

/// The flag of a setting, as the command line spells it.
fn flag(s: Setting) -> &'static str {
    match s {
        Setting::Build => "--build",
        Setting::Run => "--run",
        Setting::Check => "--check",
        Setting::Backend => "--backend",
        Setting::Spec => "--spec",
        Setting::Snapshot => "--snapshot",
        Setting::Source => "--source",
        Setting::TimeRegex => "--time-regex",
        Setting::Kernel => "--kernel",
        Setting::Factors => "--factors",
        Setting::Mode => "--mode",
        Setting::Jobs => "--jobs",
        Setting::MaxNoise => "--max-noise",
        Setting::Devices => "--devices",
        Setting::Executor => "--executor",
        Setting::Lanes => "--lanes",
        Setting::SlurmArgs => "--slurm-arg",
        Setting::Timeout => "--timeout",
        Setting::MinRuns => "--min-runs",
        Setting::MaxRuns => "--max-runs",
        Setting::Confidence => "--confidence",
        Setting::MinSpeedup => "--min-speedup",
        Setting::State => "--state",
        Setting::Resume => "--resume",
    }
}

/// A plan error with the flags of its settings.
fn plan_message(e: &PlanError) -> String {
    match e {
        PlanError::MinRuns => "--min-runs must be at least 1".into(),
        PlanError::TooManyRuns { setting, got } => format!(
            "{} must be at most {} pairs (got {got})",
            flag(*setting),
            tuner::stats::MAX_RUNS
        ),
        PlanError::MaxRuns { min, max } => {
            format!("--max-runs ({max}) must be at least --min-runs ({min})")
        }
        PlanError::Confidence(c) => {
            format!("--confidence must be between 0.5 and 1 (exclusive), got {c}")
        }
        PlanError::MinSpeedup(s) => {
            format!("--min-speedup must be a percentage from 0 to 1000, got {s}")
        }
        PlanError::TooFewRuns { max, alpha, best } => format!(
            "with --max-runs {max} no look can reach p <= {alpha:.2e} (the smallest exact signed-rank p-value of {max} pairs is {best:.2e}); raise --max-runs or lower --confidence"
        ),
    }
}

/// A setup error as the user reads it: the setting's flag, and a hint.
fn setup_message(e: &SetupError) -> String {
    match e {
        SetupError::NotForBackend {
            setting,
            origin,
            backend,
        } => {
            let f = flag(*setting);
            match (setting, origin) {
                (Setting::Check, Origin::Config) => format!(
                    "`check` in [tune] does not apply to the {backend} backend: it compares the kernel's outputs itself"
                ),
                (Setting::Build | Setting::Run | Setting::Check, _) => format!(
                    "{f} does not apply to the {backend} backend: it compiles, launches and checks the kernel itself"
                ),
                (Setting::Spec, _) => format!("{f} applies to the bench backend (--backend bench)"),
                (Setting::Snapshot | Setting::Source, _) => {
                    format!("{f} applies to the replay backend (--backend replay)")
                }
                (Setting::TimeRegex, _) => {
                    format!("{f} applies to the command backend; {backend} measures GPU time")
                }
                (Setting::Kernel, _) => format!(
                    "{f} selects kernels for the rocprofv3 backend; the {backend} backend times {}",
                    match backend {
                        BackendKind::Command => "the whole run",
                        BackendKind::Bench => "the spec's kernel",
                        _ => "the captured kernel",
                    }
                ),
                _ => format!("{f} does not apply to the {backend} backend"),
            }
        }
        SetupError::NotForExecutor { setting, executor } => match executor {
            ExecutorKind::Local => format!(
                "{} applies to --executor slurm (local lanes: --devices)",
                flag(*setting)
            ),
            ExecutorKind::Slurm => "--devices chooses local lanes; with --executor slurm Slurm gives each step its GPU (--lanes N)".into(),
        },
        SetupError::Missing { backend, .. } => match backend {
            BackendKind::Bench => "the bench backend needs --spec SPEC (or `spec` in the [tune] section of hip-unroll.toml)".into(),
            BackendKind::Replay => "the replay backend needs --snapshot DIR (or `snapshot` in the [tune] section of hip-unroll.toml)".into(),
            _ => "tune needs --build CMD and --run CMD (or `build` and `run` in the [tune] section of hip-unroll.toml)".into(),
        },
        SetupError::OutOfRange { setting, rule } => format!("{} {rule}", flag(*setting)),
        SetupError::Regex {
            setting,
            pattern,
            reason,
        } => format!("{}: `{pattern}` is not a regex: {reason}", flag(*setting)),
        SetupError::BadName { .. } | SetupError::NoSuchPath(_) => e.to_string(),
    }
}

/// A tuner error as the user reads it.
fn message(e: &tuner::Error) -> String {
    use tuner::Error as E;
    match e {
        E::Setup(s) => setup_message(s),
        E::Invalid { setting, rule } => format!("{}{rule}", flag(*setting)),
        E::Plan(p) => plan_message(p),
        E::NeedsSetting { message, fix } => match fix {
            Setting::Source => format!("{message}; pass --source FILE"),
            other => format!("{message}; pass {}", flag(*other)),
        },
        E::StateBusy { path } => format!(
            "another hip-unroll tune is using the state directory {path}; wait for it or choose another --state"
        ),
        E::Ledger { path, reason } => format!(
            "the ledger {path} is not a hip-unroll ledger or is corrupt ({reason}); move it away or choose another --state"
        ),
        E::DiskFull { path } => format!(
            "{path}: disk full (no space left on device); free some space, then run again (--resume continues)"
        ),
        E::LanesGone(m) => format!("{m}: --resume continues"),
        e => e.to_string(),
    }
}

pub fn run(args: TuneArgs) -> anyhow::Result<ExitCode> {
    if let Some(out) = &args.output {
        crate::files::check_output(out)?;
    }
    let found = config::discover(std::path::Path::new("."))?;
    let config_include_dirs = found
        .path
        .as_ref()
        .map_or_else(Vec::new, |p| config::include_dirs(&found.config, p));
    let root = std::env::current_dir().context("cannot read the current directory")?;
    let defines = crate::cli::check::defines(&args.define, &args.undefine)?;
    if let Some(f) = defines
        .flags()
        .iter()
        .find(|f| f.contains(char::is_whitespace))
    {
        anyhow::bail!("{} holds white space, which the gates' compile command (split on white space) cannot pass; define it in a header instead", &f[..2]);
    }
    let request = Request {
        paths: args.paths,
        build: args.build,
        run: args.run,
        check: args.check,
        backend: args.backend.map(|b| match b {
            BackendArg::Command => BackendKind::Command,
            BackendArg::Rocprofv3 => BackendKind::Rocprofv3,
            BackendArg::Bench => BackendKind::Bench,
            BackendArg::Replay => BackendKind::Replay,
        }),
        spec: args.spec,
        snapshot: args.snapshot,
        source: args.source,
        time_regex: args.time_regex,
        time_unit: args.time_unit,
        kernel: args.kernel,
        factors: args.factors,
        mode: args.mode.map(|m| match m {
            ModeArg::Pragma => ModeChoice::Pragma,
            ModeArg::Manual => ModeChoice::Manual,
            ModeArg::Both => ModeChoice::Both,
        }),
        devices: args.devices,
        executor: args.executor.map(|e| match e {
            ExecutorArg::Local => ExecutorKind::Local,
            ExecutorArg::Slurm => ExecutorKind::Slurm,
        }),
        lanes: args.lanes,
        slurm_args: args.slurm_args,
        jobs: args.jobs,
        min_speedup: args.min_speedup,
        confidence: args.confidence,
        min_runs: args.min_runs,
        max_runs: args.max_runs,
        max_noise: args.max_noise,
        timeout: args.timeout,
        state: args.state,
        resume: args.resume,
        apply: Some(if args.dry_run {
            ApplyMode::DryRun
        } else if args.diff {
            ApplyMode::Diff
        } else {
            ApplyMode::Write
        }),
        arch: args.arch,
        include: args.include,
        nvcc: args.nvcc,
        // `-D`/`-U` join the compile flags: the gates compile with them, the fingerprint holds
        // them, and the guards read the compile command's macros.
        compile_flags: args
            .compile_flags
            .into_iter()
            .chain(defines.flags())
            .collect(),
        skip_same_code: args.skip_same_code,
        config: found.config,
        config_include_dirs,
        program: std::env::current_exe().context("cannot find the hip-unroll binary")?,
        in_allocation: std::env::var_os("SLURM_JOB_ID").is_some(),
    };
    let tune = tuner::setup::resolve(request, &root).map_err(|e| anyhow::anyhow!(message(&e)))?;

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
    let bars = Bars::new();
    let result = tuner::setup::run(tune, &root, &stop, &bars);
    bars.bar.finish_and_clear();
    let outcome = result.map_err(|e| anyhow::anyhow!(message(&e)))?;
    let text = match args.format {
        FormatArg::Human => tuner::report::human(&outcome.report),
        FormatArg::Json => tuner::report::json(&outcome.report),
        FormatArg::Markdown => tuner::report::markdown(&outcome.report),
        FormatArg::Html => tuner::report::html(&outcome.report),
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

/// `hip-unroll tune-worker` (hidden): one process lane (a Slurm step, or a local replay lane),
/// serving the coordinator's tasks.
pub fn worker() -> anyhow::Result<ExitCode> {
    let stdin = std::io::BufReader::new(std::io::stdin());
    use tuner::executor::worker::{serve, Served};
    match serve(stdin, Box::new(std::io::stdout())).map_err(|e| anyhow::anyhow!(message(&e)))? {
        Served::Done => Ok(ExitCode::SUCCESS),
        // Its one line went to the coordinator, which prints it.
        Served::Refused(_) => Ok(ExitCode::from(2)),
    }
}
