//! The code-object gates on real hipcc compiles for gfx90a: a variant that spills is gated by
//! vgpr-pressure (with or without an occupancy veto), a variant that only loses occupancy
//! passes with the loss recorded (gated only under `max-occupancy-loss`), a changed kernel
//! signature is gated, a cheap unroll passes, and a baseline that needs flags the compile
//! command lacks makes every gate `skipped` with the compiler's first error line (until the flag
//! is given). Needs: hipcc.

use codeobj::compile::{Compiler, DEFAULT_COMMAND};
use std::path::PathBuf;
use tuner::gates::{Gates, Outcome, COMPILE, PRESSURE, SIGNATURE};

fn data(n: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../testdata/codeobj")).join(n)
}

fn gates(cache: &std::path::Path, extra: &str) -> Gates {
    Gates {
        compiler: Compiler::new(format!("{DEFAULT_COMMAND}{extra}"), "gfx90a", cache),
        max_occupancy_loss: None,
        instances: Vec::new(),
    }
}

#[test]
fn spills_are_gated_and_cheap_unrolls_pass() {
    let cache = tempfile::tempdir().unwrap();
    let g = gates(cache.path(), "");
    let base = g.baseline(&data("tile_gemm.cu"));
    let r = g.check(&base, &data("tile_gemm.unrolled.cu"));
    let (gate, detail) = r.failure().expect("gated");
    assert_eq!(gate, PRESSURE);
    assert!(detail.contains("spills"), "{detail}");
    // A veto on occupancy changes nothing for spills.
    let veto = Gates {
        max_occupancy_loss: Some(64),
        ..g.clone()
    };
    let (gate, detail) = veto
        .check(&base, &data("tile_gemm.unrolled.cu"))
        .failure()
        .map(|(g, d)| (g, d.to_string()))
        .expect("gated");
    assert_eq!(gate, PRESSURE);
    assert!(detail.contains("spills"), "{detail}");
    let base = g.baseline(&data("rowsum.cu"));
    let r = g.check(&base, &data("rowsum.unrolled.cu"));
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
fn a_changed_signature_is_gated_and_a_variant_that_does_not_compile_fails() {
    let d = tempfile::tempdir().unwrap();
    let g = gates(&d.path().join("cache"), "");
    let a = d.path().join("a.cu");
    let b = d.path().join("b.cu");
    let c = d.path().join("c.cu");
    let head = "#include <hip/hip_runtime.h>\n";
    std::fs::write(&a, format!("{head}extern \"C\" __global__ void k(float* p, int n) {{ for (int i = 0; i < n; ++i) p[i] = 0; }}\n")).unwrap();
    std::fs::write(&b, format!("{head}extern \"C\" __global__ void k(float* p, long n) {{ for (long i = 0; i < n; ++i) p[i] = 0; }}\n")).unwrap();
    std::fs::write(&c, format!("{head}extern \"C\" __global__ void k(float* p, int n) {{ for (int i = 0; i < n; ++i) p[i] = 0 }}\n")).unwrap();
    let base = g.baseline(&a);
    let r = g.check(&base, &b);
    let (gate, detail) = r.failure().unwrap();
    assert_eq!(gate, SIGNATURE);
    assert!(detail.contains("argument 1"), "{detail}");
    let r = g.check(&base, &c);
    let (gate, detail) = r.failure().unwrap();
    assert_eq!(gate, COMPILE);
    assert!(detail.contains("error"), "{detail}");
}

#[test]
fn a_baseline_that_needs_unknown_flags_skips_the_gates_with_the_first_error_line() {
    let d = tempfile::tempdir().unwrap();
    let src = d.path().join("k.cu");
    std::fs::write(
        &src,
        "#include <hip/hip_runtime.h>\n#ifndef TILE\n#error this repository builds with -DTILE=N\n#endif\n__global__ void k(float* p) { for (int i = 0; i < TILE; ++i) p[i] = 0; }\n",
    )
    .unwrap();
    let g = gates(&d.path().join("cache"), "");
    let base = g.baseline(&src);
    let why = base.as_ref().expect_err("baseline fails");
    assert!(
        why.contains("this repository builds with -DTILE=N"),
        "{why}"
    );
    let r = g.check(&base, &src);
    assert_eq!(r.gates.len(), 3);
    assert!(r.failure().is_none());
    assert!(r.skipped().unwrap().contains("-DTILE=N"));
    // With the flag (--compile-flag -DTILE=4) every gate runs and passes.
    let g = gates(&d.path().join("cache"), " -DTILE=4");
    let base = g.baseline(&src);
    assert!(base.is_ok());
    assert!(g
        .check(&base, &src)
        .gates
        .iter()
        .all(|(_, o)| *o == Outcome::Pass));
}

/// A constant-trip loop that clang unrolls anyway: `#pragma unroll 4` gives byte-identical
/// gfx90a machine code (`same_code`); the same pragma on a loop of runtime trip count changes
/// the code (not `same_code`), and so does a changed constant.
#[test]
fn a_pragma_that_changes_no_instruction_is_the_same_code() {
    let d = tempfile::tempdir().unwrap();
    let g = gates(&d.path().join("cache"), "");
    let head = "#include <hip/hip_runtime.h>\n";
    let kernel = |pragma: &str, bound: &str, scale: &str| {
        format!("{head}extern \"C\" __global__ void k(float* p, int n) {{\n    int t = threadIdx.x;\n    {pragma}\n    for (int i = 0; i < {bound}; ++i) {{\n        p[t * 4 + i] *= {scale};\n    }}\n}}\n")
    };
    let write = |name: &str, text: String| {
        let p = d.path().join(name);
        std::fs::write(&p, text).unwrap();
        p
    };
    let base = write("base.cu", kernel("", "4", "2.0f"));
    let same = write("same.cu", kernel("#pragma unroll 4", "4", "2.0f"));
    let other = write("other.cu", kernel("", "4", "3.0f"));
    let b = g.baseline(&base);
    let compiled = b.as_ref().expect("the baseline compiles");
    let text = tuner::gates::machine_code(compiled, codeobj::compile::Output::CodeObject)
        .expect("a code object has machine code");
    assert!(
        text.iter()
            .any(|(n, bytes)| n.contains("gfx90a") && !bytes.is_empty()),
        "{text:?}"
    );
    let r = g.check(&b, &same);
    assert_eq!(r.failure(), None);
    assert!(r.same_code, "{:?}", r.gates);
    assert!(
        !g.check(&b, &other).same_code,
        "another constant is other code"
    );
    // A runtime trip count: the unrolled loop is other code.
    let rbase = write("rbase.cu", kernel("", "n", "2.0f"));
    let runrolled = write("runrolled.cu", kernel("#pragma unroll 4", "n", "2.0f"));
    let rb = g.baseline(&rbase);
    let r = g.check(&rb, &runrolled);
    assert_eq!(r.failure(), None);
    assert!(!r.same_code, "an unrolled runtime loop is other code");
}

/// `testdata/tune-occupancy/occ.cu` with `#pragma unroll 4`, as the tuner writes it: 56 -> 76
/// VGPRs, 8 -> 6 waves per SIMD, no spill. Unset, the loss is recorded and the gates pass (the
/// variant is measured); `max-occupancy-loss = 0` gates it, `2` lets it through.
#[test]
fn an_occupancy_loss_alone_is_a_prediction_unless_vetoed() {
    let d = tempfile::tempdir().unwrap();
    let g = gates(&d.path().join("cache"), "");
    let src = std::fs::read(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../testdata/tune-occupancy/occ.cu"),
    )
    .unwrap();
    let base = d.path().join("occ.cu");
    std::fs::write(&base, &src).unwrap();
    let info = tuner::discover::analyse(std::path::Path::new("occ.cu"), src).unwrap();
    let rw = tuner::discover::rewrite(&info.loops[0], &info.source, &[], 4, pipeline::Mode::Pragma)
        .unwrap();
    let variant = d.path().join("v").join("occ.cu");
    std::fs::create_dir_all(variant.parent().unwrap()).unwrap();
    std::fs::write(&variant, &rw.source).unwrap();
    let b = g.baseline(&base);
    let r = g.check(&b, &variant);
    assert_eq!(r.failure(), None, "{r:?}");
    assert!(!r.same_code && r.code.is_some(), "{r:?}");
    let o = r.occupancy.clone().expect("a prediction");
    assert_eq!(
        (o.kernel.as_str(), o.unit, o.before, o.after),
        ("occ", tuner::report::OccupancyUnit::WavesPerSimd, 8, 6),
        "{o:?}"
    );
    assert_eq!((o.registers.before, o.registers.after), (56, 76), "{o:?}");
    let vetoed = |allowed| {
        Gates {
            max_occupancy_loss: Some(allowed),
            ..g.clone()
        }
        .check(&b, &variant)
    };
    let r = vetoed(0);
    let (gate, detail) = r.failure().expect("gated");
    assert_eq!(gate, PRESSURE);
    assert!(
        detail.contains("occupancy 8 -> 6 waves per SIMD (at most 0 may be lost)"),
        "{detail}"
    );
    assert_eq!(
        r.occupancy,
        Some(o),
        "the prediction is kept on a gated variant too"
    );
    assert_eq!(vetoed(2).failure(), None);
}
