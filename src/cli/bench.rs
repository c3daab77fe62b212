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
use runner::session::{Backend, Options, OutputDiff, Session};
use runner::stats::{summarize, Summary};
use runner::Spec;
use serde::Serialize;
use std::fmt::Write;
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
    /// Time the spec's source and --source interleaved (A B A B) on identical inputs and diff
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

#[derive(Serialize)]
struct KernelReport<'a> {
    role: &'static str,
    source: String,
    symbol: &'a str,
    demangled: Option<&'a str>,
    object: String,
    cached: bool,
    precompiled: bool,
    /// `nvcc (PATH)` or `clang++-19 ...` for NVIDIA targets.
    compiler: Option<String>,
    samples_ms: Vec<f64>,
    /// `null` when nothing was timed (the variant is the same code).
    summary: Option<Summary>,
    outputs: Vec<OutputSum<'a>>,
}

#[derive(Serialize)]
struct OutputSum<'a> {
    name: &'a str,
    blake3: &'a str,
}

#[derive(Serialize)]
struct Report<'a> {
    spec: String,
    device: &'a runner::device::DeviceInfo,
    target: &'a Target,
    iterations: u64,
    warmup: u64,
    kernels: Vec<KernelReport<'a>>,
    /// Variant median / baseline median (with --compare).
    ratio: Option<f64>,
    /// Outputs of the variant outside their tolerance (with --compare; empty: they agree).
    differences: Option<&'a [OutputDiff]>,
    /// With --compare: whether the variant compiles to the baseline's code (PTX without its
    /// comments, or the code object's bytes); then nothing is timed unless --time-same-code.
    same_code: Option<bool>,
}

pub fn run(args: BenchArgs) -> anyhow::Result<ExitCode> {
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
    let ids: Vec<usize> = std::iter::once(0).chain(variant).collect();
    for _ in 0..args.warmup {
        for &k in &ids {
            session.sample(k)?;
        }
    }
    let mut samples: Vec<Vec<f64>> = vec![Vec::new(); ids.len()];
    for _ in 0..args.iterations {
        for (slot, &k) in ids.iter().enumerate() {
            samples[slot].push(session.sample(k)?);
        }
    }
    session.check_inputs()?;
    let diffs = variant.map(|v| session.compare(0, v));
    let summaries: Vec<Summary> = samples
        .iter()
        .map(|s| summarize(s).expect("at least one iteration"))
        .collect();
    let ratio = (summaries.len() == 2).then(|| summaries[1].median / summaries[0].median);
    let kernels: Vec<KernelReport> = session
        .kernels
        .iter()
        .zip(samples)
        .zip(&summaries)
        .enumerate()
        .map(|(i, ((k, s), sum))| KernelReport {
            role: if ids.len() == 2 && i == 1 {
                "variant"
            } else {
                "baseline"
            },
            source: k.built.source.display().to_string(),
            symbol: &k.built.signature.symbol,
            demangled: k.built.signature.demangled.as_deref(),
            object: k.built.object.display().to_string(),
            cached: k.built.cached,
            precompiled: k.built.precompiled,
            compiler: k.built.compiler.as_ref().map(|c| c.to_string()),
            samples_ms: s,
            summary: Some(sum.clone()),
            outputs: k
                .outputs
                .iter()
                .map(|o| OutputSum {
                    name: &o.name,
                    blake3: &o.checksum,
                })
                .collect(),
        })
        .collect();
    let report = Report {
        spec: args.spec.display().to_string(),
        device: session.device(),
        target: &session.target,
        iterations: args.iterations,
        warmup: args.warmup,
        kernels,
        ratio,
        differences: diffs.as_deref(),
        same_code,
    };
    match args.format {
        Format::Json => crate::files::stdout(&(serde_json::to_string_pretty(&report)? + "\n"))?,
        Format::Human => crate::files::stdout(&human(&report))?,
    }
    Ok(match diffs {
        Some(d) if !d.is_empty() => ExitCode::from(1),
        _ => ExitCode::SUCCESS,
    })
}

