//! The decision rule: is a variant faster than the baseline? A pure function of the recorded
//! raw samples (interleaved A/B pairs), so that it can be tested on simulated samples and
//! re-derived from the ledger.
//!
//! ## The rule
//! Samples come in pairs `(baseline, variant)` measured back to back, in blocks of two pairs
//! whose orders are opposite (A B then B A, or B A then A B, [`baseline_first`]: which one is
//! drawn at random, seeded by the comparison), so that drift of the machine hits both, a
//! first-run or second-run bias cancels, and no periodic disturbance can keep step with the
//! roles. A warm-up pair before the first one is measured and recorded but not counted (the
//! first runs after a build). Each pair gives a log ratio `d = ln(variant / baseline)`
//! (negative: the variant was faster).
//!
//! - **Test**: the one-sided Wilcoxon signed-rank test of `median(d) < 0`, exact (midranks for
//!   ties, zero differences dropped; normal approximation with tie correction beyond
//!   [`EXACT_LIMIT`] pairs). A rank test, so one wild outlier weighs no more than any other
//!   pair: real timings have heavy tails.
//! - **Estimate**: `speedup = exp(-median(d))`, the median of the per-pair ratios
//!   `baseline / variant`, with a percentile bootstrap interval (2,000 resamples of the median,
//!   seeded from the number of pairs, so that the same samples always give the same interval
//!   and scaled samples resample alike) at `confidence`.
//! - **Looks**: the data are examined only at planned looks, `min_runs`, `min_runs + step`, ...,
//!   `max_runs` pairs (`K` looks). Each look tests at `alpha / K` (Bonferroni), so the chance of a
//!   false accept over all looks stays below `alpha = 1 - confidence` however the looks fall.
//! - **Accept** at a look when `p <= alpha / K` **and** `speedup >= 1 + min_speedup`, and then
//!   only if a **replication** agrees: as many fresh pairs again ([`replication_runs`]),
//!   measured right after, must again show the variant faster ([`replicated`]: one-sided signed-rank
//!   `p <= REPLICATION_ALPHA`). The rule above holds for independent pairs; on a shared machine
//!   a disturbance can slow one of two identical programs for several seconds (A/A runs under
//!   load were accepted at 2.4%, each time in one comparison only, never in the next one): it
//!   must now happen twice in a row, in the same direction. And the speedup over all the pairs,
//!   the comparison's and the replication's, must still reach `1 + min_speedup`: the estimate
//!   at the look that accepted is biased upward (the comparison stopped because it crossed),
//!   the replication's is not ([`assess_replicated`]). An accept reports those pooled figures.
//! - **Reject for futility** at a look when the interval's upper end is below
//!   `1 + min_speedup`: more runs cannot make the variant fast enough. Stopping for futility only
//!   removes accepts, so it cannot raise the false-accept rate.
//! - **Reject** at `max_runs` otherwise.
//!
//! ## Among the accepted variants of one loop
//! One variant per loop is kept ([`choose`]). Two variants are told apart by [`versus`]: the
//! ratio of their speedups, `exp(median(d_b) - median(d_a))`, with a percentile bootstrap
//! interval (each side resampled with replacement from its own pairs, 2,000 times, seeded from
//! the numbers of pairs) at `confidence`. Each side's pairs are its own comparison's, each
//! against the same baseline, and its replication's. One variant is **significantly faster**
//! than another when that interval's lower end is above 1. The kept variant is the least
//! invasive (the caller's order: a pragma before a manual copy, a smaller factor before a
//! larger) that no other accepted variant is significantly faster than; the others are
//! `superseded` when it is significantly faster than them, a `tie` otherwise. A pure function of
//! the samples: the order in which the variants were measured plays no part.
//!
//! ## A loop several specs judge
//! With the bench backend every launch spec is the objective of the kernel it launches; a loop
//! that several kernels reach (a header helper, a template instantiated twice) is compared once
//! per spec, each comparison measured as above (its own looks, futility and replication), and
//! the variant is judged from all of them by [`judge`]:
//! - **No spec slower**: every spec's interval must rule out a slowdown beyond the minimum (its
//!   lower end at least `1 / (1 + min_speedup)`); else `spec-slower`. A spec whose interval is
//!   too wide to tell (within noise, but noisy) rejects the variant too: safety before speed.
//! - **The geometric mean gains the minimum**: `exp(mean_j ln speedup_j) >= 1 + min_speedup`,
//!   else `below-min-speedup` (two specs each 1% faster do not make a 2% gain).
//! - **Significant as a whole**: the interval of the geometric mean (a stratified percentile
//!   bootstrap: each spec's log ratios resampled from its own pairs, the mean of their medians,
//!   2,000 times, seeded from the numbers of pairs) at `confidence` lies above 1, else
//!   `not-faster`. So two specs each within noise (neither significant alone) whose intervals
//!   are tight enough to rule out a slowdown and whose geometric mean gains the minimum are
//!   accepted when their pooled evidence is significant, and rejected `not-faster` otherwise.
//! - **Replicated**: a spec whose own accept was not confirmed by its replication pairs
//!   rejects the variant (`not-replicated`): a disturbance episode, as for one spec.
//!
//! With one spec this is exactly the rule of one comparison ([`assess_replicated`]). Of two
//! variants both accepted by several specs, [`versus`] compares their geometric means the same
//! way ([`versus_specs`]).

use rand::{RngExt, SeedableRng};
use serde::Serialize;
use statrs::distribution::{ContinuousCDF, Normal};

/// The version of the decision rule, in every tune's settings fingerprint: decisions taken
/// under another are measured again, not reused (2: an accept must hold over the
/// comparison's and its replication's pairs pooled, [`assess_replicated`]).
pub const RULE: u32 = 2;

/// Beyond this many non-zero pairs the signed-rank p-value uses the normal approximation.
pub const EXACT_LIMIT: usize = 400;

/// Bootstrap resamples of the median.
pub const BOOTSTRAP: usize = 2000;

/// One round of the interleaved measurement: the figure of the baseline and of the variant
/// (lower is better), and which of the two ran first.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Pair {
    pub baseline: f64,
    pub variant: f64,
    pub baseline_first: bool,
}

