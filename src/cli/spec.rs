//! `hip-unroll spec new FILE --kernel NAME [-o SPEC]` drafts a launch spec from the kernel's
//! signature and body (placeholders marked `# FILL:`, guesses `# GUESS:`); `hip-unroll spec
//! check SPEC...` validates specs without a GPU (placeholders, fields, the kernel and its
//! parameters, the compile). Arguments and printing only; the work is the `specgen` crate's.
//!
//! Exit status: `new`: 0 written, 1 the kernel cannot be described by a spec (refused, with the
//! reason), 2 usage or I/O (no such kernel, unreadable file, an existing `-o`). `check`: 0 every
//! spec passed, 1 a spec has a problem (its first, with its line), 2 usage or I/O, or no
//! compiler to check with.

use codeobj::compile::default_cache_dir;
use runner::build::{BuildOptions, Target, DEFAULT_CUDA_ARCH};
use specgen::{CheckError, CheckOptions, NewError, NewRequest};
use std::path::{Component, Path, PathBuf};
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct SpecArgs {
    #[command(subcommand)]
    pub command: SpecCommand,
}

#[derive(clap::Subcommand)]
pub enum SpecCommand {
    /// Draft a launch spec for a kernel from its signature in the source: arguments, outputs,
    /// min-lengths, block; values to fill are marked `# FILL:`, values to check `# GUESS:`.
    New(NewArgs),
    /// Validate launch specs without a GPU: no placeholder left, fields, the kernel and its
    /// parameters in the source, and the compile (as `bench --compile-only`).
    Check(CheckArgs),
}

#[derive(clap::Args)]
pub struct NewArgs {
    /// The kernel's source file.
    pub file: PathBuf,
    /// The kernel: `dot`, `ns::k`, or a template's instantiation such as `stencil<4>`.
    #[arg(long, value_name = "NAME")]
    pub kernel: String,
    /// Write the spec to this new file (its `source` is then relative to it) [default: stdout].
    #[arg(short = 'o', long = "output", value_name = "SPEC")]
    pub output: Option<PathBuf>,
    /// Add a directory to the `#include "..."` search path (after the file's own directory).
    #[arg(short = 'I', value_name = "DIR")]
    pub include: Vec<PathBuf>,
}

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum CheckBackend {
    /// The targets the source is written for: NVIDIA alone for a source with CUDA headers, AMD
    /// alone for a kernel with AMD-only constructs, else both.
    Auto,
    /// AMD (hipcc).
    Hip,
    /// NVIDIA (nvcc, or clang-19 with hip-unroll's prelude).
    Cuda,
}

#[derive(clap::Args)]
pub struct CheckArgs {
    /// The launch specs (TOML, `version = 1`).
    #[arg(required = true)]
    pub specs: Vec<PathBuf>,
    #[arg(long, value_enum, default_value_t = CheckBackend::Auto)]
    pub backend: CheckBackend,
    /// Compile target: gfx90a... (AMD) or sm_80... (NVIDIA) [default: `[compile] arch`, else
    /// gfx90a and sm_80].
    #[arg(long, value_name = "ARCH")]
    pub arch: Option<String>,
    /// nvcc for NVIDIA targets [default: `[compile] nvcc`, `$CUDA_HOME/bin/nvcc`, `nvcc` on PATH;
    /// none: clang-19 with hip-unroll's prelude].
    #[arg(long, value_name = "PATH")]
    pub nvcc: Option<PathBuf>,
    /// Where compiled objects are cached [default: `[compile] cache-dir`, $HIP_UNROLL_CACHE_DIR,
    /// $XDG_CACHE_HOME/hip-unroll or ~/.cache/hip-unroll].
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
    /// Add a directory to the `#include "..."` search path of the kernel's source.
    #[arg(short = 'I', value_name = "DIR")]
    pub include: Vec<PathBuf>,
}

pub fn run(args: SpecArgs) -> anyhow::Result<ExitCode> {
    match args.command {
        SpecCommand::New(a) => new(a),
        SpecCommand::Check(a) => check(a),
    }
}

/// `to` relative to the directory `from` (both made absolute and normalised first).
fn relative(from: &Path, to: &Path) -> PathBuf {
    let abs = |p: &Path| {
        std::path::absolute(p)
            .map(|p| frontend::tu::normalize(&p))
            .unwrap_or_else(|_| p.to_path_buf())
    };
    let (from, to) = (abs(from), abs(to));
    let a: Vec<Component> = from.components().collect();
    let b: Vec<Component> = to.components().collect();
    let common = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let mut out = PathBuf::new();
    for _ in common..a.len() {
        out.push("..");
    }
    for c in &b[common..] {
        out.push(c.as_os_str());
    }
    out
}

/// The directories `#include "..."` is looked for in: `-I`, then the config's (found upward
/// from `start`) `[check] include-dirs` and compile `-I`s.
fn include_dirs(include: &[PathBuf], start: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut dirs = include.to_vec();
    if let Some(path) = config::find_config(start) {
        dirs.extend(config::include_dirs(&config::load(&path)?, &path));
    }
    Ok(dirs)
}

