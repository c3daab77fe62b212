//! `hip-unroll replay DIR [...]` and `hip-unroll replay reserve-check DIR`: argument parsing
//! and printing around `replay::run`.
//!
//! Exit status of `replay`: 0 replayed (and, with `--compare`, the outputs agree), 1 the
//! variant was refused (signature or kernarg layout) or its outputs differ, 2 usage, snapshot
//! or environment errors (no GPU, no HSA runtime, a runtime without the vmem API).
//!
//! Exit status of `reserve-check` (rocm-perf-lab's): 0 every range reserved at its captured
//! address, 1 a reservation failed, 2 some range relocated. An environment or input error (no
//! GPU, no runtime, a bad snapshot) is also 2, since the snapshot cannot be replayed here
//! either; it prints one `error:` line on stderr and nothing on stdout, whereas a relocation
//! prints the report (with `--format json`, `"verdict": "relocated"`).

use replay::device::{Options, Placement};
use replay::diff::{FloatRegion, Tolerance};
use replay::run::{self, Report, ReserveReport, RunError, Verdict};
use std::fmt::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// `--format` of `replay` and `reserve-check`.
#[derive(Debug, Clone, Copy, clap::ValueEnum, Default)]
pub enum Format {
    /// Lines for people.
    #[default]
    #[value(alias = "table")]
    Human,
    /// One JSON document (raw samples included), for tools.
    Json,
}

#[derive(clap::Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct ReplayArgs {
    #[command(subcommand)]
    pub command: Option<ReplayCommand>,
    /// The snapshot directory (from `hip-unroll capture`, or rocm-perf-lab's isolate tool).
    #[arg(required = true, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Replay this code object instead of the captured one (an ELF or a `hipcc --genco`
    /// bundle); its kernel must have the captured kernel's signature and kernarg layout.
    #[arg(long, value_name = "VARIANT")]
    pub hsaco: Option<PathBuf>,
    /// Timed dispatches (each variant, interleaved with the baseline when --hsaco is given).
    #[arg(long, default_value_t = 10, value_name = "N")]
    pub iterations: usize,
    /// Untimed dispatches before the timed ones.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub warmup: usize,
    /// Restore memory only once, before the first dispatch (stateful replay).
    #[arg(long)]
    pub no_recopy: bool,
    /// Seconds to wait for any one dispatch before giving up.
    #[arg(long, default_value_t = 10.0, value_name = "SECS")]
    pub timeout: f64,
    /// Replay baseline and variant on identical memory and compare every written region.
    #[arg(long, requires = "hsaco")]
    pub compare: bool,
    /// A region holding floating-point data, by its captured base address:
    /// `0x7f3a00000000:f32` (f16, bf16, f32, f64); compared with --rtol/--atol.
    #[arg(long = "float-region", value_name = "BASE:TYPE", requires = "compare")]
    pub float_regions: Vec<FloatRegion>,
    /// Relative tolerance for --float-region regions.
    #[arg(long, default_value_t = 0.0, value_name = "X", requires = "compare")]
    pub rtol: f64,
    /// Absolute tolerance for --float-region regions.
    #[arg(long, default_value_t = 0.0, value_name = "X", requires = "compare")]
    pub atol: f64,
    /// Replay even though some regions could not be captured (they start zero-filled).
    #[arg(long)]
    pub force: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
}

#[derive(clap::Subcommand)]
pub enum ReplayCommand {
    /// Check that every captured range can be reserved at its exact address on this machine.
    ReserveCheck(ReserveCheckArgs),
}

#[derive(clap::Args)]
pub struct ReserveCheckArgs {
    /// The snapshot directory.
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
}

pub fn run(args: ReplayArgs) -> anyhow::Result<ExitCode> {
    replay(args).map_err(|e| match e.downcast::<RunError>() {
        Ok(e) => run_hint(e),
        Err(e) => e,
    })
}

