//! The ledger: everything `tune` did, in SQLite (WAL) under the state directory, written as it
//! happens so that a kill loses at most the sample being taken. Runs, sessions (one per
//! process: a resumed run has several), candidates, gates, builds, raw samples, baselines and
//! decisions. Decisions are keyed by [`decision_key`]: the settings that shape a decision, the
//! baseline's content hash and the variant's content hash, so a later `tune` over the same
//! content reuses them instead of building and measuring again.

use crate::error::{io_reason, Error};
use rusqlite::{params, Connection, OptionalExtension};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// The ledger's file name inside the state directory.
pub const FILE_NAME: &str = "ledger.db";
/// Bumped when the schema changes incompatibly.
pub const SCHEMA_VERSION: i64 = 3;
const FORMAT: &str = "hip-unroll tune ledger";

const SCHEMA: &str = "
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE runs (
  id INTEGER PRIMARY KEY, started REAL NOT NULL, finished REAL, status TEXT NOT NULL,
  tree_hash TEXT NOT NULL, settings_hash TEXT NOT NULL, settings TEXT NOT NULL, report TEXT);
CREATE TABLE sessions (
  id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL REFERENCES runs(id), started REAL NOT NULL,
  pid INTEGER NOT NULL);
CREATE TABLE candidates (
  id INTEGER PRIMARY KEY, session_id INTEGER NOT NULL REFERENCES sessions(id), key TEXT,
  file TEXT NOT NULL, loop TEXT NOT NULL, line INTEGER NOT NULL, mode TEXT, factor INTEGER,
  status TEXT NOT NULL, reason TEXT, reused INTEGER NOT NULL DEFAULT 0);
CREATE TABLE gates (
  id INTEGER PRIMARY KEY, session_id INTEGER NOT NULL REFERENCES sessions(id), key TEXT NOT NULL,
  gate TEXT NOT NULL, outcome TEXT NOT NULL, detail TEXT);
CREATE TABLE builds (
  id INTEGER PRIMARY KEY, session_id INTEGER NOT NULL REFERENCES sessions(id),
  state TEXT NOT NULL, slot INTEGER NOT NULL, outcome TEXT NOT NULL, detail TEXT,
  seconds REAL NOT NULL);
CREATE TABLE samples (
  id INTEGER PRIMARY KEY, session_id INTEGER NOT NULL REFERENCES sessions(id),
  comparison TEXT NOT NULL, round INTEGER NOT NULL, role TEXT NOT NULL, value REAL NOT NULL,
  unit TEXT NOT NULL, at REAL NOT NULL, attempt INTEGER NOT NULL DEFAULT 0, lane INTEGER);
CREATE INDEX samples_by_comparison ON samples(comparison);
CREATE TABLE baselines (
  id INTEGER PRIMARY KEY, session_id INTEGER NOT NULL REFERENCES sessions(id),
  settings_hash TEXT NOT NULL, state TEXT NOT NULL, figure REAL NOT NULL, unit TEXT NOT NULL,
  runs INTEGER NOT NULL, spread REAL NOT NULL);
CREATE TABLE decisions (
  key TEXT PRIMARY KEY, session_id INTEGER NOT NULL REFERENCES sessions(id),
  settings_hash TEXT NOT NULL, base_state TEXT NOT NULL, variant_state TEXT NOT NULL, status TEXT NOT NULL,
  speedup REAL, ci_lo REAL, ci_hi REAL, p_value REAL, runs INTEGER, reason TEXT,
  figure REAL, decided REAL NOT NULL, device_model TEXT, device_id TEXT, device_host TEXT,
  occupancy TEXT, same_as TEXT);
";

/// From schema 1: the device of each decision, and the lane and attempt of each sample.
const MIGRATE_1_TO_2: &str = "
ALTER TABLE decisions ADD COLUMN device_model TEXT;
ALTER TABLE decisions ADD COLUMN device_id TEXT;
ALTER TABLE decisions ADD COLUMN device_host TEXT;
ALTER TABLE samples ADD COLUMN attempt INTEGER NOT NULL DEFAULT 0;
ALTER TABLE samples ADD COLUMN lane INTEGER;
PRAGMA user_version = 2;
";

/// From schema 2: the occupancy prediction of each decision (JSON) and the key of the variant
/// whose machine code, and decision, a variant took without a run.
const MIGRATE_2_TO_3: &str = "
ALTER TABLE decisions ADD COLUMN occupancy TEXT;
ALTER TABLE decisions ADD COLUMN same_as TEXT;
PRAGMA user_version = 3;
";

/// The statuses a stored decision can have (report statuses).
pub const DECISION_STATUSES: [&str; 5] = [
    "accepted",
    "rejected",
    "gated",
    "build-failed",
    "check-failed",
];

