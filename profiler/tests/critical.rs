//! Critical-path cases with hand-computed lengths, shares and slacks.

use profiler::critical::{critical_path, Options};
use profiler::{Dispatch, KernelInfo, Profile, Source};

/// Build a profile from (kernel name, stream, start, end).
fn profile(ds: &[(&str, u64, u64, u64)]) -> Profile {
    let mut p = Profile::new(Source::Rocprofv3Csv, "test");
    for (i, &(name, stream, start, end)) in ds.iter().enumerate() {
        let k = match p.kernels.iter().position(|k| k.name == name) {
            Some(k) => k,
            None => {
                p.kernels.push(KernelInfo {
                    name: name.to_string(),
                    runtime: name.starts_with("__amd_rocclr_"),
                });
                p.kernels.len() - 1
            }
        };
        p.dispatches.push(Dispatch {
            kernel: k as u32,
            process: 0,
            agent: 0,
            queue: 1,
            stream: Some(stream),
            dispatch_id: i as u64 + 1,
            start_ns: start,
            end_ns: end,
            counters: None,
        });
    }
    p
}

fn share<'a>(
    cp: &'a profiler::critical::CriticalPath,
    name: &str,
) -> &'a profiler::critical::KernelShare {
    cp.kernels.iter().find(|k| k.name == name).unwrap()
}

#[test]
fn serial_stream() {
    // One stream: A (100) -> B (200) -> C (50). Everything is on the path: 350 ns, no slack.
    let p = profile(&[("A", 1, 0, 100), ("B", 1, 110, 310), ("C", 1, 320, 370)]);
    let cp = critical_path(&p, &Options::default());
    assert_eq!(cp.length_ns, 350);
    assert_eq!(cp.span_ns, 370);
    assert_eq!(cp.path, vec![0, 1, 2]);
    assert_eq!(cp.program_order_edges, 2);
    assert_eq!(cp.cross_lane_edges, 0);
    assert_eq!(cp.slack_ns, vec![0, 0, 0]);
    // Shares: 100/350 = 28.571 %, 200/350 = 57.143 %, 50/350 = 14.286 %.
    assert!((share(&cp, "A").share - 28.5714).abs() < 1e-3);
    assert!((share(&cp, "B").share - 57.1429).abs() < 1e-3);
    assert!((share(&cp, "C").share - 14.2857).abs() < 1e-3);
    assert_eq!(cp.kernels[0].name, "B");
    assert_eq!(cp.kernels[0].rank, Some(1));
}

#[test]
fn parallel_streams() {
    // Stream 1: A 0-100, B 100-300 (300 ns busy). Stream 2: C 0-150, D 160-210 (200 ns).
    // D starts 60 ns after A ended, but stream 2 was still busy with C until 150, so D was
    // not waiting for A: no cross edge. Critical path = stream 1 = 300 ns;
    // C and D have slack 300 - (150 + 50) = 100 ns.
    let p = profile(&[
        ("A", 1, 0, 100),
        ("B", 1, 100, 300),
        ("C", 2, 0, 150),
        ("D", 2, 160, 210),
    ]);
    let cp = critical_path(&p, &Options::default());
    assert_eq!(cp.cross_lane_edges, 0);
    assert_eq!(cp.program_order_edges, 2);
    assert_eq!(cp.length_ns, 300);
    assert_eq!(cp.path, vec![0, 1]);
    assert_eq!(cp.slack_ns, vec![0, 0, 100, 100]);
    assert_eq!(share(&cp, "C").slack_ns, 100);
    assert_eq!(share(&cp, "C").on_path_ns, 0);
    assert!((share(&cp, "B").share - 66.6667).abs() < 1e-3);
}

#[test]
fn cross_stream_wait() {
    // Stream 1: A 0-1000, D 1100-1200. Stream 2: B 0-300, then C 1002-1502.
    // Stream 2 idles from 300 and C starts 2 ns after A ends: C waited for A (edge A -> C).
    // Paths: A+C = 1500, A+D = 1100, B+C = 800 -> critical path [A, C] = 1500 ns.
    // Slack: B = 1500 - 800 = 700, D = 1500 - 1100 = 400.
    let p = profile(&[
        ("A", 1, 0, 1000),
        ("B", 2, 0, 300),
        ("C", 2, 1002, 1502),
        ("D", 1, 1100, 1200),
    ]);
    let cp = critical_path(&p, &Options::default());
    assert_eq!(cp.cross_lane_edges, 1);
    assert_eq!(cp.length_ns, 1500);
    assert_eq!(cp.path, vec![0, 2]);
    assert_eq!(cp.slack_ns, vec![0, 700, 0, 400]);
    // A: 1000/1500 = 66.667 %, C: 33.333 %.
    assert!((share(&cp, "A").share - 66.6667).abs() < 1e-3);
    assert!((share(&cp, "C").share - 33.3333).abs() < 1e-3);
    assert_eq!(share(&cp, "D").slack_ns, 400);
    // Without the inferred wait (gap 0 ns), stream 1 alone would be critical: 1100 ns.
    let cp0 = critical_path(
        &p,
        &Options {
            wait_gap_ns: 0,
            extra: vec![],
        },
    );
    assert_eq!(cp0.cross_lane_edges, 0);
    assert_eq!(cp0.length_ns, 1100);
}

