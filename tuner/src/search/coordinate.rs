//! The search: which comparisons are made, on which lane, and what is decided.
//!
//! Loops are grouped by the function that holds them (a kernel, or a device function): a
//! *chain*. A chain's loops are tried in order (innermost first, or by the baseline's profile
//! where the backend has one); each loop's variants are compared with the chain's current
//! state (the original tree plus the variants accepted for the chain's earlier loops), and
//! its best accepted variant moves that state on (greedy, per kernel). Chains are independent:
//! their comparisons go to whichever lane is free, in batches of at most `--jobs` variants of
//! one loop, preferring a lane that already holds the batch's baseline. A lane lost with
//! comparisons in flight has them measured again from scratch on another lane.
//!
//! Every event a lane sends is recorded here (the only writer of the ledger); a decision is
//! made here from the very samples recorded, with [`crate::stats::assess`]; of a loop's accepted
//! variants the one kept is [`crate::stats::choose`]'s (the least invasive that no other is
//! significantly faster than: the others are a `tie` or `superseded`).
//!
//! **Compile ahead.** A lane that prepares while it measures (GPU backends) is sent, with the
//! last batch of a loop, the gate compiles of the chain's next loops made on the text the
//! current loop is measured against: most loops accept nothing, and then the next loops'
//! variants are exactly those, compiled by the time their turn comes (content-addressed cache;
//! the lane's compile workers do them beside its preparing thread, and a gate that needs one
//! still running waits for it). When the current loop accepts an edit, the next loops'
//! variants are made again from the new text and compiled then; what was compiled ahead is only
//! left in the cache, and what was not started is dropped. A CPU lane (`command`) compiles
//! nothing while it measures.

mod specs;

use crate::backend::KernelShare;
use crate::discover::{self, Discovery, LoopInfo};
use crate::error::Error;
use crate::executor::{Executor, LaneInfo, Message};
use crate::lane::{Ahead, Device, Event, Item, ItemResult, StateSpec, Task};
use crate::ledger::{self, Ledger};
use crate::objective::Objective;
use crate::report::{self, Applied, Candidate, Occupancy, Ratios, Status, VariantRef, FULL};
use crate::search::{Progress, Settings};
use crate::stats::{self, Assessment, Pair, Plan, Verdict};
use crate::timing::Timeline;
use crate::workcopy::{Overlay, Tree};
use pipeline::{Edit, Mode};
use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long the search waits for a lane's message before it looks at the stop flag again.
const POLL: Duration = Duration::from_millis(100);
/// Variants compiled ahead per `--jobs` (the lane's compile workers): two loops' worth for
/// the usual six variants a loop and `--jobs` 4-8, so that the workers never wait for a loop
/// to be decided.
const AHEAD_PER_JOB: usize = 2;
/// Loops compiled ahead at most: the ones after a loop that accepts an edit are compiled
/// again from the new text, so a deeper lookahead only wastes compiles.
const AHEAD_LOOPS: usize = 3;

pub(crate) fn mode_str(m: Mode) -> &'static str {
    match m {
        Mode::Pragma => "pragma",
        Mode::Manual => "manual",
    }
}

/// `pragma x4`, `pragma full`.
fn label(mode: Mode, factor: u32) -> String {
    format!("{} {}", mode_str(mode), report::factor_text(factor))
}

/// How invasive a variant is: a pragma before a manual copy, a smaller factor before a larger
/// (a full unroll is the largest).
fn invasiveness(mode: Mode, factor: u32) -> (u8, u32) {
    (
        match mode {
            Mode::Pragma => 0,
            Mode::Manual => 1,
        },
        if factor == FULL { u32::MAX } else { factor },
    )
}

/// A variant of a loop, before its decision.
#[derive(Debug, Clone)]
pub(crate) struct Pending {
    mode: Mode,
    factor: u32,
    overlay: Overlay,
    state: String,
    key: String,
    edits: Vec<Edit>,
    file: PathBuf,
}

/// What a decision was made from.
pub(crate) enum Finding {
    /// Measured to a verdict (`skipped`: why the gates were skipped), from these pairs and
    /// replication pairs.
    Measured {
        assessment: Assessment,
        skipped: Option<String>,
        pairs: Vec<Pair>,
        again: Vec<Pair>,
    },
    /// Not measurable: gated, build-failed, check-failed, not-cached.
    Failed(Status, String),
    /// The same machine code as the baseline: rejected without a run.
    SameCode,
    /// The same machine code as another variant decided against the same baseline: its
    /// decision, without a run.
    SameCodeAs(Box<Twin>),
    /// Taken from the ledger, with the pairs it was made from.
    Reused(Box<ledger::Decision>, Vec<Pair>, Vec<Pair>),
}

/// The decision a variant of the same machine code takes.
pub(crate) struct Twin {
    key: String,
    label: String,
    status: Status,
    assessment: Option<Assessment>,
    reason: Option<String>,
    pairs: Vec<Pair>,
    again: Vec<Pair>,
}

/// A decided variant of a loop.
pub(crate) struct Decided {
    variant: Pending,
    status: Status,
    assessment: Option<Assessment>,
    runs: Option<u32>,
    reason: Option<String>,
    device: Option<Device>,
    reused: bool,
    /// The gates' occupancy prediction.
    occupancy: Option<Occupancy>,
    /// The pairs and replication pairs the decision was made from (a variant of another's
    /// machine code: that one's).
    pairs: Vec<Pair>,
    again: Vec<Pair>,
    /// The key of the variant whose machine code, and decision, this one took.
    same_as: Option<String>,
    /// The specs that measured it ([`crate::objective`]): each one's figures.
    judged_by: Option<Vec<report::JudgedBy>>,
    /// Each judging spec's pairs and replication pairs, in the order of the loop's specs
    /// (several specs: what a tie or supersession is decided from).
    spec_pairs: Vec<Vec<Pair>>,
}

/// What `same-code` says.
pub const SAME_CODE: &str =
    "same-code: the variant's machine code is byte-identical to the baseline's (not measured)";

impl Decided {
    /// The one way a decision is made.
    fn new(
        variant: Pending,
        finding: Finding,
        plan: &Plan,
        device: Option<Device>,
        occupancy: Option<Occupancy>,
        ledger_path: &std::path::Path,
    ) -> Result<Decided, Error> {
        let mut d = Decided {
            variant,
            status: Status::Rejected,
            assessment: None,
            runs: None,
            reason: None,
            device,
            reused: false,
            occupancy,
            pairs: Vec::new(),
            again: Vec::new(),
            same_as: None,
            judged_by: None,
            spec_pairs: Vec::new(),
        };
        match finding {
            Finding::Measured {
                assessment: a,
                skipped,
                pairs,
                again,
            } => {
                let (status, mut reason) = match a.verdict {
                    Verdict::Accept => (Status::Accepted, None),
                    Verdict::Reject(r) => (Status::Rejected, Some(rejection_text(r, &a, plan))),
                    Verdict::Continue => (Status::Rejected, Some("undecided".into())),
                };
                if let Some(s) = skipped {
                    let note = format!("code-object gates skipped: {s}");
                    reason = Some(match reason {
                        Some(r) => format!("{r}; {note}"),
                        None => note,
                    });
                }
                d.status = status;
                d.reason = reason;
                d.runs = Some(a.n as u32);
                d.assessment = Some(a);
                d.pairs = pairs;
                d.again = again;
            }
            Finding::Failed(status, reason) => {
                d.status = status;
                d.reason = Some(reason);
            }
            Finding::SameCode => {
                d.runs = Some(0);
                d.reason = Some(SAME_CODE.to_string());
            }
            Finding::SameCodeAs(t) => {
                let t = *t;
                d.status = t.status;
                d.assessment = t.assessment;
                d.runs = Some(0);
                d.reason = Some(match t.reason {
                    Some(r) => format!("same code as {}: {r}", t.label),
                    None => format!("same code as {} (not measured)", t.label),
                });
                d.pairs = t.pairs;
                d.again = t.again;
                d.same_as = Some(t.key);
            }
            Finding::Reused(r, pairs, again) => {
                let r = *r;
                // The ledger only holds decisions of a known status.
                d.status = Status::parse(&r.status).ok_or_else(|| Error::Ledger {
                    path: ledger_path.display().to_string(),
                    reason: format!("unknown decision status '{}'", r.status),
                })?;
                d.assessment = r.speedup.map(|sp| Assessment {
                    n: r.runs.unwrap_or(0) as usize,
                    speedup: sp,
                    ci: r.ci.unwrap_or((f64::NAN, f64::NAN)),
                    p_value: r.p_value.unwrap_or(f64::NAN),
                    verdict: Verdict::Continue,
                });
                d.runs = r.runs;
                d.reason = r.reason;
                d.device = r.device;
                d.reused = true;
                d.occupancy = r.occupancy;
                d.pairs = pairs;
                d.again = again;
                d.same_as = r.same_as;
            }
        }
        Ok(d)
    }

