//! Overlap of preparation with measurement, shown by events, not timing: a lane whose backend
//! `overlaps()` prepares its next task (working copy, build) while a sample of the current one
//! is held by the test, and a lane whose backend does not takes no task at all while a sample
//! runs; the search with overlap decides exactly what it decides without it. Also the other
//! lanes' work during the A/A repeats (compared meanwhile, decided only after the A/A check,
//! nothing stored when it fails) and the dispatch (an idle lane before a task sent ahead). And
//! compile-ahead: the gate compile of a chain's next loop's variant runs while the current
//! loop's variant is measured on a GPU lane, and never on a CPU lane.

use rand::{RngExt, SeedableRng};
use std::collections::BTreeSet;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc::{sync_channel, TrySendError};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};
use tuner::backend::{Backend, Failure, LaneDevice, Slot};
use tuner::executor::local::LocalLane;
use tuner::lane::Device;
use tuner::lane::{Event, Item, ItemResult, Lane, LaneContext, StateSpec, Task};
use tuner::report::Candidate;
use tuner::report::Status;
use tuner::search::{tune, tune_lanes, ApplyMode, Progress, Quiet, Settings};
use tuner::stats::Plan;
use tuner::workcopy::{Overlay, Tree};

/// How long a test waits for an event before it fails (a hang guard, never a pass condition).
const HANG: Duration = Duration::from_secs(60);

/// What the probe has seen.
#[derive(Default)]
struct Seen {
    /// Tags of the slots whose preparation finished.
    prepared: Vec<String>,
    /// Preparations running now, and samples running now.
    preparing: usize,
    sampling: usize,
    /// A preparation that started or ended while a sample ran, or the reverse.
    overlapped: bool,
    /// The held sample's tag, while it is held.
    holding: Option<String>,
    /// Set by whoever releases the held sample.
    released: bool,
    /// The first variant sample was held already.
    held_once: bool,
    /// With `hold_until_prepared`: whether another variant was prepared while it was held.
    prepared_while_held: Option<bool>,
    /// Samples taken on the first lane, and variants prepared on the second lane.
    samples: usize,
    second_lane_variants: usize,
    /// With `hold_aa`: whether the second lane prepared two variants while it was held.
    compared_during_aa: Option<bool>,
    /// With `hold_until_log`: whether the text appeared in the log while the sample was held.
    logged_while_held: Option<bool>,
}

/// A backend whose figures come from the slot's sources (`#pragma unroll 4` in `fast*.cu`
/// halves the figure, `unroll 2` takes 20% off) with 1% seeded jitter; it can hold the first
/// sample of a variant until the test (or a preparation of another variant) releases it.
struct Probe {
    overlap: bool,
    /// Hold the first variant sample until the test releases it.
    hold_for_test: bool,
    /// Hold the first variant sample until another variant has been prepared (or `HANG`).
    hold_until_prepared: bool,
    /// Hold the first lane's first sample (the A/A repeats' warm-up) until two variants were prepared
    /// on the second lane: then the coordinator has had that lane's first comparison back.
    hold_aa: bool,
    /// The first lane's samples vary by up to 60%: its A/A check fails.
    noisy_first_lane: bool,
    /// Hold the first variant sample until this file holds this text (or the time is up).
    hold_until_log: Option<(std::path::PathBuf, String, Duration)>,
    rng: Mutex<rand::rngs::StdRng>,
    seen: Mutex<Seen>,
    cv: Condvar,
}

impl Probe {
    fn new(overlap: bool) -> Probe {
        Probe {
            overlap,
            hold_for_test: false,
            hold_until_prepared: false,
            hold_aa: false,
            noisy_first_lane: false,
            hold_until_log: None,
            rng: Mutex::new(rand::rngs::StdRng::seed_from_u64(11)),
            seen: Mutex::new(Seen::default()),
            cv: Condvar::new(),
        }
    }

