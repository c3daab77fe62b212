//! Many specs in one tune (issue 28 item 1), through the whole search on a simulated GPU: three
//! kernels in two files (`a` and `b` in k1.cu, `c` in k2.cu), a loop of a header helper that
//! `a` and `b` both call, and one launch spec per kernel. The simulated GPU
//! (`runner::device::Device` implemented here, as in bench_backend.rs) "runs" a kernel by
//! writing outputs and returning chosen times, read from `__LINE__`-named device globals the
//! compiled PTX keeps (`mark_h_7` after the helper's loop, `mark_a_..` after `a`'s, ...): a
//! rewrite moves the marks after it. The times:
//! - the helper's loop with a pragma (one line): `a` 30% faster, `b` 20% slower -> rejected,
//!   `spec-slower` naming b's spec; manually unrolled (more lines): both 25% faster ->
//!   accepted by both specs (the geometric mean gains the minimum);
//! - `a`'s own loop with a pragma: `a` 40% faster -> accepted by a's spec alone;
//! - `b`'s and `c`'s loops: no change -> rejected, each by its own spec.
//!
//! Needs: clang++-19 (no GPU).

use runner::device::{
    Api, Device, DeviceError, DeviceInfo, DevicePtr, KernelHandle, Launch, Limits,
};
use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use tuner::backend::bench::BenchBackend;
use tuner::report::{Report, SpecOutcome, Status};
use tuner::search::{tune, ApplyMode, Quiet, Settings};
use tuner::stats::Plan;

const HELPER: &str = "#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
__device__ int helper(int n, int i) {
    int s = 0;
    for (int k = 0; k < n; ++k) {
        s += k * i;
    }
    return s;
}
__device__ int CAT(mark_h_, __LINE__);
";

const K1: &str = "#include \"helper.h\"
__global__ void a(int* out, int n) {
    int i = threadIdx.x;
    int acc = helper(n, i);
    for (int k = 0; k < n; ++k) {
        acc += k;
    }
    out[i] = acc;
}
__device__ int CAT(mark_a_, __LINE__);
__global__ void b(int* out, int n) {
    int i = threadIdx.x;
    int acc = helper(n, i);
    for (int k = 0; k < n; ++k) {
        acc -= k;
    }
    out[i] = acc;
}
__device__ int CAT(mark_b_, __LINE__);
";

const K2: &str = "#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
__global__ void c(int* out, int n) {
    int i = threadIdx.x;
    int acc = 0;
    for (int k = 0; k < n; ++k) {
        acc += 2 * k;
    }
    out[i] = acc + i;
}
__device__ int CAT(mark_c_, __LINE__);
";

fn spec(source: &str, kernel: &str) -> String {
    format!(
        "version = 1
source = \"{source}\"
kernel = \"{kernel}\"
grid = [1]
block = [64]

[[args]]
name = \"out\"
buffer = \"i32\"
length = 64
output = \"exact\"

[[args]]
name = \"n\"
scalar = \"i32\"
value = 16
"
    )
}

