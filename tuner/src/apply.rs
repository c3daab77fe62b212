//! Writing the accepted edits into the user's files: each file through a temporary file in its
//! own directory, flushed to disk, then renamed over the original (permissions kept), so that a
//! kill at any moment leaves every file either byte-identical or fully updated. Also the unified
//! diff that `--diff` prints instead.

use crate::error::{io_err, Error};
use crate::workcopy::{hash_bytes, Overlay, Tree};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Write `bytes` to `path` atomically: a temporary file in the same directory, flushed and
/// synced, then renamed. Keeps the permissions of `path` when it exists, else those of `like`,
/// else 0644.
pub fn write_atomic(path: &Path, bytes: &[u8], like: Option<&Path>) -> Result<(), Error> {
    write_atomic_io(path, bytes, like).map_err(io_err(path))
}

/// [`write_atomic`] with the system's error (for callers that word it themselves).
pub fn write_atomic_io(path: &Path, bytes: &[u8], like: Option<&Path>) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut builder = tempfile::Builder::new();
    builder.prefix(".hip-unroll-");
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o644));
    }
    let mut tmp = builder.tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.flush()?;
    tmp.as_file().sync_all()?;
    let keep = std::fs::metadata(path)
        .or_else(|e| like.map_or(Err(e), std::fs::metadata))
        .ok()
        .filter(|m| m.is_file());
    if let Some(m) = keep {
        std::fs::set_permissions(tmp.path(), m.permissions())?;
    }
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Apply `overlay` to the user's tree. Every file is first checked against the content it had
/// when the tree was scanned: if one changed meanwhile, nothing at all is written.
pub fn apply(tree: &Tree, overlay: &Overlay) -> Result<Vec<PathBuf>, Error> {
    for rel in overlay.keys() {
        let path = tree.root.join(rel);
        let now = std::fs::read(&path).map_err(io_err(&path))?;
        if tree.files.get(rel).map(|e| e.hash.as_str()) != Some(hash_bytes(&now).as_str()) {
            return Err(Error::TreeChanged(path.display().to_string()));
        }
    }
    let mut written = Vec::new();
    for (rel, bytes) in overlay {
        let path = tree.root.join(rel);
        write_atomic(&path, bytes, None)?;
        written.push(rel.clone());
    }
    Ok(written)
}

/// The unified diff (3 lines of context) from the user's files to `overlay`, paths relative to
/// the tree as `a/PATH` and `b/PATH`.
pub fn diff(tree: &Tree, overlay: &Overlay) -> Result<String, Error> {
    let mut out = String::new();
    for (rel, bytes) in overlay {
        let path = tree.root.join(rel);
        let old = std::fs::read(&path).map_err(io_err(&path))?;
        let old = String::from_utf8_lossy(&old);
        let new = String::from_utf8_lossy(bytes);
        let d = similar::TextDiff::from_lines(old.as_ref(), new.as_ref());
        let name = rel.display().to_string();
        out.push_str(
            &d.unified_diff()
                .context_radius(3)
                .header(&format!("a/{name}"), &format!("b/{name}"))
                .to_string(),
        );
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn keeps_permissions_and_replaces_whole() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("k.cu");
        std::fs::write(&p, "old").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o640)).unwrap();
        write_atomic(&p, b"new", None).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"new");
        let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o640);
        let leftovers: Vec<_> = std::fs::read_dir(d.path()).unwrap().collect();
        assert_eq!(leftovers.len(), 1);
    }

    #[test]
    fn apply_refuses_when_a_file_changed_since_the_scan() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("a.cu"), "a").unwrap();
        std::fs::write(d.path().join("b.cu"), "b").unwrap();
        let tree = Tree::scan(d.path(), &[]).unwrap();
        let mut ov = Overlay::new();
        ov.insert("a.cu".into(), b"A".to_vec());
        ov.insert("b.cu".into(), b"B".to_vec());
        std::fs::write(d.path().join("b.cu"), "edited").unwrap();
        assert!(matches!(apply(&tree, &ov), Err(Error::TreeChanged(_))));
        assert_eq!(std::fs::read(d.path().join("a.cu")).unwrap(), b"a");
        std::fs::write(d.path().join("b.cu"), "b").unwrap();
        assert_eq!(apply(&tree, &ov).unwrap().len(), 2);
        assert_eq!(std::fs::read(d.path().join("a.cu")).unwrap(), b"A");
        let text = diff(&Tree::scan(d.path(), &[]).unwrap(), &{
            let mut o = Overlay::new();
            o.insert("a.cu".into(), b"A2\n".to_vec());
            o
        })
        .unwrap();
        assert!(text.starts_with("--- a/a.cu\n+++ b/a.cu\n"), "{text}");
    }
}
