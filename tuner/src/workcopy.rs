//! Private working copies of the user's tree, one per slot, under the state directory. The
//! user's tree is only read here. A slot is copied in full once; afterwards [`Slot::sync`]
//! rewrites only the files that differ from what the slot holds (a changed user file, a
//! variant's file, a variant's file to restore). Builds write into the slot, so hard links or
//! reflinks would let them write into the user's files: everything is copied.
//!
//! The tree is the directory `tune` runs in, minus the state directory, `.git`, and whatever
//! `.gitignore`/`.ignore` files exclude (build outputs), walked with the `ignore` crate.
//! A symbolic link whose target lies inside the tree stays a link in the working copies (to the
//! copy's own target), so a build that reads the link sees the variant written to its target;
//! a link that leaves the tree is copied as the file it points to (builds never write through
//! it into the user's files), and a link to a directory outside the tree is left out.
//!
//! What a slot holds is recorded in `manifest.json` beside it. The manifest is never ahead of
//! the files: before a sync changes anything, the entries of the files it is about to change are
//! dropped from the manifest and the manifest is saved; they come back once the files are
//! written. A kill at any point therefore leaves files the manifest does not vouch for, which
//! the next sync compares by content. Each entry also carries the size and modification time
//! the file had when it was written: a file changed since (a build that rewrites a source) is
//! compared by content too.

use crate::error::{io_err, Error};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

/// One file (or in-tree symbolic link) of the tree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileEntry {
    /// blake3 of the content (for a link: of its target, see [`link_hash`]).
    pub hash: String,
    pub executable: bool,
    /// A symbolic link to this path, relative to the link's directory, that stays inside the
    /// tree: the working copies hold the same link.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<PathBuf>,
}

/// The user's tree as scanned at the start: relative path -> content hash.
#[derive(Debug, Clone)]
pub struct Tree {
    pub root: PathBuf,
    pub files: BTreeMap<PathBuf, FileEntry>,
    /// Content hash of the whole tree (paths, contents, executable bits, links).
    pub hash: String,
}

pub fn hash_bytes(b: &[u8]) -> String {
    blake3::hash(b).to_hex().to_string()
}

/// The hash that stands for a symbolic link to `target`: never the hash of a file's content.
pub fn link_hash(target: &Path) -> String {
    let mut h = blake3::Hasher::new();
    h.update(b"hip-unroll symlink\0");
    h.update(target.as_os_str().as_encoded_bytes());
    h.finalize().to_hex().to_string()
}

fn is_executable(m: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt;
    m.permissions().mode() & 0o111 != 0
}

/// `to` as seen from the directory `from` (both relative to the same root, without `..`).
fn relative_to(from: &Path, to: &Path) -> PathBuf {
    let a: Vec<Component> = from.components().collect();
    let b: Vec<Component> = to.components().collect();
    let common = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let mut out = PathBuf::new();
    for _ in common..a.len() {
        out.push("..");
    }
    for c in &b[common..] {
        out.push(c.as_os_str());
    }
    out
}

impl Tree {
    /// Walk `root` (canonical) skipping `exclude` (the state directory), `.git` and ignored
    /// files. Symbolic links to something inside the tree are kept as links; links that leave
    /// it are followed as files (or left out when they point to a directory or nowhere);
    /// special files are skipped.
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
            let rel = p.strip_prefix(&root).expect("under root").to_path_buf();
            if ft.is_symlink() {
                // Where it leads, if anywhere: inside the tree (and not into the state
                // directory) it stays a link.
                let target = std::fs::canonicalize(p).ok();
                let inside = target.as_ref().and_then(|t| {
                    (t.starts_with(&root) && !exclude.iter().any(|x| t.starts_with(x)))
                        .then(|| t.strip_prefix(&root).expect("under root").to_path_buf())
                });
                if let Some(t) = inside {
                    let dir = rel.parent().unwrap_or(Path::new(""));
                    let link = relative_to(dir, &t);
                    files.insert(
                        rel,
                        FileEntry {
                            hash: link_hash(&link),
                            executable: false,
                            link: Some(link),
                        },
                    );
                    continue;
                }
            }
            let meta = match std::fs::metadata(p) {
                Ok(m) => m,
                // A dangling link: nothing to copy.
                Err(_) if ft.is_symlink() => continue,
                Err(e) => return Err(io_err(p)(e)),
            };
            if !meta.is_file() {
                continue;
            }
            let bytes = std::fs::read(p).map_err(io_err(p))?;
            files.insert(
                rel,
                FileEntry {
                    hash: hash_bytes(&bytes),
                    executable: is_executable(&meta),
                    link: None,
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
                    link: None,
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
        h.update(if e.link.is_some() {
            b"l"
        } else if e.executable {
            b"x"
        } else {
            b"-"
        });
    }
    h.finalize().to_hex().to_string()
}

/// Files of a state that differ from the user's tree: relative path -> content.
pub type Overlay = BTreeMap<PathBuf, Vec<u8>>;

/// What the slot holds at one path, as written by a sync.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
struct Held {
    hash: String,
    executable: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    link: Option<PathBuf>,
    /// Size and modification time (ns since the epoch) right after the write: a file whose
    /// `lstat` differs was changed since and is compared by content.
    #[serde(default)]
    len: u64,
    #[serde(default)]
    mtime_ns: i128,
}

/// What a slot's directory holds, saved beside it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
struct Manifest {
    /// Format of the entries (2: size and mtime recorded; earlier manifests are not trusted).
    #[serde(default)]
    version: u32,
    /// Each path the slot holds as the last sync left it.
    files: BTreeMap<PathBuf, Held>,
}

const MANIFEST_VERSION: u32 = 2;

/// `(len, mtime_ns)` of what is at `p`, not following a final link.
fn stamp(p: &Path) -> Option<(u64, i128)> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::symlink_metadata(p).ok()?;
    Some((
        m.len(),
        m.mtime() as i128 * 1_000_000_000 + m.mtime_nsec() as i128,
    ))
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

/// What one path of the slot should hold.
#[derive(Clone, Copy)]
struct Want<'a> {
    hash: &'a str,
    bytes: Option<&'a [u8]>,
    executable: bool,
    link: Option<&'a Path>,
}

