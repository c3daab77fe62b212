//! The device decides the architecture, tested with a simulated `Device` (no GPU here): a
//! session on an sm_90 device compiles for sm_90 unless `--arch` says otherwise, refuses an AMD
//! architecture for an NVIDIA device (and the other way round), and refuses PTX built for a
//! newer GPU than the device. The kernel is compiled for real by nvcc. Needs: nvcc (fails
//! without it).

mod support;

use runner::build::{BuildOptions, Target};
use runner::device::{
    Api, Device, DeviceError, DeviceInfo, DevicePtr, KernelHandle, Launch, Limits,
};
use runner::session::{Backend, Options, Session};
use runner::Spec;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// A device that allocates host memory, records what it loads and "runs" nothing.
struct Sim {
    info: DeviceInfo,
    memory: Vec<Vec<u8>>,
    loaded: Arc<Mutex<Vec<String>>>,
}

impl Sim {
    fn boxed(api: Api, arch: &str, loaded: &Arc<Mutex<Vec<String>>>) -> Box<dyn Device> {
        Box::new(Sim {
            info: DeviceInfo {
                api,
                ordinal: 0,
                name: format!("simulated {arch}"),
                arch: Some(arch.into()),
                limits: Limits {
                    max_threads_per_block: 1024,
                    max_block: [1024, 1024, 64],
                    max_grid: [1 << 30, 65535, 65535],
                    max_shared_per_block: 49152,
                    warp_size: 32,
                },
            },
            memory: Vec::new(),
            loaded: loaded.clone(),
        })
    }
}

impl Device for Sim {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }
    fn load(
        &mut self,
        image: &[u8],
        _: &str,
        _: &[u32],
        _: u32,
    ) -> Result<KernelHandle, DeviceError> {
        // nvcc's cubin (an ELF file), or PTX by its `.target`.
        if image.starts_with(b"\x7fELF") {
            self.loaded.lock().unwrap().push("cubin".into());
            return Ok(KernelHandle(0));
        }
        let text = String::from_utf8_lossy(image);
        let target = text
            .lines()
            .find_map(|l| l.trim().strip_prefix(".target "))
            .unwrap_or("?")
            .to_string();
        self.loaded.lock().unwrap().push(target);
        Ok(KernelHandle(0))
    }
    fn alloc(&mut self, bytes: usize) -> Result<DevicePtr, DeviceError> {
        self.memory.push(vec![0; bytes]);
        Ok(DevicePtr(self.memory.len() as u64 * 0x1000))
    }
    // Memory holds what is uploaded and copied (a launch writes nothing), so inputs stay as
    // they were and outputs are their initial contents.
    fn upload(&mut self, dst: DevicePtr, src: &[u8]) -> Result<(), DeviceError> {
        self.memory[(dst.0 / 0x1000 - 1) as usize][..src.len()].copy_from_slice(src);
        Ok(())
    }
    fn download(&mut self, src: DevicePtr, dst: &mut [u8]) -> Result<(), DeviceError> {
        let n = dst.len();
        dst.copy_from_slice(&self.memory[(src.0 / 0x1000 - 1) as usize][..n]);
        Ok(())
    }
    fn copy(&mut self, dst: DevicePtr, src: DevicePtr, bytes: usize) -> Result<(), DeviceError> {
        let from = self.memory[(src.0 / 0x1000 - 1) as usize][..bytes].to_vec();
        self.memory[(dst.0 / 0x1000 - 1) as usize][..bytes].copy_from_slice(&from);
        Ok(())
    }
    fn launch_timed(
        &mut self,
        _: KernelHandle,
        _: &Launch,
        _: &[Vec<u8>],
        _count: u32,
    ) -> Result<f64, DeviceError> {
        Ok(0.1)
    }
}

fn spec() -> Spec {
    let p = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../testdata/bench/dot.toml"
    ));
    Spec::load(&p).unwrap()
}

