//! `hip-unroll bench SPEC`: time one kernel in isolation on the machine's GPU (AMD through HIP,
//! NVIDIA through PTX, compiled by nvcc when there is one, for the GPU's own architecture unless
//! `--arch` says otherwise) from a launch spec, or `--compare` a variant against it on identical
//! inputs (a variant that compiles to the baseline's code is reported as such and not timed,
//! unless `--time-same-code`). Arguments and printing only; the work is the `runner` crate's.
//!
//! Exit status: 0 done (and, with `--compare`, the outputs agree), 1 the variant's outputs
//! differ from the baseline's, 2 bad spec, refused kernel, compile error, no GPU or driver,
//! launch error or timeout.

use codeobj::compile::default_cache_dir;
use runner::build::{build, BuildOptions, Built, Target, DEFAULT_CUDA_ARCH};
use runner::report::Report;
use runner::session::{Backend, Options, Session};
use runner::Spec;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum BackendArg {
    /// A HIP device if the machine has one, else a CUDA device.
    Auto,
    /// AMD GPUs through libamdhip64.
    Hip,
    /// NVIDIA GPUs through libcuda (the kernel compiled to PTX).
    Cuda,
}

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum Format {
    Human,
    Json,
}

#[derive(clap::Args)]
pub struct BenchArgs {
    /// The launch spec (TOML, `version = 1`).
    pub spec: PathBuf,
    /// Time this source instead of the spec's (with --compare: the variant compared with it).
    #[arg(long, value_name = "VARIANT.cu")]
    pub source: Option<PathBuf>,
    #[arg(long, value_enum, default_value_t = BackendArg::Auto)]
    pub backend: BackendArg,
    /// Compile target: gfx90a, gfx942... (AMD) or sm_80, sm_90... (NVIDIA) [default: the GPU's
    /// own; with --compile-only `[compile] arch`, else gfx90a and sm_80].
    #[arg(long, value_name = "ARCH")]
    pub arch: Option<String>,
    /// nvcc for NVIDIA targets [default: `[compile] nvcc` of hip-unroll.toml, `$CUDA_HOME/bin/nvcc`,
    /// `nvcc` on PATH; none: clang-19 with hip-unroll's prelude].
    #[arg(long, value_name = "PATH")]
    pub nvcc: Option<PathBuf>,
    /// Device ordinal.
    #[arg(long, default_value_t = 0)]
    pub device: i32,
    /// Timed launches (per kernel), 1 to 1000000.
    #[arg(long, default_value_t = 50)]
    pub iterations: u64,
    /// Untimed launches first (per kernel), at most 1000000.
    #[arg(long, default_value_t = 5)]
    pub warmup: u64,
    /// Seconds a launch (or the runtime's initialisation) may take before it is abandoned.
    #[arg(long, default_value_t = 10.0, value_name = "SECS")]
    pub timeout: f64,
    /// Time the spec's source and --source interleaved (A B, B A blocks) on identical inputs and diff
    /// their outputs with the spec's tolerances.
    #[arg(long, requires = "source")]
    pub compare: bool,
    /// With --compare: time the variant even when it compiles to the same code (PTX or code
    /// object) as the baseline, which makes the comparison an A/A measurement.
    #[arg(long, requires = "compare")]
    pub time_same_code: bool,
    /// Compile and check the spec against the kernel only (no GPU needed): fills the cache that
    /// a machine without the compiler reads with --cache-dir.
    #[arg(long)]
    pub compile_only: bool,
    /// Where compiled objects are cached [default: `[compile] cache-dir`, $HIP_UNROLL_CACHE_DIR,
    /// $XDG_CACHE_HOME/hip-unroll or ~/.cache/hip-unroll].
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
}

pub fn run(args: BenchArgs) -> anyhow::Result<ExitCode> {
    measure(args).map_err(|e| match e.downcast::<runner::RunnerError>() {
        Ok(e) => runner_hint(e),
        Err(e) => e,
    })
}

/// The flag of a runner setting.
fn flag(s: runner::error::Setting) -> &'static str {
    use runner::error::Setting;
    match s {
        Setting::Timeout => "--timeout",
        Setting::Iterations => "--iterations",
        Setting::Warmup => "--warmup",
        Setting::Arch => "--arch",
    }
}

