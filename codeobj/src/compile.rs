//! Compiling kernels (the `vgpr-pressure` guard, `unroll --verify`, `bench`): runs a compile
//! command template (`{src}`, `{out}`, `{arch}` placeholders; `{keep}`, a private directory for
//! the compiler's intermediate files) plus extra arguments (defines,
//! include directories), in parallel, and caches each output under a content hash.
//!
//! The key never holds a path, so a cache serves a working copy, another directory or another
//! machine: it is blake3 of the source bytes, the bytes of every header it includes
//! (`#include "..."` found next to the including file or in a `-I` directory, `#include <...>`
//! found in a `-I` directory, recursively, each named as written; system headers belong to the
//! compiler, whose identity is hashed), extra key files and `-include` files (by file name and
//! bytes), the command and arguments with the program by its file name and the directories of
//! `-I`-like options left out ([`Compiler::key_words`]), the target, and the compiler's
//! identity ([`Compiler::identity`]: its `--version` without install paths; for nvcc also the
//! digest of the `cicc` it runs, which `--version` does not show).
//! The output is a code object (read back with [`crate::load`]), text such as PTX, or an NVIDIA
//! cubin with the assembler's `-v` report kept beside it ([`Output::Cubin`]), and the PTX it was
//! assembled from when the command keeps it (`--keep --keep-dir {keep}`): one nvcc run gives the
//! gates their cubin and the runner its PTX and loadable machine code.
//!
//! A second index, `by-source/<key without the compiler identity>`, names the object last built
//! from those inputs, so that a cache carried to a machine without the compiler (a GPU machine
//! with only a driver) still serves it: [`Compiled::precompiled`] says so.
//!
//! Every compiler process (the compile and `--version`) runs through `childproc`: in its own
//! process group under a guard that kills the whole group when hip-unroll dies (even by
//! `kill -9`), with a time limit ([`Compiler::timeout`]) that kills the group too, and with a
//! private `TMPDIR` (hipcc leaves directories there) removed afterwards. A failed compile is one
//! line (the compiler's first error line); its whole output is kept in `CACHE/logs/`.
//!
//! The only module of `codeobj` that does I/O besides [`crate::load`].

use crate::{CodeObject, LoadError};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use thiserror::Error;

/// hipcc 5.x/6.x: a code object (an offload bundle) for one target.
pub const DEFAULT_COMMAND: &str = "hipcc --offload-arch={arch} --genco -O3 {src} -o {out}";
pub const DEFAULT_ARCH: &str = "gfx90a";
/// The time limit of one compile unless [`Compiler::with_timeout`] says otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);
/// The longest time limit a compile may be given (one day).
pub const MAX_TIMEOUT: Duration = Duration::from_secs(86_400);
/// `--version` must answer within this (or the compile's own limit, if shorter).
const VERSION_TIMEOUT: Duration = Duration::from_secs(60);

/// Where compiled objects are cached by default: `$HIP_UNROLL_CACHE_DIR`,
/// `$XDG_CACHE_HOME/hip-unroll`, `~/.cache/hip-unroll`, else a folder in the temp directory.
pub fn default_cache_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("HIP_UNROLL_CACHE_DIR") {
        return d.into();
    }
    if let Some(d) = std::env::var_os("XDG_CACHE_HOME") {
        return PathBuf::from(d).join("hip-unroll");
    }
    if let Some(h) = std::env::var_os("HOME") {
        return PathBuf::from(h).join(".cache").join("hip-unroll");
    }
    std::env::temp_dir().join("hip-unroll-cache")
}

/// Check a compile time limit (1 s to [`MAX_TIMEOUT`]), for settings read from the command
/// line or a config file.
pub fn check_timeout(timeout: Duration) -> Result<Duration, CompileError> {
    if timeout < Duration::from_secs(1) || timeout > MAX_TIMEOUT {
        return Err(CompileError::BadTimeout(timeout));
    }
    Ok(timeout)
}

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
    /// The compiler ran and failed: one line, its first error line; the whole output (and the
    /// command line) is in `log` when it could be written.
    #[error("{source_file}: {program} failed ({status}): {}{}", first_error(.stderr), .log.as_ref().map(|l| format!(" (full output: {})", l.display())).unwrap_or_default())]
    Failed {
        program: String,
        source_file: String,
        status: String,
        /// The tail of its stderr (at most 4000 bytes).
        stderr: String,
        log: Option<PathBuf>,
    },
    #[error("{source_file}: {program} ran longer than {} s and was killed (command: `{command}`)", .limit.as_secs())]
    Timeout {
        program: String,
        source_file: String,
        command: String,
        limit: Duration,
    },
    #[error("compile time limit must be 1 s to {} s (got {} s)", MAX_TIMEOUT.as_secs(), childproc::secs(*.0))]
    BadTimeout(Duration),
    #[error("{path}: {error}")]
    Io { path: String, error: std::io::Error },
    #[error("{0}")]
    Load(LoadError),
    /// A source, header or key file that is not a regular file or is past its size cap.
    #[error("{0}")]
    Input(#[from] fsio::Error),
}