/// The marks of an image: name -> line.
fn marks(image: &[u8]) -> HashMap<char, u32> {
    let text = String::from_utf8_lossy(image);
    let mut out = HashMap::new();
    for m in ['h', 'a', 'b', 'c'] {
        let name = format!("mark_{m}_");
        if let Some(at) = text.find(&name) {
            let n: String = text[at + name.len()..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            out.insert(m, n.parse().unwrap());
        }
    }
    out
}

/// What the simulated GPU saw.
#[derive(Default)]
struct Log {
    /// Launches per kernel symbol.
    launches: HashMap<String, usize>,
}

struct FakeGpu {
    info: DeviceInfo,
    memory: HashMap<u64, Vec<u8>>,
    next: u64,
    /// (symbol, marks) of every loaded image.
    images: Vec<(String, HashMap<char, u32>)>,
    /// Each kernel's first image: its baseline's marks.
    first: HashMap<String, HashMap<char, u32>>,
    /// A kernel whose launches fail.
    broken: Option<&'static str>,
    log: Arc<Mutex<Log>>,
}

impl FakeGpu {
    fn new(log: Arc<Mutex<Log>>, broken: Option<&'static str>) -> FakeGpu {
        FakeGpu {
            info: DeviceInfo {
                api: Api::Cuda,
                ordinal: 0,
                name: "simulated GPU".into(),
                arch: Some("sm_80".into()),
                limits: Limits {
                    max_threads_per_block: 1024,
                    max_block: [1024, 1024, 64],
                    max_grid: [1 << 30, 65535, 65535],
                    max_shared_per_block: 49152,
                    warp_size: 32,
                },
            },
            memory: HashMap::new(),
            next: 0x1000,
            images: Vec::new(),
            first: HashMap::new(),
            broken,
            log,
        }
    }

    fn buffer(&mut self, p: DevicePtr) -> Result<&mut Vec<u8>, DeviceError> {
        self.memory
            .get_mut(&p.0)
            .ok_or_else(|| DeviceError::Invalid(format!("no allocation at {:#x}", p.0)))
    }
}

impl Device for FakeGpu {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn load(
        &mut self,
        image: &[u8],
        symbol: &str,
        _: &[u32],
        _: u32,
    ) -> Result<KernelHandle, DeviceError> {
        let m = marks(image);
        self.first
            .entry(symbol.to_string())
            .or_insert_with(|| m.clone());
        self.images.push((symbol.to_string(), m));
        Ok(KernelHandle(self.images.len() - 1))
    }

    fn alloc(&mut self, bytes: usize) -> Result<DevicePtr, DeviceError> {
        let p = self.next;
        self.next += (bytes as u64).next_multiple_of(0x1000);
        self.memory.insert(p, vec![0; bytes]);
        Ok(DevicePtr(p))
    }

    fn upload(&mut self, dst: DevicePtr, src: &[u8]) -> Result<(), DeviceError> {
        self.buffer(dst)?.copy_from_slice(src);
        Ok(())
    }

    fn download(&mut self, src: DevicePtr, dst: &mut [u8]) -> Result<(), DeviceError> {
        dst.copy_from_slice(self.buffer(src)?);
        Ok(())
    }

    fn copy(&mut self, dst: DevicePtr, src: DevicePtr, _bytes: usize) -> Result<(), DeviceError> {
        let data = self.buffer(src)?.clone();
        self.buffer(dst)?.copy_from_slice(&data);
        Ok(())
    }

    fn launch_timed(
        &mut self,
        k: KernelHandle,
        _: &Launch,
        args: &[Vec<u8>],
        _count: u32,
    ) -> Result<f64, DeviceError> {
        let (symbol, m) = self.images[k.0].clone();
        let kernel = symbol.chars().nth(3).unwrap();
        if self.broken.is_some_and(|b| b.starts_with(kernel)) {
            return Err(DeviceError::Invalid(format!(
                "simulated launch failure of {symbol}\nsecond line of the message"
            )));
        }
        let m0 = &self.first[&symbol];
        let moved = |c: char| {
            m.get(&c).copied().unwrap_or(0) as i64 - m0.get(&c).copied().unwrap_or(0) as i64
        };
        // Lines added: in the helper, in a's loop (moves a's and b's marks), in b's loop.
        let (in_h, in_a) = (moved('h'), moved('a'));
        let out = DevicePtr(u64::from_le_bytes(args[0].clone().try_into().unwrap()));
        let n = i32::from_le_bytes(args[1].clone().try_into().unwrap());
        let buf = self.buffer(out)?;
        for (i, e) in buf.chunks_exact_mut(4).enumerate() {
            let v: i32 = (0..n).map(|k| k * i as i32).sum::<i32>() + i as i32;
            e.copy_from_slice(&v.to_le_bytes());
        }
        let mut log = self.log.lock().unwrap();
        let count = log.launches.entry(symbol.clone()).or_default();
        *count += 1;
        let jitter = 1.0 + 0.002 * ((*count % 5) as f64 - 2.0);
        let mut t = 0.1;
        match kernel {
            'a' => {
                if in_h == 1 {
                    t *= 0.7;
                } else if in_h > 1 {
                    t *= 0.75;
                }
                if in_a == 1 {
                    t *= 0.6;
                }
            }
            'b' => {
                if in_h == 1 {
                    t *= 1.2;
                } else if in_h > 1 {
                    t *= 0.75;
                }
            }
            _ => {}
        }
        Ok(t * jitter)
    }
}

fn settings(state: &Path) -> Settings {
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
            // The code-object gates are not what this test is about: skipped.
            compiler: codeobj::compile::Compiler::new(
                "false {src} -o {out}",
                "gfx90a",
                state.join("objects"),
            ),
            max_occupancy_loss: None,
            instances: Vec::new(),
        },
        apply: ApplyMode::DryRun,
        skip_same_code: true,
        fingerprint: "multispec-test".into(),
        include_dirs: Vec::new(),
    }
}