    /// Wait until `f` holds; panics after `HANG`.
    fn wait(&self, what: &str, f: impl Fn(&Seen) -> bool) {
        let deadline = Instant::now() + HANG;
        let mut s = self.seen.lock().unwrap();
        while !f(&s) {
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(!left.is_zero(), "never happened: {what}");
            s = self.cv.wait_timeout(s, left).unwrap().0;
        }
    }

    fn release(&self) {
        self.seen.lock().unwrap().released = true;
        self.cv.notify_all();
    }
}

/// The tag of a slot (its `tag.txt` when it has one, else its sources) and its figure: 10,
/// halved by a `#pragma unroll 4` and 20% off for an `unroll 2`, in the tag file or in a
/// `fast*.cu`.
fn tag(root: &Path) -> (String, f64) {
    let mut figure = 10.0;
    let mut count = |text: &str| {
        for line in text.lines() {
            if line.contains("#pragma unroll 4") {
                figure *= 0.5;
            } else if line.contains("#pragma unroll 2") {
                figure *= 0.8;
            }
        }
    };
    if let Ok(t) = std::fs::read_to_string(root.join("tag.txt")) {
        count(&t);
        return (t, figure);
    }
    let mut names: Vec<_> = std::fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "cu"))
        .collect();
    names.sort();
    let mut all = String::new();
    for p in names {
        let text = std::fs::read_to_string(&p).unwrap();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if name.starts_with("fast") {
            count(&text);
        }
        all.push_str(&format!("{name}:\n{text}"));
    }
    (all, figure)
}

impl Backend for Probe {
    /// (figure, tag, is a variant)
    type Prepared = (f64, String, bool);

    fn name(&self) -> &'static str {
        "probe"
    }

    fn unit(&self) -> String {
        "ms".into()
    }

    fn preflight(&self) -> Result<(), tuner::Error> {
        Ok(())
    }

    fn prepare(
        &self,
        slot: &Slot<'_>,
        baseline: Option<&Self::Prepared>,
    ) -> Result<Result<Self::Prepared, Failure>, tuner::Error> {
        {
            let mut s = self.seen.lock().unwrap();
            s.preparing += 1;
            if s.sampling > 0 {
                s.overlapped = true;
            }
        }
        let (t, figure) = tag(slot.root);
        let mut s = self.seen.lock().unwrap();
        s.preparing -= 1;
        if s.sampling > 0 {
            s.overlapped = true;
        }
        s.prepared.push(t.clone());
        if baseline.is_some() && slot.root.to_string_lossy().contains("lane-1") {
            s.second_lane_variants += 1;
        }
        drop(s);
        self.cv.notify_all();
        Ok(Ok((figure, t, baseline.is_some())))
    }

    fn sample(
        &self,
        slot: &Slot<'_>,
        p: &Self::Prepared,
    ) -> Result<Result<f64, Failure>, tuner::Error> {
        let mut s = self.seen.lock().unwrap();
        s.sampling += 1;
        if s.preparing > 0 {
            s.overlapped = true;
        }
        let (figure, tag, variant) = p;
        // The first lane's first task is the A/A repeats (it is the first lane with room).
        let first_lane = !slot.root.to_string_lossy().contains("lane-");
        if first_lane {
            s.samples += 1;
        }
        if first_lane && s.samples == 1 && self.hold_aa {
            let deadline = Instant::now() + HANG;
            while s.second_lane_variants < 2 && Instant::now() < deadline {
                let left = deadline.saturating_duration_since(Instant::now());
                s = self.cv.wait_timeout(s, left).unwrap().0;
            }
            s.compared_during_aa = Some(s.second_lane_variants >= 2);
        }
        if let (true, false, Some((log, text, wait))) =
            (*variant, s.held_once, &self.hold_until_log)
        {
            s.held_once = true;
            let deadline = Instant::now() + *wait;
            let logged = || std::fs::read_to_string(log).is_ok_and(|t| t.contains(text.as_str()));
            while !logged() && Instant::now() < deadline {
                drop(s);
                std::thread::sleep(Duration::from_millis(20));
                s = self.seen.lock().unwrap();
            }
            s.logged_while_held = Some(logged());
        }
        if *variant && !s.held_once && (self.hold_for_test || self.hold_until_prepared) {
            s.held_once = true;
            s.holding = Some(tag.clone());
            self.cv.notify_all();
            let deadline = Instant::now() + HANG;
            loop {
                let other = s.prepared.iter().any(|t| t != tag && t.contains("unroll"));
                if s.released || (self.hold_until_prepared && other) {
                    if self.hold_until_prepared {
                        s.prepared_while_held = Some(other);
                    }
                    break;
                }
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    s.prepared_while_held = Some(false);
                    break;
                }
                s = self.cv.wait_timeout(s, left).unwrap().0;
            }
            s.holding = None;
        }
        s.sampling -= 1;
        drop(s);
        let w = if self.noisy_first_lane && first_lane {
            0.6
        } else {
            0.01
        };
        let j: f64 = self.rng.lock().unwrap().random_range(-w..w);
        Ok(Ok(figure * (1.0 + j)))
    }

    fn overlaps(&self) -> bool {
        self.overlap
    }
}

