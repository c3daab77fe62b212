//! Builds rocpd databases for tests and the benchmark: the table and column layout of
//! rocprofiler-sdk's rocpd schema 3 (`rocpd_tables.sql`/`rocpd_views.sql` in ROCm/rocm-systems),
//! written here from that layout: UUID-suffixed tables, unsuffixed views, `guid` on every row.
#![allow(dead_code)]

use rusqlite::{params, Connection};
use std::path::Path;

/// One kernel dispatch to insert.
#[derive(Clone, Debug)]
pub struct Disp {
    pub kernel: &'static str,
    pub queue: i64,
    pub stream: i64,
    pub start: i64,
    pub end: i64,
    /// (counter name, value) pairs recorded for this dispatch.
    pub counters: Vec<(&'static str, f64)>,
}

pub fn disp(kernel: &'static str, stream: i64, start: i64, end: i64) -> Disp {
    Disp {
        kernel,
        queue: stream,
        stream,
        start,
        end,
        counters: Vec::new(),
    }
}

/// Options of the generated database.
pub struct Db<'a> {
    pub uuid: &'a str,
    pub guid: &'a str,
    pub schema_version: &'a str,
    pub arch: &'a str,
    pub product: &'a str,
    /// Create the unsuffixed views as rocprofv3 does.
    pub views: bool,
}

impl Default for Db<'_> {
    fn default() -> Self {
        Db {
            uuid: "_0198c3a1_7e2b_7c41_9a55_1f2e3d4c5b6a",
            guid: "0198c3a1-7e2b-7c41-9a55-1f2e3d4c5b6a",
            schema_version: "3",
            arch: "gfx90a",
            product: "AMD Instinct MI210",
            views: true,
        }
    }
}