fn tree() -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    std::fs::write(d.join("helper.h"), HELPER).unwrap();
    std::fs::write(d.join("k1.cu"), K1).unwrap();
    std::fs::write(d.join("k2.cu"), K2).unwrap();
    std::fs::create_dir(d.join("specs")).unwrap();
    std::fs::write(d.join("specs/a.toml"), spec("../k1.cu", "a")).unwrap();
    std::fs::write(d.join("specs/b.toml"), spec("../k1.cu", "b")).unwrap();
    std::fs::write(d.join("specs/c.toml"), spec("../k2.cu", "c")).unwrap();
    t
}

fn backend(
    tree: &Path,
    cache: &Path,
    names: &[&str],
    log: &Arc<Mutex<Log>>,
    broken: Option<&'static str>,
) -> BenchBackend {
    let paths: Vec<(String, std::path::PathBuf)> = names
        .iter()
        .map(|n| (n.to_string(), tree.join(n)))
        .collect();
    let log = log.clone();
    BenchBackend::with_specs(
        BenchBackend::load_specs(&paths, tree),
        runner::Options {
            backend: runner::Backend::Auto,
            arch: None,
            device: 0,
            timeout: std::time::Duration::from_secs(10),
            build: runner::build::BuildOptions::new(cache),
        },
        Arc::new(move || Ok(Box::new(FakeGpu::new(log.clone(), broken)) as Box<dyn Device>)),
    )
}

const ALL: [&str; 3] = ["specs/a.toml", "specs/b.toml", "specs/c.toml"];

fn run(tree: &Path, state: &Path, names: &[&str], broken: Option<&'static str>) -> Report {
    let log = Arc::new(Mutex::new(Log::default()));
    let b = backend(tree, &state.join("objects"), names, &log, broken);
    let stop = Arc::new(AtomicBool::new(false));
    tune(&b, &settings(state), tree, &stop, &Quiet)
        .unwrap()
        .report
}

/// The candidate of loop `lp` (function:index) as `mode xF`.
fn cand<'r>(r: &'r Report, lp: &str, mode: &str, f: u32) -> &'r tuner::report::Candidate {
    r.candidates
        .iter()
        .find(|c| c.loop_id == lp && c.mode.as_deref() == Some(mode) && c.factor == Some(f))
        .unwrap_or_else(|| panic!("{lp} {mode} x{f}: {:#?}", r.candidates))
}

fn judges(c: &tuner::report::Candidate) -> Vec<(String, String)> {
    c.judged_by
        .as_ref()
        .unwrap_or_else(|| panic!("no judged_by: {c:#?}"))
        .iter()
        .map(|j| (j.spec.clone(), j.kernel.clone()))
        .collect()
}

fn pair(spec: &str, kernel: &str) -> (String, String) {
    (spec.to_string(), kernel.to_string())
}

