//! Verification of a variant: compile the original and the variant with the project's compile
//! command (`[compile] command` of hip-unroll.toml, or hipcc) plus the caller's extra flags
//! (`-I`, `-D`), and compare every kernel's argument layout (`codeobj::signature`). A header
//! (`.cuh`, `.h`, `.hpp`, ...) is compiled as HIP (`-x hip`; `-x cu` for nvcc).

use std::io::Write;
use std::path::{Path, PathBuf};

use codeobj::compile::{CompileError, Compiler, DEFAULT_ARCH, DEFAULT_COMMAND};
use codeobj::signature::Difference;

/// How to compile for verification.
#[derive(Debug, Clone)]
pub struct VerifyOptions {
    /// Command template with `{src}`, `{out}` and `{arch}` placeholders.
    pub command: String,
    pub arch: String,
    /// Appended to the command (`-I include`, `-DNDEBUG`).
    pub extra_args: Vec<String>,
    /// Where compiled objects are cached; `None`: a fresh temporary directory, removed after.
    /// (The cache key does not cover included headers, so the default never reuses objects.)
    pub cache_dir: Option<PathBuf>,
    /// The time limit of each compile (`[compile] timeout`).
    pub timeout: std::time::Duration,
}

impl Default for VerifyOptions {
    fn default() -> Self {
        VerifyOptions {
            command: DEFAULT_COMMAND.to_string(),
            arch: DEFAULT_ARCH.to_string(),
            extra_args: Vec::new(),
            cache_dir: None,
            timeout: codeobj::compile::DEFAULT_TIMEOUT,
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
}

/// Extensions of headers: a compiler reads them as C/C++ headers, not as kernels.
const HEADER_EXTENSIONS: &[&str] = &[
    "cuh", "h", "hh", "hpp", "hxx", "h++", "inl", "ipp", "tpp", "tcc", "txx",
];

/// For a header, the arguments that make the compiler read it as GPU source, placed before the
/// file on the command line: `-x cu` for nvcc, `-x hip` for any other compiler (hipcc, clang).
fn language_args(file: &Path, command: &str) -> impl Iterator<Item = String> {
    let header = file
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| HEADER_EXTENSIONS.contains(&e.to_ascii_lowercase().as_str()));
    let program = command.split_whitespace().next().unwrap_or_default();
    let nvcc = Path::new(program)
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("nvcc"));
    let lang = if nvcc { "cu" } else { "hip" };
    header
        .then(|| ["-x".to_string(), lang.to_string()])
        .into_iter()
        .flatten()
}

/// Compile `original` (a file) and `variant` (its rewritten bytes, written to a temporary file
/// beside the original so that relative includes resolve, and removed afterwards) and return
/// the differences in kernel argument layouts (empty: the variant is a drop-in replacement).
pub fn verify(
    original: &Path,
    variant: &[u8],
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
    let scratch = match &opts.cache_dir {
        Some(_) => None,
        None => Some(tempfile::tempdir().map_err(|error| VerifyError::Temp {
            dir: std::env::temp_dir().display().to_string(),
            error,
        })?),
    };
    let cache = match (&opts.cache_dir, &scratch) {
        (Some(c), _) => c.clone(),
        (None, Some(s)) => s.path().to_path_buf(),
        (None, None) => unreachable!("a scratch directory exists when no cache is given"),
    };
    let compiler = Compiler::new(opts.command.clone(), opts.arch.clone(), cache)
        .with_args(language_args(original, &opts.command).chain(opts.extra_args.iter().cloned()))
        .with_timeout(opts.timeout);
    let mut results = compiler.compile_all(&[original, tmp.path()]).into_iter();
    let a = results
        .next()
        .expect("two results")
        .map_err(|error| VerifyError::Compile {
            what: original.display().to_string(),
            error: Box::new(error),
        })?;
    let b = results
        .next()
        .expect("two results")
        .map_err(|error| VerifyError::Compile {
            what: format!("the variant of {}", original.display()),
            error: Box::new(error),
        })?;
    if a.code_objects.len() != b.code_objects.len() {
        return Err(VerifyError::CodeObjectCount {
            original: a.code_objects.len(),
            variant: b.code_objects.len(),
        });
    }
    let mut diffs = Vec::new();
    for (x, y) in a.code_objects.iter().zip(&b.code_objects) {
        diffs.extend(codeobj::signature::compare(x, y));
    }
    Ok(diffs)
}