impl Slot {
    /// Open (or create) slot `index` under `slots_dir`.
    pub fn open(slots_dir: &Path, index: usize) -> Result<Slot, Error> {
        let dir = slots_dir.join(index.to_string());
        let root = dir.join("tree");
        std::fs::create_dir_all(&root).map_err(io_err(&root))?;
        let manifest_path = dir.join("manifest.json");
        // A save that a kill interrupted: the manifest itself is the one before it.
        let _ = std::fs::remove_file(manifest_path.with_extension("json.tmp"));
        // A manifest that cannot be read (edited by hand, an older format) only costs
        // comparing every file by content.
        let manifest = std::fs::read(&manifest_path)
            .ok()
            .and_then(|b| serde_json::from_slice::<Manifest>(&b).ok())
            .filter(|m| m.version == MANIFEST_VERSION)
            .unwrap_or_default();
        Ok(Slot {
            index,
            root,
            manifest_path,
            manifest,
            state: None,
        })
    }

    /// Whether the manifest's entry for `p` still describes what is in the slot.
    fn vouched(&self, p: &Path, w: &Want<'_>) -> bool {
        let Some(h) = self.manifest.files.get(p) else {
            return false;
        };
        h.hash == w.hash
            && h.executable == w.executable
            && h.link.as_deref() == w.link
            && stamp(&self.root.join(p)) == Some((h.len, h.mtime_ns))
    }

    /// Whether the slot already holds `w` at `p` (compared by content).
    fn holds(&self, p: &Path, w: &Want<'_>) -> bool {
        let dst = self.root.join(p);
        let Ok(m) = std::fs::symlink_metadata(&dst) else {
            return false;
        };
        match w.link {
            Some(target) => {
                m.file_type().is_symlink() && std::fs::read_link(&dst).is_ok_and(|t| t == target)
            }
            None => {
                m.file_type().is_file()
                    && is_executable(&m) == w.executable
                    && std::fs::read(&dst).is_ok_and(|cur| hash_bytes(&cur) == w.hash)
            }
        }
    }

