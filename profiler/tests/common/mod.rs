//! Shared helpers of the profiler tests.
#![allow(dead_code)]

pub mod rocpd_fixture;

use profiler::stats::KernelStats;
use std::path::PathBuf;

pub fn testdata(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/profiler")
        .join(rel)
}

pub fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol
}

#[track_caller]
pub fn assert_close(a: f64, b: f64, tol: f64) {
    assert!(close(a, b, tol), "{a} != {b} (tolerance {tol})");
}

pub fn find<'a>(stats: &'a [KernelStats], name: &str) -> &'a KernelStats {
    stats.iter().find(|s| s.name == name).unwrap_or_else(|| {
        panic!(
            "no kernel {name:?} in {:?}",
            stats.iter().map(|s| &s.name).collect::<Vec<_>>()
        )
    })
}

/// Check one kernel's statistics against hand-computed values.
#[allow(clippy::too_many_arguments)]
#[track_caller]
pub fn check(
    s: &KernelStats,
    calls: u64,
    total: f64,
    mean: f64,
    median: Option<f64>,
    min: f64,
    max: f64,
    stddev: f64,
    percent: f64,
) {
    assert_eq!(s.calls, calls, "{}: calls", s.name);
    assert_close(s.total_ns, total, 1e-6);
    assert_close(s.mean_ns, mean, 1e-6);
    match (s.median_ns, median) {
        (Some(a), Some(b)) => assert_close(a, b, 1e-6),
        (a, b) => assert_eq!(a, b, "{}: median", s.name),
    }
    assert_close(s.min_ns, min, 1e-6);
    assert_close(s.max_ns, max, 1e-6);
    assert_close(s.stddev_ns, stddev, 1e-3);
    assert_close(s.percent, percent, 1e-3);
}
