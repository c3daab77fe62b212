//! Compiling kernels for the `vgpr-pressure` guard: runs a compile command template
//! (`{src}`, `{out}`, `{arch}` placeholders), in parallel, and caches each object under a
//! content hash (blake3 of the source bytes, the expanded command and the compiler's
//! `--version` output). The only module of `codeobj` that does I/O besides [`crate::load`].
//!
//! Limitation: headers a source includes are not part of the hash.

use crate::{CodeObject, LoadError};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use thiserror::Error;

/// hipcc 5.x/6.x: a code object (an offload bundle) for one target.
pub const DEFAULT_COMMAND: &str = "hipcc --offload-arch={arch} --genco -O3 {src} -o {out}";
pub const DEFAULT_ARCH: &str = "gfx90a";

#[derive(Debug, Error)]
pub enum CompileError {
    #[error("compile command is empty")]
    EmptyCommand,
    #[error("compile command `{0}` lacks the {{src}} or {{out}} placeholder")]
    MissingPlaceholder(String),
    #[error("compiler `{program}` not found or not runnable (command: `{command}`): {error}")]
    CompilerMissing {
        program: String,
        command: String,
        error: std::io::Error,
    },
    #[error("`{command}` failed ({status}):\n{stderr}")]
    Failed {
        command: String,
        status: String,
        stderr: String,
    },
    #[error("{path}: {error}")]
    Io { path: String, error: std::io::Error },
    #[error("{0}")]
    Load(LoadError),
}

/// A compile command and where its results are cached.
#[derive(Debug, Clone)]
pub struct Compiler {
    /// The template, e.g. [`DEFAULT_COMMAND`]; split on whitespace into arguments (no shell).
    pub command: String,
    pub arch: String,
    pub cache_dir: PathBuf,
    /// Arguments appended to every expanded command (`-I dir`, `-D NAME=1`); part of the cache
    /// key.
    pub extra_args: Vec<String>,
}

/// A compiled source.
#[derive(Debug, Clone)]
pub struct Compiled {
    pub source: PathBuf,
    /// The cached object file.
    pub object: PathBuf,
    /// Whether it came from the cache without running the compiler.
    pub cached: bool,
    pub code_objects: Vec<CodeObject>,
}

static VERSIONS: Mutex<Option<HashMap<String, String>>> = Mutex::new(None);
static COUNTER: AtomicU64 = AtomicU64::new(0);

impl Compiler {
    pub fn new(
        command: impl Into<String>,
        arch: impl Into<String>,
        cache_dir: impl Into<PathBuf>,
    ) -> Self {
        Compiler {
            command: command.into(),
            arch: arch.into(),
            cache_dir: cache_dir.into(),
            extra_args: Vec::new(),
        }
    }

    /// The same compiler with `args` appended to every command.
    pub fn with_args(mut self, args: impl IntoIterator<Item = String>) -> Self {
        self.extra_args.extend(args);
        self
    }

    /// The argument vector for one compile.
    pub fn argv(&self, src: &Path, out: &Path) -> Result<Vec<String>, CompileError> {
        if !self.command.contains("{src}") || !self.command.contains("{out}") {
            return Err(CompileError::MissingPlaceholder(self.command.clone()));
        }
        let src = src.display().to_string();
        let out = out.display().to_string();
        let argv: Vec<String> = self
            .command
            .split_whitespace()
            .map(|t| {
                t.replace("{arch}", &self.arch)
                    .replace("{src}", &src)
                    .replace("{out}", &out)
            })
            .chain(self.extra_args.iter().cloned())
            .collect();
        if argv.is_empty() {
            return Err(CompileError::EmptyCommand);
        }
        Ok(argv)
    }

