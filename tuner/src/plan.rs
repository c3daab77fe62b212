//! `tune --plan`: what a tune would do, before any build or GPU time. The loops are discovered
//! and rewritten as the search would (the same [`crate::discover`] and refusals), each loop's
//! judging specs found as the search finds them ([`crate::objective::judges`]), and every
//! variant looked up in the ledger, opened read-only ([`Ledger::read_only`]): nothing is
//! compiled, built, launched or written (no state directory, no working copy, no cache entry).
//!
//! The chains are followed as the search follows them while the ledger decides: a loop whose
//! every variant is decided there moves its chain on by the variant the search would keep
//! ([`crate::stats::choose`] over the recorded pairs), so that a second tune over an unchanged
//! tree plans nothing to measure. After a loop with a variant to measure, the chain's later
//! loops depend on its outcome: they are planned on the text before it (`after-measured`).
//!
//! The settings hash of the decision keys: computed as the run computes it for local lanes of
//! the `command` and `rocprofv3` backends (the device model read from the system, not opened);
//! the `bench` backend's also covers the device's compiler, known only once the device is
//! opened, so the plan takes the latest bench run's in the ledger (`settings_source`).
//!
//! The estimate (per comparison: one variant measured by one spec, or by the one objective):
//! - builds = comparisons + baselines (one per spec with a comparison, or one) + confirmations
//!   (the same number, when something may be accepted);
//! - gate compiles = comparisons (variants) + their files' baselines, when the gates compile;
//! - launches, at least `A + C * 2 * (min_runs + 1)` and at most
//!   `A + C * 2 * (max_runs + 1 + replication_runs(max_runs))`, with `A` = the A/A repeats
//!   (`(2 * min_runs + 1)` per baseline) and `C` the comparisons.

use crate::backend::spec::BackendSpec;
use crate::discover::{self, Discovery, LoopInfo};
use crate::error::Error;
use crate::ledger::{self, Ledger};
use crate::objective::{self, Objective};
use crate::report::{self, FULL};
use crate::search::coordinate::mode_str;
use crate::setup::{Lanes, Tune};
use crate::stats;
use crate::workcopy::{Overlay, Tree};
use pipeline::{Edit, Mode};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What a tune would do.
#[derive(Debug, Clone, Serialize)]
pub struct TunePlan {
    pub backend: String,
    pub kernels: Vec<PlanKernel>,
    /// The launch specs (`bench`); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub specs: Option<Vec<report::SpecStatus>>,
    pub loops: Vec<PlanLoop>,
    pub estimate: Estimate,
    /// Where the decision keys' settings hash came from: `computed`, `latest-run` (the latest
    /// matching run in the ledger) or `none` (no ledger, or no matching run: nothing reused).
    pub settings_source: String,
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct PlanKernel {
    pub file: String,
    pub kernel: String,
    /// The specs launching it (`bench`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub specs: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct PlanLoop {
    pub file: String,
    #[serde(rename = "loop")]
    pub loop_id: String,
    pub line: u32,
    pub function: String,
    /// The kernels reaching it.
    pub kernels: Vec<String>,
    /// The specs that would judge it (`bench`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub specs: Vec<String>,
    /// `tune`, `blocked` or `not-run` (no spec judges it).
    pub status: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub candidates: Vec<PlanCandidate>,
}

#[derive(Debug, Clone, Serialize)]
pub struct PlanCandidate {
    pub mode: String,
    /// `null` for a full unroll.
    #[serde(serialize_with = "factor_or_null")]
    pub factor: u32,
    /// `refused`, `reused` (decided in the ledger), `to-measure`, or `after-measured` (to
    /// measure, on a text an earlier loop's outcome may change).
    pub status: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The ledger's decision, when reused.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decision: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub speedup: Option<f64>,
}

fn factor_or_null<S: serde::Serializer>(f: &u32, s: S) -> Result<S::Ok, S::Error> {
    if *f == FULL {
        s.serialize_none()
    } else {
        s.serialize_u32(*f)
    }
}

/// The estimate of the work (see the module documentation for the formulas).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Estimate {
    /// Variants decided from the ledger.
    pub reused: usize,
    /// Variants to measure.
    pub variants: usize,
    /// Comparisons: each variant once per judging spec.
    pub comparisons: usize,
    pub baselines: usize,
    pub builds: usize,
    pub gate_compiles: usize,
    pub launches_min: usize,
    pub launches_max: usize,
    pub formula: String,
}