fn options(cache: &std::path::Path, arch: Option<&str>) -> Options {
    Options {
        backend: Backend::Auto,
        arch: arch.map(str::to_string),
        device: 0,
        timeout: std::time::Duration::from_secs(5),
        build: BuildOptions::new(cache).with_nvcc(Some(support::nvcc())),
    }
}

#[test]
fn the_device_decides_the_architecture_unless_arch_says_otherwise() {
    let cache = tempfile::tempdir().unwrap();
    let loaded = Arc::new(Mutex::new(Vec::new()));
    let s = Session::with_device(
        Sim::boxed(Api::Cuda, "sm_90", &loaded),
        spec(),
        None,
        &options(cache.path(), None),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.target, Target::Cuda("sm_90".into()));
    // Built for the device's own architecture: its machine code is loaded (no JIT).
    assert_eq!(loaded.lock().unwrap().as_slice(), ["cubin"]);
    let s = Session::with_device(
        Sim::boxed(Api::Cuda, "sm_90", &loaded),
        spec(),
        None,
        &options(cache.path(), Some("sm_80")),
    )
    .unwrap();
    assert_eq!(s.target, Target::Cuda("sm_80".into()));
    // For another architecture: the PTX, which the driver compiles for the device.
    assert_eq!(
        loaded.lock().unwrap().last().map(String::as_str),
        Some("sm_80")
    );
}

#[test]
fn an_architecture_the_device_cannot_run_is_refused_with_one_line() {
    let cache = tempfile::tempdir().unwrap();
    let loaded = Arc::new(Mutex::new(Vec::new()));
    let open = |api, dev: &str, arch| {
        Session::with_device(
            Sim::boxed(api, dev, &loaded),
            spec(),
            None,
            &options(cache.path(), arch),
        )
        .err()
        .expect("refused")
    };
    // The architecture is the caller's setting: the error says so (the binary names its flag)
    // and its text names no flag.
    let arch = |e: &runner::RunnerError| {
        matches!(
            e,
            runner::RunnerError::Setting {
                setting: runner::error::Setting::Arch,
                ..
            }
        )
    };
    let e = open(Api::Cuda, "sm_90", Some("gfx90a"));
    assert!(arch(&e), "{e:?}");
    assert!(
        e.to_string()
            .contains("the target architecture gfx90a is not an NVIDIA architecture"),
        "{e}"
    );
    let e = open(Api::Hip, "gfx90a", Some("sm_90"));
    assert!(arch(&e), "{e:?}");
    assert!(
        e.to_string()
            .contains("the target architecture sm_90 is an NVIDIA architecture"),
        "{e}"
    );
    let e = open(Api::Cuda, "sm_80", Some("sm_90")).to_string();
    assert!(
        e.contains("PTX for sm_90 cannot run on simulated sm_80 (sm_80): compile for sm_80"),
        "{e}"
    );
    assert!(!e.contains("--"), "{e}");
    assert!(loaded.lock().unwrap().is_empty(), "nothing loaded");
}

