//! Reader for rocpd SQLite databases (rocprofv3 `-f rocpd`, schema 3.x).
//!
//! rocprofv3 writes every table with a per-process UUID suffix
//! (`rocpd_kernel_dispatch_0198..._7e5f_...`) and plain views (`rocpd_kernel_dispatch`) over
//! them; rows carry a `guid` column and every join is on `(id, guid)`. Several databases (ranks,
//! nodes, processes) are ATTACHed to one connection and read through TEMP views that
//! `UNION ALL` the per-database tables, so they are summarised as one run.
//!
//! The queries of one read are bounded in time ([`QUERY_TIMEOUT`], [`read_with_limit`]): a
//! watchdog interrupts SQLite when the limit passes, so a database whose tables are views that
//! never end (a recursive CTE) is an error, not a hang.

use crate::error::{Error, Result};
use crate::model::{AgentInfo, Dispatch, Interner, Profile, Source};
use rusqlite::{Connection, OpenFlags, OptionalExtension};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

/// Logical tables this reader uses, with the columns it selects (present in schema 3.0.0+).
const TABLES: [(&str, &str, bool); 6] = [
    ("rocpd_metadata", "tag, value", true),
    ("rocpd_kernel_dispatch", "guid, pid, agent_id, kernel_id, dispatch_id, queue_id, stream_id, start, \"end\", event_id", true),
    ("rocpd_info_kernel_symbol", "guid, id, kernel_name, display_name", true),
    ("rocpd_info_agent", "guid, id, type, name, product_name", false),
    ("rocpd_info_pmc", "guid, id, name", false),
    ("rocpd_pmc_event", "guid, event_id, pmc_id, value", false),
];

/// Schema major versions this reader understands (`rocpd_metadata.schema_version`).
pub const SUPPORTED_SCHEMA_MAJOR: &str = "3";

/// True if the file starts with the SQLite header.
pub fn is_sqlite(path: &Path) -> bool {
    sqlite_header(path).unwrap_or(false)
}

/// Whether the file starts with the SQLite header; an error if it cannot be read.
pub(crate) fn sqlite_header(path: &Path) -> std::io::Result<bool> {
    use std::io::Read;
    let mut buf = [0u8; 16];
    match std::fs::File::open(path)?.read_exact(&mut buf) {
        Ok(()) => Ok(&buf == b"SQLite format 3\0"),
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Ok(false),
        Err(e) => Err(e),
    }
}