fn human(r: &Report) -> String {
    let mut out = String::new();
    let d = r.device;
    let _ = writeln!(
        out,
        "device   {} ({} #{}, {})",
        d.name,
        d.api,
        d.ordinal,
        d.arch.as_deref().unwrap_or("?")
    );
    let _ = writeln!(
        out,
        "target   {:?}; {} timed launches after {} warm-up, per kernel",
        r.target, r.iterations, r.warmup
    );
    for k in &r.kernels {
        let _ = writeln!(
            out,
            "{:<8} {} ({}{})",
            k.role,
            k.source,
            origin(k.precompiled, k.cached),
            k.compiler
                .as_deref()
                .map(|c| format!(" by {c}"))
                .unwrap_or_default()
        );
        let _ = writeln!(out, "         kernel {}", k.demangled.unwrap_or(k.symbol));
        let Some(s) = &k.summary else {
            continue;
        };
        let _ = writeln!(
            out,
            "         median {:.4} ms  q1 {:.4}  q3 {:.4}  MAD {:.4} ({:.2}%)  min {:.4}  max {:.4}  n {}",
            s.median, s.q1, s.q3, s.mad, s.rel_spread * 100.0, s.min, s.max, s.n
        );
        let shown: Vec<String> = k.samples_ms.iter().map(|x| format!("{x:.4}")).collect();
        let _ = writeln!(out, "         samples (ms) {}", shown.join(" "));
        for o in &k.outputs {
            let _ = writeln!(out, "         output {} blake3 {}", o.name, o.blake3);
        }
    }
    if r.same_code == Some(true) {
        let what = match r.target {
            Target::Cuda(_) => "PTX",
            Target::Hip(_) => "code object",
        };
        let timed = if r.ratio.is_some() {
            "timed as asked (--time-same-code): an A/A measurement"
        } else {
            "nothing timed (--time-same-code times it anyway)"
        };
        let _ = writeln!(
            out,
            "same     the variant compiles to the same {what} as the baseline: {timed}"
        );
    }
    if let Some(ratio) = r.ratio {
        let _ = writeln!(out, "ratio    variant / baseline median = {ratio:.4}");
    }
    match r.differences {
        Some([]) => {
            let _ = writeln!(out, "outputs  agree within the spec's tolerances");
        }
        Some(diffs) => {
            for d in diffs {
                let _ = writeln!(out, "DIFFERS  {d} (max |diff| {:e})", d.first.max_abs_diff);
            }
        }
        None => {}
    }
    out
}

fn origin(precompiled: bool, cached: bool) -> &'static str {
    if precompiled {
        "precompiled"
    } else if cached {
        "cached"
    } else {
        "compiled"
    }
}

/// `--compare` of a variant that compiles to the baseline's code: says so, times nothing.
fn same_code_report(
    args: &BenchArgs,
    session: &Session,
    variant: &Built,
) -> anyhow::Result<ExitCode> {
    let kernel = |role: &'static str, b: &'_ Built| KernelReport {
        role,
        source: b.source.display().to_string(),
        symbol: "",
        demangled: None,
        object: b.object.display().to_string(),
        cached: b.cached,
        precompiled: b.precompiled,
        compiler: b.compiler.as_ref().map(|c| c.to_string()),
        samples_ms: Vec::new(),
        summary: None,
        outputs: Vec::new(),
    };
    let base = &session.kernels[0].built;
    let mut kernels = vec![kernel("baseline", base), kernel("variant", variant)];
    for (k, b) in kernels.iter_mut().zip([base, variant]) {
        k.symbol = &b.signature.symbol;
        k.demangled = b.signature.demangled.as_deref();
    }
    let report = Report {
        spec: args.spec.display().to_string(),
        device: session.device(),
        target: &session.target,
        iterations: 0,
        warmup: 0,
        kernels,
        ratio: None,
        differences: None,
        same_code: Some(true),
    };
    match args.format {
        Format::Json => crate::files::stdout(&(serde_json::to_string_pretty(&report)? + "\n"))?,
        Format::Human => crate::files::stdout(&human(&report))?,
    }
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
        Format::Human => {
            let mut out = String::new();
            for (i, b) in built.iter().enumerate() {
                let _ = writeln!(
                    out,
                    "{} for {:?} ({}{}): {}",
                    b.source.display(),
                    b.target,
                    origin(b.precompiled, b.cached),
                    b.compiler
                        .as_ref()
                        .map(|c| format!(" by {c}"))
                        .unwrap_or_default(),
                    b.object.display()
                );
                // Baseline and variant alternate per target: say when they are the same code.
                if sources.len() == 2 && i % 2 == 1 && b.same_code(&built[i - 1]) {
                    let _ = writeln!(
                        out,
                        "  the same code as the baseline's: `bench --compare` times nothing"
                    );
                }
                let sig = &b.signature;
                let _ = writeln!(
                    out,
                    "  kernel {} ({})",
                    sig.demangled.as_deref().unwrap_or(&sig.symbol),
                    sig.symbol
                );
                for (i, p) in sig.params.iter().enumerate() {
                    let _ = writeln!(
                        out,
                        "  param {} {}{} size {} offset {}",
                        i + 1,
                        p.cxx_type.as_deref().unwrap_or("?"),
                        p.name
                            .as_deref()
                            .map(|n| format!(" {n}"))
                            .unwrap_or_default(),
                        p.size,
                        p.offset
                    );
                }
            }
            crate::files::stdout(&out)?;
        }
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
