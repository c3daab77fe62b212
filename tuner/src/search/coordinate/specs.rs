//! Several objectives (the `bench` backend's launch specs, [`crate::objective`]): a variant of
//! a loop is measured by every spec whose kernel reaches the loop, each spec its own
//! comparison (its own key, `KEY@DIGEST`, its own lane, its own stopping: with several specs
//! [`stats::joint_done`]), and decided from all of them at once by [`stats::judge`] (no spec
//! slower beyond the minimum, the geometric mean gaining the minimum). Each spec has its own
//! baseline and A/A check, made when a comparison first needs it; a spec whose baseline fails
//! (or is too noisy) is failed: its comparisons are dropped, the loops it alone judged are
//! `not-run`, and the report's `specs` says why in one line. A decision made without one of its
//! specs is reported but not stored (a later run with the spec fixed decides it again).
//!
//! A spec that leaves the variant's machine code unchanged (`same-code` for that spec's
//! compile) has nothing to say about it: the variant is judged by the specs it changes, and it
//! is `same-code` only when it changes none.

use super::{pairs_of, Batch, Coordinator, Decided, Ended, Finding, Flight, Job, Pending, Sample};
use crate::devices::Device;
use crate::discover::{Discovery, LoopInfo};
use crate::error::Error;
use crate::lane::{ItemResult, StateSpec, Task};
use crate::ledger;
use crate::objective::{self, Objective};
use crate::report::{self, JudgedBy, Occupancy, SpecOutcome, SpecStatus, Status};
use crate::stats::{self, Pair, SpecPairs, Verdict};
use crate::workcopy::Overlay;
use pipeline::Mode;
use std::collections::BTreeSet;
use std::path::PathBuf;

/// A spec's baseline and A/A check in this tune.
#[derive(Debug, Default)]
pub(crate) struct SpecRun {
    /// Why the spec cannot be used (it does not load, its baseline fails or is too noisy).
    pub failed: Option<String>,
    /// The baseline task in flight.
    pub task: Option<u64>,
    pub samples: Vec<f64>,
    /// The baseline task has sent its samples.
    pub finished: bool,
    /// The A/A check passed: its comparisons may go.
    pub done: bool,
    pub baseline: Option<(ledger::Baseline, (f64, f64))>,
    /// Launches per sample of its baseline where the backend batches them.
    pub launches_per_sample: Option<u32>,
}

impl SpecRun {
    pub fn all(objectives: &[Objective]) -> Vec<SpecRun> {
        objectives
            .iter()
            .map(|o| SpecRun {
                failed: o.failed.clone(),
                ..SpecRun::default()
            })
            .collect()
    }
}

/// The spec of a comparison that is one spec's part of a decision.
#[derive(Debug, Clone)]
pub(crate) struct SpecJob {
    pub spec: usize,
    /// The decision's key.
    pub parent: String,
    /// Other specs judge the variant too.
    pub joint: bool,
}

/// How one spec's comparison ended.
#[derive(Debug, Clone)]
pub(crate) enum PartResult {
    Measured {
        pairs: Vec<Pair>,
        again: Vec<Pair>,
        skipped: Option<String>,
    },
    Failed(Status, String),
    SameCode,
}

/// One spec's finished part of a decision.
pub(crate) struct Part {
    spec: usize,
    result: PartResult,
    device: Device,
    occupancy: Option<Occupancy>,
    /// The decision key of the variant whose measurement this part took: its machine code was
    /// that variant's (no run spent).
    twin: Option<String>,
}

/// A variant waiting for its specs.
pub(crate) struct Parts {
    variant: Pending,
    base: String,
    need: usize,
    got: Vec<Part>,
    /// Specs that failed before measuring it.
    dropped: Vec<usize>,
}

/// `text` on one line.
fn one_line(text: &str) -> String {
    let t: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let t = t.join("; ");
    if t.chars().count() > 300 {
        let cut: String = t.chars().take(300).collect();
        format!("{cut}...")
    } else {
        t
    }
}

impl<'a, 'd> Coordinator<'a, 'd> {
    /// Whether the backend has several objectives (specs).
    pub(crate) fn multi(&self) -> bool {
        !self.s.objectives.is_empty()
    }