/// A replay error as `replay` words it: the setting at fault named by its flag.
fn run_hint(e: RunError) -> anyhow::Error {
    use replay::run::Setting;
    match e {
        RunError::Setting {
            setting: Setting::Compare,
            ..
        } => anyhow::anyhow!("--compare needs --hsaco VARIANT"),
        RunError::Setting { setting, message } => {
            let flag = match setting {
                Setting::Timeout => "--timeout",
                Setting::Iterations => "--iterations",
                Setting::Warmup => "--warmup",
                Setting::Compare => "--compare",
                Setting::FloatRegion => "--float-region",
            };
            anyhow::anyhow!("{flag} {message}")
        }
        RunError::Device(e) => device_hint(e),
        e => e.into(),
    }
}

/// A device error as `replay` words it (shared with `replay reserve-check`).
fn device_hint(e: replay::device::DeviceError) -> anyhow::Error {
    use replay::device::DeviceError;
    match e {
        DeviceError::Timeout { what, secs } => {
            anyhow::anyhow!("{what} did not complete within {secs:.1} s (--timeout)")
        }
        DeviceError::MissingRegions { dir, regions } => anyhow::anyhow!(
            "{}: {} region(s) were not captured ({}); --force replays them zero-filled",
            dir.display(),
            regions.len(),
            regions.join(", ")
        ),
        e => RunError::Device(e).into(),
    }
}

fn replay(args: ReplayArgs) -> anyhow::Result<ExitCode> {
    if let Some(ReplayCommand::ReserveCheck(a)) = args.command {
        return reserve_check(a);
    }
    let dir = args.dir.expect("required by clap");
    for (name, v) in [("--rtol", args.rtol), ("--atol", args.atol)] {
        if !(v.is_finite() && v >= 0.0) {
            anyhow::bail!("{name} must be a non-negative number (got {v})");
        }
    }
    let req = run::Request {
        dir,
        variant: args.hsaco,
        iterations: args.iterations,
        warmup: args.warmup,
        recopy: !args.no_recopy,
        compare: args.compare,
        float_regions: args.float_regions,
        tolerance: Tolerance {
            rtol: args.rtol,
            atol: args.atol,
        },
        options: Options {
            timeout: run::timeout_from_secs(args.timeout)?,
            runtime_library: None,
            allow_missing_regions: args.force,
            device: 0,
        },
    };
    let report = match run::replay(&req) {
        Ok(r) => r,
        Err(e) if e.is_refusal() => {
            eprintln!("refused: {e}");
            return Ok(ExitCode::from(1));
        }
        Err(e) => return Err(e.into()),
    };
    let text = match args.format {
        Format::Json => serde_json::to_string_pretty(&report)? + "\n",
        Format::Human => human(&report),
    };
    crate::files::stdout(&text)?;
    let differ = report.comparison.as_ref().is_some_and(|c| !c.identical());
    Ok(if differ {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn us(ns: f64) -> String {
    format!("{:.3} us", ns / 1000.0)
}

fn timing_line(out: &mut String, label: &str, t: &run::Timing) {
    match &t.summary {
        Some(s) => {
            let _ = writeln!(
                out,
                "{label:<9} median {}  min {}  max {}  IQR {}..{}  MAD {} ({:.1}%)  n={}",
                us(s.median_ns),
                us(s.min_ns as f64),
                us(s.max_ns as f64),
                us(s.q1_ns),
                us(s.q3_ns),
                us(s.mad_ns),
                s.rel_mad * 100.0,
                s.n
            );
        }
        None => {
            let _ = writeln!(out, "{label:<9} no samples");
        }
    }
}

fn human(r: &Report) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} on {} ({} iterations, {} warm-up, memory {})",
        r.kernel,
        r.agent,
        r.iterations,
        r.warmup,
        if r.recopy {
            "restored before each"
        } else {
            "restored once"
        }
    );
    timing_line(&mut out, "baseline", &r.baseline);
    if let Some(v) = &r.variant {
        timing_line(&mut out, "variant", v);
    }
    if let Some(x) = r.ratio {
        let _ = writeln!(out, "variant/baseline median: {x:.4}");
    }
    if let Some(c) = &r.comparison {
        if c.identical() {
            let _ = writeln!(
                out,
                "outputs identical: {} of {} regions written, all equal",
                c.written, c.regions
            );
        } else {
            for d in &c.unstable {
                let _ = writeln!(
                    out,
                    "unstable: the baseline itself differs between two runs: {d}"
                );
            }
            for d in &c.differences {
                let _ = writeln!(out, "differs: {d}");
            }
            if !c.unstable.is_empty() {
                let _ = writeln!(
                    out,
                    "hint: type floating-point outputs with --float-region BASE:f32 and set --rtol/--atol"
                );
            }
        }
    }
    out
}

