//! `hip-unroll profile`: run a workload under rocprofv3 (or legacy rocprof), or read existing
//! profiler output with `--from`, and report per-kernel statistics, the critical path, the
//! roofline, and optionally an SVG roofline and a Perfetto trace.

use anyhow::Context;
use profiler::analyze::NoRoofline;
use profiler::run::{Plan, Preset};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum PresetArg {
    /// Kernel trace only, no counters: least perturbation.
    Lightweight,
    /// Kernel trace plus wave and busy counters.
    Kernel,
    /// VALU/SALU/MFMA instruction mix and wave counters (the roofline's FLOPs).
    Compute,
    /// L2, L1, LDS and DRAM counters (the roofline's bytes).
    Memory,
    /// Compute and memory together: everything the roofline needs.
    Full,
}

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum Format {
    /// Aligned columns with the critical path and roofline, for people.
    Table,
    /// The report as JSON (`source`, `kernels` with their statistics, `critical_path`, `roofline`).
    Json,
    /// One row per kernel: the JSON statistics' fields plus `runtime` and `rank`.
    Csv,
    /// GitHub-flavoured Markdown (tables for pull requests and notes).
    Markdown,
}

#[derive(clap::Args)]
pub struct ProfileArgs {
    /// Counters to collect, as a preset (more in --pmc).
    #[arg(
        long,
        value_enum,
        default_value = "lightweight",
        conflicts_with = "from"
    )]
    pub preset: PresetArg,
    /// Output directory for the profiler's files (one pass_N subdirectory per counter pass)
    /// and the report's SVG.
    #[arg(short = 'o', long = "output-dir", value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Only report kernels whose name matches this regex (also limits counter collection).
    #[arg(long, value_name = "REGEX")]
    pub kernel: Option<String>,
    /// Extra hardware counters to collect (split into passes as needed).
    #[arg(long, num_args = 1.., conflicts_with = "from", value_name = "COUNTER")]
    pub pmc: Vec<String>,
    /// Kill the profiled run after this many seconds (per pass).
    #[arg(
        long,
        default_value_t = 600,
        conflicts_with = "from",
        value_name = "SECS"
    )]
    pub timeout: u64,
    /// Read existing profiler output instead of running: rocpd .db files, rocprofv3 or
    /// rocprof-compute directories, kernel-trace/stats CSVs, rocprof results.csv.
    #[arg(long, num_args = 1.., value_name = "PATH")]
    pub from: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub format: Format,
    /// Write the roofline plot here (default: roofline.svg in -o DIR when there is a roofline).
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
    /// Write a Perfetto/Chrome trace JSON of the dispatches.
    #[arg(long, value_name = "FILE")]
    pub trace_json: Option<PathBuf>,
    /// Peaks for the roofline: mi210, mi250x or mi300x (default: from the profiled agent).
    #[arg(long)]
    pub gpu: Option<String>,
    /// gfx target whose counter names the presets use (default: rocm_agent_enumerator, else gfx90a).
    #[arg(long, conflicts_with = "from", value_name = "ARCH")]
    pub arch: Option<String>,
    /// Largest gap (ns) between one stream's kernel end and another's start read as a wait.
    #[arg(long, default_value_t = 5000, value_name = "NS")]
    pub wait_gap_ns: u64,
    /// Print the profiler command lines and exit without running them.
    #[arg(long, conflicts_with = "from")]
    pub dry_run: bool,
    /// The application and its arguments, after `--`.
    #[arg(last = true)]
    pub app: Vec<String>,
}

fn preset(p: PresetArg) -> Preset {
    match p {
        PresetArg::Lightweight => Preset::Lightweight,
        PresetArg::Kernel => Preset::Kernel,
        PresetArg::Compute => Preset::Compute,
        PresetArg::Memory => Preset::Memory,
        PresetArg::Full => Preset::Full,
    }
}

/// Write an output file (`--svg`, `--trace-json`; `-` is stdout) under the output policy of
/// `files::output`, creating its directory (`-o DIR` need not exist yet).
fn write_output(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    crate::files::output(path, bytes)
}

/// Refuse an output file before the profiler runs (a directory not made yet is made later).
fn check_output(path: &Path) -> anyhow::Result<()> {
    match path.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(dir) if !dir.exists() => Ok(()),
        _ => crate::files::check_output(path),
    }
}