    fn objective(&self, i: usize) -> &Objective {
        &self.s.objectives[i]
    }

    /// The specs judging loop `l` (failed ones included, the caller leaves them out), or why
    /// no spec can.
    pub(super) fn loop_specs(&self, disc: &Discovery, l: &LoopInfo) -> Result<Vec<usize>, String> {
        let all = objective::judges(self.s.objectives, disc, l);
        if all.is_empty() {
            let kernels: Vec<String> = disc.reaching(l).into_iter().map(|(_, k)| k).collect();
            return Err(if kernels.is_empty() {
                format!("no spec: no kernel reaches {}", l.function)
            } else {
                format!(
                    "no spec launches {} (the kernel{} reaching it)",
                    kernels.join(", "),
                    if kernels.len() == 1 { "" } else { "s" }
                )
            });
        }
        if all.iter().all(|&i| self.spec_runs[i].failed.is_some()) {
            return Err(self.failed_specs_text(&all));
        }
        Ok(all)
    }

    /// Why the loops of the failed specs `specs` are not tuned.
    pub(super) fn failed_specs_text(&self, specs: &[usize]) -> String {
        let names: Vec<String> = specs
            .iter()
            .filter(|&&i| self.spec_runs[i].failed.is_some())
            .map(|&i| self.objective(i).name.clone())
            .collect();
        format!(
            "spec-failed: its spec{} {} failed (see the report's specs)",
            if names.len() == 1 { "" } else { "s" },
            names.join(", ")
        )
    }

    /// The decision key of a variant judged by `judges`.
    pub(super) fn judged_key(&self, key: &str, judges: &[usize]) -> String {
        let digests: Vec<&str> = judges
            .iter()
            .map(|&i| self.objective(i).digest.as_str())
            .collect();
        objective::judged_key(key, &digests)
    }

    /// The comparison key of spec `i`'s part of the decision `key`.
    fn spec_key(&self, key: &str, i: usize) -> String {
        objective::spec_key(key, &self.objective(i).digest)
    }

    /// The settings hash of spec `i`'s baseline records.
    fn spec_settings(&self, i: usize) -> String {
        format!("{}:{}", self.s.settings_hash, self.objective(i).digest)
    }

    fn spec_aa_comparison(&self, i: usize) -> String {
        format!("aa:{}:{}", self.spec_settings(i), self.s.tree.hash)
    }

    /// The spec whose A/A repeats `comparison` is.
    pub(super) fn spec_aa_of(&self, comparison: &str) -> Option<usize> {
        if !self.multi() || !comparison.starts_with("aa:") {
            return None;
        }
        (0..self.spec_runs.len())
            .find(|&i| self.spec_runs[i].task.is_some() && self.spec_aa_comparison(i) == comparison)
    }

    /// Whether a batch for objective `spec` may go to a lane: its spec's baseline is checked.
    pub(super) fn spec_ready(&self, spec: Option<usize>) -> bool {
        spec.is_none_or(|i| self.spec_runs[i].done)
    }

    /// Each judge's figures of a decision taken from the ledger, from the samples recorded
    /// under its specs' comparison keys (the same pure function of the samples).
    pub(super) fn reused_judgement(&self, d: &mut Decided, judges: &[usize]) -> Result<(), Error> {
        let mut got: Vec<(usize, Vec<Pair>, Vec<Pair>)> = Vec::new();
        for &i in judges {
            let (pairs, again) = self
                .s
                .ledger
                .comparison_pairs(&d.variant.key, &self.spec_key(&d.variant.key, i))?;
            if !pairs.is_empty() {
                got.push((i, pairs, again));
            }
        }
        if got.is_empty() {
            return Ok(());
        }
        let sp: Vec<SpecPairs<'_>> = got
            .iter()
            .map(|(_, p, a)| SpecPairs { pairs: p, again: a })
            .collect();
        let j = stats::judge(&sp, &self.s.settings.plan);
        d.judged_by = Some(self.judged_by(&got, &j));
        d.spec_pairs = got
            .iter()
            .map(|(_, p, a)| p.iter().chain(a).copied().collect())
            .collect();
        d.pairs = got.iter().flat_map(|(_, p, _)| p.iter().copied()).collect();
        d.again = got.iter().flat_map(|(_, _, a)| a.iter().copied()).collect();
        Ok(())
    }

