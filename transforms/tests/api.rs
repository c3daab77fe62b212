//! The library API as the tuner uses it: `candidates` for several factors, refusals as data,
//! and signature invariance of every manual fixture checked on real gfx90a code objects.

mod common;

use transforms::{LoopLoc, Mode};

const SRC: &str = "__global__ void k(float* a, int n) {\n    for (int i = 0; i < n; ++i) {\n        a[i] += 1.0f;\n    }\n    int j = 0;\n    while (j < n) { a[j] = 0.0f; ++j; }\n}\n";

#[test]
fn candidates_cover_both_modes_and_every_factor() {
    let file = frontend::parse(SRC.as_bytes());
    let vs = transforms::candidates(
        SRC.as_bytes(),
        &file,
        LoopLoc {
            function: 0,
            index: 0,
        },
        &[1, 2, 4, 8],
    );
    let got: Vec<(Mode, u32)> = vs.iter().map(|v| (v.mode, v.factor)).collect();
    assert_eq!(
        got,
        vec![
            (Mode::Pragma, 1),
            (Mode::Pragma, 2),
            (Mode::Manual, 2),
            (Mode::Pragma, 4),
            (Mode::Manual, 4),
            (Mode::Pragma, 8),
            (Mode::Manual, 8)
        ]
    );
    for v in &vs {
        assert_eq!(v.loop_id, "k:0");
        assert_eq!(v.line, 2);
        assert_eq!(transforms::apply(SRC.as_bytes(), &v.edits), v.source);
        let s = String::from_utf8_lossy(&v.source);
        match v.mode {
            Mode::Pragma => assert!(
                s.contains(&format!("    #pragma unroll {}\n    for", v.factor)),
                "{s}"
            ),
            Mode::Manual => assert!(s.contains(&format!("i += {}) {{", v.factor)), "{s}"),
        }
    }
}

#[test]
fn while_loop_gets_pragma_candidates_only() {
    let file = frontend::parse(SRC.as_bytes());
    let loc = LoopLoc {
        function: 0,
        index: 1,
    };
    let vs = transforms::candidates(SRC.as_bytes(), &file, loc, &[2, 4]);
    assert!(vs.iter().all(|v| v.mode == Mode::Pragma) && vs.len() == 2);
    let e = transforms::unroll(SRC.as_bytes(), &file, loc, 2, Mode::Manual).unwrap_err();
    match e {
        transforms::Error::Refused(r) => {
            assert_eq!(r.id(), "not-a-for-loop");
            // Structured: the caller words the alternative; the message names no flag.
            assert_eq!(r.alternative(), Some(transforms::Alternative::PragmaMode));
            assert!(!r.to_string().contains("--"), "{r}");
        }
        other => panic!("{other}"),
    }
    // Factor 0 is `transforms::FULL`: no full unroll of a loop whose count is unknown.
    assert!(matches!(
        transforms::unroll(SRC.as_bytes(), &file, loc, transforms::FULL, Mode::Pragma),
        Err(transforms::Error::Refused(r)) if r.id() == "not-constant-trip"
    ));
}

/// Signature invariance: all manual fixtures (distinct kernel names) compiled together as one
/// original and one rewritten translation unit with hipcc for gfx90a; every kernel's argument
/// layout must be identical.
#[test]
fn manual_fixtures_keep_kernel_signatures() {
    let dir = tempfile::tempdir().unwrap();
    let (mut orig, mut fixed) = (String::new(), String::new());
    let mut names = Vec::new();
    for e in std::fs::read_dir(common::testdata()).unwrap() {
        let p = e.unwrap().path();
        let n = p.file_name().unwrap().to_string_lossy().into_owned();
        if n.starts_with("manual_") && n.ends_with(".fixed.cu") {
            let o = p.with_file_name(n.replace(".fixed.cu", ".cu"));
            // Each fixture in its own namespace-free block; macros are undefined after it.
            orig += &std::fs::read_to_string(&o).unwrap().replace("\r\n", "\n");
            orig += "\n#undef TILE\n";
            fixed += &std::fs::read_to_string(&p).unwrap().replace("\r\n", "\n");
            fixed += "\n#undef TILE\n";
            names.push(n);
        }
    }
    assert!(names.len() >= 15, "{names:?}");
    let a = dir.path().join("orig.cu");
    let b = dir.path().join("fixed.cu");
    std::fs::write(&a, format!("#include <hip/hip_runtime.h>\n{orig}")).unwrap();
    std::fs::write(&b, format!("#include <hip/hip_runtime.h>\n{fixed}")).unwrap();
    let compiler = codeobj::compile::Compiler::new(
        codeobj::compile::DEFAULT_COMMAND,
        "gfx90a",
        dir.path().join("cache"),
    )
    // The translation-unit fixtures include headers beside them.
    .with_args([format!("-I{}", common::testdata().display())]);
    let r = compiler.compile_all(&[a.as_path(), b.as_path()]);
    let (ca, cb) = match (&r[0], &r[1]) {
        (Ok(x), Ok(y)) => (x, y),
        (x, y) => panic!(
            "compile failed: {:?} / {:?}",
            x.as_ref().err(),
            y.as_ref().err()
        ),
    };
    assert_eq!(ca.code_objects.len(), cb.code_objects.len());
    let kernels: usize = ca.code_objects.iter().map(|c| c.kernels.len()).sum();
    assert!(kernels >= 15, "only {kernels} kernels compiled");
    for (x, y) in ca.code_objects.iter().zip(&cb.code_objects) {
        let d = codeobj::signature::compare(x, y);
        assert!(d.is_empty(), "{d:?}");
    }
}

