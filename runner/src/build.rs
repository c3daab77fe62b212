//! Compiling a spec's kernel for a target through `codeobj`'s content cache (hipcc `--genco` for
//! AMD; for NVIDIA, nvcc to PTX with the CUDA toolkit's headers when [`find_nvcc`] finds one,
//! else clang-19 to PTX with the prelude), finding the kernel the spec names in the result
//! (instantiating a template kernel when needed), and checking the spec against its real
//! parameter list.
//!
//! Nothing here puts a path into a cache key: a template kernel's wrapper includes the source by
//! its file name (its directory is an include directory), and the headers hip-unroll writes
//! (prelude, HIP mapping) enter the key by name and content. A cache built in one directory
//! serves a copy of the tree in another, a `tune` working copy, or another machine.

use crate::error::RunnerError;
use crate::signature::{self, KernelSig};
use crate::spec::Spec;
use codeobj::compile::{CompileError, Compiler, Output};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// hipcc's command for AMD code objects.
pub const HIP_COMMAND: &str = codeobj::compile::DEFAULT_COMMAND;
/// nvcc's arguments for PTX, after the program (the device code only; `-O3` is nvcc's default
/// for device code).
pub const NVCC_PTX_ARGS: &str = "-ptx -arch={arch} {src} -o {out}";
/// nvcc's arguments for a cubin with ptxas's register and spill report, the PTX it was
/// assembled from kept beside it (`{keep}`): the tuner's gates read the cubin and its report,
/// the runner loads the cubin and reads the kernel's signature from the PTX, so a variant the
/// gates compiled is built for the GPU without a second compile.
pub const NVCC_CUBIN_ARGS: &str =
    "-cubin -arch={arch} -Xptxas -v --keep --keep-dir {keep} {src} -o {out}";
/// clang's command for PTX when there is no nvcc (no CUDA toolkit: the prelude supplies what
/// the headers would).
pub const CLANG_COMMAND: &str = "clang++-19 -x cuda --cuda-device-only --cuda-gpu-arch={arch} -nocudainc -nocudalib -Xclang -target-feature -Xclang +ptx78 -O3 -S {src} -o {out}";
/// The PTX target when neither `--arch` nor a device says: runs (JIT-compiled by the driver) on
/// sm_80 and newer.
pub const DEFAULT_CUDA_ARCH: &str = codeobj::cubin::DEFAULT_ARCH;
/// How nvcc is installed where it is not (the error names it).
pub const NVCC_INSTALL: &str = "pip install nvidia-cuda-nvcc==13.0.88 nvidia-cuda-runtime==13.0.96 nvidia-cuda-crt==13.0.88 nvidia-cuda-cccl==13.0.85 nvidia-nvvm==13.0.88 (into a venv; nvcc is then site-packages/nvidia/cu13/bin/nvcc), or the CUDA toolkit";

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

/// Which compiler builds for NVIDIA.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CudaCompiler {
    /// nvcc (its path) with the CUDA toolkit's headers.
    Nvcc(PathBuf),
    /// clang-19 with hip-unroll's prelude (no toolkit): the fallback.
    Clang,
}

impl std::fmt::Display for CudaCompiler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CudaCompiler::Nvcc(p) => write!(f, "nvcc ({})", p.display()),
            CudaCompiler::Clang => f.write_str("clang++-19 with hip-unroll's prelude"),
        }
    }
}

/// Where nvcc is: `explicit` (`--nvcc PATH`), then `configured` (`[compile] nvcc`), then
/// `$CUDA_HOME/bin/nvcc`, then `nvcc` on `PATH`; `Ok(None)` when none of them has one. A path
/// given explicitly or configured must be a file.
pub fn find_nvcc(
    explicit: Option<&Path>,
    configured: Option<&Path>,
) -> Result<Option<PathBuf>, RunnerError> {
    for (given, what) in [(explicit, "--nvcc"), (configured, "[compile] nvcc")] {
        if let Some(p) = given {
            if !p.is_file() {
                return Err(RunnerError::Build(format!(
                    "{what} {}: no such file",
                    p.display()
                )));
            }
            return checked_nvcc(p.to_path_buf(), what).map(Some);
        }
    }
    if let Some(home) = std::env::var_os("CUDA_HOME").filter(|h| !h.is_empty()) {
        let p = PathBuf::from(home).join("bin").join("nvcc");
        if p.is_file() {
            return checked_nvcc(p, "$CUDA_HOME").map(Some);
        }
    }
    if let Some(path) = std::env::var_os("PATH") {
        if let Some(p) = std::env::split_paths(&path)
            .map(|d| d.join("nvcc"))
            .find(|p| p.is_file())
        {
            return checked_nvcc(p, "PATH").map(Some);
        }
    }
    Ok(None)
}

