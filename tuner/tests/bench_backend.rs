//! The `bench` backend through the whole search, in process, on a simulated GPU: a
//! `runner::device::Device` implemented here "runs" a kernel by writing outputs derived from
//! the loaded code object (real PTX compiled by clang-19 through the runner) and returns
//! chosen times. The tree marks where its code lies with `__LINE__`-named device globals
//! (`mark_a_11`), which the compiled PTX keeps: a rewrite of `fill`'s loop moves both marks,
//! one of `other`'s loop only the second. The simulated GPU makes `#pragma unroll` on `fill`
//! 40% faster, a manual unroll of `fill` no faster, and any change to `other` computes one
//! element wrong (the spec launches only `fill`: `other`'s loop has no spec to judge it and is
//! not tuned). Needs: clang++-19 (no GPU).

use runner::device::{
    Api, Device, DeviceError, DeviceInfo, DevicePtr, KernelHandle, Launch, Limits,
};
use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use tuner::backend::bench::BenchBackend;
use tuner::backend::{Backend, Failure, Slot};
use tuner::report::Status;
use tuner::search::{tune, ApplyMode, Quiet, Settings};
use tuner::stats::Plan;

const KERNEL: &str = "#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
__global__ void fill(int* out, int n) {
    int i = threadIdx.x;
    int acc = 0;
    for (int k = 0; k < n; ++k) {
        acc += k * i;
    }
    out[i] = acc;
}
__device__ int CAT(mark_a_, __LINE__);
__global__ void other(int* out, int n) {
    for (int k = 0; k < n; ++k) {
        out[k] += k;
    }
}
__device__ int CAT(mark_b_, __LINE__);
";

const SPEC: &str = "version = 1
source = \"k.cu\"
kernel = \"fill\"
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
";

/// What the simulated GPU saw, for assertions.
#[derive(Default)]
struct Log {
    /// The (mark_a, mark_b) of every loaded image, in load order.
    loaded: Vec<(u32, u32)>,
    launches: usize,
    /// Comparisons made on the device (`Device::differ`), and how many found a difference.
    compared: usize,
    differed: usize,
}

struct FakeGpu {
    info: DeviceInfo,
    memory: HashMap<u64, Vec<u8>>,
    next: u64,
    images: Vec<(u32, u32)>,
    log: Arc<Mutex<Log>>,
}

