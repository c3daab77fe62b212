//! Simulated comparisons: the decision rule of [`crate::stats`] run on generated timings (seeded),
//! to measure its false-accept rate, its power and the runs it spends. Used by the tests that
//! pin the defaults and by `cargo run --release -p tuner --example simulate`.

use crate::stats::{
    assess, assess_replicated, baseline_first, judge, replication_runs, Judgement, Pair, Plan,
    SpecPairs, Verdict,
};
use rand::distr::Distribution;
use rand::{RngExt, SeedableRng};
use statrs::distribution::{Normal, StudentsT};

/// How simulated timings vary.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Noise {
    /// Multiplicative log-normal noise with this standard deviation of `ln(figure)`.
    LogNormal(f64),
    /// Student's t with 3 degrees of freedom, scaled to this spread, plus one run in 20 slowed
    /// by 20-60% (a busy neighbour, a page fault storm): heavy tails and outliers.
    HeavyTailed(f64),
}

/// A simulated machine.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scenario {
    pub noise: Noise,
    /// The variant's true speedup (1.0: the same program).
    pub speedup: f64,
    /// Linear drift of every figure, as a fraction per run (0.005: 0.5% slower each run).
    pub drift_per_run: f64,
    /// A slow oscillation of the machine (amplitude as a fraction, period 17 runs).
    pub wave: f64,
    /// A disturbance that slows one role only, for a while: `(pairs, factor)` makes every
    /// baseline run of the first `pairs` pairs `factor` times slower (seen under real load:
    /// one of two identical programs slower for several seconds).
    pub episode: Option<(usize, f64)>,
}

impl Scenario {
    pub fn equal(noise: Noise) -> Scenario {
        Scenario {
            noise,
            speedup: 1.0,
            drift_per_run: 0.0,
            wave: 0.0,
            episode: None,
        }
    }
}

/// The result of many simulated comparisons.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    pub comparisons: usize,
    pub accepted: usize,
    /// Mean pairs measured per decision.
    pub mean_runs: f64,
}

impl Summary {
    pub fn accept_rate(&self) -> f64 {
        self.accepted as f64 / self.comparisons as f64
    }
}

struct Machine {
    rng: rand::rngs::StdRng,
    scenario: Scenario,
    clock: usize,
    normal: Normal,
    t3: StudentsT,
}

impl Machine {
    fn new(seed: u64, scenario: Scenario) -> Machine {
        Machine {
            rng: rand::rngs::StdRng::seed_from_u64(seed),
            scenario,
            clock: 0,
            normal: Normal::standard(),
            t3: StudentsT::new(0.0, 1.0, 3.0).expect("valid t"),
        }
    }

    /// One run of a program whose true figure is `base`.
    fn run(&mut self, base: f64) -> f64 {
        let s = self.scenario;
        let t = self.clock as f64;
        self.clock += 1;
        let trend = 1.0 + s.drift_per_run * t + s.wave * (t * std::f64::consts::TAU / 17.0).sin();
        let noise = match s.noise {
            Noise::LogNormal(sd) => (sd * self.normal.sample(&mut self.rng)).exp(),
            Noise::HeavyTailed(sd) => {
                // t(3) has variance 3: scale so that its spread is comparable to `sd`.
                let x = (sd / 3f64.sqrt() * self.t3.sample(&mut self.rng)).exp();
                if self.rng.random_range(0..20) == 0 {
                    x * (1.2 + 0.4 * self.rng.random::<f64>())
                } else {
                    x
                }
            }
        };
        base * trend * noise
    }
}

/// Run one adaptive comparison as the tuner does: a warm-up pair, pairs in the order of
/// [`baseline_first`] until the rule decides, and for an accept its replication. Returns the
/// final verdict and the number of pairs (the replication's included).
pub fn compare(seed: u64, scenario: Scenario, plan: &Plan) -> (Verdict, usize) {
    let (v, pairs) = compare_pairs(seed, scenario, plan);
    (v, pairs.len())
}

/// [`compare`] with the pairs measured (the replication's after the comparison's).
pub fn compare_pairs(seed: u64, scenario: Scenario, plan: &Plan) -> (Verdict, Vec<Pair>) {
    let (mut pairs, again) = measure(seed, scenario, plan);
    let v = assess_replicated(&pairs, &again, plan).verdict;
    pairs.extend(again);
    (v, pairs)
}

/// One comparison measured as the tuner measures it: its pairs until the rule decides, and for
/// an accept the replication's pairs (empty otherwise).
pub fn measure(seed: u64, scenario: Scenario, plan: &Plan) -> (Vec<Pair>, Vec<Pair>) {
    measure_as(seed, scenario, plan, false)
}

