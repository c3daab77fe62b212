//! Property tests: statistics against a naive recomputation, and critical-path invariants on
//! random multi-stream timelines.

use profiler::critical::{critical_path, Options};
use profiler::{Dispatch, KernelInfo, PrecomputedStats, Profile, Source};
use proptest::prelude::*;

fn timeline(lanes: &[Vec<(u8, u32, u32)>]) -> Profile {
    // Each lane: (kernel, gap before, duration) in order; lanes start at 0.
    let mut p = Profile::new(Source::Rocpd, "prop");
    for k in 0..4 {
        p.kernels.push(KernelInfo {
            name: format!("k{k}"),
            runtime: false,
        });
    }
    let mut id = 0;
    for (s, lane) in lanes.iter().enumerate() {
        let mut t = 0u64;
        for &(k, gap, dur) in lane {
            t += gap as u64;
            id += 1;
            p.dispatches.push(Dispatch {
                kernel: (k % 4) as u32,
                process: 0,
                agent: 0,
                queue: 0,
                stream: Some(s as u64),
                dispatch_id: id,
                start_ns: t,
                end_ns: t + dur as u64,
                counters: None,
            });
            t += dur as u64;
        }
    }
    p
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn stats_match_naive(durs in proptest::collection::vec(1u32..1_000_000, 1..60)) {
        let p = timeline(&[durs.iter().map(|&d| (0u8, 10u32, d)).collect()]);
        let s = &profiler::stats::summarize(&p)[0];
        let n = durs.len() as f64;
        let mean = durs.iter().map(|&d| d as f64).sum::<f64>() / n;
        let mut v = durs.clone();
        v.sort();
        let median = if v.len() % 2 == 1 { v[v.len() / 2] as f64 } else { (v[v.len() / 2 - 1] as f64 + v[v.len() / 2] as f64) / 2.0 };
        let sd = if durs.len() < 2 { 0.0 } else { (durs.iter().map(|&d| (d as f64 - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt() };
        prop_assert!((s.mean_ns - mean).abs() < 1e-6 * mean.max(1.0));
        prop_assert_eq!(s.median_ns, Some(median));
        prop_assert!((s.stddev_ns - sd).abs() <= 1e-6 * sd.max(1.0));
        prop_assert!((s.percent - 100.0).abs() < 1e-9);
        // rocprofv3's stats file for the same data (sum, mean, sample sd) reads back the same.
        let mut q = Profile::new(Source::Rocprofv3Csv, "prop");
        q.precomputed.push(PrecomputedStats { name: "k0".into(), calls: durs.len() as u64, total_ns: s.total_ns, mean_ns: s.mean_ns, min_ns: s.min_ns, max_ns: s.max_ns, stddev_ns: s.stddev_ns });
        let t = &profiler::stats::summarize(&q)[0];
        prop_assert!((t.stddev_ns - s.stddev_ns).abs() <= 1e-3 * s.stddev_ns.max(1.0), "{} vs {}", t.stddev_ns, s.stddev_ns);
    }

    #[test]
    fn critical_path_bounds(lanes in proptest::collection::vec(proptest::collection::vec((0u8..4, 0u32..20_000, 1u32..50_000), 1..12), 1..4)) {
        let p = timeline(&lanes);
        let cp = critical_path(&p, &Options::default());
        let busy: u64 = p.dispatches.iter().map(|d| d.duration_ns()).sum();
        let lane_max = lanes.iter().map(|l| l.iter().map(|&(_, _, d)| d as u64).sum::<u64>()).max().unwrap();
        // At least the busiest stream, at most all GPU time, and never longer than the span
        // plus nothing: the path is a chain of non-overlapping dispatches.
        prop_assert!(cp.length_ns >= lane_max);
        prop_assert!(cp.length_ns <= busy);
        prop_assert!(cp.length_ns <= cp.span_ns);
        // The path is a time-ordered chain whose durations add up to its length.
        let sum: u64 = cp.path.iter().map(|&i| p.dispatches[i].duration_ns()).sum();
        prop_assert_eq!(sum, cp.length_ns);
        for w in cp.path.windows(2) {
            prop_assert!(p.dispatches[w[0]].end_ns <= p.dispatches[w[1]].start_ns);
        }
        for &i in &cp.path {
            prop_assert_eq!(cp.slack_ns[i], 0);
        }
    }
}
