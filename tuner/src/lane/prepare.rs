//! Preparation on a lane: its working copies (a pool of slots, each holding one state of the
//! tree and, once built, that state's prepared build, kept for reuse: the winner of a loop is
//! the next loop's baseline without a rebuild), the baseline's build, the code-object gates
//! and the same-code check against the baseline's compile, and the variants' builds, one
//! thread per working copy. The variants ready to measure go in order of predicted risk: the
//! lowest occupancy loss first (stable: otherwise in the order of `--mode` and `--factors`).
//! Also the gate compiles ahead of the next loops ([`Lane::compile_ahead`]), done by the lane's
//! compile workers ([`Lane::ahead_worker`]) while the preparing thread goes on.

use super::{Ahead, Emit, Event, Item, ItemResult, Lane, Phase, StateSpec, Task};
use crate::backend::{Backend, Failure};
use crate::error::Error;
use crate::gates::{self, Units};
use crate::report::{Occupancy, Status};
use crate::workcopy::Slot;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// The baseline's compiles for the gates, per (state, file).
pub(crate) type Objects = HashMap<(String, PathBuf), Arc<Result<Units, String>>>;

/// One gate compile sent ahead: `state`'s `file`, asked for by a task measured against `base`.
struct AheadWork {
    base: String,
    state: StateSpec,
    file: PathBuf,
}

/// The gate compiles sent ahead that no compile worker has taken yet, oldest first.
#[derive(Default)]
pub(crate) struct AheadQueue {
    work: std::collections::VecDeque<AheadWork>,
    /// The lane's tasks are over: the workers stop.
    closed: bool,
}

impl AheadQueue {
    /// The compiles of `ahead` (variants made on `base`'s text) replace those not taken yet:
    /// the baseline's compile of each file first (once per file), then the variants', in
    /// order.
    fn replace(&mut self, base: &StateSpec, ahead: &[Ahead]) {
        let mut files: Vec<&std::path::Path> = ahead.iter().map(|a| a.file.as_path()).collect();
        files.sort();
        files.dedup();
        self.work.clear();
        let work = |state: &StateSpec, file: &std::path::Path| AheadWork {
            base: base.hash.clone(),
            state: state.clone(),
            file: file.to_path_buf(),
        };
        self.work.extend(files.iter().map(|f| work(base, f)));
        self.work
            .extend(ahead.iter().map(|a| work(&a.variant, &a.file)));
    }

    /// Keeps only the compiles asked for by tasks against `base` (the others are of text that
    /// will not be measured: the loop before accepted an edit), in order.
    fn keep_for(&mut self, base: &str) {
        self.work.retain(|w| w.base == base);
    }
}

/// One working copy of a lane.
pub(crate) struct Entry<P> {
    /// `None` while a thread works in it.
    slot: Option<Slot>,
    root: PathBuf,
    /// The state it holds once prepared, and its prepared build.
    state: Option<String>,
    prepared: Option<Arc<P>>,
    /// Tasks using it: a pinned entry is never re-synced.
    pins: usize,
    used: u64,
}

/// The working copies of a lane.
pub(crate) struct Pool<P> {
    dir: PathBuf,
    entries: Vec<Entry<P>>,
    clock: u64,
}

impl<P> Pool<P> {
    pub(crate) fn new(dir: PathBuf) -> Pool<P> {
        Pool {
            dir,
            entries: Vec::new(),
            clock: 0,
        }
    }

    /// The entry holding `state` prepared, pinned.
    fn pin_prepared(&mut self, state: &str) -> Option<(usize, PathBuf, Arc<P>)> {
        let i = self
            .entries
            .iter()
            .position(|e| e.state.as_deref() == Some(state) && e.prepared.is_some())?;
        self.clock += 1;
        let e = &mut self.entries[i];
        e.pins += 1;
        e.used = self.clock;
        Some((i, e.root.clone(), e.prepared.clone().expect("prepared")))
    }

