//! Compile-ahead benchmark: the wall time of one GPU-like lane's `tune` when the gates' compiles
//! dominate, as on the H200 (the smoke's multi-spec tune: 13.6 of 17.4 s compiling). The gates'
//! compiler is a script that sleeps `COMPILE_MS` (no CPU: a compile on a machine with cores to
//! spare, as nvcc on a 16-core GPU host) and copies the source to its output (PTX text: every
//! variant is other code, and passes the gates); the backend overlaps (a GPU backend: the
//! lane compiles ahead while it measures), builds in no time and samples in `SAMPLE_MS` with
//! seeded noise, so every comparison ends futile at its first look. The repository: `KERNELS`
//! files of one kernel of `LOOPS` loops; `--factors 2,4,8 --mode both` (6 variants a loop),
//! `--jobs JOBS`. The search is the real one.
//!
//! Usage: `ahead_bench [COMPILE_MS] [JOBS] [ROUNDS]` (defaults 400, 8, 3). Prints each round's
//! wall time, the median, and the timing split of the last round. Compare two builds of the
//! coordinator's compile-ahead (`Coordinator::ahead`, `Lane::compile_ahead`) in one session on
//! one machine (bench/README.md has the figures: a chunked lookahead that lost, the compile pool that won).
#![allow(clippy::print_stdout, clippy::print_stderr, clippy::exit)]

mod support;

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};
use support::{repository, Sim};
use tuner::search::Quiet;

const KERNELS: usize = 2;
const LOOPS: usize = 6;
const SAMPLE_MS: u64 = 2;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let compile_ms: u64 = args.get(1).map_or(400, |s| s.parse().unwrap());
    let jobs: usize = args.get(2).map_or(8, |s| s.parse().unwrap());
    let rounds: usize = args.get(3).map_or(3, |s| s.parse().unwrap());
    let tools = tempfile::tempdir().unwrap();
    let cc = tools.path().join("cc.sh");
    std::fs::write(
        &cc,
        format!(
            "#!/bin/sh\nsleep {}\ncp \"$1\" \"$2\"\n",
            compile_ms as f64 / 1000.0
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&cc, std::fs::Permissions::from_mode(0o755)).unwrap();
    println!(
        "{KERNELS} kernels of {LOOPS} loops, 6 variants a loop; compile {compile_ms} ms (sleep), sample {SAMPLE_MS} ms, --jobs {jobs}"
    );
    let mut walls = Vec::new();
    let mut last = None;
    for round in 0..rounds {
        let tree = tempfile::tempdir().unwrap();
        repository(tree.path(), KERNELS, LOOPS);
        let state = tempfile::tempdir().unwrap();
        let settings = support::settings(
            state.path(),
            codeobj::compile::Compiler::new(
                format!("{} {{src}} {{out}}", cc.display()),
                "sm_90",
                state.path().join("objects"),
            )
            .with_output(codeobj::compile::Output::Text("ptx")),
            (
                vec![2, 4, 8],
                vec![pipeline::Mode::Pragma, pipeline::Mode::Manual],
                jobs,
            ),
            true,
            "ahead-bench",
        );
        let backend = Sim::new(
            true,
            Duration::from_millis(SAMPLE_MS),
            Duration::ZERO,
            round as u64 + 1,
        );
        let local = [support::lane(&backend, 0)];
        let disc = tuner::search::discover(&settings, tree.path()).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let t0 = Instant::now();
        let r = tuner::search::tune_lanes(&local, &settings, tree.path(), disc, &stop, &Quiet)
            .expect("the benchmark's tune");
        let secs = t0.elapsed().as_secs_f64();
        let t = &r.report.timing;
        println!(
            "round {round}: {secs:.2} s wall; {} candidates, {} compiles",
            r.report.candidates.len(),
            t.counts.compiles
        );
        walls.push(secs);
        last = Some(format!(
            "timing: {:.2} s wall = measure {:.2} + compile {:.2} + prepare {:.2} + gates {:.2} + waiting {:.2} + other {:.2}",
            t.wall, t.measure, t.compile, t.prepare, t.gates, t.waiting, t.other
        ));
    }
    walls.sort_by(f64::total_cmp);
    println!("median {:.2} s", walls[walls.len() / 2]);
    if let Some(l) = last {
        println!("{l}");
    }
}