fn reserve_check(a: ReserveCheckArgs) -> anyhow::Result<ExitCode> {
    let report = run::reserve_check(&a.dir, &Options::default())
        .map_err(|e: RunError| anyhow::anyhow!(e))?;
    let verdict = report.verdict();
    let text = match a.format {
        Format::Json => {
            #[derive(serde::Serialize)]
            struct Out<'a> {
                verdict: Verdict,
                #[serde(flatten)]
                report: &'a ReserveReport,
            }
            serde_json::to_string_pretty(&Out {
                verdict,
                report: &report,
            })? + "\n"
        }
        Format::Human => {
            let mut out = String::new();
            for r in &report.reservations {
                let what = match &r.placement {
                    Placement::Exact => "exact".to_string(),
                    Placement::Relocated { got } => format!("RELOCATED to {got:#x}"),
                    Placement::Failed { error } => format!("FAILED: {error}"),
                };
                let _ = writeln!(
                    out,
                    "{} ({} region{}): {what}{}",
                    replay::snapshot::label(r.va, r.size),
                    r.regions,
                    if r.regions == 1 { "" } else { "s" },
                    r.premap_clash
                        .as_ref()
                        .map(|c| format!(" (before hsa_init: {c})"))
                        .unwrap_or_default()
                );
            }
            let _ = writeln!(
                out,
                "{}: {} regions, {} bytes, {} reservations of {}-byte granules on {}: {}",
                report.snapshot,
                report.regions,
                report.bytes,
                report.reservations.len(),
                report.granule,
                report.agent,
                match verdict {
                    Verdict::Exact => "all exact",
                    Verdict::Failed => "some failed",
                    Verdict::Relocated => "some relocated",
                }
            );
            out
        }
    };
    crate::files::stdout(&text)?;
    Ok(ExitCode::from(match verdict {
        Verdict::Exact => 0,
        Verdict::Failed => 1,
        Verdict::Relocated => 2,
    }))
}

#[cfg(test)]
mod tests {
    use super::run_hint;
    use replay::device::DeviceError;
    use replay::run::{RunError, Setting};

    /// The replay library's settings and device waits come back with `replay`'s flags.
    #[test]
    fn settings_are_named_by_their_flags() {
        let e = |setting, message: &str| {
            run_hint(RunError::Setting {
                setting,
                message: message.into(),
            })
            .to_string()
        };
        assert_eq!(
            e(Setting::Compare, "needs a variant code object"),
            "--compare needs --hsaco VARIANT"
        );
        assert_eq!(
            e(Setting::FloatRegion, "0x10: no region"),
            "--float-region 0x10: no region"
        );
        assert_eq!(e(Setting::Iterations, "x"), "--iterations x");
        assert_eq!(e(Setting::Warmup, "x"), "--warmup x");
        assert_eq!(e(Setting::Timeout, "x"), "--timeout x");
        let t = run_hint(RunError::Device(DeviceError::Timeout {
            what: "the dispatch".into(),
            secs: 2.0,
        }));
        assert_eq!(
            t.to_string(),
            "the dispatch did not complete within 2.0 s (--timeout)"
        );
        let m = run_hint(RunError::Device(DeviceError::MissingRegions {
            dir: "snap".into(),
            regions: vec!["a".into(), "b".into()],
        }));
        assert_eq!(
            m.to_string(),
            "snap: 2 region(s) were not captured (a, b); --force replays them zero-filled"
        );
    }
}
