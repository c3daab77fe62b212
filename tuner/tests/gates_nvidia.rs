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

/// `text` written to `dir/name`; its path.
fn write_in(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn gates(nvcc: &Path, cache: &Path) -> Gates {
    Gates {
        compiler: runner::build::nvcc_compiler(nvcc, "sm_90", cache, true, Vec::new()).unwrap(),
        max_occupancy_loss: None,
        instances: Vec::new(),
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
    let write = |name: &str, text: &str| write_in(d.path(), name, text);
    // Under __launch_bounds__(1024, 2) the fully unrolled variant spills more.
    let bounded = "__launch_bounds__(1024, 2)";
    let base = g.baseline(&write("a.cu", &heavy("1", bounded)));
    let c = &base.as_ref().expect("the baseline compiles").0[0];
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
        instances: Vec::new(),
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
        instances: Vec::new(),
    };
    let base = carried.baseline(&a);
    assert!(base.as_ref().is_ok_and(|u| u.0[0].precompiled), "{base:?}");
    let r = carried.check(&base, &b);
    assert_eq!(r.failure().map(|f| f.0), Some(SIGNATURE));
}

/// A template kernel that only the spec instantiates (`tile<8>`), beside a plain kernel.
fn templated(unroll: &str, comment: &str) -> String {
    format!(
        "template <int TM>\n\
__global__ void tile(float* out, const float* in, int n) {{\n\
  float acc[TM] = {{0.0f}};\n\
  {unroll}\n\
  for (int k = 0; k < n; ++k) {{\n\
    {comment}\n\
    for (int m = 0; m < TM; ++m) acc[m] += in[k * TM + m] * in[k];\n\
  }}\n\
  for (int m = 0; m < TM; ++m) out[threadIdx.x * TM + m] = SCALE * acc[m];\n\
}}\n\
__global__ void other(float* out, int n) {{\n\
  for (int i = 0; i < n; ++i) out[i] = i;\n\
}}\n"
    )
}

const TILE_SPEC: &str = "version = 1\nsource = \"k.cu\"\nkernel = \"tile<8>\"\ngrid = [1]\nblock = [32]\ndefines = { SCALE = 2 }\n\n\
[[args]]\nname = \"out\"\nbuffer = \"f32\"\nlength = 256\noutput = \"exact\"\n\n\
[[args]]\nname = \"in\"\nbuffer = \"f32\"\nlength = 1024\ninit = \"uniform\"\nseed = 1\n\n\
[[args]]\nname = \"n\"\nscalar = \"i32\"\nvalue = 64\n";

/// The H200 finding: in a file whose only instantiated kernel is another one, every variant of a
/// spec's template kernel compiled to the file's own code unchanged, so the gates called it
/// `same-code` and the tune never measured it. With the spec's kernel among the gates' instances
/// they compile the runner's instance wrapper: the variant's code differs, a variant that only
/// moves a comment is still the same code, and the runner's build of the variant is served by
/// the gates' compile (one compile for both).
#[test]
fn a_template_kernel_only_the_spec_instantiates_is_judged_by_its_instance() {
    let nvcc = nvcc();
    let d = tempfile::tempdir().unwrap();
    let cache = d.path().join("cache");
    let tree = |name: &str, text: &str| {
        let dir = d.path().join(name);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("k.cu"), text).unwrap();
        std::fs::write(dir.join("k.toml"), TILE_SPEC).unwrap();
        dir
    };
    let base_dir = tree("base", &templated("", ""));
    let var_dir = tree("var", &templated("#pragma unroll 4", ""));
    let moved_dir = tree("moved", &templated("", "// a comment"));
    // The gates compile with the spec's defines, as a bench tune's do.
    let spec_gates = || Gates {
        compiler: runner::build::nvcc_compiler(
            &nvcc,
            "sm_90",
            &cache,
            true,
            vec!["-DSCALE=2".to_string()],
        )
        .unwrap(),
        max_occupancy_loss: None,
        instances: Vec::new(),
    };
    let plain = spec_gates();
    let with = Gates {
        instances: vec![tuner::gates::Instance {
            source: "k.cu".into(),
            kernel: "tile<8>".into(),
        }],
        ..spec_gates()
    };
    // Without the instance: the file's own cubin holds `other` alone, and the variant of
    // tile's loop looks like the baseline (what the tune did before).
    let base = plain.in_dir(&base_dir).baseline(&base_dir.join("k.cu"));
    let r = plain.in_dir(&var_dir).check(&base, &var_dir.join("k.cu"));
    assert!(r.failure().is_none(), "{r:?}");
    assert!(r.same_code, "the file alone has no tile<8>: {r:?}");
    // With it: the instance wrapper's cubin is judged.
    let base = with.in_dir(&base_dir).baseline(&base_dir.join("k.cu"));
    let units = base.as_ref().expect("the baseline compiles");
    assert_eq!(units.0.len(), 1, "one instance compile");
    let code = tuner::gates::machine_code(units, codeobj::compile::Output::Cubin).unwrap();
    assert!(
        code.iter().any(|(n, _)| n.contains("tile"))
            && code.iter().any(|(n, _)| n.contains("other")),
        "{:?}",
        code.iter().map(|(n, _)| n).collect::<Vec<_>>()
    );
    let r = with.in_dir(&var_dir).check(&base, &var_dir.join("k.cu"));
    assert!(r.failure().is_none(), "{r:?}");
    assert!(!r.same_code, "tile<8>'s loop was unrolled: {r:?}");
    // The prediction shown is of the kernel the variant changed, not of `other`.
    let o = r.occupancy.as_ref().expect("a prediction");
    assert_eq!(o.kernel, "tile<8>", "{o:?}");
    // Also when its registers fall (the inner loop kept rolled: `acc` in local memory, gated
    // for its stack), where `other`, unchanged, would rank first by register growth.
    let rolled_dir = tree("rolled", &templated("", "#pragma unroll 1"));
    let r = with
        .in_dir(&rolled_dir)
        .check(&base, &rolled_dir.join("k.cu"));
    let o = r.occupancy.as_ref().expect("a prediction");
    assert_eq!(o.kernel, "tile<8>", "{o:?} {r:?}");
    assert!(o.registers.after < o.registers.before, "{o:?}");
    assert_ne!(
        r.code.as_deref(),
        Some(tuner::gates::code_digest(&code).as_str())
    );
    let moved = with
        .in_dir(&moved_dir)
        .check(&base, &moved_dir.join("k.cu"));
    assert!(moved.failure().is_none() && moved.same_code, "{moved:?}");
    // The runner builds the variant for the GPU from the gates' compiles: nothing compiled.
    let spec = runner::Spec::load(&var_dir.join("k.toml")).unwrap();
    let opts = runner::build::BuildOptions::new(&cache).with_nvcc(Some(nvcc.clone()));
    let built = runner::build::build(
        &spec,
        &var_dir.join("k.cu"),
        &runner::build::Target::Cuda("sm_90".into()),
        &opts,
    )
    .unwrap();
    assert!(built.cached, "the runner compiled the variant again");
    assert!(
        built.signature.symbol.contains("tile"),
        "{:?}",
        built.signature
    );
}

