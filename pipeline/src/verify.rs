//! Verification of a variant: compile the original and the variant with one compiler plus the
//! caller's extra flags (`-I`, `-D`, `-U`), and compare every kernel's argument layout.
//!
//! Which compiler ([`plan`]): the target named (`sm_XX`/`compute_XX`: NVIDIA, else AMD), the
//! compile command configured (nvcc: NVIDIA), else the file itself: one that can only be
//! compiled as CUDA (`frontend::tu::TranslationUnit::cuda_only`: a CUDA header and no HIP
//! one, an NVVM built-in, PTX assembly) goes to nvcc. AMD: hipcc `--genco` (or the command),
//! code objects compared by `codeobj::signature::compare`; NVIDIA: `nvcc -cubin` (or the
//! command) for the target, else the caller's device's, else `sm_80`, cubins compared by
//! `codeobj::signature::compare_cubins`. What the compiler wrote is read by its content, so a
//! command that writes the other vendor's object is said so, by the user's file name.
//! A header (`.cuh`, `.h`, `.hpp`, ...) is compiled as HIP (`-x hip`; `-x cu` for nvcc).
//!
//! Objects and the logs of failed compiles live in the compile cache (`CACHE/logs/KEY.log`),
//! which outlives the command, so a compile error's "full output" path exists when it is read.

use std::io::Write;
use std::path::{Path, PathBuf};

use codeobj::compile::{CompileError, Compiled, Compiler, Output, DEFAULT_ARCH, DEFAULT_COMMAND};
use codeobj::signature::Difference;
use frontend::tu::CudaOnly;

/// How to compile for verification.
#[derive(Debug, Clone)]
pub struct VerifyOptions {
    /// Command template with `{src}`, `{out}` and `{arch}` placeholders; `None`: hipcc for AMD,
    /// nvcc `-cubin` for NVIDIA.
    pub command: Option<String>,
    /// The target; `None`: gfx90a for AMD, the device's or `sm_80` for NVIDIA.
    pub arch: Option<String>,
    /// The nvcc of the NVIDIA route when no command is given (`None`: `nvcc` on `PATH`).
    pub nvcc: Option<PathBuf>,
    /// Appended to the command (`-I include`, `-DNDEBUG`), one argument each.
    pub extra_args: Vec<String>,
    /// Where compiled objects and the logs of failed compiles are kept.
    pub cache_dir: PathBuf,
    /// The time limit of each compile (`[compile] timeout`).
    pub timeout: std::time::Duration,
}

impl Default for VerifyOptions {
    fn default() -> Self {
        VerifyOptions {
            command: None,
            arch: None,
            nvcc: None,
            extra_args: Vec::new(),
            cache_dir: codeobj::compile::default_cache_dir(),
            timeout: codeobj::compile::DEFAULT_TIMEOUT,
        }
    }
}

/// Whose GPUs a verification compiles for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Vendor {
    Amd,
    Nvidia,
}

/// Why the compiler of a [`Plan`] was chosen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Why {
    /// The target named is this vendor's.
    Arch,
    /// The compile command given runs this compiler.
    Command,
    /// The file can only be compiled as CUDA.
    CudaOnly(CudaOnly),
    /// Nothing says otherwise: AMD.
    Default,
}

/// The compiler, target and object kind of one verification.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub vendor: Vendor,
    /// The command template (`{src}`, `{out}`, `{arch}`).
    pub command: String,
    pub arch: String,
    pub why: Why,
    /// For NVIDIA without a target named: where the target came from (`the device`, or the
    /// default).
    pub arch_from: Option<&'static str>,
}

impl Plan {
    /// The program the command runs, by its file name (`hipcc`, `nvcc`).
    pub fn program(&self) -> &str {
        let p = self.command.split_whitespace().next().unwrap_or_default();
        p.rsplit('/').next().unwrap_or(p)
    }
}

