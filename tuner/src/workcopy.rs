//! Private working copies of the user's tree, one per slot, under the state directory. The
//! user's tree is only read here. A slot is copied in full once; afterwards [`Slot::sync`]
//! rewrites only the files that differ from what the slot holds (a changed user file, a
//! variant's file, a variant's file to restore). Builds write into the slot, so hard links or
//! reflinks would let them write into the user's files: everything is copied.
//!
//! The tree is the directory `tune` runs in, minus the state directory, `.git`, and whatever
//! `.gitignore`/`.ignore` files exclude (build outputs), walked with the `ignore` crate.

use crate::error::{io_err, Error};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One file of the tree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileEntry {
    /// blake3 of the content.
    pub hash: String,
    pub executable: bool,
}

/// The user's tree as scanned at the start: relative path -> content hash.
#[derive(Debug, Clone)]
pub struct Tree {
    pub root: PathBuf,
    pub files: BTreeMap<PathBuf, FileEntry>,
    /// Content hash of the whole tree (paths, contents, executable bits).
    pub hash: String,
}

pub fn hash_bytes(b: &[u8]) -> String {
    blake3::hash(b).to_hex().to_string()
}

fn is_executable(m: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt;
    m.permissions().mode() & 0o111 != 0
}

impl Tree {
    /// Walk `root` (canonical) skipping `exclude` (the state directory), `.git` and ignored
    /// files. Symbolic links are followed as files; special files are skipped.
    pub fn scan(root: &Path, exclude: &[PathBuf]) -> Result<Tree, Error> {
        let root = std::fs::canonicalize(root).map_err(io_err(root))?;
        let exclude: Vec<PathBuf> = exclude
            .iter()
            .map(|p| std::fs::canonicalize(p).unwrap_or_else(|_| p.clone()))
            .collect();
        let ex2 = exclude.clone();
        let walker = ignore::WalkBuilder::new(&root)
            .hidden(false)
            .require_git(false)
            .follow_links(false)
            .filter_entry(move |e| {
                let p = e.path();
                !(e.file_name() == ".git" || ex2.iter().any(|x| p == x))
            })
            .build();
        let mut files = BTreeMap::new();
        for entry in walker {
            let entry = entry.map_err(|e| Error::Io {
                path: root.display().to_string(),
                reason: e.to_string(),
            })?;
            let p = entry.path();
            let ft = match entry.file_type() {
                Some(t) => t,
                None => continue,
            };
            if ft.is_dir() {
                continue;
            }
            let meta = std::fs::metadata(p).map_err(io_err(p))?;
            if !meta.is_file() {
                continue;
            }
            let bytes = std::fs::read(p).map_err(io_err(p))?;
            let rel = p.strip_prefix(&root).expect("under root").to_path_buf();
            files.insert(
                rel,
                FileEntry {
                    hash: hash_bytes(&bytes),
                    executable: is_executable(&meta),
                },
            );
        }
        let hash = tree_hash(&files);
        Ok(Tree { root, files, hash })
    }

    /// The content hash of this tree with `overlay` (relative path -> new content) applied.
    pub fn state_hash(&self, overlay: &Overlay) -> String {
        if overlay.is_empty() {
            return self.hash.clone();
        }
        let mut files = self.files.clone();
        for (p, bytes) in overlay {
            let executable = files.get(p).is_some_and(|e| e.executable);
            files.insert(
                p.clone(),
                FileEntry {
                    hash: hash_bytes(bytes),
                    executable,
                },
            );
        }
        tree_hash(&files)
    }
}

fn tree_hash(files: &BTreeMap<PathBuf, FileEntry>) -> String {
    let mut h = blake3::Hasher::new();
    h.update(b"hip-unroll tree v1\0");
    for (p, e) in files {
        h.update(p.as_os_str().as_encoded_bytes());
        h.update(b"\0");
        h.update(e.hash.as_bytes());
        h.update(if e.executable { b"x" } else { b"-" });
    }
    h.finalize().to_hex().to_string()
}

/// Files of a state that differ from the user's tree: relative path -> content.
pub type Overlay = BTreeMap<PathBuf, Vec<u8>>;

/// What a slot's directory holds, saved beside it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
struct Manifest {
    /// The hash of each file as it is in the slot now.
    files: BTreeMap<PathBuf, FileEntry>,
}