    fn speedup(&self) -> Option<f64> {
        self.assessment.map(|a| a.speedup)
    }

    fn label(&self) -> String {
        label(self.variant.mode, self.variant.factor)
    }

    /// The decision a variant of the same machine code takes.
    fn twin(&self) -> Twin {
        Twin {
            key: self
                .same_as
                .clone()
                .unwrap_or_else(|| self.variant.key.clone()),
            label: self.label(),
            status: self.status,
            assessment: self.assessment,
            reason: self.reason.clone(),
            pairs: self.pairs.clone(),
            again: self.again.clone(),
        }
    }

    /// The per-pair ratios of the report.
    fn ratios(&self) -> Option<Ratios> {
        let r = |p: &[Pair]| -> Vec<f64> { p.iter().map(|p| p.baseline / p.variant).collect() };
        (!self.pairs.is_empty()).then(|| Ratios {
            pairs: r(&self.pairs),
            replication: r(&self.again),
        })
    }
}

pub(crate) fn rejection_text(r: stats::Rejection, a: &Assessment, plan: &Plan) -> String {
    let min = plan.min_speedup * 100.0;
    match r {
        stats::Rejection::NotFaster => format!(
            "not-faster: p = {:.2} after {} runs (needs <= {:.1e})",
            a.p_value,
            a.n,
            plan.alpha_per_look()
        ),
        stats::Rejection::BelowMinSpeedup => format!(
            "below-min-speedup: {:.3}x is less than the {min:.1}% minimum",
            a.speedup
        ),
        stats::Rejection::Futile => format!(
            "futile: the interval [{:.3}, {:.3}] rules out a {min:.1}% speedup",
            a.ci.0, a.ci.1
        ),
        stats::Rejection::Superseded => "superseded".into(),
        stats::Rejection::NotReplicated if a.p_value <= stats::REPLICATION_ALPHA => format!(
            "not-replicated: accepted, but with {} more pairs the speedup over all of them is {:.3}x, less than the {min:.1}% minimum",
            stats::replication_runs(a.n),
            a.speedup
        ),
        stats::Rejection::NotReplicated => format!(
            "not-replicated: accepted, but {} more pairs gave p = {:.2} (needs <= {})",
            stats::replication_runs(a.n),
            a.p_value,
            stats::REPLICATION_ALPHA
        ),
        stats::Rejection::SpecSlower => format!(
            "spec-slower: a spec's interval does not rule out a slowdown beyond the {min:.1}% minimum"
        ),
    }
}

/// The loop of a chain whose variants are being decided.
struct Active<'d> {
    order: usize,
    l: &'d LoopInfo,
    decided: Vec<Decided>,
    /// Variants still waiting for their decision.
    waiting: usize,
    /// Machine-code digests of the variants decided (measured) against the loop's baseline,
    /// with their keys: sent with the loop's later batches (`known`).
    codes: Vec<(String, String)>,
    /// Several objectives: the variants waiting for their specs' measurements, by decision key.
    parts: HashMap<String, specs::Parts>,
    /// Several objectives: each spec's finished measurement, by its comparison key.
    subs: HashMap<String, specs::PartResult>,
}

/// The loops of one function, tried one after another.
struct Chain<'d> {
    loops: Vec<(usize, &'d LoopInfo)>,
    next: usize,
    /// The chain's current state: the original plus its accepted variants.
    overlay: Overlay,
    state: String,
    history: HashMap<PathBuf, Vec<Vec<Edit>>>,
    parsed: HashMap<PathBuf, Arc<pipeline::Source>>,
    active: Option<Active<'d>>,
    /// The specs judging its loops (several objectives only; empty otherwise).
    judges: Vec<usize>,
}

/// A comparison to make.
#[derive(Debug, Clone)]
struct Job {
    variant: Pending,
    /// `None`: the final confirmation.
    chain: Option<usize>,
    attempt: u32,
    /// Whether its machine code may stand for a run (same code as the baseline, or as another
    /// variant): off again for a job whose twin could not be found.
    same_code: bool,
    /// Several objectives: the spec this comparison measures with, the decision key it is a
    /// part of, and whether other specs judge the variant too.
    spec: Option<specs::SpecJob>,
}

/// A sample as recorded: (comparison, round, role, value).
type Sample = (String, usize, String, f64);

/// Comparisons against one baseline, for one lane.
#[derive(Debug, Clone)]
struct Batch {
    base: StateSpec,
    jobs: Vec<Job>,
    /// The objective its comparisons measure with.
    spec: Option<usize>,
}

/// A comparison on a lane.
struct Flight {
    job: Job,
    base: StateSpec,
    lane: usize,
    /// (comparison, round, role, value) as recorded: the comparison's own and its
    /// replication's.
    samples: Vec<Sample>,
}

/// How a comparison ended on its lane.
struct Ended {
    result: ItemResult,
    occupancy: Option<Occupancy>,
    code: Option<String>,
}

enum TaskKind {
    Compare(Vec<String>),
    Baseline,
}

struct TaskInfo {
    lane: usize,
    kind: TaskKind,
}

struct LaneState {
    alive: bool,
    busy: usize,
    capacity: usize,
    last_base: Option<String>,
}

/// The A/A repeats of the original baseline.
#[derive(Default)]
struct Aa {
    done: bool,
    task: Option<u64>,
    samples: Vec<f64>,
    finished: bool,
    kernels: Option<Vec<KernelShare>>,
}

/// What the report is made of.
#[derive(Default)]
pub(crate) struct Out {
    pub candidates: Vec<((usize, usize), Candidate)>,
    pub applied: Vec<(usize, Applied, Mode)>,
    pub baseline: Option<ledger::Baseline>,
    pub noise: Option<(f64, f64)>,
    /// Launches per sample of the original baseline, where the backend batches them.
    pub launches_per_sample: Option<u32>,
    /// With several specs: the spec whose baseline is the report's (`baseline`), and each
    /// confirming spec's final figure (the applied combination against the original).
    pub baseline_spec: Option<usize>,
    pub spec_finals: BTreeMap<usize, report::Final>,
    pub compiles: u32,
    pub builds: u32,
    pub reused: u32,
    pub notes: BTreeSet<String>,
}

/// What the search works with.
pub(crate) struct Setup<'a> {
    pub settings: &'a Settings,
    pub ledger: &'a Ledger,
    pub tree: &'a Tree,
    pub exec: &'a dyn Executor,
    pub progress: &'a dyn Progress,
    pub stop: &'a Arc<AtomicBool>,
    pub session: i64,
    pub settings_hash: String,
    /// When the tune started (the timing's zero).
    pub started: Instant,
    /// The backend's objectives ([`crate::objective`]); empty: one.
    pub objectives: &'a [Objective],
}

