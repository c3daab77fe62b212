//! The search with an in-process backend whose figures depend on the working copy's source
//! (deterministic, with 1% seeded jitter): greedy choice of the fastest variant, `superseded`,
//! `build-failed` and `check-failed` from the backend, blocked loops never prepared, the
//! code-object gates `skipped` when the baseline does not compile, apply / dry-run / diff, and
//! a second search over the result (the tuner's own pragma is re-tuned, as `unroll` would) and
//! a third over the unchanged tree reusing every decision.

use rand::{RngExt, SeedableRng};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use tuner::backend::{Backend, Failure, Slot};
use tuner::report::Status;
use tuner::search::{tune, ApplyMode, Quiet, Settings};
use tuner::stats::Plan;

/// Figures: 10 for the original; `#pragma unroll 4` on `fast`'s loop halves it, `unroll 2`
/// takes 20% off; a manual unroll of `fast` breaks the build; any change to `flat` changes
/// nothing; a manual unroll of `wrong` fails the check.
struct Fake {
    rng: Mutex<rand::rngs::StdRng>,
    prepared: AtomicUsize,
}

impl Fake {
    fn new() -> Fake {
        Fake {
            rng: Mutex::new(rand::rngs::StdRng::seed_from_u64(7)),
            prepared: AtomicUsize::new(0),
        }
    }
}

fn read(slot: &Slot<'_>, f: &str) -> String {
    std::fs::read_to_string(slot.root.join(f)).unwrap()
}

impl Backend for Fake {
    type Prepared = f64;

    fn name(&self) -> &'static str {
        "fake"
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
        baseline: Option<&f64>,
    ) -> Result<Result<f64, Failure>, tuner::Error> {
        self.prepared.fetch_add(1, Ordering::SeqCst);
        let fast = read(slot, "fast.cu");
        let wrong = read(slot, "wrong.cu");
        if fast.contains("k += 2") || fast.contains("(k + 1)") {
            return Ok(Err(Failure::Build("--build exit 1: manual fast".into())));
        }
        if wrong.contains("(k + 1)") {
            return Ok(Err(Failure::Check("--check exit 1".into())));
        }
        let mut figure = 10.0;
        if fast.contains("#pragma unroll 4") {
            figure *= 0.5;
        } else if fast.contains("#pragma unroll 2") {
            figure *= 0.8;
        }
        assert!(baseline.is_none() || baseline.is_some_and(|b| *b > 0.0));
        Ok(Ok(figure))
    }

    fn sample(&self, _slot: &Slot<'_>, p: &f64) -> Result<Result<f64, Failure>, tuner::Error> {
        let j: f64 = self.rng.lock().unwrap().random_range(-0.01..0.01);
        Ok(Ok(p * (1.0 + j)))
    }
}

fn tree(dir: &Path) {
    let k = |name: &str| {
        format!("__global__ void {name}(int* a, int n) {{\n    for (int k = 0; k < n; ++k) {{\n        a[k] += k;\n    }}\n}}\n")
    };
    std::fs::write(dir.join("fast.cu"), k("fast")).unwrap();
    std::fs::write(dir.join("flat.cu"), k("flat")).unwrap();
    std::fs::write(dir.join("wrong.cu"), k("wrong")).unwrap();
    std::fs::write(
        dir.join("sync.cu"),
        "__global__ void sync(int* a, int n) {\n    for (int k = 0; k < n; ++k) {\n        a[k] = 1;\n        __syncthreads();\n    }\n}\n",
    )
    .unwrap();
}

fn settings(state: &Path, apply: ApplyMode) -> Settings {
    Settings {
        paths: vec![".".into()],
        factors: vec![2, 4],
        modes: vec![pipeline::Mode::Pragma, pipeline::Mode::Manual],
        jobs: 2,
        plan: Plan::default(),
        max_noise: 0.2,
        state_dir: state.to_path_buf(),
        resume: false,
        gates: tuner::gates::Gates {
            // A compile command that fails: the gates are skipped, and say so.
            compiler: codeobj::compile::Compiler::new(
                "false {src} -o {out}",
                "gfx90a",
                state.join("objects"),
            ),
            max_occupancy_loss: None,
            instances: Vec::new(),
        },
        apply,
        skip_same_code: false,
        fingerprint: "test".into(),
        include_dirs: Vec::new(),
    }
}

fn status(r: &tuner::report::Report, lp: &str, mode: &str, f: u32) -> Status {
    r.candidates
        .iter()
        .find(|c| c.loop_id == lp && c.mode.as_deref() == Some(mode) && c.factor == Some(f))
        .unwrap_or_else(|| panic!("{lp} {mode} x{f}"))
        .status
}