/// `bench`'s loop (`runner::measure::interleaved`) on a simulated device: warm-up launches are
/// not samples, every kernel gets `iterations` samples, the ratio of medians and the output
/// comparison come back, and the report renders them; no iteration is a usage error.
#[test]
fn the_measurement_loop_times_baseline_and_variant_and_the_report_renders_it() {
    let cache = tempfile::tempdir().unwrap();
    let loaded = Arc::new(Mutex::new(Vec::new()));
    let mut s = Session::with_device(
        Sim::boxed(Api::Cuda, "sm_90", &loaded),
        spec(),
        None,
        &options(cache.path(), None),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let variant = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../testdata/bench/dot.unrolled.cu"
    ));
    let v = s.prepare_unchecked(&variant).unwrap();
    let m = runner::measure::interleaved(&mut s, 0, Some(v), 2, 3).unwrap();
    assert_eq!(m.samples, vec![vec![0.1; 3], vec![0.1; 3]]);
    assert_eq!(m.summaries.len(), 2);
    assert_eq!(m.ratio, Some(1.0));
    assert_eq!(m.differences.as_deref(), Some(&[][..]));
    let r = runner::report::Report::measured("dot.toml".into(), &s, &m, 3, 2, Some(false));
    assert_eq!(
        (r.kernels[0].role, r.kernels[1].role),
        ("baseline", "variant")
    );
    let text = runner::report::human(&r, "");
    assert!(
        text.contains("3 timed launches after 2 warm-up")
            && text.contains("ratio    variant / baseline median = 1.0000")
            && text.contains("outputs  agree within the spec's tolerances"),
        "{text}"
    );
    let alone = runner::measure::interleaved(&mut s, 0, None, 0, 2).unwrap();
    assert_eq!((alone.samples.len(), alone.ratio), (1, None));
    assert!(alone.differences.is_none());
    let e = runner::measure::interleaved(&mut s, 0, None, 0, 0).unwrap_err();
    assert!(matches!(e, runner::RunnerError::Usage(_)), "{e}");
}

/// A kernel `scale(in, out, n)`: `out[i] = 2 * in[i]`, with `length` elements each.
fn scale_tree(dir: &std::path::Path, length: usize) -> Spec {
    std::fs::write(
        dir.join("scale.cu"),
        "#include <hip/hip_runtime.h>\n__global__ void scale(const float* in, float* out, int n) {\n    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {\n        out[i] = 2.0f * in[i];\n    }\n}\n",
    )
    .unwrap();
    let text = format!(
        "version = 1\nsource = \"scale.cu\"\nkernel = \"scale\"\ngrid = 64\nblock = 256\n[[args]]\nname = \"in\"\nbuffer = \"f32\"\nlength = {length}\ninit = \"uniform\"\nlow = -1.0\nhigh = 1.0\nseed = 3\n[[args]]\nname = \"out\"\nbuffer = \"f32\"\nlength = {length}\noutput = {{ rtol = 1e-6, atol = 0.0 }}\n[[args]]\nname = \"n\"\nscalar = \"i32\"\nvalue = {length}\n"
    );
    let path = dir.join("scale.toml");
    std::fs::write(&path, text).unwrap();
    Spec::load(&path).unwrap()
}

/// An instant simulated sm_90 device whose launches run `kernel`, and its ledger.
fn sim_device(kernel: runner::sim::Kernel) -> (Box<dyn Device>, Arc<runner::sim::Ledger>) {
    use runner::sim::{Model, SimDevice};
    let d = SimDevice::new(
        SimDevice::info(Api::Cuda, "sm_90"),
        Model::instant(),
        kernel,
    );
    let ledger = d.ledger();
    (Box::new(d), ledger)
}

/// The outputs `scale` gives from the spec's input in one launch (`2 * in`), hashed as the
/// session hashes outputs.
fn doubled_checksum(s: &Session) -> String {
    let input = runner::session::contents(&s.spec, 0).unwrap();
    let out: Vec<u8> = input
        .chunks_exact(4)
        .flat_map(|x| (2.0 * f32::from_le_bytes(x.try_into().unwrap())).to_le_bytes())
        .collect();
    blake3::hash(&out).to_hex().to_string()
}

