//! A set of files replaced as one: all of them get their new content, or none does, whatever
//! happens in between (a kill, an I/O error part-way, an edit saved meanwhile).
//!
//! The journal lives in a directory of its own (the tuner's is `STATE/apply`), which the caller
//! keeps to itself (a lock). [`Journal::apply`] goes through these steps, each a test point
//! `POINT.STEP` ([`crate::testpoint`]):
//! 1. every file is checked (a regular file, through symbolic links; writable, owner keepable,
//!    one name; its content still what was read): a failure writes nothing, an edit is reported;
//! 2. `blobs`: a copy of each file's old content is written (synced) into the directory;
//! 3. `journaled`: `journal.json` (each file, its old and new digests, the name of its temporary
//!    file) is written through a temporary file and a rename, and synced. From here on a journal
//!    exists, and an apply that does not reach the end is rolled back;
//! 4. `temp` (once per file): the temporary file `.hip-unroll-XXXXXX` beside the user's file is
//!    written, synced and given the file's mode, owner and group;
//! 5. `before-rename` / `renamed` (once per file): the file is compared with what was read and
//!    exchanged with its temporary file ([`crate::write`]'s commit: an edit is put back);
//! 6. `renamed-all`: every file is compared with its new content once more;
//! 7. the directories are synced and the journal removed (`journal.json` first), then `done`.
//!    A journal made with [`Journal::held`] is kept instead (`done` is hit with it in place):
//!    the caller records its own commit (the tuner: the run finished in its ledger), then
//!    removes it with [`Journal::release`] (`release`, then `released`). Its recovery asks the caller whether
//!    that commit happened ([`Journal::recover_with`]): if so the new contents are kept and the
//!    journal removed; if not, it is rolled back like any other.
//!
//! **An unfinished apply is rolled back, never completed**: an I/O error at step 4 or 5, an edit
//! found at step 5 or 6, or, on the next [`Journal::recover`], a kill anywhere after step 3, all
//! end the same way: each file that has its new content gets its old content back from the
//! journal's copy (again through an exchange that never overwrites an edit), each file that
//! still has its old content is left alone, each file with other content (the user edited it
//! after the kill) is left alone and reported, and every temporary file is removed. Rolling back
//! is the one ending that is always possible (an I/O error can make completing impossible), it
//! restores exactly the content the interrupted run started from, and a roll-back cut short by a
//! second kill is simply done again: every step is decided by content, not by a recorded state.

use crate::error::{Error, Op};
use crate::read::{digest, read, TEXT_CAP};
use crate::testpoint;
use crate::write::{
    check_replace, commit, create_new, current_digest, dir_of, fill, keep_meta, temp_name,
};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

/// One file of a set: its path (as the user should see it), the digest ([`crate::digest`]) of
/// the content it was read with, and its new content.
#[derive(Debug, Clone)]
pub struct Change {
    pub path: PathBuf,
    pub old: String,
    pub new: Vec<u8>,
}

/// How an apply ended without an error.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Applied {
    /// Every file of the set, written (empty when an edit stopped the set).
    pub written: Vec<PathBuf>,
    /// Files found edited (or removed) since they were read: left as they are, and the set was
    /// not applied.
    pub edited: Vec<PathBuf>,
    /// Files that had been written before the edit was found and got their old content back.
    pub restored: Vec<PathBuf>,
}

/// What [`Journal::recover`] did with the journal of an interrupted apply.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Recovery {
    /// Files that had their new content and got their old content back.
    pub restored: Vec<PathBuf>,
    /// Files that still had their old content.
    pub untouched: Vec<PathBuf>,
    /// Files with other content (edited after the interruption): left as they are.
    pub edited: Vec<PathBuf>,
    /// Temporary files removed beside the user's files.
    pub temps_removed: usize,
    /// The apply had been committed ([`Journal::held`]): completed, not rolled back.
    pub completed: bool,
    /// Files of a committed apply that keep their new content.
    pub kept: Vec<PathBuf>,
}

/// `journal.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Record {
    version: u32,
    files: Vec<Entry>,
    /// [`Journal::held`]'s tag: the caller's name for the commit that ends this apply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tag: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Entry {
    /// As the user sees it.
    path: PathBuf,
    /// The regular file written (symbolic links resolved).
    real: PathBuf,
    old: String,
    new: String,
    /// The temporary file beside `real`.
    tmp: PathBuf,
    /// The copy of the old content, in the journal's directory.
    blob: String,
}

const JOURNAL: &str = "journal.json";
const VERSION: u32 = 1;

/// The journal of a set of replacements, kept in `dir`.
#[derive(Debug, Clone)]
pub struct Journal {
    dir: PathBuf,
    point: String,
    tag: Option<String>,
}