/// When and how strictly to decide.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, serde::Deserialize)]
pub struct Plan {
    /// Pairs before the first look (>= 1).
    pub min_runs: usize,
    /// Pairs at the last look (>= `min_runs`).
    pub max_runs: usize,
    /// Pairs between two looks (>= 1).
    pub step: usize,
    /// `1 - alpha`, e.g. 0.99.
    pub confidence: f64,
    /// The smallest improvement worth keeping, as a fraction (0.02 = 2%).
    pub min_speedup: f64,
}

/// The defaults of `hip-unroll tune` (see the README for the simulation behind them).
pub const DEFAULT_MIN_RUNS: usize = 10;
pub const DEFAULT_MAX_RUNS: usize = 30;
/// The most pairs a comparison may take (`--min-runs`, `--max-runs`): far past any useful
/// figure, and small enough that nothing sized by it can exhaust memory.
pub const MAX_RUNS: usize = 10_000;
pub const DEFAULT_STEP: usize = 5;
pub const DEFAULT_CONFIDENCE: f64 = 0.99;
pub const DEFAULT_MIN_SPEEDUP: f64 = 0.02;

impl Default for Plan {
    fn default() -> Self {
        Plan {
            min_runs: DEFAULT_MIN_RUNS,
            max_runs: DEFAULT_MAX_RUNS,
            step: DEFAULT_STEP,
            confidence: DEFAULT_CONFIDENCE,
            min_speedup: DEFAULT_MIN_SPEEDUP,
        }
    }
}

/// A plan that cannot work.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PlanError {
    #[error("`min-runs` must be at least 1")]
    MinRuns,
    /// `setting` is `min-runs` or `max-runs`.
    #[error("`{}` must be at most {MAX_RUNS} pairs (got {got})", setting.key())]
    TooManyRuns {
        setting: crate::setting::Setting,
        got: usize,
    },
    #[error("`max-runs` ({max}) must be at least `min-runs` ({min})")]
    MaxRuns { min: usize, max: usize },
    #[error("`confidence` must be between 0.5 and 1 (exclusive), got {0}")]
    Confidence(f64),
    #[error("`min-speedup` must be a percentage from 0 to 1000, got {0}")]
    MinSpeedup(f64),
    #[error("with `max-runs` {max} no look can reach p <= {alpha:.2e} (the smallest exact signed-rank p-value of {max} pairs is {best:.2e}); raise `max-runs` or lower `confidence`")]
    TooFewRuns { max: usize, alpha: f64, best: f64 },
}

impl Plan {
    /// Check the plan. A first look too small to ever reach the per-look significance level is
    /// refused, since it would only spend runs.
    pub fn validate(&self) -> Result<(), PlanError> {
        if self.min_runs < 1 {
            return Err(PlanError::MinRuns);
        }
        for (setting, got) in [
            (crate::setting::Setting::MinRuns, self.min_runs),
            (crate::setting::Setting::MaxRuns, self.max_runs),
        ] {
            if got > MAX_RUNS {
                return Err(PlanError::TooManyRuns { setting, got });
            }
        }
        if self.max_runs < self.min_runs {
            return Err(PlanError::MaxRuns {
                min: self.min_runs,
                max: self.max_runs,
            });
        }
        if !(self.confidence > 0.5 && self.confidence < 1.0) {
            return Err(PlanError::Confidence(self.confidence));
        }
        if !(self.min_speedup >= 0.0 && self.min_speedup <= 10.0) {
            return Err(PlanError::MinSpeedup(self.min_speedup * 100.0));
        }
        let best = 0.5f64.powi(self.max_runs.min(1000) as i32);
        if best > self.alpha_per_look() {
            return Err(PlanError::TooFewRuns {
                max: self.max_runs,
                alpha: self.alpha_per_look(),
                best,
            });
        }
        Ok(())
    }

    /// The pair counts at which the data are examined.
    pub fn looks(&self) -> Vec<usize> {
        let step = self.step.max(1);
        let mut v = Vec::new();
        let mut n = self.min_runs.max(1);
        while n < self.max_runs {
            v.push(n);
            n += step;
        }
        v.push(self.max_runs.max(self.min_runs.max(1)));
        v
    }

    pub fn alpha(&self) -> f64 {
        1.0 - self.confidence
    }

    /// The significance level of one look (Bonferroni over the planned looks).
    pub fn alpha_per_look(&self) -> f64 {
        self.alpha() / self.looks().len() as f64
    }
}

/// Why a variant was not accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Rejection {
    /// `max_runs` reached and the test never said faster.
    NotFaster,
    /// Significantly faster, but by less than `min_speedup`.
    BelowMinSpeedup,
    /// The interval ruled out `min_speedup` before `max_runs`.
    Futile,
    /// Faster and significant, but it was the slower of two accepted variants of one loop
    /// (set by the search, not by [`assess`]).
    Superseded,
    /// Accepted, but the pairs measured right after did not show it faster again
    /// ([`replicated`]; set by the search).
    NotReplicated,
    /// Judged by several specs: one spec's interval does not rule out a slowdown beyond the
    /// minimum ([`judge`]).
    SpecSlower,
}

impl Rejection {
    pub fn id(self) -> &'static str {
        match self {
            Rejection::NotFaster => "not-faster",
            Rejection::BelowMinSpeedup => "below-min-speedup",
            Rejection::Futile => "futile",
            Rejection::Superseded => "superseded",
            Rejection::NotReplicated => "not-replicated",
            Rejection::SpecSlower => "spec-slower",
        }
    }
}

/// What to do after a look.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "verdict", content = "why", rename_all = "kebab-case")]
pub enum Verdict {
    /// Not a planned look yet, or no decision at this look: measure more pairs.
    Continue,
    Accept,
    Reject(Rejection),
}

/// The figures of a comparison after `n` pairs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Assessment {
    pub n: usize,
    /// `baseline / variant` as the median of the per-pair ratios (> 1: the variant is faster).
    pub speedup: f64,
    /// Bootstrap interval of `speedup` at the plan's confidence (`NaN` between looks).
    pub ci: (f64, f64),
    /// One-sided signed-rank p-value of "the variant is faster".
    pub p_value: f64,
    pub verdict: Verdict,
}