/// The search of one run.
pub(crate) struct Coordinator<'a, 'd> {
    s: Setup<'a>,
    lanes: Vec<LaneState>,
    info: Vec<LaneInfo>,
    chains: Vec<Chain<'d>>,
    queue: VecDeque<Batch>,
    flights: HashMap<String, Flight>,
    tasks: HashMap<u64, TaskInfo>,
    next_task: u64,
    seq: usize,
    aa: Aa,
    /// Several objectives: each spec's baseline and A/A check, started when a comparison
    /// first needs it.
    spec_runs: Vec<specs::SpecRun>,
    /// Several objectives: the specs judging each loop decided (by its order).
    loop_judges: HashMap<usize, Vec<usize>>,
    /// The final confirmation's comparisons, by key, as they end.
    confirmed: HashMap<String, (ItemResult, Vec<Sample>, usize)>,
    /// Comparisons finished before the A/A check passed: decided once it has.
    deferred: Vec<(Flight, usize, Ended)>,
    /// Where the wall time goes.
    pub timeline: Timeline,
    /// Loops of the applied variants, for the combination.
    loops: HashMap<usize, &'d LoopInfo>,
    /// The loops searched (set by `run`): the next loop's variants compiled ahead.
    disc: Option<&'d Discovery>,
    pub out: Out,
}

impl<'a, 'd> Coordinator<'a, 'd> {
    pub(crate) fn new(s: Setup<'a>) -> Coordinator<'a, 'd> {
        let info = s.exec.lanes().to_vec();
        let lanes = info
            .iter()
            .map(|l| LaneState {
                alive: true,
                busy: 0,
                capacity: if l.overlap { 2 } else { 1 },
                last_base: None,
            })
            .collect();
        Coordinator {
            timeline: Timeline::new(s.started),
            spec_runs: specs::SpecRun::all(s.objectives),
            s,
            lanes,
            info,
            chains: Vec::new(),
            queue: VecDeque::new(),
            flights: HashMap::new(),
            tasks: HashMap::new(),
            next_task: 1,
            seq: 0,
            aa: Aa::default(),
            loop_judges: HashMap::new(),
            confirmed: HashMap::new(),
            deferred: Vec::new(),
            loops: HashMap::new(),
            disc: None,
            out: Out::default(),
        }
    }

    pub(crate) fn unit(&self) -> &str {
        &self.info[0].unit
    }

    fn check_stop(&self) -> Result<(), Error> {
        if self.s.stop.load(Ordering::SeqCst) {
            Err(Error::Interrupted)
        } else {
            Ok(())
        }
    }

    fn original(&self) -> StateSpec {
        StateSpec::original(self.s.tree)
    }

    /// Record a candidate's final status (ledger, progress, report).
    fn push(
        &mut self,
        order: usize,
        c: Candidate,
        key: Option<&str>,
        reused: bool,
    ) -> Result<(), Error> {
        self.s.ledger.record_candidate(
            self.s.session,
            key,
            &c.file,
            &c.loop_id,
            c.line,
            c.mode.as_deref(),
            c.factor,
            c.status.as_str(),
            c.reason.as_deref(),
            reused,
        )?;
        self.s.progress.decided(&c);
        self.seq += 1;
        self.out.candidates.push(((order, self.seq), c));
        Ok(())
    }

    /// The report's candidates, in the order of the loops, then of decision.
    pub(crate) fn candidates(&self) -> Vec<Candidate> {
        let mut v: Vec<&((usize, usize), Candidate)> = self.out.candidates.iter().collect();
        v.sort_by_key(|(k, _)| *k);
        v.into_iter().map(|(_, c)| c.clone()).collect()
    }

    /// The accepted variants, in the order of the loops.
    pub(crate) fn applied(&self) -> Vec<Applied> {
        let mut v: Vec<&(usize, Applied, Mode)> = self.out.applied.iter().collect();
        v.sort_by_key(|(o, _, _)| *o);
        v.into_iter().map(|(_, a, _)| a.clone()).collect()
    }

    /// The search: every chain to its end.
    pub(crate) fn run(&mut self, disc: &'d Discovery) -> Result<(), Error> {
        self.disc = Some(disc);
        let mut loops: Vec<&'d LoopInfo> = disc.loops().collect();
        loops.sort_by(|a, b| {
            (a.height, &a.file, a.line, &a.id).cmp(&(b.height, &b.file, b.line, &b.id))
        });
        // Rank by the baseline's profile when the backend has one.
        let mut not_run: BTreeSet<String> = BTreeSet::new();
        let needs_profile = loops.iter().any(|l| !l.blocked);
        let multi = self.multi();
        if multi {
            // Each spec has its own baseline and A/A check (`specs`): no global one.
            self.aa.done = true;
            if let Some(n) = crate::objective::uncovered_note(self.s.objectives, disc) {
                self.out.notes.insert(n);
            }
        }
        if needs_profile && self.info[0].ranks && !multi {
            self.check_stop()?;
            self.baseline_repeats(true)?;
            let shares = self.aa.kernels.take().unwrap_or_default();
            let share_of = |l: &LoopInfo| -> Option<f64> {
                shares
                    .iter()
                    .filter(|s| crate::backend::same_function(&s.function, &l.function))
                    .map(|s| s.share)
                    .reduce(f64::max)
            };
            for l in &loops {
                if l.in_kernel && share_of(l).is_none() {
                    not_run.insert(l.function.clone());
                }
            }
            loops.sort_by(|a, b| {
                let (sa, sb) = (share_of(a).unwrap_or(0.0), share_of(b).unwrap_or(0.0));
                sb.total_cmp(&sa)
                    .then((a.height, &a.file, a.line).cmp(&(b.height, &b.file, b.line)))
            });
        }
        let mut chain_of: HashMap<(PathBuf, String), usize> = HashMap::new();
        for (order, l) in loops.into_iter().enumerate() {
            self.check_stop()?;
            let whole = |status: Status, reason: String| {
                let file = l.file.display().to_string();
                Candidate::new(&file, &l.id.to_string(), l.line, None, status, Some(reason))
            };
            if l.blocked {
                let c = whole(
                    Status::Blocked,
                    format!("blocked by {}", l.blockers.join(", ")),
                );
                self.push(order, c, None, false)?;
                continue;
            }
            if l.in_kernel && not_run.contains(&l.function) {
                let c = whole(
                    Status::NotRun,
                    format!("kernel {} never ran in the baseline", l.function),
                );
                self.push(order, c, None, false)?;
                continue;
            }
            let judges = if multi {
                match self.loop_specs(disc, l) {
                    Ok(j) => j,
                    Err(why) => {
                        self.push(order, whole(Status::NotRun, why), None, false)?;
                        continue;
                    }
                }
            } else {
                Vec::new()
            };
            let n = self.chains.len();
            let c = *chain_of
                .entry((l.file.clone(), l.function.clone()))
                .or_insert(n);
            if c == n {
                self.chains.push(Chain {
                    loops: Vec::new(),
                    next: 0,
                    overlay: Overlay::new(),
                    state: self.s.tree.hash.clone(),
                    history: HashMap::new(),
                    parsed: HashMap::new(),
                    active: None,
                    judges,
                });
            }
            self.chains[c].loops.push((order, l));
        }
        loop {
            self.check_stop()?;
            for c in 0..self.chains.len() {
                self.advance(c, disc)?;
            }
            let done = self
                .chains
                .iter()
                .all(|c| c.active.is_none() && c.next >= c.loops.len());
            if done {
                if multi && self.out.baseline.is_none() {
                    self.spec_baseline();
                }
                return Ok(());
            }
            // The A/A repeats go first, on the first free lane; the other lanes (and a GPU
            // lane's second task) measure comparisons meanwhile, whose decisions wait for the
            // A/A check (see `item`).
            let comparing =
                !self.queue.is_empty() || !self.flights.is_empty() || !self.deferred.is_empty();
            if comparing && !self.aa.done {
                // Also after the lane that measured them was lost.
                self.start_aa(false)?;
            }
            if multi {
                self.spec_gate()?;
            }
            self.dispatch()?;
            self.pump()?;
            if self.aa.finished && !self.aa.done {
                self.finish_aa()?;
            }
        }
    }