/// What a compile produces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Output {
    /// An AMDGPU code object or offload bundle, read back into [`Compiled::code_objects`].
    #[default]
    CodeObject,
    /// Text such as PTX (`clang -S` for an NVPTX target), cached with this file extension and
    /// not parsed here.
    Text(&'static str),
    /// An NVIDIA cubin (`nvcc -cubin -Xptxas -v`), not parsed here; the compiler's diagnostic
    /// output (ptxas's register and spill report) is kept beside it as `<object>.log` and read
    /// back into [`Compiled::log`].
    Cubin,
}

impl Output {
    fn extension(self) -> &'static str {
        match self {
            Output::CodeObject => "co",
            Output::Text(ext) => ext,
            Output::Cubin => "cubin",
        }
    }
}

/// A compile command and where its results are cached.
#[derive(Debug, Clone)]
pub struct Compiler {
    /// The template, e.g. [`DEFAULT_COMMAND`]; split on whitespace into arguments (no shell).
    pub command: String,
    pub arch: String,
    pub cache_dir: PathBuf,
    /// Extra arguments placed right after the program (`-DN=4`, `-I dir`, `-include p.h`); one
    /// argument each, never split.
    pub args: Vec<String>,
    /// Files whose bytes are part of the key besides the source and its local headers (a prelude
    /// passed with `-include`).
    pub key_files: Vec<PathBuf>,
    pub output: Output,
    /// The directory the compiler runs in (relative `-I` directories are found from it);
    /// `None`: the current directory.
    pub cwd: Option<PathBuf>,
    /// The time limit of one compile (1 s to [`MAX_TIMEOUT`]); its process group is killed then.
    pub timeout: Duration,
}

/// The compiler's first error line (or its first line), for one-line messages.
fn first_error(stderr: &str) -> String {
    childproc::first_error_line(stderr).unwrap_or_else(|| "no output".to_string())
}

/// A compiled source.
#[derive(Debug, Clone)]
pub struct Compiled {
    pub source: PathBuf,
    /// The cached object file.
    pub object: PathBuf,
    /// Whether it came from the cache without running the compiler.
    pub cached: bool,
    /// Empty for [`Output::Text`] outputs.
    pub code_objects: Vec<CodeObject>,
    /// Taken from the `by-source` index because the compiler is not installed here: the object
    /// was built from the same inputs by a compiler whose identity could not be checked.
    pub precompiled: bool,
    /// [`Output::Cubin`]: the compiler's diagnostic output of the build (ptxas `-v`), when the
    /// cache holds it.
    pub log: Option<String>,
    /// [`Output::Cubin`] of a command with the `{keep}` placeholder: the PTX the cubin was
    /// assembled from, kept beside it in the cache ([`ptx_path`]), when the cache holds it.
    pub ptx: Option<PathBuf>,
}

static VERSIONS: Mutex<Option<HashMap<String, String>>> = Mutex::new(None);
static COUNTER: AtomicU64 = AtomicU64::new(0);
/// The compiles of this process in flight, by object path: a second compile of the same key
/// (another working copy of the same text, a compile sent ahead that the gates now need) waits
/// for the first and takes its object instead of running the compiler again.
static IN_FLIGHT: Mutex<Option<HashMap<PathBuf, Arc<Mutex<()>>>>> = Mutex::new(None);

/// Holds the key of one object while its compile runs (see [`IN_FLIGHT`]); forgets the key when
/// nobody else waits for it.
struct InFlight {
    object: PathBuf,
    lock: Arc<Mutex<()>>,
}

impl InFlight {
    fn enter(object: &Path) -> InFlight {
        let mut map = IN_FLIGHT.lock().unwrap_or_else(|p| p.into_inner());
        let lock = map
            .get_or_insert_with(HashMap::new)
            .entry(object.to_path_buf())
            .or_default()
            .clone();
        InFlight {
            object: object.to_path_buf(),
            lock,
        }
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let mut map = IN_FLIGHT.lock().unwrap_or_else(|p| p.into_inner());
        // Only clones made under this lock exist: the map's and ours mean nobody waits.
        if Arc::strong_count(&self.lock) == 2 {
            if let Some(m) = map.as_mut() {
                m.remove(&self.object);
            }
        }
    }
}

/// A compile's private `TMPDIR` is `$TMPDIR/hip-unroll-cc-PID-XXXXXX`: the process id of the
/// hip-unroll that made it, so that one left by a `kill -9` (no destructor ran) is recognised.
pub const TMPDIR_PREFIX: &str = "hip-unroll-cc-";

/// Remove the private `TMPDIR`s under `tmp` whose hip-unroll is gone (killed before it could
/// remove them): once per process, before its first compile. A directory of a live process,
/// or of a process we may not signal, stays. Returns how many were removed.
pub fn sweep_stale_tmpdirs(tmp: &Path) -> usize {
    static SWEPT: std::sync::Once = std::sync::Once::new();
    let mut removed = 0;
    SWEPT.call_once(|| {
        let Ok(entries) = std::fs::read_dir(tmp) else {
            return;
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let Some(pid) = name
                .strip_prefix(TMPDIR_PREFIX)
                .and_then(|r| r.split_once('-'))
                .and_then(|(pid, _)| pid.parse::<i32>().ok())
            else {
                continue;
            };
            let gone = fsio::process_gone(pid);
            // Only directories we made (a symbolic link is not followed).
            if gone
                && e.file_type().is_ok_and(|t| t.is_dir())
                && std::fs::remove_dir_all(e.path()).is_ok()
            {
                removed += 1;
            }
        }
    });
    removed
}