    fn judged_by(
        &self,
        got: &[(usize, Vec<Pair>, Vec<Pair>)],
        j: &stats::Judgement,
    ) -> Vec<JudgedBy> {
        got.iter()
            .zip(&j.specs)
            .map(|((i, pairs, _), a)| JudgedBy {
                spec: self.objective(*i).name.clone(),
                kernel: self.objective(*i).kernel.clone(),
                speedup: a.speedup,
                interval: [a.ci.0, a.ci.1],
                ratios: pairs.iter().map(|p| p.baseline / p.variant).collect(),
            })
            .collect()
    }

    /// Queue the comparisons of `pending` (variants of chain `c`'s active loop against `base`),
    /// one per judging spec each, in batches of at most `--jobs` of one spec.
    pub(super) fn queue_judged(
        &mut self,
        c: usize,
        base: &StateSpec,
        pending: Vec<Pending>,
        judges: &[usize],
    ) {
        let settings = self.s.settings;
        let joint = judges.len() > 1;
        if let Some(a) = self.chains[c].active.as_mut() {
            for p in &pending {
                a.parts.insert(
                    p.key.clone(),
                    Parts {
                        variant: p.clone(),
                        base: base.hash.clone(),
                        need: judges.len(),
                        got: Vec::new(),
                        dropped: Vec::new(),
                    },
                );
            }
        }
        for &i in judges {
            let jobs: Vec<Job> = pending
                .iter()
                .map(|p| Job {
                    variant: Pending {
                        key: self.spec_key(&p.key, i),
                        ..p.clone()
                    },
                    chain: Some(c),
                    attempt: 0,
                    same_code: settings.skip_same_code,
                    spec: Some(SpecJob {
                        spec: i,
                        parent: p.key.clone(),
                        joint,
                    }),
                })
                .collect();
            for chunk in jobs.chunks(settings.jobs.max(1)) {
                self.queue.push_back(Batch {
                    base: base.clone(),
                    jobs: chunk.to_vec(),
                    spec: Some(i),
                });
            }
        }
    }

    /// Before dispatching: finish the specs' A/A checks that are in, drop the queued
    /// comparisons of failed specs, and start the baselines the queued comparisons wait for,
    /// on free lanes.
    pub(crate) fn spec_gate(&mut self) -> Result<(), Error> {
        for i in 0..self.spec_runs.len() {
            let r = &self.spec_runs[i];
            if r.finished && !r.done && r.failed.is_none() {
                self.finish_spec_aa(i)?;
            }
        }
        let mut k = 0;
        while k < self.queue.len() {
            match self.queue[k].spec {
                Some(i) if self.spec_runs[i].failed.is_some() => {
                    let b = self.queue.remove(k).expect("in the queue");
                    for j in b.jobs {
                        self.drop_part(j)?;
                    }
                }
                _ => k += 1,
            }
        }
        let needed: BTreeSet<usize> = self
            .queue
            .iter()
            .filter_map(|b| b.spec)
            .filter(|&i| {
                let r = &self.spec_runs[i];
                !r.done && r.task.is_none() && r.failed.is_none() && !r.finished
            })
            .collect();
        for i in needed {
            let Some(lane) = self
                .lanes
                .iter()
                .position(|l| l.alive && l.busy < l.capacity)
            else {
                break;
            };
            let n = 2 * self.s.settings.plan.min_runs;
            let id = self.next_task;
            self.next_task += 1;
            self.s.progress.phase(&format!(
                "building the baseline of {} and measuring it ({n} runs, A/A check)",
                self.objective(i).name
            ));
            let task = Task::Baseline {
                id,
                base: self.original(),
                samples: n,
                comparison: self.spec_aa_comparison(i),
                kernels: false,
                spec: Some(i),
            };
            if !self.send_baseline(lane, id, task) {
                return self.lost(lane, "it stopped taking tasks".into());
            }
            let r = &mut self.spec_runs[i];
            r.task = Some(id);
            r.samples.clear();
        }
        Ok(())
    }