/// A runner error as `bench` words it: the setting at fault named by its flag, the way to
/// bring a compiled object to a machine without the compiler.
fn runner_hint(e: runner::RunnerError) -> anyhow::Error {
    use runner::RunnerError;
    match e {
        RunnerError::Setting { setting, message } => {
            anyhow::anyhow!("{} {message}", flag(setting))
        }
        RunnerError::Compile(codeobj::compile::CompileError::CompilerMissing { .. }) => {
            anyhow::anyhow!(
                "{e} (there: `hip-unroll bench SPEC --compile-only --backend BACKEND --arch ARCH --cache-dir DIR`; here: `--cache-dir DIR`)"
            )
        }
        e => backend_hint(e),
    }
}

fn measure(args: BenchArgs) -> anyhow::Result<ExitCode> {
    let timeout = runner::session::timeout_from_secs(args.timeout)?;
    runner::session::check_counts(args.iterations, args.warmup)?;
    crate::files::require_file(&args.spec)?;
    let spec = Spec::load(&args.spec)?;
    // `[compile]` of the hip-unroll.toml found upward from the spec: `cache-dir`, `command`
    // (AMD), `nvcc`, `timeout`, and `arch` for --compile-only (a timed kernel is built for the
    // GPU it runs on unless --arch says otherwise).
    let compile = config::discover(&args.spec)?.config.compile;
    let cache_dir = args
        .cache_dir
        .clone()
        .or(compile.cache_dir.clone())
        .unwrap_or_else(default_cache_dir);
    let build_opts = BuildOptions::from_config(cache_dir, &compile, args.nvcc.as_deref())?;
    if args.compile_only {
        let arch = args.arch.clone().or(compile.arch.clone());
        return compile_only(&args, arch.as_deref(), &spec, &build_opts);
    }
    let opts = Options {
        backend: match args.backend {
            BackendArg::Auto => Backend::Auto,
            BackendArg::Hip => Backend::Hip,
            BackendArg::Cuda => Backend::Cuda,
        },
        arch: args.arch.clone(),
        device: args.device,
        timeout,
        build: build_opts,
    };
    let baseline = if args.compare {
        None
    } else {
        args.source.as_deref()
    };
    if let Some(s) = &args.source {
        crate::files::require_file(s)?;
    }
    let mut session = Session::open(spec, baseline, &opts).map_err(backend_hint)?;
    let mut same_code = None;
    if let (Some(v), true) = (&args.source, args.compare) {
        // Compiled (into the cache) before anything is launched: the same code is not timed.
        let built = build(&session.spec, v, &session.target, &opts.build)?;
        let same = built.same_code(&session.kernels[0].built);
        same_code = Some(same);
        if same && !args.time_same_code {
            return same_code_report(&args, &session, &built);
        }
    }
    let variant = match (&args.source, args.compare) {
        (Some(v), true) => Some(session.prepare_unchecked(v)?),
        _ => None,
    };
    let measured =
        runner::measure::interleaved(&mut session, 0, variant, args.warmup, args.iterations)?;
    let report = Report::measured(
        args.spec.display().to_string(),
        &session,
        &measured,
        args.iterations,
        args.warmup,
        same_code,
    );
    print_report(&args, &report)?;
    let diffs = measured.differences.as_ref();
    Ok(match diffs {
        Some(d) if !d.is_empty() => ExitCode::from(1),
        _ => ExitCode::SUCCESS,
    })
}

/// The report as JSON or text; the text's line on a variant that is the baseline's code says
/// what `--time-same-code` does.
fn print_report(args: &BenchArgs, report: &Report) -> anyhow::Result<()> {
    match args.format {
        Format::Json => crate::files::stdout(&(serde_json::to_string_pretty(report)? + "\n")),
        Format::Human => {
            let note = if report.ratio.is_some() {
                "timed as asked (--time-same-code): an A/A measurement"
            } else {
                "nothing timed (--time-same-code times it anyway)"
            };
            crate::files::stdout(&runner::report::human(report, note))
        }
    }
}

