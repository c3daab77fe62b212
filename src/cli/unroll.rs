//! `hip-unroll unroll`: rewrite one loop (pragma or manual unrolling) and print, diff or write it.
//!
//! Exit status: 0 success; 1 the loop is blocked by a guard (unless `--force`) or cannot be
//! rewritten safely (never overridden), or `--verify` found a changed kernel signature;
//! 2 bad arguments, unknown loop, unreadable file, I/O or compile errors.

use anyhow::{bail, Context};
use std::io::Write;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use transforms::{LoopRef, Mode};

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModeArg {
    Pragma,
    Manual,
}

#[derive(clap::Args, Debug)]
pub struct UnrollArgs {
    /// The HIP source file.
    pub file: PathBuf,
    /// The loop: the line of its `for`/`while`/`do` keyword, or its `function:index` id.
    #[arg(long = "loop", value_name = "LOOP")]
    pub loop_ref: String,
    /// Unroll factor (at least 1).
    #[arg(long, value_name = "N")]
    pub factor: i64,
    /// `pragma` inserts `#pragma unroll N`; `manual` replicates the body in the source.
    #[arg(long, value_enum, default_value_t = ModeArg::Pragma)]
    pub mode: ModeArg,
    /// Write the result to this file (atomically) instead of stdout.
    #[arg(short = 'o', long = "output", value_name = "OUT", conflicts_with_all = ["in_place", "diff"])]
    pub output: Option<PathBuf>,
    /// Rewrite FILE in place (atomically, keeping its permissions).
    #[arg(long, conflicts_with = "diff")]
    pub in_place: bool,
    /// Print a unified diff instead of the new source.
    #[arg(long)]
    pub diff: bool,
    /// Rewrite even if a guard blocks the loop (correctness refusals are never overridden).
    #[arg(long)]
    pub force: bool,
    /// Compile the original and the variant (hipcc --genco for --arch) and refuse the variant
    /// if any kernel's argument layout differs.
    #[arg(long)]
    pub verify: bool,
    /// Target of `--verify`.
    #[arg(long, default_value = codeobj::compile::DEFAULT_ARCH, requires = "verify")]
    pub arch: String,
}

pub fn run(args: UnrollArgs) -> anyhow::Result<ExitCode> {
    if args.factor < 1 || args.factor > u32::MAX as i64 {
        bail!(
            "--factor must be at least 1 and at most {} (got {})",
            u32::MAX,
            args.factor
        );
    }
    let factor = args.factor as u32;
    let loop_ref: LoopRef = args.loop_ref.parse()?;
    let src = std::fs::read(&args.file)
        .with_context(|| format!("cannot read {}", args.file.display()))?;
    let file = frontend::parse(&src);
    let loc = transforms::resolve(&file, &loop_ref)
        .with_context(|| format!("{}", args.file.display()))?;
    let id = transforms::loop_id(&file, loc);
    let path = args.file.display().to_string();

    if !args.force {
        let settings = guards::Settings::default();
        let report = std::panic::catch_unwind(AssertUnwindSafe(|| {
            guards::check_source(&path, &src, &settings)
        }));
        let Ok((report, _)) = report else {
            bail!("the guard analysis of {path} failed; use --force to rewrite without guards");
        };
        let lr = report
            .functions
            .iter()
            .flat_map(|f| &f.loops)
            .find(|l| l.id == id);
        if let Some(lr) = lr {
            if lr.verdict == guards::Verdict::Blocked {
                eprintln!(
                    "{path}:{}: loop {id} is blocked by {} (see `hip-unroll explain RULE`; --force overrides guards)",
                    lr.line,
                    lr.blockers.join(", ")
                );
                return Ok(ExitCode::from(1));
            }
        }
    }

    let mode = match args.mode {
        ModeArg::Pragma => Mode::Pragma,
        ModeArg::Manual => Mode::Manual,
    };
    let variant = match transforms::unroll(&src, &file, loc, factor, mode) {
        Ok(v) => v,
        Err(transforms::Error::Refused(r)) => {
            let line = file.functions[loc.function].loops[loc.index].keyword.line;
            eprintln!(
                "{path}:{line}: cannot unroll loop {id} ({mode} x{factor}): {r} [{}]",
                r.id()
            );
            return Ok(ExitCode::from(1));
        }
        Err(e) => bail!("{path}: {e}"),
    };

    if args.verify && !variant.edits.is_empty() {
        let diffs = verify(&args.file, &variant.source, &args.arch)?;
        if !diffs.is_empty() {
            eprintln!("{path}: the variant changes kernel signatures:");
            for d in diffs {
                eprintln!("  {d}");
            }
            return Ok(ExitCode::from(1));
        }
    }

    if args.diff {
        let old = String::from_utf8_lossy(&src);
        let new = String::from_utf8_lossy(&variant.source);
        let diff = similar::TextDiff::from_lines(old.as_ref(), new.as_ref());
        let text = diff
            .unified_diff()
            .context_radius(3)
            .header(&path, &path)
            .to_string();
        crate::files::stdout(&text)?;
    } else if args.in_place {
        crate::files::write_atomic_like(&args.file, &variant.source, None)?;
    } else if let Some(out) = &args.output {
        crate::files::write_atomic_like(out, &variant.source, Some(&args.file))?;
    } else {
        crate::files::stdout_bytes(&variant.source)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Compile the original file and the variant (written beside it, so includes resolve) and
/// compare every kernel's argument layout.
fn verify(
    original: &Path,
    variant: &[u8],
    arch: &str,
) -> anyhow::Result<Vec<codeobj::signature::Difference>> {
    let dir = match original.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let ext = original
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("cu");
    let mut tmp = tempfile::Builder::new()
        .prefix(".hip-unroll-verify-")
        .suffix(&format!(".{ext}"))
        .tempfile_in(&dir)
        .with_context(|| format!("cannot create a temporary file in {}", dir.display()))?;
    tmp.write_all(variant)?;
    tmp.flush()?;
    let cache = tempfile::tempdir()?;
    let compiler =
        codeobj::compile::Compiler::new(codeobj::compile::DEFAULT_COMMAND, arch, cache.path());
    let results = compiler.compile_all(&[original, tmp.path()]);
    let mut it = results.into_iter();
    let a = it
        .next()
        .unwrap()
        .with_context(|| format!("compiling {}", original.display()))?;
    let b = it.next().unwrap().context("compiling the variant")?;
    let mut diffs = Vec::new();
    if a.code_objects.len() != b.code_objects.len() {
        bail!(
            "the original has {} code objects, the variant {}",
            a.code_objects.len(),
            b.code_objects.len()
        );
    }
    for (x, y) in a.code_objects.iter().zip(&b.code_objects) {
        diffs.extend(codeobj::signature::compare(x, y));
    }
    Ok(diffs)
}