/// The number after `name` in the PTX text.
fn mark(image: &[u8], name: &str) -> u32 {
    let text = String::from_utf8_lossy(image);
    let at = text
        .find(name)
        .unwrap_or_else(|| panic!("{name} not in the image"))
        + name.len();
    text[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect::<String>()
        .parse()
        .unwrap()
}

impl FakeGpu {
    fn new(log: Arc<Mutex<Log>>) -> FakeGpu {
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
        assert_eq!(symbol, "_Z4fillPii");
        let marks = (mark(image, "mark_a_"), mark(image, "mark_b_"));
        self.images.push(marks);
        self.log.lock().unwrap().loaded.push(marks);
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
        let (a, b) = self.images[k.0];
        let (a0, b0) = self.images[0];
        // Lines added before each mark: in `fill`, and in `other` alone.
        let in_fill = a - a0;
        let in_other = (b - b0) - in_fill;
        let out = DevicePtr(u64::from_le_bytes(args[0].clone().try_into().unwrap()));
        let n = i32::from_le_bytes(args[1].clone().try_into().unwrap());
        let buf = self.buffer(out)?;
        for (i, e) in buf.chunks_exact_mut(4).enumerate() {
            let mut v: i32 = (0..n).map(|k| k * i as i32).sum();
            if in_other > 0 && i == 5 {
                v = -1;
            }
            e.copy_from_slice(&v.to_le_bytes());
        }
        let mut log = self.log.lock().unwrap();
        log.launches += 1;
        // 0.1 ms, 40% less with `#pragma unroll` (one line) in fill; +-0.4% deterministic jitter.
        let base = if in_fill == 1 { 0.06 } else { 0.1 };
        Ok(base * (1.0 + 0.002 * ((log.launches % 5) as f64 - 2.0)))
    }

    fn differ(
        &mut self,
        a: DevicePtr,
        b: DevicePtr,
        bytes: usize,
    ) -> Result<Option<bool>, DeviceError> {
        if bytes == 0 {
            return Ok(Some(false));
        }
        let x = self.buffer(a)?[..bytes].to_vec();
        let differ = x[..] != self.buffer(b)?[..bytes];
        let mut log = self.log.lock().unwrap();
        log.compared += 1;
        log.differed += usize::from(differ);
        Ok(Some(differ))
    }

    fn memory(&self) -> Option<(u64, u64)> {
        Some((1 << 30, 1 << 30))
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
        apply: ApplyMode::Write,
        skip_same_code: true,
        fingerprint: "bench-test".into(),
        include_dirs: Vec::new(),
    }
}

fn options(cache: &Path) -> runner::Options {
    runner::Options {
        backend: runner::Backend::Auto,
        arch: None,
        device: 0,
        timeout: std::time::Duration::from_secs(10),
        build: runner::build::BuildOptions::new(cache),
    }
}

fn backend(tree: &Path, cache: &Path, log: &Arc<Mutex<Log>>) -> BenchBackend {
    let spec = runner::Spec::load(&tree.join("k.toml")).unwrap();
    let log = log.clone();
    BenchBackend::with_device(
        spec,
        tree,
        options(cache),
        Arc::new(move || Ok(Box::new(FakeGpu::new(log.clone())) as Box<dyn Device>)),
    )
    .unwrap()
}

/// The kernels of the specs that judged a variant.
fn status_judges(r: &tuner::report::Report, lp: &str, mode: &str, f: u32) -> Vec<String> {
    let c = r
        .candidates
        .iter()
        .find(|c| c.loop_id == lp && c.mode.as_deref() == Some(mode) && c.factor == Some(f))
        .unwrap();
    c.judged_by
        .as_ref()
        .unwrap()
        .iter()
        .map(|j| j.kernel.clone())
        .collect()
}

fn status(r: &tuner::report::Report, lp: &str, mode: &str, f: u32) -> (Status, String) {
    let c = r
        .candidates
        .iter()
        .find(|c| c.loop_id == lp && c.mode.as_deref() == Some(mode) && c.factor == Some(f))
        .unwrap_or_else(|| panic!("{lp} {mode} x{f}: {:#?}", r.candidates));
    (c.status, c.reason.clone().unwrap_or_default())
}

#[test]
fn bench_backend_accepts_rejects_and_check_fails_on_a_simulated_gpu() {
    let tree = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    std::fs::write(tree.path().join("k.cu"), KERNEL).unwrap();
    std::fs::write(tree.path().join("k.toml"), SPEC).unwrap();
    let log = Arc::new(Mutex::new(Log::default()));
    let b = backend(tree.path(), &state.path().join("objects"), &log);
    assert_eq!(b.source(), Some(Path::new("k.cu")));
    assert_eq!(b.unit(), "us");
    let stop = Arc::new(AtomicBool::new(false));
    let o = tune(&b, &settings(state.path()), tree.path(), &stop, &Quiet).unwrap();
    let r = &o.report;

    // fill's pragma variants are both 40% faster: a tie, and the smaller factor is kept.
    let p2 = status(r, "fill:0", "pragma", 2);
    let p4 = status(r, "fill:0", "pragma", 4);
    assert_eq!(p2.0, Status::Accepted, "{p2:?} {p4:?}");
    assert_eq!(p4.0, Status::Rejected, "{p2:?} {p4:?}");
    assert!(
        p4.1.starts_with("tie: pragma x2 within noise of pragma x4"),
        "{p4:?}"
    );
    // A manual unroll of fill is measured and no faster: rejected.
    for f in [2, 4] {
        let s = status(r, "fill:0", "manual", f);
        assert_eq!(s.0, Status::Rejected, "manual x{f}: {s:?}");
        assert!(!s.1.starts_with("superseded"), "{s:?}");
    }
    // other's loop: no spec launches `other` (the spec's kernel is fill), so nothing judges
    // it: not-run, never built.
    let other: Vec<_> = r
        .candidates
        .iter()
        .filter(|c| c.loop_id == "other:0")
        .collect();
    assert_eq!(other.len(), 1, "{other:#?}");
    assert_eq!(other[0].status, Status::NotRun);
    assert!(
        other[0]
            .reason
            .as_deref()
            .unwrap()
            .contains("no spec launches other"),
        "{other:#?}"
    );
    // Every measured variant was judged by the one spec.
    let judged = status_judges(r, "fill:0", "pragma", 2);
    assert_eq!(judged, ["fill"]);
    // Figures in microseconds, the speed-up of the accepted pragma.
    assert_eq!(r.baseline.unit, "us");
    assert!((r.baseline.figure - 100.0).abs() < 1.0, "{:?}", r.baseline);
    // A 100 us kernel is timed launch by launch, and the report says what a run was.
    assert_eq!(r.baseline.launches_per_sample, Some(1), "{:?}", r.baseline);
    assert!(
        (r.final_.speedup - 1.0 / 0.6).abs() < 0.05,
        "{:?}",
        r.final_
    );
    let fill = std::fs::read_to_string(tree.path().join("k.cu")).unwrap();
    assert!(fill.contains("#pragma unroll"), "{fill}");
    // One device for the whole tune: the baseline first, every variant loaded into it.
    let log = log.lock().unwrap();
    assert_eq!(log.loaded[0], (11, 17));
    assert!(log.loaded.len() >= 5, "{:?}", log.loaded);
    // Every variant's output (the spec's one buffer) was compared with the baseline's on the
    // device, through the backend's shared device, and was equal.
    assert_eq!(log.compared, log.loaded.len() - 1, "{:?}", log.loaded);
    assert_eq!(log.differed, 0);
}

#[test]
fn a_variant_that_does_not_compile_is_build_failed_and_the_source_must_be_in_the_tree() {
    let tree = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    std::fs::write(tree.path().join("k.cu"), KERNEL).unwrap();
    std::fs::write(tree.path().join("k.toml"), SPEC).unwrap();
    let log = Arc::new(Mutex::new(Log::default()));
    let b = backend(tree.path(), &state.path().join("objects"), &log);
    b.preflight().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let slot = Slot {
        index: 0,
        root: tree.path(),
        user_root: tree.path(),
        stop: &stop,
        records: None,
        device: &tuner::backend::LaneDevice::DEFAULT,
        spec: None,
    };
    let base = b.prepare(&slot, None).unwrap().unwrap();
    assert!(b.sample(&slot, &base).unwrap().unwrap() > 0.0);
    let broken = tempfile::tempdir().unwrap();
    std::fs::write(
        broken.path().join("k.cu"),
        KERNEL.replace("acc += k * i;", "acc += ;"),
    )
    .unwrap();
    let bslot = Slot {
        index: 1,
        root: broken.path(),
        user_root: tree.path(),
        stop: &stop,
        records: None,
        device: &tuner::backend::LaneDevice::DEFAULT,
        spec: None,
    };
    match b.prepare(&bslot, Some(&base)).unwrap() {
        Err(Failure::Build(m)) => assert!(m.contains("error"), "{m}"),
        other => panic!("{other:?}"),
    }

    // A spec whose source lies outside the tuned tree is refused with one line.
    let elsewhere = tempfile::tempdir().unwrap();
    let spec = runner::Spec::load(&tree.path().join("k.toml")).unwrap();
    let e = BenchBackend::new(spec, elsewhere.path(), options(&state.path().join("o")))
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("lies outside the tuned tree") && !e.contains('\n'),
        "{e}"
    );
}