/// Two kernels in one file, `other` (fully unrolled: many registers) and `wide`; `tail` is
/// `wide`'s last statement.
fn two_kernels(tail: &str) -> String {
    let body = |name: &str, unroll: &str, tail: &str| {
        format!(
            "__global__ void {name}(float* out, const float* in, int n) {{\n\
  float s = 0.0f;\n\
  #pragma unroll {unroll}\n\
  for (int j = 0; j < 64; j++) s += in[threadIdx.x + j * n] * in[threadIdx.x + (63 - j) * n];\n\
  {tail}\n\
}}\n"
        )
    };
    format!(
        "{}{}",
        body("other", "", "out[threadIdx.x] = s;"),
        body("wide", "1", tail)
    )
}

#[test]
fn the_prediction_shown_is_the_changed_kernels_and_none_when_no_kernel_changed() {
    let nvcc = nvcc();
    let d = tempfile::tempdir().unwrap();
    let g = gates(&nvcc, &d.path().join("cache"));
    let write = |name: &str, text: &str| write_in(d.path(), name, text);
    let base = g.baseline(&write("a.cu", &two_kernels("out[threadIdx.x] = s;")));
    // The same machine code (a comment): no kernel changed, no prediction (the first kernel's
    // unchanged figures were shown).
    let same = write(
        "b.cu",
        &two_kernels("out[threadIdx.x] = s; // the same code"),
    );
    let r = g.check(&base, &same);
    assert_eq!(r.failure(), None, "{r:?}");
    assert_eq!(r.occupancy, None, "{r:?}");
    // `wide`'s code changed, no kernel's registers did: `wide` is shown, not `other`.
    let changed = write("c.cu", &two_kernels("out[threadIdx.x] = 2.0f * s + 1.0f;"));
    let r = g.check(&base, &changed);
    assert_eq!(r.failure(), None, "{r:?}");
    let o = r.occupancy.as_ref().expect("a prediction");
    assert_eq!(o.kernel, "wide", "{o:?}");
}