/// A compiler process ready to run, and its private temporary directory.
struct CompilerJob {
    job: childproc::Job<'static>,
    _tmp: tempfile::TempDir,
}

impl CompilerJob {
    fn with_limit(mut self, limit: Duration) -> Self {
        self.job.timeout = limit;
        self
    }

    /// Run it; the temporary directory goes with `self`.
    fn run(self) -> Result<childproc::Output, childproc::Error> {
        self.job.run(|_| {})
    }
}

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
            args: Vec::new(),
            key_files: Vec::new(),
            output: Output::CodeObject,
            cwd: None,
            timeout: DEFAULT_TIMEOUT,
        }
    }

    /// The same compiler with another time limit per compile (checked by [`Compiler::compile`]
    /// and [`check_timeout`]).
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The same compiler, run in `dir` (a tuner's working copy).
    pub fn in_dir(&self, dir: impl Into<PathBuf>) -> Compiler {
        Compiler {
            cwd: Some(dir.into()),
            ..self.clone()
        }
    }

    /// Add extra arguments (see [`Compiler::args`]).
    pub fn with_args(mut self, args: impl IntoIterator<Item = String>) -> Self {
        self.args.extend(args);
        self
    }

    /// Add files to the key (see [`Compiler::key_files`]).
    pub fn with_key_files(mut self, files: impl IntoIterator<Item = PathBuf>) -> Self {
        self.key_files.extend(files);
        self
    }

    pub fn with_output(mut self, output: Output) -> Self {
        self.output = output;
        self
    }

    /// The argument vector for one compile.
    pub fn argv(&self, src: &Path, out: &Path) -> Result<Vec<String>, CompileError> {
        if !self.command.contains("{src}") || !self.command.contains("{out}") {
            return Err(CompileError::MissingPlaceholder(self.command.clone()));
        }
        let src = src.display().to_string();
        let out = out.display().to_string();
        let mut argv: Vec<String> = self
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
        argv.splice(1..1, self.args.iter().cloned());
        Ok(argv)
    }

    /// The program the command runs (its first word).
    fn program(&self) -> Result<String, CompileError> {
        self.command
            .split_whitespace()
            .next()
            .map(str::to_string)
            .ok_or(CompileError::EmptyCommand)
    }

    /// Whether the program the command runs is installed here (a path that is a file, or a name
    /// found on `PATH`).
    pub fn available(&self) -> bool {
        self.program()
            .ok()
            .and_then(|p| childproc::resolve_program(p.as_ref()))
            .is_some()
    }

    /// The compiler's identity: its `--version` output without the lines that name where it is
    /// installed (clang's `InstalledDir:`), and for nvcc the `--version` of the ptxas and the
    /// blake3 digests of the cicc and of one versioned header of each header package beside it
    /// (nvcc's own `--version` does not change when only its NVVM or headers are replaced, and
    /// the PTX does). Memoised per program file (its resolved path,
    /// size and modification time, so that a reinstalled or removed compiler is seen).
    pub fn identity(&self) -> Result<String, CompileError> {
        let program = self.program()?;
        let missing = |error| CompileError::CompilerMissing {
            program: program.clone(),
            command: self.command.clone(),
            error,
        };
        let resolved = childproc::resolve_program(program.as_ref()).ok_or_else(|| {
            missing(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "not found on PATH",
            ))
        })?;
        let meta = std::fs::metadata(&resolved).map_err(missing)?;
        let memo = format!(
            "{}\0{}\0{:?}",
            resolved.display(),
            meta.len(),
            meta.modified().ok()
        );
        if let Some(v) = VERSIONS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_or_insert_with(HashMap::new)
            .get(&memo)
        {
            return Ok(v.clone());
        }
        let version = |path: &Path| -> Result<String, CompileError> {
            let limit = self.timeout.min(VERSION_TIMEOUT);
            let out = self
                .job(&path.as_os_str().to_string_lossy(), ["--version"])?
                .with_limit(limit)
                .run()
                .map_err(|e| match e {
                    childproc::Error::Spawn { error, .. } => missing(error),
                    _ => CompileError::Timeout {
                        program: program.clone(),
                        source_file: "--version".into(),
                        command: format!("{} --version", path.display()),
                        limit,
                    },
                })?;
            Ok(without_install_paths(&out.stdout))
        };
        let mut v = version(&resolved)?;
        if is_nvcc(&program) {
            let bin = resolved.parent().unwrap_or(Path::new("."));
            let ptxas = bin.join("ptxas");
            if ptxas.is_file() {
                v.push_str(&version(&ptxas)?);
            }
            let cicc = bin.join("../nvvm/bin/cicc");
            if let Ok(f) = std::fs::File::open(&cicc) {
                let mut h = blake3::Hasher::new();
                h.update_reader(f).map_err(missing)?;
                v.push_str(&format!("cicc blake3 {}\n", h.finalize().to_hex()));
            }
            // The headers come in packages of their own (runtime, crt, cccl): one versioned
            // file of each.
            for header in NVCC_VERSIONED_HEADERS {
                if let Ok(bytes) = std::fs::read(bin.join("../include").join(header)) {
                    v.push_str(&format!(
                        "{header} blake3 {}\n",
                        blake3::hash(&bytes).to_hex()
                    ));
                }
            }
        }
        VERSIONS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_or_insert_with(HashMap::new)
            .insert(memo, v.clone());
        Ok(v)
    }

    /// The command and the extra arguments as they enter the cache key: `{arch}` expanded,
    /// `{src}` and `{out}` left as they are, the program by its file name (`/opt/cuda/bin/nvcc`
    /// and `nvcc` are one compiler; its identity tells versions apart), the directory of every
    /// `-I`-like option left out (the headers found there are hashed by content and by the name
    /// they are included by) and the file of every `-include`-like option ([`file_option`]) by
    /// its file name when it is a path, as written when it is a name the compiler looks up (its
    /// bytes are hashed with the key files when it is found outside the compiler).
    pub fn key_words(&self) -> Vec<String> {
        let mut words: Vec<String> = self
            .command
            .split_whitespace()
            .map(|t| t.replace("{arch}", &self.arch))
            .collect();
        if let Some(first) = words.first_mut() {
            *first = file_name_of(first);
        }
        words.extend(self.args.iter().cloned());
        let mut out = Vec::with_capacity(words.len());
        let mut i = 0;
        while i < words.len() {
            let w = &words[i];
            let next = words.get(i + 1);
            if let Some(opt) = DIR_OPTIONS.iter().find(|o| w == *o) {
                out.push(opt.to_string());
                i += if next.is_some() { 2 } else { 1 };
                continue;
            }
            let refs: Vec<&str> = [w.as_str()]
                .into_iter()
                .chain(next.map(String::as_str))
                .collect();
            if let Some((opt, file, n)) = file_option(&refs, 0) {
                out.push(opt.to_string());
                if let Some(f) = file {
                    out.push(included_name(f));
                }
                i += n;
                continue;
            }
            if let Some(opt) = DIR_OPTIONS.iter().find(|o| {
                w.len() > o.len()
                    && w.starts_with(*o)
                    && (o.starts_with("--") == w[o.len()..].starts_with('='))
            }) {
                out.push(opt.to_string());
                i += 1;
                continue;
            }
            out.push(w.clone());
            i += 1;
        }
        out
    }

    /// Files named by `-include`-like options in the command and arguments, found as the
    /// compiler finds them: an absolute path as it is; a relative one first in the compiler's
    /// working directory ([`Compiler::cwd`]), then in the include directories in order
    /// ([`Compiler::include_dirs`]). A name found in none of them is the compiler's own header
    /// (`-include stdlib.h`): it is left out here, its name is in the key ([`Compiler::key_words`])
    /// and the compiler's identity stands for its bytes, as for `#include <...>`.
    fn included_files(&self) -> Vec<PathBuf> {
        let words: Vec<&str> = self
            .command
            .split_whitespace()
            .chain(self.args.iter().map(String::as_str))
            .collect();
        let here = |p: &Path| match &self.cwd {
            Some(cwd) => cwd.join(p),
            None => p.to_path_buf(),
        };
        let mut out = Vec::new();
        let mut i = 0;
        while i < words.len() {
            let Some((_, file, n)) = file_option(&words, i) else {
                i += 1;
                continue;
            };
            i += n;
            let Some(f) = file.map(Path::new) else {
                continue;
            };
            if f.is_absolute() {
                out.push(f.to_path_buf());
            } else if let Some(found) = std::iter::once(here(f))
                .chain(self.include_dirs().into_iter().map(|d| d.join(f)))
                .find(|p| p.is_file())
            {
                out.push(found);
            }
        }
        out
    }

    /// The cache key of source bytes with no local headers: blake3(source bytes, expanded
    /// command, extra arguments, key files, compiler identity).
    pub fn cache_key(&self, source: &[u8]) -> Result<String, CompileError> {
        let skey = self.source_key(None, source)?;
        self.full_key(&skey)
    }

    /// The key of everything but the compiler identity; with `path`, the headers the source
    /// includes with `#include "..."` are part of it.
    pub fn source_key(&self, path: Option<&Path>, source: &[u8]) -> Result<String, CompileError> {
        let mut h = blake3::Hasher::new();
        let mut field = |bytes: &[u8]| {
            h.update(&(bytes.len() as u64).to_le_bytes());
            h.update(bytes);
        };
        field(b"hip-unroll compile v3");
        field(source);
        for w in self.key_words() {
            field(w.as_bytes());
        }
        field(self.output.extension().as_bytes());
        let mut files = self.key_files.clone();
        files.extend(self.included_files());
        for f in &files {
            let bytes = fsio::read_source(f)?;
            field(file_name_of(&f.display().to_string()).as_bytes());
            field(&bytes);
        }
        if let Some(path) = path {
            for (name, bytes) in local_includes(path, source, &self.include_dirs())? {
                field(name.display().to_string().as_bytes());
                field(&bytes);
            }
        }
        Ok(h.finalize().to_hex().to_string())
    }

    fn full_key(&self, source_key: &str) -> Result<String, CompileError> {
        let mut h = blake3::Hasher::new();
        h.update(b"hip-unroll compile v3\0");
        h.update(source_key.as_bytes());
        h.update(b"\0");
        h.update(self.identity()?.as_bytes());
        Ok(h.finalize().to_hex().to_string())
    }

    /// Directories named by `-I DIR`, `-IDIR`, `-iquote DIR` in the command and the arguments
    /// (relative ones resolved from [`Compiler::cwd`]).
    pub fn include_dirs(&self) -> Vec<PathBuf> {
        let words: Vec<&str> = self
            .command
            .split_whitespace()
            .chain(self.args.iter().map(String::as_str))
            .collect();
        let mut out = Vec::new();
        let mut i = 0;
        while i < words.len() {
            let w = words[i];
            if (w == "-I" || w == "-iquote") && i + 1 < words.len() {
                out.push(PathBuf::from(words[i + 1]));
                i += 1;
            } else if let Some(d) = w.strip_prefix("-I").filter(|d| !d.is_empty()) {
                out.push(PathBuf::from(d));
            }
            i += 1;
        }
        match &self.cwd {
            Some(cwd) => out.into_iter().map(|d| cwd.join(d)).collect(),
            None => out,
        }
    }

    /// A compiler process: in [`Compiler::cwd`], with a private `TMPDIR` (removed when the
    /// returned job is dropped), under the time limit, killed with its group if we die.
    fn job<S: AsRef<std::ffi::OsStr>>(
        &self,
        program: &str,
        args: impl IntoIterator<Item = S>,
    ) -> Result<CompilerJob, CompileError> {
        check_timeout(self.timeout)?;
        sweep_stale_tmpdirs(&std::env::temp_dir());
        let tmp = private_dir()?;
        let mut job = childproc::Job::new(program, self.timeout)
            .args(args)
            .cwd(self.cwd.as_deref())
            .group_dies_with_parent();
        for var in ["TMPDIR", "TMP", "TEMP"] {
            job = job.env(var, tmp.path());
        }
        Ok(CompilerJob { job, _tmp: tmp })
    }

    /// Compile `src` (or take it from the cache) and read its code objects.
    pub fn compile(&self, src: &Path) -> Result<Compiled, CompileError> {
        let io = |path: &Path| {
            let path = path.display().to_string();
            move |error| CompileError::Io { path, error }
        };
        let bytes = fsio::read_source(src)?;
        let skey = self.source_key(Some(src), &bytes)?;
        let index = self.cache_dir.join("by-source").join(&skey);
        let key = match self.full_key(&skey) {
            Ok(key) => key,
            Err(missing @ CompileError::CompilerMissing { .. }) => {
                return self.precompiled(src, &index).ok_or(missing)?;
            }
            Err(e) => return Err(e),
        };
        std::fs::create_dir_all(&self.cache_dir).map_err(io(&self.cache_dir))?;
        let object = self
            .cache_dir
            .join(format!("{key}.{}", self.output.extension()));
        let mut cached = true;
        // One compile per key at a time in this process: a second caller waits here, then
        // finds the object.
        let flight = InFlight::enter(&object);
        let _running = flight.lock.lock().unwrap_or_else(|p| p.into_inner());
        if !object.is_file() {
            cached = false;
            let n = COUNTER.fetch_add(1, Ordering::Relaxed);
            let tmp = self.cache_dir.join(format!(
                ".tmp-{key}-{}-{n}.{}",
                std::process::id(),
                self.output.extension()
            ));
            let src_abs = std::fs::canonicalize(src).map_err(io(src))?;
            let mut argv = self.argv(&src_abs, &tmp)?;
            // `{keep}`: a private directory for the compiler's intermediate files (nvcc's
            // `--keep-dir`), from which the PTX is kept beside a cubin.
            let keep = if self.command.contains("{keep}") {
                let dir = private_dir()?;
                let at = dir.path().display().to_string();
                for w in &mut argv {
                    *w = w.replace("{keep}", &at);
                }
                Some(dir)
            } else {
                None
            };
            let shown = argv.join(" ");
            let program = argv[0].clone();
            let result = self.job(&program, &argv[1..])?.run();
            let output = match result {
                Ok(o) => o,
                Err(e) => {
                    let _ = std::fs::remove_file(&tmp);
                    return Err(match e {
                        childproc::Error::Spawn { error, .. } => CompileError::CompilerMissing {
                            program,
                            command: shown,
                            error,
                        },
                        _ => CompileError::Timeout {
                            program,
                            source_file: src.display().to_string(),
                            command: shown,
                            limit: self.timeout,
                        },
                    });
                }
            };
            if !output.success() || !tmp.is_file() {
                let _ = std::fs::remove_file(&tmp);
                let log = self.cache_dir.join("logs").join(format!("{key}.log"));
                let text = format!(
                    "command: {shown}\nin: {}\nstatus: {}\n--- stderr\n{}\n--- stdout\n{}",
                    self.cwd.as_deref().unwrap_or(Path::new(".")).display(),
                    output.status_text(),
                    output.stderr,
                    output.stdout
                );
                let log = write_atomic(&log, text.as_bytes()).ok().map(|()| log);
                let status = if output.success() {
                    "no output file".to_string()
                } else {
                    output.status_text()
                };
                return Err(CompileError::Failed {
                    program,
                    source_file: src.display().to_string(),
                    status,
                    stderr: tail(&output.stderr, 4000).to_string(),
                    log,
                });
            }
            if self.output == Output::Cubin {
                // The report (and the PTX) first: an object in the cache always has its log.
                write_atomic(&log_path(&object), output.stderr.as_bytes())?;
                if let Some(keep) = &keep {
                    if let Some(ptx) = kept_ptx(keep.path()) {
                        let text = std::fs::read(&ptx).map_err(io(&ptx))?;
                        write_atomic(&ptx_path(&object), &text)?;
                    }
                }
            }
            std::fs::rename(&tmp, &object).map_err(io(&object))?;
        }
        if std::fs::read_to_string(&index).ok().as_deref()
            != object.file_name().and_then(|n| n.to_str())
        {
            write_atomic(
                &index,
                object.file_name().unwrap_or_default().as_encoded_bytes(),
            )?;
        }
        let code_objects = self.read_back(&object)?;
        Ok(Compiled {
            source: src.to_path_buf(),
            log: self.log_of(&object),
            ptx: self.ptx_of(&object),
            object,
            cached,
            code_objects,
            precompiled: false,
        })
    }

    /// The kept diagnostic output of an [`Output::Cubin`] object.
    fn log_of(&self, object: &Path) -> Option<String> {
        (self.output == Output::Cubin)
            .then(|| std::fs::read(log_path(object)).ok())
            .flatten()
            .map(|b| String::from_utf8_lossy(&b).into_owned())
    }

    /// The kept PTX of an [`Output::Cubin`] object, when the cache holds it.
    fn ptx_of(&self, object: &Path) -> Option<PathBuf> {
        (self.output == Output::Cubin)
            .then(|| ptx_path(object))
            .filter(|p| p.is_file())
    }

    fn read_back(&self, object: &Path) -> Result<Vec<CodeObject>, CompileError> {
        match self.output {
            Output::CodeObject => crate::load(object).map_err(CompileError::Load),
            Output::Text(_) | Output::Cubin => Ok(Vec::new()),
        }
    }

    /// The object the `by-source` index names, when the compiler cannot run here.
    fn precompiled(&self, src: &Path, index: &Path) -> Option<Result<Compiled, CompileError>> {
        let name = std::fs::read_to_string(index).ok()?;
        let name = name.trim();
        if name.is_empty() || name.contains('/') {
            return None;
        }
        let object = self.cache_dir.join(name);
        if !object.is_file() {
            return None;
        }
        Some(self.read_back(&object).map(|code_objects| Compiled {
            source: src.to_path_buf(),
            log: self.log_of(&object),
            ptx: self.ptx_of(&object),
            object,
            cached: true,
            code_objects,
            precompiled: true,
        }))
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

/// Options whose value is a directory searched for headers or libraries: left out of the key.
const DIR_OPTIONS: &[&str] = &[
    "-I",
    "-iquote",
    "-isystem",
    "-idirafter",
    "-L",
    "--include-path",
    "--system-include",
    "--library-path",
    "--cuda-path",
];
/// Options whose value is a file included before the source: in the key by name and content.
pub const FILE_OPTIONS: &[&str] = &["-include", "-imacros", "--pre-include"];

/// The `-include`-like option ([`FILE_OPTIONS`]) at `words[i]`: `-include NAME` or
/// `-include=NAME` (nvcc's spelling; also `-imacros`, `--pre-include`). Gives the option, its
/// file (`None` when the words end after the option) and how many words it takes.
pub fn file_option<'a>(
    words: &[&'a str],
    i: usize,
) -> Option<(&'static str, Option<&'a str>, usize)> {
    let w = *words.get(i)?;
    FILE_OPTIONS.iter().find_map(|&opt| {
        if w == opt {
            let file = words.get(i + 1).copied();
            Some((opt, file, if file.is_some() { 2 } else { 1 }))
        } else {
            let file = w.strip_prefix(opt)?.strip_prefix('=')?;
            Some((opt, Some(file), 1))
        }
    })
}

/// How an included file's name enters the key: a path by its file name (it is hashed by
/// content), a relative name as written (`stdlib.h`, `sys/types.h`: the compiler may look it up
/// in its own directories).
fn included_name(f: &str) -> String {
    if Path::new(f).is_absolute() {
        file_name_of(f)
    } else {
        f.to_string()
    }
}

/// The last component of a path as written (`/opt/cuda/bin/nvcc` -> `nvcc`).
fn file_name_of(p: &str) -> String {
    p.rsplit('/').next().unwrap_or(p).to_string()
}

/// A `--version` output without the lines naming where the compiler is installed.
fn without_install_paths(version: &str) -> String {
    version
        .lines()
        .filter(|l| !l.trim_start().starts_with("InstalledDir:"))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// Headers beside nvcc whose bytes change with the version of the package that ships them.
const NVCC_VERSIONED_HEADERS: &[&str] = &[
    "cuda_runtime_api.h",
    "crt/host_config.h",
    "cccl/cuda/std/__cccl/version.h",
    "cuda/std/__cccl/version.h",
];

/// Whether `program` is NVIDIA's compiler driver.
fn is_nvcc(program: &str) -> bool {
    file_name_of(program) == "nvcc"
}

/// A private directory `$TMPDIR/hip-unroll-cc-PID-XXXXXX` (removed when dropped; one left by a
/// `kill -9` is swept by [`sweep_stale_tmpdirs`]).
fn private_dir() -> Result<tempfile::TempDir, CompileError> {
    tempfile::Builder::new()
        .prefix(&format!("{TMPDIR_PREFIX}{}-", std::process::id()))
        .tempdir()
        .map_err(|error| CompileError::Io {
            path: std::env::temp_dir().display().to_string(),
            error,
        })
}

/// Where the PTX of an [`Output::Cubin`] object is kept (`<object>.ptx`).
pub fn ptx_path(object: &Path) -> PathBuf {
    let mut name = object.as_os_str().to_owned();
    name.push(".ptx");
    PathBuf::from(name)
}

/// The one PTX file a compile left in its `{keep}` directory; none when there is not exactly
/// one (a compile for several virtual architectures: nothing is kept).
fn kept_ptx(dir: &Path) -> Option<PathBuf> {
    let mut found = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "ptx"));
    let one = found.next()?;
    found.next().is_none().then_some(one)
}