fn spec(tree: &Tree, tag: &str) -> StateSpec {
    let mut overlay = Overlay::new();
    overlay.insert("tag.txt".into(), tag.as_bytes().to_vec());
    StateSpec {
        hash: tree.state_hash(&overlay),
        overlay,
    }
}

fn compare(id: u64, tree: &Tree, variant: &str) -> Task {
    let v = spec(tree, variant);
    Task::Compare {
        id,
        base: StateSpec::original(tree),
        items: vec![Item {
            key: format!("key-{variant}"),
            variant: v,
            file: None,
            same_code: false,
            replicate: false,
            attempt: 0,
            joint: false,
        }],
        known: Vec::new(),
        ahead: Vec::new(),
        spec: None,
    }
}

/// One lane driven by the test through a rendezvous channel: task 1 is taken, its first
/// variant sample is held, and the test then offers task 2. With overlap the lane takes it
/// and prepares it while the sample is held; without, nothing of the lane can take it (its
/// one thread is inside the sample) until the sample is released.
fn lane_with_held_sample(overlap: bool) {
    let d = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("tag.txt"), "base").unwrap();
    std::fs::write(d.path().join("k.cu"), "__global__ void k() {}\n").unwrap();
    let tree = Tree::scan(d.path(), &[]).unwrap();
    let mut probe = Probe::new(overlap);
    probe.hold_for_test = true;
    let events: Mutex<Vec<Event>> = Mutex::new(Vec::new());
    let emit = |e: Event| events.lock().unwrap().push(e);
    let cx = LaneContext {
        tree: &tree,
        slots_dir: state.path().join("slots"),
        records: None,
        halt: Arc::new(AtomicBool::new(false)),
        plan: Plan::default(),
        jobs: 1,
        gates: tuner::gates::Gates {
            compiler: codeobj::compile::Compiler::new(
                "false {src} -o {out}",
                "gfx90a",
                state.path().join("objects"),
            ),
            max_occupancy_loss: None,
            instances: Vec::new(),
        },
        device: LaneDevice::DEFAULT,
        overlap,
    };
    let lane = Lane::new(&probe, cx);
    let (tx, rx) = sync_channel::<Task>(0);
    std::thread::scope(|s| {
        s.spawn(|| lane.run(rx, &emit));
        tx.send(compare(1, &tree, "#pragma unroll 4 (v1)")).unwrap();
        probe.wait("the first variant sample is held", |s| s.holding.is_some());
        let task2 = compare(2, &tree, "#pragma unroll 2 (v2)");
        if overlap {
            // The preparing thread is (or will soon be) waiting for a task: it takes this one.
            let deadline = Instant::now() + HANG;
            let mut t = task2;
            loop {
                match tx.try_send(t) {
                    Ok(()) => break,
                    Err(TrySendError::Full(back)) => {
                        assert!(Instant::now() < deadline, "the lane never took task 2");
                        t = back;
                        std::thread::yield_now();
                    }
                    Err(TrySendError::Disconnected(_)) => panic!("the lane ended"),
                }
            }
            probe.wait("task 2 prepared while task 1's sample is held", |s| {
                s.prepared.iter().any(|t| t.contains("(v2)"))
            });
            assert!(probe.seen.lock().unwrap().holding.is_some());
            probe.release();
        } else {
            // The lane's one thread is inside the held sample: no one can take a task.
            let back = match tx.try_send(task2) {
                Err(TrySendError::Full(t)) => t,
                other => panic!("a lane without overlap took a task mid-sample: {other:?}"),
            };
            let seen = probe.seen.lock().unwrap();
            assert!(!seen.prepared.iter().any(|t| t.contains("(v2)")));
            assert!(!seen.overlapped);
            drop(seen);
            probe.release();
            tx.send(back).unwrap();
        }
        drop(tx);
    });
    let seen = probe.seen.into_inner().unwrap();
    assert_eq!(
        seen.overlapped, overlap,
        "a preparation ran during a sample"
    );
    let events = events.into_inner().unwrap();
    let done: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            Event::Item { key, result, .. } => Some((key.clone(), result.clone())),
            Event::Error(e) => panic!("lane error: {e:?}"),
            _ => None,
        })
        .collect();
    assert_eq!(
        done,
        vec![
            (
                "key-#pragma unroll 4 (v1)".to_string(),
                ItemResult::Measured { skipped: None }
            ),
            (
                "key-#pragma unroll 2 (v2)".to_string(),
                ItemResult::Measured { skipped: None }
            ),
        ]
    );
    // Task 2's samples all come after task 1's: one comparison is measured at a time.
    let comparisons: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            Event::Sample { comparison, .. } => Some(comparison.as_str()),
            _ => None,
        })
        .collect();
    let first_v2 = comparisons.iter().position(|c| c.contains("(v2)")).unwrap();
    assert!(comparisons[first_v2..].iter().all(|c| c.contains("(v2)")));
    assert!(comparisons[..first_v2].iter().all(|c| c.contains("(v1)")));
}