/// Assess the pairs measured so far. Only at a planned look (or beyond `max_runs`) can the
/// verdict be other than [`Verdict::Continue`].
pub fn assess(pairs: &[Pair], plan: &Plan) -> Assessment {
    let d = log_ratios(pairs);
    let n = d.len();
    let looks = plan.looks();
    let last = *looks.last().unwrap_or(&plan.max_runs);
    let at_look = looks.contains(&n) || n >= last;
    let (speedup, ci, p_value) = if n == 0 {
        (1.0, (1.0, 1.0), 1.0)
    } else {
        let med = median(&d);
        // The interval is only needed at a look (it is the costly part).
        let (lo, hi) = if at_look {
            bootstrap_median_ci(&d, plan.confidence)
        } else {
            (f64::NAN, f64::NAN)
        };
        // The interval of d maps to the interval of exp(-d) reversed.
        (
            (-med).exp(),
            ((-hi).exp(), (-lo).exp()),
            signed_rank_p_less(&d),
        )
    };
    let target = 1.0 + plan.min_speedup;
    let verdict = if !at_look {
        Verdict::Continue
    } else if p_value <= plan.alpha_per_look() && speedup >= target {
        Verdict::Accept
    } else if n >= last {
        if p_value <= plan.alpha_per_look() {
            Verdict::Reject(Rejection::BelowMinSpeedup)
        } else {
            Verdict::Reject(Rejection::NotFaster)
        }
    } else if ci.1 < target {
        Verdict::Reject(Rejection::Futile)
    } else {
        Verdict::Continue
    };
    Assessment {
        n,
        speedup,
        ci,
        p_value,
        verdict,
    }
}

/// The one-sided level of the replication of an accept.
pub const REPLICATION_ALPHA: f64 = 0.1;

/// The pairs of the replication of an accept that took `n` pairs: as many again (a variant that
/// needed more pairs to show its speedup needs them again), at least 5 (the fewest pairs whose
/// signed-rank test can reach [`REPLICATION_ALPHA`]).
pub fn replication_runs(n: usize) -> usize {
    n.max(5)
}

/// Whether the replication pairs of an accepted variant show it faster again: one-sided
/// signed-rank `p <= REPLICATION_ALPHA`. Returns the p-value too.
pub fn replicated(pairs: &[Pair]) -> (bool, f64) {
    let p = signed_rank_p_less(&log_ratios(pairs));
    (p <= REPLICATION_ALPHA, p)
}

/// The assessment of one comparison from its pairs and its replication's: an accept stands
/// only if the replication pairs show the variant faster again ([`replicated`]) **and** the
/// speedup over all the pairs (the comparison's and the replication's) still reaches the
/// minimum. Otherwise the verdict is `not-replicated`, with the replication's p-value.
///
/// The second condition corrects the winner's curse of looking: a comparison stops at the first
/// look whose estimate crosses `1 + min_speedup`, so the estimate at an accept is biased upward,
/// and a variant truly 1.5% faster was accepted (at 1.029x) in one of four tunes of the same
/// kernel on the H200 and rejected (1.010-1.016x) in the other three. The replication's pairs
/// are measured whatever the estimate does; pooled with the comparison's they centre the
/// decision on the minimum (simulated, 1% noise: a true 1.015x accepted 20% -> 5% of the time,
/// a true 1.025x 96% -> 92%; `cargo run --release -p tuner --example accept_curve`). An
/// accepted comparison reports the pooled figures (speedup and interval), the ones
/// [`choose`] compares variants by.
pub fn assess_replicated(pairs: &[Pair], again: &[Pair], plan: &Plan) -> Assessment {
    let a = assess(pairs, plan);
    if a.verdict != Verdict::Accept {
        return a;
    }
    let (ok, p) = replicated(again);
    let mut d = log_ratios(pairs);
    d.extend(log_ratios(again));
    let speedup = (-median(&d)).exp();
    let (lo, hi) = bootstrap_median_ci(&d, plan.confidence);
    let pooled = Assessment {
        speedup,
        ci: ((-hi).exp(), (-lo).exp()),
        ..a
    };
    if ok && speedup >= 1.0 + plan.min_speedup {
        pooled
    } else {
        Assessment {
            verdict: Verdict::Reject(Rejection::NotReplicated),
            p_value: p,
            ..pooled
        }
    }
}

/// One spec's pairs of a comparison, for [`judge`]: its pairs and its replication's.
#[derive(Debug, Clone, Copy)]
pub struct SpecPairs<'a> {
    pub pairs: &'a [Pair],
    pub again: &'a [Pair],
}

/// The judgement of a variant by every spec that measured it (see the module documentation).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Judgement {
    /// Each spec's own assessment (its replication applied), with its interval.
    pub specs: Vec<Assessment>,
    /// The geometric mean of the specs' speedups (one spec: its speedup).
    pub speedup: f64,
    /// Its interval at the plan's confidence (one spec: that spec's).
    pub ci: (f64, f64),
    /// Pairs measured, every spec's (replications not counted).
    pub n: usize,
    pub verdict: Verdict,
    /// With `spec-slower`: the first spec whose interval does not rule out the slowdown.
    pub slower: Option<usize>,
}

impl Judgement {
    /// The judgement as one assessment (the figures of the geometric mean; the p-value of a
    /// lone spec, else NaN: there is no one test of several).
    pub fn assessment(&self) -> Assessment {
        Assessment {
            n: self.n,
            speedup: self.speedup,
            ci: self.ci,
            p_value: match self.specs.as_slice() {
                [one] => one.p_value,
                _ => f64::NAN,
            },
            verdict: self.verdict,
        }
    }
}

/// Whether a comparison that is one of several specs judging a variant has measured enough
/// ([`judge`] needs its interval): its own rule has a verdict, and that is an accept, or the
/// last look, or an interval that rules out a slowdown beyond the minimum or lies wholly
/// below it (more pairs cannot help). A futile spec whose interval is still too wide goes on
/// to the next look instead of stopping, so that a spec the variant leaves unchanged does not
/// reject it for want of pairs. The looks stay the planned ones: each spec's own accepts keep
/// their error rate.
pub fn joint_done(pairs: &[Pair], plan: &Plan) -> bool {
    let a = assess(pairs, plan);
    let last = *plan.looks().last().unwrap_or(&plan.max_runs);
    let floor = slowdown_floor(plan);
    match a.verdict {
        Verdict::Continue => false,
        Verdict::Accept => true,
        Verdict::Reject(_) => a.n >= last || a.ci.0 >= floor || a.ci.1 < floor,
    }
}