#[test]
fn greedy_search_decides_applies_and_reuses() {
    let d = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    tree(d.path());
    let stop = Arc::new(AtomicBool::new(false));
    let fake = Fake::new();
    let o = tune(
        &fake,
        &settings(state.path(), ApplyMode::Write),
        d.path(),
        &stop,
        &Quiet,
    )
    .unwrap();
    let r = &o.report;
    assert_eq!(status(r, "fast:0", "pragma", 4), Status::Accepted);
    assert_eq!(status(r, "fast:0", "pragma", 2), Status::Rejected);
    let sup = r
        .candidates
        .iter()
        .find(|c| {
            c.loop_id == "fast:0" && c.factor == Some(2) && c.mode.as_deref() == Some("pragma")
        })
        .unwrap();
    assert!(
        sup.reason.as_deref().unwrap().starts_with("superseded"),
        "{sup:?}"
    );
    assert_eq!(status(r, "fast:0", "manual", 2), Status::BuildFailed);
    assert_eq!(status(r, "wrong:0", "manual", 2), Status::CheckFailed);
    assert_eq!(status(r, "flat:0", "pragma", 4), Status::Rejected);
    let blocked: Vec<_> = r
        .candidates
        .iter()
        .filter(|c| c.loop_id == "sync:0")
        .collect();
    assert_eq!(blocked.len(), 1);
    assert_eq!(blocked[0].status, Status::Blocked);
    // Gates skipped with the reason, on the measured candidates and in the notes.
    let acc = r
        .candidates
        .iter()
        .find(|c| c.status == Status::Accepted)
        .unwrap();
    assert!(
        acc.reason
            .as_deref()
            .unwrap_or("")
            .contains("code-object gates skipped"),
        "{acc:?}"
    );
    assert!(r.extra.notes.iter().any(|n| n.contains("gates skipped")));
    // Applied: fast.cu has the pragma, the others are untouched.
    assert_eq!(r.applied.len(), 1);
    assert!((r.final_.speedup - 2.0).abs() < 0.05, "{:?}", r.final_);
    let fast = std::fs::read_to_string(d.path().join("fast.cu")).unwrap();
    assert!(fast.contains("#pragma unroll 4"), "{fast}");
    assert!(!std::fs::read_to_string(d.path().join("flat.cu"))
        .unwrap()
        .contains("pragma"));

    // A second search over the result. `#pragma unroll 4` is no author's decision (the
    // pipeline's policy, the one `unroll` applies), so `fast`'s other variants are measured
    // against the new baseline and lose; its x4 pragma is the current source; every other
    // loop's decision (taken against this very baseline) is reused. Nothing is applied.
    let fake2 = Fake::new();
    let o2 = tune(
        &fake2,
        &settings(state.path(), ApplyMode::Write),
        d.path(),
        &stop,
        &Quiet,
    )
    .unwrap();
    let r2 = &o2.report;
    let no_change = r2
        .candidates
        .iter()
        .find(|c| {
            c.loop_id == "fast:0" && c.factor == Some(4) && c.mode.as_deref() == Some("pragma")
        })
        .unwrap();
    assert_eq!(no_change.status, Status::Refused);
    assert!(
        no_change
            .reason
            .as_deref()
            .unwrap()
            .starts_with("no-change"),
        "{no_change:?}"
    );
    assert_eq!(status(r2, "fast:0", "pragma", 2), Status::Rejected);
    assert_eq!(status(r2, "fast:0", "manual", 2), Status::BuildFailed);
    assert_eq!(status(r2, "flat:0", "pragma", 4), Status::Rejected);
    assert_eq!(status(r2, "wrong:0", "manual", 2), Status::CheckFailed);
    assert!(r2.applied.is_empty());
    assert!(fake2.prepared.load(Ordering::SeqCst) > 0);
    assert_eq!(
        std::fs::read_to_string(d.path().join("fast.cu")).unwrap(),
        fast
    );

    // A third search over the unchanged tree: nothing prepared, every decision reused or
    // refused.
    let fake3 = Fake::new();
    let o3 = tune(
        &fake3,
        &settings(state.path(), ApplyMode::Write),
        d.path(),
        &stop,
        &Quiet,
    )
    .unwrap();
    assert_eq!(fake3.prepared.load(Ordering::SeqCst), 0);
    assert_eq!(o3.report.extra.builds, 0);
    assert_eq!(o3.report.extra.compiles, 0);
    assert_eq!(status(&o3.report, "fast:0", "pragma", 4), Status::Refused);
    assert_eq!(status(&o3.report, "fast:0", "pragma", 2), Status::Rejected);
    assert!(o3.report.applied.is_empty());
}