/// A reused accepted variant of a loop: (mode, factor, overlay, state, edits, each spec's
/// pairs), what the search's choice is made from.
type Kept = (Mode, u32, Overlay, String, Vec<Edit>, Vec<Vec<stats::Pair>>);

/// A chain of the plan: one function's loops.
struct Chain<'d> {
    loops: Vec<&'d LoopInfo>,
    judges: Vec<usize>,
}

/// Plan the tune `tune` over the tree at `root`: see the module documentation.
pub fn plan(tune: &Tune, root: &Path) -> Result<TunePlan, Error> {
    let settings = &tune.settings;
    crate::limits::check(settings)?;
    let disc = crate::search::discover(settings, root)?;
    crate::search::session::require_kernels(settings, &disc)?;
    let state_dir = crate::search::session::state_dir(settings, root);
    let tree = Tree::scan(root, std::slice::from_ref(&state_dir))?;
    let ledger = Ledger::read_only(&state_dir)?;
    let objectives = tune.backend.objectives();
    let bench = matches!(tune.backend, BackendSpec::Bench { .. });
    let mut notes = Vec::new();
    let (hash, settings_source) = match (&ledger, bench, &tune.lanes) {
        (None, ..) => (None, "none"),
        (Some(_), false, Lanes::Local(devices)) => {
            let model = match devices.as_deref() {
                Some([d, ..]) => d.model.clone(),
                _ => crate::devices::Device::probe(None).model,
            };
            (
                Some(crate::search::session::settings_hash(
                    tune.backend.name(),
                    &settings.fingerprint,
                    "",
                    &model,
                )),
                "computed",
            )
        }
        (Some(l), ..) => {
            let needle = if bench {
                "\"spec\":\"per-spec\"".to_string()
            } else {
                settings.fingerprint.clone()
            };
            match l.latest_settings(&needle)? {
                Some(h) => (Some(h), "latest-run"),
                None => (None, "none"),
            }
        }
    };
    if let Some(n) = (!objectives.is_empty())
        .then(|| objective::uncovered_note(&objectives, &disc))
        .flatten()
    {
        notes.push(n);
    }
    if bench {
        notes.push(
            "the bench backend's decision keys also cover the device's compiler: the plan assumes the latest bench run's settings".into(),
        );
    }
    let mut p = Planner {
        settings,
        disc: &disc,
        tree: &tree,
        ledger: ledger.as_ref(),
        hash,
        objectives: &objectives,
        est: Estimate::default(),
        spec_used: BTreeSet::new(),
        files_used: BTreeSet::new(),
    };
    let (loops, chains) = p.loops();
    let mut planned: BTreeMap<usize, PlanLoop> = loops;
    for chain in chains {
        p.chain(&chain, &mut planned)?;
    }
    let plan = settings.plan;
    let e = &mut p.est;
    e.baselines = if objectives.is_empty() {
        usize::from(e.comparisons > 0)
    } else {
        p.spec_used.len()
    };
    e.builds = e.comparisons + 2 * e.baselines;
    e.gate_compiles = e.variants + p.files_used.len();
    let aa = e.baselines * (2 * plan.min_runs + 1);
    e.launches_min = aa + e.comparisons * 2 * (plan.min_runs + 1);
    e.launches_max =
        aa + e.comparisons * 2 * (plan.max_runs + 1 + stats::replication_runs(plan.max_runs));
    e.formula = format!(
        "builds = comparisons + 2 x baselines (each baseline's and its confirmation's); gate compiles = variants + baseline files; launches from A + C x 2 x (min_runs + 1) to A + C x 2 x (max_runs + 1 + replication_runs(max_runs)), A = baselines x (2 x min_runs + 1) = {aa}, C = comparisons, min_runs = {}, max_runs = {}",
        plan.min_runs, plan.max_runs
    );
    let kernels = disc
        .kernels()
        .map(|(f, k)| PlanKernel {
            file: f.display().to_string(),
            kernel: k.to_string(),
            specs: objectives
                .iter()
                .filter(|o| o.launches(f, k))
                .map(|o| o.name.clone())
                .collect(),
        })
        .collect();
    let specs = (!objectives.is_empty()).then(|| {
        objectives
            .iter()
            .map(|o| report::SpecStatus {
                spec: o.name.clone(),
                kernel: o.kernel.clone(),
                status: if o.failed.is_some() {
                    report::SpecOutcome::Failed
                } else {
                    report::SpecOutcome::Ok
                },
                reason: o.failed.clone(),
                baseline: None,
                final_: None,
            })
            .collect()
    });
    Ok(TunePlan {
        backend: tune.backend.name().to_string(),
        kernels,
        specs,
        loops: planned.into_values().collect(),
        estimate: p.est,
        settings_source: settings_source.to_string(),
        notes,
    })
}