impl std::fmt::Display for Plan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let object = match self.vendor {
            Vendor::Amd => "code objects",
            Vendor::Nvidia => "cubins",
        };
        write!(f, "{} for {}", self.program(), self.arch)?;
        if let Some(from) = self.arch_from {
            write!(f, " ({from})")?;
        }
        write!(f, ", kernel signatures compared in the {object}")?;
        match &self.why {
            Why::CudaOnly(c) => write!(f, "; CUDA-only: {c}"),
            Why::Arch | Why::Command | Why::Default => Ok(()),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    #[error("cannot create a temporary file in {dir}: {error}")]
    Temp { dir: String, error: std::io::Error },
    #[error("compiling {what}: {error}")]
    Compile {
        what: String,
        error: Box<CompileError>,
    },
    #[error("the original has {original} code objects, the variant {variant}")]
    CodeObjectCount { original: usize, variant: usize },
    /// The compiler's output is not what its vendor's route reads.
    #[error("{compiler}'s output for {what} is {found}, not {wanted}: {detail}")]
    Output {
        compiler: String,
        what: String,
        found: &'static str,
        wanted: &'static str,
        detail: String,
    },
    /// An AMD target for a file only CUDA compiles.
    #[error("{file} can only be compiled as CUDA ({why}), and {arch} is an AMD architecture: verify it for an NVIDIA one (sm_80, sm_90, ...)")]
    AmdTargetForCuda {
        file: String,
        why: CudaOnly,
        arch: String,
    },
}

/// Extensions of headers: a compiler reads them as C/C++ headers, not as kernels.
const HEADER_EXTENSIONS: &[&str] = &[
    "cuh", "h", "hh", "hpp", "hxx", "h++", "inl", "ipp", "tpp", "tcc", "txx",
];

fn is_nvcc(command: &str) -> bool {
    let program = command.split_whitespace().next().unwrap_or_default();
    Path::new(program)
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("nvcc"))
}

fn is_nvidia_arch(arch: &str) -> bool {
    arch.starts_with("sm_") || arch.starts_with("compute_")
}

/// Choose the compiler and target for `file` (`cuda_only`: why it can only be compiled as
/// CUDA, if it can). `device_arch` is asked only for an NVIDIA route with no target named.
pub fn plan(
    file: &Path,
    opts: &VerifyOptions,
    cuda_only: Option<CudaOnly>,
    device_arch: impl FnOnce() -> Option<String>,
) -> Result<Plan, VerifyError> {
    let (vendor, why) = match (&opts.arch, &opts.command) {
        (Some(a), _) if is_nvidia_arch(a) => (Vendor::Nvidia, Why::Arch),
        (_, Some(c)) if is_nvcc(c) => (Vendor::Nvidia, Why::Command),
        (Some(_), _) => (Vendor::Amd, Why::Arch),
        (None, Some(_)) => (Vendor::Amd, Why::Command),
        (None, None) => match &cuda_only {
            Some(c) => (Vendor::Nvidia, Why::CudaOnly(c.clone())),
            None => (Vendor::Amd, Why::Default),
        },
    };
    // A configured AMD target for a file only CUDA compiles, with no command to say how.
    if let (Vendor::Amd, Why::Arch, None, Some(c)) = (vendor, &why, &opts.command, &cuda_only) {
        return Err(VerifyError::AmdTargetForCuda {
            file: file.display().to_string(),
            why: c.clone(),
            arch: opts.arch.clone().unwrap_or_default(),
        });
    }
    let (arch, arch_from) = match (&opts.arch, vendor) {
        (Some(a), _) => (a.clone(), None),
        (None, Vendor::Amd) => (DEFAULT_ARCH.to_string(), None),
        (None, Vendor::Nvidia) => match device_arch() {
            Some(a) => (a, Some("the device's")),
            None => (
                codeobj::cubin::DEFAULT_ARCH.to_string(),
                Some("no device to ask"),
            ),
        },
    };
    let command = match (&opts.command, vendor) {
        (Some(c), _) => c.clone(),
        (None, Vendor::Amd) => DEFAULT_COMMAND.to_string(),
        (None, Vendor::Nvidia) => {
            let nvcc = opts
                .nvcc
                .as_ref()
                .map_or("nvcc".to_string(), |p| p.display().to_string());
            format!("{nvcc} -cubin -arch={{arch}} -O3 {{src}} -o {{out}}")
        }
    };
    Ok(Plan {
        vendor,
        command,
        arch,
        why,
        arch_from,
    })
}

