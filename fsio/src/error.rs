//! fsio's errors, typed, each one line for the user, and [`reason`]: the one short wording of the
//! system's I/O errors for the whole workspace (`disk full` for `ENOSPC`).

use std::fmt;
use std::path::{Path, PathBuf};

/// What a path is when it is not a regular file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Directory,
    Symlink,
    Fifo,
    CharDevice,
    BlockDevice,
    Socket,
    Other,
}

impl Kind {
    /// The kind of a file type that is not a regular file (`Other` for a regular file).
    pub fn of(t: &std::fs::FileType) -> Kind {
        use std::os::unix::fs::FileTypeExt;
        if t.is_dir() {
            Kind::Directory
        } else if t.is_symlink() {
            Kind::Symlink
        } else if t.is_fifo() {
            Kind::Fifo
        } else if t.is_char_device() {
            Kind::CharDevice
        } else if t.is_block_device() {
            Kind::BlockDevice
        } else if t.is_socket() {
            Kind::Socket
        } else {
            Kind::Other
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Kind::Directory => "a directory",
            Kind::Symlink => "a symbolic link",
            Kind::Fifo => "a FIFO (named pipe)",
            Kind::CharDevice => "a character device",
            Kind::BlockDevice => "a block device",
            Kind::Socket => "a socket",
            Kind::Other => "not a regular file",
        })
    }
}

/// What was being done when the system said no.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Read,
    Write,
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Op::Read => "read",
            Op::Write => "write",
        })
    }
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The system refused (`path` is the user's path, never a temporary file's).
    #[error("cannot {op} {}: {}", .path.display(), reason(.err))]
    Io {
        op: Op,
        path: PathBuf,
        err: std::io::Error,
    },
    /// Only regular files are read, and only regular files or new paths are written.
    #[error("{}: {}", .path.display(), not_regular(*.kind))]
    NotRegular { path: PathBuf, kind: Kind },
    /// An output (`-o`) that is a symbolic link: refused, never written through.
    #[error("cannot write {}: it is a symbolic link (name the file itself); it is left as it was", .path.display())]
    Symlink { path: PathBuf },
    #[error("{}: too large for {what} ({size} bytes; the limit is {cap})", .path.display())]
    TooLarge {
        path: PathBuf,
        what: &'static str,
        size: u64,
        cap: u64,
    },
    #[error("{}: not UTF-8 text", .path.display())]
    NotText { path: PathBuf },
    /// No write permission for us, or no write bit at all (also for root).
    #[error("cannot write {}: the file is read-only for you (mode {mode:04o}); it is left as it was", .path.display())]
    ReadOnly { path: PathBuf, mode: u32 },
    #[error("cannot write {} in place: it belongs to another user (uid {uid}) and its owner cannot be kept; it is left as it was (write the result elsewhere)", .path.display())]
    Owner { path: PathBuf, uid: u32 },
    #[error("cannot write {} in place: its group (gid {gid}) cannot be kept; it is left as it was (write the result elsewhere)", .path.display())]
    Group { path: PathBuf, gid: u32 },
    /// A replace by rename would give this name new content and leave the other names the old.
    #[error("cannot write {}: it has {links} hard links, and replacing it would leave the other names with the old content; it is left as it was", .path.display())]
    HardLinks { path: PathBuf, links: u64 },
    /// The file is no longer what was read: someone edited (or removed) it meanwhile.
    #[error("{}: edited since it was read; it is left as it was", .path.display())]
    Edited { path: PathBuf },
    /// Two paths of one set of changes are the same file.
    #[error("{} and {} are the same file", .a.display(), .b.display())]
    SameFile { a: PathBuf, b: PathBuf },
    /// An I/O error part-way through a set: what was written before it was restored.
    #[error("{cause}; the {restored} file(s) written before it were restored: all {total} files are as they were")]
    RolledBack {
        cause: Box<Error>,
        restored: usize,
        total: usize,
    },
    /// The roll-back itself failed: the journal stays, the next run finishes it.
    #[error("{cause}; restoring {} failed too ({why}): its original is kept in {}, and the next run restores it", .file.display(), .journal.display())]
    RollbackFailed {
        cause: Box<Error>,
        file: PathBuf,
        why: Box<Error>,
        journal: PathBuf,
    },
    /// A journal that is not one of ours (or damaged).
    #[error("the journal {} is unreadable ({why}); restore the files it names by hand, then remove it", .path.display())]
    Journal { path: PathBuf, why: String },
    /// A set was started while the journal of an earlier one is still there.
    #[error("the journal {} of an interrupted write is still there: recover it first", .path.display())]
    Pending { path: PathBuf },
}