/// `scale` on a simulated device: kernel `k` (in load order) computes `2 * in` exactly when `k`
/// is even, and adds 1 to `out[13 k]` when it is odd; kernel `WRITER` also writes its input.
fn scale_device() -> (Box<dyn Device>, Arc<runner::sim::Ledger>) {
    use runner::sim::Memory;
    sim_device(Box::new(|k, _, args, mem: &mut Memory| {
        let (src, dst) = (Memory::pointer(&args[0])?, Memory::pointer(&args[1])?);
        let (a, b) = mem.read_write(src, dst)?;
        for (x, y) in a.chunks_exact(4).zip(b.chunks_exact_mut(4)) {
            let v = 2.0 * f32::from_le_bytes(x.try_into().unwrap());
            y.copy_from_slice(&v.to_le_bytes());
        }
        if k.index % 2 == 1 {
            let at = 13 * k.index * 4;
            let v = f32::from_le_bytes(b[at..at + 4].try_into().unwrap()) + 1.0;
            b[at..at + 4].copy_from_slice(&v.to_le_bytes());
        }
        if k.index == WRITER {
            mem.get_mut(src)?[0] ^= 1;
        }
        Ok(std::time::Duration::from_micros(100))
    }))
}

const WRITER: usize = 11;

/// A device that cannot compare buffers itself (as HIP's here): every check reads back.
struct NoCompare(Box<dyn Device>);

impl Device for NoCompare {
    fn info(&self) -> &DeviceInfo {
        self.0.info()
    }
    fn load(
        &mut self,
        image: &[u8],
        symbol: &str,
        offsets: &[u32],
        size: u32,
    ) -> Result<KernelHandle, DeviceError> {
        self.0.load(image, symbol, offsets, size)
    }
    fn alloc(&mut self, bytes: usize) -> Result<DevicePtr, DeviceError> {
        self.0.alloc(bytes)
    }
    fn upload(&mut self, dst: DevicePtr, src: &[u8]) -> Result<(), DeviceError> {
        self.0.upload(dst, src)
    }
    fn download(&mut self, src: DevicePtr, dst: &mut [u8]) -> Result<(), DeviceError> {
        self.0.download(src, dst)
    }
    fn copy(&mut self, dst: DevicePtr, src: DevicePtr, bytes: usize) -> Result<(), DeviceError> {
        self.0.copy(dst, src, bytes)
    }
    fn launch_timed(
        &mut self,
        kernel: KernelHandle,
        launch: &Launch,
        args: &[Vec<u8>],
        count: u32,
    ) -> Result<f64, DeviceError> {
        self.0.launch_timed(kernel, launch, args, count)
    }
}

/// The session's host memory (its own accounting, not the process's RSS) grows with the number
/// of prepared kernels by the same few bytes whatever the buffers' size: it keeps the
/// baseline's outputs and one staging buffer, and of each variant only digests and first
/// differences. The inputs go to the device once (the outputs' pristine copies are made on the
/// device). On a device that compares buffers itself, a variant whose outputs are the
/// baseline's to the bit costs no read at all (inputs and outputs compared with device copies)
/// and one that differs one read of its outputs; on one that cannot, each variant costs one
/// read of the outputs and one of the inputs. Differences and checksums are what a full
/// comparison gives either way; a kernel that writes its input is caught either way.
#[test]
fn host_memory_does_not_grow_with_the_variants() {
    for on_device in [true, false] {
        host_memory_is_flat(on_device);
    }
}

