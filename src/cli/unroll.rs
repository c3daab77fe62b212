//! `hip-unroll unroll`: rewrite one loop (pragma or manual unrolling) and print, diff or write
//! it. The guard -> rewrite -> verify sequence is `pipeline`'s; this module parses arguments,
//! reads the config and the file, and prints.
//!
//! Exit status: 0 success; 1 the loop is refused (a guard blocks it or its pragma is the
//! author's decision, unless `--force`; the rewrite cannot be proven equivalent, never
//! overridden; `--verify` found a changed kernel signature), with the reason id; 2 bad
//! arguments, an unknown or ambiguous loop (the candidates are listed), unreadable file, I/O or
//! compile errors; 3 `--in-place` found FILE edited since it was read and left it as saved.
//!
//! `-o OUT` (`-` is stdout) takes a new path or a regular file (checked before any work; a
//! symbolic link, FIFO, device, read-only or hard-linked file is refused).

use anyhow::{bail, Context};
use pipeline::{LoopRef, Mode, Policy, Refusal};
use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModeArg {
    Pragma,
    Manual,
}

#[derive(clap::Args, Debug)]
pub struct UnrollArgs {
    /// The HIP source file.
    pub file: PathBuf,
    /// The loop: the line of its `for`/`while`/`do` keyword, or its `FUNCTION:INDEX` id from
    /// `check --format json` (`a::k:0`, `over(float*, int):1`; a shorter `k:0` when it names
    /// one loop only).
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
    /// Rewrite FILE in place (atomically, keeping its permissions and owner).
    #[arg(long, conflicts_with = "diff")]
    pub in_place: bool,
    /// Print a unified diff instead of the new source.
    #[arg(long)]
    pub diff: bool,
    /// Rewrite even if a guard blocks the loop or its pragma is the author's decision
    /// (a bare `unroll`, `nounroll`, `unroll 1`, `clang loop ...`); correctness refusals are
    /// never overridden.
    #[arg(long)]
    pub force: bool,
    /// Compile the original and the variant and refuse the variant if any kernel's argument
    /// layout differs (the `[compile] command` of hip-unroll.toml, else hipcc --genco; nvcc
    /// -cubin for an NVIDIA target, an nvcc command, or a file only CUDA compiles).
    #[arg(long)]
    pub verify: bool,
    /// Target of `--verify`: gfx... (AMD) or sm_... (NVIDIA) [default: `[compile] arch`, else
    /// gfx90a; for a CUDA-only file the NVIDIA GPU's, else sm_80].
    #[arg(long, value_name = "ARCH", requires = "verify")]
    pub arch: Option<String>,
    /// Compile command of `--verify`, with `{src}`, `{out}` and `{arch}` placeholders
    /// [default: `[compile] command`, else `hipcc --offload-arch={arch} --genco -O3 {src} -o
    /// {out}`, or for NVIDIA `nvcc -cubin -arch={arch} -O3 {src} -o {out}`].
    #[arg(long, value_name = "CMD", requires = "verify")]
    pub compile: Option<String>,
    /// Look for `#include "..."` in DIR too (repeatable; after the file's own directory,
    /// before `[check] include-dirs` and the `-I` of `[compile]`/`[tune]`); also passed to
    /// `--verify`'s compile.
    #[arg(short = 'I', value_name = "DIR")]
    pub include: Vec<String>,
    /// Define a macro, `NAME` or `NAME=VALUE` (repeatable): for the guards' view of the file
    /// (after the `-D` of `[compile] command` and `[tune] compile-flags`) and `--verify`'s
    /// compile.
    #[arg(short = 'D', value_name = "NAME[=VALUE]")]
    pub define: Vec<String>,
    /// Undefine a macro (repeatable; also one of `-D`, or a predefined platform macro such as
    /// `__HIP_PLATFORM_AMD__`): for the guards' view and `--verify`'s compile.
    #[arg(short = 'U', value_name = "NAME")]
    pub undefine: Vec<String>,
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
    if let Some(out) = &args.output {
        crate::files::check_output(out)?;
    }
    let bytes = crate::files::read_source(&args.file)?;
    let path = args.file.display().to_string();
    let defines = crate::cli::check::defines(&args.define, &args.undefine)?;
    let includes = pipeline::Includes::new(include_dirs(&args)?, Default::default())
        .with_defines(&guard_defines(&args, &defines)?);
    let source = std::panic::catch_unwind(AssertUnwindSafe(|| {
        pipeline::Source::open(&args.file, bytes, &includes)
    }))
    .map_err(|_| anyhow::anyhow!("internal error while analysing {path}; please report it"))?;
    let loc = source.resolve(&loop_ref).with_context(|| path.clone())?;
    let mode = match args.mode {
        ModeArg::Pragma => Mode::Pragma,
        ModeArg::Manual => Mode::Manual,
    };
    let policy = Policy { force: args.force };
    let variant = match source.variant(loc, factor, mode, policy) {
        Ok(v) => v,
        Err(pipeline::Error::Refused {
            id, line, refusal, ..
        }) => {
            eprintln!(
                "{path}:{line}: {}",
                refusal_message(&id, mode, factor, &refusal)
            );
            return Ok(ExitCode::from(1));
        }
        Err(e) => bail!("{path}: {e}"),
    };