/// Where the diagnostic output of an [`Output::Cubin`] object is kept.
fn log_path(object: &Path) -> PathBuf {
    let mut name = object.as_os_str().to_owned();
    name.push(".log");
    PathBuf::from(name)
}

/// Write `bytes` to `path` through a temporary file in the same directory and a rename.
fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), CompileError> {
    let io = |error| CompileError::Io {
        path: path.display().to_string(),
        error,
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(io)?;
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let tmp = dir.join(format!(".tmp-{}-{n}", std::process::id()));
    std::fs::write(&tmp, bytes).map_err(io)?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        io(e)
    })
}

/// The headers `source` (at `path`) includes, recursively: `#include "NAME"` found next to the
/// including file or in one of `dirs`, `#include <NAME>` found in one of `dirs`; in the order
/// first reached, each once, named as written (so two copies of one tree share their keys).
/// Headers that are not found (system headers, or ones only the compiler's own paths reach)
/// are left to the compiler identity.
/// Headers are read through fsio's bounded read: one past [`fsio::SOURCE_CAP`] is an error; an
/// unreadable one is left out of the key (the compile will say why).
pub fn local_includes(
    path: &Path,
    source: &[u8],
    dirs: &[PathBuf],
) -> Result<Vec<(PathBuf, Vec<u8>)>, fsio::Error> {
    const MAX_HEADERS: usize = 4096;
    let mut out: Vec<(PathBuf, Vec<u8>)> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut stack: Vec<(PathBuf, Vec<u8>)> = vec![(path.to_path_buf(), source.to_vec())];
    while let Some((file, bytes)) = stack.pop() {
        let here = file.parent().map(Path::to_path_buf).unwrap_or_default();
        let mut found = Vec::new();
        for (name, quoted) in includes(&bytes) {
            let candidates = quoted
                .then(|| here.join(&name))
                .into_iter()
                .chain(dirs.iter().map(|d| d.join(&name)));
            for c in candidates {
                if c.is_file() {
                    let canon = std::fs::canonicalize(&c).unwrap_or(c.clone());
                    if seen.insert(canon) && out.len() < MAX_HEADERS {
                        match fsio::read_source(&c) {
                            Ok(b) => {
                                out.push((PathBuf::from(&name), b.clone()));
                                found.push((c, b));
                            }
                            Err(e @ fsio::Error::TooLarge { .. }) => return Err(e),
                            Err(_) => {}
                        }
                    }
                    break;
                }
            }
        }
        // Depth-first in source order.
        stack.extend(found.into_iter().rev());
    }
    Ok(out)
}

