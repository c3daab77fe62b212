//! Bounded reads of the user's files: regular files only (a device, a FIFO or a directory is
//! refused without being opened for long: a FIFO is opened non-blocking, so nothing waits for a
//! writer), and never more than a cap, so `/dev/zero` cannot grow memory and a huge file is a
//! clear error instead of an allocation failure.

use crate::error::{Error, Kind, Op};
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// Sources (`.cu`, `.hip`, headers): larger than any hand-written or generated kernel file.
pub const SOURCE_CAP: u64 = 64 << 20;
/// Code objects, bundles, executables and shared libraries with device code.
pub const OBJECT_CAP: u64 = 4 << 30;
/// Small text inputs: launch specs, configs, JSON and CSV documents, journals.
pub const TEXT_CAP: u64 = 256 << 20;

/// `path`'s metadata (through symbolic links), which must be a regular file's.
pub fn regular(path: &Path) -> Result<std::fs::Metadata, Error> {
    let m = std::fs::metadata(path).map_err(Error::io(Op::Read, path))?;
    if !m.is_file() {
        return Err(Error::NotRegular {
            path: path.to_path_buf(),
            kind: Kind::of(&m.file_type()),
        });
    }
    Ok(m)
}

/// The bytes of the regular file `path`, at most `cap` of them (`what` names the kind of input
/// in the error: "a source file", "a code object").
pub fn read(path: &Path, cap: u64, what: &'static str) -> Result<Vec<u8>, Error> {
    regular(path)?;
    // Non-blocking: should the path have become a FIFO since, opening it does not wait.
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(Error::io(Op::Read, path))?;
    let m = f.metadata().map_err(Error::io(Op::Read, path))?;
    if !m.is_file() {
        return Err(Error::NotRegular {
            path: path.to_path_buf(),
            kind: Kind::of(&m.file_type()),
        });
    }
    let too_large = |size| Error::TooLarge {
        path: path.to_path_buf(),
        what,
        size,
        cap,
    };
    if m.len() > cap {
        return Err(too_large(m.len()));
    }
    let mut out = Vec::with_capacity(m.len() as usize);
    // One byte past the cap tells a file that grew while it was read.
    f.take(cap.saturating_add(1))
        .read_to_end(&mut out)
        .map_err(Error::io(Op::Read, path))?;
    if out.len() as u64 > cap {
        return Err(too_large(out.len() as u64));
    }
    Ok(out)
}

/// [`read`] of UTF-8 text.
pub fn read_to_string(path: &Path, cap: u64, what: &'static str) -> Result<String, Error> {
    String::from_utf8(read(path, cap, what)?).map_err(|_| Error::NotText {
        path: path.to_path_buf(),
    })
}

/// [`read`] of a source file ([`SOURCE_CAP`]).
pub fn read_source(path: &Path) -> Result<Vec<u8>, Error> {
    read(path, SOURCE_CAP, "a source file")
}

/// The blake3 digest of `bytes`, in hex: how fsio compares a file with what was read.
pub fn digest(bytes: &[u8]) -> String {
    blake3::hash(bytes).to_hex().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_devices_fifos_and_large_files() {
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("p");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid C string.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        let e = read_source(&fifo).unwrap_err();
        assert!(
            matches!(
                e,
                Error::NotRegular {
                    kind: Kind::Fifo,
                    ..
                }
            ),
            "{e}"
        );
        let e = read_source(Path::new("/dev/zero")).unwrap_err();
        assert!(
            matches!(
                e,
                Error::NotRegular {
                    kind: Kind::CharDevice,
                    ..
                }
            ),
            "{e}"
        );
        let f = d.path().join("big");
        std::fs::write(&f, vec![b'x'; 100]).unwrap();
        let e = read(&f, 99, "a test file").unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "{}: too large for a test file (100 bytes; the limit is 99)",
                f.display()
            )
        );
        assert_eq!(read(&f, 100, "a test file").unwrap().len(), 100);
        assert_eq!(read(&f, u64::MAX, "a test file").unwrap().len(), 100);
        let e = read_source(d.path()).unwrap_err();
        assert!(e.to_string().ends_with("is a directory, not a file"), "{e}");
    }
}
