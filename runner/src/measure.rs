//! `bench`'s measurement: untimed warm-up launches, then timed launches of the baseline and
//! (with a variant) the variant interleaved in rounds of opposite orders (A B, B A: `samplestats::round_order`) on identical inputs, the inputs checked
//! unchanged at the end, each kernel's samples summarised, and the variant's outputs compared
//! with the baseline's.

use crate::compare::OutputDiff;
use crate::error::RunnerError;
use crate::session::{KernelId, Session};
use crate::stats::{summarize, Summary};

/// What [`interleaved`] measured, in the order of its kernels (baseline first).
#[derive(Debug, Clone)]
pub struct Measured {
    /// Milliseconds of each timed launch, per kernel.
    pub samples: Vec<Vec<f64>>,
    pub summaries: Vec<Summary>,
    /// Variant median / baseline median (with a variant).
    pub ratio: Option<f64>,
    /// The variant's outputs outside their tolerance of the session's baseline's (with a
    /// variant; empty: they agree).
    pub differences: Option<Vec<OutputDiff>>,
}

/// Times `baseline` and `variant` (if any): `warmup` untimed rounds, then `iterations` rounds,
/// each launching every kernel once in turn. `iterations` must be at least 1
/// ([`crate::session::check_counts`]).
pub fn interleaved(
    session: &mut Session,
    baseline: KernelId,
    variant: Option<KernelId>,
    warmup: u64,
    iterations: u64,
) -> Result<Measured, RunnerError> {
    let ids: Vec<KernelId> = std::iter::once(baseline).chain(variant).collect();
    // Rounds in blocks of opposite orders (A B, B A), the one generator of `samplestats`.
    let order = |round: u64| -> Vec<usize> {
        match ids.len() {
            2 => samplestats::round_order("bench", round as usize).to_vec(),
            _ => vec![0],
        }
    };
    for round in 0..warmup {
        for slot in order(round) {
            session.sample(ids[slot])?;
        }
    }
    let mut samples: Vec<Vec<f64>> = vec![Vec::new(); ids.len()];
    for round in 0..iterations {
        for slot in order(warmup + round) {
            samples[slot].push(session.sample(ids[slot])?);
        }
    }
    session.check_inputs()?;
    let differences = variant.map(|v| session.differences(v).to_vec());
    let summaries: Vec<Summary> = samples.iter().filter_map(|s| summarize(s)).collect();
    if summaries.len() != ids.len() {
        return Err(RunnerError::Usage(
            "no timed launch: at least one iteration is needed".into(),
        ));
    }
    let ratio = (summaries.len() == 2).then(|| summaries[1].median / summaries[0].median);
    Ok(Measured {
        samples,
        summaries,
        ratio,
        differences,
    })
}