/// The `#include "NAME"` (quoted: true) and `#include <NAME>` directives, in order (comments
/// are not handled: a commented-out include only makes the key cover one more file).
fn includes(bytes: &[u8]) -> Vec<(String, bool)> {
    let text = String::from_utf8_lossy(bytes);
    let mut out = Vec::new();
    for line in text.lines() {
        let Some(rest) = line.trim_start().strip_prefix('#') else {
            continue;
        };
        let Some(rest) = rest.trim_start().strip_prefix("include") else {
            continue;
        };
        let rest = rest.trim_start();
        let (close, quoted) = match rest.chars().next() {
            Some('"') => ('"', true),
            Some('<') => ('>', false),
            _ => continue,
        };
        if let Some(end) = rest[1..].find(close) {
            out.push((rest[1..1 + end].to_string(), quoted));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_words_hold_no_path() {
        let c = |program: &str, inc: &str, pre: &str| {
            Compiler::new(
                format!("{program} -arch={{arch}} -ptx {{src}} -o {{out}}"),
                "sm_90",
                "/var/cache/x",
            )
            .with_args([
                "-I".into(),
                inc.into(),
                format!("-I{inc}/sub"),
                "-include".into(),
                pre.into(),
                "--cuda-path=/opt/cuda".into(),
                "-DN=4".into(),
            ])
        };
        let a = c(
            "/opt/venv/nvidia/cu13/bin/nvcc",
            "/home/u/tree/inc",
            "/a/p.h",
        );
        let b = c("nvcc", "../copy/inc", "/b/c/p.h");
        assert_eq!(a.key_words(), b.key_words());
        assert_eq!(
            a.key_words(),
            [
                "nvcc",
                "-arch=sm_90",
                "-ptx",
                "{src}",
                "-o",
                "{out}",
                "-I",
                "-I",
                "-include",
                "p.h",
                "--cuda-path",
                "-DN=4"
            ]
        );
        // What is not a path stays: another define or arch is another key.
        let d = c("nvcc", "x", "p.h").with_args(["-DM=1".into()]);
        assert_ne!(a.key_words(), d.key_words());
    }

    #[test]
    fn included_files_enter_the_key_by_name_and_content() {
        let d = tempfile::tempdir().unwrap();
        for dir in ["one", "two"] {
            std::fs::create_dir_all(d.path().join(dir)).unwrap();
            std::fs::write(d.path().join(dir).join("p.h"), "#define P 1\n").unwrap();
        }
        let key = |dir: &str, cache: &str| {
            Compiler::new("cc -c {src} -o {out}", "x", d.path().join(cache))
                .with_args([
                    "-include".into(),
                    d.path().join(dir).join("p.h").display().to_string(),
                ])
                .source_key(None, b"int k;")
                .unwrap()
        };
        assert_eq!(key("one", "c"), key("two", "other-cache"));
        std::fs::write(d.path().join("two/p.h"), "#define P 2\n").unwrap();
        assert_ne!(key("one", "c"), key("two", "c"));
    }

    /// `-include NAME` is found as the compiler finds it: in its working directory, then in the
    /// include directories (hashed by content), else it is the compiler's own header
    /// (`stdlib.h`), in the key by name only: never `cannot read stdlib.h`.
    #[test]
    fn included_names_are_found_as_the_compiler_finds_them() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("run")).unwrap();
        std::fs::create_dir_all(d.path().join("inc")).unwrap();
        std::fs::write(d.path().join("inc/local.h"), "#define L 1\n").unwrap();
        let compiler = |args: &[&str]| {
            Compiler::new("cc -c {src} -o {out}", "x", d.path().join("cache"))
                .with_args(args.iter().map(|a| a.to_string()))
                .in_dir(d.path().join("run"))
        };
        let key = |args: &[&str]| compiler(args).source_key(None, b"int k;").unwrap();
        let system = key(&["-include", "stdlib.h"]);
        assert_eq!(system, key(&["-include=stdlib.h"]));
        assert_ne!(
            system,
            key(&["-include", "string.h"]),
            "the name is in the key"
        );
        assert_ne!(system, key(&[]));
        for form in [
            &["--pre-include", "stdlib.h"][..],
            &["--pre-include=stdlib.h"],
            &["-imacros", "stdlib.h"],
            &["-imacros=stdlib.h"],
        ] {
            assert_eq!(
                compiler(form).key_words()[5..],
                [form[0].split('=').next().unwrap(), "stdlib.h"],
                "{form:?}"
            );
            compiler(form).source_key(None, b"int k;").unwrap();
        }
        // Found in an include directory: hashed by content.
        let with_local = || key(&["-I", "../inc", "-include", "local.h"]);
        let before = with_local();
        std::fs::write(d.path().join("inc/local.h"), "#define L 2\n").unwrap();
        assert_ne!(before, with_local());
        // The working directory comes first.
        std::fs::write(d.path().join("run/local.h"), "#define L 3\n").unwrap();
        let here = with_local();
        std::fs::write(d.path().join("inc/local.h"), "#define L 4\n").unwrap();
        assert_eq!(here, with_local());
        std::fs::write(d.path().join("run/local.h"), "#define L 5\n").unwrap();
        assert_ne!(here, with_local());
        // An absolute path that is not there is an error, as it is for the compiler.
        let e = compiler(&["-include", "/nonexistent/p.h"])
            .source_key(None, b"int k;")
            .unwrap_err();
        assert!(e.to_string().contains("/nonexistent/p.h"), "{e}");
    }

    #[test]
    fn identities_hold_no_install_path() {
        assert_eq!(
            without_install_paths(
                "clang version 19\nTarget: x\nInstalledDir: /usr/lib/llvm-19/bin\n"
            ),
            "clang version 19\nTarget: x\n"
        );
        assert!(is_nvcc("/opt/cuda/bin/nvcc") && !is_nvcc("nvcc-wrapper"));
    }
}
