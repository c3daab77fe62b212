//! Writing the accepted edits into the user's files, as one journaled transaction in the state
//! directory (`STATE/apply`, through `fsio::txn`): every file gets its new content or none does.
//! Each file is compared with the content the tree was scanned with right before its own rename
//! (an exchange that puts back an edit saved meanwhile), and the whole set once more after;
//! an edited file stops the set, is left as the user saved it, and is reported. An apply that a
//! kill interrupted is rolled back by the next `tune` (plain or `--resume`) before it scans the
//! tree: the tree is then exactly the one the killed run started from, so `--resume` continues
//! that run and reuses its decisions. The journal is held until the run is recorded finished in
//! the ledger ([`release`] after `Ledger::finish`): a kill between the last rename and that
//! record is rolled back like the others (the run stays resumable), one after it keeps the new
//! contents (the run is done, its report in the ledger). Also the unified diff that `--diff`
//! prints instead.

use crate::error::Error;
use crate::workcopy::{Overlay, Tree};
use std::path::{Path, PathBuf};

/// Test points of the apply: `tuner.apply.STEP` (see `fsio::txn`).
pub const POINT: &str = "tuner.apply";

/// The journal of the apply in the state directory `state`.
pub fn journal(state: &Path) -> fsio::txn::Journal {
    fsio::txn::Journal::new(state.join("apply"), POINT)
}

/// What the apply did, paths relative to the tree.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Applied {
    /// Files written (every file of the overlay, or none).
    pub written: Vec<PathBuf>,
    /// Files edited since the tree was scanned: left alone, and nothing was applied.
    pub edited: Vec<PathBuf>,
}

/// Apply `overlay` to the user's tree as one transaction journaled in `state`. Files are
/// written through symbolic links, keep their mode, owner and group, and a read-only, another
/// user's (when the owner cannot be kept) or hard-linked file refuses the whole set before
/// anything is written. An I/O error part-way is an error after every file is restored.
/// The journal is held for the ledger's run `run_id` (see [`release`]).
pub fn apply(tree: &Tree, overlay: &Overlay, state: &Path, run_id: i64) -> Result<Applied, Error> {
    let mut changes = Vec::with_capacity(overlay.len());
    for (rel, bytes) in overlay {
        let path = tree.root.join(rel);
        let Some(entry) = tree.files.get(rel) else {
            return Ok(Applied {
                written: Vec::new(),
                edited: vec![rel.clone()],
            });
        };
        changes.push(fsio::txn::Change {
            path,
            old: entry.hash.clone(),
            new: bytes.clone(),
        });
    }
    let done = journal(state).held(&run_id.to_string()).apply(&changes)?;
    let rel = |ps: Vec<PathBuf>| -> Vec<PathBuf> {
        ps.into_iter()
            .map(|p| {
                p.strip_prefix(&tree.root)
                    .map(Path::to_path_buf)
                    .unwrap_or(p)
            })
            .collect()
    };
    Ok(Applied {
        written: rel(done.written),
        edited: rel(done.edited),
    })
}

/// Roll back an apply that a kill interrupted (`None` when there was none), or complete one
/// whose run the ledger records finished. Call it holding the state directory's lock, before
/// the tree is scanned.
pub fn recover(state: &Path) -> Result<Option<fsio::txn::Recovery>, Error> {
    let mut lookup = Ok(false);
    let r = journal(state).recover_with(|tag| {
        lookup = match tag.parse::<i64>() {
            Ok(id) => crate::ledger::run_finished(state, id),
            Err(_) => Ok(false),
        };
        *lookup.as_ref().unwrap_or(&false)
    })?;
    lookup?;
    Ok(r)
}

/// Remove the apply's journal once the run is recorded finished in the ledger.
pub fn release(state: &Path) -> Result<(), Error> {
    Ok(journal(state).release()?)
}

/// `path` as reports show it: relative to the tree's root when it is inside.
pub fn shown(path: &Path, root: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .display()
        .to_string()
}

fn list(paths: &[String]) -> String {
    const SHOWN: usize = 5;
    let mut s = paths
        .iter()
        .take(SHOWN)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if paths.len() > SHOWN {
        s.push_str(&format!(" and {} more", paths.len() - SHOWN));
    }
    s
}

/// The report's note for files an apply found edited.
pub fn edited_note(edited: &[PathBuf]) -> String {
    let names: Vec<String> = edited.iter().map(|p| p.display().to_string()).collect();
    format!(
        "{} edited since tune read {}: left as saved, and nothing was applied (tune again to apply to the edited tree)",
        list(&names),
        if names.len() == 1 { "it" } else { "them" }
    )
}