/// A decided candidate, as stored.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Decision {
    pub key: String,
    /// The settings part of the key.
    pub settings_hash: String,
    pub base_state: String,
    pub variant_state: String,
    /// A report status: `accepted`, `rejected`, `gated`, `build-failed`, `check-failed`.
    pub status: String,
    pub speedup: Option<f64>,
    pub ci: Option<(f64, f64)>,
    pub p_value: Option<f64>,
    pub runs: Option<u32>,
    pub reason: Option<String>,
    /// The variant's median figure in the comparison (for reuse as the next baseline's figure).
    pub figure: Option<f64>,
    /// The device it was measured on (`None`: not measured, or a ledger of schema 1).
    pub device: Option<crate::lane::Device>,
    /// The gates' occupancy prediction (`None`: none, or a ledger of schema 1 or 2).
    pub occupancy: Option<crate::report::Occupancy>,
    /// The key of the decision this variant took because its machine code is that variant's
    /// (its pairs are that one's); `None` when it was decided on its own.
    pub same_as: Option<String>,
}

/// A recorded baseline measurement.
#[derive(Debug, Clone, PartialEq)]
pub struct Baseline {
    pub figure: f64,
    pub unit: String,
    pub runs: u32,
    pub spread: f64,
}

/// The key of a decision: what was compared with what, under which settings.
pub fn decision_key(settings_hash: &str, base_state: &str, variant_state: &str) -> String {
    let mut h = blake3::Hasher::new();
    h.update(b"hip-unroll decision v1\0");
    for part in [settings_hash, base_state, variant_state] {
        h.update(part.as_bytes());
        h.update(b"\0");
    }
    h.finalize().to_hex().to_string()
}

fn now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// `path` with `suffix` appended to its file name (`ledger.db` -> `ledger.db-wal`).
fn suffixed(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_os_string();
    s.push(suffix);
    PathBuf::from(s)
}

/// Remove a database file and its journals, if there.
fn remove_db_files(db: &Path) -> std::io::Result<()> {
    for ext in ["", "-journal", "-wal", "-shm"] {
        match std::fs::remove_file(suffixed(db, ext)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
    }
    Ok(())
}

/// Whether the ledger in `state_dir` records run `id` as finished (`done`): the commit of the
/// apply that run holds a journal for (see `apply.rs`).
pub fn run_finished(state_dir: &Path, id: i64) -> Result<bool, Error> {
    let l = Ledger::open(state_dir)?;
    let status: Option<String> = l
        .conn
        .query_row("SELECT status FROM runs WHERE id = ?1", [id], |r| r.get(0))
        .optional()
        .map_err(|e| l.err(e))?;
    Ok(status.as_deref() == Some("done"))
}

/// A SQLite error on the ledger at `path`: a full disk is [`Error::DiskFull`] (the ledger is
/// fine), anything else says the ledger is not usable.
fn classify(path: &Path, e: rusqlite::Error) -> Error {
    if let rusqlite::Error::SqliteFailure(f, _) = &e {
        if f.code == rusqlite::ErrorCode::DiskFull {
            return Error::DiskFull {
                path: path.display().to_string(),
            };
        }
    }
    Error::Ledger {
        path: path.display().to_string(),
        reason: e.to_string(),
    }
}

/// An I/O error on a file of the state directory ([`Error::DiskFull`] for a full disk).
fn disk_or_io(path: &Path, e: std::io::Error) -> Error {
    crate::error::io_err(path)(e)
}

/// How long [`Ledger::lock`] retries a busy lock before it reports another `tune`.
pub const LOCK_PATIENCE: std::time::Duration = std::time::Duration::from_secs(2);

/// An open ledger.
pub struct Ledger {
    conn: Connection,
    pub path: PathBuf,
}

/// The run a session belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunInfo {
    pub run_id: i64,
    pub session_id: i64,
    /// Whether an interrupted run was continued (`--resume`).
    pub resumed: bool,
}

impl Ledger {
    /// Check that `state_dir` can be created and written, without writing anything into an
    /// existing ledger. Errors are one line.
    pub fn check_state_dir(state_dir: &Path) -> Result<(), Error> {
        let fail = |e: &std::io::Error| {
            if e.kind() == std::io::ErrorKind::StorageFull {
                Error::DiskFull {
                    path: state_dir.display().to_string(),
                }
            } else {
                Error::StateDir {
                    path: state_dir.display().to_string(),
                    reason: io_reason(e),
                }
            }
        };
        std::fs::create_dir_all(state_dir).map_err(|e| fail(&e))?;
        tempfile::Builder::new()
            .prefix(".write-test-")
            .tempfile_in(state_dir)
            .map_err(|e| fail(&e))?;
        Ok(())
    }

