//! Manual rewrites of loops that use a header's macros and helpers, executed against the
//! original on the host (g++, the differential runner of `hu_diff_main.h`) over many ranges and
//! steps: no output may differ. The loops of issue 17 that must not be rewritten (a header
//! macro hiding `continue` or `break`, one reading the induction variable, a name defined
//! nowhere visible) are refused, each with its reason id.
#![allow(clippy::print_stdout, clippy::print_stderr, clippy::exit)]

mod common;

use common::{run_pairs_in, Pair};
use std::path::Path;
use transforms::{LoopLoc, Mode};

const HEADER: &str = r#"// Header of the translation-unit differential test.
#pragma once
#define TU_SCALE(x) ((x) * 0.5f)
#define TU_ACC(v) acc = acc * 0.75f + (v)
#define TU_SKIP(c) if (c) continue
#define TU_BAIL(c) if (c) break
#define TU_AT(k) in[hu_slot(i + (k))]
#define TU_STRIDE 3
#define TU_WIDE (TU_STRIDE * 2)
__device__ inline float tu_twice(float v) { return v * 2.0f; }
__device__ inline void tu_accumulate(float& acc, float v) { acc = acc * 0.75f + v; }
__device__ inline bool tu_odd(int v) { return (v & 1) != 0; }
"#;

/// A kernel of the runner's signature whose loop (its only one) has `header` and `body`.
fn kernel(name: &str, header: &str, body: &str) -> String {
    format!(
        "#include \"tu_diff.h\"\n__global__ void {name}(unsigned long long p_lo, unsigned long long p_hi, unsigned long long p_step, float* out, const float* in) {{\n    const int lo = (int)p_lo;\n    const int hi = (int)p_hi;\n    float acc = 0.0f;\n    for ({header}) {{\n        hu_trace(i);\n{body}        out[hu_slot(i)] += acc;\n    }}\n    out[63] = acc;\n}}\n"
    )
}

/// Unroll the loop of `text` (written as `dir/NAME.cu`, in its translation unit) by `factor`.
fn unroll(dir: &Path, name: &str, text: &str, factor: u32) -> Result<String, transforms::Error> {
    let path = dir.join(format!("{name}.cu"));
    std::fs::write(&path, text).unwrap();
    let (file, unit) = frontend::tu::Includes::default().open(&path, text.as_bytes());
    assert!(unit.missing.is_empty(), "{name}: {:?}", unit.missing);
    assert_eq!(unit.headers.len(), 1, "{name}: the header is in the unit");
    let loc = LoopLoc {
        function: 0,
        index: 0,
    };
    let v = transforms::unroll_in(text.as_bytes(), &file, &unit, loc, factor, Mode::Manual)?;
    Ok(String::from_utf8(v.source).unwrap())
}

#[test]
fn header_macros_and_helpers_rewrite_to_the_same_outputs() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("tu_diff.h"), HEADER).unwrap();
    let cases: &[(&str, &str, &str)] = &[
        (
            "macro_step",
            "int i = lo; i < hi; i += TU_STRIDE",
            "        TU_ACC(TU_SCALE(in[hu_slot(i)]));\n",
        ),
        (
            "nested_macro_step",
            "int i = lo; i < hi; i += TU_WIDE",
            "        acc += tu_twice(in[hu_slot(i)]);\n",
        ),
        (
            "helper_by_reference",
            "int i = lo; i < hi; ++i",
            "        tu_accumulate(acc, tu_twice(in[hu_slot(i)]));\n",
        ),
        (
            "continue_on_header_helper",
            "int i = lo; i < hi; i++",
            "        if (tu_odd(i)) continue;\n        TU_ACC(in[hu_slot(i)]);\n",
        ),
        (
            "descending_macro_step",
            "int i = hi; i > lo; i -= TU_STRIDE",
            "        TU_ACC(TU_SCALE(in[hu_slot(i)]) + 1.0f);\n",
        ),
    ];
    let mut pairs = Vec::new();
    for &(name, header, body) in cases {
        for factor in [2u32, 3, 4, 8] {
            let case = format!("{name}_x{factor}");
            let orig_name = format!("orig_{case}");
            let orig = kernel(&orig_name, header, body);
            let var = unroll(dir.path(), &case, &orig, factor)
                .unwrap_or_else(|e| panic!("{case}: {e}"))
                .replacen(
                    &format!("void {orig_name}("),
                    &format!("void var_{case}("),
                    1,
                );
            assert_ne!(
                var,
                orig.replacen("orig_", "var_", 1),
                "{case}: not rewritten"
            );
            pairs.push(Pair {
                name: case,
                orig,
                var,
                bits: 32,
                signed: true,
                inst: None,
            });
        }
    }
    let out =
        run_pairs_in(&pairs, false, &[dir.path().to_path_buf()]).unwrap_or_else(|e| panic!("{e}"));
    eprintln!("{out}");
    assert!(out.contains(&format!("cases={} ", pairs.len())), "{out}");
    assert!(out.contains("failures=0"), "{out}");
}

#[test]
fn header_macros_that_jump_or_read_the_induction_variable_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("tu_diff.h"), HEADER).unwrap();
    let cases: &[(&str, &str, &str)] = &[
        (
            "skip_if",
            "        TU_SKIP(in[hu_slot(i)] > 3.0f);\n        acc += 1.0f;\n",
            "macro-in-body",
        ),
        (
            "bail_out",
            "        TU_BAIL(in[hu_slot(i)] > 3.0f);\n        acc += 1.0f;\n",
            "macro-in-body",
        ),
        (
            "at",
            "        acc += TU_AT(0) + TU_AT(1);\n",
            "macro-in-body",
        ),
        (
            "unseen_macro",
            "        acc += NOT_DEFINED_ANYWHERE(in[hu_slot(i)]);\n",
            "unseen-macro",
        ),
    ];
    for &(name, body, want) in cases {
        let text = kernel(&format!("k_{name}"), "int i = lo; i < hi; i++", body);
        match unroll(dir.path(), name, &text, 4) {
            Err(transforms::Error::Refused(r)) => assert_eq!(r.id(), want, "{name}: {r}"),
            Err(e) => panic!("{name}: {e}"),
            Ok(_) => panic!("{name}: rewritten, must be refused with `{want}`"),
        }
    }
}