#[test]
fn a_gpu_lane_prepares_its_next_task_while_a_sample_is_held() {
    lane_with_held_sample(true);
}

#[test]
fn a_cpu_lane_takes_no_task_while_a_sample_runs() {
    lane_with_held_sample(false);
}

fn tree(dir: &Path) {
    for i in 0..3 {
        for name in [format!("fast{i}"), format!("flat{i}")] {
            std::fs::write(
                dir.join(format!("{name}.cu")),
                format!("__global__ void {name}(int* a, int n) {{\n    for (int k = 0; k < n; ++k) {{\n        a[k] += k;\n    }}\n}}\n"),
            )
            .unwrap();
        }
    }
}

fn settings(state: &Path) -> Settings {
    Settings {
        paths: vec![".".into()],
        factors: vec![2, 4],
        modes: vec![pipeline::Mode::Pragma],
        jobs: 1,
        plan: Plan::default(),
        max_noise: 0.2,
        state_dir: state.to_path_buf(),
        resume: false,
        gates: tuner::gates::Gates {
            compiler: codeobj::compile::Compiler::new(
                "false {src} -o {out}",
                "gfx90a",
                state.join("objects"),
            ),
            max_occupancy_loss: None,
            instances: Vec::new(),
        },
        apply: ApplyMode::DryRun,
        skip_same_code: false,
        fingerprint: "overlap".into(),
        include_dirs: Vec::new(),
    }
}

type Decisions = BTreeSet<(String, String, Option<u32>, String)>;

