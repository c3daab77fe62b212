//! rocpd databases built in the test with rusqlite, following rocpd schema 3's layout:
//! UUID-suffixed tables, views, schema version, several databases merged via ATTACH.

mod common;
use common::rocpd_fixture::{create, disp, Db, Disp};
use common::*;
use profiler::Source;

fn sample() -> Vec<Disp> {
    vec![
        disp("gemm_kernel", 1, 1_000, 11_000),              // 10000
        disp("_Z9transposePfS_ii", 1, 12_000, 14_000),      // 2000 (mangled display name)
        disp("gemm_kernel", 2, 12_500, 20_500),             // 8000
        disp("__amd_rocclr_copyBuffer", 1, 21_000, 21_500), // 500
        disp("gemm_kernel", 1, 22_000, 31_000),             // 9000
        disp("_Z9transposePfS_ii", 2, 31_002, 34_002),      // 3000
    ]
}

/// A dispatch whose end precedes its start is left out of the statistics and counted (it was
/// kept as 0 ns, which pulled the mean down and the deviation up).
#[test]
fn inverted_dispatches_are_left_out() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("run_results.db");
    let mut ds = sample();
    ds.push(disp("gemm_kernel", 1, 40_000, 39_000));
    create(&db, &Db::default(), &ds);
    let p = profiler::load(&[db]).unwrap();
    assert_eq!((p.dispatches.len(), p.inverted_dispatches), (6, 1));
    let s = profiler::stats::summarize(&p);
    check(
        find(&s, "gemm_kernel"),
        3,
        27000.0,
        9000.0,
        Some(9000.0),
        8000.0,
        10000.0,
        1000.0,
        83.0769,
    );
}

#[test]
fn single_database() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("run_results.db");
    create(&db, &Db::default(), &sample());
    let p = profiler::load(&[db]).unwrap();
    assert_eq!(p.source, Source::Rocpd);
    assert_eq!(p.format, "rocpd-3");
    assert_eq!(p.arch(), Some("gfx90a"));
    assert_eq!(p.dispatches.len(), 6);
    let s = profiler::stats::summarize(&p);
    // Grand total 10000+8000+9000 + 2000+3000 + 500 = 32500.
    // gemm: 10000, 8000, 9000 -> total 27000, mean 9000, median 9000,
    //   sd sqrt((1000^2 + 1000^2 + 0) / 2) = 1000; 27000/32500 = 83.0769 %.
    check(
        find(&s, "gemm_kernel"),
        3,
        27000.0,
        9000.0,
        Some(9000.0),
        8000.0,
        10000.0,
        1000.0,
        83.0769,
    );
    // transpose (demangled): 2000, 3000 -> 5000, mean = median = 2500, sd 707.1068, 15.3846 %.
    check(
        find(&s, "transpose(float*, float*, int, int)"),
        2,
        5000.0,
        2500.0,
        Some(2500.0),
        2000.0,
        3000.0,
        707.1068,
        15.3846,
    );
    let rt = find(&s, "__amd_rocclr_copyBuffer");
    check(rt, 1, 500.0, 500.0, Some(500.0), 500.0, 500.0, 0.0, 1.5385);
    assert!(rt.runtime && rt.rank.is_none());
    assert_eq!(p.dispatches[2].stream, Some(2));
}

/// A database whose tables carry no UUID suffix is read through the plain names.
#[test]
fn unsuffixed_tables() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("flat.db");
    create(
        &db,
        &Db {
            uuid: "",
            views: false,
            ..Db::default()
        },
        &sample(),
    );
    let s = profiler::stats::summarize(&profiler::load(&[db]).unwrap());
    assert_eq!(find(&s, "gemm_kernel").calls, 3);
}