/// The lower end of the interval a spec's speedup must keep, so that no spec is slower by more
/// than the minimum: `1 / (1 + min_speedup)`.
pub fn slowdown_floor(plan: &Plan) -> f64 {
    1.0 / (1.0 + plan.min_speedup)
}

/// Judge a variant from the pairs of every spec that measured it, in the order of the specs:
/// with one spec [`assess_replicated`], with several the rule of the module documentation. A
/// pure function of the pairs.
pub fn judge(specs: &[SpecPairs<'_>], plan: &Plan) -> Judgement {
    let per: Vec<Assessment> = specs
        .iter()
        .map(|s| {
            let mut a = assess_replicated(s.pairs, s.again, plan);
            if a.ci.0.is_nan() && !s.pairs.is_empty() {
                // Between looks (a comparison cut short): the interval all the same.
                let (lo, hi) = bootstrap_median_ci(&log_ratios(s.pairs), plan.confidence);
                a.ci = ((-hi).exp(), (-lo).exp());
            }
            a
        })
        .collect();
    let n = per.iter().map(|a| a.n).sum();
    if let [one] = per.as_slice() {
        let one = *one;
        return Judgement {
            specs: per,
            speedup: one.speedup,
            ci: one.ci,
            n,
            verdict: one.verdict,
            slower: None,
        };
    }
    if per.is_empty() {
        return Judgement {
            specs: per,
            speedup: 1.0,
            ci: (1.0, 1.0),
            n: 0,
            verdict: Verdict::Reject(Rejection::NotFaster),
            slower: None,
        };
    }
    let k = per.len() as f64;
    let speedup = (per.iter().map(|a| a.speedup.ln()).sum::<f64>() / k).exp();
    let d: Vec<Vec<f64>> = specs.iter().map(|s| log_ratios(s.pairs)).collect();
    let ci = geomean_ci(&d, plan.confidence);
    let floor = slowdown_floor(plan);
    // A NaN interval (no pairs) does not rule a slowdown out either.
    let slower = per
        .iter()
        .position(|a| a.ci.0.partial_cmp(&floor).is_none_or(|o| o.is_lt()));
    let verdict = if slower.is_some() {
        Verdict::Reject(Rejection::SpecSlower)
    } else if speedup < 1.0 + plan.min_speedup {
        Verdict::Reject(Rejection::BelowMinSpeedup)
    } else if ci.0.partial_cmp(&1.0).is_none_or(|o| o.is_le()) {
        Verdict::Reject(Rejection::NotFaster)
    } else if per
        .iter()
        .any(|a| a.verdict == Verdict::Reject(Rejection::NotReplicated))
    {
        Verdict::Reject(Rejection::NotReplicated)
    } else {
        Verdict::Accept
    };
    Judgement {
        specs: per,
        speedup,
        ci,
        n,
        verdict,
        slower,
    }
}

/// The interval of the geometric mean of several specs' speedups from their log ratios `d`
/// (one vector per spec): each resampled from its own values, the mean of their medians, at
/// `confidence` (percentile bootstrap, seeded from the numbers of values).
fn geomean_ci(d: &[Vec<f64>], confidence: f64) -> (f64, f64) {
    if d.iter().any(|x| x.is_empty()) || d.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    let mut seed = 0x6765_6f6d_6561_6e00u64;
    for x in d {
        seed = seed.rotate_left(13) ^ seed_of(x);
    }
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let mut bufs: Vec<Vec<f64>> = d.iter().map(|x| vec![0.0; x.len()]).collect();
    let k = d.len() as f64;
    let mut means = Vec::with_capacity(BOOTSTRAP);
    for _ in 0..BOOTSTRAP {
        let mut sum = 0.0;
        for (x, buf) in d.iter().zip(bufs.iter_mut()) {
            for slot in buf.iter_mut() {
                *slot = x[rng.random_range(0..x.len())];
            }
            buf.sort_by(f64::total_cmp);
            sum += median_sorted(buf);
        }
        means.push(sum / k);
    }
    means.sort_by(f64::total_cmp);
    let tail = (1.0 - confidence) / 2.0;
    let at = |q: f64| means[((q * (BOOTSTRAP - 1) as f64).round() as usize).min(BOOTSTRAP - 1)];
    // The interval of the mean log ratio maps to that of exp(-mean) reversed.
    ((-at(1.0 - tail)).exp(), (-at(tail)).exp())
}

/// How variant `a` compares with variant `b` of one loop: `ratio` = `a`'s speedup over `b`'s,
/// with its bootstrap interval at `confidence` (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Versus {
    pub ratio: f64,
    pub ci: (f64, f64),
}

impl Versus {
    /// `a` is significantly faster than `b`: the interval lies above 1.
    pub fn faster(&self) -> bool {
        self.ci.0 > 1.0
    }
}

/// Compare two variants from their pairs against the same baseline (see the module
/// documentation). Either side without pairs gives ratio 1 with an unbounded interval.
pub fn versus(a: &[Pair], b: &[Pair], confidence: f64) -> Versus {
    versus_specs(&[a], &[b], confidence)
}