fn nvcc() -> std::path::PathBuf {
    match runner::build::find_nvcc(None, None) {
        Ok(Some(p)) => p,
        other => panic!(
            "this test needs nvcc ({other:?}): {}; export CUDA_HOME (.ci/run does)",
            runner::build::NVCC_INSTALL
        ),
    }
}

/// The carried-cache route: the user's tree is compiled on a machine with nvcc (as
/// `bench --compile-only` does), then tuned where nvcc is missing. The baseline's working copy,
/// another directory, is served from that cache; the variants, which nobody compiled, are
/// `not-cached` (never `build-failed`), and since that is the machine's lack and not the
/// variant's, a later tune with nvcc decides them.
#[test]
fn working_copies_hit_the_cache_of_the_users_tree_and_what_it_lacks_is_not_cached() {
    let tree = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    std::fs::write(tree.path().join("k.cu"), KERNEL).unwrap();
    std::fs::write(tree.path().join("k.toml"), SPEC).unwrap();
    let cache = state.path().join("objects");
    let spec = runner::Spec::load(&tree.path().join("k.toml")).unwrap();
    let with_nvcc = runner::build::BuildOptions::new(&cache).with_nvcc(Some(nvcc()));
    let built = runner::build::build(
        &spec,
        &spec.source,
        &runner::build::Target::Cuda("sm_80".into()),
        &with_nvcc,
    )
    .unwrap();
    assert!(!built.cached);
    let tune_with = |build: runner::build::BuildOptions| {
        let log = Arc::new(Mutex::new(Log::default()));
        let l = log.clone();
        let b = BenchBackend::with_device(
            spec.clone(),
            tree.path(),
            runner::Options {
                build,
                ..options(&cache)
            },
            Arc::new(move || Ok(Box::new(FakeGpu::new(l.clone())) as Box<dyn Device>)),
        )
        .unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let mut s = settings(state.path());
        s.apply = ApplyMode::DryRun;
        tune(&b, &s, tree.path(), &stop, &Quiet).unwrap()
    };
    let gone = with_nvcc
        .clone()
        .with_nvcc(Some(state.path().join("no-toolkit/bin/nvcc")));
    let o = tune_with(gone);
    let r = &o.report;
    // The baseline ran (served from the cache into its working copy): measured.
    assert!(r.baseline.figure > 0.0, "{:?}", r.baseline);
    let variants: Vec<_> = r.candidates.iter().filter(|c| c.mode.is_some()).collect();
    assert!(variants.len() >= 4, "{:#?}", r.candidates);
    for c in &variants {
        if c.status == Status::Refused {
            continue;
        }
        assert_eq!(c.status, Status::NotCached, "{c:?}");
        let why = c.reason.as_deref().unwrap_or("");
        assert!(why.contains("nvcc is not installed here"), "{why}");
    }
    // With nvcc the same variants are decided (nothing was stored for them).
    let o = tune_with(with_nvcc);
    let decided = o
        .report
        .candidates
        .iter()
        .filter(|c| {
            matches!(
                c.status,
                Status::Accepted | Status::Rejected | Status::CheckFailed
            )
        })
        .count();
    assert!(decided >= 4, "{:#?}", o.report.candidates);
    assert_eq!(o.report.extra.reused, 0);
}