/// The tables (name, columns) of rocpd schema 3 that the writer fills for a kernel trace with
/// counters. `{u}` is the UUID suffix, `{g}` the default guid.
const TABLES: &[(&str, &str)] = &[
    (
        "rocpd_metadata",
        r#""id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, "tag" TEXT NOT NULL, "value" TEXT NOT NULL"#,
    ),
    (
        "rocpd_string",
        r#""id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, "guid" TEXT DEFAULT '{g}' NOT NULL, "string" TEXT NOT NULL UNIQUE ON CONFLICT ABORT"#,
    ),
    (
        "rocpd_info_node",
        r#""id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, "guid" TEXT DEFAULT '{g}' NOT NULL, "hash" BIGINT NOT NULL UNIQUE, "machine_id" TEXT NOT NULL UNIQUE, "system_name" TEXT, "hostname" TEXT, "release" TEXT, "version" TEXT, "hardware_name" TEXT, "domain_name" TEXT"#,
    ),
    (
        "rocpd_info_process",
        r#""id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, "guid" TEXT DEFAULT '{g}' NOT NULL, "nid" INTEGER NOT NULL, "ppid" INTEGER, "pid" INTEGER NOT NULL, "init" BIGINT, "fini" BIGINT, "start" BIGINT, "end" BIGINT, "command" TEXT, "environment" JSONB DEFAULT '{}' NOT NULL, "extdata" JSONB DEFAULT '{}' NOT NULL"#,
    ),
    (
        "rocpd_info_thread",
        r#""id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, "guid" TEXT DEFAULT '{g}' NOT NULL, "nid" INTEGER NOT NULL, "ppid" INTEGER, "pid" INTEGER NOT NULL, "tid" INTEGER NOT NULL, "name" TEXT, "start" BIGINT, "end" BIGINT, "extdata" JSONB DEFAULT '{}' NOT NULL"#,
    ),
    (
        "rocpd_info_agent",
        r#""id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, "guid" TEXT DEFAULT '{g}' NOT NULL, "nid" INTEGER NOT NULL, "pid" INTEGER NOT NULL, "type" TEXT CHECK ("type" IN ('CPU', 'GPU')), "absolute_index" INTEGER, "logical_index" INTEGER, "type_index" INTEGER, "uuid" INTEGER, "name" TEXT, "model_name" TEXT, "vendor_name" TEXT, "product_name" TEXT, "user_name" TEXT, "extdata" JSONB DEFAULT '{}' NOT NULL"#,
    ),
    (
        "rocpd_info_queue",
        r#""id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, "guid" TEXT DEFAULT '{g}' NOT NULL, "nid" INTEGER NOT NULL, "pid" INTEGER NOT NULL, "name" TEXT, "extdata" JSONB DEFAULT '{}' NOT NULL"#,
    ),
    (
        "rocpd_info_stream",
        r#""id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, "guid" TEXT DEFAULT '{g}' NOT NULL, "nid" INTEGER NOT NULL, "pid" INTEGER NOT NULL, "name" TEXT, "extdata" JSONB DEFAULT '{}' NOT NULL"#,
    ),
    (
        "rocpd_info_pmc",
        r#""id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, "guid" TEXT DEFAULT '{g}' NOT NULL, "nid" INTEGER NOT NULL, "pid" INTEGER NOT NULL, "agent_id" INTEGER, "target_arch" TEXT CHECK ("target_arch" IN ('CPU', 'GPU')), "event_code" INT, "instance_id" INTEGER, "name" TEXT NOT NULL, "symbol" TEXT NOT NULL, "description" TEXT, "long_description" TEXT DEFAULT '', "component" TEXT, "units" TEXT DEFAULT '', "value_type" TEXT CHECK ("value_type" IN ('ABS', 'ACCUM', 'RELATIVE')), "block" TEXT, "expression" TEXT, "is_constant" INTEGER, "is_derived" INTEGER, "extdata" JSONB DEFAULT '{}' NOT NULL"#,
    ),
    (
        "rocpd_info_code_object",
        r#""id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, "guid" TEXT DEFAULT '{g}' NOT NULL, "nid" INTEGER NOT NULL, "pid" INTEGER NOT NULL, "agent_id" INTEGER, "uri" TEXT, "load_base" BIGINT, "load_size" BIGINT, "load_delta" BIGINT, "storage_type" TEXT CHECK ("storage_type" IN ('FILE', 'MEMORY')), "extdata" JSONB DEFAULT '{}' NOT NULL"#,
    ),
    (
        "rocpd_info_kernel_symbol",
        r#""id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, "guid" TEXT DEFAULT '{g}' NOT NULL, "nid" INTEGER NOT NULL, "pid" INTEGER NOT NULL, "code_object_id" INTEGER NOT NULL, "kernel_name" TEXT, "display_name" TEXT, "kernel_object" INTEGER, "kernarg_segment_size" INTEGER, "kernarg_segment_alignment" INTEGER, "group_segment_size" INTEGER, "private_segment_size" INTEGER, "sgpr_count" INTEGER, "arch_vgpr_count" INTEGER, "accum_vgpr_count" INTEGER, "extdata" JSONB DEFAULT '{}' NOT NULL"#,
    ),
    (
        "rocpd_event",
        r#""id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, "guid" TEXT DEFAULT '{g}' NOT NULL, "category_id" INTEGER, "stack_id" INTEGER, "parent_stack_id" INTEGER, "correlation_id" INTEGER, "call_stack" JSONB DEFAULT '{}' NOT NULL, "line_info" JSONB DEFAULT '{}' NOT NULL, "extdata" JSONB DEFAULT '{}' NOT NULL"#,
    ),
    (
        "rocpd_pmc_event",
        r#""id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, "guid" TEXT DEFAULT '{g}' NOT NULL, "event_id" INTEGER, "pmc_id" INTEGER NOT NULL, "value" REAL DEFAULT 0.0, "extdata" JSONB DEFAULT '{}'"#,
    ),
    (
        "rocpd_kernel_dispatch",
        r#""id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, "guid" TEXT DEFAULT '{g}' NOT NULL, "nid" INTEGER NOT NULL, "pid" INTEGER NOT NULL, "tid" INTEGER, "agent_id" INTEGER NOT NULL, "kernel_id" INTEGER NOT NULL, "dispatch_id" INTEGER NOT NULL, "queue_id" INTEGER NOT NULL, "stream_id" INTEGER NOT NULL, "start" BIGINT NOT NULL, "end" BIGINT NOT NULL, "private_segment_size" INTEGER, "group_segment_size" INTEGER, "workgroup_size_x" INTEGER NOT NULL, "workgroup_size_y" INTEGER NOT NULL, "workgroup_size_z" INTEGER NOT NULL, "grid_size_x" INTEGER NOT NULL, "grid_size_y" INTEGER NOT NULL, "grid_size_z" INTEGER NOT NULL, "region_name_id" INTEGER, "event_id" INTEGER, "extdata" JSONB DEFAULT '{}' NOT NULL"#,
    ),
];