    /// Spec `i`'s A/A check: a noisy baseline fails the spec (not the tune); else its
    /// baseline is recorded and its comparisons may go.
    fn finish_spec_aa(&mut self, i: usize) -> Result<(), Error> {
        let plan = self.s.settings.plan;
        let samples = std::mem::take(&mut self.spec_runs[i].samples);
        self.spec_runs[i].task = None;
        match stats::aa_check(&samples, &plan, self.s.settings.max_noise) {
            Err(e) => {
                self.spec_runs[i].failed = Some(one_line(&format!("its baseline: {e}")));
            }
            Ok(noise) => {
                let b = self.baseline_record(&noise);
                self.s.ledger.record_baseline(
                    self.s.session,
                    &self.spec_settings(i),
                    &self.s.tree.hash,
                    &b,
                )?;
                let r = &mut self.spec_runs[i];
                r.baseline = Some((b, (noise.spread, noise.detectable)));
                r.done = true;
            }
        }
        self.spec_baseline();
        Ok(())
    }

    /// The report's baseline with several specs: the first spec's (in the order given) that
    /// has one, measured in this tune or recorded by an earlier one.
    pub(crate) fn spec_baseline(&mut self) {
        for (i, r) in self.spec_runs.iter().enumerate() {
            if r.failed.is_some() {
                continue;
            }
            if let Some((b, noise)) = &r.baseline {
                self.out.baseline = Some(b.clone());
                self.out.noise = Some(*noise);
                self.out.baseline_spec = Some(i);
                self.out.launches_per_sample = r.launches_per_sample;
                return;
            }
            let recorded = self
                .s
                .ledger
                .baseline(&self.spec_settings(i), &self.s.tree.hash)
                .ok()
                .flatten();
            if let Some(b) = recorded {
                self.out.baseline = Some(b);
                self.out.baseline_spec = Some(i);
                self.out.launches_per_sample = r.launches_per_sample;
                return;
            }
        }
    }

    /// Spec `spec`'s baseline failed (task `id`): the spec is failed, its comparisons dropped.
    pub(super) fn spec_failed(
        &mut self,
        id: u64,
        spec: usize,
        reason: String,
    ) -> Result<(), Error> {
        let r = &mut self.spec_runs[spec];
        if r.task == Some(id) {
            r.task = None;
        }
        if r.failed.is_none() {
            let what = reason.strip_prefix("it ").unwrap_or(&reason);
            r.failed = Some(one_line(&format!("its baseline {what}")));
        }
        Ok(())
    }

    /// A comparison of a failed spec that will not be measured.
    fn drop_part(&mut self, job: Job) -> Result<(), Error> {
        let (Some(c), Some(sj)) = (job.chain, job.spec) else {
            return Ok(());
        };
        let complete = match self.chains[c]
            .active
            .as_mut()
            .and_then(|a| a.parts.get_mut(&sj.parent))
        {
            Some(p) => {
                p.need = p.need.saturating_sub(1);
                p.dropped.push(sj.spec);
                p.got.len() >= p.need
            }
            None => false,
        };
        if complete {
            self.finalize(c, &sj.parent)?;
        }
        Ok(())
    }