fn is_uuid_suffix(s: &str) -> bool {
    // `_` + UUID with `-` replaced by `_`: 8_4_4_4_12 hex digits.
    let Some(rest) = s.strip_prefix('_') else {
        return false;
    };
    let parts: Vec<&str> = rest.split('_').collect();
    parts.len() == 5
        && parts
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(p, n)| p.len() == n && p.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// How long the queries of one [`read`] may take together.
pub const QUERY_TIMEOUT: Duration = Duration::from_secs(120);

/// Read one or more rocpd databases as one profile.
pub fn read(paths: &[PathBuf]) -> Result<Profile> {
    read_with_limit(paths, QUERY_TIMEOUT)
}

/// [`read`], its queries interrupted once `limit` has passed.
pub fn read_with_limit(paths: &[PathBuf], limit: Duration) -> Result<Profile> {
    let first = paths.first().ok_or_else(|| Error::NoKernels {
        what: "an empty list of databases".into(),
    })?;
    let conn = Connection::open_in_memory_with_flags(
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(sqlite(first))?;
    let watchdog = Watchdog::start(&conn, limit);
    let result = read_on(&conn, paths, first);
    if watchdog.fired() {
        return Err(Error::QueryTimeout {
            path: first.clone(),
            secs: limit.as_secs(),
        });
    }
    result
}

/// Interrupts every statement of a connection once a time limit has passed.
struct Watchdog {
    done: Option<mpsc::Sender<()>>,
    thread: Option<std::thread::JoinHandle<bool>>,
}

impl Watchdog {
    fn start(conn: &Connection, limit: Duration) -> Watchdog {
        let handle = conn.get_interrupt_handle();
        let (tx, rx) = mpsc::channel::<()>();
        let thread = std::thread::spawn(move || match rx.recv_timeout(limit) {
            Err(mpsc::RecvTimeoutError::Timeout) => {
                handle.interrupt();
                true
            }
            _ => false,
        });
        Watchdog {
            done: Some(tx),
            thread: Some(thread),
        }
    }

    /// Stop it; whether it interrupted the connection.
    fn fired(mut self) -> bool {
        drop(self.done.take());
        self.thread
            .take()
            .is_some_and(|t| t.join().unwrap_or(false))
    }
}

fn read_on(conn: &Connection, paths: &[PathBuf], first: &Path) -> Result<Profile> {
    // Per logical table, the `schema."name"` sources across all databases.
    let mut sources: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    let mut versions = Vec::new();
    for (i, path) in paths.iter().enumerate() {
        versions.push(attach(conn, path, &format!("db{i}"), &mut sources)?);
    }
    create_views(conn, &sources).map_err(|(table, e)| Error::NotRocpd {
        path: first.to_path_buf(),
        reason: format!("{table} lacks the expected columns ({e})"),
    })?;
    let mut profile = Profile::new(Source::Rocpd, format!("rocpd-{}", versions[0]));
    profile.inputs = paths.to_vec();
    read_rows(conn, &mut profile).map_err(|e| Error::NotRocpd {
        path: first.to_path_buf(),
        reason: e.to_string(),
    })?;
    Ok(profile)
}

fn sqlite(path: &Path) -> impl FnOnce(rusqlite::Error) -> Error {
    let path = path.to_path_buf();
    move |error| Error::Sqlite { path, error }
}

/// ATTACH one database as `schema`, add its tables (or views) to `sources`, and return its
/// schema version (checked to be one this reader knows).
fn attach(
    conn: &Connection,
    path: &Path,
    schema: &str,
    sources: &mut BTreeMap<&'static str, Vec<String>>,
) -> Result<String> {
    let not_rocpd = |reason: String| Error::NotRocpd {
        path: path.to_path_buf(),
        reason,
    };
    if path.is_dir() {
        return Err(not_rocpd("a directory, not a database file".into()));
    }
    if !sqlite_header(path).map_err(crate::error::io(path))? {
        return Err(not_rocpd("the file is not an SQLite database".into()));
    }
    conn.execute(
        "ATTACH DATABASE ?1 AS ?2",
        rusqlite::params![path.to_string_lossy(), schema],
    )
    .map_err(sqlite(path))?;
    let mut names: Vec<(String, String)> = Vec::new();
    each_row(
        conn,
        &format!("SELECT type, name FROM {schema}.sqlite_master WHERE type IN ('table','view')"),
        |r| {
            names.push((r.get(0)?, r.get(1)?));
            Ok(())
        },
    )
    .map_err(|e| not_rocpd(format!("cannot read its schema ({e})")))?;
    let mut metadata = Vec::new();
    for (table, _, required) in TABLES {
        // The UUID-suffixed tables are the data; the unsuffixed views are only used when no
        // suffixed table exists (e.g. a database that someone flattened).
        let mut chosen: Vec<String> = names
            .iter()
            .filter(|(ty, n)| ty == "table" && n.strip_prefix(table).is_some_and(is_uuid_suffix))
            .map(|(_, n)| format!("{schema}.\"{n}\""))
            .collect();
        if chosen.is_empty() && names.iter().any(|(_, n)| n == table) {
            chosen.push(format!("{schema}.\"{table}\""));
        }
        if chosen.is_empty() && required {
            return Err(not_rocpd(format!("no {table} table or view")));
        }
        if table == "rocpd_metadata" {
            metadata.clone_from(&chosen);
        }
        sources.entry(table).or_default().extend(chosen);
    }
    let mut version = None;
    for m in &metadata {
        let v: Option<String> = conn
            .query_row(
                &format!("SELECT value FROM {m} WHERE tag = 'schema_version' LIMIT 1"),
                [],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| not_rocpd(format!("unreadable rocpd_metadata ({e})")))?;
        if let Some(v) = v {
            if v.split('.').next() != Some(SUPPORTED_SCHEMA_MAJOR) {
                return Err(Error::SchemaVersion {
                    path: path.to_path_buf(),
                    version: v,
                });
            }
            version = Some(v);
        }
    }
    version.ok_or_else(|| not_rocpd("rocpd_metadata has no schema_version".into()))
}

/// One TEMP view per logical table: UNION ALL over every attached database. The error names
/// the table whose sources lack a column.
fn create_views(
    conn: &Connection,
    sources: &BTreeMap<&str, Vec<String>>,
) -> std::result::Result<(), (&'static str, rusqlite::Error)> {
    for (table, cols, _) in TABLES {
        let srcs = sources.get(table).map(Vec::as_slice).unwrap_or_default();
        let body = if srcs.is_empty() {
            // Optional table absent everywhere: an empty view with the same columns.
            let nulls = cols
                .split(',')
                .map(|c| format!("NULL AS {}", c.trim()))
                .collect::<Vec<_>>()
                .join(", ");
            format!("SELECT {nulls} WHERE 0")
        } else {
            srcs.iter()
                .map(|s| format!("SELECT {cols} FROM {s}"))
                .collect::<Vec<_>>()
                .join(" UNION ALL ")
        };
        conn.execute_batch(&format!("CREATE TEMP VIEW \"all_{table}\" AS {body};"))
            .map_err(|e| (table, e))?;
    }
    Ok(())
}

/// Run `sql` and call `f` on each row.
fn each_row(
    conn: &Connection,
    sql: &str,
    mut f: impl FnMut(&rusqlite::Row<'_>) -> rusqlite::Result<()>,
) -> rusqlite::Result<()> {
    let mut st = conn.prepare(sql)?;
    let mut rows = st.query([])?;
    while let Some(r) = rows.next()? {
        f(r)?;
    }
    Ok(())
}

/// guid -> process index (one guid per profiled process). Rows come grouped by database, so
/// the last guid seen answers almost every lookup without hashing.
#[derive(Default)]
struct Guids {
    map: HashMap<String, u32>,
    last: Option<(String, u32)>,
}

impl Guids {
    /// The index of the guid in column 0 of `r`.
    fn of(&mut self, r: &rusqlite::Row<'_>) -> rusqlite::Result<u32> {
        let g = r.get_ref(0)?.as_str().unwrap_or("");
        if let Some((s, i)) = &self.last {
            if s == g {
                return Ok(*i);
            }
        }
        let n = self.map.len() as u32;
        let i = *self.map.entry(g.to_string()).or_insert(n);
        self.last = Some((g.to_string(), i));
        Ok(i)
    }
}

/// Agents, kernel symbols, dispatches and counters from the `all_*` views into `profile`.
fn read_rows(conn: &Connection, profile: &mut Profile) -> rusqlite::Result<()> {
    let mut guids = Guids::default();

    let mut agents: HashMap<(u32, i64), u32> = HashMap::new();
    each_row(
        conn,
        "SELECT guid, id, type, name, product_name FROM all_rocpd_info_agent",
        |r| {
            let key = (guids.of(r)?, r.get(1)?);
            if r.get::<_, Option<String>>(2)?.as_deref() == Some("CPU") {
                return Ok(());
            }
            profile.agents.push(AgentInfo {
                arch: r.get(3)?,
                product: r.get(4)?,
            });
            agents.insert(key, (profile.agents.len() - 1) as u32);
            Ok(())
        },
    )?;

    let mut interner = Interner::default();
    let mut symbols: HashMap<(u32, i64), u32> = HashMap::new();
    each_row(
        conn,
        "SELECT guid, id, kernel_name, display_name FROM all_rocpd_info_kernel_symbol",
        |r| {
            let id: i64 = r.get(1)?;
            let kname: Option<String> = r.get(2)?;
            let dname: Option<String> = r.get(3)?;
            let raw = dname
                .filter(|s| !s.is_empty())
                .or(kname)
                .unwrap_or_else(|| format!("<kernel {id}>"));
            symbols.insert(
                (guids.of(r)?, id),
                interner.intern(&mut profile.kernels, &raw),
            );
            Ok(())
        },
    )?;

    // Dispatches. The event_id -> dispatch map is only needed when counters were collected.
    let has_pmc: bool = conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM all_rocpd_pmc_event)",
        [],
        |r| r.get(0),
    )?;
    let count: i64 = conn.query_row("SELECT count(*) FROM all_rocpd_kernel_dispatch", [], |r| {
        r.get(0)
    })?;
    profile.dispatches.reserve(count.max(0) as usize);
    let mut by_event: HashMap<(u32, i64), usize> = HashMap::new();
    each_row(
        conn,
        "SELECT guid, pid, agent_id, kernel_id, dispatch_id, queue_id, stream_id, start, \"end\", event_id FROM all_rocpd_kernel_dispatch",
        |r| {
            let g = guids.of(r)?;
            let pid: i64 = r.get(1)?;
            let agent_id: i64 = r.get(2)?;
            let kernel_id: i64 = r.get(3)?;
            let kernel = match symbols.get(&(g, kernel_id)) {
                Some(&k) => k,
                None => interner.intern(
                    &mut profile.kernels,
                    &format!("<unknown kernel {kernel_id}>"),
                ),
            };
            let agent = *agents.entry((g, agent_id)).or_insert_with(|| {
                profile.agents.push(AgentInfo::default());
                (profile.agents.len() - 1) as u32
            });
            let stream: Option<i64> = r.get(6)?;
            let start: i64 = r.get(7)?;
            let end: i64 = r.get(8)?;
            let event: Option<i64> = r.get(9)?;
            profile.dispatches.push(Dispatch {
                kernel,
                process: (g << 16) | (pid as u32 & 0xffff),
                agent,
                queue: r.get::<_, i64>(5)? as u64,
                stream: stream.map(|s| s as u64),
                dispatch_id: r.get::<_, i64>(4)? as u64,
                start_ns: start.max(0) as u64,
                end_ns: end.max(0) as u64,
                counters: None,
            });
            if let (true, Some(e)) = (has_pmc, event) {
                by_event.insert((g, e), profile.dispatches.len() - 1);
            }
            Ok(())
        },
    )?;

    // Counters: rocpd_pmc_event rows point at the dispatch's event_id; values of several
    // instances of one counter are summed, as rocprofv3's CSV writer does.
    let mut pmc_names: HashMap<(u32, i64), String> = HashMap::new();
    each_row(conn, "SELECT guid, id, name FROM all_rocpd_info_pmc", |r| {
        pmc_names.insert((guids.of(r)?, r.get(1)?), r.get(2)?);
        Ok(())
    })?;
    if pmc_names.is_empty() {
        return Ok(());
    }
    each_row(
        conn,
        "SELECT guid, event_id, pmc_id, value FROM all_rocpd_pmc_event",
        |r| {
            let g = guids.of(r)?;
            let Some(event) = r.get::<_, Option<i64>>(1)? else {
                return Ok(());
            };
            let pmc: i64 = r.get(2)?;
            let value: f64 = r.get::<_, Option<f64>>(3)?.unwrap_or(0.0);
            if let (Some(&d), Some(name)) = (by_event.get(&(g, event)), pmc_names.get(&(g, pmc))) {
                *profile.dispatches[d]
                    .counters
                    .get_or_insert_with(Default::default)
                    .entry(name.clone())
                    .or_insert(0.0) += value;
            }
            Ok(())
        },
    )
}
