//! The rule that judges a variant by several specs ([`tuner::stats::judge`]), a pure function
//! of recorded samples, on simulated specs ([`tuner::sim`]) and on constructed pairs: one spec
//! faster and one slower is rejected (`spec-slower`); both faster but with a geometric mean
//! below the minimum is rejected (`below-min-speedup`); both within noise with a geometric
//! mean above the minimum is accepted only when their pooled interval lies above 1 and each
//! spec's interval rules out a slowdown (the documented decision), else rejected; with one
//! spec the rule is exactly the one of one comparison. Equal programs on two specs are
//! accepted at most 1% of the time; a 10% gain on one spec and none on the other is found.
#![allow(clippy::print_stderr)]

use tuner::sim::{judge_many, judge_specs, measure, Noise, Scenario};
use tuner::stats::{
    assess_replicated, judge, slowdown_floor, Pair, Plan, Rejection, SpecPairs, Verdict,
};

fn at(speedup: f64, noise: f64) -> Scenario {
    Scenario {
        speedup,
        ..Scenario::equal(Noise::LogNormal(noise))
    }
}

/// Pairs whose log ratios `ln(variant / baseline)` are `-shift + spread * z_i`, the `z_i` a
/// fixed, symmetric, roughly normal sequence (deterministic: no generator).
fn pairs(shift: f64, spread: f64, n: usize) -> Vec<Pair> {
    (0..n)
        .map(|i| {
            // Quantiles of a normal at (i + 0.5) / n, permuted so that neighbours differ.
            let j = (i * 7) % n;
            let q = (j as f64 + 0.5) / n as f64;
            let z = (q / (1.0 - q)).ln() / 1.702;
            let d = -shift + spread * z;
            Pair {
                baseline: 1.0,
                variant: d.exp(),
                baseline_first: i % 4 == 0 || i % 4 == 3,
            }
        })
        .collect()
}

fn two<'a>(a: &'a [Pair], b: &'a [Pair]) -> [SpecPairs<'a>; 2] {
    [
        SpecPairs {
            pairs: a,
            again: &[],
        },
        SpecPairs {
            pairs: b,
            again: &[],
        },
    ]
}

#[test]
fn one_spec_faster_one_slower_is_rejected() {
    let plan = Plan::default();
    for seed in 0..50 {
        let j = judge_specs(seed, &[at(1.15, 0.01), at(0.95, 0.01)], &plan);
        assert_eq!(
            j.verdict,
            Verdict::Reject(Rejection::SpecSlower),
            "seed {seed}: {j:?}"
        );
        assert_eq!(j.slower, Some(1), "the second spec is the slower one");
        assert!(j.specs[0].verdict == Verdict::Accept, "{j:?}");
        // The geometric mean alone would have passed: the slower spec decides.
        assert!(j.speedup > 1.0 + plan.min_speedup, "{j:?}");
    }
    // Constructed: 10% faster and 5% slower, tight.
    let (a, b) = (pairs(0.10, 0.005, 20), pairs(-0.05, 0.005, 20));
    let j = judge(&two(&a, &b), &plan);
    assert_eq!(j.verdict, Verdict::Reject(Rejection::SpecSlower));
    assert!(j.specs[1].ci.1 < slowdown_floor(&plan), "{j:?}");
}

#[test]
fn both_faster_but_the_geometric_mean_below_the_minimum_is_rejected() {
    let plan = Plan::default();
    // 1% and 1.5% faster, each significant under 0.2% noise: the mean gains 1.25% < 2%.
    let (a, b) = (pairs(0.01, 0.002, 30), pairs(0.015, 0.002, 30));
    let j = judge(&two(&a, &b), &plan);
    assert_eq!(
        j.verdict,
        Verdict::Reject(Rejection::BelowMinSpeedup),
        "{j:?}"
    );
    assert!(
        j.specs.iter().all(|s| s.ci.0 > 1.0),
        "each significantly faster: {j:?}"
    );
    assert!((j.speedup - (0.0125f64).exp()).abs() < 1e-3, "{j:?}");
    for seed in 0..30 {
        let j = judge_specs(seed, &[at(1.01, 0.002), at(1.012, 0.002)], &plan);
        assert_ne!(j.verdict, Verdict::Accept, "seed {seed}: {j:?}");
    }
}