    /// One spec's comparison is over: keep it with its decision's other parts, and decide once
    /// every spec's is in.
    pub(super) fn decide_part(
        &mut self,
        f: Flight,
        c: usize,
        lane: usize,
        ended: Ended,
    ) -> Result<(), Error> {
        let sj = f.job.spec.clone().expect("a spec's comparison");
        let sub = f.job.variant.key.clone();
        let mut twin_of = None;
        let result = match ended.result {
            ItemResult::Measured { skipped } => PartResult::Measured {
                pairs: pairs_of(&f.samples, &sub),
                again: pairs_of(&f.samples, &crate::lane::measure::replication_id(&sub)),
                skipped,
            },
            ItemResult::Failed { status, reason } => PartResult::Failed(status, reason),
            ItemResult::SameCode => PartResult::SameCode,
            ItemResult::SameCodeAs { key: other } => {
                let twin = self.chains[c]
                    .active
                    .as_ref()
                    .and_then(|a| a.subs.get(&other))
                    .cloned();
                match twin {
                    Some(r) => {
                        // The variant that spec measured: the one whose comparison key is
                        // `other`.
                        twin_of = self.chains[c].active.as_ref().and_then(|a| {
                            a.decided
                                .iter()
                                .map(|d| &d.variant.key)
                                .chain(a.parts.keys())
                                .find(|k| self.spec_key(k, sj.spec) == other)
                                .cloned()
                        });
                        r
                    }
                    None => {
                        // Its twin is not a part of this loop's decisions: measured after all.
                        let mut job = f.job;
                        job.same_code = false;
                        job.attempt += 1;
                        self.queue.push_front(Batch {
                            base: f.base,
                            jobs: vec![job],
                            spec: Some(sj.spec),
                        });
                        return Ok(());
                    }
                }
            }
        };
        let device = self.info[lane].device.clone();
        let complete = match self.chains[c].active.as_mut() {
            Some(a) => {
                a.subs.insert(sub, result.clone());
                match a.parts.get_mut(&sj.parent) {
                    Some(p) => {
                        p.got.push(Part {
                            spec: sj.spec,
                            result,
                            device,
                            occupancy: ended.occupancy,
                            twin: twin_of,
                        });
                        p.got.len() >= p.need
                    }
                    None => false,
                }
            }
            None => false,
        };
        if complete {
            self.finalize(c, &sj.parent)?;
        }
        Ok(())
    }

    /// Decide the variant `key` of chain `c`'s active loop from its specs' parts.
    fn finalize(&mut self, c: usize, key: &str) -> Result<(), Error> {
        let Some(mut parts) = self.chains[c]
            .active
            .as_mut()
            .and_then(|a| a.parts.remove(key))
        else {
            return Ok(());
        };
        parts.got.sort_by_key(|p| p.spec);
        let plan = self.s.settings.plan;
        let occupancy = parts.got.iter().find_map(|p| p.occupancy.clone());
        let device = parts.got.first().map(|p| p.device.clone());
        let mut judged_by = None;
        let mut spec_pairs = Vec::new();
        let mut slower = None;
        let failed = parts.got.iter().find_map(|p| match &p.result {
            PartResult::Failed(s, r) => Some((p.spec, *s, r.clone())),
            _ => None,
        });
        let finding = if parts.got.is_empty() {
            Finding::Failed(Status::NotRun, self.failed_specs_text(&parts.dropped))
        } else if let Some((i, status, reason)) = failed {
            Finding::Failed(
                status,
                format!("{} (spec {})", reason, self.objective(i).name),
            )
        } else if parts
            .got
            .iter()
            .all(|p| matches!(p.result, PartResult::SameCode))
        {
            Finding::SameCode
        } else {
            let mut got: Vec<(usize, Vec<Pair>, Vec<Pair>)> = Vec::new();
            let mut skipped = None;
            for p in &parts.got {
                if let PartResult::Measured {
                    pairs,
                    again,
                    skipped: s,
                } = &p.result
                {
                    got.push((p.spec, pairs.clone(), again.clone()));
                    if skipped.is_none() {
                        skipped = s.clone();
                    }
                }
            }
            let sp: Vec<SpecPairs<'_>> = got
                .iter()
                .map(|(_, p, a)| SpecPairs { pairs: p, again: a })
                .collect();
            let j = stats::judge(&sp, &plan);
            judged_by = Some(self.judged_by(&got, &j));
            spec_pairs = got
                .iter()
                .map(|(_, p, a)| p.iter().chain(a).copied().collect())
                .collect();
            slower = j.slower.map(|k| (got[k].0, j.specs[k]));
            Finding::Measured {
                assessment: j.assessment(),
                skipped,
                pairs: got.iter().flat_map(|(_, p, _)| p.iter().copied()).collect(),
                again: got.iter().flat_map(|(_, _, a)| a.iter().copied()).collect(),
            }
        };
        let mut d = Decided::new(
            parts.variant,
            finding,
            &plan,
            device,
            occupancy,
            &self.s.ledger.path,
        )?;
        if let (Some((i, a)), Some(r)) = (slower, d.reason.as_mut()) {
            *r = format!(
                "spec-slower: spec {} measured {:.3}x [{:.3}, {:.3}]: its interval does not rule out a slowdown beyond the {:.1}% minimum",
                self.objective(i).name,
                a.speedup,
                a.ci.0,
                a.ci.1,
                plan.min_speedup * 100.0
            );
        }
        d.judged_by = judged_by;
        d.spec_pairs = spec_pairs;
        // Every spec took another variant's measurement (the same machine code): said so, and
        // no run was spent on it.
        let twin = parts.got.first().and_then(|p| p.twin.clone());
        if let Some(t) = twin.filter(|t| parts.got.iter().all(|p| p.twin.as_ref() == Some(t))) {
            let label = self.chains[c].active.as_ref().and_then(|a| {
                a.decided
                    .iter()
                    .find(|x| x.variant.key == t)
                    .map(|x| x.label())
                    .or_else(|| {
                        a.parts
                            .get(&t)
                            .map(|p| super::label(p.variant.mode, p.variant.factor))
                    })
            });
            if let Some(label) = label {
                d.runs = Some(0);
                d.reason = Some(match d.reason.take() {
                    Some(r) => format!("same code as {label}: {r}"),
                    None => format!("same code as {label} (not measured)"),
                });
                d.same_as = Some(t);
            }
        }
        // A decision without one of its specs is not the decision of its key.
        if d.status != Status::NotCached && parts.dropped.is_empty() {
            self.store(&parts.base, &d)?;
        }
        if let Some(a) = self.chains[c].active.as_mut() {
            a.decided.push(d);
            a.waiting = a.waiting.saturating_sub(1);
        }
        Ok(())
    }