/// [`versus`] for variants judged by several specs: `a[j]` and `b[j]` are the two variants'
/// pairs for spec `j` (the same specs, in the same order); the ratio is that of their geometric
/// means, `exp(mean_j (median(d_b_j) - median(d_a_j)))`, with a stratified bootstrap interval
/// (each spec's pairs resampled from their own). With one spec it is exactly [`versus`].
pub fn versus_specs(a: &[&[Pair]], b: &[&[Pair]], confidence: f64) -> Versus {
    let da: Vec<Vec<f64>> = a.iter().map(|p| log_ratios(p)).collect();
    let db: Vec<Vec<f64>> = b.iter().map(|p| log_ratios(p)).collect();
    if da.is_empty() || da.len() != db.len() || da.iter().chain(&db).any(|d| d.is_empty()) {
        return Versus {
            ratio: 1.0,
            ci: (0.0, f64::INFINITY),
        };
    }
    let k = da.len() as f64;
    let ratio = (da
        .iter()
        .zip(&db)
        .map(|(x, y)| median(y) - median(x))
        .sum::<f64>()
        / k)
        .exp();
    let mut seed = 0x7665_7273_7573_0000 ^ ((da[0].len() as u64) << 32 | db[0].len() as u64);
    for (x, y) in da.iter().zip(&db).skip(1) {
        seed = seed.rotate_left(17) ^ ((x.len() as u64) << 32 | y.len() as u64);
    }
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let mut ba: Vec<Vec<f64>> = da.iter().map(|d| vec![0.0; d.len()]).collect();
    let mut bb: Vec<Vec<f64>> = db.iter().map(|d| vec![0.0; d.len()]).collect();
    let mut diffs = Vec::with_capacity(BOOTSTRAP);
    for _ in 0..BOOTSTRAP {
        let mut sum = 0.0;
        for j in 0..da.len() {
            for x in ba[j].iter_mut() {
                *x = da[j][rng.random_range(0..da[j].len())];
            }
            for x in bb[j].iter_mut() {
                *x = db[j][rng.random_range(0..db[j].len())];
            }
            ba[j].sort_by(f64::total_cmp);
            bb[j].sort_by(f64::total_cmp);
            sum += median_sorted(&bb[j]) - median_sorted(&ba[j]);
        }
        diffs.push(sum / k);
    }
    diffs.sort_by(f64::total_cmp);
    let tail = (1.0 - confidence) / 2.0;
    let at = |q: f64| diffs[((q * (BOOTSTRAP - 1) as f64).round() as usize).min(BOOTSTRAP - 1)];
    Versus {
        ratio,
        ci: (at(tail).exp(), at(1.0 - tail).exp()),
    }
}

/// One accepted variant of a loop, for [`choose`]: `source` names whose pairs these are (a
/// variant with another's machine code shares its pairs and its `source`: the two are one
/// program, a tie by definition); `pairs` holds one set per spec that judged it (one set for
/// a loop of one objective), every contender of a loop with the same specs in the same order.
#[derive(Debug, Clone, Copy)]
pub struct Contender<'a> {
    pub source: &'a str,
    pub pairs: &'a [&'a [Pair]],
}

/// The choice among a loop's accepted variants.
#[derive(Debug, Clone, PartialEq)]
pub struct Choice {
    /// The index of the variant kept.
    pub kept: usize,
    /// For every other index, the kept one against it (`None` at `kept`).
    pub versus: Vec<Option<Versus>>,
}

/// Which of a loop's accepted variants to keep, `contenders` in the order of invasiveness (the
/// least invasive first): the first that no other is significantly faster than ([`versus`]);
/// if every one has a faster rival (the intervals are not transitive), the one of the largest
/// median speedup. `None` for no contender.
pub fn choose(contenders: &[Contender<'_>], confidence: f64) -> Option<Choice> {
    if contenders.is_empty() {
        return None;
    }
    let vs = |i: usize, j: usize| -> Versus {
        if contenders[i].source == contenders[j].source {
            Versus {
                ratio: 1.0,
                ci: (1.0, 1.0),
            }
        } else {
            versus_specs(contenders[i].pairs, contenders[j].pairs, confidence)
        }
    };
    let n = contenders.len();
    let kept = (0..n)
        .find(|&i| (0..n).all(|j| j == i || !vs(j, i).faster()))
        .unwrap_or_else(|| {
            let sp = |c: &Contender<'_>| -> f64 {
                -c.pairs.iter().map(|p| median(&log_ratios(p))).sum::<f64>()
            };
            (0..n)
                .max_by(|&x, &y| {
                    sp(&contenders[x])
                        .total_cmp(&sp(&contenders[y]))
                        .then(y.cmp(&x))
                })
                .unwrap_or(0)
        });
    let versus = (0..n).map(|j| (j != kept).then(|| vs(kept, j))).collect();
    Some(Choice { kept, versus })
}

/// Whether the baseline runs first in round `round` of the comparison `comparison`: rounds go
/// in blocks of two of opposite orders, the order of each block drawn from a hash of the
/// comparison and the block (so a comparison is always measured in the same order, and no
/// period of the machine lines up with the roles): `samplestats::a_first`, the one generator.
pub fn baseline_first(comparison: &str, round: usize) -> bool {
    samplestats::a_first(comparison, round)
}

/// `ln(variant / baseline)` per pair; pairs with a non-positive or non-finite figure are
/// skipped (backends never produce them; this keeps the function total).
pub fn log_ratios(pairs: &[Pair]) -> Vec<f64> {
    pairs
        .iter()
        .filter(|p| p.baseline > 0.0 && p.variant > 0.0)
        .map(|p| (p.variant / p.baseline).ln())
        .filter(|d| d.is_finite())
        .collect()
}

/// The median and the scaled MAD come from `samplestats`, the one home of these figures:
/// `spread` (the A/A check, the baselines) is [`mad_sigma`] of `ln(sample)`, 1.4826 times the
/// unscaled MAD that `bench` and `replay` report.
pub use samplestats::{mad_sigma, median, median_sorted};

