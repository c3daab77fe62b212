//! What the simulated-backend benchmarks (`lanes_bench`, `ahead_bench`) share: the backend and
//! the synthetic repository.

use rand::{RngExt, SeedableRng};
use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;
use tuner::backend::{Backend, Failure, Slot};

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
