//! Compiling kernels for the `vgpr-pressure` guard: runs a compile command template
//! (`{src}`, `{out}`, `{arch}` placeholders), in parallel, and caches each object under a
//! content hash (blake3 of the source bytes, of every header it includes, the expanded command
//! and the compiler's `--version` output). The only module of `codeobj` that does I/O besides
//! [`crate::load`].
//!
//! Included headers: `#include "..."` is resolved against the including file's directory and
//! then the command's `-I` directories, `#include <...>` against the `-I` directories only
//! (system headers belong to the compiler, whose identity is hashed), recursively. A header
//! that cannot be found is left out (the compiler will say so); `#include` lines inside `#if 0`
//! or comments are followed too, which can only add files to the key.

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
    /// The directory the compiler runs in (relative `-I` directories are found from it);
    /// `None`: the current directory.
    pub cwd: Option<PathBuf>,
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
            cwd: None,
        }
    }

    /// The same compiler, run in `dir`.
    pub fn in_dir(&self, dir: impl Into<PathBuf>) -> Compiler {
        Compiler {
            cwd: Some(dir.into()),
            ..self.clone()
        }
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
        h.update(self.identity()?.as_bytes());
        Ok(h.finalize().to_hex().to_string())
    }

    /// The `-I` directories of the command (`-Idir` and `-I dir`).
    pub fn include_dirs(&self) -> Vec<PathBuf> {
        let mut out = Vec::new();
        let mut it = self.command.split_whitespace();
        while let Some(t) = it.next() {
            if t == "-I" {
                if let Some(d) = it.next() {
                    out.push(PathBuf::from(d));
                }
            } else if let Some(d) = t.strip_prefix("-I") {
                out.push(PathBuf::from(d));
            }
        }
        match &self.cwd {
            Some(cwd) => out.into_iter().map(|d| cwd.join(d)).collect(),
            None => out,
        }
    }

    /// The cache key of the source file `src` whose bytes are `bytes`: [`Compiler::cache_key`]
    /// extended with the path and content of every header it includes (see the module doc).
    pub fn cache_key_for(&self, src: &Path, bytes: &[u8]) -> Result<String, CompileError> {
        let base = self.cache_key(bytes)?;
        let deps = dependencies(src, bytes, &self.include_dirs());
        if deps.is_empty() {
            return Ok(base);
        }
        // Header paths enter the key relative to the source's directory (or to the compiler's
        // directory), so that two copies of one tree share their cache entries.
        let src_dir = src.parent().unwrap_or(Path::new(""));
        let mut h = blake3::Hasher::new();
        h.update(b"hip-unroll compile v2 headers\0");
        h.update(base.as_bytes());
        for (p, content) in &deps {
            let shown = p
                .strip_prefix(src_dir)
                .ok()
                .or_else(|| self.cwd.as_deref().and_then(|c| p.strip_prefix(c).ok()))
                .unwrap_or(p);
            h.update(b"\0");
            h.update(shown.as_os_str().as_encoded_bytes());
            h.update(b"\0");
            h.update(&(content.len() as u64).to_le_bytes());
            h.update(content);
        }
        Ok(h.finalize().to_hex().to_string())
    }

    /// Compile `src` (or take it from the cache) and read its code objects.
    pub fn compile(&self, src: &Path) -> Result<Compiled, CompileError> {
        let io = |path: &Path| {
            let path = path.display().to_string();
            move |error| CompileError::Io { path, error }
        };
        let bytes = std::fs::read(src).map_err(io(src))?;
        let key = self.cache_key_for(src, &bytes)?;
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
            let mut cmd = Command::new(&argv[0]);
            cmd.args(&argv[1..]);
            if let Some(dir) = &self.cwd {
                cmd.current_dir(dir);
            }
            let output = cmd
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

/// The headers `src` (with content `bytes`) includes, recursively: `(path, content)` in the
/// order first reached, each once. Paths are as resolved (relative to `src`'s directory when
/// `src` is relative), so moving the tree keeps the key only when the relative layout is kept.
pub fn dependencies(src: &Path, bytes: &[u8], include_dirs: &[PathBuf]) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out: Vec<(PathBuf, Vec<u8>)> = Vec::new();
    let mut seen: std::collections::HashSet<PathBuf> = std::collections::HashSet::new();
    let mut stack: Vec<(PathBuf, Vec<u8>)> = vec![(src.to_path_buf(), bytes.to_vec())];
    seen.insert(std::fs::canonicalize(src).unwrap_or_else(|_| src.to_path_buf()));
    while let Some((file, content)) = stack.pop() {
        let dir = file.parent().map(Path::to_path_buf).unwrap_or_default();
        for (name, quoted) in includes(&content) {
            let mut candidates = Vec::new();
            if quoted {
                candidates.push(dir.join(&name));
            }
            candidates.extend(include_dirs.iter().map(|d| d.join(&name)));
            let Some(found) = candidates.into_iter().find(|c| c.is_file()) else {
                continue;
            };
            let canon = std::fs::canonicalize(&found).unwrap_or_else(|_| found.clone());
            if !seen.insert(canon) {
                continue;
            }
            if let Ok(b) = std::fs::read(&found) {
                out.push((found.clone(), b.clone()));
                stack.push((found, b));
            }
        }
    }
    out
}

/// The `#include` directives of a file: `(name, quoted)`.
fn includes(content: &[u8]) -> Vec<(String, bool)> {
    let text = String::from_utf8_lossy(content);
    let mut out = Vec::new();
    for line in text.lines() {
        let t = line.trim_start();
        let Some(rest) = t.strip_prefix('#') else {
            continue;
        };
        let Some(rest) = rest.trim_start().strip_prefix("include") else {
            continue;
        };
        let rest = rest.trim_start();
        let (open, close, quoted) = match rest.chars().next() {
            Some('"') => ('"', '"', true),
            Some('<') => ('<', '>', false),
            _ => continue,
        };
        let body = &rest[open.len_utf8()..];
        if let Some(end) = body.find(close) {
            out.push((body[..end].to_string(), quoted));
        }
    }
    out
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