fn search(overlap: bool) -> (Decisions, Seen) {
    let d = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    tree(d.path());
    let mut probe = Probe::new(overlap);
    probe.hold_until_prepared = overlap;
    let stop = Arc::new(AtomicBool::new(false));
    let r = tune(&probe, &settings(state.path()), d.path(), &stop, &Quiet).unwrap();
    let decisions = r
        .report
        .candidates
        .iter()
        .map(|c| {
            (
                c.file.clone(),
                c.loop_id.clone(),
                c.factor,
                c.status.as_str().to_string(),
            )
        })
        .collect();
    (decisions, probe.seen.into_inner().unwrap())
}

#[test]
fn the_search_prepares_the_next_comparison_during_a_sample_and_decides_the_same() {
    // The lane takes its next task only once the current one's measurement has begun, so a
    // second variant prepared before the first comparison's first variant sample returns was
    // prepared during that measurement (before or while the sample was held: with instant
    // samples it may fall between two of them).
    let (with, seen) = search(true);
    assert_eq!(
        seen.prepared_while_held,
        Some(true),
        "the next comparison was not prepared while the first one was measured"
    );
    let (without, seen) = search(false);
    assert!(!seen.overlapped, "a preparation ran during a sample");
    assert_eq!(with, without);
    // The decisions are the ones the figures call for: x4 accepted on every fast kernel.
    for i in 0..3 {
        let f = format!("fast{i}.cu");
        assert!(with.iter().any(|(file, _, factor, status)| file == &f
            && *factor == Some(4)
            && status == Status::Accepted.as_str()));
        let f = format!("flat{i}.cu");
        assert!(with
            .iter()
            .filter(|(file, ..)| file == &f)
            .all(|(.., status)| status != Status::Accepted.as_str()));
    }
}

/// Every candidate the search reports as decided.
#[derive(Default)]
struct Decided(Mutex<Vec<Candidate>>);

impl Progress for Decided {
    fn decided(&self, c: &Candidate) {
        self.0.lock().unwrap().push(c.clone());
    }
}

/// Two lanes; the A/A repeats' first sample is held until the second lane has had its first
/// comparison measured and taken the next one.
/// Also returns the decisions the ledger holds.
fn two_lanes(
    noisy: bool,
) -> (
    Result<tuner::search::Tuned, tuner::Error>,
    Seen,
    Vec<Candidate>,
    i64,
) {
    let d = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    tree(d.path());
    let settings = settings(state.path());
    let probe = Probe {
        hold_aa: true,
        noisy_first_lane: noisy,
        ..Probe::new(false)
    };
    let lanes: Vec<LocalLane<'_, Probe>> = (0..2)
        .map(|i| LocalLane {
            backend: &probe,
            device: Device {
                model: "probe".into(),
                id: Some(i.to_string()),
                host: "test".into(),
            },
            lane: LaneDevice::local(&i.to_string()),
        })
        .collect();
    let disc = tuner::search::discover(&settings, d.path()).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let progress = Decided::default();
    let r = tune_lanes(&lanes, &settings, d.path(), disc, &stop, &progress);
    drop(lanes);
    let db = rusqlite::Connection::open(state.path().join(tuner::ledger::FILE_NAME)).unwrap();
    let stored: i64 = db
        .query_row("SELECT count(*) FROM decisions", [], |r| r.get(0))
        .unwrap();
    (
        r,
        probe.seen.into_inner().unwrap(),
        progress.0.into_inner().unwrap(),
        stored,
    )
}

#[test]
fn other_lanes_compare_while_the_aa_repeats_run_and_decide_after_them() {
    let (r, seen, decided, stored) = two_lanes(false);
    let r = r.unwrap();
    assert!(stored > 0);
    assert_eq!(seen.compared_during_aa, Some(true));
    assert!(r
        .report
        .candidates
        .iter()
        .any(|c| c.status == Status::Accepted));
    assert_eq!(decided.len(), r.report.candidates.len());
    // The same decisions as one lane.
    let (one, _) = search(false);
    let two: Decisions = r
        .report
        .candidates
        .iter()
        .map(|c| {
            (
                c.file.clone(),
                c.loop_id.clone(),
                c.factor,
                c.status.as_str().to_string(),
            )
        })
        .collect();
    assert_eq!(one, two);
}

