//! Atomic writes of the user's files: a temporary file `.hip-unroll-XXXXXX` in the target's own
//! directory, written and synced, given the target's mode, owner and group, then renamed over it.
//!
//! Two policies:
//! - an **output** (`-o FILE`, [`write_output`]) is a new path or an existing regular file; a
//!   symbolic link, a FIFO, a device, a socket or a directory is refused, as are a read-only
//!   file, another user's file whose owner cannot be kept, and a file with several hard links;
//! - a **rewrite** of a file that was read ([`rewrite`]: `check --fix`, `unroll --in-place`, the
//!   tuner's apply) goes through symbolic links to the file they name (the link stays a link),
//!   has the same refusals, and never overwrites an edit: the file is compared with the digest
//!   of what was read right before the rename, and the rename is an exchange
//!   (`renameat2(RENAME_EXCHANGE)`) whose displaced file is compared again, so an edit saved in
//!   between is put back instead of lost.

use crate::error::{Error, Kind, Op};
use crate::read::{digest, read, TEXT_CAP};
use crate::testpoint;
use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The prefix of every temporary file fsio creates beside a user's file.
pub const TEMP_PREFIX: &str = ".hip-unroll-";

/// The directory `path` is in (`.` for a bare name).
pub(crate) fn dir_of(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// A fresh `.hip-unroll-XXXXXX` name in `dir` (six letters and digits).
pub(crate) fn temp_name(dir: &Path) -> PathBuf {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let seed = format!(
        "{}:{}:{}:{}",
        std::process::id(),
        nanos,
        COUNTER.fetch_add(1, Ordering::Relaxed),
        dir.display()
    );
    let h = blake3::hash(seed.as_bytes());
    let name: String = h.as_bytes()[..6]
        .iter()
        .map(|b| ALPHABET[*b as usize % ALPHABET.len()] as char)
        .collect();
    dir.join(format!("{TEMP_PREFIX}{name}"))
}

/// Create `tmp` (which must not exist), mode 0600 until [`keep_meta`] or [`set_mode`].
pub(crate) fn create_new(tmp: &Path, shown: &Path) -> Result<std::fs::File, Error> {
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(tmp)
        .map_err(Error::io(Op::Write, shown))
}

/// The marker of a single write's temporary file (`-o`, `--in-place`, `--fix`):
/// `.hip-unroll-wPID-XXXXXX`, the writer's process id in the name, so that one a kill left
/// behind is recognised and removed by the next write in its directory ([`sweep_stale`]). A
/// journal's temporary files (`.hip-unroll-XXXXXX`) are not: the journal's recovery removes them.
const WRITE_MARK: &str = "w";

fn write_temp_name(dir: &Path) -> PathBuf {
    let t = temp_name(dir);
    let name = t.file_name().unwrap_or_default().to_string_lossy();
    let rand = name.strip_prefix(TEMP_PREFIX).unwrap_or(&name);
    dir.join(format!(
        "{TEMP_PREFIX}{WRITE_MARK}{}-{rand}",
        std::process::id()
    ))
}

/// The process id in a single write's temporary file name, if `name` is one.
fn write_temp_pid(name: &str) -> Option<i32> {
    let rest = name.strip_prefix(TEMP_PREFIX)?.strip_prefix(WRITE_MARK)?;
    let (pid, rand) = rest.split_once('-')?;
    (!rand.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()))
        .then(|| pid.parse().ok())
        .flatten()
}

/// Whether process `pid` is gone: no such process (one we may not signal still exists).
/// How a temporary file or directory named after its maker's process id is known stale.
pub fn process_gone(pid: i32) -> bool {
    pid > 0
        && unsafe { libc::kill(pid, 0) } == -1
        && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH)
}

/// Remove the temporary files of single writes in `dir` whose writer is gone (killed before
/// its rename): once per directory and process. Returns how many were removed.
pub(crate) fn sweep_stale(dir: &Path) -> usize {
    use std::collections::HashSet;
    use std::sync::{Mutex, OnceLock};
    static SWEPT: OnceLock<Mutex<HashSet<PathBuf>>> = OnceLock::new();
    let key = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    if !SWEPT
        .get_or_init(Default::default)
        .lock()
        .map(|mut s| s.insert(key))
        .unwrap_or(false)
    {
        return 0;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut removed = 0;
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = write_temp_pid(&name.to_string_lossy()) else {
            continue;
        };
        if process_gone(pid)
            && e.file_type().is_ok_and(|t| t.is_file())
            && std::fs::remove_file(e.path()).is_ok()
        {
            removed += 1;
        }
    }
    removed
}

