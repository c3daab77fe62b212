//! Lane scaling benchmark with a simulated backend: how many decisions per hour `tune` makes
//! with 1, 2, 4, ... 64 local lanes, and the parallel efficiency (throughput with N lanes over
//! N times the throughput with one).
//!
//! The backend sleeps (no CPU) a fixed latency per sample and per build, time-scaled so that
//! the whole benchmark runs in minutes; its figure is 1.0 with seeded uniform noise (a
//! relative standard deviation of `NOISE`), so every comparison ends at its first look
//! (futile) and the work per comparison is the same. The repository is synthetic: `KERNELS`
//! files of one kernel with `LOOPS` loops each. The search is the real one (coordinator,
//! lanes, ledger on disk).
//!
//! Each lane count runs twice: the backend as the CPU's `command` (no overlap: nothing is built
//! while a sample is taken) and as a GPU backend (`overlaps()`: the lane builds its next
//! comparison while it measures); the gain is the second's throughput over the first's.
//!
//! Usage: `lanes_bench [SAMPLE_MS] [LANES,...] [off|on|both]` (defaults: 10 ms,
//! 1,2,4,8,16,32,64, both).
#![allow(clippy::print_stdout, clippy::print_stderr, clippy::exit)]

mod support;

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};
use support::{repository, Sim, NOISE};
use tuner::executor::local::LocalLane;
use tuner::search::Quiet;

const KERNELS: usize = 40;
const LOOPS: usize = 5;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let sample_ms: u64 = args.get(1).map(|s| s.parse().unwrap()).unwrap_or(10);
    let lanes: Vec<usize> = args
        .get(2)
        .map(|s| s.split(',').map(|x| x.parse().unwrap()).collect())
        .unwrap_or_else(|| vec![1, 2, 4, 8, 16, 32, 64]);
    let modes: Vec<bool> = match args.get(3).map(String::as_str) {
        None | Some("both") => vec![false, true],
        Some("off") => vec![false],
        Some("on") => vec![true],
        Some(other) => panic!("overlap mode {other}: off, on or both"),
    };
    let tree = tempfile::tempdir().unwrap();
    repository(tree.path(), KERNELS, LOOPS);
    println!(
        "synthetic repository: {KERNELS} kernels, {} loops; pragma x4 per loop; sample {sample_ms} ms, build {sample_ms} ms, noise {:.0}%",
        KERNELS * LOOPS,
        NOISE * 100.0
    );
    println!(
        "lanes  overlap  decisions  pairs  seconds  decisions/hour  efficiency  pair-efficiency  gain"
    );
    let mut base_rate: [Option<f64>; 2] = [None, None];
    let mut base_pairs: [Option<f64>; 2] = [None, None];
    for &n in &lanes {
        let mut without = None;
        for &overlap in &modes {
            let state = tempfile::tempdir().unwrap();
            let settings = support::settings(
                state.path(),
                codeobj::compile::Compiler::new(
                    "false {src} -o {out}",
                    "gfx90a",
                    state.path().join("objects"),
                ),
                (vec![4], vec![pipeline::Mode::Pragma], 1),
                false,
                "lanes-bench",
            );
            let backends: Vec<Sim> = (0..n)
                .map(|i| {
                    let latency = Duration::from_millis(sample_ms);
                    Sim::new(overlap, latency, latency, i as u64 + 1)
                })
                .collect();
            let local: Vec<LocalLane<'_, Sim>> = backends
                .iter()
                .enumerate()
                .map(|(i, b)| support::lane(b, i))
                .collect();
            let disc = tuner::search::discover(&settings, tree.path()).unwrap();
            let stop = Arc::new(AtomicBool::new(false));
            let t0 = Instant::now();
            let r = tuner::search::tune_lanes(&local, &settings, tree.path(), disc, &stop, &Quiet)
                .expect("the benchmark's tune");
            let secs = t0.elapsed().as_secs_f64();
            let decided = r
                .report
                .candidates
                .iter()
                .filter(|c| c.runs.is_some_and(|x| x > 0))
                .count();
            let pairs: u32 = r.report.candidates.iter().filter_map(|c| c.runs).sum();
            let rate = decided as f64 / secs * 3600.0;
            let prate = pairs as f64 / secs;
            let m = overlap as usize;
            let base = *base_rate[m].get_or_insert(rate);
            let pbase = *base_pairs[m].get_or_insert(prate);
            let gain = if overlap {
                without.map_or("-".to_string(), |w: f64| format!("{:.2}", rate / w))
            } else {
                without = Some(rate);
                "-".to_string()
            };
            // Efficiency: throughput with n lanes over n times one lane's (the same mode). The
            // pairs a comparison takes vary with its noise (each lane draws its own), so the pair
            // throughput is shown too: it compares equal work.
            println!(
            "{n:>5}  {:>7}  {decided:>9}  {pairs:>5}  {secs:>7.1}  {rate:>14.0}  {:>10.2}  {:>15.2}  {gain:>4}",
            if overlap { "on" } else { "off" },
            rate / (base * n as f64),
            prate / (pbase * n as f64)
        );
        }
    }
}