fn host_memory_is_flat(on_device: bool) {
    let cache = tempfile::tempdir().unwrap();
    let run = |length: usize| {
        let dir = tempfile::tempdir().unwrap();
        let spec = scale_tree(dir.path(), length);
        let bytes = 4 * length;
        let (device, ledger) = scale_device();
        let device = if on_device {
            device
        } else {
            Box::new(NoCompare(device))
        };
        let mut s = Session::with_device(device, spec, None, &options(cache.path(), None))
            .unwrap_or_else(|e| panic!("{e}"));
        // One upload per buffer: the output's pristine copy is made on the device.
        assert_eq!(ledger.bytes_to_device(), 2 * bytes as u64);
        assert_eq!(
            ledger.bytes_to_host(),
            bytes as u64,
            "the baseline's output"
        );
        let opened = s.host_bytes();
        assert!(
            opened >= 2 * bytes,
            "staging and the baseline's output: {opened}"
        );
        assert!(opened < 2 * bytes + 64 * 1024, "{opened}");
        let source = s.spec.source.clone();
        let mut held = vec![opened];
        for k in 1..=10 {
            let before = ledger.bytes_to_host();
            let id = s.prepare_unchecked(&source).unwrap();
            s.check_inputs().unwrap();
            let read = match (on_device, k % 2) {
                // The output differs: read back; the input compared on the device.
                (true, 1) => bytes,
                // Both equal to their device copies.
                (true, _) => 0,
                // One read of the output, one of the input.
                (false, _) => 2 * bytes,
            };
            assert_eq!(ledger.bytes_to_host() - before, read as u64, "{k}");
            let diffs = s.differences(id);
            if k % 2 == 1 {
                assert_eq!(diffs.len(), 1, "{k}: {diffs:?}");
                assert_eq!((diffs[0].first.index, diffs[0].first.count), (13 * k, 1));
                assert_eq!(diffs[0].name, "out");
                assert_ne!(
                    s.kernels[id].outputs[0].checksum,
                    s.kernels[0].outputs[0].checksum
                );
            } else {
                assert!(diffs.is_empty(), "{k}: {diffs:?}");
                assert_eq!(
                    s.kernels[id].outputs[0].checksum,
                    s.kernels[0].outputs[0].checksum
                );
            }
            held.push(s.host_bytes());
        }
        // The baseline's checksum is blake3 of its output.
        assert_eq!(s.kernels[0].outputs[0].checksum, doubled_checksum(&s));
        assert!(
            matches!(
                s.prepare(&source),
                Err(runner::RunnerError::OutputsDiffer(_))
            ),
            "kernel 11 differs"
        );
        let e = s.check_inputs().unwrap_err();
        assert!(matches!(e, runner::RunnerError::WroteInput(_)), "{e}");
        held.iter().map(|h| h - held[0]).collect::<Vec<usize>>()
    };
    let small = run(1 << 16);
    let large = run(1 << 18);
    assert_eq!(
        small, large,
        "growth per variant independent of the buffers' size"
    );
    let per_variant = large[10] / 10;
    assert!(
        per_variant < 64 * 1024,
        "{per_variant} bytes per variant (the code object and a digest)"
    );
}

