//! Which variant of a loop is kept, through the whole search with a seeded in-process backend:
//! two variants within noise of each other (pragma x4 and manual x4 of one loop, both 20%
//! faster, 3% log-normal noise) keep the pragma with a `tie` reason in every one of 12 seeded
//! runs, and a second tune that takes every decision from the ledger keeps it too, with the
//! same reasons (the choice is a function of the ledger's samples); a significantly faster
//! manual unroll supersedes the pragma. With real gfx90a code objects, variants of one machine
//! code (`#pragma unroll 64`, `128` and a full unroll of a 64-trip loop) are built and measured
//! once: the others take that decision without a build or a run. Needs: hipcc (the last test).

use rand::distr::Distribution;
use rand::SeedableRng;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use tuner::backend::{Backend, Failure, Slot};
use tuner::report::{Candidate, Report, Status, FULL};
use tuner::search::{tune, ApplyMode, Quiet, Settings};
use tuner::stats::Plan;

/// Figures from the slot's `k.cu`: 10 for the original, `fast` of it for a pragma, `manual`
/// of it for a manual unroll (`k += 4` in the text), times seeded 3% log-normal noise.
struct Seeded {
    rng: Mutex<rand::rngs::StdRng>,
    pragma: f64,
    manual: f64,
    prepared: AtomicUsize,
    samples: AtomicUsize,
}

impl Seeded {
    fn new(seed: u64, pragma: f64, manual: f64) -> Seeded {
        Seeded {
            rng: Mutex::new(rand::rngs::StdRng::seed_from_u64(seed)),
            pragma,
            manual,
            prepared: AtomicUsize::new(0),
            samples: AtomicUsize::new(0),
        }
    }
}

impl Backend for Seeded {
    type Prepared = f64;

    fn name(&self) -> &'static str {
        "seeded"
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
        _baseline: Option<&f64>,
    ) -> Result<Result<f64, Failure>, tuner::Error> {
        self.prepared.fetch_add(1, Ordering::SeqCst);
        let text = std::fs::read_to_string(slot.root.join("k.cu")).unwrap();
        Ok(Ok(if text.contains("#pragma unroll") {
            10.0 * self.pragma
        } else if text.contains("k += 4") || text.contains("k + 3") {
            10.0 * self.manual
        } else {
            10.0
        }))
    }

    fn sample(&self, _slot: &Slot<'_>, p: &f64) -> Result<Result<f64, Failure>, tuner::Error> {
        self.samples.fetch_add(1, Ordering::SeqCst);
        let normal = statrs::distribution::Normal::standard();
        let z: f64 = normal.sample(&mut *self.rng.lock().unwrap());
        Ok(Ok(p * (0.03 * z).exp()))
    }
}

const KERNEL: &str = "__global__ void k(int* a, int n) {\n    for (int k = 0; k < n; ++k) {\n        a[k] += k;\n    }\n}\n";

fn settings(state: &Path, apply: ApplyMode) -> Settings {
    Settings {
        paths: vec![".".into()],
        factors: vec![4],
        modes: vec![pipeline::Mode::Pragma, pipeline::Mode::Manual],
        jobs: 2,
        plan: Plan::default(),
        max_noise: 0.2,
        state_dir: state.to_path_buf(),
        resume: false,
        gates: tuner::gates::Gates {
            // No code-object gates here (the baseline does not compile): skipped, said so.
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
        fingerprint: "ties".into(),
        include_dirs: Vec::new(),
    }
}

fn find<'r>(r: &'r Report, mode: &str, factor: u32) -> &'r Candidate {
    r.candidates
        .iter()
        .find(|c| c.mode.as_deref() == Some(mode) && c.factor == Some(factor))
        .unwrap_or_else(|| panic!("{mode} x{factor}: {:#?}", r.candidates))
}

/// What the report says of a variant: which, status, reason, the kept one's interval over it.
type Shown = (String, Status, Option<String>, Option<[f64; 2]>);

/// What the report says of every variant.
fn shown(r: &Report) -> Vec<Shown> {
    r.candidates
        .iter()
        .map(|c| {
            (
                format!("{:?} {:?}", c.mode, c.factor),
                c.status,
                c.reason.clone(),
                c.versus.as_ref().map(|v| v.ci),
            )
        })
        .collect()
}