/// What `tune --backend bench` compiles for: the device's own architecture (read through the
/// driver on a real GPU), or `--arch`; an AMD architecture for an NVIDIA device is refused.
#[test]
fn the_target_is_the_devices_unless_arch_says_otherwise() {
    let tree = tempfile::tempdir().unwrap();
    std::fs::write(tree.path().join("k.cu"), KERNEL).unwrap();
    std::fs::write(tree.path().join("k.toml"), SPEC).unwrap();
    let spec = runner::Spec::load(&tree.path().join("k.toml")).unwrap();
    let cache = tree.path().join("cache");
    let target = |arch: Option<&str>| {
        let log = Arc::new(Mutex::new(Log::default()));
        let b = BenchBackend::with_device(
            spec.clone(),
            tree.path(),
            runner::Options {
                arch: arch.map(str::to_string),
                ..options(&cache)
            },
            Arc::new(move || {
                let mut g = FakeGpu::new(log.clone());
                g.info.arch = Some("sm_90".into());
                Ok(Box::new(g) as Box<dyn Device>)
            }),
        )
        .unwrap();
        b.preflight().unwrap();
        b.target().map_err(|e| e.to_string())
    };
    assert_eq!(
        target(None),
        Ok(runner::build::Target::Cuda("sm_90".into()))
    );
    assert_eq!(
        target(Some("sm_80")),
        Ok(runner::build::Target::Cuda("sm_80".into()))
    );
    let e = target(Some("gfx90a")).unwrap_err();
    assert!(e.contains("is not an NVIDIA architecture"), "{e}");
}