/// `scale` whose every launch adds `2 * in` to `out` (an in-place update: a batch's later
/// launches see the earlier ones' outputs) and takes `micros` microseconds, +-20% by a
/// deterministic per-launch sequence (the event jitter of a real GPU, without its luck).
fn jittery_device(micros: f64) -> (Box<dyn Device>, Arc<runner::sim::Ledger>) {
    use runner::sim::Memory;
    let mut n: u64 = 0;
    sim_device(Box::new(move |_, _, args, mem: &mut Memory| {
        let (src, dst) = (Memory::pointer(&args[0])?, Memory::pointer(&args[1])?);
        let (a, b) = mem.read_write(src, dst)?;
        for (x, y) in a.chunks_exact(4).zip(b.chunks_exact_mut(4)) {
            let v = f32::from_le_bytes(y.try_into().unwrap())
                + 2.0 * f32::from_le_bytes(x.try_into().unwrap());
            y.copy_from_slice(&v.to_le_bytes());
        }
        // splitmix64 of the launch number -> [-1, 1).
        n += 1;
        let mut z = n.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        let u = (z >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0;
        Ok(std::time::Duration::from_secs_f64(
            micros * (1.0 + 0.2 * u) * 1e-6,
        ))
    }))
}

/// Median absolute deviation over the median.
fn relative_mad(v: &[f64]) -> f64 {
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let m = median(&mut v.to_vec());
    median(&mut v.iter().map(|x| (x - m).abs()).collect()) / m
}

/// A kernel of a few microseconds is timed in batches of back-to-back launches (the power of
/// two that makes a batch take 100 us: 32 for 5 us), chosen from warm launches of the
/// baseline; each sample is the batch's mean per launch, and its spread shrinks as a mean of
/// independent jitter does (here below a third of single launches'). The outputs checked are
/// a single launch's even for a kernel that updates them in place. The spec's
/// `launches-per-sample` overrides the choice (no calibration launch); a kernel of 200 us is
/// timed alone.
#[test]
fn short_kernels_are_timed_in_batches_and_checked_on_one_launch() {
    let cache = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let spec = scale_tree(dir.path(), 1024);
    let (device, ledger) = jittery_device(5.0);
    let mut s = Session::with_device(device, spec.clone(), None, &options(cache.path(), None))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.launches_per_sample(), 32);
    assert_eq!(
        ledger.launches(),
        1 + 3 + 2 * runner::session::BATCH_STATE_PAIRS as u64,
        "the checked launch, three warm ones on reset outputs, then pairs: one on reset \
         outputs, one on its own"
    );
    assert_eq!(s.batch_note(), None);
    assert_eq!(
        s.kernels[0].outputs[0].checksum,
        doubled_checksum(&s),
        "the outputs of one launch on reset outputs"
    );
    let before = ledger.launches();
    let batched: Vec<f64> = (0..41).map(|_| s.sample(0).unwrap()).collect();
    assert_eq!(ledger.launches() - before, 41 * 32);
    // A variant is checked on one launch too (and agrees: the same kernel).
    let source = s.spec.source.clone();
    let before = ledger.launches();
    let v = s.prepare(&source).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(ledger.launches() - before, 1);
    assert!(s.differences(v).is_empty());

    let text = std::fs::read_to_string(&spec.path)
        .unwrap()
        .replace("block = 256\n", "block = 256\nlaunches-per-sample = 1\n");
    std::fs::write(&spec.path, text).unwrap();
    let alone = Spec::load(&spec.path).unwrap();
    assert_eq!(alone.launches_per_sample, Some(1));
    let (device, ledger) = jittery_device(5.0);
    let mut s = Session::with_device(device, alone, None, &options(cache.path(), None)).unwrap();
    assert_eq!(s.launches_per_sample(), 1);
    assert_eq!(ledger.launches(), 1, "no calibration when the spec says");
    let single: Vec<f64> = (0..41).map(|_| s.sample(0).unwrap()).collect();
    for v in [&batched, &single] {
        let mut m = v.clone();
        m.sort_by(f64::total_cmp);
        let median = m[m.len() / 2];
        assert!((median / 0.005 - 1.0).abs() < 0.1, "{median} ms");
    }
    let (b, o) = (relative_mad(&batched), relative_mad(&single));
    assert!(b * 3.0 < o, "batched {b:.4} vs single {o:.4}");

    let (device, ledger) = jittery_device(200.0);
    let s = Session::with_device(
        device,
        scale_tree(dir.path(), 1024),
        None,
        &options(cache.path(), None),
    )
    .unwrap();
    assert_eq!(s.launches_per_sample(), 1);
    assert_eq!(ledger.launches(), 2, "the checked launch and one warm one");
}

#[test]
fn launches_per_sample_is_checked() {
    let dir = tempfile::tempdir().unwrap();
    let spec = scale_tree(dir.path(), 16);
    for (value, ok) in [
        ("0", false),
        ("4097", false),
        ("4096", true),
        ("\"auto\"", false),
    ] {
        let text = std::fs::read_to_string(&spec.path).unwrap();
        let text = text
            .lines()
            .filter(|l| !l.starts_with("launches-per-sample"))
            .collect::<Vec<_>>()
            .join("\n");
        let text = text.replace(
            "block = 256",
            &format!("block = 256\nlaunches-per-sample = {value}"),
        );
        std::fs::write(&spec.path, text).unwrap();
        match Spec::load(&spec.path) {
            Ok(s) => assert!(ok, "{value} accepted: {:?}", s.launches_per_sample),
            Err(e) => {
                assert!(!ok, "{value}: {e}");
                // A range error names the key; a type error the key's line.
                let e = e.to_string();
                assert!(
                    e.contains("launches-per-sample must be 1 to 4096")
                        || e.contains("scale.toml:6:"),
                    "{e}"
                );
            }
        }
    }
    for (ms, n) in [
        (0.0095, 16),
        (0.038, 4),
        (0.0177, 8),
        (0.05, 1),
        (0.002, 64),
        (1e-9, 64),
        (f64::NAN, 1),
    ] {
        assert_eq!(runner::session::auto_batch(ms), n, "{ms} ms");
    }
}

