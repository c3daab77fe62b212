//! Fix fixtures: every `testdata/fix/<rule>/<case>.cu` fixed with unsafe fixes on must equal
//! `<case>.fixed.cu` byte for byte, re-parse with no new error, and be a fixed point (fixing
//! it again changes nothing); with safe fixes only, rules whose fixes are all unsafe change
//! nothing.

use std::path::{Path, PathBuf};

use guards::fix::fix_source;
use guards::{Applicability, Settings};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/fix")
}

fn cases() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for dir in std::fs::read_dir(root()).unwrap() {
        let dir = dir.unwrap().path();
        for f in std::fs::read_dir(&dir).unwrap() {
            let p = f.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            if name.ends_with(".cu") && !name.ends_with(".fixed.cu") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

fn errors(src: &[u8]) -> usize {
    frontend::parse(src).parse_errors.len()
}

#[test]
fn every_fix_fixture() {
    let cases = cases();
    assert!(cases.len() >= 5, "fixtures found: {cases:?}");
    let settings = Settings::default();
    let mut failures = Vec::new();
    for case in &cases {
        let name = case.display().to_string();
        let src = std::fs::read(case).unwrap();
        let want = std::fs::read(case.with_extension("fixed.cu"))
            .unwrap_or_else(|e| panic!("{name}: no .fixed.cu beside it: {e}"));
        let fixed = fix_source(&name, &src, &settings, true);
        if fixed.source != want {
            failures.push(format!(
                "{name}: fixed text differs from .fixed.cu:\n{}",
                String::from_utf8_lossy(&fixed.source)
            ));
            continue;
        }
        if fixed.fixed == 0 {
            failures.push(format!("{name}: nothing fixed"));
        }
        if errors(&fixed.source) > errors(&src) {
            failures.push(format!("{name}: the fix adds parse errors"));
        }
        if !fixed.rejected.is_empty() {
            failures.push(format!("{name}: rejected fixes {:?}", fixed.rejected));
        }
        // What remains has no applicable fix, and fixing again is the identity.
        if fixed.diagnostics.iter().any(|d| d.fix.is_some()) {
            failures.push(format!("{name}: a fixable finding remains"));
        }
        let again = fix_source(&name, &fixed.source, &settings, true);
        if again.source != fixed.source || again.fixed != 0 {
            failures.push(format!("{name}: not idempotent"));
        }
        // Every wave-size fix is unsafe: `--fix` alone leaves the file as it is.
        let safe_only = fix_source(&name, &src, &settings, false);
        if safe_only.source != src || safe_only.fixed != 0 {
            failures.push(format!("{name}: safe-only fixing changed the file"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn wave_size_fixes_are_unsafe_and_only_where_meaningful() {
    let src = std::fs::read(root().join("wave-size/mixed.cu")).unwrap();
    let (_, diags) = guards::check_source("mixed.cu", &src, &Settings::default());
    let mut with: Vec<(u32, &str)> = Vec::new();
    for d in &diags {
        assert_eq!(d.rule, "wave-size");
        if let Some(f) = &d.fix {
            assert_eq!(f.applicability, Applicability::Unsafe, "{d:?}");
            with.push((d.line, f.message.as_str()));
        }
    }
    assert_eq!(
        with,
        vec![
            (7, "Use the 64-bit full mask `0xffffffffffffffffULL`"),
            (7, "Replace the width `32` with `warpSize`"),
            (9, "Replace `32` with `warpSize`"),
            (9, "Replace `32` with `warpSize`"),
        ]
    );
    // `#define WARP_SIZE 32` is reported without a fix.
    let without: Vec<u32> = diags
        .iter()
        .filter(|d| d.fix.is_none())
        .map(|d| d.line)
        .collect();
    assert_eq!(without, vec![3]);
}

/// A fix that would leave another 32-lane assumption of the file behind is not offered: every
/// finding is still reported, each says what holds the fixes back, and `--unsafe-fixes`
/// changes nothing (`threadIdx.x / 32` converted while `(blockDim.x + 31) / 32` is not would
/// count warps of 32 and index warps of 64).
#[test]
fn no_fix_leaves_a_file_half_converted() {
    let path = root().join("../check/wave-size/half_converted.cu");
    let src = std::fs::read(&path).unwrap();
    let (_, diags) = guards::check_source("half_converted.cu", &src, &Settings::default());
    let lines: Vec<u32> = diags.iter().map(|d| d.line).collect();
    assert_eq!(lines, vec![4, 5], "{diags:?}");
    for d in &diags {
        assert!(d.fix.is_none(), "{d:?}");
        assert!(
            d.message.contains(
                "no fix offered: `+ 31` at line 5 (and 1 more) would still assume 32 lanes"
            ),
            "{}",
            d.message
        );
    }
    let fixed = fix_source("half_converted.cu", &src, &Settings::default(), true);
    assert_eq!(fixed.source, src);
    assert_eq!(fixed.fixed, 0);
    // The same file without the blockers converts both lines together.
    let whole = "__global__ void k(float* out) {\n  int warp = threadIdx.x / 32;\n  int nwarps = blockDim.x / 32;\n  out[warp] = nwarps;\n}\n";
    let fixed = fix_source("whole.cu", whole.as_bytes(), &Settings::default(), true);
    assert_eq!(
        String::from_utf8(fixed.source).unwrap(),
        whole.replace("/ 32", "/ warpSize")
    );
    // A finding without a fix holds the others back, and is named by what it is about.
    let shift = "__global__ void k(float* out) {\n  int lane = threadIdx.x % 32;\n  int warp = threadIdx.x >> 5;\n  out[warp] = lane;\n}\n";
    let (_, diags) = guards::check_source("shift.cu", shift.as_bytes(), &Settings::default());
    assert!(diags.iter().all(|d| d.fix.is_none()), "{diags:?}");
    assert!(
        diags[0]
            .message
            .contains("no fix offered: `>> 5` at line 3 would still assume 32 lanes"),
        "{}",
        diags[0].message
    );
    // A line the author marked as meant for 32 lanes holds nothing back.
    let allowed = "__global__ void k(float* out) {\n  int warp = threadIdx.x / 32;\n  int nwarps = (blockDim.x + 31) / 32;  // hip-unroll: allow(wave-size)\n  out[warp] = nwarps;\n}\n";
    let fixed = fix_source("allowed.cu", allowed.as_bytes(), &Settings::default(), true);
    assert_eq!(
        String::from_utf8(fixed.source).unwrap(),
        allowed.replacen("threadIdx.x / 32", "threadIdx.x / warpSize", 1)
    );
}
