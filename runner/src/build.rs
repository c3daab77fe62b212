//! Compiling a spec's kernel for a target through `codeobj`'s content cache (hipcc `--genco` for
//! AMD, clang-19 to PTX with the prelude for NVIDIA), finding the kernel the spec names in the
//! result (instantiating a template kernel when needed), and checking the spec against its real
//! parameter list.

use crate::error::RunnerError;
use crate::signature::{self, KernelSig};
use crate::spec::Spec;
use codeobj::compile::{Compiler, Output};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// hipcc's command for AMD code objects.
pub const HIP_COMMAND: &str = codeobj::compile::DEFAULT_COMMAND;
/// clang's command for PTX (no CUDA toolkit: the prelude supplies what the headers would).
pub const CUDA_COMMAND: &str = "clang++-19 -x cuda --cuda-device-only --cuda-gpu-arch={arch} -nocudainc -nocudalib -Xclang -target-feature -Xclang +ptx78 -O3 -S {src} -o {out}";
/// The PTX target when none is given: runs (JIT-compiled by the driver) on sm_80 and newer.
pub const DEFAULT_CUDA_ARCH: &str = "sm_80";

/// What to compile for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "api", content = "arch", rename_all = "lowercase")]
pub enum Target {
    /// An AMD GPU, `gfx90a`.
    Hip(String),
    /// PTX for an NVIDIA GPU, `sm_80`.
    Cuda(String),
}

impl Target {
    pub fn arch(&self) -> &str {
        match self {
            Target::Hip(a) | Target::Cuda(a) => a,
        }
    }
}

/// Where and with what to compile.
#[derive(Debug, Clone)]
pub struct BuildOptions {
    pub cache_dir: PathBuf,
    /// Compile template for AMD (default [`HIP_COMMAND`]).
    pub hip_command: String,
    /// Compile template for NVIDIA (default [`CUDA_COMMAND`]).
    pub cuda_command: String,
}

impl BuildOptions {
    pub fn new(cache_dir: impl Into<PathBuf>) -> BuildOptions {
        BuildOptions {
            cache_dir: cache_dir.into(),
            hip_command: HIP_COMMAND.to_string(),
            cuda_command: CUDA_COMMAND.to_string(),
        }
    }
}

/// A compiled kernel, ready to load.
#[derive(Debug, Clone, Serialize)]
pub struct Built {
    pub source: PathBuf,
    pub target: Target,
    /// The cached object (code object or PTX).
    pub object: PathBuf,
    #[serde(skip)]
    pub image: Vec<u8>,
    pub signature: KernelSig,
    /// Taken from the cache without compiling.
    pub cached: bool,
    /// Taken from a carried cache because the compiler is not installed here.
    pub precompiled: bool,
    /// Static shared memory (LDS) of the kernel, when the object says it.
    pub static_shared: u32,
    /// The compute capability a PTX module needs.
    #[serde(skip)]
    pub ptx_cc: Option<(u32, u32)>,
}

/// The bare function name a spec's kernel names (`ns::stencil<4>` -> `stencil`), for the IR.
pub fn bare_name(kernel: &str) -> String {
    if kernel.starts_with("_Z") {
        return codeobj::metadata::base_name(kernel);
    }
    let no_targs = kernel.split('<').next().unwrap_or(kernel);
    no_targs
        .rsplit("::")
        .next()
        .unwrap_or(no_targs)
        .trim()
        .to_string()
}

fn compiler(spec: &Spec, target: &Target, opts: &BuildOptions) -> Result<Compiler, RunnerError> {
    let mut args: Vec<String> = spec
        .defines
        .iter()
        .map(|(k, v)| format!("-D{k}={v}"))
        .collect();
    args.extend(spec.flags.iter().cloned());
    Ok(match target {
        Target::Hip(arch) => {
            Compiler::new(opts.hip_command.clone(), arch.clone(), &opts.cache_dir).with_args(args)
        }
        Target::Cuda(arch) => {
            let (prelude, root) =
                crate::prelude::install(&opts.cache_dir).map_err(|error| RunnerError::Io {
                    path: opts.cache_dir.display().to_string(),
                    error,
                })?;
            let mut pre = vec![
                "-I".to_string(),
                root.display().to_string(),
                "-include".to_string(),
                prelude.display().to_string(),
            ];
            pre.extend(args);
            Compiler::new(opts.cuda_command.clone(), arch.clone(), &opts.cache_dir)
                .with_args(pre)
                .with_key_files([prelude])
                .with_output(Output::Text("ptx"))
        }
    })
}