#[test]
fn a_failed_aa_check_stores_no_decision_of_the_comparisons_measured_meanwhile() {
    let (r, seen, decided, stored) = two_lanes(true);
    // The second lane took its second comparison while the A/A repeats were held: the
    // coordinator had its first one back.
    assert_eq!(seen.compared_during_aa, Some(true));
    let e = r.expect_err("the A/A check fails");
    assert!(matches!(e, tuner::Error::Baseline(_)), "{e}");
    assert!(
        decided.is_empty(),
        "decided before the A/A check: {decided:?}"
    );
    assert_eq!(stored, 0, "decisions stored before the A/A check");
}

/// Two GPU lanes (capacity two tasks each), one loop with two variants: the A/A repeats go to
/// lane 0, and the first comparison to the idle lane 1, not ahead onto lane 0; the second is
/// not sent ahead to either lane (one batch left for two lanes), so each comparison starts on
/// whichever lane is free first.
#[test]
fn an_idle_lane_gets_a_comparison_before_a_gpu_lane_gets_one_ahead() {
    let d = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    std::fs::write(
        d.path().join("fast0.cu"),
        "__global__ void fast0(int* a, int n) {\n    for (int k = 0; k < n; ++k) {\n        a[k] += k;\n    }\n}\n",
    )
    .unwrap();
    let settings = settings(state.path());
    let probe = Probe::new(true);
    let lanes: Vec<LocalLane<'_, Probe>> = (0..2)
        .map(|i| LocalLane {
            backend: &probe,
            device: Device {
                model: "probe".into(),
                id: Some(i.to_string()),
                host: "test".into(),
            },
            lane: LaneDevice::local(&i.to_string()),
        })
        .collect();
    let disc = tuner::search::discover(&settings, d.path()).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let r = tune_lanes(&lanes, &settings, d.path(), disc, &stop, &Quiet).unwrap();
    let x2 = r
        .report
        .candidates
        .iter()
        .find(|c| c.factor == Some(2))
        .expect("x2 decided");
    let lane = x2.device.as_ref().and_then(|d| d.id.clone());
    assert_eq!(lane.as_deref(), Some("1"), "{x2:?}");
}