    /// Start the chain's next loops until one has variants to measure (or the chain ends);
    /// finish its active loop once every variant is decided.
    fn advance(&mut self, c: usize, disc: &'d Discovery) -> Result<(), Error> {
        loop {
            if let Some(a) = &self.chains[c].active {
                if a.waiting > 0 {
                    return Ok(());
                }
                self.finish_loop(c, false, Some(disc))?;
                continue;
            }
            let chain = &mut self.chains[c];
            if chain.next >= chain.loops.len() {
                return Ok(());
            }
            let (order, l) = chain.loops[chain.next];
            chain.next += 1;
            self.start_loop(c, order, l, disc)?;
        }
    }

    /// The file as the chain has it now, parsed and guarded.
    fn current_source(
        &self,
        c: usize,
        disc: &Discovery,
        file: &std::path::Path,
    ) -> Option<Arc<pipeline::Source>> {
        self.chains[c]
            .parsed
            .get(file)
            .or_else(|| disc.file(file).map(|f| &f.source))
            .cloned()
    }

    /// The variants of loop `l` made on the chain's current text: `(mode, factor, rewrite or
    /// why not)`, in the order of `--mode` and `--factors` (a full unroll is a pragma only).
    fn rewrites(
        &self,
        c: usize,
        l: &LoopInfo,
        disc: &Discovery,
    ) -> Vec<(Mode, u32, Result<discover::Rewrite, discover::Refused>)> {
        let Some(current) = self.current_source(c, disc, &l.file) else {
            return Vec::new();
        };
        let history = self.chains[c]
            .history
            .get(&l.file)
            .cloned()
            .unwrap_or_default();
        let settings = self.s.settings;
        let mut out = Vec::new();
        for &mode in &settings.modes {
            for &factor in &settings.factors {
                if factor == FULL && mode == Mode::Manual {
                    continue;
                }
                out.push((
                    mode,
                    factor,
                    discover::rewrite(l, &current, &history, factor, mode),
                ));
            }
        }
        out
    }

    /// Rewrite a loop into its variants; reuse the ledger's decisions; queue the rest.
    fn start_loop(
        &mut self,
        c: usize,
        order: usize,
        l: &'d LoopInfo,
        disc: &'d Discovery,
    ) -> Result<(), Error> {
        let judges: Vec<usize> = self.chains[c]
            .judges
            .iter()
            .copied()
            .filter(|&i| self.spec_runs[i].failed.is_none())
            .collect();
        if self.multi() && judges.is_empty() {
            let file = l.file.display().to_string();
            let why = self.failed_specs_text(&self.chains[c].judges);
            let cand = Candidate::new(
                &file,
                &l.id.to_string(),
                l.line,
                None,
                Status::NotRun,
                Some(why),
            );
            return self.push(order, cand, None, false);
        }
        self.loop_judges.insert(order, judges.clone());
        self.chains[c].active = Some(Active {
            order,
            l,
            decided: Vec::new(),
            waiting: 0,
            codes: Vec::new(),
            parts: HashMap::new(),
            subs: HashMap::new(),
        });
        let file = l.file.display().to_string();
        let mut pending: Vec<Pending> = Vec::new();
        let mut seen_states: BTreeSet<String> = BTreeSet::new();
        let settings = self.s.settings;
        for (mode, factor, rw) in self.rewrites(c, l, disc) {
            let cand = |status: Status, reason: String| {
                Candidate::new(
                    &file,
                    &l.id.to_string(),
                    l.line,
                    Some((mode_str(mode), factor)),
                    status,
                    Some(reason),
                )
            };
            let rw = match rw {
                Ok(r) if r.edits.is_empty() => {
                    let c = cand(
                        Status::Refused,
                        "no-change: the variant is the current source".into(),
                    );
                    self.push(order, c, None, false)?;
                    continue;
                }
                Ok(r) => r,
                Err(r) => {
                    let c = cand(Status::Refused, format!("{}: {}", r.id, r.message));
                    self.push(order, c, None, false)?;
                    continue;
                }
            };
            let mut overlay = self.chains[c].overlay.clone();
            overlay.insert(l.file.clone(), rw.source);
            let state = self.s.tree.state_hash(&overlay);
            if !seen_states.insert(state.clone()) {
                let c = cand(
                    Status::Refused,
                    "duplicate: another factor or mode gives the same source".into(),
                );
                self.push(order, c, None, false)?;
                continue;
            }
            let mut key =
                ledger::decision_key(&self.s.settings_hash, &self.chains[c].state, &state);
            if self.multi() {
                key = self.judged_key(&key, &judges);
            }
            let p = Pending {
                mode,
                factor,
                overlay,
                state,
                key: key.clone(),
                edits: rw.edits,
                file: l.file.clone(),
            };
            match self.s.ledger.decision(&key)? {
                Some(d) => {
                    self.out.reused += 1;
                    let (pairs, again) = self
                        .s
                        .ledger
                        .decision_pairs(d.same_as.as_deref().unwrap_or(&d.key))?;
                    let multi = self.multi();
                    let mut d = Decided::new(
                        p,
                        Finding::Reused(Box::new(d), pairs, again),
                        &settings.plan,
                        None,
                        None,
                        &self.s.ledger.path,
                    )?;
                    if multi {
                        self.reused_judgement(&mut d, &judges)?;
                    }
                    self.chains[c]
                        .active
                        .as_mut()
                        .expect("active")
                        .decided
                        .push(d);
                }
                None => pending.push(p),
            }
        }
        let base = StateSpec {
            hash: self.chains[c].state.clone(),
            overlay: self.chains[c].overlay.clone(),
        };
        self.chains[c].active.as_mut().expect("active").waiting = pending.len();
        if self.multi() {
            self.queue_judged(c, &base, pending, &judges);
            return Ok(());
        }
        let jobs = settings.jobs.max(1);
        let mut rest = pending;
        while !rest.is_empty() {
            let take = rest.len().min(jobs);
            let batch: Vec<Job> = rest
                .drain(..take)
                .map(|variant| Job {
                    variant,
                    chain: Some(c),
                    attempt: 0,
                    same_code: settings.skip_same_code,
                    spec: None,
                })
                .collect();
            self.queue.push_back(Batch {
                base: base.clone(),
                jobs: batch,
                spec: None,
            });
        }
        Ok(())
    }

    /// The gate compiles of chain `c`'s next loops, made on the chain's current text (see the
    /// module documentation): every variant not decided in the ledger already, of the next
    /// loop and of the ones after it until there are [`AHEAD_PER_JOB`] per `--jobs` (at most
    /// [`AHEAD_LOOPS`] loops), so that the lane's compile workers stay busy while a loop is
    /// measured.
    fn ahead(&self, c: usize, disc: &Discovery) -> Vec<Ahead> {
        let chain = &self.chains[c];
        let want = AHEAD_PER_JOB * self.s.settings.jobs.max(1);
        let mut out: Vec<Ahead> = Vec::new();
        for &(_, l) in chain.loops.iter().skip(chain.next).take(AHEAD_LOOPS) {
            if out.len() >= want {
                break;
            }
            self.ahead_of(c, l, disc, &mut out);
        }
        out
    }

    /// The variants of loop `l` of chain `c` to compile ahead, added to `out`.
    fn ahead_of(&self, c: usize, l: &LoopInfo, disc: &Discovery, out: &mut Vec<Ahead>) {
        let chain = &self.chains[c];
        for (_, _, rw) in self.rewrites(c, l, disc) {
            let Ok(rw) = rw else { continue };
            if rw.edits.is_empty() {
                continue;
            }
            let mut overlay = chain.overlay.clone();
            overlay.insert(l.file.clone(), rw.source);
            let state = self.s.tree.state_hash(&overlay);
            let key = ledger::decision_key(&self.s.settings_hash, &chain.state, &state);
            if out.iter().any(|a| a.variant.hash == state)
                || self.s.ledger.decision(&key).ok().flatten().is_some()
            {
                continue;
            }
            out.push(Ahead {
                variant: StateSpec {
                    hash: state,
                    overlay,
                },
                file: l.file.clone(),
            });
        }
    }