#[test]
fn each_loop_is_judged_by_the_specs_of_the_kernels_reaching_it() {
    let t = tree();
    let state = tempfile::tempdir().unwrap();
    let r = run(t.path(), state.path(), &ALL, None);
    let specs = r.specs.as_ref().expect("specs");
    assert_eq!(specs.len(), 3);
    assert!(
        specs.iter().all(|s| s.status == SpecOutcome::Ok),
        "{specs:?}"
    );

    // The helper's loop: judged by a's and b's specs.
    for f in [2, 4] {
        let p = cand(&r, "helper:0", "pragma", f);
        assert_eq!(p.status, Status::Rejected, "{p:#?}");
        let why = p.reason.as_deref().unwrap();
        assert!(why.starts_with("spec-slower: spec specs/b.toml"), "{why}");
        assert_eq!(
            judges(p),
            [pair("specs/a.toml", "a"), pair("specs/b.toml", "b")]
        );
        let jb = p.judged_by.as_ref().unwrap();
        assert!(jb[0].speedup > 1.3 && jb[1].speedup < 0.9, "{jb:?}");
        assert!(jb
            .iter()
            .all(|j| !j.ratios.is_empty() && j.interval[0] <= j.interval[1]));
    }
    let manual: Vec<_> = [2, 4]
        .iter()
        .map(|&f| cand(&r, "helper:0", "manual", f))
        .collect();
    assert!(
        manual.iter().any(|c| c.status == Status::Accepted),
        "{manual:#?}"
    );
    for c in &manual {
        assert_eq!(
            judges(c),
            [pair("specs/a.toml", "a"), pair("specs/b.toml", "b")]
        );
        // The candidate's speedup is the specs' geometric mean.
        let jb = c.judged_by.as_ref().unwrap();
        let geo = (jb[0].speedup * jb[1].speedup).sqrt();
        assert!((c.speedup.unwrap() - geo).abs() < 1e-9, "{c:#?}");
    }

    // a's own loop: a's spec alone, accepted.
    let pa = cand(&r, "a:0", "pragma", 2);
    assert_eq!(judges(pa), [pair("specs/a.toml", "a")]);
    assert!(
        [2, 4]
            .iter()
            .any(|&f| cand(&r, "a:0", "pragma", f).status == Status::Accepted),
        "{:#?}",
        r.candidates
    );
    // b's and c's loops: their own spec each, nothing faster.
    for (lp, s, k) in [("b:0", "specs/b.toml", "b"), ("c:0", "specs/c.toml", "c")] {
        for (mode, f) in [("pragma", 2), ("pragma", 4), ("manual", 2), ("manual", 4)] {
            let x = cand(&r, lp, mode, f);
            assert_ne!(x.status, Status::Accepted, "{x:#?}");
            if x.runs.unwrap_or(0) > 0 {
                assert_eq!(judges(x), [pair(s, k)]);
            }
        }
    }
    // The applied edits: the helper's and a's loop; the confirmation by a and b.
    let loops: Vec<&str> = r.applied.iter().map(|a| a.loop_id.as_str()).collect();
    assert_eq!(loops, ["helper:0", "a:0"], "{:#?}", r.applied);
    assert!(r.final_.speedup > 1.3, "{:?}", r.final_);

    // The JSON carries both fields as the contract says.
    let json: serde_json::Value = serde_json::from_str(&tuner::report::json(&r)).unwrap();
    assert_eq!(json["specs"][1]["spec"], "specs/b.toml");
    assert_eq!(json["specs"][1]["status"], "ok");
    let helper = json["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["loop"] == "helper:0" && c["mode"] == "pragma")
        .unwrap();
    assert_eq!(helper["judged_by"][1]["kernel"], "b");
    assert!(helper["judged_by"][0]["interval"].as_array().unwrap().len() == 2);

    // Each spec's own figures: a and b reach an applied loop and were measured with the
    // combination; c's kernel reaches none. The report's baseline and final figures are both
    // the first spec's (a's kernel), its speed-up the geometric mean of a's and b's.
    let (a, b, c) = (&specs[0], &specs[1], &specs[2]);
    let (ab, af) = (a.baseline.as_ref().unwrap(), a.final_.as_ref().unwrap());
    let bf = b.final_.as_ref().unwrap();
    assert!(c.baseline.is_some() && c.final_.is_none(), "{c:?}");
    assert_eq!(r.baseline.figure, ab.figure);
    assert_eq!(r.final_.figure, af.figure);
    assert!(af.figure < ab.figure && af.speedup > 1.3, "{a:?}");
    let geo = (af.speedup * bf.speedup).sqrt();
    assert!(
        (r.final_.speedup - geo).abs() < 1e-9,
        "{:?} {a:?} {b:?}",
        r.final_
    );
    assert!(json["specs"][0]["final"]["speedup"].as_f64().unwrap() > 1.3);
    assert_eq!(json["specs"][2]["baseline"]["unit"], ab.unit.as_str());
    // Every spec's session timed its 100 us kernel launch by launch, and says so.
    for s in specs {
        assert_eq!(
            s.baseline.as_ref().unwrap().launches_per_sample,
            Some(1),
            "{s:?}"
        );
    }
    assert_eq!(r.baseline.launches_per_sample, Some(1));
    assert!(json["specs"][2].get("final").is_none());
    let human = tuner::report::human(&r);
    let line = |spec: &str| {
        human
            .lines()
            .find(|l| l.trim_start().starts_with(spec))
            .unwrap_or_else(|| panic!("{spec} in {human}"))
            .to_string()
    };
    assert!(
        human.contains("the geometric mean over the 2 specs reaching an applied loop"),
        "{human}"
    );
    assert!(line("specs/a.toml (a): ").contains(" -> "), "{human}");
    assert!(
        line("specs/c.toml (c): ").ends_with("unchanged: its kernel reaches no applied loop"),
        "{human}"
    );
    let md = tuner::report::markdown(&r);
    assert!(
        md.contains("| spec | kernel | status | baseline | final | reason |"),
        "{md}"
    );
}

#[test]
fn a_failing_spec_stops_only_its_own_kernel() {
    let t = tree();
    let state = tempfile::tempdir().unwrap();
    let r = run(t.path(), state.path(), &ALL, Some("c"));
    let specs = r.specs.as_ref().unwrap();
    assert_eq!(specs[2].status, SpecOutcome::Failed, "{specs:?}");
    let why = specs[2].reason.as_deref().unwrap();
    assert!(
        why.contains("simulated launch failure") && !why.contains('\n'),
        "{why}"
    );
    assert!(specs[..2].iter().all(|s| s.status == SpecOutcome::Ok));
    assert!(
        r.extra
            .notes
            .iter()
            .any(|n| n.starts_with("spec specs/c.toml failed, its kernel c is not tuned: its baseline fails its run or its check: ")),
        "{:?}",
        r.extra.notes
    );
    // c's loop is not tuned, with the reason; the others are, as with every spec working.
    let c: Vec<_> = r.candidates.iter().filter(|c| c.file == "k2.cu").collect();
    assert!(!c.is_empty());
    for x in &c {
        assert_eq!(x.status, Status::NotRun, "{x:#?}");
        assert!(
            x.reason.as_deref().unwrap().contains("specs/c.toml"),
            "{x:#?}"
        );
    }
    let loops: Vec<&str> = r.applied.iter().map(|a| a.loop_id.as_str()).collect();
    assert_eq!(loops, ["helper:0", "a:0"], "{:#?}", r.applied);
}

/// The samples of the ledger's latest session: their comparison keys.
fn last_session_samples(state: &Path) -> Vec<String> {
    let db = rusqlite::Connection::open(state.join("ledger.db")).unwrap();
    let mut q = db
        .prepare("SELECT comparison FROM samples WHERE session_id = (SELECT MAX(id) FROM sessions)")
        .unwrap();
    q.query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

#[test]
fn adding_a_spec_measures_only_its_kernel() {
    let t = tree();
    let state = tempfile::tempdir().unwrap();
    let two = run(t.path(), state.path(), &ALL[..2], None);
    // Without c's spec, c's loop is not tuned: no spec launches c.
    assert!(
        two.extra
            .notes
            .iter()
            .any(|n| n == "1 kernel without a spec: `hip-unroll spec new` writes one (k2.cu: c)"),
        "{:?}",
        two.extra.notes
    );
    let c = two.candidates.iter().find(|c| c.file == "k2.cu").unwrap();
    assert_eq!(c.status, Status::NotRun);
    assert!(
        c.reason.as_deref().unwrap().contains("no spec launches c"),
        "{c:#?}"
    );
    assert!(!last_session_samples(state.path()).is_empty());

    let three = run(t.path(), state.path(), &ALL, None);
    let digest = tuner::backend::bench::spec_digest(&t.path().join("specs/c.toml"));
    let samples = last_session_samples(state.path());
    assert!(!samples.is_empty());
    // Every sample of the second run is c's: its A/A repeats or its loop's comparisons.
    for s in &samples {
        assert!(s.contains(&digest[..16]), "not c's: {s}");
    }
    // a's and b's decisions were reused, with the same judgement.
    assert!(three.extra.reused >= 8, "{}", three.extra.reused);
    for (lp, mode, f) in [
        ("helper:0", "pragma", 2),
        ("helper:0", "manual", 2),
        ("a:0", "pragma", 2),
    ] {
        let (x, y) = (cand(&two, lp, mode, f), cand(&three, lp, mode, f));
        assert_eq!(x.status, y.status);
        assert_eq!(x.judged_by, y.judged_by, "{lp} {mode} x{f}");
    }
    assert!(cand(&three, "c:0", "pragma", 2).judged_by.is_some());
}

/// Specs are spread over lanes like candidates are: on two simulated devices the specs'
/// baselines and comparisons go to both lanes, and the decisions are those of one lane.
#[test]
fn the_specs_are_spread_over_two_lanes() {
    use tuner::backend::LaneDevice;
    use tuner::devices::Device as LaneModel;
    use tuner::executor::local::LocalLane;
    let t = tree();
    let state = tempfile::tempdir().unwrap();
    let log = Arc::new(Mutex::new(Log::default()));
    let cache = state.path().join("objects");
    let b0 = backend(t.path(), &cache, &ALL, &log, None);
    let b1 = backend(t.path(), &cache, &ALL, &log, None);
    let lane = |b, id: &str| LocalLane {
        backend: b,
        device: LaneModel {
            model: "simulated GPU".into(),
            id: Some(id.into()),
            host: "h".into(),
        },
        lane: LaneDevice::local(id),
    };
    let lanes = [lane(&b0, "0"), lane(&b1, "1")];
    let s = settings(state.path());
    let disc = tuner::search::discover(&s, t.path()).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let r = tuner::search::tune_lanes(&lanes, &s, t.path(), disc, &stop, &Quiet)
        .unwrap()
        .report;
    let ids: std::collections::BTreeSet<String> = r
        .candidates
        .iter()
        .filter_map(|c| c.device.as_ref().and_then(|d| d.id.clone()))
        .collect();
    assert_eq!(
        ids.into_iter().collect::<Vec<_>>(),
        ["0", "1"],
        "{:#?}",
        r.candidates
    );
    let loops: Vec<&str> = r.applied.iter().map(|a| a.loop_id.as_str()).collect();
    assert_eq!(loops, ["helper:0", "a:0"], "{:#?}", r.applied);
    assert_eq!(
        judges(cand(&r, "helper:0", "pragma", 2)),
        [pair("specs/a.toml", "a"), pair("specs/b.toml", "b")]
    );
}

/// When the first spec given reaches no applied loop, the report's baseline and final figures
/// are both its kernel's (unchanged by the applied edits), never one kernel's baseline against
/// another kernel's final figure; the speed-up is the geometric mean of the specs that reached
/// the applied loops, each with its own figures.
#[test]
fn the_reports_figures_are_of_one_kernel_whatever_the_specs_order() {
    let t = tree();
    let state = tempfile::tempdir().unwrap();
    let r = run(
        t.path(),
        state.path(),
        &["specs/c.toml", "specs/a.toml", "specs/b.toml"],
        None,
    );
    let specs = r.specs.as_ref().expect("specs");
    let names: Vec<&str> = specs.iter().map(|s| s.spec.as_str()).collect();
    assert_eq!(names, ["specs/c.toml", "specs/a.toml", "specs/b.toml"]);
    let c = &specs[0];
    let cb = c.baseline.as_ref().expect("c's baseline");
    assert!(c.final_.is_none(), "{c:?}");
    assert!(!r.applied.is_empty());
    assert_eq!(r.baseline.figure, cb.figure);
    assert_eq!(
        r.final_.figure, cb.figure,
        "c's kernel is unchanged: {:?}",
        r.final_
    );
    let (af, bf) = (
        specs[1].final_.as_ref().unwrap(),
        specs[2].final_.as_ref().unwrap(),
    );
    assert!((r.final_.speedup - (af.speedup * bf.speedup).sqrt()).abs() < 1e-9);

    // Run again (a dry run left the tree as it was): every decision and the confirmation come
    // from the ledger; the specs' final figures are not measured again, and the human report
    // says which specs that concerns.
    let again = run(
        t.path(),
        state.path(),
        &["specs/c.toml", "specs/a.toml", "specs/b.toml"],
        None,
    );
    assert_eq!(again.applied.len(), r.applied.len());
    assert!((again.final_.speedup - r.final_.speedup).abs() < 1e-9);
    let specs = again.specs.as_ref().unwrap();
    assert!(specs.iter().all(|s| s.final_.is_none()), "{specs:?}");
    let human = tuner::report::human(&again);
    for (spec, says) in [
        ("specs/a.toml (a): ", "(the confirmation was reused)"),
        ("specs/b.toml (b): ", "(the confirmation was reused)"),
        (
            "specs/c.toml (c): ",
            "unchanged: its kernel reaches no applied loop",
        ),
    ] {
        let line = human
            .lines()
            .find(|l| l.trim_start().starts_with(spec))
            .unwrap_or_else(|| panic!("{spec} in {human}"));
        assert!(line.ends_with(says), "{line}");
    }
}

/// Variants of one machine code with several specs: `c`'s loop of 64 trips is fully unrolled
/// by `#pragma unroll 64`, `128` and a full unroll alike (one machine code on gfx90a, the
/// gates' compile; the baseline's is another). x64 is measured by its spec; x128 and full take
/// its measurement, cost no run and say whose code they share (they were shown as measured,
/// with x64's run count).
#[test]
fn with_several_specs_a_variant_of_another_variants_code_says_so_and_costs_no_run() {
    let t = tree();
    std::fs::write(
        t.path().join("k2.cu"),
        "#ifdef __HIP__
#include <hip/hip_runtime.h>
#endif
#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
__global__ void c(int* out, int n) {
    int i = threadIdx.x;
    int acc = n;
    for (int k = 0; k < 64; ++k) {
        acc = acc * 3 + (k ^ i);
    }
    out[i] = acc;
}
__device__ int CAT(mark_c_, __LINE__);
",
    )
    .unwrap();
    let state = tempfile::tempdir().unwrap();
    let log = Arc::new(Mutex::new(Log::default()));
    let b = backend(t.path(), &state.path().join("objects"), &ALL, &log, None);
    let mut s = settings(state.path());
    s.paths = vec!["k2.cu".into()];
    s.factors = vec![64, 128, tuner::report::FULL];
    s.modes = vec![pipeline::Mode::Pragma];
    s.gates.compiler = codeobj::compile::Compiler::new(
        codeobj::compile::DEFAULT_COMMAND,
        "gfx90a",
        state.path().join("objects"),
    );
    let stop = Arc::new(AtomicBool::new(false));
    let r = tune(&b, &s, t.path(), &stop, &Quiet).unwrap().report;
    let x64 = cand(&r, "c:0", "pragma", 64);
    assert!(
        x64.runs.unwrap() > 0 && x64.same_code_as.is_none(),
        "{x64:#?}"
    );
    assert_eq!(judges(x64), [pair("specs/c.toml", "c")]);
    for f in [128, tuner::report::FULL] {
        let v = cand(&r, "c:0", "pragma", f);
        assert_eq!(v.runs, Some(0), "{v:#?}");
        let twin = v.same_code_as.as_ref().expect("names its twin");
        assert_eq!((twin.mode.as_str(), twin.factor), ("pragma", 64));
        let why = v.reason.as_deref().unwrap_or("");
        assert!(why.contains("same code as pragma x64"), "{why}");
        assert_eq!(v.speedup, x64.speedup);
    }
    // From the ledger, the same.
    let again = tune(&b, &s, t.path(), &stop, &Quiet).unwrap().report;
    for f in [128, tuner::report::FULL] {
        let (v, w) = (
            cand(&r, "c:0", "pragma", f),
            cand(&again, "c:0", "pragma", f),
        );
        assert_eq!(
            (&w.runs, &w.reason, &w.same_code_as, w.status),
            (&v.runs, &v.reason, &v.same_code_as, v.status)
        );
    }
}