/// nvcc's path goes into a command split on whitespace.
fn checked_nvcc(p: PathBuf, what: &str) -> Result<PathBuf, RunnerError> {
    if p.to_string_lossy().chars().any(char::is_whitespace) {
        return Err(RunnerError::Build(format!(
            "{what}: nvcc's path `{}` contains white space, which hip-unroll's compile commands cannot hold; link it from a path without",
            p.display()
        )));
    }
    Ok(p)
}

/// Where and with what to compile.
#[derive(Debug, Clone)]
pub struct BuildOptions {
    pub cache_dir: PathBuf,
    /// Compile template for AMD (default [`HIP_COMMAND`]).
    pub hip_command: String,
    /// nvcc for NVIDIA targets; `None`: clang-19 with the prelude ([`CLANG_COMMAND`]).
    pub nvcc: Option<PathBuf>,
    /// Compile template of the clang fallback (default [`CLANG_COMMAND`]).
    pub clang_command: String,
    /// How long one compile may take (default: `codeobj::compile`'s).
    pub timeout: Option<std::time::Duration>,
}

impl BuildOptions {
    /// Options with nvcc found as [`find_nvcc`] finds it with nothing given (`$CUDA_HOME`,
    /// `PATH`); one that cannot be used (white space in its path) is left out.
    pub fn new(cache_dir: impl Into<PathBuf>) -> BuildOptions {
        BuildOptions {
            cache_dir: cache_dir.into(),
            hip_command: HIP_COMMAND.to_string(),
            nvcc: find_nvcc(None, None).ok().flatten(),
            clang_command: CLANG_COMMAND.to_string(),
            timeout: None,
        }
    }

    /// The options a `[compile]` section of `hip-unroll.toml` gives (`command`, `nvcc`,
    /// `timeout`; `cache-dir` is the caller's, which may have its own): the command line's
    /// `nvcc` first, as [`find_nvcc`] orders them.
    pub fn from_config(
        cache_dir: impl Into<PathBuf>,
        compile: &config::CompileSection,
        nvcc_arg: Option<&Path>,
    ) -> Result<BuildOptions, RunnerError> {
        let mut o =
            BuildOptions::new(cache_dir).with_nvcc(find_nvcc(nvcc_arg, compile.nvcc.as_deref())?);
        if let Some(c) = &compile.command {
            o.hip_command = c.clone();
        }
        o.timeout = compile.timeout.map(std::time::Duration::from_secs);
        Ok(o)
    }

    /// The same options with this nvcc (`None`: the clang fallback).
    pub fn with_nvcc(mut self, nvcc: Option<PathBuf>) -> BuildOptions {
        self.nvcc = nvcc;
        self
    }

    /// The compiler NVIDIA targets are built with.
    pub fn cuda_compiler(&self) -> CudaCompiler {
        match &self.nvcc {
            Some(p) => CudaCompiler::Nvcc(p.clone()),
            None => CudaCompiler::Clang,
        }
    }
}