    /// Report the loop's decisions (in the order of --mode and --factors); with `partial`
    /// (Ctrl-C) nothing moves on. The variant kept ([`stats::choose`]) becomes the chain's
    /// state; the other accepted ones are a `tie` or `superseded`.
    fn finish_loop(
        &mut self,
        c: usize,
        partial: bool,
        disc: Option<&Discovery>,
    ) -> Result<(), Error> {
        let Some(mut a) = self.chains[c].active.take() else {
            return Ok(());
        };
        let settings = self.s.settings;
        let order = |d: &Decided| {
            (
                settings.modes.iter().position(|m| *m == d.variant.mode),
                settings.factors.iter().position(|f| *f == d.variant.factor),
            )
        };
        a.decided.sort_by_key(|d| order(d));
        // One variant per loop: of the accepted ones, in the order of invasiveness, the first
        // that no other is significantly faster than.
        let mut accepted: Vec<usize> = (0..a.decided.len())
            .filter(|&i| a.decided[i].status == Status::Accepted)
            .collect();
        accepted
            .sort_by_key(|&i| invasiveness(a.decided[i].variant.mode, a.decided[i].variant.factor));
        let all: Vec<Vec<Vec<Pair>>> = accepted
            .iter()
            .map(|&i| {
                let d = &a.decided[i];
                if d.spec_pairs.is_empty() {
                    vec![d.pairs.iter().chain(&d.again).copied().collect()]
                } else {
                    d.spec_pairs.clone()
                }
            })
            .collect();
        let all: Vec<Vec<&[Pair]>> = all
            .iter()
            .map(|p| p.iter().map(Vec::as_slice).collect())
            .collect();
        let contenders: Vec<stats::Contender<'_>> = accepted
            .iter()
            .zip(&all)
            .map(|(&i, pairs)| {
                let d = &a.decided[i];
                stats::Contender {
                    source: d.same_as.as_deref().unwrap_or(&d.variant.key),
                    pairs: pairs.as_slice(),
                }
            })
            .collect();
        let choice = stats::choose(&contenders, settings.plan.confidence);
        let best = choice.as_ref().map(|ch| accepted[ch.kept]);
        let mut versus: HashMap<usize, stats::Versus> = HashMap::new();
        if let Some(ch) = &choice {
            for (k, v) in ch.versus.iter().enumerate() {
                if let Some(v) = v {
                    versus.insert(accepted[k], *v);
                }
            }
        }
        let l = a.l;
        let file = l.file.display().to_string();
        for (i, d) in a.decided.iter().enumerate() {
            let mut status = d.status;
            let mut reason = d.reason.clone();
            let mut shown_versus = None;
            if let (Some(b), Some(v)) = (best, versus.get(&i)) {
                let kept = &a.decided[b];
                status = Status::Rejected;
                let figures = format!(
                    "speedup ratio {:.3} [{:.3}, {:.3}]",
                    v.ratio, v.ci.0, v.ci.1
                );
                let why = if v.faster() {
                    format!(
                        "superseded: {} ({:.3}x) of this loop was significantly faster ({figures})",
                        kept.label(),
                        kept.speedup().unwrap_or(1.0)
                    )
                } else {
                    format!(
                        "tie: {} within noise of {} ({figures})",
                        kept.label(),
                        d.label()
                    )
                };
                reason = Some(match (&d.same_as, reason) {
                    (Some(_), Some(r)) => format!("{why}; {r}"),
                    _ => why,
                });
                shown_versus = Some(report::Versus {
                    kept: VariantRef::new(mode_str(kept.variant.mode), kept.variant.factor),
                    ratio: v.ratio,
                    ci: [v.ci.0, v.ci.1],
                });
            }
            let am = d.assessment;
            let same_code_as = d.same_as.as_ref().and_then(|k| {
                a.decided
                    .iter()
                    .find(|x| &x.variant.key == k)
                    .map(|x| VariantRef::new(mode_str(x.variant.mode), x.variant.factor))
            });
            let mut cand = Candidate::new(
                &file,
                &l.id.to_string(),
                l.line,
                Some((mode_str(d.variant.mode), d.variant.factor)),
                status,
                reason,
            );
            cand.speedup = am.map(|a| a.speedup);
            cand.ci = am.and_then(|a| {
                (a.ci.0.is_finite() && a.ci.1.is_finite()).then_some([a.ci.0, a.ci.1])
            });
            cand.p_value = am.map(|a| a.p_value).filter(|p| p.is_finite());
            cand.runs = d.runs;
            cand.device = d.device.clone();
            cand.key = Some(d.variant.key.clone());
            cand.ratios = d.ratios();
            cand.occupancy = d.occupancy.clone();
            cand.versus = shown_versus;
            cand.same_code_as = same_code_as;
            cand.judged_by = d.judged_by.clone();
            self.push(a.order, cand, Some(&d.variant.key), d.reused)?;
        }
        if partial {
            return Ok(());
        }
        if let Some(i) = best {
            let d = a.decided.swap_remove(i);
            let chain = &mut self.chains[c];
            chain.overlay = d.variant.overlay;
            if let Some(content) = chain.overlay.get(&d.variant.file) {
                // The rewritten text keeps the original's translation unit.
                let unit = chain
                    .parsed
                    .get(&d.variant.file)
                    .or_else(|| disc?.file(&d.variant.file).map(|f| &f.source))
                    .map(|s| s.unit().clone())
                    .unwrap_or_default();
                chain.parsed.insert(
                    d.variant.file.clone(),
                    Arc::new(pipeline::Source::with_unit(content.clone(), unit)),
                );
            }
            chain
                .history
                .entry(d.variant.file.clone())
                .or_default()
                .push(d.variant.edits);
            chain.state = d.variant.state;
            self.loops.insert(a.order, l);
            self.out.applied.push((
                a.order,
                Applied {
                    file,
                    loop_id: l.id.to_string(),
                    line: l.line,
                    mode: mode_str(d.variant.mode).into(),
                    factor: d.variant.factor,
                    full: d.variant.factor == FULL,
                },
                d.variant.mode,
            ));
        }
        Ok(())
    }

    /// After Ctrl-C: report what each loop decided so far.
    pub(crate) fn flush_partial(&mut self) -> Result<(), Error> {
        for c in 0..self.chains.len() {
            if self.chains[c]
                .active
                .as_ref()
                .is_some_and(|a| !a.decided.is_empty())
            {
                self.finish_loop(c, true, None)?;
            }
        }
        Ok(())
    }

    /// Hand batches to the free lanes, a lane's own baseline first: every idle lane gets one
    /// before a lane that overlaps gets its next one ahead. A batch sent ahead waits for the
    /// lane's current measurement, so it goes out only while the queue holds at least one
    /// batch for every lane (else it could hold back a chain that another lane, soon free,
    /// would measure at once: with more lanes than chains, overlap would slow the search).
    fn dispatch(&mut self) -> Result<(), Error> {
        let most = self.lanes.iter().map(|l| l.capacity).max().unwrap_or(1);
        let alive = self.lanes.iter().filter(|l| l.alive).count();
        for level in 0..most {
            for lane in 0..self.lanes.len() {
                // A batch of a spec whose baseline is not checked yet waits (`specs`).
                let ready: Vec<usize> = (0..self.queue.len())
                    .filter(|&k| self.spec_ready(self.queue[k].spec))
                    .collect();
                if ready.is_empty() || (level > 0 && ready.len() < alive) {
                    return Ok(());
                }
                let st = &self.lanes[lane];
                if !st.alive || st.busy != level || st.busy >= st.capacity {
                    continue;
                }
                let at = ready
                    .iter()
                    .copied()
                    .find(|&k| Some(&self.queue[k].base.hash) == st.last_base.as_ref())
                    .unwrap_or(ready[0]);
                let batch = self.queue.remove(at).expect("in the queue");
                self.send_batch(lane, batch)?;
            }
        }
        Ok(())
    }