#[test]
fn dry_run_and_diff_write_nothing() {
    let d = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    tree(d.path());
    let before = std::fs::read(d.path().join("fast.cu")).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let o = tune(
        &Fake::new(),
        &settings(state.path(), ApplyMode::DryRun),
        d.path(),
        &stop,
        &Quiet,
    )
    .unwrap();
    assert_eq!(o.report.applied.len(), 1);
    assert_eq!(o.report.extra.outcome, tuner::report::Outcome::DryRun);
    assert_eq!(std::fs::read(d.path().join("fast.cu")).unwrap(), before);
    // Same tree, same settings: --diff reuses every decision and prints the edit.
    let fake = Fake::new();
    let o = tune(
        &fake,
        &settings(state.path(), ApplyMode::Diff),
        d.path(),
        &stop,
        &Quiet,
    )
    .unwrap();
    assert_eq!(fake.prepared.load(Ordering::SeqCst), 0);
    let diff = o.diff.unwrap();
    assert!(
        diff.contains("+++ b/fast.cu") && diff.contains("+    #pragma unroll 4"),
        "{diff}"
    );
    assert_eq!(std::fs::read(d.path().join("fast.cu")).unwrap(), before);
}

#[test]
fn a_set_stop_flag_interrupts_before_anything_is_measured() {
    let d = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    tree(d.path());
    let stop = Arc::new(AtomicBool::new(true));
    let o = tune(
        &Fake::new(),
        &settings(state.path(), ApplyMode::Write),
        d.path(),
        &stop,
        &Quiet,
    )
    .unwrap();
    assert!(o.interrupted);
    assert!(o.report.applied.is_empty());
    assert!(!std::fs::read_to_string(d.path().join("fast.cu"))
        .unwrap()
        .contains("pragma"));
}

/// A kernel with no loop: nothing to tune, said in every format, and no `NaN` figure.
#[test]
fn a_kernel_with_no_loop_says_so_and_shows_no_nan() {
    let dir = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("flat.cu"),
        "__global__ void flat(int* a) {\n    a[threadIdx.x] = 1;\n}\n",
    )
    .unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let fake = Fake::new();
    let o = tune(
        &fake,
        &settings(state.path(), ApplyMode::Write),
        dir.path(),
        &stop,
        &Quiet,
    )
    .unwrap();
    let r = &o.report;
    assert!(r.candidates.is_empty());
    assert_eq!(fake.prepared.load(Ordering::SeqCst), 0);
    assert!(
        r.extra
            .notes
            .iter()
            .any(|n| n == "no loop to tune: the kernels of . have no loop"),
        "{:?}",
        r.extra.notes
    );
    let human = tuner::report::human(r);
    assert!(!human.contains("NaN"), "{human}");
    assert!(
        human.contains("baseline: not measured (no loop to tune)")
            && human.contains("final:    not measured"),
        "{human}"
    );
    let md = tuner::report::markdown(r);
    assert!(
        !md.contains("NaN") && md.contains("no loop to tune"),
        "{md}"
    );
    let json: serde_json::Value = serde_json::from_str(&tuner::report::json(r)).unwrap();
    assert!(json["final"]["figure"].is_null(), "{json}");
}

/// `same-code` on a real gfx90a compile: `#pragma unroll 4` on a loop of 4 steps changes no
/// instruction (clang unrolls it anyway), so with `skip_same_code` the variant is rejected
/// with reason `same-code` and no run, and never built; without it, it is measured.
#[test]
fn a_variant_with_the_baselines_machine_code_is_rejected_without_a_run() {
    let d = tempfile::tempdir().unwrap();
    tree(d.path());
    std::fs::write(
        d.path().join("cst.cu"),
        "#include <hip/hip_runtime.h>\n__global__ void cst(float* p) {\n    for (int i = 0; i < 4; ++i) {\n        p[threadIdx.x * 4 + i] *= 2.0f;\n    }\n}\n",
    )
    .unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let run = |skip: bool| {
        let state = tempfile::tempdir().unwrap();
        let mut s = settings(state.path(), ApplyMode::DryRun);
        s.paths = vec!["cst.cu".into()];
        s.factors = vec![4];
        s.modes = vec![pipeline::Mode::Pragma];
        s.skip_same_code = skip;
        s.gates.compiler = codeobj::compile::Compiler::new(
            codeobj::compile::DEFAULT_COMMAND,
            "gfx90a",
            state.path().join("objects"),
        );
        let fake = Fake::new();
        let o = tune(&fake, &s, d.path(), &stop, &Quiet).unwrap();
        let c = o
            .report
            .candidates
            .iter()
            .find(|c| c.loop_id == "cst:0" && c.factor == Some(4))
            .cloned()
            .unwrap_or_else(|| panic!("{:?}", o.report.candidates));
        (c, fake.prepared.load(Ordering::SeqCst))
    };
    let (c, prepared) = run(true);
    assert_eq!(c.status, Status::Rejected, "{c:?}");
    assert!(
        c.reason.as_deref().unwrap().starts_with("same-code"),
        "{c:?}"
    );
    assert_eq!(c.runs, Some(0));
    assert_eq!(c.speedup, None);
    // Only the baseline was built (for its A/A repeats); the variant never was.
    assert_eq!(prepared, 1, "{c:?}");
    let (c, prepared) = run(false);
    assert!(c.runs.unwrap() > 0, "{c:?}");
    assert!(!c.reason.as_deref().unwrap_or("").starts_with("same-code"));
    assert_eq!(prepared, 2);
}
