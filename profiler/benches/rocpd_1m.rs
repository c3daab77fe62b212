//! Benchmark: parse and summarise a generated rocpd database with one million dispatches
//! (schema-3 layout, see tests/common/rocpd_fixture.rs), reported as a ratio to plain SQLite
//! baselines measured in the same run. Run with `cargo bench -p profiler --bench rocpd_1m`
//! (set `ROCPD_BENCH_N` for another size).
#![allow(clippy::print_stdout, clippy::print_stderr, clippy::exit)]

#[path = "../tests/common/rocpd_fixture.rs"]
mod rocpd_fixture;

use rocpd_fixture::{create, Db, Disp};
use std::time::{Duration, Instant};

fn best<T>(reps: usize, mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut best = Duration::MAX;
    let mut out = None;
    for _ in 0..reps {
        let t = Instant::now();
        let r = f();
        best = best.min(t.elapsed());
        out = Some(r);
    }
    (best, out.unwrap())
}

fn main() {
    let n: usize = std::env::var("ROCPD_BENCH_N")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bench_results.db");
    // 200 kernels (a realistic application has tens to hundreds), 4 streams, durations 1-50 us.
    let names: Vec<&'static str> = (0..200)
        .map(|i| &*Box::leak(format!("kernel_{i:03}(float*, float const*, int)").into_boxed_str()))
        .collect();
    let mut t = 1_000_000_000i64;
    let mut lcg = 0x2545F4914F6CDD1Du64;
    let disps: Vec<Disp> = (0..n)
        .map(|i| {
            lcg = lcg
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let dur = 1_000 + (lcg >> 33) as i64 % 49_000;
            let stream = (i % 4) as i64 + 1;
            let start = t;
            t += dur / 3 + 200;
            Disp {
                kernel: names[(lcg >> 40) as usize % names.len()],
                queue: stream,
                stream,
                start,
                end: start + dur,
                counters: Vec::new(),
            }
        })
        .collect();
    let t0 = Instant::now();
    create(&path, &Db::default(), &disps);
    let gen = t0.elapsed();
    let size = std::fs::metadata(&path).unwrap().len();
    drop(disps);

    let table = format!("rocpd_kernel_dispatch{}", Db::default().uuid);
    let conn = rusqlite::Connection::open(&path).unwrap();
    let (count_t, count) = best(3, || {
        conn.query_row(&format!("SELECT count(*) FROM `{table}`"), [], |r| {
            r.get::<_, i64>(0)
        })
        .unwrap()
    });
    assert_eq!(count as usize, n);
    let (scan_t, busy) = best(3, || {
        let mut st = conn
            .prepare(&format!(
                "SELECT kernel_id, stream_id, start, \"end\" FROM `{table}`"
            ))
            .unwrap();
        let mut rows = st.query([]).unwrap();
        let mut busy = 0i64;
        while let Some(r) = rows.next().unwrap() {
            let _k: i64 = r.get(0).unwrap();
            let _s: i64 = r.get(1).unwrap();
            busy += r.get::<_, i64>(3).unwrap() - r.get::<_, i64>(2).unwrap();
        }
        busy
    });
    let (load_t, profile) = best(3, || profiler::load(std::slice::from_ref(&path)).unwrap());
    let (stats_t, stats) = best(3, || profiler::stats::summarize(&profile));
    let (cp_t, cp) = best(1, || {
        profiler::critical::critical_path(&profile, &Default::default())
    });
    assert_eq!(profile.dispatches.len(), n);
    assert_eq!(stats.iter().map(|s| s.total_ns).sum::<f64>() as i64, busy);
    let parse_sum = load_t + stats_t;
    println!(
        "rocpd benchmark: {n} dispatches, {} kernels, database {:.1} MiB (generated in {:.2} s)",
        stats.len(),
        size as f64 / 1048576.0,
        gen.as_secs_f64()
    );
    println!(
        "  baseline SELECT count(*):                 {:>8.3} s",
        count_t.as_secs_f64()
    );
    println!(
        "  baseline full scan (4 columns, sqlite):   {:>8.3} s",
        scan_t.as_secs_f64()
    );
    println!(
        "  profiler::load (parse, names, agents):    {:>8.3} s",
        load_t.as_secs_f64()
    );
    println!(
        "  stats::summarize:                         {:>8.3} s",
        stats_t.as_secs_f64()
    );
    println!(
        "  parse + summarise:                        {:>8.3} s  = {:.2}x the full scan",
        parse_sum.as_secs_f64(),
        parse_sum.as_secs_f64() / scan_t.as_secs_f64()
    );
    println!(
        "  critical path ({} edges):            {:>8.3} s",
        cp.program_order_edges + cp.cross_lane_edges,
        cp_t.as_secs_f64()
    );
}