/// The report's note for an interrupted apply that this run rolled back (or, when its run had
/// finished, completed).
pub fn recovered_note(r: &fsio::txn::Recovery, root: &Path) -> String {
    let names = |ps: &[PathBuf]| ps.iter().map(|p| shown(p, root)).collect::<Vec<_>>();
    if r.completed {
        let mut s = format!(
            "the apply of a finished run, killed before its journal was removed, was completed: {} file(s) kept updated",
            r.kept.len()
        );
        if !r.edited.is_empty() {
            s.push_str(&format!(
                "; edited since, left as saved: {}",
                list(&names(&r.edited))
            ));
        }
        return s;
    }
    let mut s = format!(
        "an apply interrupted by a kill was rolled back: {} file(s) restored, {} untouched, {} temporary file(s) removed",
        r.restored.len(),
        r.untouched.len(),
        r.temps_removed
    );
    if !r.edited.is_empty() {
        s.push_str(&format!(
            "; edited since, left as saved: {}",
            list(&names(&r.edited))
        ));
    }
    s
}

/// The unified diff (3 lines of context) from the user's files to `overlay`, paths relative to
/// the tree as `a/PATH` and `b/PATH`.
pub fn diff(tree: &Tree, overlay: &Overlay) -> Result<String, Error> {
    let mut out = String::new();
    for (rel, bytes) in overlay {
        let path = tree.root.join(rel);
        let old = fsio::read_source(&path)?;
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
        let state = tempfile::tempdir().unwrap();
        let p = d.path().join("k.cu");
        std::fs::write(&p, "old").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o640)).unwrap();
        let tree = Tree::scan(d.path(), &[]).unwrap();
        let mut ov = Overlay::new();
        ov.insert("k.cu".into(), b"new".to_vec());
        let a = apply(&tree, &ov, state.path(), 1).unwrap();
        assert_eq!(a.written, vec![PathBuf::from("k.cu")]);
        assert_eq!(std::fs::read(&p).unwrap(), b"new");
        let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o640);
        let leftovers: Vec<_> = std::fs::read_dir(d.path()).unwrap().collect();
        assert_eq!(leftovers.len(), 1);
        // Held until the run is recorded finished, then released.
        assert!(state.path().join("apply/journal.json").exists());
        release(state.path()).unwrap();
        assert!(!state.path().join("apply").exists());
    }

    #[test]
    fn apply_writes_nothing_when_a_file_changed_since_the_scan() {
        let d = tempfile::tempdir().unwrap();
        let state = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("a.cu"), "a").unwrap();
        std::fs::write(d.path().join("b.cu"), "b").unwrap();
        let tree = Tree::scan(d.path(), &[]).unwrap();
        let mut ov = Overlay::new();
        ov.insert("a.cu".into(), b"A".to_vec());
        ov.insert("b.cu".into(), b"B".to_vec());
        std::fs::write(d.path().join("b.cu"), "edited").unwrap();
        let a = apply(&tree, &ov, state.path(), 1).unwrap();
        assert_eq!(a.edited, vec![PathBuf::from("b.cu")]);
        assert!(a.written.is_empty());
        assert_eq!(std::fs::read(d.path().join("a.cu")).unwrap(), b"a");
        std::fs::write(d.path().join("b.cu"), "b").unwrap();
        assert_eq!(apply(&tree, &ov, state.path(), 1).unwrap().written.len(), 2);
        assert_eq!(std::fs::read(d.path().join("a.cu")).unwrap(), b"A");
        let text = diff(&Tree::scan(d.path(), &[]).unwrap(), &{
            let mut o = Overlay::new();
            o.insert("a.cu".into(), b"A2\n".to_vec());
            o
        })
        .unwrap();
        assert!(text.starts_with("--- a/a.cu\n+++ b/a.cu\n"), "{text}");
    }

    #[test]
    fn a_read_only_file_refuses_the_whole_set() {
        let d = tempfile::tempdir().unwrap();
        let state = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("a.cu"), "a").unwrap();
        std::fs::write(d.path().join("b.cu"), "b").unwrap();
        std::fs::set_permissions(
            d.path().join("b.cu"),
            std::fs::Permissions::from_mode(0o444),
        )
        .unwrap();
        let tree = Tree::scan(d.path(), &[]).unwrap();
        let mut ov = Overlay::new();
        ov.insert("a.cu".into(), b"A".to_vec());
        ov.insert("b.cu".into(), b"B".to_vec());
        let e = apply(&tree, &ov, state.path(), 1).unwrap_err();
        assert!(e.to_string().contains("read-only"), "{e}");
        assert_eq!(std::fs::read(d.path().join("a.cu")).unwrap(), b"a");
        assert_eq!(std::fs::read(d.path().join("b.cu")).unwrap(), b"b");
    }
}
