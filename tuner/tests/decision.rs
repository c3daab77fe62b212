//! The decision rule on simulated timings, replication of accepts included: false accepts on
//! equal programs (plain, drifting, heavy-tailed noise) stay at or below 1% (and at 5% when one
//! program is disturbed in every comparison), a true 5% speedup under 3% noise is found at
//! least 90% of the time with the default plan, and the mean runs per decision stay within
//! budget. Of two accepted variants of one loop, equally fast, the less invasive is kept at
//! least 98% of the time; one 15% faster than the other is kept at least 90% of the time.
#![allow(clippy::print_stdout, clippy::print_stderr, clippy::exit)]

use tuner::sim::{run_many, Noise, Scenario};
use tuner::stats::Plan;

const N: usize = 1000;

fn check_false_accepts(name: &str, scenario: Scenario, seed: u64) {
    check_false_accepts_below(name, scenario, seed, 0.01)
}

fn check_false_accepts_below(name: &str, scenario: Scenario, seed: u64, limit: f64) {
    let plan = Plan::default();
    let s = run_many(N, seed, scenario, &plan);
    eprintln!(
        "{name}: {} of {} accepted ({:.2}%), mean {:.1} pairs per decision",
        s.accepted,
        s.comparisons,
        s.accept_rate() * 100.0,
        s.mean_runs
    );
    assert!(s.accept_rate() <= limit, "{name}: {s:?}");
    assert!(s.mean_runs <= plan.max_runs as f64);
}

#[test]
fn equal_programs_lognormal_noise() {
    check_false_accepts(
        "equal, 3% log-normal",
        Scenario::equal(Noise::LogNormal(0.03)),
        1,
    );
}

#[test]
fn equal_programs_with_drift() {
    check_false_accepts(
        "equal, 3% noise, +0.5%/run drift and a 5% wave",
        Scenario {
            drift_per_run: 0.005,
            wave: 0.05,
            ..Scenario::equal(Noise::LogNormal(0.03))
        },
        100_000,
    );
}

#[test]
fn equal_programs_heavy_tailed_noise() {
    check_false_accepts(
        "equal, heavy-tailed 3% + 5% outliers",
        Scenario::equal(Noise::HeavyTailed(0.03)),
        200_000,
    );
}

#[test]
fn equal_programs_large_noise() {
    check_false_accepts(
        "equal, 10% log-normal",
        Scenario::equal(Noise::LogNormal(0.10)),
        300_000,
    );
}

#[test]
fn equal_programs_one_slowed_for_a_few_seconds() {
    // What the A/A experiment under real load showed (bench/aa_false_accepts.sh): one of two
    // byte-identical programs 25% slower over the first 10 pairs (7 s) of a comparison, in
    // 20% noise. Here every comparison has such an episode: 15% were accepted without the
    // replication, 2.8% with it (the replication's pairs are clean and pass at its 10% level).
    check_false_accepts_below(
        "equal, 20% noise, the baseline 25% slower for the first 10 pairs",
        Scenario {
            episode: Some((10, 1.25)),
            ..Scenario::equal(Noise::LogNormal(0.20))
        },
        700_000,
        0.05,
    );
}

#[test]
fn power_for_five_percent_under_three_percent_noise() {
    let plan = Plan::default();
    let s = run_many(
        N,
        400_000,
        Scenario {
            speedup: 1.05,
            ..Scenario::equal(Noise::LogNormal(0.03))
        },
        &plan,
    );
    eprintln!(
        "5% faster, 3% noise: power {:.1}%, mean {:.1} pairs per decision",
        s.accept_rate() * 100.0,
        s.mean_runs
    );
    assert!(s.accept_rate() >= 0.90, "{s:?}");
}