    /// An entry nobody uses (the least recently used; a new working copy when every one is
    /// pinned), pinned, emptied, and its slot taken out.
    fn take_free(&mut self) -> Result<(usize, Slot), Error> {
        let free = self
            .entries
            .iter()
            .enumerate()
            .filter(|(_, e)| e.pins == 0 && e.slot.is_some())
            .min_by_key(|(_, e)| (e.prepared.is_some(), e.used))
            .map(|(i, _)| i);
        let i = match free {
            Some(i) => i,
            None => {
                let slot = Slot::open(&self.dir, self.entries.len())?;
                self.entries.push(Entry {
                    root: slot.root.clone(),
                    slot: Some(slot),
                    state: None,
                    prepared: None,
                    pins: 0,
                    used: 0,
                });
                self.entries.len() - 1
            }
        };
        self.clock += 1;
        let e = &mut self.entries[i];
        e.pins += 1;
        e.used = self.clock;
        e.state = None;
        e.prepared = None;
        Ok((i, e.slot.take().expect("a free entry holds its slot")))
    }

    /// Give a slot back, with what it now holds prepared (if anything).
    fn put_back(&mut self, i: usize, slot: Slot, prepared: Option<(String, Arc<P>)>) {
        let e = &mut self.entries[i];
        e.slot = Some(slot);
        match prepared {
            Some((state, p)) => {
                e.state = Some(state);
                e.prepared = Some(p);
            }
            None => {
                e.state = None;
                e.prepared = None;
            }
        }
    }

    fn unpin(&mut self, i: usize) {
        let e = &mut self.entries[i];
        e.pins = e.pins.saturating_sub(1);
    }
}

/// A prepared baseline, pinned in the pool until released.
pub(crate) struct BaseRef<P> {
    pub entry: usize,
    pub root: PathBuf,
    /// The state's key on this lane ([`super::state_for`]).
    pub state: String,
    /// The objective it is prepared for.
    pub spec: Option<usize>,
    pub prepared: Arc<P>,
}

/// A prepared variant, pinned until measured.
pub(crate) struct Ready<P> {
    pub item: Item,
    pub entry: usize,
    pub root: PathBuf,
    pub prepared: Arc<P>,
    /// Why the code-object gates were skipped.
    pub skipped: Option<String>,
    /// The gates' occupancy prediction and machine-code digest.
    pub occupancy: Option<Occupancy>,
    pub code: Option<String>,
    /// Items of the same machine code, not built: they take this one's decision.
    pub twins: Vec<Twin>,
    /// Its place in the task's batch.
    pub index: usize,
}

/// A task after its preparation.
pub(crate) enum Prepared<P> {
    Baseline {
        id: u64,
        base: BaseRef<P>,
        samples: usize,
        comparison: String,
        kernels: bool,
    },
    Compare {
        base: BaseRef<P>,
        ready: Vec<Ready<P>>,
    },
}

/// What one build found.
enum Found<P> {
    Ready(P, Option<String>),
    Failed(Failure),
}