/// The decision for two specs each within noise (neither significantly faster on its own at
/// its last look) whose geometric mean gains the minimum: accepted when their pooled interval
/// lies above 1 and each spec's interval rules out a slowdown beyond the minimum; `not-faster`
/// when the pooled interval reaches 1; `spec-slower` when a spec's interval is too wide.
#[test]
fn both_within_noise_with_the_mean_above_the_minimum_is_decided_by_the_pooled_interval() {
    let plan = Plan::default();
    let within = |spread: f64| {
        let p = pairs(0.03, spread, plan.max_runs);
        let own = assess_replicated(&p, &[], &plan);
        assert_eq!(
            own.verdict,
            Verdict::Reject(Rejection::NotFaster),
            "{own:?}"
        );
        p
    };
    // 3% faster each, 6% spread, 30 pairs: pooled, significant.
    let a = within(0.06);
    let j = judge(&two(&a, &a), &plan);
    assert!(
        j.specs.iter().all(|s| s.ci.0 >= slowdown_floor(&plan)),
        "{j:?}"
    );
    assert!(j.speedup >= 1.0 + plan.min_speedup && j.ci.0 > 1.0, "{j:?}");
    assert_eq!(j.verdict, Verdict::Accept, "{j:?}");
    // 8% spread: each interval still rules out a 2% slowdown, the pooled one reaches 1.
    let a = within(0.08);
    let j = judge(&two(&a, &a), &plan);
    assert!(
        j.specs.iter().all(|s| s.ci.0 >= slowdown_floor(&plan)),
        "{j:?}"
    );
    assert!(j.ci.0 <= 1.0, "{j:?}");
    assert_eq!(j.verdict, Verdict::Reject(Rejection::NotFaster), "{j:?}");
    // 10% spread: a spec's interval no longer rules out a slowdown beyond the minimum.
    let a = within(0.1);
    let j = judge(&two(&a, &a), &plan);
    assert_eq!(j.verdict, Verdict::Reject(Rejection::SpecSlower), "{j:?}");
    assert_eq!(j.slower, Some(0));
}

#[test]
fn one_spec_is_the_rule_of_one_comparison_and_the_rule_is_pure() {
    let plan = Plan::default();
    for seed in 0..40 {
        let speedup = [1.0, 1.05, 1.2][seed as usize % 3];
        let (p, again) = measure(seed, at(speedup, 0.02), &plan);
        let one = judge(
            &[SpecPairs {
                pairs: &p,
                again: &again,
            }],
            &plan,
        );
        let direct = assess_replicated(&p, &again, &plan);
        assert_eq!(one.verdict, direct.verdict);
        assert_eq!(one.speedup, direct.speedup);
        assert_eq!(one.assessment(), direct);
    }
    let (a, b) = (pairs(0.05, 0.01, 20), pairs(0.04, 0.01, 15));
    assert_eq!(judge(&two(&a, &b), &plan), judge(&two(&a, &b), &plan));
}

#[test]
fn equal_programs_on_two_specs_are_rarely_accepted_and_a_gain_on_one_is_found() {
    let plan = Plan::default();
    let equal = judge_many(400, 1, &[at(1.0, 0.03), at(1.0, 0.03)], &plan);
    eprintln!("equal on two specs: {equal:?}");
    assert!(equal.accept_rate() <= 0.01, "{equal:?}");
    // 10% faster on one kernel, unchanged on the other, 1% noise: the mean gains 4.9%.
    let gain = judge_many(200, 10_000, &[at(1.10, 0.01), at(1.0, 0.01)], &plan);
    eprintln!("10% on one spec, equal on the other: {gain:?}");
    assert!(gain.accept_rate() >= 0.9, "{gain:?}");
}

/// An accept stands on all its pairs: a comparison accepted at its first look (10 pairs at
/// 3.5% faster, p tiny) whose replication shows the variant faster again, but by 0.3%, is
/// `not-replicated` (the median over all 20 pairs is below the 2% minimum), with the pooled
/// figure and the replication's p-value; with a replication as fast as the comparison it is
/// accepted, and it reports the pooled speedup and interval.
#[test]
fn an_accept_must_hold_over_the_comparison_and_its_replication() {
    let plan = Plan::default();
    let first = pairs(0.035, 0.002, plan.min_runs);
    let slow_again = pairs(0.003, 0.002, plan.min_runs);
    let a = assess_replicated(&first, &slow_again, &plan);
    assert_eq!(
        a.verdict,
        Verdict::Reject(Rejection::NotReplicated),
        "{a:?}"
    );
    assert!(
        a.speedup < 1.0 + plan.min_speedup && a.speedup > 1.003,
        "{a:?}"
    );
    assert!(a.p_value <= tuner::stats::REPLICATION_ALPHA, "{a:?}");
    assert_eq!(a.n, plan.min_runs);
    let again = pairs(0.034, 0.002, plan.min_runs);
    let b = assess_replicated(&first, &again, &plan);
    assert_eq!(b.verdict, Verdict::Accept, "{b:?}");
    let pooled = (0.034f64 + 0.035) / 2.0;
    assert!((b.speedup.ln() - pooled).abs() < 0.002, "{b:?}");
    assert!(b.ci.0 <= b.speedup && b.speedup <= b.ci.1, "{b:?}");
}
