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

/// [`write_atomic`] that keeps what an in-place write would keep: when `path` exists, its
/// permissions and its owner and group (a file another user owns is refused when its owner
/// cannot be kept), and it must be writable by us (a read-only file is refused, as a plain
/// write would be); else the permissions of `like` (a rewrite of `like` written elsewhere),
/// else 0644. Errors name `path`, never the temporary file.
pub fn write_atomic_like(path: &Path, bytes: &[u8], like: Option<&Path>) -> anyhow::Result<()> {
    let shown = path.display();
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let existing = std::fs::metadata(path).ok().filter(|m| m.is_file());
    #[cfg(unix)]
    if existing.is_some() && !writable(path) {
        bail!("cannot write {shown}: permission denied (the file is read-only for you; it is left as it was)");
    }
    let mut builder = tempfile::Builder::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o644));
    }
    let why = |e: std::io::Error| anyhow::anyhow!("cannot write {shown}: {}", plain_reason(&e));
    let mut tmp = builder.tempfile_in(dir).map_err(why)?;
    tmp.write_all(bytes)
        .and_then(|_| tmp.flush())
        .map_err(why)?;
    #[cfg(unix)]
    if let Some(m) = &existing {
        keep_owner(tmp.as_file(), m).map_err(|e| {
            anyhow::anyhow!(
                "cannot write {shown} in place: {e}; it is left as it was (write the result elsewhere)"
            )
        })?;
    }
    let keep = existing.or_else(|| {
        like.and_then(|l| std::fs::metadata(l).ok())
            .filter(|m| m.is_file())
    });
    if let Some(m) = keep {
        tmp.as_file()
            .set_permissions(m.permissions())
            .map_err(why)?;
    }
    tmp.persist(path).map_err(|e| why(e.error))?;
    Ok(())
}

/// Rewrite an existing file atomically, keeping its permissions, owner and group (see
/// [`write_atomic_like`]).
pub fn rewrite_in_place(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    require_file(path)?;
    write_atomic_like(path, bytes, None)
}

/// May this process write `path` (its permission bits, ACLs, a read-only mount)?
#[cfg(unix)]
fn writable(path: &Path) -> bool {
    rustix::fs::access(path, rustix::fs::Access::WRITE_OK).is_ok()
}

/// Give the temporary file the owner and group of the file it replaces. Only root may give a
/// file away; when that is impossible the rewrite is refused rather than silently making the
/// file ours.
#[cfg(unix)]
fn keep_owner(tmp: &std::fs::File, original: &std::fs::Metadata) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt;
    let ours = tmp.metadata().map_err(|e| io_reason(&e))?;
    if ours.uid() == original.uid() && ours.gid() == original.gid() {
        return Ok(());
    }
    std::os::unix::fs::fchown(tmp, Some(original.uid()), Some(original.gid())).map_err(|_| {
        if ours.uid() != original.uid() {
            format!(
                "it belongs to another user (uid {}) and its owner cannot be kept",
                original.uid()
            )
        } else {
            format!("its group (gid {}) cannot be kept", original.gid())
        }
    })
}

/// [`io_reason`] of the error itself, without the path of the temporary file that `tempfile`
/// appends to it (`... at path "/dir/.tmpXXXX"`).
fn plain_reason(e: &std::io::Error) -> String {
    let r = io_reason(e);
    match r.find(" at path \"") {
        Some(i) => r[..i].to_string(),
        None => r,
    }
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

/// `check --hsaco`'s join error as one line: I/O errors worded as for every other input.
pub fn hsaco_error(e: guards::hsaco::Error) -> anyhow::Error {
    match e {
        guards::hsaco::Error::Load(e) => anyhow::anyhow!(load_error(&e)),
        e => e.into(),
    }
}