    /// Take the state directory for this process (waiting at most [`LOCK_PATIENCE`] for a lock
    /// that is busy): an exclusive lock on `STATE/lock`, released
    /// when the returned file is dropped or the process dies (kill -9 included). A second
    /// `tune` on the same state directory would share its working copies: it is refused.
    pub fn lock(state_dir: &Path) -> Result<std::fs::File, Error> {
        Self::check_state_dir(state_dir)?;
        let path = state_dir.join("lock");
        let f = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| Error::StateDir {
                path: state_dir.display().to_string(),
                reason: io_reason(&e),
            })?;
        // A lock that is busy is tried again for a short while: a process forked by another
        // thread of this program (a compiler, a user command) holds a copy of every open file
        // descriptor between its fork and its exec, so a lock just released can still look taken
        // for a moment (seen under load in the tests: a second search right after a first).
        let deadline = std::time::Instant::now() + LOCK_PATIENCE;
        loop {
            match rustix::fs::flock(&f, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
                Ok(()) => return Ok(f),
                Err(_) if std::time::Instant::now() < deadline => {
                    std::thread::sleep(std::time::Duration::from_millis(25))
                }
                Err(_) => {
                    return Err(Error::StateBusy {
                        path: state_dir.display().to_string(),
                    })
                }
            }
        }
    }

    /// Open (or create) the ledger in `state_dir`; the caller holds [`Ledger::lock`]. A new
    /// ledger is built under a temporary name (`ledger.db.new`) and renamed into place once its
    /// schema is committed, so `ledger.db` never exists without its schema: a kill at any point
    /// of the first run leaves either no ledger or a whole one (a temporary file left by a kill
    /// is removed here). A file that is not a SQLite database, a database of something else, a
    /// failing integrity check or a newer schema is an error and the file is left as it was;
    /// only a database with no table at all (a ledger whose creation an older hip-unroll did in
    /// place and was killed) is replaced. A full disk is [`Error::DiskFull`].
    pub fn open(state_dir: &Path) -> Result<Ledger, Error> {
        Self::check_state_dir(state_dir)?;
        let path = state_dir.join(FILE_NAME);
        let corrupt = |e: rusqlite::Error| classify(&path, e);
        let tmp = state_dir.join(format!("{FILE_NAME}.new"));
        remove_db_files(&tmp).map_err(|e| disk_or_io(&tmp, e))?;
        let existed = path.is_file() && std::fs::metadata(&path).is_ok_and(|m| m.len() > 0);
        if existed {
            let conn = Connection::open(&path).map_err(corrupt)?;
            let check: String = conn
                .query_row("PRAGMA quick_check", [], |r| r.get(0))
                .map_err(corrupt)?;
            if check != "ok" {
                return Err(Error::Ledger {
                    path: path.display().to_string(),
                    reason: check,
                });
            }
            let tables: i64 = conn
                .query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))
                .map_err(corrupt)?;
            if tables == 0 {
                // Created in place and killed before its schema: nothing in it to keep.
                drop(conn);
                Self::create(&tmp, &path)?;
            } else {
                let format: Option<String> = conn
                    .query_row("SELECT value FROM meta WHERE key = 'format'", [], |r| {
                        r.get(0)
                    })
                    .optional()
                    .map_err(corrupt)?;
                if format.as_deref() != Some(FORMAT) {
                    return Err(Error::Ledger {
                        path: path.display().to_string(),
                        reason: "no hip-unroll format marker".into(),
                    });
                }
                let v: i64 = conn
                    .query_row("PRAGMA user_version", [], |r| r.get(0))
                    .map_err(corrupt)?;
                if v == 1 {
                    conn.execute_batch(&format!(
                        "BEGIN; {MIGRATE_1_TO_2} {MIGRATE_2_TO_3} COMMIT;"
                    ))
                    .map_err(corrupt)?;
                } else if v == 2 {
                    conn.execute_batch(&format!("BEGIN; {MIGRATE_2_TO_3} COMMIT;"))
                        .map_err(corrupt)?;
                } else if v != SCHEMA_VERSION {
                    return Err(Error::Ledger {
                        path: path.display().to_string(),
                        reason: format!(
                            "schema version {v}, this hip-unroll reads {SCHEMA_VERSION}"
                        ),
                    });
                }
            }
        } else {
            Self::create(&tmp, &path)?;
        }
        let conn = Connection::open(&path).map_err(corrupt)?;
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(corrupt)?;
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(corrupt)?;
        conn.busy_timeout(std::time::Duration::from_secs(10))
            .map_err(corrupt)?;
        Ok(Ledger { conn, path })
    }

    /// Build a ledger with its schema at `tmp` (rollback journal, fully synced) and rename it
    /// to `path`, replacing whatever is there (and its WAL files, which belong to it).
    fn create(tmp: &Path, path: &Path) -> Result<(), Error> {
        let fail = |e: rusqlite::Error| {
            let _ = remove_db_files(tmp);
            classify(path, e)
        };
        let conn = Connection::open(tmp).map_err(fail)?;
        conn.pragma_update(None, "synchronous", "FULL")
            .map_err(fail)?;
        conn.execute_batch(&format!(
            "BEGIN; {SCHEMA} INSERT INTO meta VALUES ('format', '{FORMAT}'); PRAGMA user_version = {SCHEMA_VERSION}; COMMIT;"
        ))
        .map_err(fail)?;
        drop(conn);
        fsio::testpoint::hit("tuner.ledger.create.before-rename");
        // A WAL left beside an older, empty ledger would be replayed into the new one.
        for ext in ["-wal", "-shm"] {
            let p = suffixed(path, ext);
            match std::fs::remove_file(&p) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    return Err(disk_or_io(&p, e))
                }
                _ => {}
            }
        }
        std::fs::rename(tmp, path).map_err(|e| {
            let _ = remove_db_files(tmp);
            disk_or_io(path, e)
        })?;
        if let Some(dir) = path.parent() {
            if let Ok(d) = std::fs::File::open(dir) {
                let _ = d.sync_all();
            }
        }
        Ok(())
    }

    fn err(&self, e: rusqlite::Error) -> Error {
        classify(&self.path, e)
    }

    /// Start a run, or with `resume` continue the last unfinished run of the same tree and
    /// settings; a new session either way.
    pub fn begin(
        &self,
        tree_hash: &str,
        settings_hash: &str,
        settings_json: &str,
        resume: bool,
    ) -> Result<RunInfo, Error> {
        let mut resumed = false;
        let run_id = if resume {
            let id: Option<i64> = self
                .conn
                .query_row(
                    "SELECT id FROM runs WHERE status IN ('running', 'interrupted')
                     AND tree_hash = ?1 AND settings_hash = ?2 ORDER BY id DESC LIMIT 1",
                    params![tree_hash, settings_hash],
                    |r| r.get(0),
                )
                .optional()
                .map_err(|e| self.err(e))?;
            match id {
                Some(id) => {
                    resumed = true;
                    self.conn
                        .execute("UPDATE runs SET status = 'running' WHERE id = ?1", [id])
                        .map_err(|e| self.err(e))?;
                    id
                }
                None => {
                    return Err(Error::Invalid {
                        setting: crate::setting::Setting::Resume,
                        rule: format!(
                            ": {} holds no interrupted run of this tree with these settings",
                            self.path.display()
                        ),
                    })
                }
            }
        } else {
            self.conn
                .execute(
                    "INSERT INTO runs (started, status, tree_hash, settings_hash, settings)
                     VALUES (?1, 'running', ?2, ?3, ?4)",
                    params![now(), tree_hash, settings_hash, settings_json],
                )
                .map_err(|e| self.err(e))?;
            self.conn.last_insert_rowid()
        };
        self.conn
            .execute(
                "INSERT INTO sessions (run_id, started, pid) VALUES (?1, ?2, ?3)",
                params![run_id, now(), std::process::id()],
            )
            .map_err(|e| self.err(e))?;
        Ok(RunInfo {
            run_id,
            session_id: self.conn.last_insert_rowid(),
            resumed,
        })
    }

    /// Close a run: `done`, `interrupted` or `failed`, with its JSON report.
    pub fn finish(&self, run_id: i64, status: &str, report: Option<&str>) -> Result<(), Error> {
        self.conn
            .execute(
                "UPDATE runs SET status = ?2, finished = ?3, report = ?4 WHERE id = ?1",
                params![run_id, status, now(), report],
            )
            .map_err(|e| self.err(e))?;
        Ok(())
    }

    pub fn decision(&self, key: &str) -> Result<Option<Decision>, Error> {
        self.conn
            .query_row(
                "SELECT key, base_state, variant_state, status, speedup, ci_lo, ci_hi, p_value,
                        runs, reason, figure, settings_hash, device_model, device_id,
                        device_host, occupancy, same_as FROM decisions WHERE key = ?1",
                [key],
                |r| {
                    let lo: Option<f64> = r.get(5)?;
                    let hi: Option<f64> = r.get(6)?;
                    let model: Option<String> = r.get(12)?;
                    let host: Option<String> = r.get(14)?;
                    let device = model.map(|model| crate::lane::Device {
                        model,
                        id: r.get(13).ok().flatten(),
                        host: host.unwrap_or_default(),
                    });
                    let occupancy: Option<String> = r.get(15)?;
                    Ok(Decision {
                        key: r.get(0)?,
                        base_state: r.get(1)?,
                        variant_state: r.get(2)?,
                        status: r.get(3)?,
                        speedup: r.get(4)?,
                        ci: lo.zip(hi),
                        p_value: r.get(7)?,
                        runs: r.get(8)?,
                        reason: r.get(9)?,
                        figure: r.get(10)?,
                        settings_hash: r.get(11)?,
                        device,
                        occupancy: occupancy.and_then(|o| serde_json::from_str(&o).ok()),
                        same_as: r.get(16)?,
                    })
                },
            )
            .optional()
            .map_err(|e| self.err(e))?
            .map(|d| {
                if DECISION_STATUSES.contains(&d.status.as_str()) {
                    Ok(d)
                } else {
                    Err(Error::Ledger {
                        path: self.path.display().to_string(),
                        reason: format!("decision {} has the unknown status '{}'", d.key, d.status),
                    })
                }
            })
            .transpose()
    }

    pub fn record_decision(&self, session: i64, d: &Decision) -> Result<(), Error> {
        self.conn
            .execute(
                "INSERT OR REPLACE INTO decisions (key, session_id, base_state, variant_state,
                   status, speedup, ci_lo, ci_hi, p_value, runs, reason, figure, decided,
                   settings_hash, device_model, device_id, device_host, occupancy, same_as)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17,
                   ?18, ?19)",
                params![
                    d.key,
                    session,
                    d.base_state,
                    d.variant_state,
                    d.status,
                    d.speedup,
                    d.ci.map(|c| c.0),
                    d.ci.map(|c| c.1),
                    d.p_value,
                    d.runs,
                    d.reason,
                    d.figure,
                    now(),
                    d.settings_hash,
                    d.device.as_ref().map(|x| x.model.as_str()),
                    d.device.as_ref().and_then(|x| x.id.as_deref()),
                    d.device.as_ref().map(|x| x.host.as_str()),
                    d.occupancy
                        .as_ref()
                        .map(|o| serde_json::to_string(o).expect("occupancy serializes")),
                    d.same_as,
                ],
            )
            .map_err(|e| self.err(e))?;
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    pub fn record_candidate(
        &self,
        session: i64,
        key: Option<&str>,
        file: &str,
        loop_id: &str,
        line: u32,
        mode: Option<&str>,
        factor: Option<u32>,
        status: &str,
        reason: Option<&str>,
        reused: bool,
    ) -> Result<(), Error> {
        self.conn
            .execute(
                "INSERT INTO candidates (session_id, key, file, loop, line, mode, factor, status,
                   reason, reused) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                params![session, key, file, loop_id, line, mode, factor, status, reason, reused],
            )
            .map_err(|e| self.err(e))?;
        Ok(())
    }

    pub fn record_gate(
        &self,
        session: i64,
        key: &str,
        gate: &str,
        outcome: &str,
        detail: Option<&str>,
    ) -> Result<(), Error> {
        self.conn
            .execute(
                "INSERT INTO gates (session_id, key, gate, outcome, detail) VALUES (?1, ?2, ?3, ?4, ?5)",
                params![session, key, gate, outcome, detail],
            )
            .map_err(|e| self.err(e))?;
        Ok(())
    }

    pub fn record_build(
        &self,
        session: i64,
        state: &str,
        slot: usize,
        outcome: &str,
        detail: Option<&str>,
        seconds: f64,
    ) -> Result<(), Error> {
        self.conn
            .execute(
                "INSERT INTO builds (session_id, state, slot, outcome, detail, seconds)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![session, state, slot as i64, outcome, detail, seconds],
            )
            .map_err(|e| self.err(e))?;
        Ok(())
    }

    /// One raw sample. `comparison` is a decision key, `aa:STATE` for the baseline's A/A
    /// repeats or `confirm:RUN` for the final confirmation.
    pub fn record_sample(
        &self,
        session: i64,
        comparison: &str,
        round: usize,
        role: &str,
        value: f64,
        unit: &str,
    ) -> Result<(), Error> {
        self.record_lane_sample(session, comparison, 0, None, round, role, value, unit)
    }

    /// [`Ledger::record_sample`] with the lane that took it and the attempt at the comparison
    /// (a comparison lost with its lane is measured again under the next attempt: a decision
    /// comes from the samples of one attempt).
    #[allow(clippy::too_many_arguments)]
    pub fn record_lane_sample(
        &self,
        session: i64,
        comparison: &str,
        attempt: u32,
        lane: Option<usize>,
        round: usize,
        role: &str,
        value: f64,
        unit: &str,
    ) -> Result<(), Error> {
        self.conn
            .execute(
                "INSERT INTO samples (session_id, comparison, round, role, value, unit, at, attempt, lane)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                params![
                    session,
                    comparison,
                    round as i64,
                    role,
                    value,
                    unit,
                    now(),
                    attempt,
                    lane.map(|l| l as i64)
                ],
            )
            .map_err(|e| self.err(e))?;
        Ok(())
    }

    pub fn record_baseline(
        &self,
        session: i64,
        settings_hash: &str,
        state: &str,
        b: &Baseline,
    ) -> Result<(), Error> {
        self.conn
            .execute(
                "INSERT INTO baselines (session_id, settings_hash, state, figure, unit, runs, spread)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![session, settings_hash, state, b.figure, b.unit, b.runs, b.spread],
            )
            .map_err(|e| self.err(e))?;
        Ok(())
    }

    /// The latest baseline measured for `state` under these settings.
    pub fn baseline(&self, settings_hash: &str, state: &str) -> Result<Option<Baseline>, Error> {
        self.conn
            .query_row(
                "SELECT figure, unit, runs, spread FROM baselines
                 WHERE settings_hash = ?1 AND state = ?2 ORDER BY id DESC LIMIT 1",
                params![settings_hash, state],
                |r| {
                    Ok(Baseline {
                        figure: r.get(0)?,
                        unit: r.get(1)?,
                        runs: r.get(2)?,
                        spread: r.get(3)?,
                    })
                },
            )
            .optional()
            .map_err(|e| self.err(e))
    }

    /// A baseline figure for `state` from the raw samples where it was the baseline side of a
    /// decided comparison under these settings (when it was never measured on its own).
    pub fn baseline_from_samples(
        &self,
        settings_hash: &str,
        state: &str,
        unit: &str,
    ) -> Result<Option<Baseline>, Error> {
        let mut st = self
            .conn
            .prepare(
                "SELECT s.value FROM samples s JOIN decisions d ON s.comparison = d.key
                 WHERE d.base_state = ?1 AND d.settings_hash = ?2 AND s.role = 'baseline'",
            )
            .map_err(|e| self.err(e))?;
        let values: Vec<f64> = st
            .query_map([state, settings_hash], |r| r.get(0))
            .map_err(|e| self.err(e))?
            .collect::<Result<_, _>>()
            .map_err(|e| self.err(e))?;
        if values.is_empty() {
            return Ok(None);
        }
        let logs: Vec<f64> = values
            .iter()
            .filter(|v| **v > 0.0)
            .map(|v| v.ln())
            .collect();
        Ok(Some(Baseline {
            figure: crate::stats::median(&values),
            unit: unit.to_string(),
            runs: values.len() as u32,
            spread: crate::stats::mad_sigma(&logs),
        }))
    }

    /// The pairs a stored decision was made from: its comparison's counted pairs and its
    /// replication's (`replicate:KEY`), from the session that recorded the decision and the last
    /// attempt there (a comparison lost with its lane was measured again from scratch under
    /// the next attempt; a resumed run measures an undecided comparison again in its own
    /// session), in round order. Empty for a decision without samples.
    pub fn decision_pairs(
        &self,
        key: &str,
    ) -> Result<(Vec<crate::stats::Pair>, Vec<crate::stats::Pair>), Error> {
        let session: Option<i64> = self
            .conn
            .query_row(
                "SELECT session_id FROM decisions WHERE key = ?1",
                [key],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| self.err(e))?;
        let Some(session) = session else {
            return Ok((Vec::new(), Vec::new()));
        };
        let pairs = |comparison: &str| -> Result<Vec<crate::stats::Pair>, Error> {
            let mut st = self
                .conn
                .prepare(
                    "SELECT round, role, value FROM samples WHERE comparison = ?1
                     AND session_id = ?2 AND attempt = (SELECT max(attempt) FROM samples
                       WHERE comparison = ?1 AND session_id = ?2)
                     AND role IN ('baseline', 'variant') ORDER BY id",
                )
                .map_err(|e| self.err(e))?;
            let rows: Vec<(i64, String, f64)> = st
                .query_map(params![comparison, session], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?))
                })
                .map_err(|e| self.err(e))?
                .collect::<Result<_, _>>()
                .map_err(|e| self.err(e))?;
            let mut rounds: std::collections::BTreeMap<i64, (Option<f64>, Option<f64>)> =
                Default::default();
            for (round, role, value) in rows {
                let e = rounds.entry(round).or_default();
                if role == "baseline" {
                    e.0 = Some(value);
                } else {
                    e.1 = Some(value);
                }
            }
            Ok(rounds
                .into_iter()
                .filter_map(|(round, (b, v))| {
                    Some(crate::stats::Pair {
                        baseline: b?,
                        variant: v?,
                        baseline_first: crate::stats::baseline_first(comparison, round as usize),
                    })
                })
                .collect())
        };
        Ok((
            pairs(key)?,
            pairs(&crate::lane::measure::replication_id(key))?,
        ))
    }

    /// The samples of one comparison, in order: `(session, round, role, value)`.
    pub fn samples(&self, comparison: &str) -> Result<Vec<(i64, i64, String, f64)>, Error> {
        let mut st = self
            .conn
            .prepare(
                "SELECT session_id, round, role, value FROM samples WHERE comparison = ?1 ORDER BY id",
            )
            .map_err(|e| self.err(e))?;
        let rows = st
            .query_map([comparison], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
            })
            .map_err(|e| self.err(e))?;
        rows.collect::<Result<Vec<_>, _>>().map_err(|e| self.err(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_lock_refuses_a_second_tune_and_a_released_one_is_taken() {
        let d = tempfile::tempdir().unwrap();
        let first = Ledger::lock(d.path()).unwrap();
        let t = std::time::Instant::now();
        let err = Ledger::lock(d.path()).unwrap_err();
        assert!(err.to_string().contains("another hip-unroll tune"), "{err}");
        assert!(
            t.elapsed() >= LOCK_PATIENCE,
            "gave up after {:?}",
            t.elapsed()
        );
        // Released while the second one waits (a forked child's copy closing at its exec): taken.
        let releaser = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(300));
            drop(first);
        });
        let t = std::time::Instant::now();
        let second = Ledger::lock(d.path());
        releaser.join().unwrap();
        assert!(second.is_ok(), "{:?}", second.err());
        assert!(t.elapsed() < LOCK_PATIENCE, "waited {:?}", t.elapsed());
    }

    #[test]
    fn creates_records_and_reopens() {
        let d = tempfile::tempdir().unwrap();
        let l = Ledger::open(d.path()).unwrap();
        let r = l.begin("tree", "set", "{}", false).unwrap();
        assert!(!r.resumed);
        let key = decision_key("set", "a", "b");
        assert_eq!(l.decision(&key).unwrap(), None);
        l.record_sample(r.session_id, &key, 0, "baseline", 1.5, "ms")
            .unwrap();
        let dec = Decision {
            key: key.clone(),
            settings_hash: "set".into(),
            base_state: "a".into(),
            variant_state: "b".into(),
            status: "accepted".into(),
            speedup: Some(1.2),
            ci: Some((1.1, 1.3)),
            p_value: Some(0.001),
            runs: Some(10),
            reason: None,
            figure: Some(1.25),
            device: Some(crate::lane::Device {
                model: "cpu: test".into(),
                id: Some("1".into()),
                host: "h".into(),
            }),
            occupancy: Some(crate::report::Occupancy {
                kernel: "k".into(),
                unit: crate::report::OccupancyUnit::WavesPerSimd,
                before: 8,
                after: 6,
                registers: crate::report::Registers {
                    before: 56,
                    after: 76,
                },
            }),
            same_as: None,
        };
        l.record_decision(r.session_id, &dec).unwrap();
        drop(l);
        let l = Ledger::open(d.path()).unwrap();
        assert_eq!(l.decision(&key).unwrap(), Some(dec));
        assert_eq!(l.samples(&key).unwrap().len(), 1);
        // Resume finds the unfinished run; a finished one is not resumed.
        let r2 = l.begin("tree", "set", "{}", true).unwrap();
        assert!(r2.resumed && r2.run_id == r.run_id && r2.session_id != r.session_id);
        l.finish(r.run_id, "done", None).unwrap();
        assert!(matches!(
            l.begin("tree", "set", "{}", true),
            Err(Error::Invalid {
                setting: crate::setting::Setting::Resume,
                ..
            })
        ));
    }

    #[test]
    fn a_decisions_pairs_are_those_of_its_session_and_last_attempt() {
        let d = tempfile::tempdir().unwrap();
        let l = Ledger::open(d.path()).unwrap();
        let r1 = l.begin("tree", "set", "{}", false).unwrap();
        let key = decision_key("set", "a", "b");
        // Session 1 measured two rounds and was interrupted (no decision).
        for round in 0..2 {
            l.record_lane_sample(
                r1.session_id,
                &key,
                0,
                Some(0),
                round,
                "baseline",
                9.0,
                "ms",
            )
            .unwrap();
            l.record_lane_sample(r1.session_id, &key, 0, Some(0), round, "variant", 9.0, "ms")
                .unwrap();
        }
        // Session 2: attempt 0 lost with its lane after one round, attempt 1 decided.
        let r2 = l.begin("tree", "set", "{}", true).unwrap();
        let s = r2.session_id;
        l.record_lane_sample(s, &key, 0, Some(0), 0, "baseline", 8.0, "ms")
            .unwrap();
        for round in 0..3 {
            let v = 5.0 + round as f64;
            l.record_lane_sample(s, &key, 1, Some(1), round, "baseline-warm-up", 1.0, "ms")
                .unwrap();
            l.record_lane_sample(s, &key, 1, Some(1), round, "baseline", 10.0, "ms")
                .unwrap();
            l.record_lane_sample(s, &key, 1, Some(1), round, "variant", v, "ms")
                .unwrap();
        }
        let rep = crate::lane::measure::replication_id(&key);
        l.record_lane_sample(s, &rep, 1, Some(1), 0, "variant", 6.0, "ms")
            .unwrap();
        l.record_lane_sample(s, &rep, 1, Some(1), 0, "baseline", 10.0, "ms")
            .unwrap();
        assert_eq!(l.decision_pairs(&key).unwrap(), (vec![], vec![]));
        let dec = Decision {
            key: key.clone(),
            settings_hash: "set".into(),
            base_state: "a".into(),
            variant_state: "b".into(),
            status: "accepted".into(),
            speedup: Some(1.6),
            ci: None,
            p_value: None,
            runs: Some(3),
            reason: None,
            figure: None,
            device: None,
            occupancy: None,
            same_as: None,
        };
        l.record_decision(s, &dec).unwrap();
        let (pairs, again) = l.decision_pairs(&key).unwrap();
        let got: Vec<(f64, f64)> = pairs.iter().map(|p| (p.baseline, p.variant)).collect();
        assert_eq!(got, [(10.0, 5.0), (10.0, 6.0), (10.0, 7.0)]);
        assert_eq!(
            pairs.iter().map(|p| p.baseline_first).collect::<Vec<_>>(),
            (0..3)
                .map(|r| crate::stats::baseline_first(&key, r))
                .collect::<Vec<_>>()
        );
        assert_eq!(again.len(), 1);
        assert_eq!((again[0].baseline, again[0].variant), (10.0, 6.0));
    }

    #[test]
    fn a_schema_2_ledger_is_migrated_and_keeps_its_decisions() {
        let d = tempfile::tempdir().unwrap();
        let l = Ledger::open(d.path()).unwrap();
        let r = l.begin("tree", "set", "{}", false).unwrap();
        let dec = Decision {
            key: "k".into(),
            settings_hash: "set".into(),
            base_state: "a".into(),
            variant_state: "b".into(),
            status: "rejected".into(),
            speedup: Some(1.0),
            ci: Some((0.9, 1.1)),
            p_value: Some(0.5),
            runs: Some(30),
            reason: Some("not-faster".into()),
            figure: None,
            device: None,
            occupancy: None,
            same_as: None,
        };
        l.record_decision(r.session_id, &dec).unwrap();
        // Back to schema 2: without the two columns.
        l.conn
            .execute_batch(
                "ALTER TABLE decisions DROP COLUMN occupancy; ALTER TABLE decisions DROP COLUMN same_as; PRAGMA user_version = 2;",
            )
            .unwrap();
        drop(l);
        let l = Ledger::open(d.path()).unwrap();
        let v: i64 = l
            .conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(v, SCHEMA_VERSION);
        assert_eq!(l.decision("k").unwrap(), Some(dec));
    }

    #[test]
    fn a_corrupt_or_foreign_file_is_refused_and_left_alone() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join(FILE_NAME);
        std::fs::write(&p, b"this is not sqlite at all, just some bytes.....").unwrap();
        let before = std::fs::read(&p).unwrap();
        let e = Ledger::open(d.path()).err().unwrap();
        assert!(matches!(e, Error::Ledger { .. }), "{e}");
        assert_eq!(std::fs::read(&p).unwrap(), before);

        let d2 = tempfile::tempdir().unwrap();
        let c = Connection::open(d2.path().join(FILE_NAME)).unwrap();
        c.execute_batch("CREATE TABLE other (x INTEGER); INSERT INTO other VALUES (1);")
            .unwrap();
        drop(c);
        let e = Ledger::open(d2.path()).err().unwrap();
        assert!(e.to_string().contains("not a hip-unroll ledger"), "{e}");
    }

    #[test]
    fn created_under_a_temporary_name_and_leftovers_removed() {
        let d = tempfile::tempdir().unwrap();
        // What a kill during an earlier creation left: the temporary database and its journal.
        std::fs::write(d.path().join("ledger.db.new"), b"half").unwrap();
        std::fs::write(d.path().join("ledger.db.new-journal"), b"half").unwrap();
        let l = Ledger::open(d.path()).unwrap();
        l.begin("tree", "set", "{}", false).unwrap();
        assert!(!d.path().join("ledger.db.new").exists());
        assert!(!d.path().join("ledger.db.new-journal").exists());
        drop(l);
        // The schema was in place before the rename: the file reopens as a ledger.
        Ledger::open(d.path()).unwrap();
    }

    #[test]
    fn an_empty_database_left_by_a_killed_creation_is_replaced() {
        let d = tempfile::tempdir().unwrap();
        let c = Connection::open(d.path().join(FILE_NAME)).unwrap();
        c.pragma_update(None, "journal_mode", "WAL").unwrap();
        drop(c);
        let l = Ledger::open(d.path()).unwrap();
        let r = l.begin("tree", "set", "{}", false).unwrap();
        assert_eq!(r.run_id, 1);
    }

    #[test]
    fn a_full_disk_is_disk_full_and_leaves_the_run_resumable() {
        let d = tempfile::tempdir().unwrap();
        let l = Ledger::open(d.path()).unwrap();
        let r = l.begin("tree", "set", "{}", false).unwrap();
        // SQLite's own SQLITE_FULL: the database may not grow beyond its current pages.
        let pages: i64 = l
            .conn
            .query_row("PRAGMA page_count", [], |r| r.get(0))
            .unwrap();
        l.conn.pragma_update(None, "max_page_count", pages).unwrap();
        let big = "x".repeat(1 << 16);
        let e = (0..64)
            .map(|i| l.record_sample(r.session_id, &big, i, "baseline", 1.0, "ms"))
            .find_map(Result::err)
            .expect("the database filled up");
        assert!(matches!(e, Error::DiskFull { .. }), "{e}");
        assert!(e.to_string().contains("disk full"), "{e}");
        assert!(!e.to_string().contains("corrupt"), "{e}");
        drop(l);
        // Space again: the run is still there to resume.
        let l = Ledger::open(d.path()).unwrap();
        let again = l.begin("tree", "set", "{}", true).unwrap();
        assert!(again.resumed && again.run_id == r.run_id);
    }

    #[test]
    fn an_unknown_decision_status_is_an_error() {
        let d = tempfile::tempdir().unwrap();
        let l = Ledger::open(d.path()).unwrap();
        let r = l.begin("tree", "set", "{}", false).unwrap();
        let dec = Decision {
            key: "k".into(),
            settings_hash: "set".into(),
            base_state: "a".into(),
            variant_state: "b".into(),
            status: "maybe".into(),
            speedup: None,
            ci: None,
            p_value: None,
            runs: None,
            reason: None,
            figure: None,
            device: None,
            occupancy: None,
            same_as: None,
        };
        l.record_decision(r.session_id, &dec).unwrap();
        let e = l.decision("k").unwrap_err();
        assert!(e.to_string().contains("unknown status 'maybe'"), "{e}");
        for ok in DECISION_STATUSES {
            l.record_decision(
                r.session_id,
                &Decision {
                    status: ok.into(),
                    ..dec.clone()
                },
            )
            .unwrap();
            assert_eq!(l.decision("k").unwrap().unwrap().status, ok);
        }
    }

    #[test]
    fn one_tune_per_state_directory() {
        let d = tempfile::tempdir().unwrap();
        let held = Ledger::lock(d.path()).unwrap();
        let e = Ledger::lock(d.path()).err().unwrap();
        assert!(e.to_string().contains("another hip-unroll tune"), "{e}");
        drop(held);
        Ledger::lock(d.path()).unwrap();
    }

    #[test]
    fn unwritable_state_dir_is_one_clear_error() {
        let d = tempfile::tempdir().unwrap();
        let file = d.path().join("plain-file");
        std::fs::write(&file, "x").unwrap();
        let e = Ledger::open(&file.join("state")).err().unwrap();
        assert!(matches!(e, Error::StateDir { .. }), "{e}");
    }
}