    if variant.edits.is_empty() {
        let why = if factor == 1 {
            format!("unrolling loop {} by 1 is the loop itself", variant.loop_id)
        } else {
            format!("loop {} already carries this pragma", variant.loop_id)
        };
        eprintln!(
            "{path}:{}: note: --factor {factor} changes nothing: {why}",
            variant.line
        );
    } else if factor == 1 && mode == Mode::Pragma {
        eprintln!(
            "{path}:{}: note: --factor 1 unrolls nothing: `#pragma unroll 1` keeps the compiler from unrolling loop {}",
            variant.line, variant.loop_id
        );
    }

    if args.verify && !variant.edits.is_empty() {
        let opts = verify_options(&args)?;
        let plan = pipeline::verify_plan(&args.file, &opts, source.cuda_only(), nvidia_arch)
            .context("--verify")?;
        eprintln!("{path}: note: --verify compiles with {plan}");
        let diffs = match pipeline::verify(&args.file, &variant.source, &plan, &opts) {
            Ok(d) => d,
            Err(pipeline::VerifyError::Compile { what, error })
                if matches!(
                    *error,
                    codeobj::compile::CompileError::CompilerMissing { .. }
                ) && plan.vendor == pipeline::Vendor::Nvidia =>
            {
                bail!(
                    "compiling {what}: {error} (nvcc: --compile, [compile] nvcc, $CUDA_HOME/bin or PATH; install: {})",
                    runner::build::NVCC_INSTALL
                )
            }
            Err(e) => return Err(e.into()),
        };
        if !diffs.is_empty() {
            let r = Refusal::SignatureChanged(diffs.clone());
            eprintln!(
                "{path}:{}: loop {} ({mode} x{factor}): the variant changes kernel signatures [{}]:",
                variant.line,
                variant.loop_id,
                r.id()
            );
            for d in diffs {
                eprintln!("  {d}");
            }
            return Ok(ExitCode::from(1));
        }
    }