#[test]
fn power_holds_with_drift_and_heavy_tails() {
    let plan = Plan::default();
    let s = run_many(
        N,
        500_000,
        Scenario {
            speedup: 1.05,
            drift_per_run: 0.005,
            wave: 0.05,
            noise: Noise::HeavyTailed(0.03),
            episode: None,
        },
        &plan,
    );
    eprintln!(
        "5% faster, heavy-tailed 3% noise with drift: power {:.1}%, mean {:.1} pairs",
        s.accept_rate() * 100.0,
        s.mean_runs
    );
    // 89% before accepts had to be replicated: the price of the replication's protection
    // against a disturbance of one program.
    assert!(s.accept_rate() >= 0.80, "{s:?}");
}

#[test]
fn below_min_speedup_is_rarely_accepted() {
    // A real 1% improvement is below the 2% minimum. The rule tests "faster" and requires the
    // *estimate* to reach 2%, so with 3% noise a few such variants pass (1.9% at these seeds,
    // 5.7% before the replication); this bounds that soft false accept.
    let plan = Plan::default();
    let s = run_many(
        N,
        600_000,
        Scenario {
            speedup: 1.01,
            ..Scenario::equal(Noise::LogNormal(0.03))
        },
        &plan,
    );
    eprintln!(
        "1% faster, 3% noise: {:.1}% accepted, mean {:.1} pairs",
        s.accept_rate() * 100.0,
        s.mean_runs
    );
    assert!(s.accept_rate() <= 0.10, "{s:?}");
}

#[test]
fn of_two_equally_fast_variants_the_less_invasive_is_kept() {
    let plan = Plan::default();
    for (name, noise, seed) in [
        ("3% log-normal", Noise::LogNormal(0.03), 300_000),
        (
            "heavy-tailed 3% + 5% outliers",
            Noise::HeavyTailed(0.03),
            400_000,
        ),
    ] {
        let (both, kept) = tuner::sim::keeps_first(N, seed, noise, 1.25, 1.25, &plan);
        eprintln!(
            "tie, {name}: the first kept in {kept} of {both} trials where both were accepted"
        );
        assert!(both >= N * 9 / 10, "{both}");
        assert!(kept as f64 >= 0.98 * both as f64, "{kept} of {both}");
    }
}

#[test]
fn of_two_variants_a_significantly_faster_one_is_kept() {
    let plan = Plan::default();
    let (both, kept) =
        tuner::sim::keeps_first(N, 500_000, Noise::LogNormal(0.03), 1.25, 1.25 * 1.15, &plan);
    eprintln!(
        "15% apart: the slower (less invasive) kept in {kept} of {both} trials where both were accepted"
    );
    assert!(both >= N * 9 / 10, "{both}");
    assert!(kept as f64 <= 0.1 * both as f64, "{kept} of {both}");
}

#[test]
fn the_decision_is_centred_on_the_minimum_speedup() {
    // Under 1% noise a variant truly 1.5% faster (below the 2% minimum) reached a 1.02x
    // estimate at some look often enough to be accepted in 20% of comparisons when the
    // replication only had to show it faster: the look that accepts is the one whose estimate
    // crossed, an upward bias. With the speedup over all the pairs (comparison and replication)
    // required to reach the minimum it is accepted 5% of the time, while a true 2.5% speedup
    // stays accepted (92%).
    let plan = Plan::default();
    let rate = |speedup: f64, seed: u64| {
        let s = run_many(
            N,
            seed,
            Scenario {
                speedup,
                ..Scenario::equal(Noise::LogNormal(0.01))
            },
            &plan,
        );
        eprintln!(
            "{speedup}x faster, 1% noise: {:.1}% accepted, mean {:.1} pairs",
            s.accept_rate() * 100.0,
            s.mean_runs
        );
        s.accept_rate()
    };
    let below = rate(1.015, 800_000);
    assert!(below <= 0.10, "a true 1.5% speedup accepted {below}");
    let above = rate(1.025, 900_000);
    assert!(above >= 0.85, "a true 2.5% speedup accepted {above}");
}
