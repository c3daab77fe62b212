//! Measurement on a lane: the baseline's repeats (the A/A check's samples, after one warm-up
//! run) and, for each prepared variant in turn, a warm-up pair and then interleaved pairs
//! against its baseline, in blocks of two of opposite orders ([`crate::stats::baseline_first`]),
//! until [`crate::stats::assess`] gives a verdict; an accept is then measured again by fresh
//! pairs (recorded under `replicate:KEY`) and stands only if they say the same
//! ([`crate::stats::replicated`]). Before the samples of a task the working copies' file system
//! is synced (without overlap: the CPU measures), so that no write-back of a build runs during
//! a measured run. Every sample goes to the coordinator as it is
//! taken; the coordinator decides from those same samples, so a decision is a pure function of
//! what the ledger holds. One sample at a time: nothing else of this lane is measured meanwhile.
//!
//! A variant of the same machine code as one measured here (its twin, [`super::prepare`])
//! ends with it, as [`ItemResult::SameCodeAs`], without a run.

use super::prepare::{BaseRef, Prepared, Ready};
use super::{span, Emit, Event, ItemResult, Lane, Phase};
use crate::backend::{Backend, Failure};
use crate::error::Error;
use crate::report::Status;
use crate::stats::{self, Pair, Verdict};
use std::time::Instant;

/// The comparison id of an accept's replication pairs.
pub fn replication_id(key: &str) -> String {
    format!("replicate:{key}")
}