struct Planner<'a> {
    settings: &'a crate::settings::Settings,
    disc: &'a Discovery,
    tree: &'a Tree,
    ledger: Option<&'a Ledger>,
    hash: Option<String>,
    objectives: &'a [Objective],
    est: Estimate,
    spec_used: BTreeSet<usize>,
    files_used: BTreeSet<PathBuf>,
}

impl<'a> Planner<'a> {
    /// Every loop in the search's order (by its order), whole-loop statuses decided, and the
    /// chains of the loops to tune.
    fn loops(&self) -> (BTreeMap<usize, PlanLoop>, Vec<Chain<'a>>) {
        let mut loops: Vec<&LoopInfo> = self.disc.loops().collect();
        loops.sort_by(|a, b| {
            (a.height, &a.file, a.line, &a.id).cmp(&(b.height, &b.file, b.line, &b.id))
        });
        let mut out = BTreeMap::new();
        let mut chains: Vec<Chain<'a>> = Vec::new();
        let mut chain_of: HashMap<(PathBuf, String), usize> = HashMap::new();
        for (order, l) in loops.into_iter().enumerate() {
            let judges = objective::judges(self.objectives, self.disc, l);
            let mut pl = PlanLoop {
                file: l.file.display().to_string(),
                loop_id: l.id.to_string(),
                line: l.line,
                function: l.function.clone(),
                kernels: self.disc.reaching(l).into_iter().map(|(_, k)| k).collect(),
                specs: judges
                    .iter()
                    .map(|&i| self.objectives[i].name.clone())
                    .collect(),
                status: "tune".into(),
                reason: None,
                candidates: Vec::new(),
            };
            let ok: Vec<usize> = judges
                .iter()
                .copied()
                .filter(|&i| self.objectives[i].failed.is_none())
                .collect();
            if l.blocked {
                pl.status = "blocked".into();
                pl.reason = Some(format!("blocked by {}", l.blockers.join(", ")));
            } else if !self.objectives.is_empty() && ok.is_empty() {
                pl.status = "not-run".into();
                pl.reason = Some(if judges.is_empty() {
                    "no spec launches a kernel reaching it".into()
                } else {
                    "its specs fail to load".into()
                });
            } else {
                let n = chains.len();
                let c = *chain_of
                    .entry((l.file.clone(), l.function.clone()))
                    .or_insert(n);
                if c == n {
                    chains.push(Chain {
                        loops: Vec::new(),
                        judges: ok,
                    });
                }
                chains[c].loops.push(l);
            }
            out.insert(order, pl);
        }
        // The chains' loops by their order in `out`.
        (out, chains)
    }