/// `scale` that works only on outputs not yet written (an early-out on `out[0] != 0`, as a
/// kernel does that leaves a flag or counter set): 5 us on reset outputs, 1 us on its own.
fn one_shot_device() -> (Box<dyn Device>, Arc<runner::sim::Ledger>) {
    use runner::sim::Memory;
    sim_device(Box::new(move |_, _, args, mem: &mut Memory| {
        let (src, dst) = (Memory::pointer(&args[0])?, Memory::pointer(&args[1])?);
        let (a, b) = mem.read_write(src, dst)?;
        if b[..4] != [0; 4] {
            return Ok(std::time::Duration::from_micros(1));
        }
        for (x, y) in a.chunks_exact(4).zip(b.chunks_exact_mut(4)) {
            let v = 2.0 * f32::from_le_bytes(x.try_into().unwrap()) + 1.0;
            y.copy_from_slice(&v.to_le_bytes());
        }
        Ok(std::time::Duration::from_micros(5))
    }))
}

/// A short kernel whose launch on its own outputs takes another time than one on reset outputs
/// is not batched (within a batch the outputs are reset only once): every sample is one launch
/// on reset outputs, and the session says why.
#[test]
fn a_kernel_that_depends_on_its_outputs_state_is_timed_launch_by_launch() {
    let cache = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let spec = scale_tree(dir.path(), 64);
    let (device, ledger) = one_shot_device();
    let mut s = Session::with_device(device, spec, None, &options(cache.path(), None))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.launches_per_sample(), 1);
    let note = s.batch_note().expect("a note").to_string();
    assert!(
        note.contains("a launch on its own outputs took 0.20x the time of one on reset outputs"),
        "{note}"
    );
    let before = ledger.launches();
    let t = s.sample(0).unwrap();
    assert_eq!(ledger.launches() - before, 1);
    assert!(
        (t - 0.005).abs() < 1e-9,
        "{t} ms: the work of a launch on reset outputs"
    );
    // `bench`'s report says it, in both forms.
    let m = runner::measure::interleaved(&mut s, 0, None, 0, 2).unwrap();
    let r = runner::report::Report::measured("scale.toml".into(), &s, &m, 2, 0, None);
    let text = runner::report::human(&r, "");
    assert!(
        text.contains("2 timed launches after 0 warm-up") && text.contains(&note),
        "{text}"
    );
    let json = serde_json::to_value(&r).unwrap();
    assert_eq!(json["launches_per_sample"], 1);
    assert_eq!(json["launches_per_sample_note"], note.as_str());
}

/// `scale` of `micros` (an elementwise kernel: its time never depends on its outputs) whose
/// launches numbered in `odd` are timed at the factor given, as single launches of an 11 us
/// kernel were (0.6x, 2.9x) on an H200.
fn outlier_device(
    micros: f64,
    odd: Vec<(u64, f64)>,
) -> (Box<dyn Device>, Arc<runner::sim::Ledger>) {
    use runner::sim::Memory;
    let mut n: u64 = 0;
    sim_device(Box::new(move |_, _, args, mem: &mut Memory| {
        let (src, dst) = (Memory::pointer(&args[0])?, Memory::pointer(&args[1])?);
        let (a, b) = mem.read_write(src, dst)?;
        for (x, y) in a.chunks_exact(4).zip(b.chunks_exact_mut(4)) {
            let v = 2.0 * f32::from_le_bytes(x.try_into().unwrap());
            y.copy_from_slice(&v.to_le_bytes());
        }
        n += 1;
        let factor = odd.iter().find(|(k, _)| *k == n).map_or(1.0, |(_, f)| *f);
        Ok(std::time::Duration::from_secs_f64(micros * 1e-6 * factor))
    }))
}