/// For a header, the arguments that make the compiler read it as GPU source, placed before the
/// file on the command line: `-x cu` for nvcc, `-x hip` for any other compiler (hipcc, clang).
fn language_args(file: &Path, command: &str) -> impl Iterator<Item = String> {
    let header = file
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| HEADER_EXTENSIONS.contains(&e.to_ascii_lowercase().as_str()));
    let lang = if is_nvcc(command) { "cu" } else { "hip" };
    header
        .then(|| ["-x".to_string(), lang.to_string()])
        .into_iter()
        .flatten()
}

/// The kernels of one compile, as its vendor's route reads them.
enum Kernels {
    Amd(Vec<codeobj::CodeObject>),
    Nvidia(Vec<codeobj::cubin::CubinKernel>),
}

/// Compile `original` (a file) and `variant` (its rewritten bytes, written to a temporary file
/// beside the original so that relative includes resolve, and removed afterwards) as `plan`
/// says and return the differences in kernel argument layouts (empty: the variant is a
/// drop-in replacement).
pub fn verify(
    original: &Path,
    variant: &[u8],
    plan: &Plan,
    opts: &VerifyOptions,
) -> Result<Vec<Difference>, VerifyError> {
    let dir = match original.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let ext = original
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("cu");
    let temp_err = |error| VerifyError::Temp {
        dir: dir.display().to_string(),
        error,
    };
    let mut tmp = tempfile::Builder::new()
        .prefix(".hip-unroll-verify-")
        .suffix(&format!(".{ext}"))
        .tempfile_in(&dir)
        .map_err(temp_err)?;
    tmp.write_all(variant)
        .and_then(|_| tmp.flush())
        .map_err(temp_err)?;
    let output = match plan.vendor {
        Vendor::Amd => Output::CodeObject,
        Vendor::Nvidia => Output::Cubin,
    };
    let compiler = Compiler::new(plan.command.clone(), plan.arch.clone(), &opts.cache_dir)
        .with_args(language_args(original, &plan.command).chain(opts.extra_args.iter().cloned()))
        .with_output(output)
        .with_timeout(opts.timeout);
    let mut results = compiler.compile_all(&[original, tmp.path()]).into_iter();
    let shown = original.display().to_string();
    let variant_name = format!("the variant of {shown}");
    let a = results.next().expect("two results");
    let b = results.next().expect("two results");
    let a = kernels(a, plan, &shown, &shown)?;
    // The variant's temporary file is gone once this returns: its errors name the user's file.
    let b = kernels(b, plan, &variant_name, &format!("{shown} (variant)"))?;
    match (a, b) {
        (Kernels::Amd(a), Kernels::Amd(b)) => {
            if a.len() != b.len() {
                return Err(VerifyError::CodeObjectCount {
                    original: a.len(),
                    variant: b.len(),
                });
            }
            let mut diffs = Vec::new();
            for (x, y) in a.iter().zip(&b) {
                diffs.extend(codeobj::signature::compare(x, y));
            }
            Ok(diffs)
        }
        (Kernels::Nvidia(a), Kernels::Nvidia(b)) => Ok(codeobj::signature::compare_cubins(&a, &b)),
        _ => unreachable!("one plan, one object kind"),
    }
}