    /// Plan one chain: its loops in order, moving on by the ledger's kept variants.
    fn chain(
        &mut self,
        chain: &Chain<'_>,
        out: &mut BTreeMap<usize, PlanLoop>,
    ) -> Result<(), Error> {
        let mut overlay = Overlay::new();
        let mut state = self.tree.hash.clone();
        let mut history: HashMap<PathBuf, Vec<Vec<Edit>>> = HashMap::new();
        let mut parsed: HashMap<PathBuf, Arc<pipeline::Source>> = HashMap::new();
        let mut measured_before = false;
        for l in &chain.loops {
            let order = out
                .iter()
                .find(|(_, p)| {
                    p.file == l.file.display().to_string() && p.loop_id == l.id.to_string()
                })
                .map(|(o, _)| *o)
                .expect("planned");
            let Some(current) = parsed
                .get(&l.file)
                .cloned()
                .or_else(|| self.disc.file(&l.file).map(|f| f.source.clone()))
            else {
                continue;
            };
            let h = history.get(&l.file).cloned().unwrap_or_default();
            let mut seen: BTreeSet<String> = BTreeSet::new();
            let mut cands = Vec::new();
            // (mode, factor, state, source, edits, decision) of the reused accepted ones.
            let mut accepted: Vec<Kept> = Vec::new();
            let mut all_reused = true;
            for &mode in &self.settings.modes {
                for &factor in &self.settings.factors {
                    if factor == FULL && mode == Mode::Manual {
                        continue;
                    }
                    let mut c = PlanCandidate {
                        mode: mode_str(mode).into(),
                        factor,
                        status: "refused".into(),
                        reason: None,
                        decision: None,
                        speedup: None,
                    };
                    let rw = match discover::rewrite(l, &current, &h, factor, mode) {
                        Ok(r) if r.edits.is_empty() => {
                            c.reason = Some("no-change: the variant is the current source".into());
                            cands.push(c);
                            continue;
                        }
                        Ok(r) => r,
                        Err(r) => {
                            c.reason = Some(format!("{}: {}", r.id, r.message));
                            cands.push(c);
                            continue;
                        }
                    };
                    let mut ov = overlay.clone();
                    ov.insert(l.file.clone(), rw.source.clone());
                    let vstate = self.tree.state_hash(&ov);
                    if !seen.insert(vstate.clone()) {
                        c.reason =
                            Some("duplicate: another factor or mode gives the same source".into());
                        cands.push(c);
                        continue;
                    }
                    let found = match (&self.hash, self.ledger) {
                        (Some(hash), Some(ledger)) => {
                            let mut key = ledger::decision_key(hash, &state, &vstate);
                            if !self.objectives.is_empty() {
                                let d: Vec<&str> = chain
                                    .judges
                                    .iter()
                                    .map(|&i| self.objectives[i].digest.as_str())
                                    .collect();
                                key = objective::judged_key(&key, &d);
                            }
                            ledger.decision(&key)?.map(|d| (key, d))
                        }
                        _ => None,
                    };
                    match found {
                        Some((key, d)) => {
                            self.est.reused += 1;
                            c.status = "reused".into();
                            c.decision = Some(d.status.clone());
                            c.speedup = d.speedup;
                            if d.status == "accepted" {
                                let ledger = self.ledger.expect("found in it");
                                let pairs = if self.objectives.is_empty() {
                                    let (p, a) = ledger.decision_pairs(&key)?;
                                    vec![p.into_iter().chain(a).collect()]
                                } else {
                                    let mut v = Vec::new();
                                    for &i in &chain.judges {
                                        let (p, a) = ledger.comparison_pairs(
                                            &key,
                                            &objective::spec_key(&key, &self.objectives[i].digest),
                                        )?;
                                        if !p.is_empty() {
                                            v.push(p.into_iter().chain(a).collect());
                                        }
                                    }
                                    v
                                };
                                accepted.push((mode, factor, ov, vstate, rw.edits, pairs));
                            }
                        }
                        None => {
                            all_reused = false;
                            self.est.variants += 1;
                            self.est.comparisons += chain.judges.len().max(1);
                            self.spec_used.extend(chain.judges.iter().copied());
                            self.files_used.insert(l.file.clone());
                            c.status = if measured_before {
                                "after-measured".into()
                            } else {
                                "to-measure".into()
                            };
                        }
                    }
                    cands.push(c);
                }
            }
            if let Some(pl) = out.get_mut(&order) {
                pl.candidates = cands;
            }
            if !all_reused {
                measured_before = true;
                continue;
            }
            if measured_before || accepted.is_empty() {
                continue;
            }
            // The variant the search keeps: as `finish_loop` chooses.
            accepted.sort_by_key(|a| {
                (
                    match a.0 {
                        Mode::Pragma => 0u8,
                        Mode::Manual => 1,
                    },
                    if a.1 == FULL { u32::MAX } else { a.1 },
                )
            });
            let slices: Vec<Vec<&[stats::Pair]>> = accepted
                .iter()
                .map(|a| a.5.iter().map(Vec::as_slice).collect())
                .collect();
            let contenders: Vec<stats::Contender<'_>> = accepted
                .iter()
                .zip(&slices)
                .map(|(a, s)| stats::Contender {
                    source: &a.3,
                    pairs: s.as_slice(),
                })
                .collect();
            let Some(choice) = stats::choose(&contenders, self.settings.plan.confidence) else {
                continue;
            };
            let (_, _, ov, vstate, edits, _) = accepted.swap_remove(choice.kept);
            if let Some(content) = ov.get(&l.file) {
                let unit = current.unit().clone();
                parsed.insert(
                    l.file.clone(),
                    Arc::new(pipeline::Source::with_unit(content.clone(), unit)),
                );
            }
            history.entry(l.file.clone()).or_default().push(edits);
            overlay = ov;
            state = vstate;
        }
        Ok(())
    }
}