/// One private working copy.
#[derive(Debug)]
pub struct Slot {
    pub index: usize,
    /// The copy of the tree: commands run here.
    pub root: PathBuf,
    manifest_path: PathBuf,
    manifest: Manifest,
    /// The state hash the slot holds after the last sync.
    pub state: Option<String>,
}

/// What a sync did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SyncStats {
    pub written: usize,
    pub removed: usize,
}

impl Slot {
    /// Open (or create) slot `index` under `slots_dir`.
    pub fn open(slots_dir: &Path, index: usize) -> Result<Slot, Error> {
        let dir = slots_dir.join(index.to_string());
        let root = dir.join("tree");
        std::fs::create_dir_all(&root).map_err(io_err(&root))?;
        let manifest_path = dir.join("manifest.json");
        // A manifest that cannot be read (killed mid-copy before it was written, edited by
        // hand) only costs a full re-copy: every file is then compared by content.
        let manifest = std::fs::read(&manifest_path)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        Ok(Slot {
            index,
            root,
            manifest_path,
            manifest,
            state: None,
        })
    }

    /// Make the slot hold `tree` with `overlay` applied, writing only what differs from the
    /// manifest (and files the manifest does not know, compared by content). Files of the
    /// slot that the tree does not list are left alone, except files an earlier sync wrote
    /// and the tree no longer has.
    pub fn sync(&mut self, tree: &Tree, overlay: &Overlay) -> Result<SyncStats, Error> {
        let mut stats = SyncStats::default();
        let mut want: BTreeMap<&Path, (String, Option<&[u8]>, bool)> = BTreeMap::new();
        for (p, e) in &tree.files {
            want.insert(p.as_path(), (e.hash.clone(), None, e.executable));
        }
        for (p, bytes) in overlay {
            let exe = tree.files.get(p).is_some_and(|e| e.executable);
            want.insert(
                p.as_path(),
                (hash_bytes(bytes), Some(bytes.as_slice()), exe),
            );
        }
        // Remove files we put there before and the tree no longer has.
        let stale: Vec<PathBuf> = self
            .manifest
            .files
            .keys()
            .filter(|p| !want.contains_key(p.as_path()))
            .cloned()
            .collect();
        for p in stale {
            let dst = self.root.join(&p);
            match std::fs::remove_file(&dst) {
                Ok(()) => stats.removed += 1,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(io_err(&dst)(e)),
            }
            self.manifest.files.remove(&p);
        }
        for (p, (hash, bytes, exe)) in want {
            let known = self.manifest.files.get(p);
            if known.is_some_and(|k| k.hash == hash && k.executable == exe) {
                continue;
            }
            let dst = self.root.join(p);
            if known.is_none() {
                // Unknown to the manifest: maybe already right (a manifest lost to a kill).
                if let Ok(cur) = std::fs::read(&dst) {
                    if hash_bytes(&cur) == hash {
                        self.manifest.files.insert(
                            p.to_path_buf(),
                            FileEntry {
                                hash,
                                executable: exe,
                            },
                        );
                        continue;
                    }
                }
            }
            let content = match bytes {
                Some(b) => b.to_vec(),
                None => {
                    let src = tree.root.join(p);
                    let b = std::fs::read(&src).map_err(io_err(&src))?;
                    if hash_bytes(&b) != hash {
                        return Err(Error::TreeChanged(src.display().to_string()));
                    }
                    b
                }
            };
            if let Some(parent) = dst.parent() {
                std::fs::create_dir_all(parent).map_err(io_err(parent))?;
            }
            // Replace (never write through) whatever is there: a build may have left a
            // symbolic link or a read-only file.
            let _ = std::fs::remove_file(&dst);
            std::fs::write(&dst, &content).map_err(io_err(&dst))?;
            if exe {
                use std::os::unix::fs::PermissionsExt;
                let mode = std::fs::metadata(&dst)
                    .map_err(io_err(&dst))?
                    .permissions()
                    .mode();
                std::fs::set_permissions(&dst, std::fs::Permissions::from_mode(mode | 0o111))
                    .map_err(io_err(&dst))?;
            }
            self.manifest.files.insert(
                p.to_path_buf(),
                FileEntry {
                    hash,
                    executable: exe,
                },
            );
            stats.written += 1;
        }
        self.save()?;
        self.state = Some(tree.state_hash(overlay));
        Ok(stats)
    }