/// A "compiler" that appends each source it is given to a log (and builds nothing): the gates
/// are skipped, but every compile the lanes ask for is seen.
fn logging_compiler(dir: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let log = dir.join("compiles.log");
    let script = dir.join("cc.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nfor a; do case \"$a\" in *.cu) cat \"$a\" >> '{}';; esac; done\nexit 1\n",
            log.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    (script, log)
}

struct TwoLoops {
    tree: tempfile::TempDir,
    _state: tempfile::TempDir,
    _tools: tempfile::TempDir,
    settings: Settings,
    /// What the logging compiler was given.
    log: std::path::PathBuf,
}

/// A tree with one kernel of two loops (one chain) in `file`, tuned with factor 2 through the
/// logging compiler.
fn two_loops(file: &str) -> TwoLoops {
    let tree = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let tools = tempfile::tempdir().unwrap();
    std::fs::write(
        tree.path().join(file),
        "__global__ void two(int* a, int n) {\n    for (int k = 0; k < n; ++k) {\n        a[k] += k;\n    }\n    for (int j = 0; j < n; ++j) {\n        a[j] *= 2;\n    }\n}\n",
    )
    .unwrap();
    let (cc, log) = logging_compiler(tools.path());
    let mut s = settings(state.path());
    s.factors = vec![2];
    s.gates.compiler = codeobj::compile::Compiler::new(
        format!("{} {{src}} -o {{out}}", cc.display()),
        "gfx90a",
        state.path().join("objects"),
    );
    TwoLoops {
        tree,
        _state: state,
        _tools: tools,
        settings: s,
        log,
    }
}

/// A kernel of two loops (one chain): loop 0's variant is measured first; loop 1's variant,
/// made on the same text, can be compiled ahead.
fn compile_ahead(overlap: bool) -> Option<bool> {
    // (The state and tool directories live as long as `t`.)
    let t = two_loops("two.cu");
    let (d, s, log) = (&t.tree, &t.settings, &t.log);
    let mut probe = Probe::new(overlap);
    // Loop 1's variant as the gates would compile it.
    // (A CPU lane is given 3 s: its compiles are a shell script's, milliseconds each.)
    let wait = if overlap {
        HANG
    } else {
        Duration::from_secs(3)
    };
    probe.hold_until_log = Some((log.clone(), "#pragma unroll 2\n    for (int j".into(), wait));
    let stop = Arc::new(AtomicBool::new(false));
    let r = tune(&probe, s, d.path(), &stop, &Quiet).unwrap();
    assert_eq!(r.report.candidates.len(), 2, "{:?}", r.report.candidates);
    let timing = &r.report.timing;
    let sum = timing.measure
        + timing.compile
        + timing.prepare
        + timing.gates
        + timing.waiting
        + timing.other;
    assert!((sum - timing.wall).abs() < 1e-6, "{timing:?}");
    probe.seen.into_inner().unwrap().logged_while_held
}

#[test]
fn a_gpu_lane_compiles_the_next_loops_variants_while_it_measures() {
    assert_eq!(compile_ahead(true), Some(true));
}

#[test]
fn a_cpu_lane_compiles_nothing_ahead() {
    assert_eq!(compile_ahead(false), Some(false));
}

/// Loop 0's variant is accepted while loop 1's variant, made on the text before that edit,
/// was sent to the compile workers: loop 1 is then measured on the accepted text (its variant
/// remade with both edits), never as the stale variant, and the tune ends with both loops
/// accepted. What was compiled ahead of the edit is at most wasted work (the compile cache is
/// keyed by content).
#[test]
fn an_accepted_edit_remakes_the_next_loops_variants_compiled_ahead() {
    // `fast*.cu`: the probe makes a `#pragma unroll 2` faster, so loop 0's edit is accepted.
    // (The state and tool directories live as long as `t`.)
    let t = two_loops("fast_two.cu");
    let (d, s, log) = (&t.tree, &t.settings, &t.log);
    let mut probe = Probe::new(true);
    // Loop 0's variant is measured once loop 1's stale variant (loop 0 as it was) has been
    // compiled ahead.
    let stale_loop1 =
        "n) {\n    for (int k = 0; k < n; ++k) {\n        a[k] += k;\n    }\n    #pragma unroll 2\n    for (int j";
    probe.hold_until_log = Some((log.clone(), stale_loop1.into(), HANG));
    let stop = Arc::new(AtomicBool::new(false));
    let r = tune(&probe, s, d.path(), &stop, &Quiet).unwrap();
    let seen = probe.seen.into_inner().unwrap();
    assert_eq!(seen.logged_while_held, Some(true), "nothing compiled ahead");
    let accepted: Vec<_> = r
        .report
        .candidates
        .iter()
        .filter(|c| c.status == tuner::report::Status::Accepted)
        .map(|c| c.loop_id.as_str())
        .collect();
    assert_eq!(accepted, ["two:0", "two:1"], "{:?}", r.report.candidates);
    let both = "#pragma unroll 2\n    for (int k = 0; k < n; ++k) {\n        a[k] += k;\n    }\n    #pragma unroll 2\n    for (int j";
    assert!(
        seen.prepared.iter().any(|t| t.contains(both)),
        "loop 1 never measured on the accepted text: {:?}",
        seen.prepared
    );
    assert!(
        !seen.prepared.iter().any(|t| t.contains(stale_loop1)),
        "the stale variant was measured: {:?}",
        seen.prepared
    );
}