/// The plan as text.
pub fn human(p: &TunePlan) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "plan of a tune with the {} backend (nothing was compiled or run)",
        p.backend
    );
    if let Some(specs) = &p.specs {
        let _ = writeln!(s, "\nspecs:");
        for sp in specs {
            let _ = match &sp.reason {
                Some(r) => writeln!(s, "  {}  kernel {}  FAILED: {r}", sp.spec, sp.kernel),
                None => writeln!(s, "  {}  kernel {}", sp.spec, sp.kernel),
            };
        }
    }
    let _ = writeln!(s, "\nkernels:");
    for k in &p.kernels {
        if p.specs.is_some() {
            let specs = if k.specs.is_empty() {
                "no spec".to_string()
            } else {
                k.specs.join(", ")
            };
            let _ = writeln!(s, "  {}: {}  ({specs})", k.file, k.kernel);
        } else {
            let _ = writeln!(s, "  {}: {}", k.file, k.kernel);
        }
    }
    let _ = writeln!(s, "\nloops:");
    for l in &p.loops {
        let judges = if l.specs.is_empty() {
            String::new()
        } else {
            format!("  judged by {}", l.specs.join(", "))
        };
        let _ = writeln!(
            s,
            "  {}:{} {} ({}){}",
            l.file, l.line, l.loop_id, l.status, judges
        );
        if let Some(r) = &l.reason {
            let _ = writeln!(s, "      {r}");
        }
        for c in &l.candidates {
            let what = format!("{} {}", c.mode, report::factor_text(c.factor));
            let extra = match (&c.decision, c.speedup, &c.reason) {
                (Some(d), Some(sp), _) => format!(": {d} {sp:.3}x"),
                (Some(d), None, _) => format!(": {d}"),
                (None, _, Some(r)) => format!(": {r}"),
                _ => String::new(),
            };
            let _ = writeln!(s, "      {what:<12} {}{extra}", c.status);
        }
    }
    let e = &p.estimate;
    let _ = writeln!(
        s,
        "\nestimate: {} variants to measure ({} comparisons), {} reused from the ledger; {} baselines, about {} builds, {} gate compiles, {} to {} launches",
        e.variants, e.comparisons, e.reused, e.baselines, e.builds, e.gate_compiles, e.launches_min, e.launches_max
    );
    let _ = writeln!(s, "  ({})", e.formula);
    let _ = writeln!(s, "settings for the ledger's keys: {}", p.settings_source);
    for n in &p.notes {
        let _ = writeln!(s, "note: {n}");
    }
    s
}

/// The plan as JSON.
pub fn json(p: &TunePlan) -> String {
    let mut s = serde_json::to_string_pretty(p).expect("plan serializes");
    s.push('\n');
    s
}