/// A new temporary file in `dir` (a fresh name on a clash) for a single write; stale ones of
/// killed writers in `dir` are removed first.
fn create_temp(dir: &Path, shown: &Path) -> Result<(std::fs::File, PathBuf), Error> {
    sweep_stale(dir);
    let mut last = None;
    for _ in 0..16 {
        let tmp = write_temp_name(dir);
        match create_new(&tmp, shown) {
            Ok(f) => return Ok((f, tmp)),
            Err(Error::Io { err, .. }) if err.kind() == std::io::ErrorKind::AlreadyExists => {
                last = Some(err)
            }
            Err(e) => return Err(e),
        }
    }
    Err(Error::Io {
        op: Op::Write,
        path: shown.to_path_buf(),
        err: last.unwrap_or_else(|| std::io::Error::from_raw_os_error(libc::EEXIST)),
    })
}

/// Write `bytes` to `f` and sync them.
pub(crate) fn fill(f: &mut std::fs::File, bytes: &[u8], shown: &Path) -> Result<(), Error> {
    f.write_all(bytes)
        .and_then(|_| f.flush())
        .and_then(|_| f.sync_all())
        .map_err(Error::io(Op::Write, shown))
}

/// May we replace this existing regular file: writable (its permission bits give someone write
/// access, and the system lets us write it: no read-only mount, no immutable flag), its owner
/// and group keepable, one name only?
pub(crate) fn check_replace(shown: &Path, real: &Path, m: &std::fs::Metadata) -> Result<(), Error> {
    let mode = m.mode() & 0o7777;
    if mode & 0o222 == 0 || rustix::fs::access(real, rustix::fs::Access::WRITE_OK).is_err() {
        return Err(Error::ReadOnly {
            path: shown.to_path_buf(),
            mode,
        });
    }
    owner_keepable(shown, m)?;
    if m.nlink() > 1 {
        return Err(Error::HardLinks {
            path: shown.to_path_buf(),
            links: m.nlink(),
        });
    }
    Ok(())
}

/// Can a file we create be given `m`'s owner and group (root can; others only their own uid and
/// one of their groups)?
fn owner_keepable(shown: &Path, m: &std::fs::Metadata) -> Result<(), Error> {
    let euid = rustix::process::geteuid().as_raw();
    if euid == 0 {
        return Ok(());
    }
    if m.uid() != euid {
        return Err(Error::Owner {
            path: shown.to_path_buf(),
            uid: m.uid(),
        });
    }
    let gid = m.gid();
    let ours = rustix::process::getegid().as_raw() == gid
        || rustix::process::getgroups()
            .map(|g| g.iter().any(|g| g.as_raw() == gid))
            .unwrap_or(false);
    if !ours {
        return Err(Error::Group {
            path: shown.to_path_buf(),
            gid,
        });
    }
    Ok(())
}

/// Give the temporary file `f` the owner, group and mode of the file `m` it replaces.
pub(crate) fn keep_meta(
    f: &std::fs::File,
    m: &std::fs::Metadata,
    shown: &Path,
) -> Result<(), Error> {
    let ours = f.metadata().map_err(Error::io(Op::Write, shown))?;
    if (ours.uid(), ours.gid()) != (m.uid(), m.gid()) {
        std::os::unix::fs::fchown(f, Some(m.uid()), Some(m.gid())).map_err(|_| {
            if ours.uid() != m.uid() {
                Error::Owner {
                    path: shown.to_path_buf(),
                    uid: m.uid(),
                }
            } else {
                Error::Group {
                    path: shown.to_path_buf(),
                    gid: m.gid(),
                }
            }
        })?;
    }
    set_mode(f, m.mode() & 0o7777, shown)
}

pub(crate) fn set_mode(f: &std::fs::File, mode: u32, shown: &Path) -> Result<(), Error> {
    f.set_permissions(std::fs::Permissions::from_mode(mode))
        .map_err(Error::io(Op::Write, shown))
}

/// The digest of what `path` holds now; `None` when it is gone or no longer a regular file.
pub(crate) fn current_digest(path: &Path, shown: &Path) -> Result<Option<String>, Error> {
    match read(path, TEXT_CAP, "a file being replaced") {
        Ok(b) => Ok(Some(digest(&b))),
        Err(Error::Io { err, .. }) if err.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(Error::NotRegular { .. } | Error::TooLarge { .. }) => Ok(None),
        Err(Error::Io { err, .. }) => Err(Error::Io {
            op: Op::Read,
            path: shown.to_path_buf(),
            err,
        }),
        Err(e) => Err(e),
    }
}

