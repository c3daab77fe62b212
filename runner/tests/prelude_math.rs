//! The clang fallback's float math (`runner/prelude/hip_unroll_cuda_math.h`, what `expf`,
//! `logf`, `tanhf`... are on NVIDIA without nvcc) built for the host with g++ and measured
//! against glibc in double precision over millions of inputs (exp2f standing in for PTX's
//! ex2.approx): the largest error of each function, in ulps, stays within what the README
//! states, and the special values are C's. Needs: g++.

use std::path::PathBuf;
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

#[test]
fn prelude_math_is_within_its_stated_ulps_of_glibc() {
    let dir = tempfile::tempdir().unwrap();
    let exe = dir.path().join("prelude_math");
    let header = root().join("runner/prelude/hip_unroll_cuda_math.h");
    let o = Command::new("g++")
        .args(["-O2", "-std=c++17"])
        .arg(format!("-DHU_MATH_HEADER=\"{}\"", header.display()))
        .arg(root().join("testdata/bench/host/prelude_math.cpp"))
        .arg("-o")
        .arg(&exe)
        .output()
        .expect("g++ runs (apt-get install g++)");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = Command::new(&exe).output().unwrap();
    assert!(o.status.success());
    let out = String::from_utf8(o.stdout).unwrap();
    // The bound of each function (and range), in ulps of the float result.
    let bounds: &[(&str, f64)] = &[
        ("expf -104 89", 1.0),
        ("exp10f -46 39", 1.0),
        ("logf 0 4", 1.0),
        ("logf 0 3e+38", 1.0),
        ("log2f 0 4", 1.5),
        ("log2f 0 3e+38", 1.0),
        ("log10f 0 4", 2.0),
        ("log10f 1e-30 3e+38", 1.0),
        ("sinf -100 100", 2.0),
        ("cosf -100 100", 2.0),
        ("sinf -10000 10000", 3.0),
        ("cosf -10000 10000", 3.0),
        ("tanf -10 10", 4.0),
        ("tanhf -12 12", 2.0),
        ("tanhf -1 1", 2.0),
        ("sinhf -89 89", 2.5),
        ("sinhf -1 1", 2.5),
        ("coshf -89 89", 2.0),
        ("powf 0 10", 1.0),
    ];
    let mut checked = 0;
    for line in out.lines() {
        let w: Vec<&str> = line.split_whitespace().collect();
        if w[0] == "special" {
            assert_eq!(
                &w[1..],
                ["inf", "0", "-inf", "nan", "-8", "nan", "1", "0"],
                "{line}"
            );
            continue;
        }
        let ulps: f64 = w[3].parse().unwrap();
        let what = w[..3].join(" ");
        let (_, bound) = bounds
            .iter()
            .find(|(n, _)| *n == what)
            .unwrap_or_else(|| panic!("no bound for `{line}`"));
        assert!(ulps <= *bound, "{line}: over {bound} ulps");
        checked += 1;
    }
    assert_eq!(checked, bounds.len(), "{out}");
}