/// What an item needs once every gate of its batch has run.
enum Plan {
    /// Its sync or gates failed with an error (the task fails).
    Dropped,
    Gated(&'static str, String),
    /// The baseline's machine code.
    SameCode,
    /// The machine code of the variant decided under this key.
    Decided(String),
    /// The machine code of the batch's item at this index, built and measured for both.
    Twin(usize),
    Build,
}

/// An item that ends with another (the same machine code): reported when that one is.
pub(crate) struct Twin {
    pub item: Item,
    pub occupancy: Option<Occupancy>,
    pub code: Option<String>,
}

impl Twin {
    /// Its `Item` event.
    pub(crate) fn event(&self, result: ItemResult) -> Event {
        Event::Item {
            key: self.item.key.clone(),
            attempt: self.item.attempt,
            result,
            occupancy: self.occupancy.clone(),
            code: self.code.clone(),
        }
    }
}

fn failure_outcome(f: &Failure) -> (Status, &'static str) {
    match f {
        Failure::Build(_) => (Status::BuildFailed, "build-failed"),
        Failure::Check(_) => (Status::CheckFailed, "check-failed"),
        Failure::NotCached(_) => (Status::NotCached, "not-cached"),
    }
}

impl<B: Backend> Lane<'_, B> {
    /// Prepare a task: its baseline, then (for a comparison) every item, in parallel. Items
    /// that end here (gated, failed, same code) are reported at once.
    pub(crate) fn prepare(
        &self,
        task: Task,
        emit: Emit<'_>,
    ) -> Result<Prepared<B::Prepared>, Error> {
        match task {
            Task::Baseline {
                id,
                base,
                samples,
                comparison,
                kernels,
                spec,
            } => Ok(Prepared::Baseline {
                id,
                base: self.base(&base, spec, emit)?,
                samples,
                comparison,
                kernels,
            }),
            Task::Compare {
                base,
                mut items,
                known,
                spec,
                ..
            } => {
                self.drop_stale_ahead(&base.hash);
                for it in &mut items {
                    it.variant.hash = super::state_for(&it.variant.hash, spec);
                }
                let base = self.base(&base, spec, emit)?;
                match self.variants(&base, items, &known, emit) {
                    Ok(ready) => {
                        fsio::testpoint::hit("tuner.search.prepared");
                        Ok(Prepared::Compare { base, ready })
                    }
                    Err(e) => {
                        self.release(base.entry);
                        Err(e)
                    }
                }
            }
        }
    }

    pub(crate) fn release(&self, entry: usize) {
        self.pool
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .unpin(entry);
    }

    /// The baseline `spec`, built and checked (reused when a working copy already holds it
    /// prepared). A baseline that fails stops the tune.
    fn base(
        &self,
        state: &StateSpec,
        objective: Option<usize>,
        emit: Emit<'_>,
    ) -> Result<BaseRef<B::Prepared>, Error> {
        self.check_stop()?;
        let keyed = StateSpec {
            hash: super::state_for(&state.hash, objective),
            overlay: state.overlay.clone(),
        };
        let spec = &keyed;
        let mut pool = self.pool.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((entry, root, prepared)) = pool.pin_prepared(&spec.hash) {
            return Ok(BaseRef {
                entry,
                root,
                state: spec.hash.clone(),
                spec: objective,
                prepared,
            });
        }
        let (entry, mut slot) = pool.take_free()?;
        drop(pool);
        let t0 = std::time::Instant::now();
        let r = match slot.sync(self.cx.tree, &spec.overlay) {
            Ok(_) => {
                emit(Event::Counts {
                    compiles: 0,
                    builds: 1,
                });
                self.backend.prepare(
                    &crate::backend::Slot {
                        index: entry,
                        ..self.backend_slot(&slot.root, objective)
                    },
                    None,
                )
            }
            Err(e) => Err(e),
        };
        let secs = t0.elapsed().as_secs_f64();
        emit(super::span(Phase::Prepare, secs));
        let root = slot.root.clone();
        let mut pool = self.pool.lock().unwrap_or_else(|p| p.into_inner());
        match r {
            Ok(Ok(p)) => {
                let p = Arc::new(p);
                pool.put_back(entry, slot, Some((spec.hash.clone(), p.clone())));
                drop(pool);
                emit(Event::Build {
                    state: spec.hash.clone(),
                    slot: entry,
                    outcome: "ok".into(),
                    detail: None,
                    seconds: secs,
                });
                Ok(BaseRef {
                    entry,
                    root,
                    state: spec.hash.clone(),
                    spec: objective,
                    prepared: p,
                })
            }
            Ok(Err(f)) => {
                pool.put_back(entry, slot, None);
                pool.unpin(entry);
                drop(pool);
                if let Some(e) = self.not_the_variants(f.message()) {
                    return Err(e);
                }
                let (_, outcome) = failure_outcome(&f);
                emit(Event::Build {
                    state: spec.hash.clone(),
                    slot: entry,
                    outcome: outcome.into(),
                    detail: Some(f.message().to_string()),
                    seconds: secs,
                });
                let what = match &f {
                    Failure::Build(_) => "does not build",
                    Failure::Check(_) => "fails its run or its check",
                    Failure::NotCached(_) => {
                        "cannot be compiled here (no compiler, and not in the carried cache)"
                    }
                };
                Err(Error::Baseline(format!("it {what}: {}", f.message())))
            }
            Err(e) => {
                pool.put_back(entry, slot, None);
                pool.unpin(entry);
                Err(e)
            }
        }
    }