fn rename_flags(from: &Path, to: &Path, flags: rustix::fs::RenameFlags) -> std::io::Result<()> {
    rustix::fs::renameat_with(rustix::fs::CWD, from, rustix::fs::CWD, to, flags)
        .map_err(std::io::Error::from)
}

/// `renameat2` flags this file system does not know.
fn unsupported(e: &std::io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EINVAL) | Some(libc::ENOSYS) | Some(libc::EOPNOTSUPP)
    )
}

/// Put the temporary file `tmp` in the place of `real`, which must still hold the content whose
/// digest is `expect` (else [`Error::Edited`], and `real` is as the editor left it). The test
/// point `POINT.before-rename` sits between the comparison and the rename. `tmp` is gone
/// afterwards whatever happens, unless an edit could not be put back (the error then says where
/// it is).
pub(crate) fn commit(
    tmp: &Path,
    real: &Path,
    shown: &Path,
    expect: &str,
    point: Option<&str>,
) -> Result<(), Error> {
    let edited = || Error::Edited {
        path: shown.to_path_buf(),
    };
    let discard = |e: Error| {
        let _ = std::fs::remove_file(tmp);
        e
    };
    match current_digest(real, shown) {
        Ok(Some(d)) if d == expect => {}
        Ok(_) => return Err(discard(edited())),
        Err(e) => return Err(discard(e)),
    }
    if let Some(p) = point {
        testpoint::hit(&format!("{p}.before-rename"));
    }
    match rename_flags(tmp, real, rustix::fs::RenameFlags::EXCHANGE) {
        Ok(()) => {
            // `tmp` now holds what `real` held at the exchange: it must be what was read.
            match current_digest(tmp, shown) {
                Ok(Some(d)) if d == expect => {
                    let _ = std::fs::remove_file(tmp);
                    Ok(())
                }
                _ => match rename_flags(tmp, real, rustix::fs::RenameFlags::EXCHANGE) {
                    Ok(()) => Err(discard(edited())),
                    Err(e) => Err(Error::Io {
                        op: Op::Write,
                        path: shown.to_path_buf(),
                        err: std::io::Error::new(
                            e.kind(),
                            format!(
                                "edited during the write, and the edit could not be put back ({}): it is in {}",
                                crate::error::reason(&e),
                                tmp.display()
                            ),
                        ),
                    }),
                },
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(discard(edited())),
        Err(e) if unsupported(&e) => {
            std::fs::rename(tmp, real).map_err(|e| discard(Error::io(Op::Write, shown)(e)))
        }
        Err(e) => Err(discard(Error::io(Op::Write, shown)(e))),
    }
}

/// Check an output path before anything is computed (`-o FILE`): a new path in an existing
/// directory, or an existing regular file we may replace. Returns the existing file's metadata.
pub fn check_output(path: &Path) -> Result<Option<std::fs::Metadata>, Error> {
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let dir = dir_of(path);
            match std::fs::metadata(dir) {
                Ok(m) if m.is_dir() => Ok(None),
                Ok(_) => Err(Error::io(Op::Write, path)(
                    std::io::Error::from_raw_os_error(libc::ENOTDIR),
                )),
                Err(e) => Err(Error::io(Op::Write, path)(e)),
            }
        }
        Err(e) => Err(Error::io(Op::Write, path)(e)),
        Ok(m) if m.file_type().is_symlink() => Err(Error::Symlink {
            path: path.to_path_buf(),
        }),
        Ok(m) if !m.is_file() => Err(Error::NotRegular {
            path: path.to_path_buf(),
            kind: Kind::of(&m.file_type()),
        }),
        Ok(m) => {
            check_replace(path, path, &m)?;
            Ok(Some(m))
        }
    }
}