/// Whether a short kernel is batched is decided on medians and minima, not on one jittery
/// launch: a 0.6x event among the warm launches on reset outputs (the least of three once made
/// a kernel that never reads its outputs look 1.67x slower on them, and timed it launch by
/// launch) or a 2.9x one among the pairs leaves an elementwise kernel batched, wherever the
/// outlier falls; and a 38 us kernel whose first warm launch takes 57 us is still batched (one
/// launch over 50 us called it long).
#[test]
fn one_jittery_launch_does_not_decide_the_batch() {
    let cache = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let spec = scale_tree(dir.path(), 64);
    let pairs = runner::session::BATCH_STATE_PAIRS as u64;
    // Launch 1 is the checked one, 2-4 the warm ones, then the pairs.
    for (fast, slow) in [(3, 0), (0, 6), (4, 5 + 2 * pairs - 1), (5, 6), (7, 9)] {
        let (device, _) = outlier_device(10.0, vec![(fast, 0.6), (slow, 2.9)]);
        let s = Session::with_device(device, spec.clone(), None, &options(cache.path(), None))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            s.batch_note(),
            None,
            "0.6x at launch {fast}, 2.9x at launch {slow}"
        );
        assert!(
            s.launches_per_sample() >= 8,
            "{}: 0.6x at launch {fast}, 2.9x at launch {slow}",
            s.launches_per_sample()
        );
    }
    let (device, ledger) = outlier_device(38.0, vec![(2, 1.5)]);
    let s = Session::with_device(device, spec.clone(), None, &options(cache.path(), None))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.launches_per_sample(), 4, "{:?}", s.batch_note());
    assert_eq!(ledger.launches(), 1 + 3 + 2 * pairs);
}

/// A launch submitted to an idle GPU is timed with the host's submission gap in it; one queued
/// behind a device copy (as every sample's, behind its outputs' reset) is not. The batch
/// calibration's launch on the kernel's own outputs is queued behind copies of the same size
/// too, so an elementwise 10 us kernel with a 3 us gap is batched (its launch on its own
/// outputs was timed at 1.3x and launch by launch, as gelu was on an H200 in some runs).
#[test]
fn the_submission_gap_of_an_idle_gpu_does_not_decide_the_batch() {
    use runner::sim::{Memory, Model, SimDevice};
    let cache = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let spec = scale_tree(dir.path(), 64);
    let d = SimDevice::new(
        SimDevice::info(Api::Cuda, "sm_90"),
        Model {
            idle_gap: std::time::Duration::from_micros(3),
            ..Model::instant()
        },
        Box::new(|_, _, args, mem: &mut Memory| {
            let (src, dst) = (Memory::pointer(&args[0])?, Memory::pointer(&args[1])?);
            let (a, b) = mem.read_write(src, dst)?;
            for (x, y) in a.chunks_exact(4).zip(b.chunks_exact_mut(4)) {
                let v = 2.0 * f32::from_le_bytes(x.try_into().unwrap());
                y.copy_from_slice(&v.to_le_bytes());
            }
            Ok(std::time::Duration::from_micros(10))
        }),
    );
    let s = Session::with_device(Box::new(d), spec, None, &options(cache.path(), None))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.batch_note(), None);
    assert!(s.launches_per_sample() >= 8, "{}", s.launches_per_sample());
}