impl Error {
    /// `map_err(Error::io(Op::Read, path))`.
    pub fn io(op: Op, path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
        move |err| Error::Io {
            op,
            path: path.to_path_buf(),
            err,
        }
    }

    /// Is this (or what caused it) an edit found where the content read was expected?
    pub fn is_edited(&self) -> bool {
        matches!(self, Error::Edited { .. })
    }

    /// The message of a read error without the path, for callers that name the file their own
    /// way (`k.cu: is a FIFO (named pipe), not a regular file`).
    pub fn reason(&self) -> String {
        match self {
            Error::Io { err, .. } => reason(err),
            Error::NotRegular { kind, .. } => not_regular(*kind),
            Error::TooLarge {
                what, size, cap, ..
            } => format!("too large for {what} ({size} bytes; the limit is {cap})"),
            Error::NotText { .. } => "not UTF-8 text".into(),
            e => e.to_string(),
        }
    }

    /// As a `std::io::Error`, for crates whose errors carry one beside the path: the system's
    /// error itself, or the [`Error::reason`] of a refusal (`InvalidInput`, `FileTooLarge`).
    pub fn into_io(self) -> std::io::Error {
        match self {
            Error::Io { err, .. } => err,
            e @ Error::TooLarge { .. } => {
                std::io::Error::new(std::io::ErrorKind::FileTooLarge, e.reason())
            }
            e => std::io::Error::new(std::io::ErrorKind::InvalidInput, e.reason()),
        }
    }

    /// The system's error underneath, when there is one.
    pub fn io_error(&self) -> Option<&std::io::Error> {
        match self {
            Error::Io { err, .. } => Some(err),
            Error::RolledBack { cause, .. } | Error::RollbackFailed { cause, .. } => {
                cause.io_error()
            }
            _ => None,
        }
    }
}

/// `is a FIFO (named pipe), not a regular file` (a directory is `not a file`, as `EISDIR` says).
fn not_regular(kind: Kind) -> String {
    match kind {
        Kind::Directory => "is a directory, not a file".into(),
        k => format!("is {k}, not a regular file"),
    }
}

/// A short, lower-case reason for an I/O error (`no such file or directory`, `disk full`),
/// without the `(os error N)` suffix or the path of a temporary file that `tempfile` appends.
pub fn reason(e: &std::io::Error) -> String {
    if let Some(code) = e.raw_os_error() {
        let known = match code {
            libc::ENOSPC => Some("disk full"),
            libc::EDQUOT => Some("disk quota exceeded"),
            libc::EROFS => Some("read-only file system"),
            libc::EPERM => Some("operation not permitted"),
            libc::EACCES => Some("permission denied"),
            libc::ENOENT => Some("no such file or directory"),
            libc::EISDIR => Some("is a directory, not a file"),
            libc::ENOTDIR => Some("a component of the path is not a directory"),
            libc::EFBIG => Some("file too large"),
            libc::EIO => Some("input/output error"),
            libc::ELOOP => Some("too many levels of symbolic links"),
            libc::ENAMETOOLONG => Some("file name too long"),
            libc::ETXTBSY => Some("text file busy"),
            _ => None,
        };
        if let Some(k) = known {
            return k.into();
        }
    }
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file or directory".into(),
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        std::io::ErrorKind::IsADirectory => "is a directory, not a file".into(),
        std::io::ErrorKind::StorageFull => "disk full".into(),
        _ => plain(&e.to_string()),
    }
}

/// The system's message, first letter in lower case, without `(os error N)` or ` at path "..."`.
fn plain(msg: &str) -> String {
    let mut s = msg;
    if let Some(i) = s.find(" at path \"") {
        s = &s[..i];
    }
    if let Some(i) = s.rfind(" (os error ") {
        s = &s[..i];
    }
    let mut c = s.chars();
    match (c.next(), c.clone().next()) {
        (Some(first), Some(second)) if first.is_uppercase() && !second.is_uppercase() => {
            first.to_lowercase().chain(c).collect()
        }
        _ => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_are_short() {
        let e = std::io::Error::from_raw_os_error(libc::ENOSPC);
        assert_eq!(reason(&e), "disk full");
        let e = std::io::Error::from_raw_os_error(libc::ENXIO);
        assert_eq!(reason(&e), "no such device or address");
        assert_eq!(
            plain("Invalid argument (os error 22) at path \"/d/.tmpX\""),
            "invalid argument"
        );
        assert_eq!(plain("EOF"), "EOF");
    }
}