/// The bootstrap's seed: a function of the number of values only, so that the bootstrap is a
/// pure function of the samples and the resampled indices do not change when every figure is
/// scaled (a seed taken from the values' bits made scaled samples resample differently).
fn seed_of(v: &[f64]) -> u64 {
    0x6869_702d_756e_726f ^ (v.len() as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

/// Percentile bootstrap interval of the median of `d` at `confidence` (two-sided).
pub fn bootstrap_median_ci(d: &[f64], confidence: f64) -> (f64, f64) {
    let n = d.len();
    if n == 0 {
        return (f64::NAN, f64::NAN);
    }
    if n == 1 {
        return (d[0], d[0]);
    }
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed_of(d));
    let mut meds = Vec::with_capacity(BOOTSTRAP);
    let mut buf = vec![0.0; n];
    for _ in 0..BOOTSTRAP {
        for slot in buf.iter_mut() {
            *slot = d[rng.random_range(0..n)];
        }
        buf.sort_by(f64::total_cmp);
        meds.push(median_sorted(&buf));
    }
    meds.sort_by(f64::total_cmp);
    let tail = (1.0 - confidence) / 2.0;
    let at = |q: f64| {
        let i = (q * (BOOTSTRAP - 1) as f64).round() as usize;
        meds[i.min(BOOTSTRAP - 1)]
    };
    (at(tail), at(1.0 - tail))
}

/// Ranks of `|d|` (zeros removed by the caller), doubled so that midranks are integers.
fn doubled_midranks(abs: &[f64]) -> Vec<u64> {
    let n = abs.len();
    let mut idx: Vec<usize> = (0..n).collect();
    idx.sort_by(|&a, &b| abs[a].total_cmp(&abs[b]));
    let mut ranks = vec![0u64; n];
    let mut i = 0;
    while i < n {
        let mut j = i;
        while j + 1 < n && abs[idx[j + 1]] == abs[idx[i]] {
            j += 1;
        }
        // Positions i..=j (0-based) share the midrank ((i+1)+(j+1))/2; doubled: i+j+2.
        for &k in &idx[i..=j] {
            ranks[k] = (i + j + 2) as u64;
        }
        i = j + 1;
    }
    ranks
}

/// One-sided Wilcoxon signed-rank p-value of `median(d) < 0`: the probability, with every
/// sign equally likely, of a positive-rank sum at most the observed one. Zeros are dropped;
/// ties get midranks (the exact permutation distribution of those midranks).
pub fn signed_rank_p_less(d: &[f64]) -> f64 {
    let nz: Vec<f64> = d.iter().copied().filter(|x| *x != 0.0).collect();
    let n = nz.len();
    if n == 0 {
        return 1.0;
    }
    let abs: Vec<f64> = nz.iter().map(|x| x.abs()).collect();
    let ranks = doubled_midranks(&abs);
    let t_obs: u64 = nz
        .iter()
        .zip(&ranks)
        .filter(|(x, _)| **x > 0.0)
        .map(|(_, r)| *r)
        .sum();
    if n > EXACT_LIMIT {
        // Normal approximation with tie correction, continuity-corrected.
        let t = t_obs as f64 / 2.0;
        let nf = n as f64;
        let mean = nf * (nf + 1.0) / 4.0;
        let sum_r2: f64 = ranks.iter().map(|r| (*r as f64 / 2.0).powi(2)).sum();
        let sd = (sum_r2 / 4.0).sqrt();
        let z = (t + 0.5 - mean) / sd;
        return Normal::standard().cdf(z);
    }
    // dist[s] = P(sum of doubled positive ranks = s), built one rank at a time.
    let total: u64 = ranks.iter().sum();
    let mut dist = vec![0.0f64; total as usize + 1];
    dist[0] = 1.0;
    let mut reach = 0usize;
    for &r in &ranks {
        let r = r as usize;
        for s in (0..=reach).rev() {
            let p = dist[s];
            if p != 0.0 {
                dist[s + r] += p * 0.5;
                dist[s] = p * 0.5;
            }
        }
        reach += r;
    }
    dist[..=(t_obs as usize)].iter().sum::<f64>().min(1.0)
}

/// What the A/A check saw on the baseline repeats.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Noise {
    /// Baseline samples examined.
    pub samples: usize,
    pub median: f64,
    /// Robust relative spread: 1.4826 MAD of `ln(sample)` (0.03 = about 3%).
    pub spread: f64,
    pub min: f64,
    pub max: f64,
    /// The A/A comparison of odd against even repeats, as a speedup and its p-value (two-sided).
    pub aa_speedup: f64,
    pub aa_p_value: f64,
    /// The smallest speedup the plan detects with 90% power at `max_runs` pairs under this
    /// spread (normal approximation of the signed-rank test).
    pub detectable: f64,
}

/// Why the baseline cannot be measured reliably.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum NoiseError {
    #[error("the baseline repeats spread by {spread:.1}% (1.4826 MAD of {samples} runs: median {median:.4}, min {min:.4}, max {max:.4}); the limit is {limit:.1}% (the `max-noise` setting)")]
    TooNoisy {
        spread: f64,
        limit: f64,
        samples: usize,
        median: f64,
        min: f64,
        max: f64,
    },
    #[error("two sets of baseline repeats disagree: the second set is {ratio:.3}x the first (p = {p:.2e}, {samples} runs, spread {spread:.1}%); the machine drifts or is busy in a way that interleaving cannot cancel")]
    Disagree {
        ratio: f64,
        p: f64,
        samples: usize,
        spread: f64,
    },
}