    fn send_batch(&mut self, lane: usize, batch: Batch) -> Result<(), Error> {
        let id = self.next_task;
        self.next_task += 1;
        let items: Vec<Item> = batch
            .jobs
            .iter()
            .map(|j| Item {
                key: j.variant.key.clone(),
                variant: StateSpec {
                    hash: j.variant.state.clone(),
                    overlay: j.variant.overlay.clone(),
                },
                file: j.chain.map(|_| j.variant.file.clone()),
                same_code: j.same_code && j.chain.is_some(),
                replicate: j.chain.is_some(),
                attempt: j.attempt,
                joint: j.spec.as_ref().is_some_and(|s| s.joint),
            })
            .collect();
        if let Some(j) = batch.jobs.first() {
            self.s.progress.phase(&format!(
                "measuring {} {}{}",
                j.variant.file.display(),
                label(j.variant.mode, j.variant.factor),
                if batch.jobs.len() > 1 {
                    format!(" and {} more", batch.jobs.len() - 1)
                } else {
                    String::new()
                }
            ));
        }
        let chain = batch.jobs.first().and_then(|j| j.chain);
        // Decided variants of the loop (against this baseline): their code stands for a run.
        let known = chain
            .and_then(|c| self.chains[c].active.as_ref())
            .filter(|_| batch.spec.is_none())
            .map(|a| a.codes.clone())
            .unwrap_or_default();
        // The last batch of a loop, to a lane that compiles while it measures: the next
        // loop's gate compiles go with it.
        let last = chain.is_some_and(|c| {
            !self
                .queue
                .iter()
                .any(|b| b.jobs.iter().any(|j| j.chain == Some(c)))
        });
        let ahead = match (chain, self.disc) {
            (Some(c), Some(disc)) if last && self.lanes[lane].capacity > 1 => self.ahead(c, disc),
            _ => Vec::new(),
        };
        let task = Task::Compare {
            id,
            base: batch.base.clone(),
            items,
            known,
            ahead,
            spec: batch.spec,
        };
        if !self.s.exec.send(lane, task) {
            self.queue.push_front(batch);
            return self.lost(lane, "it stopped taking tasks".into());
        }
        self.timeline.sent(id, Instant::now());
        let keys = batch.jobs.iter().map(|j| j.variant.key.clone()).collect();
        for j in batch.jobs {
            self.flights.insert(
                j.variant.key.clone(),
                Flight {
                    job: j,
                    base: batch.base.clone(),
                    lane,
                    samples: Vec::new(),
                },
            );
        }
        self.tasks.insert(
            id,
            TaskInfo {
                lane,
                kind: TaskKind::Compare(keys),
            },
        );
        let st = &mut self.lanes[lane];
        st.busy += 1;
        st.last_base = Some(batch.base.hash);
        Ok(())
    }

    /// The A/A repeats of the original (and with `kernels` its kernels' shares), on the first
    /// free lane; waits for them.
    fn baseline_repeats(&mut self, kernels: bool) -> Result<(), Error> {
        while !self.aa.done {
            self.check_stop()?;
            if self.aa.finished {
                self.finish_aa()?;
                break;
            }
            self.start_aa(kernels)?;
            self.pump()?;
        }
        Ok(())
    }

    /// Send the A/A repeats to the first lane with room, unless they are sent or done.
    fn start_aa(&mut self, kernels: bool) -> Result<(), Error> {
        if self.aa.done || self.aa.finished || self.aa.task.is_some() {
            return Ok(());
        }
        let n = 2 * self.s.settings.plan.min_runs;
        let Some(lane) = self
            .lanes
            .iter()
            .position(|l| l.alive && l.busy < l.capacity)
        else {
            return Ok(());
        };
        let id = self.next_task;
        self.next_task += 1;
        self.s.progress.phase(&format!(
            "building the baseline and measuring it ({n} runs, A/A check)"
        ));
        self.aa.samples.clear();
        let task = Task::Baseline {
            id,
            base: self.original(),
            samples: n,
            comparison: self.aa_comparison(),
            kernels,
            spec: None,
        };
        if self.send_baseline(lane, id, task) {
            self.aa.task = Some(id);
            self.lanes[lane].last_base = Some(self.s.tree.hash.clone());
            Ok(())
        } else {
            self.lost(lane, "it stopped taking tasks".into())
        }
    }

    /// Send the baseline task `id` to `lane` and count it there; false when the lane no longer
    /// takes tasks.
    pub(super) fn send_baseline(&mut self, lane: usize, id: u64, task: Task) -> bool {
        if !self.s.exec.send(lane, task) {
            return false;
        }
        self.timeline.sent(id, Instant::now());
        self.tasks.insert(
            id,
            TaskInfo {
                lane,
                kind: TaskKind::Baseline,
            },
        );
        self.lanes[lane].busy += 1;
        true
    }

    /// The ledger's record of a baseline that passed its A/A check.
    pub(super) fn baseline_record(&self, noise: &stats::Noise) -> ledger::Baseline {
        ledger::Baseline {
            figure: noise.median,
            unit: self.unit().to_string(),
            runs: (2 * self.s.settings.plan.min_runs) as u32,
            spread: noise.spread,
        }
    }

    /// The A/A check of the finished repeats (a noisy machine stops the tune here, before any
    /// decision is stored), the baseline recorded, then the decisions that waited for it.
    fn finish_aa(&mut self) -> Result<(), Error> {
        let noise = stats::aa_check(
            &self.aa.samples,
            &self.s.settings.plan,
            self.s.settings.max_noise,
        )
        .map_err(|e| Error::Baseline(e.to_string()))?;
        let b = self.baseline_record(&noise);
        self.s.ledger.record_baseline(
            self.s.session,
            &self.s.settings_hash,
            &self.s.tree.hash,
            &b,
        )?;
        self.out.noise = Some((noise.spread, noise.detectable));
        self.out.baseline = Some(b);
        self.aa.done = true;
        for (f, lane, ended) in std::mem::take(&mut self.deferred) {
            self.decide(f, lane, ended)?;
        }
        Ok(())
    }

    fn aa_comparison(&self) -> String {
        format!("aa:{}:{}", self.s.settings_hash, self.s.tree.hash)
    }

    /// Wait for one message and act on it.
    fn pump(&mut self) -> Result<(), Error> {
        let Some((lane, msg)) = self.s.exec.recv(POLL) else {
            return self.check_stop();
        };
        match msg {
            Message::Lost(why) => self.lost(lane, why),
            Message::Event(e, at) => self.event(lane, e, at),
        }
    }