/// The kernels of a compiled object: their symbols and signatures.
fn kernels(
    compiled: &codeobj::compile::Compiled,
    target: &Target,
    image: &[u8],
) -> Result<Vec<(KernelSig, u32)>, RunnerError> {
    match target {
        Target::Hip(arch) => {
            let co = compiled
                .code_objects
                .iter()
                .find(|c| &c.arch == arch)
                .or(compiled.code_objects.first())
                .ok_or_else(|| {
                    RunnerError::Build(format!(
                        "{}: no code object in the compiler's output",
                        compiled.object.display()
                    ))
                })?;
            Ok(co
                .kernels
                .iter()
                .map(|k| {
                    (
                        signature::from_amd(&k.meta),
                        k.meta.group_segment_fixed_size,
                    )
                })
                .collect())
        }
        Target::Cuda(_) => {
            let text = String::from_utf8_lossy(image);
            let m = crate::ptx::parse(&text)
                .map_err(|e| RunnerError::Build(format!("{}: {e}", compiled.object.display())))?;
            Ok(m.entries
                .iter()
                .map(|e| (signature::from_ptx(e), 0))
                .collect())
        }
    }
}

/// Compile `source` (the spec's, or a variant) for `target`, find the spec's kernel in it and
/// check the spec's arguments against its parameters.
pub fn build(
    spec: &Spec,
    source: &Path,
    target: &Target,
    opts: &BuildOptions,
) -> Result<Built, RunnerError> {
    let text = fsio::read_source(source).map_err(|e| RunnerError::Io {
        path: source.display().to_string(),
        error: e.into_io(),
    })?;
    if let Target::Cuda(_) = target {
        let file = frontend::parse(&text);
        let refusals = crate::prelude::refusals(&file, &bare_name(&spec.kernel));
        if !refusals.is_empty() {
            return Err(RunnerError::Refused {
                file: source.display().to_string(),
                refusals,
            });
        }
    }
    let compiler = compiler(spec, target, opts)?;
    let compile = |src: &Path| -> Result<(codeobj::compile::Compiled, Vec<u8>), RunnerError> {
        let c = compiler.compile(src).map_err(RunnerError::Compile)?;
        let image = std::fs::read(&c.object).map_err(|error| RunnerError::Io {
            path: c.object.display().to_string(),
            error,
        })?;
        Ok((c, image))
    };
    let (mut compiled, mut image) = compile(source)?;
    let mut found = kernels(&compiled, target, &image)?;
    let symbols = |found: &[(KernelSig, u32)]| {
        found
            .iter()
            .map(|(s, _)| s.symbol.clone())
            .collect::<Vec<_>>()
    };
    let mut symbol = signature::resolve(&symbols(&found), &spec.kernel);
    if symbol.is_err() && spec.kernel.contains('<') {
        // A template kernel the source does not instantiate: instantiate it in a wrapper.
        let wrapper = instance_wrapper(source, &spec.kernel, &opts.cache_dir)?;
        (compiled, image) = compile(&wrapper)?;
        found = kernels(&compiled, target, &image)?;
        symbol = signature::resolve(&symbols(&found), &spec.kernel);
    }
    let symbol = symbol.map_err(|m| RunnerError::Invalid {
        path: spec.path.display().to_string(),
        message: m,
    })?;
    let (sig, static_shared) = found
        .into_iter()
        .find(|(s, _)| s.symbol == symbol)
        .expect("resolved among these");
    signature::check_args(spec, &sig).map_err(|m| RunnerError::Invalid {
        path: spec.path.display().to_string(),
        message: m,
    })?;
    let ptx_cc = match target {
        Target::Cuda(_) => crate::ptx::parse(&String::from_utf8_lossy(&image))
            .ok()
            .and_then(|m| m.compute_capability()),
        Target::Hip(_) => None,
    };
    Ok(Built {
        source: source.to_path_buf(),
        target: target.clone(),
        object: compiled.object.clone(),
        image,
        signature: sig,
        cached: compiled.cached,
        precompiled: compiled.precompiled,
        static_shared,
        ptx_cc,
    })
}

/// A source that includes `source` and takes the address of `kernel` (`stencil<8>`) in host
/// code, which makes both hipcc and clang emit that instantiation.
fn instance_wrapper(source: &Path, kernel: &str, cache: &Path) -> Result<PathBuf, RunnerError> {
    let abs = std::fs::canonicalize(source).map_err(|error| RunnerError::Io {
        path: source.display().to_string(),
        error,
    })?;
    let text = format!(
        "// hip-unroll bench: instantiates {kernel} from {src}\n#include \"{src}\"\nstatic void* volatile hip_unroll_instance = reinterpret_cast<void*>(&{kernel});\n",
        src = abs.display()
    );
    let dir = cache.join("instances");
    let path = dir.join(format!(
        "{}.cu",
        &blake3::hash(text.as_bytes()).to_hex()[..24]
    ));
    let io = |error| RunnerError::Io {
        path: path.display().to_string(),
        error,
    };
    if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
        std::fs::create_dir_all(&dir).map_err(io)?;
        let tmp = dir.join(format!(".tmp-{}", std::process::id()));
        std::fs::write(&tmp, &text).map_err(io)?;
        std::fs::rename(&tmp, &path).map_err(io)?;
    }
    Ok(path)
}

#[cfg(test)]
mod tests {
    #[test]
    fn bare_names() {
        assert_eq!(super::bare_name("ns::stencil<4, float>"), "stencil");
        assert_eq!(super::bare_name("dot"), "dot");
        assert_eq!(super::bare_name("_Z3dotPKfS0_Pfi"), "dot");
    }
}