/// The kernels of one compile's result; `what` names the source in messages, `file` replaces
/// the temporary file's name in a compile error.
fn kernels(
    result: Result<Compiled, CompileError>,
    plan: &Plan,
    what: &str,
    file: &str,
) -> Result<Kernels, VerifyError> {
    let compile = |error: CompileError| VerifyError::Compile {
        what: what.to_string(),
        error: Box::new(error),
    };
    let wrong = |found: &'static str, wanted: &'static str, detail: String| VerifyError::Output {
        compiler: plan.program().to_string(),
        what: what.to_string(),
        found,
        wanted,
        detail,
    };
    let compiled = match result {
        Ok(c) => c,
        Err(CompileError::Load(e)) => {
            return Err(wrong(
                "not an AMDGPU code object",
                "a code object",
                format!("{e}; an NVIDIA target (sm_80) or nvcc takes the cubin route"),
            ))
        }
        Err(CompileError::Failed {
            program,
            status,
            stderr,
            log,
            ..
        }) => {
            return Err(compile(CompileError::Failed {
                program,
                source_file: file.to_string(),
                status,
                stderr,
                log,
            }))
        }
        Err(CompileError::Timeout {
            program,
            command,
            limit,
            ..
        }) => {
            return Err(compile(CompileError::Timeout {
                program,
                source_file: file.to_string(),
                command,
                limit,
            }))
        }
        Err(e) => return Err(compile(e)),
    };
    match plan.vendor {
        Vendor::Amd => Ok(Kernels::Amd(compiled.code_objects)),
        Vendor::Nvidia => {
            let bytes = fsio::read(&compiled.object, fsio::OBJECT_CAP, "a cubin")
                .map_err(|e| wrong("unreadable", "an NVIDIA cubin", e.reason()))?;
            if !codeobj::cubin::is_cubin(&bytes) {
                let found = if bytes.starts_with(b"\x7fELF") {
                    "an ELF file for another machine"
                } else {
                    "not an ELF file (PTX or a fat binary?)"
                };
                return Err(wrong(
                    found,
                    "an NVIDIA cubin",
                    "the command must write a cubin (nvcc -cubin)".to_string(),
                ));
            }
            codeobj::cubin::parse(&bytes)
                .map(Kernels::Nvidia)
                .map_err(|e| wrong("a malformed cubin", "an NVIDIA cubin", e.to_string()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(command: Option<&str>, arch: Option<&str>) -> VerifyOptions {
        VerifyOptions {
            command: command.map(str::to_string),
            arch: arch.map(str::to_string),
            nvcc: Some(PathBuf::from("/opt/cuda/bin/nvcc")),
            ..VerifyOptions::default()
        }
    }

    #[test]
    fn the_plan_follows_target_command_and_file() {
        let f = Path::new("k.cu");
        let cuda = Some(CudaOnly::Header("cuda_runtime.h".into()));
        let device = || Some("sm_90".to_string());
        let p = plan(f, &opts(None, None), None, device).unwrap();
        assert_eq!(
            (p.vendor, p.arch.as_str(), p.program()),
            (Vendor::Amd, "gfx90a", "hipcc")
        );
        let p = plan(f, &opts(None, None), cuda.clone(), device).unwrap();
        assert_eq!(
            (p.vendor, p.arch.as_str(), p.program()),
            (Vendor::Nvidia, "sm_90", "nvcc")
        );
        assert!(p
            .command
            .starts_with("/opt/cuda/bin/nvcc -cubin -arch={arch}"));
        assert_eq!(
            p.to_string(),
            "nvcc for sm_90 (the device's), kernel signatures compared in the cubins; CUDA-only: it includes cuda_runtime.h"
        );
        let p = plan(f, &opts(None, None), cuda.clone(), || None).unwrap();
        assert_eq!(p.arch, "sm_80");
        let p = plan(f, &opts(None, Some("sm_75")), None, device).unwrap();
        assert_eq!(
            (p.vendor, p.arch.as_str(), p.why.clone()),
            (Vendor::Nvidia, "sm_75", Why::Arch)
        );
        let p = plan(
            f,
            &opts(Some("nvcc -cubin -arch={arch} {src} -o {out}"), None),
            None,
            device,
        )
        .unwrap();
        assert_eq!((p.vendor, p.why.clone()), (Vendor::Nvidia, Why::Command));
        let p = plan(
            f,
            &opts(Some("hipcc --genco {src} -o {out}"), None),
            cuda.clone(),
            device,
        )
        .unwrap();
        assert_eq!((p.vendor, p.arch.as_str()), (Vendor::Amd, "gfx90a"));
        let e = plan(f, &opts(None, Some("gfx942")), cuda, device).unwrap_err();
        assert!(
            e.to_string().contains("can only be compiled as CUDA"),
            "{e}"
        );
    }
}
