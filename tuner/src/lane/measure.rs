//! Measurement on a lane: the baseline's repeats (the A/A check's samples) and, for each
//! prepared variant in turn, interleaved pairs against its baseline (A B, B A, ...) until
//! [`crate::stats::assess`] gives a verdict. Every sample goes to the coordinator as it is
//! taken; the coordinator decides from those same samples, so a decision is a pure function of
//! what the ledger holds. One sample at a time: nothing else of this lane is measured meanwhile.

use super::prepare::{BaseRef, Prepared, Ready};
use super::{Emit, Event, ItemResult, Lane};
use crate::backend::{Backend, Failure};
use crate::error::Error;
use crate::report::Status;
use crate::stats::{self, Pair, Verdict};

impl<B: Backend> Lane<'_, B> {
    /// Measure a prepared task; every pinned working copy is released, whatever happens.
    pub(crate) fn measure(&self, p: Prepared<B::Prepared>, emit: Emit<'_>) -> Result<(), Error> {
        match p {
            Prepared::Baseline {
                id,
                base,
                samples,
                comparison,
                kernels,
            } => {
                let r = (|| {
                    for k in 0..samples {
                        let v = self.sample_base(&base)?;
                        emit(Event::Sample {
                            comparison: comparison.clone(),
                            attempt: 0,
                            round: k / 2,
                            role: "baseline".into(),
                            value: v,
                        });
                    }
                    let kernels = if kernels {
                        self.backend.kernels(&base.prepared)
                    } else {
                        None
                    };
                    emit(Event::Baseline { id, kernels });
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
                    match self.pairs(&base, &r, emit) {
                        Ok(Ok(())) => emit(Event::Item {
                            key: r.item.key.clone(),
                            attempt: r.item.attempt,
                            result: ItemResult::Measured { skipped: r.skipped },
                        }),
                        Ok(Err(f)) => {
                            if let Err(e) = self.check_stop() {
                                result = Err(e);
                                continue;
                            }
                            emit(Event::Item {
                                key: r.item.key.clone(),
                                attempt: r.item.attempt,
                                result: ItemResult::Failed {
                                    status: Status::CheckFailed,
                                    reason: format!("during measurement: {}", f.message()),
                                },
                            })
                        }
                        Err(e) => result = Err(e),
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

    /// One sample of the baseline: a failure stops the tune.
    fn sample_base(&self, base: &BaseRef<B::Prepared>) -> Result<f64, Error> {
        self.check_stop()?;
        let slot = crate::backend::Slot {
            index: base.entry,
            ..self.backend_slot(&base.root)
        };
        match self.backend.sample(&slot, &base.prepared)? {
            Ok(v) => Ok(v),
            Err(f) => Err(Error::Baseline(format!(
                "it failed while being measured: {}",
                f.message()
            ))),
        }
    }

    /// Interleaved rounds of the baseline against the variant until a verdict.
    fn pairs(
        &self,
        base: &BaseRef<B::Prepared>,
        var: &Ready<B::Prepared>,
        emit: Emit<'_>,
    ) -> Result<Result<(), Failure>, Error> {
        let vslot = crate::backend::Slot {
            index: var.entry,
            ..self.backend_slot(&var.root)
        };
        let sample_variant = || -> Result<Result<f64, Failure>, Error> {
            self.check_stop()?;
            self.backend.sample(&vslot, &var.prepared)
        };
        let mut pairs: Vec<Pair> = Vec::new();
        loop {
            let round = pairs.len();
            let baseline_first = round.is_multiple_of(2);
            let (b, v) = if baseline_first {
                let b = self.sample_base(base)?;
                match sample_variant()? {
                    Ok(v) => (b, v),
                    Err(f) => return Ok(Err(f)),
                }
            } else {
                let v = match sample_variant()? {
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
                emit(Event::Sample {
                    comparison: var.item.key.clone(),
                    attempt: var.item.attempt,
                    round,
                    role: role.into(),
                    value,
                });
            }
            pairs.push(Pair {
                baseline: b,
                variant: v,
                baseline_first,
            });
            if stats::assess(&pairs, &self.cx.plan).verdict != Verdict::Continue {
                return Ok(Ok(()));
            }
        }
    }
}