    /// The compiler's identity: its `--version` output (memoised per program).
    pub fn identity(&self) -> Result<String, CompileError> {
        let program = self
            .command
            .split_whitespace()
            .next()
            .ok_or(CompileError::EmptyCommand)?
            .to_string();
        if let Some(v) = VERSIONS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_or_insert_with(HashMap::new)
            .get(&program)
        {
            return Ok(v.clone());
        }
        let out = Command::new(&program)
            .arg("--version")
            .output()
            .map_err(|error| CompileError::CompilerMissing {
                program: program.clone(),
                command: self.command.clone(),
                error,
            })?;
        let v = String::from_utf8_lossy(&out.stdout).into_owned();
        VERSIONS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_or_insert_with(HashMap::new)
            .insert(program, v.clone());
        Ok(v)
    }

    /// The cache key of a source: blake3(source bytes, expanded command, compiler identity).
    pub fn cache_key(&self, source: &[u8]) -> Result<String, CompileError> {
        let mut h = blake3::Hasher::new();
        h.update(b"hip-unroll compile v1\0");
        h.update(&(source.len() as u64).to_le_bytes());
        h.update(source);
        h.update(b"\0");
        h.update(self.command.replace("{arch}", &self.arch).as_bytes());
        h.update(b"\0");
        for a in &self.extra_args {
            h.update(a.as_bytes());
            h.update(b"\0");
        }
        h.update(self.identity()?.as_bytes());
        Ok(h.finalize().to_hex().to_string())
    }

    /// Compile `src` (or take it from the cache) and read its code objects.
    pub fn compile(&self, src: &Path) -> Result<Compiled, CompileError> {
        let io = |path: &Path| {
            let path = path.display().to_string();
            move |error| CompileError::Io { path, error }
        };
        let bytes = std::fs::read(src).map_err(io(src))?;
        let key = self.cache_key(&bytes)?;
        std::fs::create_dir_all(&self.cache_dir).map_err(io(&self.cache_dir))?;
        let object = self.cache_dir.join(format!("{key}.co"));
        let mut cached = true;
        if !object.is_file() {
            cached = false;
            let n = COUNTER.fetch_add(1, Ordering::Relaxed);
            let tmp = self
                .cache_dir
                .join(format!(".tmp-{key}-{}-{n}.co", std::process::id()));
            let src_abs = std::fs::canonicalize(src).map_err(io(src))?;
            let argv = self.argv(&src_abs, &tmp)?;
            let shown = argv.join(" ");
            let output = Command::new(&argv[0])
                .args(&argv[1..])
                .output()
                .map_err(|error| CompileError::CompilerMissing {
                    program: argv[0].clone(),
                    command: shown.clone(),
                    error,
                })?;
            if !output.status.success() || !tmp.is_file() {
                let _ = std::fs::remove_file(&tmp);
                return Err(CompileError::Failed {
                    command: shown,
                    status: output.status.to_string(),
                    stderr: tail(&String::from_utf8_lossy(&output.stderr), 4000).to_string(),
                });
            }
            std::fs::rename(&tmp, &object).map_err(io(&object))?;
        }
        let code_objects = crate::load(&object).map_err(CompileError::Load)?;
        Ok(Compiled {
            source: src.to_path_buf(),
            object,
            cached,
            code_objects,
        })
    }

    /// Compile every source in parallel (one thread each); results in input order.
    pub fn compile_all(&self, sources: &[&Path]) -> Vec<Result<Compiled, CompileError>> {
        std::thread::scope(|s| {
            let handles: Vec<_> = sources
                .iter()
                .map(|src| s.spawn(move || self.compile(src)))
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                .collect()
        })
    }
}

/// The last `max` bytes of `text` at most, starting on a character boundary.
fn tail(text: &str, max: usize) -> &str {
    let mut start = text.len().saturating_sub(max);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}

/// Compile a baseline and a variant in parallel and judge the variant.
pub fn compile_and_judge(
    compiler: &Compiler,
    baseline: &Path,
    variant: &Path,
    thresholds: &crate::judge::Thresholds,
    kernel: Option<&str>,
) -> Result<(Compiled, Compiled, crate::judge::Judgement), CompileError> {
    let mut r = compiler.compile_all(&[baseline, variant]).into_iter();
    let b = r.next().expect("two results")?;
    let v = r.next().expect("two results")?;
    let j = crate::judge::judge(&b.code_objects, &v.code_objects, thresholds, kernel);
    Ok((b, v, j))
}