pub fn run(args: ProfileArgs) -> anyhow::Result<ExitCode> {
    // Every command reads the hip-unroll.toml that applies here (none of its sections is
    // profile's, but a broken file is an error for every command alike).
    config::discover(Path::new("."))?;
    for path in args.svg.iter().chain(&args.trace_json) {
        check_output(path)?;
    }
    let regex = args
        .kernel
        .as_deref()
        .map(profiler::regex::Regex::new)
        .transpose()
        .map_err(profiler::Error::from)?;
    let inputs: Vec<PathBuf> = if !args.from.is_empty() {
        if !args.app.is_empty() {
            anyhow::bail!("give either --from PATH... or an application after `--`, not both");
        }
        args.from.clone()
    } else {
        if args.app.is_empty() {
            anyhow::bail!("nothing to profile: give an application after `--` (hip-unroll profile -- ./app args) or read existing output with --from PATH");
        }
        profiler::run::check_timeout(std::time::Duration::from_secs(args.timeout)).map_err(
            |e| match e {
                profiler::Error::BadTimeout(secs) => anyhow::anyhow!(
                    "--timeout must be more than 0 and at most 86400 seconds (got {secs})"
                ),
                e => e.into(),
            },
        )?;
        let tool = profiler::run::detect().map_err(|e| match e {
            profiler::Error::NoProfiler => anyhow::anyhow!(
                "neither rocprofv3 nor rocprof was found on PATH; install ROCm's rocprofiler-sdk (rocprofv3) or pass --from with existing profiler output"
            ),
            e => e.into(),
        })?;
        let out = args
            .out
            .clone()
            .unwrap_or_else(|| PathBuf::from("hip-unroll-profile"));
        let arch = args
            .arch
            .clone()
            .or_else(profiler::run::local_arch)
            .unwrap_or_else(|| "gfx90a".into());
        let mut counters = profiler::run::preset_counters(preset(args.preset), &arch);
        counters.extend(
            args.pmc
                .iter()
                .flat_map(|c| c.split(','))
                .map(|c| c.trim().to_string())
                .filter(|c| !c.is_empty()),
        );
        let plan = Plan {
            counters,
            out_dir: out.clone(),
            kernel_regex: args.kernel.clone(),
            app: args.app.clone(),
        };
        let invocations = profiler::run::build(&tool, &plan);
        if args.dry_run {
            let lines: String = invocations
                .iter()
                .map(|inv| inv.argv.join(" ") + "\n")
                .collect();
            crate::files::stdout(&lines)?;
            return Ok(ExitCode::SUCCESS);
        }
        let n = invocations.len();
        profiler::run::execute_all(
            &invocations,
            std::time::Duration::from_secs(args.timeout),
            |i, inv| {
                eprintln!("profile: pass {}/{n}: {}", i + 1, inv.argv.join(" "));
            },
        )?
    };

    let ran = args.from.is_empty();
    let mut profile = match profiler::load(&inputs) {
        Err(profiler::Error::NothingFound { .. } | profiler::Error::NoKernels { .. }) if ran => {
            let path = inputs.first().cloned().unwrap_or_default();
            anyhow::bail!(
                "the profiled run produced no kernel dispatches: the profiler wrote no kernel trace under {} (see profiler.log there); does the application launch GPU kernels?",
                path.display()
            )
        }
        Err(profiler::Error::Io { path, error }) => {
            anyhow::bail!("{}: {}", path.display(), crate::files::io_reason(&error))
        }
        r => r?,
    };
    if profile.inverted_dispatches > 0 {
        let n = profile.inverted_dispatches;
        eprintln!(
            "profile: {n} dispatch{} whose end timestamp precedes its start left out of the statistics",
            if n == 1 { "" } else { "es" }
        );
    }
    let analysis = match profiler::analyze::analyze(
        &mut profile,
        &profiler::analyze::Options {
            wait_gap_ns: args.wait_gap_ns,
            kernel: regex,
            gpu: args.gpu.clone(),
        },
    ) {
        Err(profiler::Error::NoKernelMatches(re)) => {
            anyhow::bail!("no kernel matches --kernel {re:?}")
        }
        r => r?,
    };
    let (roofline, note) = match analysis.roofline {
        Ok(r) => (Some(r), None),
        Err(why) => (None, Some(match why {
            NoRoofline::NoCounters => {
                "no hardware counters in the input (use --preset full)".to_string()
            }
            NoRoofline::MissingCounters => "the counters lack FLOP (SQ_INSTS_VALU_*) or DRAM (TCC_EA*_RDREQ/WRREQ) counters".to_string(),
            NoRoofline::NoPeaks(arch) => format!(
                "no peak figures for this GPU ({}); pass --gpu mi210|mi250x|mi300x",
                arch.as_deref().unwrap_or("unknown arch")
            ),
        })),
    };
    let svg_path = args.svg.clone().or_else(|| {
        args.out
            .as_ref()
            .filter(|_| roofline.is_some())
            .map(|d| d.join("roofline.svg"))
    });
    if let Some(path) = &svg_path {
        match &roofline {
            Some(r) => write_output(path, profiler::roofline::svg(r).as_bytes())?,
            None => anyhow::bail!(
                "no roofline to plot into {}: {}",
                path.display(),
                note.clone().unwrap_or_default()
            ),
        }
    }
    if let Some(path) = &args.trace_json {
        let v = profiler::trace::chrome_trace(&profile);
        write_output(path, serde_json::to_string(&v)?.as_bytes())?;
    }
    let report = profiler::report::Report::new(
        &profile,
        analysis.kernels,
        analysis.critical_path,
        roofline,
        note,
    );
    let text = match args.format {
        Format::Table => profiler::report::table(&report),
        Format::Json => profiler::report::json(&report),
        Format::Csv => profiler::report::csv(&report),
        Format::Markdown => profiler::report::markdown(&report),
    };
    crate::files::stdout(&text)?;
    Ok(ExitCode::SUCCESS)
}