/// The two ways a factor is too large say what is too large: the step that overflows the
/// induction variable's type (with the real step), or the body-copy limit (no step at all).
#[test]
fn factor_too_large_names_the_real_step_or_the_copy_limit() {
    let src = "__global__ void k(float* a, signed char n) {\n    for (signed char c = 0; c < n; c += 100) {\n        a[c] = 1.0f;\n    }\n}\n";
    let file = frontend::parse(src.as_bytes());
    let loc = LoopLoc {
        function: 0,
        index: 0,
    };
    let msg = |factor| match transforms::unroll(src.as_bytes(), &file, loc, factor, Mode::Manual) {
        Err(transforms::Error::Refused(r)) => {
            assert_eq!(r.id(), "factor-too-large");
            r.to_string()
        }
        other => panic!("{other:?}"),
    };
    let m = msg(8);
    assert!(
        m.contains("`signed char`") && m.contains("steps of 100"),
        "{m}"
    );
    let m = msg(transforms::MAX_MANUAL_FACTOR + 1);
    assert!(
        m.contains("largest manual unroll factor, 1024") && !m.contains("step"),
        "{m}"
    );
}

/// A `volatile` counter is read and written a different number of times by a manual unroll
/// (each access is observable behaviour), so it is refused; the pragma is the compiler's call.
/// (Before the frontend kept `volatile` in the header's type, this loop was rewritten.)
#[test]
fn volatile_counter_is_not_unrolled_by_hand() {
    let src =
        "__global__ void k(float* x) {\n    for (volatile int i = 0; i < 4; ++i) x[i] = 0.f;\n}\n";
    let file = frontend::parse(src.as_bytes());
    let loc = LoopLoc {
        function: 0,
        index: 0,
    };
    let e = transforms::unroll(src.as_bytes(), &file, loc, 2, Mode::Manual).unwrap_err();
    match e {
        transforms::Error::Refused(r) => assert_eq!(r.id(), "unknown-induction-type"),
        other => panic!("expected a refusal, got {other:?}"),
    }
    assert!(transforms::unroll(src.as_bytes(), &file, loc, 2, Mode::Pragma).is_ok());
}

/// Plain `char` has implementation-defined sign, so the unroller cannot know its limits: a
/// `char` counter is refused by hand (the one table, `frontend::ints`, says "sign unknown")
/// while `signed char` and `unsigned char` are rewritten.
#[test]
fn plain_char_counter_is_not_unrolled_by_hand() {
    let loc = LoopLoc {
        function: 0,
        index: 0,
    };
    for (ty, ok) in [
        ("char", false),
        ("signed char", true),
        ("unsigned char", true),
    ] {
        let src = format!(
            "__global__ void k(float* x, int n) {{\n    for ({ty} c = 0; c < 100; ++c) x[c] = 0.f;\n}}\n"
        );
        let file = frontend::parse(src.as_bytes());
        match transforms::unroll(src.as_bytes(), &file, loc, 2, Mode::Manual) {
            Ok(_) => assert!(ok, "{ty} rewritten"),
            Err(transforms::Error::Refused(r)) => {
                assert!(!ok, "{ty}: {r}");
                assert_eq!(r.id(), "unknown-induction-type", "{ty}");
            }
            Err(e) => panic!("{ty}: {e:?}"),
        }
    }
}

/// `FULL`: `#pragma unroll` with no count on a loop of constant trip count (also replacing a
/// counted pragma), refused `not-constant-trip` where the count is only known at run time and
/// `full-manual` in manual mode.
#[test]
fn a_full_unroll_is_a_pragma_on_a_constant_trip_loop_only() {
    let src = "__global__ void k(float* a, int n) {\n    for (int i = 0; i < 8; ++i) {\n        a[i] += 1.0f;\n    }\n#pragma unroll 4\n    for (int i = 0; i < 2 * 8; i += 2) {\n        a[i] *= 2.0f;\n    }\n    for (int i = 0; i < n; ++i) {\n        a[i] = 0.0f;\n    }\n    int j = 0;\n    while (j < 4) { a[j] = 1.0f; ++j; }\n}\n";
    let file = frontend::parse(src.as_bytes());
    let at = |index| LoopLoc { function: 0, index };
    let v =
        transforms::unroll(src.as_bytes(), &file, at(0), transforms::FULL, Mode::Pragma).unwrap();
    let s = String::from_utf8(v.source).unwrap();
    assert!(
        s.contains("    #pragma unroll\n    for (int i = 0; i < 8;"),
        "{s}"
    );
    assert_eq!(v.factor, transforms::FULL);
    let v =
        transforms::unroll(src.as_bytes(), &file, at(1), transforms::FULL, Mode::Pragma).unwrap();
    let s = String::from_utf8(v.source).unwrap();
    assert!(
        s.contains("#pragma unroll\n    for (int i = 0; i < 2 * 8;") && !s.contains("unroll 4"),
        "{s}"
    );
    for (index, kind) in [(2, "`for`"), (3, "`while`")] {
        let e = transforms::unroll(
            src.as_bytes(),
            &file,
            at(index),
            transforms::FULL,
            Mode::Pragma,
        )
        .unwrap_err();
        match e {
            transforms::Error::Refused(r) => {
                assert_eq!(r.id(), "not-constant-trip");
                assert!(r.to_string().contains(kind), "{r}");
            }
            other => panic!("{other:?}"),
        }
    }
    let e = transforms::unroll(src.as_bytes(), &file, at(0), transforms::FULL, Mode::Manual)
        .unwrap_err();
    assert!(
        matches!(&e, transforms::Error::Refused(r) if r.id() == "full-manual"),
        "{e:?}"
    );
}