fn new(args: NewArgs) -> anyhow::Result<ExitCode> {
    crate::files::require_file(&args.file)?;
    let to_file = args.output.as_ref().filter(|o| !crate::files::is_stdout(o));
    if let Some(o) = to_file {
        if std::fs::symlink_metadata(o).is_ok() {
            anyhow::bail!(
                "{}: already exists; `spec new` writes a new spec and never replaces one (remove it or name another)",
                o.display()
            );
        }
        crate::files::check_output(o)?;
    }
    let source_in_spec = match to_file {
        Some(o) => {
            let dir = o.parent().filter(|d| !d.as_os_str().is_empty());
            relative(dir.unwrap_or(Path::new(".")), &args.file)
        }
        None => args.file.clone(),
    };
    let req = NewRequest {
        source: args.file.clone(),
        source_in_spec: source_in_spec.to_string_lossy().into_owned(),
        kernel: args.kernel.clone(),
        include_dirs: include_dirs(&args.include, &args.file)?,
    };
    let draft = match specgen::new_spec(&req) {
        Ok(d) => d,
        Err(e @ NewError::Unsupported { .. }) => {
            eprintln!("{e}");
            return Ok(ExitCode::from(1));
        }
        Err(NewError::NeedsInstantiation {
            kernel,
            params,
            instances,
        }) => {
            let example = instances
                .first()
                .cloned()
                .unwrap_or_else(|| format!("{kernel}<...>"));
            anyhow::bail!(
                "kernel `{kernel}` is a template <{params}>: name an instantiation with --kernel '{example}'{}",
                if instances.len() > 1 {
                    format!(" (the file instantiates or launches {})", instances.join(", "))
                } else {
                    String::new()
                }
            );
        }
        Err(e) => return Err(e.into()),
    };
    match to_file {
        Some(o) => crate::files::output(o, draft.text.as_bytes())?,
        None => crate::files::stdout(&draft.text)?,
    }
    let fills = if draft.fills.is_empty() {
        "nothing to fill".to_string()
    } else {
        format!("{} to fill ({})", draft.fills.len(), draft.fills.join(", "))
    };
    eprintln!(
        "spec of `{}`{}: {fills}; {} guess(es) to check; then `hip-unroll spec check {}`",
        draft.kernel,
        to_file
            .map(|o| format!(" written to {}", o.display()))
            .unwrap_or_default(),
        draft.guesses,
        to_file
            .map(|o| o.display().to_string())
            .unwrap_or_else(|| "SPEC".into())
    );
    Ok(ExitCode::SUCCESS)
}

fn check(args: CheckArgs) -> anyhow::Result<ExitCode> {
    let mut worst = 0u8;
    let mut failed = false;
    for spec in &args.specs {
        crate::files::require_file(spec)?;
        let compile = config::discover(spec)?.config.compile;
        let cache_dir = args
            .cache_dir
            .clone()
            .or(compile.cache_dir.clone())
            .unwrap_or_else(default_cache_dir);
        let build = BuildOptions::from_config(cache_dir, &compile, args.nvcc.as_deref())?;
        let arch = args.arch.clone().or(compile.arch.clone());
        let targets = match (args.backend, arch) {
            (CheckBackend::Hip, a) => Some(vec![Target::Hip(
                a.unwrap_or(codeobj::compile::DEFAULT_ARCH.to_string()),
            )]),
            (CheckBackend::Cuda, a) => Some(vec![Target::Cuda(
                a.unwrap_or(DEFAULT_CUDA_ARCH.to_string()),
            )]),
            (CheckBackend::Auto, Some(a)) if a.starts_with("sm_") => Some(vec![Target::Cuda(a)]),
            (CheckBackend::Auto, Some(a)) => Some(vec![Target::Hip(a)]),
            (CheckBackend::Auto, None) => None,
        };
        let opts = CheckOptions {
            targets,
            build,
            include_dirs: include_dirs(&args.include, spec)?,
        };
        match specgen::check(spec, &opts) {
            Ok(c) => {
                let built: Vec<String> = c
                    .built
                    .iter()
                    .map(|b| match &b.compiler {
                        Some(cc) => format!("{} with {cc}", b.target.arch()),
                        None => format!("{} with hipcc", b.target.arch()),
                    })
                    .collect();
                let skipped: Vec<String> = c
                    .skipped
                    .iter()
                    .map(|(t, why)| format!("; {} left out: {why}", t.arch()))
                    .collect();
                crate::files::stdout(&format!(
                    "{}: ok: kernel `{}`, {} argument(s), built for {}{}\n",
                    spec.display(),
                    c.kernel,
                    c.args,
                    built.join(" and "),
                    skipped.join("")
                ))?;
            }
            Err(CheckError::Problem(p)) => {
                eprintln!("{p}");
                failed = true;
            }
            Err(e @ CheckError::Cannot { .. }) => {
                eprintln!(
                    "error: {e} (a machine without the compiler checks with the cache of one that has it: --cache-dir DIR)"
                );
                worst = 2;
            }
            Err(e) => {
                eprintln!("error: {e}");
                worst = 2;
            }
        }
    }
    if worst != 0 {
        return Ok(ExitCode::from(worst));
    }
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

#[cfg(test)]
mod tests {
    use super::relative;
    use std::path::{Path, PathBuf};

    #[test]
    fn source_paths_are_relative_to_the_spec() {
        assert_eq!(
            relative(Path::new("/a/b/specs"), Path::new("/a/b/src/k.cu")),
            PathBuf::from("../src/k.cu")
        );
        assert_eq!(
            relative(Path::new("/a/b"), Path::new("/a/b/k.cu")),
            PathBuf::from("k.cu")
        );
        assert_eq!(
            relative(Path::new("/a/./b/../b"), Path::new("/a/b/c/../k.cu")),
            PathBuf::from("k.cu")
        );
    }
}