/// What the roll-back did with one file.
enum Fate {
    Restored,
    Untouched,
    Edited,
}

impl Journal {
    /// A journal in `dir` (created when needed; nothing else may live there), with test points
    /// named `POINT.STEP`.
    pub fn new(dir: impl Into<PathBuf>, point: &str) -> Journal {
        Journal {
            dir: dir.into(),
            point: point.to_string(),
            tag: None,
        }
    }

    /// The same journal, kept after a complete apply until [`Journal::release`]: the caller
    /// records its commit, named `tag`, in between (see the module's step 7).
    pub fn held(mut self, tag: &str) -> Journal {
        self.tag = Some(tag.to_string());
        self
    }

    /// Remove a held journal once its commit is recorded (nothing when there is none).
    pub fn release(&self) -> Result<(), Error> {
        if !self.path().exists() {
            return Ok(());
        }
        self.hit("release");
        self.remove_journal()?;
        self.hit("released");
        Ok(())
    }

    /// The journal file: it exists exactly while an apply is unfinished.
    pub fn path(&self) -> PathBuf {
        self.dir.join(JOURNAL)
    }

    fn hit(&self, step: &str) {
        testpoint::hit(&format!("{}.{step}", self.point));
    }

    /// Replace every file of `changes` with its new content, or none (see the module's steps).
    /// `Ok` with `edited` set when a file was edited since it was read (nothing applied); an I/O
    /// error part-way is [`Error::RolledBack`] (every file as it was).
    pub fn apply(&self, changes: &[Change]) -> Result<Applied, Error> {
        if self.path().exists() {
            return Err(Error::Pending { path: self.path() });
        }
        // 1. Check every file before anything is written.
        let mut seen: HashMap<PathBuf, PathBuf> = HashMap::new();
        let mut olds = Vec::with_capacity(changes.len());
        let mut files = Vec::with_capacity(changes.len());
        for (i, c) in changes.iter().enumerate() {
            let real = std::fs::canonicalize(&c.path).map_err(Error::io(Op::Write, &c.path))?;
            if let Some(a) = seen.insert(real.clone(), c.path.clone()) {
                return Err(Error::SameFile {
                    a,
                    b: c.path.clone(),
                });
            }
            let m = std::fs::metadata(&real).map_err(Error::io(Op::Write, &c.path))?;
            if !m.is_file() {
                return Err(Error::NotRegular {
                    path: c.path.clone(),
                    kind: crate::Kind::of(&m.file_type()),
                });
            }
            check_replace(&c.path, &real, &m)?;
            let cur = read(&real, TEXT_CAP, "a file being replaced").map_err(|e| match e {
                Error::Io { op, err, .. } => Error::Io {
                    op,
                    path: c.path.clone(),
                    err,
                },
                e => e,
            })?;
            if digest(&cur) != c.old {
                return Ok(Applied {
                    edited: vec![c.path.clone()],
                    ..Applied::default()
                });
            }
            let mut tmp = temp_name(dir_of(&real));
            while tmp.exists() {
                tmp = temp_name(dir_of(&real));
            }
            files.push(Entry {
                path: c.path.clone(),
                real,
                old: c.old.clone(),
                new: digest(&c.new),
                tmp,
                blob: format!("old-{i}"),
            });
            olds.push(cur);
        }
        if changes.is_empty() {
            return Ok(Applied::default());
        }
        // 2. The old contents, then 3. the journal.
        self.clear_leftovers()?;
        std::fs::create_dir_all(&self.dir).map_err(Error::io(Op::Write, &self.dir))?;
        for (e, old) in files.iter().zip(&olds) {
            write_synced(&self.dir.join(&e.blob), old)?;
        }
        self.hit("blobs");
        let record = Record {
            version: VERSION,
            files,
            tag: self.tag.clone(),
        };
        self.write_journal(&record)?;
        self.hit("journaled");
        let total = record.files.len();
        let fail = |j: &Journal, cause: Error| -> Error {
            match j.rollback(&record) {
                Ok(r) => Error::RolledBack {
                    cause: Box::new(cause),
                    restored: r.restored.len(),
                    total,
                },
                Err((file, why)) => Error::RollbackFailed {
                    cause: Box::new(cause),
                    file,
                    why: Box::new(why),
                    journal: j.dir.clone(),
                },
            }
        };
        // 4. The temporary files.
        for (e, c) in record.files.iter().zip(changes) {
            let made = (|| {
                let m = std::fs::metadata(&e.real).map_err(Error::io(Op::Write, &e.path))?;
                let mut f = create_new(&e.tmp, &e.path)?;
                fill(&mut f, &c.new, &e.path)?;
                keep_meta(&f, &m, &e.path)
            })();
            if let Err(cause) = made {
                return Err(fail(self, cause));
            }
            self.hit("temp");
        }
        // 5. The renames, each after its own comparison.
        for e in &record.files {
            match commit(&e.tmp, &e.real, &e.path, &e.old, Some(&self.point)) {
                Ok(()) => self.hit("renamed"),
                Err(Error::Edited { path }) => return self.stopped_by_edit(&record, vec![path]),
                Err(cause) => return Err(fail(self, cause)),
            }
        }
        self.hit("renamed-all");
        // 6. The whole set once more.
        let mut edited = Vec::new();
        for e in &record.files {
            match current_digest(&e.real, &e.path) {
                Ok(Some(d)) if d == e.new => {}
                Ok(_) => edited.push(e.path.clone()),
                Err(cause) => return Err(fail(self, cause)),
            }
        }
        if !edited.is_empty() {
            return self.stopped_by_edit(&record, edited);
        }
        // 7. Durable, then done.
        let dirs: BTreeSet<&Path> = record.files.iter().map(|e| dir_of(&e.real)).collect();
        for d in dirs {
            sync_dir(d).map_err(|cause| fail(self, cause))?;
        }
        if self.tag.is_none() {
            self.remove_journal()?;
        }
        self.hit("done");
        Ok(Applied {
            written: record.files.iter().map(|e| e.path.clone()).collect(),
            ..Applied::default()
        })
    }

