//! Reader for rocpd SQLite databases (rocprofv3 `-f rocpd`, schema 3.x).
//!
//! rocprofv3 writes every table with a per-process UUID suffix
//! (`rocpd_kernel_dispatch_0198..._7e5f_...`) and plain views (`rocpd_kernel_dispatch`) over
//! them; rows carry a `guid` column and every join is on `(id, guid)`. Several databases (ranks,
//! nodes, processes) are ATTACHed to one connection and read through TEMP views that
//! `UNION ALL` the per-database tables, so they are summarised as one run.

use crate::error::{Error, Result};
use crate::model::{AgentInfo, Dispatch, Interner, Profile, Source};
use rusqlite::{Connection, OpenFlags};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

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
    use std::io::Read;
    let mut buf = [0u8; 16];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut buf))
        .map(|_| &buf == b"SQLite format 3\0")
        .unwrap_or(false)
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

/// Read one or more rocpd databases as one profile.
pub fn read(paths: &[PathBuf]) -> Result<Profile> {
    let first = paths.first().ok_or_else(|| Error::NoKernels {
        what: "an empty list of databases".into(),
    })?;
    let sql = |path: &Path| {
        let path = path.to_path_buf();
        move |error| Error::Sqlite { path, error }
    };
    let conn = Connection::open_in_memory_with_flags(
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(sql(first))?;
    // Per logical table, the `schema."name"` sources across all databases.
    let mut sources: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    let mut versions = Vec::new();
    for (i, path) in paths.iter().enumerate() {
        if !path.is_file() {
            return Err(Error::Io {
                path: path.clone(),
                error: std::io::Error::new(std::io::ErrorKind::NotFound, "no such file"),
            });
        }
        if !is_sqlite(path) {
            return Err(Error::NotRocpd {
                path: path.clone(),
                reason: "the file is not an SQLite database".into(),
            });
        }
        let schema = format!("db{i}");
        conn.execute(
            "ATTACH DATABASE ?1 AS ?2",
            rusqlite::params![path.to_string_lossy(), schema],
        )
        .map_err(sql(path))?;
        let mut names: Vec<(String, String)> = Vec::new();
        {
            let mut st = conn
                .prepare(&format!(
                    "SELECT type, name FROM {schema}.sqlite_master WHERE type IN ('table','view')"
                ))
                .map_err(|e| Error::NotRocpd {
                    path: path.clone(),
                    reason: format!("cannot read its schema ({e})"),
                })?;
            let rows = st
                .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
                .map_err(sql(path))?;
            for r in rows {
                names.push(r.map_err(sql(path))?);
            }
        }
        for (table, _, required) in TABLES {
            // The UUID-suffixed tables are the data; the unsuffixed views are only used when no
            // suffixed table exists (e.g. a database that someone flattened).
            let suffixed: Vec<&String> = names
                .iter()
                .filter(|(ty, n)| {
                    ty == "table" && n.strip_prefix(table).is_some_and(is_uuid_suffix)
                })
                .map(|(_, n)| n)
                .collect();
            let chosen: Vec<String> = if !suffixed.is_empty() {
                suffixed
                    .iter()
                    .map(|n| format!("{schema}.\"{n}\""))
                    .collect()
            } else if names.iter().any(|(_, n)| n == table) {
                vec![format!("{schema}.\"{table}\"")]
            } else if required {
                return Err(Error::NotRocpd {
                    path: path.clone(),
                    reason: format!("no {table} table or view"),
                });
            } else {
                Vec::new()
            };
            sources.entry(table).or_default().extend(chosen);
        }
        // Schema version of this database.
        let meta = sources["rocpd_metadata"].clone();
        let mut found = None;
        for m in meta.iter().filter(|m| m.starts_with(&format!("{schema}."))) {
            let v: Option<String> = conn
                .query_row(
                    &format!("SELECT value FROM {m} WHERE tag = 'schema_version' LIMIT 1"),
                    [],
                    |r| r.get(0),
                )
                .map_err(|e| match e {
                    rusqlite::Error::QueryReturnedNoRows => None,
                    e => Some(e),
                })
                .map(Some)
                .or_else(|e| match e {
                    None => Ok(None),
                    Some(e) => Err(Error::NotRocpd {
                        path: path.clone(),
                        reason: format!("unreadable rocpd_metadata ({e})"),
                    }),
                })?;
            if let Some(v) = v {
                let major = v.split('.').next().unwrap_or("");
                if major != SUPPORTED_SCHEMA_MAJOR {
                    return Err(Error::SchemaVersion {
                        path: path.clone(),
                        version: v,
                    });
                }
                found = Some(v);
            }
        }
        let Some(v) = found else {
            return Err(Error::NotRocpd {
                path: path.clone(),
                reason: "rocpd_metadata has no schema_version".into(),
            });
        };
        versions.push(v);
    }
    // One TEMP view per logical table: UNION ALL over every attached database.
    for (table, cols, _) in TABLES {
        let srcs = sources.get(table).cloned().unwrap_or_default();
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
            .map_err(|e| Error::NotRocpd {
                path: first.clone(),
                reason: format!("{table} lacks the expected columns ({e})"),
            })?;
    }

    let mut profile = Profile::new(
        Source::Rocpd,
        format!("rocpd-{}", versions.first().cloned().unwrap_or_default()),
    );
    profile.inputs = paths.to_vec();
    let map_err = |e: rusqlite::Error| Error::NotRocpd {
        path: first.clone(),
        reason: e.to_string(),
    };

    // guid -> process index (one guid per profiled process).
    let mut guids: HashMap<String, u32> = HashMap::new();
    let guid_idx = |g: &str, guids: &mut HashMap<String, u32>| -> u32 {
        if let Some(&i) = guids.get(g) {
            return i;
        }
        let i = guids.len() as u32;
        guids.insert(g.to_string(), i);
        i
    };

    // Agents.
    let mut agents: HashMap<(u32, i64), u32> = HashMap::new();
    {
        let mut st = conn
            .prepare("SELECT guid, id, type, name, product_name FROM all_rocpd_info_agent")
            .map_err(map_err)?;
        let mut rows = st.query([]).map_err(map_err)?;
        while let Some(r) = rows.next().map_err(map_err)? {
            let g = guid_idx(
                r.get_ref(0).map_err(map_err)?.as_str().unwrap_or(""),
                &mut guids,
            );
            let id: i64 = r.get(1).map_err(map_err)?;
            let ty: Option<String> = r.get(2).map_err(map_err)?;
            if ty.as_deref() == Some("CPU") {
                continue;
            }
            profile.agents.push(AgentInfo {
                arch: r.get(3).map_err(map_err)?,
                product: r.get(4).map_err(map_err)?,
            });
            agents.insert((g, id), (profile.agents.len() - 1) as u32);
        }
    }

    // Kernel symbols.
    let mut interner = Interner::default();
    let mut symbols: HashMap<(u32, i64), u32> = HashMap::new();
    {
        let mut st = conn
            .prepare("SELECT guid, id, kernel_name, display_name FROM all_rocpd_info_kernel_symbol")
            .map_err(map_err)?;
        let mut rows = st.query([]).map_err(map_err)?;
        while let Some(r) = rows.next().map_err(map_err)? {
            let g = guid_idx(
                r.get_ref(0).map_err(map_err)?.as_str().unwrap_or(""),
                &mut guids,
            );
            let id: i64 = r.get(1).map_err(map_err)?;
            let kname: Option<String> = r.get(2).map_err(map_err)?;
            let dname: Option<String> = r.get(3).map_err(map_err)?;
            let raw = dname
                .filter(|s| !s.is_empty())
                .or(kname)
                .unwrap_or_else(|| format!("<kernel {id}>"));
            symbols.insert((g, id), interner.intern(&mut profile.kernels, &raw));
        }
    }

    // Dispatches. The event_id -> dispatch map is only needed when counters were collected.
    let has_pmc: bool = conn
        .query_row(
            "SELECT EXISTS (SELECT 1 FROM all_rocpd_pmc_event)",
            [],
            |r| r.get(0),
        )
        .map_err(map_err)?;
    let count: i64 = conn
        .query_row("SELECT count(*) FROM all_rocpd_kernel_dispatch", [], |r| {
            r.get(0)
        })
        .map_err(map_err)?;
    profile.dispatches.reserve(count.max(0) as usize);
    let mut by_event: HashMap<(u32, i64), usize> = HashMap::new();
    {
        let mut st = conn
            .prepare("SELECT guid, pid, agent_id, kernel_id, dispatch_id, queue_id, stream_id, start, \"end\", event_id FROM all_rocpd_kernel_dispatch")
            .map_err(map_err)?;
        let mut rows = st.query([]).map_err(map_err)?;
        let mut last_guid: Option<(String, u32)> = None;
        while let Some(r) = rows.next().map_err(map_err)? {
            let gs = r.get_ref(0).map_err(map_err)?.as_str().unwrap_or("");
            let g = match &last_guid {
                Some((s, i)) if s == gs => *i,
                _ => {
                    let i = guid_idx(gs, &mut guids);
                    last_guid = Some((gs.to_string(), i));
                    i
                }
            };
            let pid: i64 = r.get(1).map_err(map_err)?;
            let agent_id: i64 = r.get(2).map_err(map_err)?;
            let kernel_id: i64 = r.get(3).map_err(map_err)?;
            let kernel = match symbols.get(&(g, kernel_id)) {
                Some(&k) => k,
                None => interner.intern(
                    &mut profile.kernels,
                    &format!("<unknown kernel {kernel_id}>"),
                ),
            };
            let agent = match agents.get(&(g, agent_id)) {
                Some(&a) => a,
                None => {
                    profile.agents.push(AgentInfo::default());
                    let a = (profile.agents.len() - 1) as u32;
                    agents.insert((g, agent_id), a);
                    a
                }
            };
            let stream: Option<i64> = r.get(6).map_err(map_err)?;
            let start: i64 = r.get(7).map_err(map_err)?;
            let end: i64 = r.get(8).map_err(map_err)?;
            let event: Option<i64> = r.get(9).map_err(map_err)?;
            let process = (g << 16) | (pid as u32 & 0xffff);
            profile.dispatches.push(Dispatch {
                kernel,
                process,
                agent,
                queue: r.get::<_, i64>(5).map_err(map_err)? as u64,
                stream: stream.map(|s| s as u64),
                dispatch_id: r.get::<_, i64>(4).map_err(map_err)? as u64,
                start_ns: start.max(0) as u64,
                end_ns: end.max(0) as u64,
                counters: None,
            });
            if let (true, Some(e)) = (has_pmc, event) {
                by_event.insert((g, e), profile.dispatches.len() - 1);
            }
        }
    }

    // Counters: rocpd_pmc_event rows point at the dispatch's event_id; values of several
    // instances of one counter are summed, as rocprofv3's CSV writer does.
    {
        let mut pmc_names: HashMap<(u32, i64), String> = HashMap::new();
        let mut st = conn
            .prepare("SELECT guid, id, name FROM all_rocpd_info_pmc")
            .map_err(map_err)?;
        let mut rows = st.query([]).map_err(map_err)?;
        while let Some(r) = rows.next().map_err(map_err)? {
            let g = guid_idx(
                r.get_ref(0).map_err(map_err)?.as_str().unwrap_or(""),
                &mut guids,
            );
            pmc_names.insert((g, r.get(1).map_err(map_err)?), r.get(2).map_err(map_err)?);
        }
        drop(rows);
        if !pmc_names.is_empty() {
            let mut st = conn
                .prepare("SELECT guid, event_id, pmc_id, value FROM all_rocpd_pmc_event")
                .map_err(map_err)?;
            let mut rows = st.query([]).map_err(map_err)?;
            while let Some(r) = rows.next().map_err(map_err)? {
                let g = guid_idx(
                    r.get_ref(0).map_err(map_err)?.as_str().unwrap_or(""),
                    &mut guids,
                );
                let Some(event) = r.get::<_, Option<i64>>(1).map_err(map_err)? else {
                    continue;
                };
                let pmc: i64 = r.get(2).map_err(map_err)?;
                let value: f64 = r.get::<_, Option<f64>>(3).map_err(map_err)?.unwrap_or(0.0);
                let (Some(&d), Some(name)) = (by_event.get(&(g, event)), pmc_names.get(&(g, pmc)))
                else {
                    continue;
                };
                *profile.dispatches[d]
                    .counters
                    .get_or_insert_with(Default::default)
                    .entry(name.clone())
                    .or_insert(0.0) += value;
            }
        }
    }
    Ok(profile)
}