    /// Make the slot hold `tree` with `overlay` applied, writing only what differs: a file the
    /// manifest vouches for (same hash, same size and mtime as when it was written) is trusted,
    /// any other is compared by content. Files of the slot that the tree does not list are left
    /// alone, except files an earlier sync wrote and the tree no longer has.
    pub fn sync(&mut self, tree: &Tree, overlay: &Overlay) -> Result<SyncStats, Error> {
        let mut stats = SyncStats::default();
        let mut want: BTreeMap<&Path, Want<'_>> = BTreeMap::new();
        let overlay_hashes: BTreeMap<&Path, String> = overlay
            .iter()
            .map(|(p, b)| (p.as_path(), hash_bytes(b)))
            .collect();
        for (p, e) in &tree.files {
            want.insert(
                p.as_path(),
                Want {
                    hash: &e.hash,
                    bytes: None,
                    executable: e.executable,
                    link: e.link.as_deref(),
                },
            );
        }
        for (p, bytes) in overlay {
            let exe = tree.files.get(p).is_some_and(|e| e.executable);
            want.insert(
                p.as_path(),
                Want {
                    hash: &overlay_hashes[p.as_path()],
                    bytes: Some(bytes.as_slice()),
                    executable: exe,
                    link: None,
                },
            );
        }
        // Files we put there before and the tree no longer has.
        let stale: Vec<PathBuf> = self
            .manifest
            .files
            .keys()
            .filter(|p| !want.contains_key(p.as_path()))
            .cloned()
            .collect();
        // What must be written: not vouched for by the manifest and not already right.
        let mut adopt: Vec<(&Path, Want<'_>)> = Vec::new();
        let mut write: Vec<(&Path, Want<'_>)> = Vec::new();
        for (p, w) in &want {
            if self.vouched(p, w) {
                continue;
            }
            if self.holds(p, w) {
                adopt.push((p, *w));
            } else {
                write.push((p, *w));
            }
        }
        // The manifest first: nothing it vouches for is about to change.
        if !stale.is_empty() || !write.is_empty() {
            for p in &stale {
                self.manifest.files.remove(p);
            }
            for (p, _) in &write {
                self.manifest.files.remove(*p);
            }
            self.save()?;
        }
        fsio::testpoint::hit("tuner.workcopy.sync.manifest-first");
        for p in stale {
            let dst = self.root.join(&p);
            match std::fs::remove_file(&dst) {
                Ok(()) => stats.removed += 1,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(io_err(&dst)(e)),
            }
        }
        for (p, w) in write {
            self.put(tree, p, &w)?;
            self.record(p, &w);
            stats.written += 1;
            fsio::testpoint::hit("tuner.workcopy.sync.file-written");
        }
        for (p, w) in adopt {
            self.record(p, &w);
        }
        self.save()?;
        self.state = Some(tree.state_hash(overlay));
        Ok(stats)
    }

    /// Write one path of the slot: a link, an overlay's content, or the user's file (checked
    /// against the hash of the scan).
    fn put(&self, tree: &Tree, p: &Path, w: &Want<'_>) -> Result<(), Error> {
        let dst = self.root.join(p);
        if let Some(parent) = dst.parent() {
            self.real_dirs(parent)?;
        }
        // Replace (never write through) whatever is there: a build may have left a symbolic
        // link, a read-only file or a directory.
        match std::fs::symlink_metadata(&dst) {
            Ok(m) if m.is_dir() => std::fs::remove_dir_all(&dst).map_err(io_err(&dst))?,
            Ok(_) => std::fs::remove_file(&dst).map_err(io_err(&dst))?,
            Err(_) => {}
        }
        if let Some(target) = w.link {
            return std::os::unix::fs::symlink(target, &dst).map_err(io_err(&dst));
        }
        let content = match w.bytes {
            Some(b) => b.to_vec(),
            None => {
                let src = tree.root.join(p);
                let b = std::fs::read(&src).map_err(io_err(&src))?;
                if hash_bytes(&b) != w.hash {
                    return Err(Error::TreeChanged(src.display().to_string()));
                }
                b
            }
        };
        std::fs::write(&dst, &content).map_err(io_err(&dst))?;
        if w.executable {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&dst)
                .map_err(io_err(&dst))?
                .permissions()
                .mode();
            std::fs::set_permissions(&dst, std::fs::Permissions::from_mode(mode | 0o111))
                .map_err(io_err(&dst))?;
        }
        Ok(())
    }

    /// Make every directory from the slot's root down to `dir` a real directory: a link a
    /// build left in the way is replaced, so that no write goes through it.
    fn real_dirs(&self, dir: &Path) -> Result<(), Error> {
        let rel = dir.strip_prefix(&self.root).unwrap_or(Path::new(""));
        let mut cur = self.root.clone();
        for c in rel.components() {
            cur.push(c);
            match std::fs::symlink_metadata(&cur) {
                Ok(m) if m.is_dir() => {}
                Ok(_) => {
                    std::fs::remove_file(&cur).map_err(io_err(&cur))?;
                    std::fs::create_dir(&cur).map_err(io_err(&cur))?;
                }
                Err(_) => std::fs::create_dir(&cur).map_err(io_err(&cur))?,
            }
        }
        Ok(())
    }

    /// Vouch for what was just written (or found right) at `p`.
    fn record(&mut self, p: &Path, w: &Want<'_>) {
        let (len, mtime_ns) = stamp(&self.root.join(p)).unwrap_or((u64::MAX, -1));
        self.manifest.files.insert(
            p.to_path_buf(),
            Held {
                hash: w.hash.to_string(),
                executable: w.executable,
                link: w.link.map(Path::to_path_buf),
                len,
                mtime_ns,
            },
        );
    }

    /// Save the manifest: temporary file and rename, not synced to disk (a manifest lost to a
    /// power cut only costs comparing the slot's files by content on the next sync).
    fn save(&mut self) -> Result<(), Error> {
        self.manifest.version = MANIFEST_VERSION;
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
    fn a_file_a_build_changed_in_the_slot_is_compared_by_content_and_restored() {
        let (d, user, state) = setup();
        let t = Tree::scan(&user, &[state]).unwrap();
        let mut s = Slot::open(&d.path().join("slots"), 0).unwrap();
        s.sync(&t, &Overlay::new()).unwrap();
        // Same size, other bytes: only the recorded mtime tells (a build that rewrote it).
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(s.root.join("src/k.cu"), "KERNEL").unwrap();
        assert_eq!(s.sync(&t, &Overlay::new()).unwrap().written, 1);
        assert_eq!(std::fs::read(s.root.join("src/k.cu")).unwrap(), b"kernel");
        // A manifest of an older format is not trusted: everything compared by content.
        let m = s.manifest_path.clone();
        std::fs::write(&m, br#"{"files":{}}"#).unwrap();
        let mut s = Slot::open(&d.path().join("slots"), 0).unwrap();
        assert_eq!(s.sync(&t, &Overlay::new()).unwrap().written, 0);
    }

    #[test]
    fn links_inside_the_tree_stay_links_and_others_do_not_leak() {
        use std::os::unix::fs::symlink;
        let (d, user, state) = setup();
        let outside = d.path().join("outside.h");
        std::fs::write(&outside, "outside").unwrap();
        std::fs::create_dir_all(d.path().join("outdir")).unwrap();
        symlink("src/k.cu", user.join("k.cu")).unwrap();
        symlink(user.join("src"), user.join("inc")).unwrap(); // absolute, inside
        symlink("../src/k.cu", user.join("build-dir-link.cu")).unwrap(); // ../ of the root
        symlink(&outside, user.join("o.h")).unwrap();
        symlink(d.path().join("outdir"), user.join("od")).unwrap();
        symlink("nowhere", user.join("dangling")).unwrap();
        let t = Tree::scan(&user, std::slice::from_ref(&state)).unwrap();
        let link = |p: &str| t.files.get(Path::new(p)).and_then(|e| e.link.clone());
        assert_eq!(link("k.cu"), Some(PathBuf::from("src/k.cu")));
        assert_eq!(link("inc"), Some(PathBuf::from("src")));
        assert_eq!(t.files.get(Path::new("o.h")).unwrap().link, None);
        assert!(!t.files.contains_key(Path::new("od")));
        assert!(!t.files.contains_key(Path::new("dangling")));
        assert!(!t.files.contains_key(Path::new("build-dir-link.cu")));
        let mut s = Slot::open(&d.path().join("slots"), 0).unwrap();
        let mut ov = Overlay::new();
        ov.insert("src/k.cu".into(), b"variant".to_vec());
        s.sync(&t, &ov).unwrap();
        // Reading the link reads the variant; the outside file is a private copy.
        assert_eq!(std::fs::read(s.root.join("k.cu")).unwrap(), b"variant");
        assert_eq!(std::fs::read(s.root.join("inc/k.cu")).unwrap(), b"variant");
        assert!(!std::fs::symlink_metadata(s.root.join("o.h"))
            .unwrap()
            .file_type()
            .is_symlink());
        // A link becoming a file in the user's tree: the slot follows.
        std::fs::remove_file(user.join("k.cu")).unwrap();
        std::fs::write(user.join("k.cu"), "own").unwrap();
        let t2 = Tree::scan(&user, &[state]).unwrap();
        assert_ne!(t.hash, t2.hash);
        s.sync(&t2, &ov).unwrap();
        assert_eq!(std::fs::read(s.root.join("k.cu")).unwrap(), b"own");
    }

    #[test]
    fn a_link_a_build_put_in_the_way_is_replaced_never_written_through() {
        let (d, user, state) = setup();
        let t = Tree::scan(&user, &[state]).unwrap();
        let mut s = Slot::open(&d.path().join("slots"), 0).unwrap();
        s.sync(&t, &Overlay::new()).unwrap();
        // The build replaced the slot's src/ with a link into the user's tree.
        std::fs::remove_dir_all(s.root.join("src")).unwrap();
        std::os::unix::fs::symlink(user.join("src"), s.root.join("src")).unwrap();
        let mut ov = Overlay::new();
        ov.insert("src/k.cu".into(), b"variant".to_vec());
        s.sync(&t, &ov).unwrap();
        assert_eq!(std::fs::read(user.join("src/k.cu")).unwrap(), b"kernel");
        assert!(std::fs::symlink_metadata(s.root.join("src"))
            .unwrap()
            .is_dir());
        assert_eq!(std::fs::read(s.root.join("src/k.cu")).unwrap(), b"variant");
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
