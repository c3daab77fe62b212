//! The decision rule's accept rate against a variant's true speedup, on simulated timings
//! ([`tuner::sim`]): for each noise and true speedup, N seeded comparisons measured once, each
//! judged by three replication rules on the same pairs.
#![allow(clippy::print_stdout)]
use tuner::sim::{measure, Noise, Scenario};
use tuner::stats::{assess, log_ratios, median, replicated, Plan, Verdict};

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1000);
    let plan = Plan::default();
    let target = 1.0 + plan.min_speedup;
    println!("| noise | true speedup | direction only | + pooled >= min | + replication >= min | mean pairs |");
    println!("|---|---:|---:|---:|---:|---:|");
    for noise in [
        Noise::LogNormal(0.01),
        Noise::LogNormal(0.03),
        Noise::HeavyTailed(0.03),
    ] {
        for s in [1.0, 1.01, 1.015, 1.02, 1.025, 1.03, 1.04, 1.05, 1.08] {
            let sc = Scenario {
                speedup: s,
                ..Scenario::equal(noise)
            };
            let (mut a, mut b, mut c, mut runs) = (0, 0, 0, 0);
            for i in 0..n as u64 {
                let (pairs, again) = measure(1_000_000 + i, sc, &plan);
                runs += pairs.len() + again.len();
                if assess(&pairs, &plan).verdict != Verdict::Accept || !replicated(&again).0 {
                    continue;
                }
                a += 1;
                let mut all = log_ratios(&pairs);
                all.extend(log_ratios(&again));
                if (-median(&all)).exp() >= target {
                    b += 1;
                }
                if (-median(&log_ratios(&again))).exp() >= target {
                    c += 1;
                }
            }
            let pct = |x: usize| 100.0 * x as f64 / n as f64;
            println!(
                "| {noise:?} | {s:.3} | {:.1}% | {:.1}% | {:.1}% | {:.1} |",
                pct(a),
                pct(b),
                pct(c),
                runs as f64 / n as f64
            );
        }
    }
}