    fn event(&mut self, lane: usize, e: Event, at: Instant) -> Result<(), Error> {
        let (ledger, session) = (self.s.ledger, self.s.session);
        match e {
            Event::Build {
                state,
                slot,
                outcome,
                detail,
                seconds,
            } => ledger.record_build(session, &state, slot, &outcome, detail.as_deref(), seconds),
            Event::Gate {
                key,
                gate,
                outcome,
                detail,
            } => ledger.record_gate(session, &key, &gate, &outcome, detail.as_deref()),
            Event::Span {
                phase,
                seconds,
                ago,
            } => {
                self.timeline.span(phase, seconds, ago, at);
                Ok(())
            }
            Event::Sample {
                comparison,
                attempt,
                round,
                role,
                value,
                seconds,
            } => {
                self.timeline.sample(seconds);
                let unit = self.info[lane].unit.clone();
                ledger.record_lane_sample(
                    session,
                    &comparison,
                    attempt,
                    Some(lane),
                    round,
                    &role,
                    value,
                    &unit,
                )?;
                let counted = role == "baseline" || role == "variant";
                if counted {
                    fsio::testpoint::hit("tuner.search.sample");
                }
                if let Some(i) = self.spec_aa_of(&comparison) {
                    if counted {
                        self.spec_runs[i].samples.push(value);
                    }
                } else if self.aa.task.is_some() && comparison == self.aa_comparison() {
                    if counted {
                        self.aa.samples.push(value);
                        self.s
                            .progress
                            .measured(self.aa.samples.len(), 2 * self.s.settings.plan.min_runs);
                    }
                } else {
                    let key = comparison
                        .strip_prefix("replicate:")
                        .unwrap_or(&comparison)
                        .to_string();
                    if let Some(f) = self.flights.get_mut(&key) {
                        if f.lane == lane && f.job.attempt == attempt && counted {
                            f.samples.push((comparison, round, role, value));
                            let n = f.samples.len() / 2;
                            self.s.progress.measured(n, self.s.settings.plan.max_runs);
                        }
                    }
                }
                Ok(())
            }
            Event::Note(n) => {
                self.out.notes.insert(n);
                Ok(())
            }
            Event::Counts { compiles, builds } => {
                self.out.compiles += compiles;
                self.out.builds += builds;
                Ok(())
            }
            Event::Item {
                key,
                attempt,
                result,
                occupancy,
                code,
            } => self.item(
                lane,
                key,
                attempt,
                Ended {
                    result,
                    occupancy,
                    code,
                },
            ),
            Event::Baseline {
                id,
                kernels,
                launches_per_sample,
            } => {
                if self.aa.task == Some(id) {
                    self.aa.finished = true;
                    self.aa.kernels = kernels;
                    self.out.launches_per_sample = launches_per_sample;
                }
                if let Some(r) = self.spec_runs.iter_mut().find(|r| r.task == Some(id)) {
                    r.finished = true;
                    r.launches_per_sample = launches_per_sample;
                }
                Ok(())
            }
            Event::SpecFailed { id, spec, reason } => self.spec_failed(id, spec, reason),
            Event::Done { id } => {
                self.timeline.done(id, at);
                if let Some(t) = self.tasks.remove(&id) {
                    let st = &mut self.lanes[t.lane];
                    st.busy = st.busy.saturating_sub(1);
                }
                Ok(())
            }
            Event::Error(e) => Err(e.into_error()),
        }
    }

    /// A comparison is over: decide it.
    fn item(&mut self, lane: usize, key: String, attempt: u32, ended: Ended) -> Result<(), Error> {
        match self.flights.get(&key) {
            Some(f) if f.lane == lane && f.job.attempt == attempt => {}
            _ => return Ok(()),
        }
        let f = self.flights.remove(&key).expect("in flight");
        if f.job.chain.is_some() && !self.aa.done {
            self.deferred.push((f, lane, ended));
            return Ok(());
        }
        self.decide(f, lane, ended)
    }

    /// The decided variant under `key` of any chain's loop being decided.
    fn decided(&self, key: &str) -> Option<&Decided> {
        self.chains
            .iter()
            .filter_map(|c| c.active.as_ref())
            .flat_map(|a| a.decided.iter())
            .find(|d| d.variant.key == key)
    }

    /// Decide a finished comparison (record it, and count it for its loop).
    fn decide(&mut self, f: Flight, lane: usize, ended: Ended) -> Result<(), Error> {
        let key = f.job.variant.key.clone();
        let device = self.info[lane].device.clone();
        let Some(c) = f.job.chain else {
            self.confirmed.insert(key, (ended.result, f.samples, lane));
            return Ok(());
        };
        if f.job.spec.is_some() {
            return self.decide_part(f, c, lane, ended);
        }
        let plan = self.s.settings.plan;
        let measured = matches!(
            ended.result,
            ItemResult::Measured { .. } | ItemResult::Failed { .. }
        );
        let finding = match ended.result {
            ItemResult::Measured { skipped } => {
                let pairs = pairs_of(&f.samples, &key);
                let again = pairs_of(&f.samples, &crate::lane::measure::replication_id(&key));
                Finding::Measured {
                    assessment: assess_replicated(&key, &f.samples, &plan),
                    skipped,
                    pairs,
                    again,
                }
            }
            ItemResult::Failed { status, reason } => Finding::Failed(status, reason),
            ItemResult::SameCode => Finding::SameCode,
            ItemResult::SameCodeAs { key: other } => match self.decided(&other) {
                Some(twin) => Finding::SameCodeAs(Box::new(twin.twin())),
                None => {
                    // Not decided here (it cannot happen: a lane names only what it measured
                    // before): measure this one after all.
                    let mut job = f.job;
                    job.same_code = false;
                    job.attempt += 1;
                    self.queue.push_front(Batch {
                        base: f.base,
                        jobs: vec![job],
                        spec: None,
                    });
                    return Ok(());
                }
            },
        };
        let d = Decided::new(
            f.job.variant,
            finding,
            &plan,
            Some(device),
            ended.occupancy,
            &self.s.ledger.path,
        )?;
        // Not cached is this machine's lack, not the variant's: decided where it can be
        // compiled.
        if d.status != Status::NotCached {
            self.store(&f.base.hash, &d)?;
        }
        if let Some(a) = self.chains[c].active.as_mut() {
            if let (true, Some(code)) = (measured, ended.code) {
                a.codes.push((code, d.variant.key.clone()));
            }
            a.decided.push(d);
            a.waiting = a.waiting.saturating_sub(1);
        }
        Ok(())
    }

    /// Store a decision in the ledger.
    fn store(&self, base_state: &str, d: &Decided) -> Result<(), Error> {
        let a = d.assessment;
        self.s.ledger.record_decision(
            self.s.session,
            &ledger::Decision {
                key: d.variant.key.clone(),
                settings_hash: self.s.settings_hash.clone(),
                base_state: base_state.to_string(),
                variant_state: d.variant.state.clone(),
                status: d.status.as_str().into(),
                speedup: a.map(|a| a.speedup),
                ci: a.and_then(|a| (a.ci.0.is_finite()).then_some(a.ci)),
                p_value: a.map(|a| a.p_value),
                runs: d.runs,
                reason: d.reason.clone(),
                figure: None,
                device: d.device.clone(),
                occupancy: d.occupancy.clone(),
                same_as: d.same_as.clone(),
            },
        )?;
        fsio::testpoint::hit("tuner.search.decided");
        Ok(())
    }

    /// A lane is gone: its comparisons in flight are measured again, from scratch, elsewhere.
    fn lost(&mut self, lane: usize, why: String) -> Result<(), Error> {
        if !self.lanes[lane].alive {
            return Ok(());
        }
        self.lanes[lane].alive = false;
        self.lanes[lane].busy = 0;
        let d = &self.info[lane].device;
        let mut again = 0;
        let ids: Vec<u64> = self
            .tasks
            .iter()
            .filter(|(_, t)| t.lane == lane)
            .map(|(id, _)| *id)
            .collect();
        for id in ids {
            self.timeline.done(id, Instant::now());
            let t = self.tasks.remove(&id).expect("listed");
            match t.kind {
                TaskKind::Baseline => {
                    if self.aa.task == Some(id) {
                        self.aa.task = None;
                        self.aa.samples.clear();
                    }
                    for r in &mut self.spec_runs {
                        if r.task == Some(id) {
                            r.task = None;
                            r.samples.clear();
                        }
                    }
                }
                TaskKind::Compare(keys) => {
                    let mut by_base: BTreeMap<(String, Option<usize>), Batch> = BTreeMap::new();
                    for k in keys {
                        let Some(f) = self.flights.remove(&k) else {
                            continue;
                        };
                        again += 1;
                        let mut job = f.job;
                        job.attempt += 1;
                        let spec = job.spec.as_ref().map(|s| s.spec);
                        by_base
                            .entry((f.base.hash.clone(), spec))
                            .or_insert_with(|| Batch {
                                base: f.base.clone(),
                                jobs: Vec::new(),
                                spec,
                            })
                            .jobs
                            .push(job);
                    }
                    for (_, b) in by_base {
                        self.queue.push_front(b);
                    }
                }
            }
        }
        self.out.notes.insert(format!(
            "lane {lane} ({} {}) was lost ({why}); {again} comparison{} in flight measured again on another lane",
            d.host,
            d.id.as_deref().unwrap_or("-"),
            if again == 1 { "" } else { "s" }
        ));
        if self.lanes.iter().all(|l| !l.alive) {
            return Err(Error::LanesGone(format!(
                "every lane is gone (the last one: {why}); the ledger keeps what was decided"
            )));
        }
        Ok(())
    }