#[test]
fn busy_stream_is_not_a_wait() {
    // As above, but B runs until 1001 (after A ended): C follows B on its own stream, so no
    // wait on A is inferred. D starts 5999 ns after B's end, beyond the 5000 ns gap, so no wait
    // on B either. Paths: A+D = 1100, B+C = 1001+500 = 1501.
    let p = profile(&[
        ("A", 1, 0, 1000),
        ("B", 2, 0, 1001),
        ("C", 2, 1002, 1502),
        ("D", 1, 7000, 7100),
    ]);
    let cp = critical_path(&p, &Options::default());
    assert_eq!(cp.cross_lane_edges, 0);
    assert_eq!(cp.length_ns, 1501);
    assert_eq!(cp.path, vec![1, 2]);
    // A + D = 1100 -> slack 401.
    assert_eq!(cp.slack_ns[0], 401);
}

#[test]
fn explicit_dependency_and_runtime_kernels() {
    // An explicit edge D -> E across streams (e.g. a known event wait), far apart in time.
    let p = profile(&[
        ("D", 1, 0, 100),
        ("__amd_rocclr_fillBuffer", 1, 100, 400),
        ("E", 2, 50_000, 50_100),
    ]);
    let cp = critical_path(
        &p,
        &Options {
            wait_gap_ns: 0,
            extra: vec![(1, 2)],
        },
    );
    // D (100) -> fill (300) -> E (100) = 500.
    assert_eq!(cp.length_ns, 500);
    let fill = share(&cp, "__amd_rocclr_fillBuffer");
    assert!(fill.runtime && fill.rank.is_none());
    assert_eq!(cp.kernels.last().unwrap().name, "__amd_rocclr_fillBuffer");
}

#[test]
fn rocprofv3_fixture_by_hand() {
    // testdata/profiler/rocprofv3-1.0 (times relative to the first start):
    //   0 vecAdd s1 0-1000, 1 fill s1 1100-1300, 2 transpose s1 1400-4400,
    //   3 vecAdd s2 1500-2700, 4 vecAdd s1 4500-5600, 5 transpose s2 5000-10000,
    //   6 vecAdd s1 10100-11600.
    // Program order: s1 0-1-2-4-6 (4 edges), s2 3-5 (1 edge).
    // Inferred waits: 1->3 (s2's first kernel starts 200 ns after the fill ends),
    //   2->5 (s2 idle since 2700, starts 600 ns after transpose ends),
    //   5->6 (s1 idle since 5600, starts 100 ns after transpose on s2 ends).
    // Longest path 0-1-2-5-6 = 1000 + 200 + 3000 + 5000 + 1500 = 10700 ns.
    let p = profiler::load(&[std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/profiler/rocprofv3-1.0")])
    .unwrap();
    let cp = critical_path(&p, &Options::default());
    assert_eq!((cp.program_order_edges, cp.cross_lane_edges), (5, 3));
    assert_eq!(cp.length_ns, 10_700);
    assert_eq!(cp.path, vec![0, 1, 2, 5, 6]);
    // Slack of dispatch 3 (vecAdd s2): longest path through it 1000+200+1200+5000+1500 = 8900
    // -> 1800; dispatch 4 (vecAdd s1 4500-5600): 0-1-2-4-6 = 6800 -> 3900.
    assert_eq!(cp.slack_ns[3], 1800);
    assert_eq!(cp.slack_ns[4], 3900);
    // transpose 8000/10700 = 74.766 %, vecAdd 2500/10700 = 23.364 %.
    assert!((share(&cp, "transpose(float*, float*, int, int)").share - 74.766).abs() < 1e-3);
    assert!(
        (share(
            &cp,
            "void vecAdd<float>(float*, float const*, float const*, int)"
        )
        .share
            - 23.364)
            .abs()
            < 1e-3
    );
}

/// Timestamps from a corrupt trace (an end of 2^64-1) saturate the sums instead of overflowing
/// them (a panic in debug builds, a wrapped, tiny critical path in release builds).
#[test]
fn absurd_durations_saturate() {
    let max = u64::MAX;
    let p = profile(&[("a", 1, 0, max), ("b", 1, 1, max)]);
    let cp = critical_path(&p, &Options::default());
    assert_eq!(cp.length_ns, max);
    assert_eq!(cp.program_order_edges, 1);
    assert_eq!(profiler::stats::totals(&p), (max, max));
}

/// A 5 KB template name is cut in the plain-text critical-path section as in the table above it
/// (it was printed whole); Markdown keeps it whole, as its table does.
#[test]
fn long_names_are_cut_in_the_critical_path_section() {
    let long = format!(
        "void gemm<{}>(float*)",
        "ck::Sequence<1, 2, 3>, ".repeat(220)
    );
    assert!(long.len() > 5000);
    let p = profile(&[(long.as_str(), 1, 0, 100), ("small", 1, 100, 150)]);
    let cp = critical_path(&p, &Options::default());
    let stats = profiler::stats::summarize(&p);
    let r = profiler::report::Report::new(&p, stats, Some(cp), None, None);
    let text = profiler::report::table(&r);
    let section = text
        .split("Critical path")
        .nth(1)
        .expect("a critical-path section");
    assert!(
        section.lines().all(|l| l.chars().count() < 120),
        "{section}"
    );
    assert!(
        section.contains("void gemm<ck::Sequence<1, 2, 3>, "),
        "{section}"
    );
    assert!(section.contains("..."), "{section}");
    let md = profiler::report::markdown(&r);
    assert!(md.contains(&long));
}