#[test]
fn two_variants_within_noise_keep_the_pragma_in_every_seeded_run() {
    let stop = Arc::new(AtomicBool::new(false));
    for seed in 1..=12 {
        let d = tempfile::tempdir().unwrap();
        let state = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("k.cu"), KERNEL).unwrap();
        let b = Seeded::new(seed, 0.8, 0.8);
        let o = tune(
            &b,
            &settings(state.path(), ApplyMode::DryRun),
            d.path(),
            &stop,
            &Quiet,
        )
        .unwrap();
        let r = &o.report;
        let (p, m) = (find(r, "pragma", 4), find(r, "manual", 4));
        assert_eq!(p.status, Status::Accepted, "seed {seed}: {p:?}");
        assert_eq!(m.status, Status::Rejected, "seed {seed}: {m:?}");
        let why = m.reason.as_deref().unwrap_or("");
        assert!(
            why.starts_with("tie: pragma x4 within noise of manual x4 (speedup ratio "),
            "seed {seed}: {why}"
        );
        let v = m.versus.as_ref().expect("the comparison with the kept one");
        assert_eq!((v.kept.mode.as_str(), v.kept.factor), ("pragma", 4));
        assert!(v.ci[0] <= 1.0 && v.ci[1] >= 1.0, "seed {seed}: {v:?}");
        // The decision's data: its pairs' ratios and key, for a renderer.
        let ratios = m.ratios.as_ref().expect("ratios");
        assert_eq!(ratios.pairs.len() as u32, m.runs.unwrap());
        assert!(!ratios.replication.is_empty() && m.key.is_some());
        assert_eq!(r.applied.len(), 1);
        assert_eq!(r.applied[0].mode, "pragma");

        // The same choice from the ledger's samples alone: nothing measured again.
        let again = Seeded::new(seed + 1000, 0.8, 0.8);
        let o2 = tune(
            &again,
            &settings(state.path(), ApplyMode::DryRun),
            d.path(),
            &stop,
            &Quiet,
        )
        .unwrap();
        assert_eq!(again.prepared.load(Ordering::SeqCst), 0);
        assert_eq!(again.samples.load(Ordering::SeqCst), 0);
        assert_eq!(shown(&o2.report)[..2], shown(r)[..2], "seed {seed}");
    }
}

#[test]
fn a_significantly_faster_variant_supersedes_the_less_invasive_one() {
    let d = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("k.cu"), KERNEL).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let b = Seeded::new(7, 0.8, 0.6);
    let o = tune(
        &b,
        &settings(state.path(), ApplyMode::DryRun),
        d.path(),
        &stop,
        &Quiet,
    )
    .unwrap();
    let r = &o.report;
    let (p, m) = (find(r, "pragma", 4), find(r, "manual", 4));
    assert_eq!(m.status, Status::Accepted, "{m:?}");
    assert_eq!(p.status, Status::Rejected, "{p:?}");
    let why = p.reason.as_deref().unwrap();
    assert!(
        why.starts_with("superseded: manual x4 (") && why.contains("significantly faster"),
        "{why}"
    );
    assert!(p.versus.as_ref().unwrap().ci[0] > 1.0, "{p:?}");
}

/// A 64-trip loop: `#pragma unroll 64`, `#pragma unroll 128` and a full unroll give one
/// machine code on gfx90a (the baseline's is another). With the same-code check on, pragma x64
/// is built and measured; x128 and full are neither built nor run and take its decision, naming
/// it; the three are one program, so the least invasive, x64, is kept (a tie at exactly 1).
#[test]
fn variants_of_one_machine_code_are_built_and_measured_once() {
    let d = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    std::fs::write(
        d.path().join("k.cu"),
        "#include <hip/hip_runtime.h>\n__global__ void k(float* p, const float* q) {\n    int t = threadIdx.x;\n    float s = 0.0f;\n    for (int i = 0; i < 64; ++i) {\n        s = s * q[i] + p[t * 64 + i] * q[i + 1];\n    }\n    p[t] = s;\n}\n",
    )
    .unwrap();
    let mut s = settings(state.path(), ApplyMode::DryRun);
    s.factors = vec![64, 128, FULL];
    s.modes = vec![pipeline::Mode::Pragma];
    s.skip_same_code = true;
    s.jobs = 3;
    s.gates.compiler = codeobj::compile::Compiler::new(
        codeobj::compile::DEFAULT_COMMAND,
        "gfx90a",
        state.path().join("objects"),
    );
    let stop = Arc::new(AtomicBool::new(false));
    let b = Seeded::new(3, 0.8, 1.0);
    let o = tune(&b, &s, d.path(), &stop, &Quiet).unwrap();
    let r = &o.report;
    let x64 = find(r, "pragma", 64);
    assert_eq!(x64.status, Status::Accepted, "{x64:?}");
    assert!(x64.runs.unwrap() > 0 && x64.same_code_as.is_none());
    for f in [128, FULL] {
        let c = find(r, "pragma", f);
        assert_eq!(c.runs, Some(0), "{c:?}");
        assert_eq!(c.status, Status::Rejected, "{c:?}");
        let why = c.reason.as_deref().unwrap();
        assert!(
            why.starts_with("tie: pragma x64 within noise of pragma ")
                && why.contains("same code as pragma x64"),
            "{why}"
        );
        let twin = c.same_code_as.as_ref().expect("names its twin");
        assert_eq!((twin.mode.as_str(), twin.factor), ("pragma", 64));
        assert_eq!(c.versus.as_ref().unwrap().ci, [1.0, 1.0]);
        assert_eq!(c.speedup, x64.speedup);
    }
    assert!(find(r, "pragma", FULL).full);
    // Built: the baseline, pragma x64, and the final state for the confirmation (pragma x64
    // again); never x128 or full (each build is one `prepare`).
    assert_eq!(b.prepared.load(Ordering::SeqCst), 3);
    assert_eq!(r.extra.builds, 3);
}
