//! `hip-unroll pressure BASELINE VARIANT`: compiles both sources (in parallel, cached by content
//! hash) and judges the variant's register cost with the `vgpr-pressure` guard.
//!
//! Exit status: 0 the variant is acceptable, 1 blocked, 2 errors (compiler missing or failing,
//! unreadable code object, no kernel matched).

use crate::cli::inspect::Format;
use anyhow::bail;
use codeobj::compile::{Compiler, DEFAULT_ARCH, DEFAULT_COMMAND};
use codeobj::judge::{Judgement, Thresholds};
use codeobj::KernelResources;
use serde::Serialize;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct PressureArgs {
    /// The original kernel source.
    pub baseline: PathBuf,
    /// The rewritten (unrolled) kernel source.
    pub variant: PathBuf,
    /// Target processor [default: `[compile] arch` or gfx90a].
    #[arg(long, value_name = "ARCH")]
    pub arch: Option<String>,
    /// Compile command with `{src}`, `{out}` (and `{arch}`) placeholders
    /// [default: `[compile] command` or `hipcc --offload-arch={arch} --genco -O3 {src} -o {out}`].
    #[arg(long, value_name = "CMD")]
    pub compile: Option<String>,
    /// Judge only this kernel (mangled, demangled or bare name).
    #[arg(long, value_name = "NAME")]
    pub kernel: Option<String>,
    /// Waves per SIMD the variant may lose [default: `[vgpr-pressure] max-occupancy-loss` or 0].
    #[arg(long, value_name = "WAVES")]
    pub max_occupancy_loss: Option<u32>,
    /// Where compiled objects are cached [default: `[compile] cache-dir`, $HIP_UNROLL_CACHE_DIR,
    /// $XDG_CACHE_HOME/hip-unroll or ~/.cache/hip-unroll].
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
    /// Include directory for both compiles (repeatable), `-I DIR` on their command lines.
    #[arg(short = 'I', value_name = "DIR")]
    pub include: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

#[derive(Serialize)]
struct Output<'a> {
    baseline: String,
    variant: String,
    arch: &'a str,
    command: &'a str,
    max_occupancy_loss: u32,
    blocked: bool,
    kernels: &'a [codeobj::judge::KernelVerdict],
}

pub fn run(args: PressureArgs) -> anyhow::Result<ExitCode> {
    let cfg = config::discover(&args.baseline)?.config;
    let (compile_cfg, pressure_cfg) = (cfg.compile, cfg.vgpr_pressure);
    let arch = args
        .arch
        .or(compile_cfg.arch)
        .unwrap_or_else(|| DEFAULT_ARCH.to_string());
    let command = args
        .compile
        .or(compile_cfg.command)
        .unwrap_or_else(|| DEFAULT_COMMAND.to_string());
    let cache_dir = args
        .cache_dir
        .or(compile_cfg.cache_dir)
        .unwrap_or_else(codeobj::compile::default_cache_dir);
    let thresholds = Thresholds {
        max_occupancy_loss: args
            .max_occupancy_loss
            .or(pressure_cfg.max_occupancy_loss)
            .unwrap_or(0),
    };
    for p in [&args.baseline, &args.variant] {
        crate::files::require_file(p)?;
    }
    let compiler = Compiler::new(command.clone(), arch.clone(), cache_dir)
        .with_args(args.include.iter().map(|d| format!("-I{}", d.display())))
        .with_timeout(compile_cfg.timeout.map_or(
            codeobj::compile::DEFAULT_TIMEOUT,
            std::time::Duration::from_secs,
        ));
    let (_b, _v, judgement) = codeobj::compile::compile_and_judge(
        &compiler,
        &args.baseline,
        &args.variant,
        &thresholds,
        args.kernel.as_deref(),
    )?;
    if judgement.kernels.is_empty() {
        match &args.kernel {
            Some(k) => bail!("no kernel named `{k}` in {}", args.baseline.display()),
            None => bail!(
                "no kernel in the code object of {}",
                args.baseline.display()
            ),
        }
    }
    match args.format {
        Format::Json => {
            let out = Output {
                baseline: args.baseline.display().to_string(),
                variant: args.variant.display().to_string(),
                arch: &arch,
                command: &command,
                max_occupancy_loss: thresholds.max_occupancy_loss,
                blocked: judgement.blocked,
                kernels: &judgement.kernels,
            };
            crate::files::stdout(&(serde_json::to_string_pretty(&out)? + "\n"))?;
        }
        Format::Table => crate::files::stdout(&table(&judgement))?,
    }
    Ok(if judgement.blocked {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn table(j: &Judgement) -> String {
    use std::fmt::Write;
    fn pair(b: u32, a: Option<u32>) -> String {
        match a {
            Some(a) if a == b => format!("{b}"),
            Some(a) => format!("{b} -> {a}"),
            None => format!("{b} -> ?"),
        }
    }
    fn waves(n: &KernelResources) -> String {
        match (n.waves_per_simd, n.limited_by) {
            (Some(w), Some(l)) => format!("{w} ({})", l.as_str()),
            _ => "?".into(),
        }
    }
    let mut out = String::new();
    for k in &j.kernels {
        let name = k.demangled.as_deref().unwrap_or(&k.kernel);
        let verdict = if k.blocked { "BLOCKED" } else { "ok" };
        let a = k.after.as_ref();
        let b = &k.before;
        let _ = writeln!(out, "{verdict}: {name} on {}", k.arch);
        let rows = [
            ("vgpr", b.vgpr_count, a.map(|a| a.vgpr_count)),
            ("agpr", b.agpr_count, a.map(|a| a.agpr_count)),
            ("sgpr", b.sgpr_count, a.map(|a| a.sgpr_count)),
        ];
        for (label, before, after) in rows {
            let _ = writeln!(out, "  {label:<8} {}", pair(before, after));
        }
        let _ = writeln!(
            out,
            "  spills   vgpr {}, sgpr {}",
            pair(b.vgpr_spill_count, a.map(|a| a.vgpr_spill_count)),
            pair(b.sgpr_spill_count, a.map(|a| a.sgpr_spill_count))
        );
        let rows = [
            ("scratch", b.scratch_bytes, a.map(|a| a.scratch_bytes)),
            ("lds", b.lds_bytes, a.map(|a| a.lds_bytes)),
        ];
        for (label, before, after) in rows {
            let _ = writeln!(out, "  {label:<8} {}", pair(before, after));
        }
        let _ = writeln!(
            out,
            "  waves    {} -> {}",
            waves(b),
            a.map(waves).unwrap_or_else(|| "?".into())
        );
        for r in &k.reasons {
            let _ = writeln!(out, "  blocked: {r}");
        }
    }
    let blocked = j.kernels.iter().filter(|k| k.blocked).count();
    let _ = writeln!(
        out,
        "{} kernel(s) judged, {blocked} blocked",
        j.kernels.len()
    );
    out
}