    /// The confirmation with several specs: the combination against the original, measured
    /// by every spec that judged an applied loop; the final speedup is their geometric mean.
    pub(super) fn confirm_specs(
        &mut self,
        overlay: &Overlay,
    ) -> Result<(report::Final, bool), Error> {
        let final_state = self.s.tree.state_hash(overlay);
        let orders: Vec<usize> = self.out.applied.iter().map(|(o, _, _)| *o).collect();
        let specs: Vec<usize> = orders
            .iter()
            .flat_map(|o| self.loop_judges.get(o).cloned().unwrap_or_default())
            .filter(|&i| self.spec_runs[i].failed.is_none())
            .collect::<BTreeSet<usize>>()
            .into_iter()
            .collect();
        let key = self.judged_key(
            &ledger::decision_key(
                &self.s.settings_hash,
                &format!("confirm:{}", self.s.tree.hash),
                &final_state,
            ),
            &specs,
        );
        if let Some(d) = self.s.ledger.decision(&key)? {
            return Ok((
                report::Final {
                    figure: d.figure.unwrap_or(f64::NAN),
                    speedup: d.speedup.unwrap_or(1.0),
                    ci: d.ci.map(|c| [c.0, c.1]),
                },
                d.status == "accepted",
            ));
        }
        self.s
            .progress
            .phase("confirming: final state against the original, by every spec");
        let mut waiting: Vec<(usize, String)> = Vec::new();
        for &i in &specs {
            let sub = self.spec_key(&key, i);
            let job = Job {
                variant: Pending {
                    mode: Mode::Pragma,
                    factor: 1,
                    overlay: overlay.clone(),
                    state: final_state.clone(),
                    key: sub.clone(),
                    edits: Vec::new(),
                    file: PathBuf::new(),
                },
                chain: None,
                attempt: 0,
                same_code: false,
                spec: Some(SpecJob {
                    spec: i,
                    parent: key.clone(),
                    joint: false,
                }),
            };
            self.queue.push_back(Batch {
                base: self.original(),
                jobs: vec![job],
                spec: Some(i),
            });
            waiting.push((i, sub));
        }
        self.confirmed.clear();
        loop {
            waiting.retain(|(i, _)| self.spec_runs[*i].failed.is_none());
            if waiting.iter().all(|(_, k)| self.confirmed.contains_key(k)) {
                break;
            }
            self.check_stop()?;
            self.spec_gate()?;
            self.dispatch()?;
            self.pump()?;
        }
        let mut got: Vec<(usize, Vec<Pair>)> = Vec::new();
        let mut lane = None;
        for (i, k) in &waiting {
            let (result, samples, l): (ItemResult, Vec<Sample>, usize) =
                self.confirmed.remove(k).expect("confirmed");
            lane.get_or_insert(l);
            if let ItemResult::Failed { reason, .. } = result {
                self.out.notes.insert(format!(
                    "the combination of the accepted variants fails with spec {}: {reason}",
                    self.objective(*i).name
                ));
                return Ok((
                    report::Final {
                        figure: f64::NAN,
                        speedup: 1.0,
                        ci: None,
                    },
                    false,
                ));
            }
            got.push((*i, pairs_of(&samples, k)));
        }
        if got.is_empty() {
            self.out
                .notes
                .insert("no spec is left to confirm the combination with: nothing applied".into());
            return Ok((
                report::Final {
                    figure: f64::NAN,
                    speedup: 1.0,
                    ci: None,
                },
                false,
            ));
        }
        let plan = self.s.settings.plan;
        let each: Vec<stats::Assessment> =
            got.iter().map(|(_, p)| stats::assess(p, &plan)).collect();
        let sp: Vec<SpecPairs<'_>> = got
            .iter()
            .map(|(_, p)| SpecPairs {
                pairs: p,
                again: &[],
            })
            .collect();
        let j = stats::judge(&sp, &plan);
        for ((i, p), a) in got.iter().zip(&each) {
            let finals: Vec<f64> = p.iter().map(|p| p.variant).collect();
            self.out.spec_finals.insert(
                *i,
                report::Final {
                    figure: stats::median(&finals),
                    speedup: a.speedup,
                    ci: Some([a.ci.0, a.ci.1]),
                },
            );
        }
        // The report's final figure is of the kernel its baseline figure is of; a spec that
        // judged no applied loop has its kernel unchanged (NaN: the report takes its baseline).
        let figure = self
            .out
            .baseline_spec
            .and_then(|i| self.out.spec_finals.get(&i))
            .map_or(f64::NAN, |f| f.figure);
        let confirmed = super::Confirmed {
            faster: each.iter().all(|a| a.verdict == Verdict::Accept) || j.ci.0 > 1.0,
            speedup: j.speedup,
            ci: j.ci,
            p_value: None,
            runs: j.n,
            figure,
            device: lane.map(|l| self.info[l].device.clone()),
        };
        self.record_confirmation(key, final_state, confirmed)
    }