/// A compiled kernel, ready to load.
#[derive(Debug, Clone, Serialize)]
pub struct Built {
    pub source: PathBuf,
    pub target: Target,
    /// What compiled it, for NVIDIA targets (`None` for AMD).
    pub compiler: Option<CudaCompiler>,
    /// The cached object (code object, PTX, or nvcc's cubin).
    pub object: PathBuf,
    /// The code object (AMD) or the PTX (NVIDIA).
    #[serde(skip)]
    pub image: Vec<u8>,
    /// nvcc's machine code for the target (NVIDIA): loaded instead of the PTX on a device of
    /// the target's own architecture (no JIT at load), and what `same code` compares.
    #[serde(skip)]
    pub cubin: Option<Vec<u8>>,
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

impl Built {
    /// Whether `other` is the same code: the same code object, the same cubin (the same
    /// machine code), or else the same PTX once comments are left out (a variant that compiles
    /// to this has nothing to time).
    pub fn same_code(&self, other: &Built) -> bool {
        self.target == other.target
            && match (&self.target, &self.cubin, &other.cubin) {
                (Target::Hip(_), _, _) => self.image == other.image,
                (Target::Cuda(_), Some(a), Some(b)) => a == b,
                (Target::Cuda(_), _, _) => ptx_code(&self.image) == ptx_code(&other.image),
            }
    }

    /// What to load on a device of architecture `device_arch` (`sm_90`): the cubin when it was
    /// assembled for that very architecture, else the code object or PTX.
    pub fn loadable(&self, device_arch: Option<&str>) -> &[u8] {
        match (&self.target, &self.cubin, device_arch) {
            (Target::Cuda(arch), Some(cubin), Some(dev)) if arch == dev => cubin,
            _ => &self.image,
        }
    }
}

/// PTX without its comment lines (compiler banners).
fn ptx_code(image: &[u8]) -> Vec<&[u8]> {
    image
        .split(|&b| b == b'\n')
        .filter(|l| !l.trim_ascii_start().starts_with(b"//"))
        .collect()
}

/// The spec's defines and flags as compiler arguments ([`spec_flags`]).
pub fn spec_args(spec: &Spec) -> Vec<String> {
    let mut args: Vec<String> = spec
        .defines
        .iter()
        .map(|(k, v)| format!("-D{k}={v}"))
        .collect();
    args.extend(spec_flags(spec));
    args
}

/// The spec's flags as every compiler gets them. A file included before the source
/// (`-include NAME`, `-include=NAME`, `--pre-include NAME`, `--pre-include=NAME`: nvcc knows
/// them all, clang and hipcc only the first; `-imacros NAME`, `-imacros=NAME`) is passed as
/// `-include NAME` (`-imacros NAME`), NAME resolved as the spec's other paths are: the file of
/// that name in the spec's directory when there is one, else NAME as written, which the
/// compiler looks up itself (its working directory, the `-I` directories, its own headers:
/// `-include stdlib.h`). The other flags pass unchanged.
pub fn spec_flags(spec: &Spec) -> Vec<String> {
    let dir = spec
        .path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let words: Vec<&str> = spec.flags.iter().map(String::as_str).collect();
    let mut out = Vec::with_capacity(words.len());
    let mut i = 0;
    while i < words.len() {
        match codeobj::compile::file_option(&words, i) {
            Some((opt, file, n)) => {
                out.push(if opt == "-imacros" { opt } else { "-include" }.to_string());
                if let Some(f) = file {
                    let beside = dir.join(f);
                    out.push(match std::path::absolute(&beside) {
                        Ok(p) if Path::new(f).is_relative() && beside.is_file() => {
                            p.display().to_string()
                        }
                        _ => f.to_string(),
                    });
                }
                i += n;
            }
            None => {
                out.push(words[i].to_string());
                i += 1;
            }
        }
    }
    out
}

fn io_at(path: &Path) -> impl Fn(std::io::Error) -> RunnerError + '_ {
    move |error| RunnerError::Io {
        path: path.display().to_string(),
        error,
    }
}

/// nvcc for `arch` with the HIP mapping on the include path, then `args`: PTX, or with `cubin`
/// a cubin whose ptxas report is kept ([`Output::Cubin`]).
pub fn nvcc_compiler(
    nvcc: &Path,
    arch: &str,
    cache_dir: &Path,
    cubin: bool,
    args: Vec<String>,
) -> Result<Compiler, RunnerError> {
    let root = crate::prelude::install_hip_map(cache_dir).map_err(io_at(cache_dir))?;
    let mut all = vec!["-I".to_string(), root.display().to_string()];
    all.extend(args);
    let (rest, output) = if cubin {
        (NVCC_CUBIN_ARGS, Output::Cubin)
    } else {
        (NVCC_PTX_ARGS, Output::Text("ptx"))
    };
    Ok(
        Compiler::new(format!("{} {rest}", nvcc.display()), arch, cache_dir)
            .with_args(all)
            .with_output(output),
    )
}