    if let Some(note) = renumbering_note(&source.renumbering(loc, &variant)) {
        eprintln!("{path}: note: {note}");
    }
    if args.diff {
        let text = render::diff::unified(&path, source.bytes(), &variant.source);
        crate::files::stdout(&text)?;
    } else if args.in_place {
        if !variant.edits.is_empty() {
            match crate::files::rewrite_in_place(
                &args.file,
                source.bytes(),
                &variant.source,
                "unroll.in-place",
            ) {
                Ok(()) => {}
                Err(e) if e.is_edited() => {
                    eprintln!("error: {e}");
                    return Ok(ExitCode::from(crate::files::EXIT_EDITED));
                }
                Err(e) => return Err(e.into()),
            }
        }
    } else if let Some(out) = &args.output {
        crate::files::output_like(out, &variant.source, Some(&args.file))?;
    } else {
        crate::files::stdout_bytes(&variant.source)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The macros of the guards' view: the `-D`/`-U` of the config's compile words (found upward
/// from the file), then the command line's.
fn guard_defines(args: &UnrollArgs, cli: &pipeline::Defines) -> anyhow::Result<pipeline::Defines> {
    let mut out = match config::find_config(&args.file) {
        Some(path) => {
            let words = config::compile_words(&config::load(&path)?);
            pipeline::Defines::from_flags(words.iter().map(String::as_str))
        }
        None => pipeline::Defines::default(),
    };
    out.extend(cli);
    Ok(out)
}

/// Where the file's `#include "..."`s are looked for after its own directory: `-I`, then the
/// config's (found upward from the file) `[check] include-dirs` and compile `-I`s.
fn include_dirs(args: &UnrollArgs) -> anyhow::Result<Vec<PathBuf>> {
    let mut dirs: Vec<PathBuf> = args.include.iter().map(PathBuf::from).collect();
    if let Some(path) = config::find_config(&args.file) {
        dirs.extend(config::include_dirs(&config::load(&path)?, &path));
    }
    Ok(dirs)
}

/// One line naming the loop ids that the rewrite changed (`k:0 -> k:0 (unrolled), k:1
/// (remainder); k:1 -> k:3`), or `None` when every id stays.
fn renumbering_note(r: &pipeline::Renumbering) -> Option<String> {
    let mut parts = Vec::new();
    if !r.became.is_empty() && r.became != [r.rewritten.clone()] {
        let became: Vec<String> = match r.became.as_slice() {
            [a, b] => vec![format!("{a} (unrolled)"), format!("{b} (remainder)")],
            all => all.iter().map(|x| x.to_string()).collect(),
        };
        parts.push(format!("{} -> {}", r.rewritten, became.join(", ")));
    }
    parts.extend(r.moved.iter().map(|(a, b)| format!("{a} -> {b}")));
    (!parts.is_empty()).then(|| format!("loop ids after the rewrite: {}", parts.join("; ")))
}

/// One line: why the loop is not rewritten, with the reason id in brackets.
fn refusal_message(id: &pipeline::LoopId, mode: Mode, factor: u32, r: &Refusal) -> String {
    match r {
        Refusal::GuardBlocked { .. } => format!(
            "loop {id} is {r}; --force overrides guards [{}]",
            r.id()
        ),
        Refusal::UserPragma { pragma, line } => format!(
            "loop {id} carries `{pragma}` (line {line}), its author's decision; not replaced (--force overrides) [{}]",
            r.id()
        ),
        _ => format!(
            "cannot unroll loop {id} ({mode} x{factor}): {r}{} [{}]",
            alternative_hint(r),
            r.id()
        ),
    }
}

/// The flag that does what a refused rewrite could not (the transforms name no flag).
fn alternative_hint(r: &Refusal) -> &'static str {
    match r {
        Refusal::Transform(t) => match t.alternative() {
            Some(transforms::Alternative::PragmaMode) => " (use --mode pragma)",
            None => "",
        },
        _ => "",
    }
}

/// The architecture of the NVIDIA GPU here, if there is one (for `--verify` of a CUDA-only
/// file without `--arch`): asked of the CUDA driver, loaded at run time.
fn nvidia_arch() -> Option<String> {
    let opts = runner::Options {
        backend: runner::Backend::Cuda,
        arch: None,
        device: 0,
        timeout: std::time::Duration::from_secs(20),
        build: runner::build::BuildOptions::new(codeobj::compile::default_cache_dir()),
    };
    runner::session::open_device(&opts)
        .ok()
        .and_then(|d| d.info().arch.clone())
}

/// `--verify`'s compiler: the command line first, then `[compile]` of hip-unroll.toml (found
/// upward from the file, as `pressure` does), then the pipeline's choice (hipcc for gfx90a, or
/// nvcc `-cubin` for a CUDA-only file); objects and compile logs in `[compile] cache-dir`, else
/// the default compile cache.
fn verify_options(args: &UnrollArgs) -> anyhow::Result<pipeline::VerifyOptions> {
    let cfg = config::discover(&args.file)?.config.compile;
    let mut opts = pipeline::VerifyOptions {
        command: args.compile.clone().or(cfg.command.clone()),
        arch: args.arch.clone().or(cfg.arch.clone()),
        nvcc: runner::build::find_nvcc(None, cfg.nvcc.as_deref()).unwrap_or(None),
        ..pipeline::VerifyOptions::default()
    };
    if let Some(dir) = &cfg.cache_dir {
        opts.cache_dir = dir.clone();
    }
    if let Some(t) = cfg.timeout {
        opts.timeout = std::time::Duration::from_secs(t);
    }
    for dir in &args.include {
        opts.extra_args.push(format!("-I{dir}"));
    }
    opts.extra_args
        .extend(crate::cli::check::defines(&args.define, &args.undefine)?.flags());
    Ok(opts)
}