/// The A/A check: `samples` are baseline repeats in the order measured. Consecutive samples are
/// paired (1st with 2nd, 3rd with 4th, ...) exactly like an A/B comparison; the baseline fails
/// when its spread exceeds `max_noise` (a fraction) or when the pairs differ by at least
/// `min_speedup` with a two-sided p-value below `1 - confidence`.
pub fn aa_check(samples: &[f64], plan: &Plan, max_noise: f64) -> Result<Noise, NoiseError> {
    let logs: Vec<f64> = samples
        .iter()
        .filter(|x| **x > 0.0)
        .map(|x| x.ln())
        .collect();
    let spread = mad_sigma(&logs);
    let min = samples.iter().copied().fold(f64::INFINITY, f64::min);
    let max = samples.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let pairs: Vec<Pair> = samples
        .chunks_exact(2)
        .enumerate()
        .map(|(i, c)| Pair {
            baseline: c[0],
            variant: c[1],
            baseline_first: i % 2 == 0,
        })
        .collect();
    let d = log_ratios(&pairs);
    let p_less = signed_rank_p_less(&d);
    let neg: Vec<f64> = d.iter().map(|x| -x).collect();
    let p_more = signed_rank_p_less(&neg);
    let p = (2.0 * p_less.min(p_more)).min(1.0);
    let ratio = if d.is_empty() { 1.0 } else { median(&d).exp() };
    let z_a = Normal::standard().inverse_cdf(1.0 - plan.alpha_per_look());
    let z_b = Normal::standard().inverse_cdf(0.9);
    // sd of a pair's log ratio is sqrt(2) spread; 1/0.955 for the signed-rank test's efficiency.
    let detectable = ((z_a + z_b) * std::f64::consts::SQRT_2 * spread
        / (plan.max_runs as f64).sqrt()
        / 0.955f64.sqrt())
    .exp()
        - 1.0;
    let noise = Noise {
        samples: samples.len(),
        median: median(samples),
        spread,
        min,
        max,
        aa_speedup: 1.0 / ratio,
        aa_p_value: p,
        detectable,
    };
    if spread.is_nan() || spread > max_noise {
        return Err(NoiseError::TooNoisy {
            spread: spread * 100.0,
            limit: max_noise * 100.0,
            samples: samples.len(),
            median: noise.median,
            min,
            max,
        });
    }
    if p <= plan.alpha() && (ratio.ln().abs() >= (1.0 + plan.min_speedup).ln()) {
        return Err(NoiseError::Disagree {
            ratio,
            p,
            samples: samples.len(),
            spread: spread * 100.0,
        });
    }
    Ok(noise)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(d: &[f64]) -> Vec<Pair> {
        d.iter()
            .enumerate()
            .map(|(i, x)| Pair {
                baseline: 1.0,
                variant: x.exp(),
                baseline_first: i % 2 == 0,
            })
            .collect()
    }

    #[test]
    fn signed_rank_exact_small_cases() {
        // All negative: only the empty subset has sum 0 -> p = 2^-n.
        let d = [-1.0, -2.0, -3.0, -4.0, -5.0];
        assert!((signed_rank_p_less(&d) - 1.0 / 32.0).abs() < 1e-12);
        // One positive of rank 1: sums 0 and 1 (doubled 0 and 2) -> 2/32.
        let d = [0.5, -2.0, -3.0, -4.0, -5.0];
        assert!((signed_rank_p_less(&d) - 2.0 / 32.0).abs() < 1e-12);
        // All positive: p = 1.
        assert!((signed_rank_p_less(&[1.0, 2.0, 3.0]) - 1.0).abs() < 1e-12);
        // Zeros dropped; all zero -> 1.
        assert_eq!(signed_rank_p_less(&[0.0, 0.0]), 1.0);
        assert!((signed_rank_p_less(&[0.0, -1.0, -2.0]) - 0.25).abs() < 1e-12);
    }

    #[test]
    fn signed_rank_matches_r() {
        // R: wilcox.test(c(-1.2,-0.4,0.3,-2.1,-0.9,0.7,-1.5,-0.2), alternative="less")$p.value
        // = 0.0546875 (exact; V = 10).
        let d = [-1.2, -0.4, 0.3, -2.1, -0.9, 0.7, -1.5, -0.2];
        assert!((signed_rank_p_less(&d) - 0.0546875).abs() < 1e-9);
    }

    #[test]
    fn ties_use_midranks() {
        // |d| = 1,1,2: midranks 1.5,1.5,3. Positive: one of the 1s -> T = 1.5.
        // Sums over 8 sign patterns: {0,1.5,1.5,3,3,4.5,4.5,6}: P(T <= 1.5) = 3/8.
        let d = [1.0, -1.0, -2.0];
        assert!((signed_rank_p_less(&d) - 3.0 / 8.0).abs() < 1e-12);
    }

    #[test]
    fn normal_approximation_agrees_with_exact_near_the_limit() {
        let d: Vec<f64> = (0..EXACT_LIMIT)
            .map(|i| ((i * 7919) % 1000) as f64 / 1000.0 - 0.53)
            .collect();
        let exact = signed_rank_p_less(&d);
        let mut more = d.clone();
        more.push(-0.0001);
        let approx = signed_rank_p_less(&more);
        assert!((exact - approx).abs() < 0.01, "{exact} vs {approx}");
    }

    #[test]
    fn looks_and_alpha() {
        let p = Plan::default();
        assert_eq!(p.looks(), vec![10, 15, 20, 25, 30]);
        assert!((p.alpha_per_look() - 0.002).abs() < 1e-12);
        p.validate().unwrap();
        let p = Plan {
            min_runs: 3,
            max_runs: 5,
            ..Plan::default()
        };
        assert!(matches!(p.validate(), Err(PlanError::TooFewRuns { .. })));
        let p = Plan {
            min_runs: 12,
            max_runs: 12,
            ..Plan::default()
        };
        assert_eq!(p.looks(), vec![12]);
    }

    #[test]
    fn accepts_clear_speedups_and_rejects_small_ones() {
        let plan = Plan::default();
        // 10 pairs all about 20% faster.
        let d: Vec<f64> = (0..10)
            .map(|i| -(1.2f64).ln() + (i as f64 - 5.0) * 0.002)
            .collect();
        let a = assess(&pairs(&d), &plan);
        assert_eq!(a.verdict, Verdict::Accept, "{a:?}");
        // Replicated by pairs that say the same; not by pairs that say nothing.
        assert!(replicated(&pairs(&d)).0);
        let nothing = [
            0.03, -0.05, 0.02, -0.01, 0.04, -0.03, 0.01, -0.02, 0.05, -0.04,
        ];
        let (ok, p) = replicated(&pairs(&nothing));
        assert!(!ok && p > 0.3, "{p}");
        assert_eq!(replication_runs(10), 10);
        assert_eq!(replication_runs(2), 5);
        assert!((a.speedup - 1.2).abs() < 0.01);
        assert!(a.ci.0 <= a.speedup && a.speedup <= a.ci.1);
        // 1% faster, very consistently: significant but below 2% -> futile at the first look.
        let d: Vec<f64> = (0..10)
            .map(|i| -(1.01f64).ln() + (i as f64 - 5.0) * 0.0001)
            .collect();
        let a = assess(&pairs(&d), &plan);
        assert_eq!(a.verdict, Verdict::Reject(Rejection::Futile), "{a:?}");
        // Not at a look: continue whatever the data say.
        let a = assess(&pairs(&d[..9]), &plan);
        assert_eq!(a.verdict, Verdict::Continue);
    }

    #[test]
    fn orders_come_in_opposite_blocks_drawn_per_comparison() {
        for key in ["a", "b", "c"] {
            for block in 0..50 {
                assert_ne!(
                    baseline_first(key, 2 * block),
                    baseline_first(key, 2 * block + 1)
                );
            }
        }
        // Not the fixed A B, B A, ...: both block orders occur, and not always alternating.
        let firsts: Vec<bool> = (0..50).map(|b| baseline_first("a", 2 * b)).collect();
        let ab = firsts.iter().filter(|x| **x).count();
        assert!((15..=35).contains(&ab), "{ab}");
        assert!(firsts.windows(2).any(|w| w[0] == w[1]));
        assert_eq!(
            firsts,
            (0..50)
                .map(|b| baseline_first("a", 2 * b))
                .collect::<Vec<_>>()
        );
        assert_ne!(
            firsts,
            (0..50)
                .map(|b| baseline_first("b", 2 * b))
                .collect::<Vec<_>>()
        );
    }

    #[test]
    fn max_runs_ends_with_a_reason() {
        let plan = Plan::default();
        // Alternating +-10%: no direction, wide interval.
        let d: Vec<f64> = (0..30)
            .map(|i| if i % 2 == 0 { 0.1 } else { -0.1 } * (1.0 + i as f64 / 100.0))
            .collect();
        let a = assess(&pairs(&d), &plan);
        assert_eq!(a.verdict, Verdict::Reject(Rejection::NotFaster), "{a:?}");
        // Significant but 1.5%: below the minimum.
        let d: Vec<f64> = (0..30)
            .map(|i| -(1.015f64).ln() + ((i * 37) % 11) as f64 * 0.002 - 0.01)
            .collect();
        let a = assess(&pairs(&d), &plan);
        assert!(
            matches!(
                a.verdict,
                Verdict::Reject(Rejection::BelowMinSpeedup | Rejection::Futile)
            ),
            "{a:?}"
        );
    }

    #[test]
    fn assess_is_a_pure_function_of_the_samples() {
        let plan = Plan::default();
        let d: Vec<f64> = (0..20)
            .map(|i| ((i * 13) % 7) as f64 * 0.01 - 0.04)
            .collect();
        let a = assess(&pairs(&d), &plan);
        let b = assess(&pairs(&d), &plan);
        assert_eq!(a, b);
    }

    /// Pairs of a variant `speedup` times faster than the baseline, with seeded 3% log-normal
    /// noise on both sides.
    fn noisy(speedup: f64, n: usize, seed: u64) -> Vec<Pair> {
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        let mut z = || -> f64 {
            // Box-Muller.
            let (u, v): (f64, f64) = (rng.random_range(1e-12..1.0), rng.random_range(0.0..1.0));
            (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
        };
        (0..n)
            .map(|i| Pair {
                baseline: 10.0 * (0.03 * z()).exp(),
                variant: 10.0 / speedup * (0.03 * z()).exp(),
                baseline_first: i % 2 == 0,
            })
            .collect()
    }

    #[test]
    fn versus_tells_a_real_difference_from_noise() {
        let a = noisy(1.25, 20, 1);
        let b = noisy(1.25, 20, 2);
        let c = noisy(1.05, 20, 3);
        let v = versus(&a, &b, 0.99);
        assert!(!v.faster() && v.ci.0 < 1.0 && v.ci.1 > 1.0, "{v:?}");
        let v = versus(&a, &c, 0.99);
        assert!(v.faster() && (v.ratio - 1.25 / 1.05).abs() < 0.05, "{v:?}");
        assert!(!versus(&c, &a, 0.99).faster());
        // A pure function of the pairs.
        assert_eq!(versus(&a, &c, 0.99), versus(&a, &c, 0.99));
        // No pairs on a side: never significant.
        assert!(!versus(&a, &[], 0.99).faster());
    }

    #[test]
    fn choose_keeps_the_least_invasive_that_nothing_beats() {
        let (p, m, b) = (
            noisy(1.20, 20, 11),
            noisy(1.21, 20, 12),
            noisy(1.50, 20, 13),
        );
        let (pragma, manual, big) = ([p.as_slice()], [m.as_slice()], [b.as_slice()]);
        fn c<'a>(source: &'a str, pairs: &'a [&'a [Pair]]) -> Contender<'a> {
            Contender { source, pairs }
        }
        // Within noise: the first (least invasive) is kept, the other is a tie.
        let ch = choose(&[c("p", &pragma), c("m", &manual)], 0.99).unwrap();
        assert_eq!(ch.kept, 0);
        assert!(ch.versus[0].is_none() && !ch.versus[1].unwrap().faster());
        // A significantly faster one wins; the slower one is superseded.
        let ch = choose(&[c("p", &pragma), c("b", &big), c("m", &manual)], 0.99).unwrap();
        assert_eq!(ch.kept, 1);
        assert!(ch.versus[0].unwrap().faster() && ch.versus[2].unwrap().faster());
        // The same program twice (one source): a tie, exactly 1.
        let ch = choose(&[c("p", &pragma), c("p", &pragma)], 0.99).unwrap();
        assert_eq!(ch.kept, 0);
        assert_eq!(ch.versus[1].unwrap().ci, (1.0, 1.0));
        assert!(choose(&[], 0.99).is_none());
        // Whatever order they finished in: sorted by invasiveness, the same choice.
        let named = [(1, "m", &manual), (0, "p", &pragma), (2, "b", &big)];
        let mut orders = vec![named.to_vec()];
        orders.push(vec![named[2], named[0], named[1]]);
        orders.push(vec![named[1], named[2], named[0]]);
        let kept: Vec<&str> = orders
            .into_iter()
            .map(|mut o| {
                o.sort_by_key(|x| x.0);
                let cs: Vec<Contender<'_>> = o.iter().map(|x| c(x.1, x.2)).collect();
                o[choose(&cs, 0.99).unwrap().kept].1
            })
            .collect();
        assert_eq!(kept, ["b", "b", "b"]);
    }

    #[test]
    fn aa_check_reports_spread_and_refuses_noise_and_disagreement() {
        let plan = Plan::default();
        let quiet: Vec<f64> = (0..20)
            .map(|i| 10.0 * (1.0 + ((i * 7) % 5) as f64 * 0.002))
            .collect();
        let n = aa_check(&quiet, &plan, 0.2).unwrap();
        assert!(
            n.spread < 0.01 && n.detectable > 0.0 && n.detectable < 0.05,
            "{n:?}"
        );
        let noisy: Vec<f64> = (0..20)
            .map(|i| 10.0 * (1.0 + ((i * 7) % 5) as f64 * 0.2))
            .collect();
        assert!(matches!(
            aa_check(&noisy, &plan, 0.2),
            Err(NoiseError::TooNoisy { .. })
        ));
        // Every second run 10% slower: the two sets disagree.
        let bimodal: Vec<f64> = (0..20)
            .map(|i| if i % 2 == 0 { 10.0 } else { 11.0 } + (i as f64) * 0.001)
            .collect();
        let e = aa_check(&bimodal, &plan, 0.2).unwrap_err();
        assert!(matches!(e, NoiseError::Disagree { .. }), "{e}");
    }
}