/// Two processes' databases (distinct UUIDs and guids) read as one run.
#[test]
fn merged_databases() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("rank0_results.db");
    let b = dir.path().join("rank1_results.db");
    create(&a, &Db::default(), &sample());
    let other = Db {
        uuid: "_0198c3a1_9999_7c41_9a55_aaaaaaaaaaaa",
        guid: "0198c3a1-9999-7c41-9a55-aaaaaaaaaaaa",
        ..Db::default()
    };
    create(
        &b,
        &other,
        &[
            disp("gemm_kernel", 1, 5_000, 17_000),
            disp("reduce_kernel", 1, 18_000, 19_000),
        ],
    );
    let p = profiler::load(&[a.clone(), b.clone()]).unwrap();
    assert_eq!(p.dispatches.len(), 8);
    let s = profiler::stats::summarize(&p);
    // gemm: 10000, 8000, 9000, 12000 -> total 39000, mean 9750, median (9000+10000)/2 = 9500,
    //   deviations 250, -1750, -750, 2250 -> 62500+3062500+562500+5062500 = 8750000 / 3
    //   = 2916666.67 -> sd 1707.8251. Grand total 32500 + 12000 + 1000 = 45500 -> 85.7143 %.
    check(
        find(&s, "gemm_kernel"),
        4,
        39000.0,
        9750.0,
        Some(9500.0),
        8000.0,
        12000.0,
        1707.8251,
        85.7143,
    );
    check(
        find(&s, "reduce_kernel"),
        1,
        1000.0,
        1000.0,
        Some(1000.0),
        1000.0,
        1000.0,
        0.0,
        2.1978,
    );
    // The two processes' stream 1 are different lanes.
    let lanes: std::collections::HashSet<_> = p.dispatches.iter().map(|d| d.lane()).collect();
    assert_eq!(lanes.len(), 3);
    // The directory holding both is read the same way.
    let q = profiler::load(&[dir.path().to_path_buf()]).unwrap();
    assert_eq!(q.dispatches.len(), 8);
}

#[test]
fn schema_version_checked() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("old.db");
    create(
        &db,
        &Db {
            schema_version: "2",
            ..Db::default()
        },
        &sample(),
    );
    let e = profiler::load(&[db]).unwrap_err();
    assert!(
        matches!(e, profiler::Error::SchemaVersion { ref version, .. } if version == "2"),
        "{e}"
    );
    // A later 3.x (e.g. 3.0.5) is accepted.
    let db = dir.path().join("new.db");
    create(
        &db,
        &Db {
            schema_version: "3.0.5",
            ..Db::default()
        },
        &sample(),
    );
    assert_eq!(profiler::load(&[db]).unwrap().format, "rocpd-3.0.5");
}

#[test]
fn foreign_database_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("other.db");
    let c = rusqlite::Connection::open(&db).unwrap();
    c.execute_batch(
        "CREATE TABLE customers (id INTEGER, name TEXT); INSERT INTO customers VALUES (1, 'x');",
    )
    .unwrap();
    drop(c);
    let e = profiler::load(&[db]).unwrap_err();
    assert!(
        matches!(e, profiler::Error::NotRocpd { .. }) && e.to_string().contains("rocpd_metadata"),
        "{e}"
    );
}

/// `rocpd::read` on paths that are no database says what they are.
#[test]
fn non_database_paths_refused_with_their_reason() {
    let dir = tempfile::tempdir().unwrap();
    let e = profiler::rocpd::read(&[dir.path().to_path_buf()]).unwrap_err();
    assert!(e.to_string().contains("a directory"), "{e}");
    let missing = dir.path().join("missing_results.db");
    let e = profiler::rocpd::read(&[missing]).unwrap_err();
    assert!(
        matches!(&e, profiler::Error::Io { error, .. } if error.kind() == std::io::ErrorKind::NotFound),
        "{e}"
    );
    let short = dir.path().join("short.db");
    std::fs::write(&short, b"SQLite").unwrap();
    let e = profiler::rocpd::read(&[short]).unwrap_err();
    assert!(e.to_string().contains("not an SQLite database"), "{e}");
}

/// Counters stored in rocpd_pmc_event, gfx942 names: the MI300 byte formula and MI300X peaks.
#[test]
fn counters_and_mi300x_roofline() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("run_results.db");
    let mut d = disp("gemm_kernel", 1, 0, 100_000);
    d.counters = vec![
        ("SQ_INSTS_VALU_MFMA_MOPS_F16", 1_000_000.0),
        ("SQ_INSTS_VALU_FMA_F32", 10_000.0),
        ("TCC_EA0_RDREQ", 100_000.0),
        ("TCC_EA0_RDREQ_32B", 10_000.0),
        ("TCC_BUBBLE", 5_000.0),
        ("TCC_EA0_WRREQ", 50_000.0),
        ("TCC_EA0_WRREQ_64B", 40_000.0),
    ];
    create(
        &db,
        &Db {
            arch: "gfx942",
            product: "AMD Instinct MI300X",
            ..Db::default()
        },
        &[d],
    );
    let p = profiler::load(&[db]).unwrap();
    assert_eq!(p.arch(), Some("gfx942"));
    let peaks = profiler::roofline::peaks_for(p.arch(), p.product()).unwrap();
    assert_eq!(peaks.gpu, "mi300x");
    let r = profiler::roofline::roofline(&p, peaks);
    let k = &r.kernels[0];
    // FLOPs: 512 * 1e6 (MFMA F16) + 64 * 2 * 1e4 (FMA F32) = 512e6 + 1.28e6 = 513.28e6.
    assert_close(k.flops, 513_280_000.0, 1e-3);
    // Bytes: 5000*128 + 10000*32 + (100000 - 5000 - 10000)*64 + (50000 - 40000)*32 + 40000*64
    //      = 640000 + 320000 + 5440000 + 320000 + 2560000 = 9280000.
    assert_close(k.hbm_bytes, 9_280_000.0, 1e-6);
    // AI = 513.28e6 / 9.28e6 = 55.3103; time 100 us -> 5132.8 GFLOP/s, 92.8 GB/s.
    assert_close(k.arithmetic_intensity, 55.310345, 1e-5);
    assert_close(k.gflops, 5132.8, 1e-6);
    assert_close(k.gbps, 92.8, 1e-9);
    // Matrix FP16 dominates: ridge 1307400 / 5300 = 246.68 FLOP/B > 55.3 -> memory-bound.
    assert_eq!(k.ceiling, "matrix-fp16");
    assert_close(k.ridge_ai, 246.679245, 1e-5);
    assert_eq!(k.bound, "memory");
}