/// [`measure`]; with `joint`, as one of several specs judging a variant: until
/// [`crate::stats::joint_done`].
pub fn measure_as(
    seed: u64,
    scenario: Scenario,
    plan: &Plan,
    joint: bool,
) -> (Vec<Pair>, Vec<Pair>) {
    let mut m = Machine::new(seed, scenario);
    let variant_base = 1.0 / scenario.speedup;
    let key = format!("sim:{seed}");
    let mut all = 0;
    let mut pair = |m: &mut Machine, key: &str, round: usize| {
        let baseline_first = baseline_first(key, round);
        let base = match scenario.episode {
            Some((n, factor)) if all < n => factor,
            _ => 1.0,
        };
        all += 1;
        let (b, v) = if baseline_first {
            let b = m.run(base);
            (b, m.run(variant_base))
        } else {
            let v = m.run(variant_base);
            (m.run(base), v)
        };
        Pair {
            baseline: b,
            variant: v,
            baseline_first,
        }
    };
    m.run(1.0);
    m.run(variant_base);
    let mut pairs = Vec::new();
    loop {
        let p = pair(&mut m, &key, pairs.len());
        pairs.push(p);
        if joint && !crate::stats::joint_done(&pairs, plan) {
            continue;
        }
        match assess(&pairs, plan).verdict {
            Verdict::Continue => {}
            Verdict::Accept => {
                let rkey = format!("replicate:{key}");
                let again: Vec<Pair> = (0..replication_runs(pairs.len()))
                    .map(|r| pair(&mut m, &rkey, r))
                    .collect();
                return (pairs, again);
            }
            _ => return (pairs, Vec::new()),
        }
    }
}

/// A variant judged by several specs ([`crate::stats::judge`]): spec `j` measured as
/// [`measure`] does on the machine `scenarios[j]` (its own seed), then judged from all of them.
pub fn judge_specs(seed: u64, scenarios: &[Scenario], plan: &Plan) -> Judgement {
    let measured: Vec<(Vec<Pair>, Vec<Pair>)> = scenarios
        .iter()
        .enumerate()
        .map(|(j, sc)| {
            let seed = seed.wrapping_mul(31).wrapping_add(j as u64);
            measure_as(seed, *sc, plan, scenarios.len() > 1)
        })
        .collect();
    let specs: Vec<SpecPairs<'_>> = measured
        .iter()
        .map(|(p, a)| SpecPairs { pairs: p, again: a })
        .collect();
    judge(&specs, plan)
}

/// `n` variants judged by several specs ([`judge_specs`], seeds `seed0..seed0+n`): how many
/// were accepted, and the verdicts' counts.
pub fn judge_many(n: usize, seed0: u64, scenarios: &[Scenario], plan: &Plan) -> Summary {
    let mut accepted = 0;
    let mut runs = 0;
    for i in 0..n {
        let j = judge_specs(seed0 + i as u64, scenarios, plan);
        if j.verdict == Verdict::Accept {
            accepted += 1;
        }
        runs += j.n;
    }
    Summary {
        comparisons: n,
        accepted,
        mean_runs: runs as f64 / n as f64,
    }
}

/// How often [`crate::stats::choose`] keeps the less invasive of two variants of one loop
/// whose true speedups are `first` (the less invasive) and `second`, each measured as
/// [`compare_pairs`] does under `noise`, over `n` trials where both were accepted: `(trials
/// with both accepted, of those the trials that kept the first)`.
pub fn keeps_first(
    n: usize,
    seed0: u64,
    noise: Noise,
    first: f64,
    second: f64,
    plan: &Plan,
) -> (usize, usize) {
    let (mut both, mut kept) = (0, 0);
    for i in 0..n as u64 {
        let sc = |speedup| Scenario {
            speedup,
            ..Scenario::equal(noise)
        };
        let (va, a) = compare_pairs(seed0 + 2 * i, sc(first), plan);
        let (vb, b) = compare_pairs(seed0 + 2 * i + 1, sc(second), plan);
        if va != Verdict::Accept || vb != Verdict::Accept {
            continue;
        }
        both += 1;
        let (pa, pb) = ([a.as_slice()], [b.as_slice()]);
        let c = [
            crate::stats::Contender {
                source: "first",
                pairs: &pa,
            },
            crate::stats::Contender {
                source: "second",
                pairs: &pb,
            },
        ];
        if crate::stats::choose(&c, plan.confidence).is_some_and(|ch| ch.kept == 0) {
            kept += 1;
        }
    }
    (both, kept)
}

/// `n` comparisons with seeds `seed0..seed0+n`.
pub fn run_many(n: usize, seed0: u64, scenario: Scenario, plan: &Plan) -> Summary {
    let mut accepted = 0;
    let mut runs = 0;
    for i in 0..n {
        let (v, r) = compare(seed0 + i as u64, scenario, plan);
        if v == Verdict::Accept {
            accepted += 1;
        }
        runs += r;
    }
    Summary {
        comparisons: n,
        accepted,
        mean_runs: runs as f64 / n as f64,
    }
}