    /// The baseline's compile of `file` for the gates (once per state and file).
    fn base_object(
        &self,
        base: &BaseRef<B::Prepared>,
        file: &std::path::Path,
        emit: Emit<'_>,
    ) -> Arc<Result<Units, String>> {
        let k = (base.state.clone(), file.to_path_buf());
        if let Some(o) = self
            .objects
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&k)
        {
            return o.clone();
        }
        let gates = self.cx.gates.in_dir(&base.root);
        let t0 = Instant::now();
        let r = gates.baseline(&base.root.join(file));
        fsio::testpoint::hit("tuner.search.baseline-compiled");
        match &r {
            Ok(u) if u.compiled_now() => {
                emit(super::span(Phase::Compile, t0.elapsed().as_secs_f64()));
                emit(Event::Counts {
                    compiles: 1,
                    builds: 0,
                })
            }
            // A cache lookup (the compiler's identity, the sources' digests) is the gates'.
            Ok(_) => emit(super::span(Phase::Gates, t0.elapsed().as_secs_f64())),
            Err(why) => emit(Event::Note(format!(
                "code-object gates skipped for {}: {why}",
                file.display()
            ))),
        }
        let r = Arc::new(r);
        self.objects
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(k, r.clone());
        r
    }

    /// Gate and build every item against `base`, one working copy and one thread each: first
    /// every item's gates (in parallel), then, with every digest known, the builds of the items
    /// that need one (in parallel). An item whose machine code is a variant's already decided
    /// against `base` (`known`, or this lane's) ends at once as [`ItemResult::SameCodeAs`]; one
    /// whose code is an earlier item's of this batch is not built but rides with that item
    /// ([`Ready::twins`]), and ends when it does.
    fn variants(
        &self,
        base: &BaseRef<B::Prepared>,
        items: Vec<Item>,
        known: &[(String, String)],
        emit: Emit<'_>,
    ) -> Result<Vec<Ready<B::Prepared>>, Error> {
        self.check_stop()?;
        let objects: Vec<Option<Arc<Result<Units, String>>>> = items
            .iter()
            .map(|it| it.file.as_ref().map(|f| self.base_object(base, f, emit)))
            .collect();
        let mut taken = Vec::with_capacity(items.len());
        {
            let mut pool = self.pool.lock().unwrap_or_else(|p| p.into_inner());
            for _ in &items {
                match pool.take_free() {
                    Ok(x) => taken.push(x),
                    Err(e) => {
                        for (i, s) in taken {
                            pool.put_back(i, s, None);
                            pool.unpin(i);
                        }
                        return Err(e);
                    }
                }
            }
        }
        let compiles = AtomicU32::new(0);
        // 1. Sync and gates.
        let gated: Vec<Result<gates::Report, Error>> = std::thread::scope(|sc| {
            let handles: Vec<_> = taken
                .iter_mut()
                .zip(&items)
                .zip(&objects)
                .map(|(((_, slot), item), object)| {
                    let compiles = &compiles;
                    sc.spawn(move || -> Result<gates::Report, Error> {
                        let t0 = Instant::now();
                        slot.sync(self.cx.tree, &item.variant.overlay)?;
                        emit(super::span(Phase::Prepare, t0.elapsed().as_secs_f64()));
                        let (Some(file), Some(object)) = (&item.file, object) else {
                            return Ok(gates::Report::default());
                        };
                        let g = self.cx.gates.in_dir(&slot.root);
                        let report = g.check(object, &slot.root.join(file));
                        if report.compiled {
                            compiles.fetch_add(1, Ordering::Relaxed);
                        }
                        gate_spans(&report, emit);
                        Ok(report)
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                .collect()
        });
        // 2. What each item needs, with every digest known.
        let mut plan: Vec<Plan> = Vec::with_capacity(items.len());
        let mut reports: Vec<gates::Report> = Vec::with_capacity(items.len());
        let mut first_err: Option<Error> = None;
        for (i, (item, g)) in items.iter().zip(gated).enumerate() {
            let report = match g {
                Ok(r) => r,
                Err(e) => {
                    first_err.get_or_insert(e);
                    plan.push(Plan::Dropped);
                    reports.push(gates::Report::default());
                    continue;
                }
            };
            let p = if let Some((g, detail)) = report.failure() {
                Plan::Gated(g, detail.to_string())
            } else if item.same_code && report.same_code {
                Plan::SameCode
            } else if let Some(code) = report.code.as_ref().filter(|_| item.same_code) {
                let lane_known = self
                    .codes
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .get(&(base.state.clone(), code.clone()))
                    .cloned();
                let earlier = (0..i).find(|&j| {
                    matches!(plan[j], Plan::Build)
                        && items[j].same_code
                        && reports[j].code.as_ref() == Some(code)
                });
                match (
                    known
                        .iter()
                        .find(|(c, _)| c == code)
                        .map(|(_, k)| k.clone()),
                    lane_known,
                    earlier,
                ) {
                    (Some(k), _, _) | (None, Some(k), _) => Plan::Decided(k),
                    (None, None, Some(j)) => Plan::Twin(j),
                    (None, None, None) => Plan::Build,
                }
            } else {
                Plan::Build
            };
            plan.push(p);
            reports.push(report);
        }
        // 3. The builds.
        let builds = AtomicU32::new(0);
        type Built<P> = Option<(Result<Found<P>, Error>, f64)>;
        let built: Vec<Built<B::Prepared>> = if first_err.is_some() {
            items.iter().map(|_| None).collect()
        } else {
            std::thread::scope(|sc| {
                let handles: Vec<_> = taken
                    .iter()
                    .zip(&plan)
                    .zip(&reports)
                    .map(|(((entry, slot), plan), report)| {
                        let builds = &builds;
                        let entry = *entry;
                        sc.spawn(move || -> Built<B::Prepared> {
                            if !matches!(plan, Plan::Build) {
                                return None;
                            }
                            builds.fetch_add(1, Ordering::Relaxed);
                            let bs = crate::backend::Slot {
                                index: entry,
                                ..self.backend_slot(&slot.root, base.spec)
                            };
                            let skipped = report.skipped().map(str::to_string);
                            let t0 = Instant::now();
                            let r = match self.backend.prepare(&bs, Some(&base.prepared)) {
                                Ok(Ok(p)) => Ok(Found::Ready(p, skipped)),
                                Ok(Err(f)) => Ok(Found::Failed(f)),
                                Err(e) => Err(e),
                            };
                            let secs = t0.elapsed().as_secs_f64();
                            emit(super::span(Phase::Prepare, secs));
                            Some((r, secs))
                        })
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                    .collect()
            })
        };
        emit(Event::Counts {
            compiles: compiles.load(Ordering::Relaxed),
            builds: builds.load(Ordering::Relaxed),
        });
        // 4. Report and keep what is ready.
        let mut ready: Vec<Ready<B::Prepared>> = Vec::new();
        // Items that ended here, by index: how their twins end with them.
        let mut ended: Vec<Option<ItemResult>> = vec![None; items.len()];
        let mut twins_of: Vec<Vec<Twin>> = (0..items.len()).map(|_| Vec::new()).collect();
        type Back<P> = (usize, Slot, Option<(String, Arc<P>)>);
        let mut pool_back: Vec<Back<B::Prepared>> = Vec::new();
        let mut order: Vec<usize> = (0..items.len()).collect();
        // Twins after their owners (an owner always comes first in the batch).
        order.sort_by_key(|&i| matches!(plan[i], Plan::Twin(_)));
        let mut items: Vec<Option<Item>> = items.into_iter().map(Some).collect();
        let mut taken: Vec<Option<(usize, Slot)>> = taken.into_iter().map(Some).collect();
        let mut built: Vec<Built<B::Prepared>> = built;
        for i in order {
            let item = items[i].take().expect("each item once");
            let (entry, slot) = taken[i].take().expect("each slot once");
            let report = &reports[i];
            for (g, o) in &report.gates {
                emit(Event::Gate {
                    key: item.key.clone(),
                    gate: g.to_string(),
                    outcome: o.name().to_string(),
                    detail: o.detail().map(str::to_string),
                });
            }
            let twin = Twin {
                item: item.clone(),
                occupancy: report.occupancy.clone(),
                code: report.code.clone(),
            };
            let done = |result: ItemResult| twin.event(result);
            match &plan[i] {
                Plan::Dropped => pool_back.push((entry, slot, None)),
                Plan::Gated(g, detail) => {
                    if let Some(e) = self.not_the_variants(detail) {
                        first_err.get_or_insert(e);
                        pool_back.push((entry, slot, None));
                        continue;
                    }
                    let status = if *g == gates::COMPILE {
                        Status::BuildFailed
                    } else {
                        Status::Gated
                    };
                    emit(done(ItemResult::Failed {
                        status,
                        reason: format!("{g}: {detail}"),
                    }));
                    pool_back.push((entry, slot, None));
                }
                Plan::SameCode => {
                    emit(done(ItemResult::SameCode));
                    pool_back.push((entry, slot, None));
                }
                Plan::Decided(key) => {
                    emit(done(ItemResult::SameCodeAs { key: key.clone() }));
                    pool_back.push((entry, slot, None));
                }
                Plan::Twin(j) => {
                    match &ended[*j] {
                        // Its owner ended here: so does it.
                        Some(result) => emit(done(result.clone())),
                        None => twins_of[*j].push(twin),
                    }
                    pool_back.push((entry, slot, None));
                }
                Plan::Build => {
                    let Some((found, secs)) = built[i].take() else {
                        pool_back.push((entry, slot, None));
                        continue;
                    };
                    match found {
                        Err(e) => {
                            first_err.get_or_insert(e);
                            pool_back.push((entry, slot, None));
                        }
                        Ok(Found::Failed(f)) => {
                            if let Some(e) = self.not_the_variants(f.message()) {
                                first_err.get_or_insert(e);
                                pool_back.push((entry, slot, None));
                                continue;
                            }
                            let (status, outcome) = failure_outcome(&f);
                            emit(Event::Build {
                                state: item.variant.hash.clone(),
                                slot: entry,
                                outcome: outcome.into(),
                                detail: Some(f.message().to_string()),
                                seconds: secs,
                            });
                            emit(done(ItemResult::Failed {
                                status,
                                reason: f.message().to_string(),
                            }));
                            ended[i] = Some(if status == Status::NotCached {
                                // This machine's lack, not a decision: the same for its twins.
                                ItemResult::Failed {
                                    status,
                                    reason: f.message().to_string(),
                                }
                            } else {
                                self.decided_code(&base.state, report.code.as_ref(), &item.key);
                                ItemResult::SameCodeAs {
                                    key: item.key.clone(),
                                }
                            });
                            pool_back.push((entry, slot, None));
                        }
                        Ok(Found::Ready(p, skipped)) => {
                            emit(Event::Build {
                                state: item.variant.hash.clone(),
                                slot: entry,
                                outcome: "ok".into(),
                                detail: None,
                                seconds: secs,
                            });
                            let p = Arc::new(p);
                            let root = slot.root.clone();
                            pool_back.push((
                                entry,
                                slot,
                                Some((item.variant.hash.clone(), p.clone())),
                            ));
                            ready.push(Ready {
                                item,
                                entry,
                                root,
                                prepared: p,
                                skipped,
                                occupancy: report.occupancy.clone(),
                                code: report.code.clone(),
                                twins: Vec::new(),
                                index: i,
                            });
                        }
                    }
                }
            }
        }
        for r in ready.iter_mut() {
            r.twins = std::mem::take(&mut twins_of[r.index]);
        }
        // Twins whose owner is neither ready nor ended here failed with it (an error ends the
        // task: its comparisons are not decided).
        let mut pool = self.pool.lock().unwrap_or_else(|p| p.into_inner());
        for (entry, slot, prepared) in pool_back {
            let keep = prepared.is_some();
            pool.put_back(entry, slot, prepared);
            if !keep {
                pool.unpin(entry);
            }
        }
        if let Some(e) = first_err {
            for r in &ready {
                pool.unpin(r.entry);
            }
            return Err(e);
        }
        // Lower predicted risk first.
        ready.sort_by_key(|r| r.occupancy.as_ref().map_or(0, Occupancy::loss));
        Ok(ready)
    }

    /// Remember that the variant `key`, of machine code `code`, was decided against
    /// `base_state` on this lane.
    pub(crate) fn decided_code(&self, base_state: &str, code: Option<&String>, key: &str) {
        if let Some(code) = code {
            self.codes
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .entry((base_state.to_string(), code.clone()))
                .or_insert_with(|| key.to_string());
        }
    }

    /// Send the gate compiles of `ahead` (the next loops' variants, made on `base`'s text) to
    /// the compile workers: the baseline's compile of each file first (once per state and
    /// file), then the variants', in order. They replace what an earlier task sent and no
    /// worker has taken yet (the loops it named are prepared by now); the preparing thread
    /// goes on at once.
    pub(crate) fn compile_ahead(&self, base: &StateSpec, ahead: &[Ahead]) {
        let mut q = self.ahead.lock().unwrap_or_else(|p| p.into_inner());
        q.replace(base, ahead);
        drop(q);
        self.ahead_ready.notify_all();
    }

    /// A task against `base` is being prepared: the compiles sent ahead for another baseline
    /// are of text that will not be measured (the loop before accepted an edit).
    fn drop_stale_ahead(&self, base: &str) {
        let mut q = self.ahead.lock().unwrap_or_else(|p| p.into_inner());
        q.keep_for(base);
    }

    /// The lane's tasks are over: the compile workers stop after the compile they run.
    pub(crate) fn close_ahead(&self) {
        let mut q = self.ahead.lock().unwrap_or_else(|p| p.into_inner());
        q.closed = true;
        q.work.clear();
        drop(q);
        self.ahead_ready.notify_all();
    }

    /// One compile worker: takes the compiles sent ahead one by one, each synced into a free
    /// working copy and compiled into the content-addressed cache as the gates will compile
    /// it (a spec's template kernel's instance included); nothing is judged, built or
    /// reported but the compiles' counts and spans. A compile the gates start meanwhile for
    /// the same text waits for this one (`codeobj::compile`), and a failure is left for the
    /// variant's own gates. Ends when the lane's tasks are over or it is halted.
    pub(crate) fn ahead_worker(&self, emit: Emit<'_>) {
        loop {
            let w = {
                let mut q = self.ahead.lock().unwrap_or_else(|p| p.into_inner());
                loop {
                    if q.closed || self.check_stop().is_err() {
                        return;
                    }
                    if let Some(w) = q.work.pop_front() {
                        break w;
                    }
                    q = self
                        .ahead_ready
                        .wait_timeout(q, std::time::Duration::from_millis(200))
                        .unwrap_or_else(|p| p.into_inner())
                        .0;
                }
            };
            let taken = self
                .pool
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .take_free();
            let Ok((entry, mut slot)) = taken else {
                continue;
            };
            let mut compiled = false;
            if slot.sync(self.cx.tree, &w.state.overlay).is_ok() {
                let g = self.cx.gates.in_dir(&slot.root);
                let t0 = Instant::now();
                if let Ok(u) = g.units(&slot.root.join(&w.file)) {
                    if u.compiled_now() {
                        compiled = true;
                        emit(super::span(Phase::Compile, t0.elapsed().as_secs_f64()));
                    }
                }
            }
            let mut pool = self.pool.lock().unwrap_or_else(|p| p.into_inner());
            pool.put_back(entry, slot, None);
            pool.unpin(entry);
            drop(pool);
            if compiled {
                emit(Event::Counts {
                    compiles: 1,
                    builds: 0,
                });
            }
        }
    }
}

/// The spans of a variant's gates: its compile, and the judging after it.
fn gate_spans(r: &gates::Report, emit: Emit<'_>) {
    let judged = (r.seconds - r.compile_seconds).max(0.0);
    if r.compile_seconds > 0.0 {
        emit(Event::Span {
            phase: Phase::Compile,
            seconds: r.compile_seconds,
            ago: judged,
        });
    }
    if judged > 0.0 {
        emit(super::span(Phase::Gates, judged));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(hash: &str) -> StateSpec {
        StateSpec {
            hash: hash.into(),
            overlay: Default::default(),
        }
    }

    fn listed(q: &AheadQueue) -> Vec<(String, String, String)> {
        q.work
            .iter()
            .map(|w| {
                (
                    w.base.clone(),
                    w.state.hash.clone(),
                    w.file.display().to_string(),
                )
            })
            .collect()
    }

    #[test]
    fn compiles_sent_ahead_for_a_stale_baseline_are_dropped() {
        let ahead = |v: &str, f: &str| Ahead {
            variant: state(v),
            file: f.into(),
        };
        let mut q = AheadQueue::default();
        // Loop 2's variants, sent while loop 1 is measured against `b0`.
        q.replace(
            &state("b0"),
            &[
                ahead("v1", "b.cu"),
                ahead("v2", "a.cu"),
                ahead("v3", "b.cu"),
            ],
        );
        let sent = vec![
            ("b0".into(), "b0".into(), "a.cu".into()),
            ("b0".into(), "b0".into(), "b.cu".into()),
            ("b0".into(), "v1".into(), "b.cu".into()),
            ("b0".into(), "v2".into(), "a.cu".into()),
            ("b0".into(), "v3".into(), "b.cu".into()),
        ];
        assert_eq!(listed(&q), sent);
        // The next task is against `b0` still (loop 1 rejected): nothing is dropped.
        q.keep_for("b0");
        assert_eq!(listed(&q), sent);
        // Loop 1 accepted an edit: the next task is against `b1`, and none of these compiles
        // is of text that will be measured.
        q.keep_for("b1");
        assert!(listed(&q).is_empty());
        // What is sent next replaces what was not taken.
        q.replace(&state("b0"), &[ahead("v1", "b.cu")]);
        q.replace(&state("b1"), &[ahead("w1", "c.cu")]);
        assert_eq!(
            listed(&q),
            [
                ("b1".into(), "b1".into(), "c.cu".into()),
                ("b1".into(), "w1".into(), "c.cu".into())
            ]
        );
    }
}