/// Create a rocpd database at `path` holding `dispatches` (in one transaction).
pub fn create(path: &Path, db: &Db, dispatches: &[Disp]) {
    let mut conn = Connection::open(path).unwrap();
    conn.execute_batch("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;")
        .unwrap();
    let tx = conn.transaction().unwrap();
    let u = db.uuid;
    for (t, cols) in TABLES {
        tx.execute_batch(&format!(
            "CREATE TABLE `{t}{u}` ({});",
            cols.replace("{g}", db.guid)
        ))
        .unwrap();
        if db.views {
            tx.execute_batch(&format!("CREATE VIEW `{t}` AS SELECT * FROM `{t}{u}`;"))
                .unwrap();
        }
    }
    tx.execute(&format!("INSERT INTO `rocpd_metadata{u}` (tag, value) VALUES ('schema_version', ?1), ('uuid', ?2), ('guid', ?3)"), params![db.schema_version, u, db.guid]).unwrap();
    tx.execute(&format!("INSERT INTO `rocpd_info_node{u}` (id, hash, machine_id, hostname) VALUES (1, 42, 'f00dfeed', 'node01')"), []).unwrap();
    tx.execute(&format!("INSERT INTO `rocpd_info_process{u}` (id, nid, ppid, pid, command) VALUES (1, 1, 1, 4711, './app')"), []).unwrap();
    tx.execute(&format!("INSERT INTO `rocpd_info_thread{u}` (id, nid, ppid, pid, tid) VALUES (1, 1, 1, 1, 4711)"), []).unwrap();
    tx.execute(&format!("INSERT INTO `rocpd_info_agent{u}` (id, nid, pid, type, absolute_index, logical_index, type_index, name, product_name) VALUES (1, 1, 1, 'CPU', 0, 0, 0, 'AMD EPYC 7713', 'AMD EPYC 7713'), (2, 1, 1, 'GPU', 1, 1, 0, ?1, ?2)"), params![db.arch, db.product]).unwrap();
    tx.execute(&format!("INSERT INTO `rocpd_info_code_object{u}` (id, nid, pid, agent_id, uri, storage_type) VALUES (1, 1, 1, 2, 'file:///app#offset=8192&size=4096', 'FILE')"), []).unwrap();
    let mut kernels: Vec<&str> = Vec::new();
    let mut streams: Vec<i64> = Vec::new();
    let mut pmcs: Vec<&str> = Vec::new();
    for d in dispatches {
        if !kernels.contains(&d.kernel) {
            kernels.push(d.kernel);
        }
        for s in [d.stream, d.queue] {
            if !streams.contains(&s) {
                streams.push(s);
            }
        }
        for (c, _) in &d.counters {
            if !pmcs.contains(c) {
                pmcs.push(c);
            }
        }
    }
    for (i, k) in kernels.iter().enumerate() {
        // kernel_name is the symbol (`.kd`), display_name what rocprofv3 shows.
        tx.execute(
            &format!("INSERT INTO `rocpd_info_kernel_symbol{u}` (id, nid, pid, code_object_id, kernel_name, display_name, kernel_object, group_segment_size, private_segment_size, sgpr_count, arch_vgpr_count, accum_vgpr_count) VALUES (?1, 1, 1, 1, ?2, ?3, ?4, 0, 0, 16, 8, 0)"),
            params![i as i64 + 1, format!("{k}.kd"), k, 0x7f00_0000_i64 + i as i64 * 64],
        )
        .unwrap();
    }
    for s in &streams {
        tx.execute(
            &format!(
                "INSERT INTO `rocpd_info_queue{u}` (id, nid, pid, name) VALUES (?1, 1, 1, ?2)"
            ),
            params![s, format!("queue {s}")],
        )
        .unwrap();
        tx.execute(
            &format!(
                "INSERT INTO `rocpd_info_stream{u}` (id, nid, pid, name) VALUES (?1, 1, 1, ?2)"
            ),
            params![s, format!("stream {s}")],
        )
        .unwrap();
    }
    for (i, c) in pmcs.iter().enumerate() {
        tx.execute(&format!("INSERT INTO `rocpd_info_pmc{u}` (id, nid, pid, agent_id, target_arch, name, symbol, block, is_constant, is_derived) VALUES (?1, 1, 1, 2, 'GPU', ?2, ?2, ?3, 0, 0)"), params![i as i64 + 1, c, c.split('_').next().unwrap()]).unwrap();
    }
    tx.execute(
        &format!("INSERT INTO `rocpd_string{u}` (id, string) VALUES (1, 'KERNEL_DISPATCH')"),
        [],
    )
    .unwrap();
    {
        let mut ev = tx
            .prepare(&format!(
                "INSERT INTO `rocpd_event{u}` (id, category_id, correlation_id) VALUES (?1, 1, ?1)"
            ))
            .unwrap();
        let mut kd = tx
            .prepare(&format!(
                "INSERT INTO `rocpd_kernel_dispatch{u}` (nid, pid, tid, agent_id, kernel_id, dispatch_id, queue_id, stream_id, start, \"end\", private_segment_size, group_segment_size, workgroup_size_x, workgroup_size_y, workgroup_size_z, grid_size_x, grid_size_y, grid_size_z, region_name_id, event_id) VALUES (1, 1, 1, 2, ?1, ?2, ?3, ?4, ?5, ?6, 0, 0, 256, 1, 1, 1048576, 1, 1, 1, ?2)"
            ))
            .unwrap();
        let mut pe = tx
            .prepare(&format!(
                "INSERT INTO `rocpd_pmc_event{u}` (event_id, pmc_id, value) VALUES (?1, ?2, ?3)"
            ))
            .unwrap();
        for (i, d) in dispatches.iter().enumerate() {
            let id = i as i64 + 1;
            let k = kernels.iter().position(|k| *k == d.kernel).unwrap() as i64 + 1;
            ev.execute(params![id]).unwrap();
            kd.execute(params![k, id, d.queue, d.stream, d.start, d.end])
                .unwrap();
            for (c, v) in &d.counters {
                let p = pmcs.iter().position(|x| x == c).unwrap() as i64 + 1;
                pe.execute(params![id, p, v]).unwrap();
            }
        }
    }
    tx.commit().unwrap();
}