    /// The accepted variants of every chain as one overlay: each accepted rewrite applied
    /// again, in the order of the loops, to the original files. A rewrite that no longer
    /// applies (two chains' edits overlap) is left out, with a note.
    pub(crate) fn combine(&mut self, disc: &Discovery) -> Overlay {
        let mut applied: Vec<(usize, Applied, Mode)> = std::mem::take(&mut self.out.applied);
        applied.sort_by_key(|(o, _, _)| *o);
        let mut overlay = Overlay::new();
        let mut parsed: HashMap<PathBuf, Arc<pipeline::Source>> = HashMap::new();
        let mut history: HashMap<PathBuf, Vec<Vec<Edit>>> = HashMap::new();
        let mut kept = Vec::new();
        for (order, a, mode) in applied {
            let l = self.loops[&order];
            let Some(current) = parsed
                .get(&l.file)
                .cloned()
                .or_else(|| disc.file(&l.file).map(|f| f.source.clone()))
            else {
                continue;
            };
            let h = history.entry(l.file.clone()).or_default();
            match discover::rewrite(l, &current, h, a.factor, mode) {
                Ok(rw) => {
                    h.push(rw.edits);
                    // The rewritten text keeps the original's translation unit.
                    parsed.insert(
                        l.file.clone(),
                        Arc::new(pipeline::Source::with_unit(
                            rw.source.clone(),
                            current.unit().clone(),
                        )),
                    );
                    overlay.insert(l.file.clone(), rw.source);
                    kept.push((order, a, mode));
                }
                Err(r) => {
                    self.out.notes.insert(format!(
                        "{}:{} {} {} {} was accepted but does not apply with the other kernels' variants ({}): left out",
                        a.file, a.line, a.loop_id, a.mode, report::factor_text(a.factor), r.id
                    ));
                }
            }
        }
        self.out.applied = kept;
        overlay
    }

    /// Compare the combination with the original. Returns the final figures and whether the
    /// final state is shown faster.
    pub(crate) fn confirm(&mut self, overlay: &Overlay) -> Result<(report::Final, bool), Error> {
        if self.multi() {
            return self.confirm_specs(overlay);
        }
        let final_state = self.s.tree.state_hash(overlay);
        let key = ledger::decision_key(
            &self.s.settings_hash,
            &format!("confirm:{}", self.s.tree.hash),
            &final_state,
        );
        if let Some(d) = self.s.ledger.decision(&key)? {
            let sp = d.speedup.unwrap_or(1.0);
            let figure = d.figure.unwrap_or(f64::NAN);
            let ci = d.ci.map(|c| [c.0, c.1]);
            if self.out.baseline.is_none() {
                self.out.baseline = self
                    .s
                    .ledger
                    .baseline(&self.s.settings_hash, &self.s.tree.hash)?;
            }
            return Ok((
                report::Final {
                    figure,
                    speedup: sp,
                    ci,
                },
                d.status == "accepted",
            ));
        }
        if self.out.baseline.is_none() {
            self.out.baseline = self
                .s
                .ledger
                .baseline(&self.s.settings_hash, &self.s.tree.hash)?;
        }
        self.baseline_repeats(false)?;
        self.s
            .progress
            .phase("confirming: final state against the original");
        let job = Job {
            variant: Pending {
                mode: Mode::Pragma,
                factor: 1,
                overlay: overlay.clone(),
                state: final_state.clone(),
                key: key.clone(),
                edits: Vec::new(),
                file: PathBuf::new(),
            },
            chain: None,
            attempt: 0,
            same_code: false,
            spec: None,
        };
        self.queue.push_front(Batch {
            base: self.original(),
            jobs: vec![job],
            spec: None,
        });
        self.confirmed.clear();
        while !self.confirmed.contains_key(&key) {
            self.check_stop()?;
            self.dispatch()?;
            self.pump()?;
        }
        let (result, samples, lane) = self.confirmed.remove(&key).expect("confirmed");
        let assessment = match result {
            ItemResult::Measured { .. } => {
                stats::assess(&pairs_of(&samples, &key), &self.s.settings.plan)
            }
            ItemResult::Failed { reason, .. } => {
                self.out.notes.insert(format!(
                    "the combination of the accepted variants fails: {reason}"
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
            ItemResult::SameCode | ItemResult::SameCodeAs { .. } => {
                unreachable!("the confirmation is never a same-code check")
            }
        };
        let pairs = pairs_of(&samples, &key);
        let finals: Vec<f64> = pairs.iter().map(|p| p.variant).collect();
        let confirmed = Confirmed {
            faster: assessment.verdict == Verdict::Accept || assessment.ci.0 > 1.0,
            speedup: assessment.speedup,
            ci: assessment.ci,
            p_value: Some(assessment.p_value),
            runs: assessment.n,
            figure: stats::median(&finals),
            device: Some(self.info[lane].device.clone()),
        };
        self.record_confirmation(key, final_state, confirmed)
    }

    /// The confirmation's decision (the final tree against the original) recorded in the
    /// ledger, and the final figure it gives the report.
    pub(super) fn record_confirmation(
        &mut self,
        key: String,
        final_state: String,
        c: Confirmed,
    ) -> Result<(report::Final, bool), Error> {
        self.s.ledger.record_decision(
            self.s.session,
            &ledger::Decision {
                key,
                settings_hash: self.s.settings_hash.clone(),
                base_state: self.s.tree.hash.clone(),
                variant_state: final_state,
                status: if c.faster { "accepted" } else { "rejected" }.into(),
                speedup: Some(c.speedup),
                ci: Some(c.ci),
                p_value: c.p_value,
                runs: Some(c.runs as u32),
                reason: Some("confirmation".into()),
                figure: Some(c.figure),
                device: c.device,
                occupancy: None,
                same_as: None,
            },
        )?;
        fsio::testpoint::hit("tuner.search.decided");
        Ok((
            report::Final {
                figure: c.figure,
                speedup: c.speedup,
                ci: Some([c.ci.0, c.ci.1]),
            },
            c.faster,
        ))
    }
}

/// What a confirmation found ([`Coordinator::record_confirmation`]).
pub(super) struct Confirmed {
    /// Accepted: the final tree is faster than the original.
    pub faster: bool,
    pub speedup: f64,
    pub ci: (f64, f64),
    /// `None` where several specs' pairs were judged together (no one test's p-value).
    pub p_value: Option<f64>,
    pub runs: usize,
    /// The final tree's median figure.
    pub figure: f64,
    pub device: Option<Device>,
}

/// The pairs of `comparison` from the samples recorded, in rounds (warm-up runs are not
/// recorded here); the order of each round is the one [`stats::baseline_first`] gave the lane.
fn pairs_of(samples: &[Sample], comparison: &str) -> Vec<Pair> {
    let mut rounds: BTreeMap<usize, (Option<f64>, Option<f64>)> = BTreeMap::new();
    for (c, round, role, value) in samples {
        if c != comparison {
            continue;
        }
        let e = rounds.entry(*round).or_insert((None, None));
        match role.as_str() {
            "baseline" => e.0 = Some(*value),
            "variant" => e.1 = Some(*value),
            _ => {}
        }
    }
    rounds
        .into_iter()
        .filter_map(|(round, (b, v))| {
            Some(Pair {
                baseline: b?,
                variant: v?,
                baseline_first: stats::baseline_first(comparison, round),
            })
        })
        .collect()
}

/// The assessment of the comparison `key` from its samples ([`stats::assess_replicated`]: an
/// accept stands only if its replication pairs confirm it).
fn assess_replicated(key: &str, samples: &[Sample], plan: &Plan) -> Assessment {
    let again = pairs_of(samples, &crate::lane::measure::replication_id(key));
    stats::assess_replicated(&pairs_of(samples, key), &again, plan)
}