/// The identity of the compiler NVIDIA targets are built with here (`--version`, see
/// [`Compiler::identity`]), `None` where none is installed: part of the tuner's fingerprint.
pub fn cuda_identity(opts: &BuildOptions, arch: &str) -> Option<String> {
    let c = match &opts.nvcc {
        Some(p) => Compiler::new(
            format!("{} {NVCC_PTX_ARGS}", p.display()),
            arch,
            &opts.cache_dir,
        ),
        None => Compiler::new(opts.clang_command.clone(), arch, &opts.cache_dir),
    };
    c.identity().ok()
}

/// clang-19 for `arch` with the prelude, then `args`.
fn clang_compiler(
    command: &str,
    arch: &str,
    cache_dir: &Path,
    args: Vec<String>,
) -> Result<Compiler, RunnerError> {
    let (prelude, root) = crate::prelude::install(cache_dir).map_err(io_at(cache_dir))?;
    let mut pre = vec![
        "-I".to_string(),
        root.display().to_string(),
        "-include".to_string(),
        prelude.display().to_string(),
    ];
    pre.extend(args);
    Ok(Compiler::new(command, arch, cache_dir)
        .with_args(pre)
        .with_output(Output::Text("ptx")))
}

/// The compilers to try in order, each with what it is: one, or, where neither nvcc nor clang
/// is installed, both (a carried cache may hold either's objects).
fn compilers(
    spec: &Spec,
    target: &Target,
    opts: &BuildOptions,
    extra: &[String],
) -> Result<Vec<(Compiler, Option<CudaCompiler>)>, RunnerError> {
    // The spec's defines and flags, then `extra` (an instance wrapper's `-I`): in the order the
    // tuner's gates add them, so that a gate's compile of a wrapper is the runner's.
    let mut args = spec_args(spec);
    args.extend(extra.iter().cloned());
    let list = match target {
        Target::Hip(arch) => vec![(
            Compiler::new(opts.hip_command.clone(), arch.clone(), &opts.cache_dir).with_args(args),
            None,
        )],
        Target::Cuda(arch) => {
            // The gates' compiler (cubin, its PTX kept): one compile serves both.
            let nvcc = |p: &Path| nvcc_compiler(p, arch, &opts.cache_dir, true, args.clone());
            let clang = || clang_compiler(&opts.clang_command, arch, &opts.cache_dir, args.clone());
            match &opts.nvcc {
                Some(p) => vec![(nvcc(p)?, Some(CudaCompiler::Nvcc(p.clone())))],
                None => {
                    let c = clang()?;
                    if c.available() {
                        vec![(c, Some(CudaCompiler::Clang))]
                    } else {
                        // Keys hold nvcc by its name: the carried objects of any nvcc serve.
                        vec![
                            (
                                nvcc(Path::new("nvcc"))?,
                                Some(CudaCompiler::Nvcc("nvcc".into())),
                            ),
                            (c, Some(CudaCompiler::Clang)),
                        ]
                    }
                }
            }
        }
    };
    Ok(list
        .into_iter()
        .map(|(c, what)| match opts.timeout {
            Some(t) => (c.with_timeout(t), what),
            None => (c, what),
        })
        .collect())
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
        let refusals = crate::prelude::refusals(&file, &spec.kernel);
        if !refusals.is_empty() {
            return Err(RunnerError::Refused {
                file: source.display().to_string(),
                refusals,
            });
        }
    }
    let (mut compiled, mut image, mut cubin, mut compiler) =
        compile(spec, target, opts, source, &[])?;
    let mut found = kernels(&compiled, target, &image)?;
    let symbols = |found: &[(KernelSig, u32)]| {
        found
            .iter()
            .map(|(s, _)| s.symbol.clone())
            .collect::<Vec<_>>()
    };
    let mut symbol = signature::resolve(&symbols(&found), &spec.kernel);
    if symbol.is_err() && spec.kernel.contains('<') {
        // A template kernel the source does not instantiate: instantiate it in a wrapper that
        // includes the source by name, from the source's directory.
        let wrapper = instance_wrapper(source, &spec.kernel, &opts.cache_dir)?;
        let inc = instance_args(source);
        (compiled, image, cubin, compiler) = compile(spec, target, opts, &wrapper, &inc)?;
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
        compiler,
        object: compiled.object.clone(),
        image,
        cubin,
        signature: sig,
        cached: compiled.cached,
        precompiled: compiled.precompiled,
        static_shared,
        ptx_cc,
    })
}