/// Write an output (`-o FILE`) atomically under the output policy (see [`check_output`]). A
/// replaced file keeps its mode, owner and group; a new one gets the mode of `like` (a rewrite
/// of `like` written elsewhere) or 0644.
pub fn write_output(path: &Path, bytes: &[u8], like: Option<&Path>) -> Result<(), Error> {
    let existing = check_output(path)?;
    let (mut f, tmp) = create_temp(dir_of(path), path)?;
    let result = (|| {
        fill(&mut f, bytes, path)?;
        match &existing {
            Some(m) => keep_meta(&f, m, path)?,
            None => {
                let mode = like
                    .and_then(|l| std::fs::metadata(l).ok())
                    .filter(|m| m.is_file())
                    .map_or(0o644, |m| m.mode() & 0o777);
                set_mode(&f, mode, path)?;
            }
        }
        testpoint::hit("fsio.output.before-rename");
        let flags = if existing.is_some() {
            rustix::fs::RenameFlags::empty()
        } else {
            // Whatever appeared there since the check is not replaced unchecked.
            rustix::fs::RenameFlags::NOREPLACE
        };
        match rename_flags(&tmp, path, flags) {
            Ok(()) => Ok(()),
            Err(e) if unsupported(&e) => {
                std::fs::rename(&tmp, path).map_err(Error::io(Op::Write, path))
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                let m = check_output(path)?.ok_or_else(|| Error::io(Op::Write, path)(e))?;
                keep_meta(&f, &m, path)?;
                std::fs::rename(&tmp, path).map_err(Error::io(Op::Write, path))
            }
            Err(e) => Err(Error::io(Op::Write, path)(e)),
        }
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Rewrite a file that was read, whose content had the digest `expect` ([`crate::digest`]):
/// through symbolic links to the file they name, keeping its mode, owner and group, refused when
/// read-only, another user's (without the right to keep the owner) or hard-linked, and never
/// over an edit ([`Error::Edited`]: the file is left as the editor saved it). The test point
/// `POINT.before-rename` sits between the last comparison and the rename.
pub fn rewrite(path: &Path, bytes: &[u8], expect: &str, point: Option<&str>) -> Result<(), Error> {
    let real = std::fs::canonicalize(path).map_err(Error::io(Op::Write, path))?;
    let m = std::fs::metadata(&real).map_err(Error::io(Op::Write, path))?;
    if !m.is_file() {
        return Err(Error::NotRegular {
            path: path.to_path_buf(),
            kind: Kind::of(&m.file_type()),
        });
    }
    check_replace(path, &real, &m)?;
    let (mut f, tmp) = create_temp(dir_of(&real), path)?;
    let prepared = fill(&mut f, bytes, path).and_then(|_| keep_meta(&f, &m, path));
    drop(f);
    if let Err(e) = prepared {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    commit(&tmp, &real, path, expect, point)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temps(dir: &Path) -> Vec<String> {
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(TEMP_PREFIX))
            .collect()
    }

    #[test]
    fn output_replaces_a_regular_file_keeping_its_mode() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("r.txt");
        std::fs::write(&p, "old").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o640)).unwrap();
        write_output(&p, b"new", None).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"new");
        assert_eq!(std::fs::metadata(&p).unwrap().mode() & 0o777, 0o640);
        let n = d.path().join("n.txt");
        write_output(&n, b"x", None).unwrap();
        assert_eq!(std::fs::metadata(&n).unwrap().mode() & 0o777, 0o644);
        assert!(temps(d.path()).is_empty());
    }

    #[test]
    fn output_refuses_links_read_only_files_and_missing_directories() {
        let d = tempfile::tempdir().unwrap();
        let target = d.path().join("t.txt");
        std::fs::write(&target, "keep").unwrap();
        let link = d.path().join("l.txt");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        assert!(matches!(
            write_output(&link, b"x", None),
            Err(Error::Symlink { .. })
        ));
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        let hard = d.path().join("h.txt");
        std::fs::hard_link(&target, &hard).unwrap();
        assert!(matches!(
            write_output(&hard, b"x", None),
            Err(Error::HardLinks { links: 2, .. })
        ));
        std::fs::remove_file(&hard).unwrap();
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o444)).unwrap();
        let e = write_output(&target, b"x", None).unwrap_err();
        assert!(matches!(e, Error::ReadOnly { mode: 0o444, .. }), "{e}");
        assert_eq!(std::fs::read(&target).unwrap(), b"keep");
        let e = write_output(&d.path().join("no/such.txt"), b"x", None).unwrap_err();
        assert!(e.to_string().ends_with("no such file or directory"), "{e}");
        assert!(temps(d.path()).is_empty());
    }

    #[test]
    fn rewrite_goes_through_symlinks_and_refuses_an_edited_file() {
        let d = tempfile::tempdir().unwrap();
        let real = d.path().join("k.cu");
        std::fs::write(&real, "old").unwrap();
        let link = d.path().join("link.cu");
        std::os::unix::fs::symlink("k.cu", &link).unwrap();
        rewrite(&link, b"new", &digest(b"old"), None).unwrap();
        assert_eq!(std::fs::read(&real).unwrap(), b"new");
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        let e = rewrite(&real, b"newer", &digest(b"old"), None).unwrap_err();
        assert!(e.is_edited(), "{e}");
        assert_eq!(std::fs::read(&real).unwrap(), b"new");
        assert!(temps(d.path()).is_empty());
    }
}