    /// An edit stopped the set: everything written so far is restored.
    fn stopped_by_edit(&self, record: &Record, mut edited: Vec<PathBuf>) -> Result<Applied, Error> {
        match self.rollback(record) {
            Ok(r) => {
                for p in r.edited {
                    if !edited.contains(&p) {
                        edited.push(p);
                    }
                }
                Ok(Applied {
                    written: Vec::new(),
                    edited,
                    restored: r.restored,
                })
            }
            Err((file, why)) => Err(Error::RollbackFailed {
                cause: Box::new(Error::Edited {
                    path: edited[0].clone(),
                }),
                file,
                why: Box::new(why),
                journal: self.dir.clone(),
            }),
        }
    }

    /// Roll back the apply a journal left (a kill, or a roll-back that failed): `None` when
    /// there is none. Leftovers of an apply killed before its journal existed are removed.
    pub fn recover(&self) -> Result<Option<Recovery>, Error> {
        self.recover_with(|_| false)
    }

    /// [`Journal::recover`], except that a held journal whose commit `committed(tag)` says
    /// was recorded is completed: its files keep their new content (`kept`), it is removed.
    pub fn recover_with(
        &self,
        committed: impl FnOnce(&str) -> bool,
    ) -> Result<Option<Recovery>, Error> {
        let jp = self.path();
        match std::fs::symlink_metadata(&jp) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                self.clear_leftovers()?;
                return Ok(None);
            }
            Err(e) => return Err(Error::io(Op::Read, &jp)(e)),
            Ok(_) => {}
        }
        let bad = |why: String| Error::Journal {
            path: jp.clone(),
            why,
        };
        let bytes = read(&jp, TEXT_CAP, "a journal").map_err(|e| bad(e.to_string()))?;
        let record: Record = serde_json::from_slice(&bytes).map_err(|e| bad(e.to_string()))?;
        if record.version != VERSION {
            return Err(bad(format!("version {}", record.version)));
        }
        if record.tag.as_deref().is_some_and(committed) {
            return self.complete(&record).map(Some);
        }
        self.rollback(&record)
            .map(Some)
            .map_err(|(file, why)| Error::RollbackFailed {
                cause: Box::new(Error::Pending { path: jp.clone() }),
                file,
                why: Box::new(why),
                journal: self.dir.clone(),
            })
    }

    /// A committed apply: every file had its new content when the commit was recorded; one
    /// with other content now was edited since and is reported. The journal goes.
    fn complete(&self, record: &Record) -> Result<Recovery, Error> {
        let mut out = Recovery {
            completed: true,
            ..Recovery::default()
        };
        for e in &record.files {
            if current_digest(&e.tmp, &e.path)?.is_some_and(|d| d == e.new || d == e.old) {
                std::fs::remove_file(&e.tmp).map_err(Error::io(Op::Write, &e.path))?;
                out.temps_removed += 1;
            }
            match current_digest(&e.real, &e.path)? {
                Some(d) if d == e.new => out.kept.push(e.path.clone()),
                _ => out.edited.push(e.path.clone()),
            }
        }
        self.remove_journal()?;
        Ok(out)
    }

    /// Give every file of `record` its old content back where it has its new one; remove the
    /// temporary files; then the journal. On a failure the journal stays (the next recovery
    /// tries again) and the first failing file is returned.
    fn rollback(&self, record: &Record) -> Result<Recovery, (PathBuf, Error)> {
        let mut out = Recovery::default();
        let mut failed = None;
        for e in record.files.iter().rev() {
            match self.restore_one(e, &mut out.temps_removed) {
                Ok(Fate::Restored) => out.restored.push(e.path.clone()),
                Ok(Fate::Untouched) => out.untouched.push(e.path.clone()),
                Ok(Fate::Edited) => out.edited.push(e.path.clone()),
                Err(why) => {
                    if failed.is_none() {
                        failed = Some((e.path.clone(), why));
                    }
                }
            }
            self.hit("rolled-back");
        }
        if let Some(f) = failed {
            return Err(f);
        }
        self.remove_journal().map_err(|e| (self.path(), e))?;
        out.restored.reverse();
        out.untouched.reverse();
        out.edited.reverse();
        Ok(out)
    }

    fn restore_one(&self, e: &Entry, temps: &mut usize) -> Result<Fate, Error> {
        // The temporary file: ours (new content, or the old content an exchange displaced), or
        // an edit displaced by an exchange that a kill cut short, which goes back in place.
        match current_digest(&e.tmp, &e.path)? {
            None => {}
            Some(d) if d == e.new || d == e.old => {
                std::fs::remove_file(&e.tmp).map_err(Error::io(Op::Write, &e.path))?;
                *temps += 1;
            }
            Some(_) if current_digest(&e.real, &e.path)?.as_deref() == Some(e.new.as_str()) => {
                std::fs::rename(&e.tmp, &e.real).map_err(Error::io(Op::Write, &e.path))?;
                return Ok(Fate::Edited);
            }
            // Not ours and not displaced by us: left where it is.
            Some(_) => {}
        }
        match current_digest(&e.real, &e.path)? {
            Some(d) if d == e.new => {}
            Some(d) if d == e.old => return Ok(Fate::Untouched),
            _ => return Ok(Fate::Edited),
        }
        let blob = self.dir.join(&e.blob);
        let old = read(&blob, TEXT_CAP, "a journal's copy")?;
        if digest(&old) != e.old {
            return Err(Error::Journal {
                path: blob,
                why: "the copy of the old content does not match its digest".into(),
            });
        }
        let m = std::fs::metadata(&e.real).map_err(Error::io(Op::Write, &e.path))?;
        let made = (|| {
            let mut f = create_new(&e.tmp, &e.path)?;
            fill(&mut f, &old, &e.path)?;
            keep_meta(&f, &m, &e.path)
        })();
        if let Err(err) = made {
            let _ = std::fs::remove_file(&e.tmp);
            return Err(err);
        }
        match commit(
            &e.tmp,
            &e.real,
            &e.path,
            &e.new,
            Some(&format!("{}.rollback", self.point)),
        ) {
            Ok(()) => {
                sync_dir(dir_of(&e.real))?;
                Ok(Fate::Restored)
            }
            Err(Error::Edited { .. }) => Ok(Fate::Edited),
            Err(err) => Err(err),
        }
    }

    fn write_journal(&self, record: &Record) -> Result<(), Error> {
        let jp = self.path();
        let tmp = self.dir.join(format!("{JOURNAL}.tmp"));
        let mut text = serde_json::to_vec_pretty(record).expect("a journal serializes");
        text.push(b'\n');
        write_synced(&tmp, &text)?;
        std::fs::rename(&tmp, &jp).map_err(Error::io(Op::Write, &jp))?;
        sync_dir(&self.dir)
    }

    /// `journal.json` first (from then on there is nothing to recover), then the copies.
    fn remove_journal(&self) -> Result<(), Error> {
        let jp = self.path();
        match std::fs::remove_file(&jp) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io(Op::Write, &jp)(e)),
        }
        sync_dir(&self.dir)?;
        self.clear_leftovers()
    }

    /// With no `journal.json`, whatever the directory holds is the remains of an apply killed
    /// before its journal existed (or after it was removed): nothing to recover.
    fn clear_leftovers(&self) -> Result<(), Error> {
        match std::fs::remove_dir_all(&self.dir) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(Error::io(Op::Write, &self.dir)(e)),
        }
    }
}

fn write_synced(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    let _ = std::fs::remove_file(path);
    let mut f = create_new(path, path)?;
    fill(&mut f, bytes, path)
}

fn sync_dir(dir: &Path) -> Result<(), Error> {
    std::fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(Error::io(Op::Write, dir))
}