    /// One note per failed spec, for the human report (the JSON has them in `specs`).
    pub(crate) fn note_failed_specs(&mut self) {
        let notes: Vec<String> = self
            .s
            .objectives
            .iter()
            .zip(&self.spec_runs)
            .filter_map(|(o, r)| {
                r.failed.as_deref().map(|why| {
                    format!(
                        "spec {} failed, its kernel {} is not tuned: {}",
                        o.name,
                        o.kernel,
                        one_line(why)
                    )
                })
            })
            .collect();
        self.out.notes.extend(notes);
    }

    /// The report's `specs`: every spec, whether its kernel was tuned (absent without specs).
    pub(crate) fn spec_statuses(&self) -> Option<Vec<SpecStatus>> {
        if !self.multi() {
            return None;
        }
        Some(
            self.s
                .objectives
                .iter()
                .zip(&self.spec_runs)
                .enumerate()
                .map(|(i, (o, r))| SpecStatus {
                    spec: o.name.clone(),
                    kernel: o.kernel.clone(),
                    status: if r.failed.is_some() {
                        SpecOutcome::Failed
                    } else {
                        SpecOutcome::Ok
                    },
                    reason: r.failed.as_deref().map(one_line),
                    baseline: r
                        .baseline
                        .as_ref()
                        .map(|(b, _)| b.clone())
                        .or_else(|| {
                            self.s
                                .ledger
                                .baseline(&self.spec_settings(i), &self.s.tree.hash)
                                .ok()
                                .flatten()
                        })
                        .filter(|_| r.failed.is_none())
                        .map(|b| report::Baseline {
                            figure: b.figure,
                            unit: b.unit,
                            runs: b.runs,
                            launches_per_sample: r.launches_per_sample,
                        }),
                    final_: self.out.spec_finals.get(&i).cloned(),
                })
                .collect(),
        )
    }
}