/// `--compare` of a variant that compiles to the baseline's code: says so, times nothing.
fn same_code_report(
    args: &BenchArgs,
    session: &Session,
    variant: &Built,
) -> anyhow::Result<ExitCode> {
    let report = Report::same_code(args.spec.display().to_string(), session, variant);
    print_report(args, &report)?;
    Ok(ExitCode::SUCCESS)
}

/// `--compile-only`: build (and check) for the chosen backend(s), without a GPU.
fn compile_only(
    args: &BenchArgs,
    arch: Option<&str>,
    spec: &Spec,
    opts: &BuildOptions,
) -> anyhow::Result<ExitCode> {
    let targets: Vec<Target> = match (args.backend, arch) {
        (BackendArg::Hip, a) => vec![Target::Hip(
            a.unwrap_or(codeobj::compile::DEFAULT_ARCH).to_string(),
        )],
        (BackendArg::Cuda, a) => vec![Target::Cuda(a.unwrap_or(DEFAULT_CUDA_ARCH).to_string())],
        (BackendArg::Auto, Some(a)) if a.starts_with("sm_") => vec![Target::Cuda(a.to_string())],
        (BackendArg::Auto, Some(a)) => vec![Target::Hip(a.to_string())],
        (BackendArg::Auto, None) => vec![
            Target::Hip(codeobj::compile::DEFAULT_ARCH.to_string()),
            Target::Cuda(DEFAULT_CUDA_ARCH.to_string()),
        ],
    };
    let mut sources = vec![spec.source.clone()];
    if let Some(v) = &args.source {
        crate::files::require_file(v)?;
        sources.push(v.clone());
    }
    let mut built: Vec<Built> = Vec::new();
    for t in &targets {
        for s in &sources {
            built.push(build(spec, s, t, opts)?);
        }
    }
    match args.format {
        Format::Json => crate::files::stdout(&(serde_json::to_string_pretty(&built)? + "\n"))?,
        Format::Human => crate::files::stdout(&runner::report::built_human(
            &built,
            sources.len() == 2,
            "the same code as the baseline's: `bench --compare` times nothing",
        ))?,
    }
    Ok(ExitCode::SUCCESS)
}

/// A runtime that cannot be loaded: the runner says what to install, the binary adds the flag
/// that picks the other backend.
fn backend_hint(e: runner::RunnerError) -> anyhow::Error {
    use runner::device::{Api, DeviceError};
    match e {
        runner::RunnerError::Device(DeviceError::NoRuntime(api, m)) => {
            let other = match api {
                Api::Hip => "cuda",
                Api::Cuda => "hip",
            };
            anyhow::anyhow!("{m} or use --backend {other}")
        }
        e => e.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::runner_hint;
    use runner::error::Setting;
    use runner::RunnerError;

    /// The runner's settings come back with `bench`'s flags, in the words `bench` always used.
    #[test]
    fn settings_are_named_by_their_flags() {
        let e = |setting, message: &str| {
            runner_hint(RunnerError::Setting {
                setting,
                message: message.into(),
            })
            .to_string()
        };
        assert_eq!(
            e(
                Setting::Arch,
                "sm_90 is an NVIDIA architecture, and the GPU is an AMD one"
            ),
            "--arch sm_90 is an NVIDIA architecture, and the GPU is an AMD one"
        );
        assert_eq!(
            e(Setting::Iterations, "must be 1 to 1000000 (got 0)"),
            "--iterations must be 1 to 1000000 (got 0)"
        );
        assert_eq!(e(Setting::Warmup, "x"), "--warmup x");
        assert_eq!(e(Setting::Timeout, "x"), "--timeout x");
        let missing = RunnerError::Compile(codeobj::compile::CompileError::CompilerMissing {
            program: "hipcc".into(),
            command: "hipcc --genco".into(),
            error: std::io::Error::from(std::io::ErrorKind::NotFound),
        });
        let m = runner_hint(missing).to_string();
        assert!(m.starts_with("hipcc is not installed here"), "{m}");
        assert!(
            m.contains("--compile-only") && m.contains("--cache-dir DIR"),
            "{m}"
        );
    }
}