/// What an [`instance_wrapper`] of `source` is compiled with, after the spec's flags: `-I` the
/// source's directory.
pub fn instance_args(source: &Path) -> Vec<String> {
    let dir = source
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    vec!["-I".to_string(), dir.display().to_string()]
}

/// The compile, its image (code object or PTX), nvcc's cubin, and what compiled it.
type Compiled = (
    codeobj::compile::Compiled,
    Vec<u8>,
    Option<Vec<u8>>,
    Option<CudaCompiler>,
);

/// Compile `src` with the first compiler that can serve it (see [`compilers`]).
fn compile(
    spec: &Spec,
    target: &Target,
    opts: &BuildOptions,
    src: &Path,
    extra: &[String],
) -> Result<Compiled, RunnerError> {
    let candidates = compilers(spec, target, opts, extra)?;
    let several = candidates.len() > 1;
    let mut missing = None;
    for (c, which) in candidates {
        match c.compile(src) {
            Ok(done) => {
                let object = std::fs::read(&done.object).map_err(io_at(&done.object))?;
                if c.output != Output::Cubin {
                    return Ok((done, object, None, which));
                }
                let Some(ptx) = &done.ptx else {
                    return Err(RunnerError::Build(format!(
                        "{}: no PTX beside this cubin in the cache (built by an older hip-unroll?): remove it and build again",
                        done.object.display()
                    )));
                };
                let image = std::fs::read(ptx).map_err(io_at(ptx))?;
                return Ok((done, image, Some(object), which));
            }
            Err(e @ CompileError::CompilerMissing { .. }) => {
                missing.get_or_insert(e);
            }
            Err(e) => return Err(RunnerError::Compile(e)),
        }
    }
    let e = missing.expect("at least one compiler");
    Err(match (several, e) {
        (true, CompileError::CompilerMissing { command, error, .. }) => {
            RunnerError::Compile(CompileError::CompilerMissing {
                program: "neither nvcc nor clang++-19".into(),
                command,
                error,
            })
        }
        (_, e) => RunnerError::Compile(e),
    })
}

/// A source that includes `source` by its file name (the caller adds its directory with `-I`,
/// [`instance_args`]) and takes the address of `kernel` (`stencil<8>`) in host code, which makes
/// hipcc, nvcc and clang emit that instantiation. Its text, and so its key, holds no directory.
/// Written once into `cache`'s `instances/`; the tuner's gates compile the same wrapper, so
/// that they judge the code the GPU runs.
pub fn instance_wrapper(source: &Path, kernel: &str, cache: &Path) -> Result<PathBuf, RunnerError> {
    let name = source
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| RunnerError::Build(format!("{}: not a file name", source.display())))?;
    let text = format!(
        "// hip-unroll bench: instantiates {kernel} from {name}\n#include \"{name}\"\nstatic void* volatile hip_unroll_instance = reinterpret_cast<void*>(&{kernel});\n"
    );
    let dir = cache.join("instances");
    let path = dir.join(format!(
        "{}.cu",
        &blake3::hash(text.as_bytes()).to_hex()[..24]
    ));
    if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
        let io = io_at(&path);
        std::fs::create_dir_all(&dir).map_err(&io)?;
        static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let tmp = dir.join(format!(".tmp-{}-{n}", std::process::id()));
        std::fs::write(&tmp, &text).map_err(&io)?;
        std::fs::rename(&tmp, &path).map_err(&io)?;
    }
    Ok(path)
}