/// A bench tune's gates instantiate the specs' template kernels (each once, with its source
/// relative to the tree), the plain kernels not; and the settings fingerprint names them, so
/// that decisions of a tune whose gates did not (its variants of such a kernel `same-code`,
/// unmeasured) are not reused. Needs nvcc (the gates of an NVIDIA device).
#[test]
fn the_gates_of_a_bench_tune_instantiate_the_specs_template_kernels() {
    let tree = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tree.path().join("sub")).unwrap();
    std::fs::write(tree.path().join("k.cu"), KERNEL).unwrap();
    std::fs::write(tree.path().join("k.toml"), SPEC).unwrap();
    std::fs::write(
        tree.path().join("sub/t.cu"),
        "template <int N> __global__ void t(int* out, int n) { for (int k = 0; k < n; ++k) out[k] = N; }\n",
    )
    .unwrap();
    let t_spec = SPEC
        .replace("source = \"k.cu\"", "source = \"t.cu\"")
        .replace("kernel = \"fill\"", "kernel = \"t<4>\"");
    for name in ["t.toml", "t2.toml"] {
        std::fs::write(tree.path().join("sub").join(name), &t_spec).unwrap();
    }
    let specs: Vec<(String, std::path::PathBuf)> = ["k.toml", "sub/t.toml", "sub/t2.toml"]
        .iter()
        .map(|n| (n.to_string(), tree.path().join(n)))
        .collect();
    let cache = state.path().join("objects");
    let log = Arc::new(Mutex::new(Log::default()));
    let loaded = BenchBackend::load_specs(&specs, tree.path());
    let b = BenchBackend::with_specs(
        loaded,
        options(&cache),
        Arc::new(move || Ok(Box::new(FakeGpu::new(log.clone())) as Box<dyn Device>)),
    );
    assert_eq!(
        b.instances(),
        vec![tuner::gates::Instance {
            source: "sub/t.cu".into(),
            kernel: "t<4>".into()
        }]
    );
    b.preflight().unwrap();
    let spec = tuner::backend::spec::BackendSpec::Bench {
        specs,
        root: tree.path().to_path_buf(),
        arch: None,
        timeout_ms: 10_000,
        cache_dir: cache,
        nvcc: Some(nvcc()),
        gate_flags: Vec::new(),
    };
    let any = tuner::backend::spec::AnyBackend::Bench(b);
    let (gates, extra) = spec
        .device_gates(&any, &settings(state.path()).gates)
        .unwrap();
    assert_eq!(gates.instances.len(), 1, "{:?}", gates.instances);
    let extra = extra.expect("a bench tune's fingerprint");
    assert_eq!(
        extra.get("instances"),
        Some(&serde_json::json!([["sub/t.cu", "t<4>"]])),
        "{extra:?}"
    );
}
