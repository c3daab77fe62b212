//! What the simulated-backend benchmarks (`lanes_bench`, `ahead_bench`) share: the backend, its
//! lanes, the synthetic repository and the settings of a dry-run tune.

use rand::{RngExt, SeedableRng};
use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;
use tuner::backend::{Backend, Failure, LaneDevice, Slot};
use tuner::executor::local::LocalLane;
use tuner::lane::Device;
use tuner::search::{ApplyMode, Settings};
use tuner::stats::Plan;

/// The relative standard deviation of a sample (seeded uniform noise).
pub const NOISE: f64 = 0.01;

/// A backend that sleeps (no CPU) a fixed latency per build and per sample; its figure is 1.0
/// with seeded uniform noise of standard deviation [`NOISE`], so every comparison ends at its
/// first look (futile) and the work per comparison is the same. `overlap`: a GPU backend (the
/// lane prepares, and compiles ahead, while it measures), else the CPU's `command`.
pub struct Sim {
    pub overlap: bool,
    pub sample: Duration,
    pub build: Duration,
    pub rng: Mutex<rand::rngs::StdRng>,
}

impl Sim {
    pub fn new(overlap: bool, sample: Duration, build: Duration, seed: u64) -> Sim {
        Sim {
            overlap,
            sample,
            build,
            rng: Mutex::new(rand::rngs::StdRng::seed_from_u64(seed)),
        }
    }
}

impl Backend for Sim {
    type Prepared = ();

    fn name(&self) -> &'static str {
        "sim"
    }

    fn unit(&self) -> String {
        "ms".into()
    }

    fn preflight(&self) -> Result<(), tuner::Error> {
        Ok(())
    }

    fn prepare(
        &self,
        _slot: &Slot<'_>,
        _baseline: Option<&()>,
    ) -> Result<Result<(), Failure>, tuner::Error> {
        std::thread::sleep(self.build);
        Ok(Ok(()))
    }

    fn sample(&self, _slot: &Slot<'_>, _p: &()) -> Result<Result<f64, Failure>, tuner::Error> {
        std::thread::sleep(self.sample);
        // Uniform noise of standard deviation NOISE (half-width sqrt(3) NOISE).
        let w = NOISE * 3f64.sqrt();
        let z: f64 = self.rng.lock().unwrap().random_range(-w..w);
        Ok(Ok(1.0 + z))
    }

    fn overlaps(&self) -> bool {
        self.overlap
    }
}

/// The synthetic repository: `kernels` files, one kernel of `loops` loops each.
pub fn repository(dir: &Path, kernels: usize, loops: usize) {
    for k in 0..kernels {
        let mut s = format!("__global__ void k{k}(float* a, int n) {{\n");
        for l in 0..loops {
            s.push_str(&format!(
                "    for (int i{l} = 0; i{l} < n; ++i{l}) {{\n        a[i{l}] += {l}.0f;\n    }}\n"
            ));
        }
        s.push_str("}\n");
        std::fs::write(dir.join(format!("k{k}.cu")), s).unwrap();
    }
}

/// The lane of simulated device `i` with `backend`.
pub fn lane(backend: &Sim, i: usize) -> LocalLane<'_, Sim> {
    LocalLane {
        backend,
        device: Device {
            model: "simulated".into(),
            id: Some(i.to_string()),
            host: "bench".into(),
        },
        lane: LaneDevice::local(&i.to_string()),
    }
}

/// A dry-run tune of the repository (`.`), its state in `state`, its gates compiling with
/// `compiler`.
pub fn settings(
    state: &Path,
    compiler: codeobj::compile::Compiler,
    search: (Vec<u32>, Vec<pipeline::Mode>, usize),
    skip_same_code: bool,
    fingerprint: &str,
) -> Settings {
    let (factors, modes, jobs) = search;
    Settings {
        paths: vec![".".into()],
        factors,
        modes,
        jobs,
        plan: Plan::default(),
        max_noise: 0.5,
        state_dir: state.to_path_buf(),
        resume: false,
        gates: tuner::gates::Gates {
            compiler,
            max_occupancy_loss: None,
            instances: Vec::new(),
        },
        apply: ApplyMode::DryRun,
        skip_same_code,
        include_dirs: Vec::new(),
        fingerprint: fingerprint.into(),
    }
}