/// A rocprofv3 `-f rocpd csv` directory holds both: the database is read.
#[test]
fn directory_prefers_database() {
    let dir = tempfile::tempdir().unwrap();
    create(
        &dir.path().join("run_results.db"),
        &Db::default(),
        &sample(),
    );
    std::fs::copy(
        testdata("rocprofv3-1.0/node01/4711/run_kernel_trace.csv"),
        dir.path().join("run_kernel_trace.csv"),
    )
    .unwrap();
    let p = profiler::load(&[dir.path().to_path_buf()]).unwrap();
    assert_eq!(p.source, Source::Rocpd);
    assert_eq!(p.dispatches.len(), 6);
}

/// A database whose dispatch table is a view that never ends (a recursive CTE) is stopped at the
/// time limit with an error that says so, instead of hanging `profile --from`.
#[test]
fn a_recursive_dispatch_view_is_stopped_at_the_time_limit() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("run_results.db");
    let d = Db::default();
    create(&db, &d, &sample());
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch(&format!(
        "DROP VIEW IF EXISTS rocpd_kernel_dispatch;
         DROP TABLE `rocpd_kernel_dispatch{u}`;
         CREATE VIEW rocpd_kernel_dispatch AS
           WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r)
           SELECT '{g}' AS guid, 1 AS pid, 1 AS agent_id, 1 AS kernel_id, n AS dispatch_id,
                  1 AS queue_id, 1 AS stream_id, n AS start, n + 1 AS \"end\", NULL AS event_id
           FROM r;",
        u = d.uuid,
        g = d.guid
    ))
    .unwrap();
    drop(conn);
    let t0 = std::time::Instant::now();
    let e = profiler::rocpd::read_with_limit(
        std::slice::from_ref(&db),
        std::time::Duration::from_secs(1),
    )
    .unwrap_err();
    assert!(
        t0.elapsed() < std::time::Duration::from_secs(10),
        "{:?}",
        t0.elapsed()
    );
    assert!(
        matches!(e, profiler::Error::QueryTimeout { secs: 1, .. }),
        "{e:?}"
    );
    assert_eq!(
        e.to_string(),
        format!(
            "{}: reading the database took longer than 1 s and was stopped (a view that never ends?)",
            db.display()
        )
    );
    // A normal database is read well within the same limit.
    let ok = dir.path().join("ok_results.db");
    create(&ok, &Db::default(), &sample());
    let p = profiler::rocpd::read_with_limit(&[ok], std::time::Duration::from_secs(1)).unwrap();
    assert_eq!(p.dispatches.len(), 6);
}

/// When every dispatch ends before it starts, the error says so (it said "no dispatches").
#[test]
fn all_inverted_dispatches_are_reported_as_such() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("run_results.db");
    create(
        &db,
        &Db::default(),
        &[
            disp("gemm_kernel", 1, 40_000, 39_000),
            disp("gemm_kernel", 1, 50_000, 10),
        ],
    );
    let e = profiler::load(std::slice::from_ref(&db)).unwrap_err();
    assert!(
        matches!(e, profiler::Error::AllInverted { count: 2, .. }),
        "{e:?}"
    );
    assert_eq!(
        e.to_string(),
        format!(
            "every kernel dispatch in {} ends before it starts (2 with end < start): the timestamps are unusable",
            db.display()
        )
    );
}
