//! The user's files, in and out, for every command, on top of `fsio` (the policy and its typed
//! errors live there; this module only turns them into the binary's errors): input paths
//! checked with one clear reason, sources and objects read as bounded regular files, results
//! printed to stdout (a closed pipe, as in `| head`, is not an error) or written to `-o FILE`
//! (`-` is stdout; a new path or a regular file, never a link, FIFO or device), and files that
//! were read rewritten in place without overwriting an edit.

use anyhow::Context;
use std::io::Write;
use std::path::Path;

/// The exit status of a command that left a file alone because it was edited while the command
/// ran (`check --fix`, `unroll --in-place`, `tune`): nothing of that file was written.
pub const EXIT_EDITED: u8 = 3;

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

/// Is this `-o` argument stdout (`-`)?
pub fn is_stdout(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// Check an `-o FILE` before the command does its work, so that a refused target (a device, a
/// FIFO, a symbolic link, a read-only or hard-linked file, a missing directory) fails at once.
pub fn check_output(path: &Path) -> anyhow::Result<()> {
    if is_stdout(path) {
        return Ok(());
    }
    fsio::check_output(path)?;
    Ok(())
}

/// Write an output (`-o FILE`; `-` is stdout) atomically: see `fsio::write_output`.
pub fn output(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    output_like(path, bytes, None)
}

/// [`output`] of a rewrite of `like` written elsewhere: a new file gets `like`'s mode.
pub fn output_like(path: &Path, bytes: &[u8], like: Option<&Path>) -> anyhow::Result<()> {
    if is_stdout(path) {
        return stdout_bytes(bytes);
    }
    fsio::write_output(path, bytes, like)?;
    Ok(())
}

/// Rewrite the file `path` that was read as `read`, in place (through a symbolic link to the
/// file it names), keeping its mode, owner and group; refused for a read-only, another user's
/// or hard-linked file, and never over an edit saved since it was read (`fsio::Error::Edited`).
/// `point` names the test point between the last comparison and the rename.
pub fn rewrite_in_place(
    path: &Path,
    read: &[u8],
    bytes: &[u8],
    point: &str,
) -> Result<(), fsio::Error> {
    fsio::rewrite(path, bytes, &fsio::digest(read), Some(point))
}

/// The bytes of the source file `path` (a regular file, size-capped).
pub fn read_source(path: &Path) -> anyhow::Result<Vec<u8>> {
    Ok(fsio::read_source(path)?)
}

/// `path` must be an existing regular file; the error names it and says what it is instead.
pub fn require_file(path: &Path) -> anyhow::Result<()> {
    match fsio::regular(path) {
        Ok(_) => Ok(()),
        Err(fsio::Error::Io { path, err, .. }) => {
            anyhow::bail!("{}: {}", path.display(), fsio::reason(&err))
        }
        Err(e) => Err(e.into()),
    }
}

/// A short, lower-case reason for an I/O error (`no such file or directory`, `disk full`).
pub fn io_reason(e: &std::io::Error) -> String {
    fsio::reason(e)
}

/// A code-object reader's error as one line: I/O errors worded as for every other input.
pub fn load_error(e: &codeobj::LoadError) -> String {
    match e {
        codeobj::LoadError::Io(path, e) => format!("{path}: {}", io_reason(e)),
        e => e.to_string(),
    }
}

/// `check --hsaco`'s join error as one line: I/O errors worded as for every other input.
pub fn hsaco_error(e: guards::hsaco::Error) -> anyhow::Error {
    match e {
        guards::hsaco::Error::Load(e) => anyhow::anyhow!(load_error(&e)),
        e => e.into(),
    }
}
