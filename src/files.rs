//! The user's files, in and out: input paths checked with one clear reason, results printed to
//! stdout (a closed pipe, as in `| head`, is not an error) or written atomically (a temporary
//! file in the same directory, then a rename).

use anyhow::{bail, Context};
use std::io::Write;
use std::path::Path;

/// Print a command's whole output. A reader that stopped early (`| head`) ends the output
/// quietly instead of panicking like `print!`.
pub fn stdout(text: &str) -> anyhow::Result<()> {
    stdout_bytes(text.as_bytes())
}

/// [`stdout`] for output that need not be UTF-8 (a rewritten source file, byte for byte).
pub fn stdout_bytes(bytes: &[u8]) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|_| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(e).context("cannot write to stdout")
        }
        _ => Ok(()),
    }
}

/// Write `bytes` to `path` through a temporary file in the same directory, then rename, so that
/// a reader never sees half a file and an old one is replaced whole. The file gets the usual
/// permissions of a new file (0644), not tempfile's 0600.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    write_atomic_like(path, bytes, None)
}

/// [`write_atomic`] that keeps permissions: those of `path` when it exists (a file rewritten in
/// place keeps its mode), else those of `like` (a rewrite of `like` written elsewhere), else 0644.
/// The one implementation is `tuner::apply::write_atomic` (temp file, flush, fsync, rename),
/// which `tune` uses for the user's files.
pub fn write_atomic_like(path: &Path, bytes: &[u8], like: Option<&Path>) -> anyhow::Result<()> {
    tuner::apply::write_atomic_io(path, bytes, like)
        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))
}

/// `path` must be an existing regular file; the error names it and says what it is instead.
pub fn require_file(path: &Path) -> anyhow::Result<()> {
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() => Ok(()),
        Ok(m) if m.is_dir() => bail!("{}: is a directory, not a file", path.display()),
        Ok(_) => bail!("{}: not a regular file", path.display()),
        Err(e) => bail!("{}: {}", path.display(), io_reason(&e)),
    }
}

/// A short, lower-case reason for the common I/O errors (`no such file or directory`), the
/// system's wording for the others.
pub fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file or directory".into(),
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        std::io::ErrorKind::IsADirectory => "is a directory, not a file".into(),
        _ => e.to_string(),
    }
}

/// A code-object reader's error as one line: I/O errors worded as for every other input.
pub fn load_error(e: &codeobj::LoadError) -> String {
    match e {
        codeobj::LoadError::Io(path, e) => format!("{path}: {}", io_reason(e)),
        e => e.to_string(),
    }
}