    /// Save the manifest: temporary file and rename, not synced to disk (a manifest lost to a
    /// power cut only costs comparing the slot's files by content on the next sync).
    fn save(&self) -> Result<(), Error> {
        let bytes = serde_json::to_vec(&self.manifest).expect("manifest serializes");
        let tmp = self.manifest_path.with_extension("json.tmp");
        std::fs::write(&tmp, &bytes).map_err(io_err(&tmp))?;
        std::fs::rename(&tmp, &self.manifest_path).map_err(io_err(&self.manifest_path))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let d = tempfile::tempdir().unwrap();
        let user = d.path().join("user");
        let state = user.join(".hip-unroll");
        std::fs::create_dir_all(user.join("src")).unwrap();
        std::fs::create_dir_all(user.join(".git")).unwrap();
        std::fs::create_dir_all(user.join("build")).unwrap();
        std::fs::create_dir_all(&state).unwrap();
        std::fs::write(user.join("src/k.cu"), "kernel").unwrap();
        std::fs::write(user.join("build.sh"), "echo build").unwrap();
        std::fs::write(user.join(".gitignore"), "build/\n").unwrap();
        std::fs::write(user.join("build/app"), "binary").unwrap();
        std::fs::write(user.join(".git/HEAD"), "ref").unwrap();
        std::fs::write(state.join("ledger.db"), "db").unwrap();
        (d, user, state)
    }

    #[test]
    fn scan_skips_git_state_and_ignored_files() {
        let (_d, user, state) = setup();
        let t = Tree::scan(&user, &[state]).unwrap();
        let names: Vec<String> = t.files.keys().map(|p| p.display().to_string()).collect();
        assert_eq!(names, vec![".gitignore", "build.sh", "src/k.cu"]);
    }

    #[test]
    fn sync_copies_once_then_only_what_changes() {
        let (d, user, state) = setup();
        let t = Tree::scan(&user, std::slice::from_ref(&state)).unwrap();
        let slots = d.path().join("slots");
        let mut s = Slot::open(&slots, 0).unwrap();
        assert_eq!(s.sync(&t, &Overlay::new()).unwrap().written, 3);
        assert_eq!(std::fs::read(s.root.join("src/k.cu")).unwrap(), b"kernel");
        // Nothing changed: nothing written.
        assert_eq!(s.sync(&t, &Overlay::new()).unwrap().written, 0);
        // A variant: one file.
        let mut ov = Overlay::new();
        ov.insert("src/k.cu".into(), b"variant".to_vec());
        let st = s.sync(&t, &ov).unwrap();
        assert_eq!(st.written, 1);
        assert_eq!(std::fs::read(s.root.join("src/k.cu")).unwrap(), b"variant");
        assert_ne!(s.state.as_deref(), Some(t.hash.as_str()));
        // The user's file is untouched.
        assert_eq!(std::fs::read(user.join("src/k.cu")).unwrap(), b"kernel");
        // Back to the baseline: one file restored.
        assert_eq!(s.sync(&t, &Overlay::new()).unwrap().written, 1);
        assert_eq!(std::fs::read(s.root.join("src/k.cu")).unwrap(), b"kernel");
        assert_eq!(s.state.as_deref(), Some(t.hash.as_str()));
        // Reopened (a later run): the manifest is reused, nothing is copied.
        let mut s = Slot::open(&slots, 0).unwrap();
        assert_eq!(s.sync(&t, &Overlay::new()).unwrap().written, 0);
        // The user edits a file and deletes another: the slot follows.
        std::fs::write(user.join("src/k.cu"), "kernel v2").unwrap();
        std::fs::remove_file(user.join("build.sh")).unwrap();
        let t2 = Tree::scan(&user, &[state]).unwrap();
        let st = s.sync(&t2, &Overlay::new()).unwrap();
        assert_eq!((st.written, st.removed), (1, 1));
        assert!(!s.root.join("build.sh").exists());
        assert_ne!(t.hash, t2.hash);
    }

    #[test]
    fn state_hash_depends_on_overlay_content_only() {
        let (_d, user, state) = setup();
        let t = Tree::scan(&user, &[state]).unwrap();
        let mut a = Overlay::new();
        a.insert("src/k.cu".into(), b"x".to_vec());
        let mut b = Overlay::new();
        b.insert("src/k.cu".into(), b"x".to_vec());
        assert_eq!(t.state_hash(&a), t.state_hash(&b));
        let mut same = Overlay::new();
        same.insert("src/k.cu".into(), b"kernel".to_vec());
        assert_eq!(t.state_hash(&same), t.hash);
    }
}
