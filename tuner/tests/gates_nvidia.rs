//! The gates of an NVIDIA tune on real nvcc cubins (sm_90): a variant that spills is gated by
//! its ptxas spill bytes (whatever `max-occupancy-loss` says), one that needs many more
//! registers passes with its register-limited warps per SM recorded as a prediction (gated
//! only under a `max-occupancy-loss` veto), one whose parameters change by the signature gate,
//! a cheap unroll passes; AMD's
//! code-object gates are not involved; and with no nvcc and nothing carried the gates are
//! skipped with one line, never passed or failed. Needs: nvcc (CUDA_HOME or PATH: fails
//! without it).

use codeobj::compile::Compiler;
use std::path::{Path, PathBuf};
use tuner::gates::{Gates, Outcome, COMPILE, PRESSURE, SIGNATURE};
use tuner::report::OccupancyUnit;

fn nvcc() -> PathBuf {
    match runner::build::find_nvcc(None, None) {
        Ok(Some(p)) => p,
        other => panic!(
            "this test needs nvcc ({other:?}): {}; export CUDA_HOME (.ci/run does)",
            runner::build::NVCC_INSTALL
        ),
    }
}

fn gates(nvcc: &Path, cache: &Path) -> Gates {
    Gates {
        compiler: runner::build::nvcc_compiler(nvcc, "sm_90", cache, true, Vec::new()).unwrap(),
        max_occupancy_loss: None,
    }
}

/// A kernel whose products over a local array, under `__launch_bounds__(1024, 2)` (32
/// registers), spill 200 bytes with the outer loop kept (`unroll 1`) and 808 fully unrolled.
fn heavy(unroll: &str, bounds: &str) -> String {
    format!(
        "#include <cuda_runtime.h>\n\
__global__ void {bounds} heavy(float* out, const float* in, int n) {{\n\
  float acc[32];\n\
  #pragma unroll\n\
  for (int j = 0; j < 32; j++) acc[j] = in[threadIdx.x + j * n];\n\
  float s = 0.0f;\n\
  #pragma unroll {unroll}\n\
  for (int r = 0; r < 16; r++) {{\n\
    #pragma unroll\n\
    for (int j = 0; j < 32; j++) s += acc[j] * acc[(j * 7 + r) % 32];\n\
  }}\n\
  out[threadIdx.x] = s;\n\
}}\n"
    )
}

#[test]
fn spills_are_gated_register_growth_is_measured_and_a_cheap_unroll_passes() {
    let nvcc = nvcc();
    let d = tempfile::tempdir().unwrap();
    let g = gates(&nvcc, &d.path().join("cache"));
    let write = |name: &str, text: &str| {
        let p = d.path().join(name);
        std::fs::write(&p, text).unwrap();
        p
    };
    // Under __launch_bounds__(1024, 2) the fully unrolled variant spills more.
    let bounded = "__launch_bounds__(1024, 2)";
    let base = g.baseline(&write("a.cu", &heavy("1", bounded)));
    let c = base.as_ref().expect("the baseline compiles");
    assert!(
        c.log.as_deref().unwrap_or("").contains("spill stores"),
        "{:?}",
        c.log
    );
    let r = g.check(&base, &write("b.cu", &heavy("", bounded)));
    let (gate, detail) = r
        .failure()
        .unwrap_or_else(|| panic!("not gated: {r:?} {:?}", c.log));
    assert_eq!(gate, PRESSURE);
    assert!(
        detail.contains("spills") && detail.contains("heavy on sm_90"),
        "{detail}"
    );
    // A full unroll that keeps 128 loads in flight: no spill, but 18 -> 72 registers cost
    // warps per SM (64 -> 28).
    let wide = |unroll: &str| {
        format!(
            "__global__ void wide(float* out, const float* in, int n) {{\n\
  float s = 0.0f;\n\
  #pragma unroll {unroll}\n\
  for (int j = 0; j < 64; j++) s += in[threadIdx.x + j * n] * in[threadIdx.x + (63 - j) * n];\n\
  out[threadIdx.x] = s;\n\
}}\n"
        )
    };
    // By default that loss is a prediction: recorded, the variant passes (it is measured).
    let base = g.baseline(&write("c.cu", &wide("1")));
    let d = write("d.cu", &wide(""));
    let r = g.check(&base, &d);
    assert_eq!(r.failure(), None, "{r:?}");
    let o = r.occupancy.as_ref().expect("a prediction");
    assert_eq!(
        (o.kernel.as_str(), o.unit, o.before, o.after),
        ("wide", OccupancyUnit::WarpsPerSm, 64, 28),
        "{o:?}"
    );
    assert_eq!((o.registers.before, o.registers.after), (18, 72));
    // With `max-occupancy-loss` set (here 0) it is a veto.
    let veto = Gates {
        max_occupancy_loss: Some(0),
        ..g.clone()
    };
    let r = veto.check(&base, &d);
    let (gate, detail) = r.failure().expect("gated");
    assert_eq!(gate, PRESSURE);
    assert!(
        detail.contains("occupancy 64 -> 28 warps per SM (18 -> 72 registers")
            && !detail.contains("spills"),
        "{detail}"
    );
    // A cheap unroll of the dot kernel passes every gate.
    let data = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../testdata/bench"));
    let base = g.baseline(&data.join("dot.cu"));
    let r = g.check(&base, &data.join("dot.unrolled.cu"));
    assert_eq!(
        r.gates,
        vec![
            (COMPILE, Outcome::Pass),
            (SIGNATURE, Outcome::Pass),
            (PRESSURE, Outcome::Pass)
        ]
    );
}

#[test]
fn a_changed_signature_is_gated_and_without_nvcc_the_gates_are_skipped() {
    let nvcc = nvcc();
    let d = tempfile::tempdir().unwrap();
    let g = gates(&nvcc, &d.path().join("cache"));
    let a = d.path().join("a.cu");
    let b = d.path().join("b.cu");
    std::fs::write(
        &a,
        "__global__ void k(float* p, int n) { for (int i = 0; i < n; ++i) p[i] = 0; }\n",
    )
    .unwrap();
    std::fs::write(
        &b,
        "__global__ void k(float* p, long n) { for (long i = 0; i < n; ++i) p[i] = 0; }\n",
    )
    .unwrap();
    let base = g.baseline(&a);
    let r = g.check(&base, &b);
    let (gate, detail) = r.failure().unwrap();
    assert_eq!(gate, SIGNATURE);
    assert!(detail.contains("missing from the variant"), "{detail}");
    // No nvcc here and nothing carried: skipped with one line (no AMD gate either).
    let gone = Gates {
        compiler: runner::build::nvcc_compiler(
            &d.path().join("no-toolkit/nvcc"),
            "sm_90",
            &d.path().join("empty-cache"),
            true,
            Vec::new(),
        )
        .unwrap(),
        max_occupancy_loss: None,
    };
    let base = gone.baseline(&a);
    let r = gone.check(&base, &b);
    assert!(r.failure().is_none());
    assert_eq!(r.gates.len(), 3);
    let why = r.skipped().unwrap();
    assert!(why.contains("nvcc") && !why.contains('\n'), "{why}");
    // The cubins the first gates compiled are served from the cache that carries them.
    let carried = Gates {
        compiler: Compiler {
            cache_dir: d.path().join("cache"),
            ..gone.compiler.clone()
        },
        max_occupancy_loss: None,
    };
    let base = carried.baseline(&a);
    assert!(base.as_ref().is_ok_and(|c| c.precompiled), "{base:?}");
    let r = carried.check(&base, &b);
    assert_eq!(r.failure().map(|f| f.0), Some(SIGNATURE));
}