impl<B: Backend> Lane<'_, B> {
    /// Measure a prepared task; every pinned working copy is released, whatever happens.
    pub(crate) fn measure(&self, p: Prepared<B::Prepared>, emit: Emit<'_>) -> Result<(), Error> {
        // With overlap the next task's builds write meanwhile anyway, and a GPU's figure does
        // not feel the write-back: only a lane that measures on the CPU settles.
        if !self.cx.overlap {
            self.settle();
        }
        match p {
            Prepared::Baseline {
                id,
                base,
                samples,
                comparison,
                kernels,
            } => {
                let t0 = Instant::now();
                let r = (|| {
                    // A warm-up run, recorded but not counted (the first run after a build).
                    let (v, secs) = self.sample_base(&base)?;
                    emit(Event::Sample {
                        comparison: comparison.clone(),
                        attempt: 0,
                        round: 0,
                        role: "baseline-warm-up".into(),
                        value: v,
                        seconds: secs,
                    });
                    for k in 0..samples {
                        let (v, secs) = self.sample_base(&base)?;
                        emit(Event::Sample {
                            comparison: comparison.clone(),
                            attempt: 0,
                            round: k / 2,
                            role: "baseline".into(),
                            value: v,
                            seconds: secs,
                        });
                    }
                    let kernels = if kernels {
                        self.backend.kernels(&base.prepared)
                    } else {
                        None
                    };
                    let launches_per_sample = self.backend.launches_per_sample(&base.prepared);
                    emit(span(Phase::Measure, t0.elapsed().as_secs_f64()));
                    emit(Event::Baseline {
                        id,
                        kernels,
                        launches_per_sample,
                    });
                    Ok(())
                })();
                self.release(base.entry);
                r
            }
            Prepared::Compare { base, ready } => {
                let mut result = Ok(());
                let mut entries = Vec::new();
                for r in ready {
                    entries.push(r.entry);
                    if result.is_err() {
                        continue;
                    }
                    let item = |result: ItemResult| Event::Item {
                        key: r.item.key.clone(),
                        attempt: r.item.attempt,
                        result,
                        occupancy: r.occupancy.clone(),
                        code: r.code.clone(),
                    };
                    let t0 = Instant::now();
                    let measured = self.compare(&base, &r, emit);
                    emit(span(Phase::Measure, t0.elapsed().as_secs_f64()));
                    match measured {
                        Ok(Ok(())) => emit(item(ItemResult::Measured {
                            skipped: r.skipped.clone(),
                        })),
                        Ok(Err(f)) => {
                            if let Some(e) = self.not_the_variants(f.message()) {
                                result = Err(e);
                                continue;
                            }
                            emit(item(ItemResult::Failed {
                                status: Status::CheckFailed,
                                reason: format!("during measurement: {}", f.message()),
                            }))
                        }
                        Err(e) => {
                            result = Err(e);
                            continue;
                        }
                    }
                    // Decided: the same machine code takes this decision.
                    self.decided_code(&base.state, r.code.as_ref(), &r.item.key);
                    for t in &r.twins {
                        emit(t.event(ItemResult::SameCodeAs {
                            key: r.item.key.clone(),
                        }));
                    }
                }
                for e in entries {
                    self.release(e);
                }
                self.release(base.entry);
                result
            }
        }
    }

    /// One sample of the baseline and the seconds it took: a failure stops the tune.
    fn sample_base(&self, base: &BaseRef<B::Prepared>) -> Result<(f64, f64), Error> {
        self.check_stop()?;
        let slot = crate::backend::Slot {
            index: base.entry,
            ..self.backend_slot(&base.root, base.spec)
        };
        let t0 = Instant::now();
        match self.backend.sample(&slot, &base.prepared)? {
            Ok(v) => Ok((v, t0.elapsed().as_secs_f64())),
            Err(f) => Err(Error::Baseline(format!(
                "it failed while being measured: {}",
                f.message()
            ))),
        }
    }

    /// The pairs of one comparison: until a verdict, and for an accept (where the item asks
    /// for it) the replication pairs.
    fn compare(
        &self,
        base: &BaseRef<B::Prepared>,
        var: &Ready<B::Prepared>,
        emit: Emit<'_>,
    ) -> Result<Result<(), Failure>, Error> {
        let plan = &self.cx.plan;
        let key = &var.item.key;
        let joint = var.item.joint;
        let decided = |p: &[Pair]| {
            if joint {
                stats::joint_done(p, plan)
            } else {
                stats::assess(p, plan).verdict != Verdict::Continue
            }
        };
        let pairs = match self.interleave(key, base, var, true, &decided, emit)? {
            Ok(p) => p,
            Err(f) => return Ok(Err(f)),
        };
        let a = stats::assess(&pairs, plan);
        if a.verdict != Verdict::Accept || !var.item.replicate {
            return Ok(Ok(()));
        }
        // An accept stands only if the pairs measured right after say the same.
        let n = stats::replication_runs(a.n);
        let again = self.interleave(
            &replication_id(key),
            base,
            var,
            false,
            &|p: &[Pair]| p.len() >= n,
            emit,
        )?;
        Ok(again.map(|_| ()))
    }

    /// Measure the baseline against the variant in rounds of one run each until `done` says
    /// so, every sample sent as it is taken under `comparison`: with `warm_up` a warm-up round
    /// first (`baseline-warm-up`, `variant-warm-up`, not counted), then the rounds in the order
    /// [`stats::baseline_first`] gives. A failure of the variant ends the comparison
    /// (`Ok(Err)`); one of the baseline is an error.
    fn interleave(
        &self,
        comparison: &str,
        base: &BaseRef<B::Prepared>,
        var: &Ready<B::Prepared>,
        warm_up: bool,
        done: &dyn Fn(&[Pair]) -> bool,
        emit: Emit<'_>,
    ) -> Result<Result<Vec<Pair>, Failure>, Error> {
        let vslot = crate::backend::Slot {
            index: var.entry,
            ..self.backend_slot(&var.root, base.spec)
        };
        let variant = || -> Result<Result<(f64, f64), Failure>, Error> {
            self.check_stop()?;
            let t0 = Instant::now();
            Ok(self
                .backend
                .sample(&vslot, &var.prepared)?
                .map(|v| (v, t0.elapsed().as_secs_f64())))
        };
        let send = |round: usize, role: &str, (value, seconds): (f64, f64)| {
            emit(Event::Sample {
                comparison: comparison.to_string(),
                attempt: var.item.attempt,
                round,
                role: role.into(),
                value,
                seconds,
            })
        };
        if warm_up {
            let b = self.sample_base(base)?;
            send(0, "baseline-warm-up", b);
            match variant()? {
                Ok(v) => send(0, "variant-warm-up", v),
                Err(f) => return Ok(Err(f)),
            }
        }
        let mut pairs: Vec<Pair> = Vec::new();
        loop {
            let round = pairs.len();
            let baseline_first = stats::baseline_first(comparison, round);
            let (b, v) = if baseline_first {
                let b = self.sample_base(base)?;
                match variant()? {
                    Ok(v) => (b, v),
                    Err(f) => return Ok(Err(f)),
                }
            } else {
                let v = match variant()? {
                    Ok(v) => v,
                    Err(f) => return Ok(Err(f)),
                };
                (self.sample_base(base)?, v)
            };
            let order = if baseline_first {
                [("baseline", b), ("variant", v)]
            } else {
                [("variant", v), ("baseline", b)]
            };
            for (role, value) in order {
                send(round, role, value);
            }
            pairs.push(Pair {
                baseline: b.0,
                variant: v.0,
                baseline_first,
            });
            if done(&pairs) {
                return Ok(Ok(pairs));
            }
        }
    }
}
