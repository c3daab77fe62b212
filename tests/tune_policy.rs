//! `hip-unroll tune`'s gate policy and factors end to end, on real gfx90a code objects (hipcc)
//! and a CPU harness whose figure the test controls (`testdata/tune-occupancy/build.sh` writes
//! the time the run reports from the kernel's text): a variant that only loses occupancy (8 -> 6
//! waves per SIMD, 56 -> 76 VGPRs, no spill) and runs faster is measured and accepted by
//! default, the change in its report entry; with `max-occupancy-loss = 0` in `hip-unroll.toml`
//! it is `gated` without a run. `--factors full,4` unrolls a constant-trip loop fully and is
//! refused, with its reason, on a loop whose trip count is only known at run time. Every JSON
//! report carries `timing`, whose phases add up to its wall time and whose sample count is the
//! ledger's. Needs: hipcc.
#![allow(clippy::print_stdout, clippy::print_stderr, clippy::exit)]

use rusqlite::Connection;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_hip-unroll");

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A scratch copy of testdata/tune-occupancy with `config` as its hip-unroll.toml (the gates'
/// code objects cached for the whole test binary: the cache is content-addressed).
fn example(config: &str) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    for f in ["occ.cu", "build.sh"] {
        std::fs::copy(
            repo().join("testdata/tune-occupancy").join(f),
            d.path().join(f),
        )
        .unwrap();
    }
    let cache = Path::new(env!("CARGO_TARGET_TMPDIR")).join("tune-policy-objects");
    std::fs::write(
        d.path().join("hip-unroll.toml"),
        format!("[compile]\ncache-dir = \"{}\"\n{config}", cache.display()),
    )
    .unwrap();
    d
}

fn tune(dir: &Path, extra: &[&str]) -> Output {
    let state = dir.join(".state");
    let mut args: Vec<String> = [
        "tune",
        "--build",
        "sh build.sh",
        "--run",
        "cat time.txt",
        "--time-regex",
        "time: ([0-9.]+)",
        "--time-unit",
        "ms",
        "--mode",
        "pragma",
        "--jobs",
        "2",
        "--dry-run",
        "--state",
        state.to_str().unwrap(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    if !extra.contains(&"--format") {
        args.extend(["--format".to_string(), "json".to_string()]);
    }
    args.extend(extra.iter().map(|s| s.to_string()));
    Command::new(BIN)
        .args(&args)
        .current_dir(dir)
        .env_remove("HIP_UNROLL_TESTPOINT")
        .output()
        .expect("run hip-unroll")
}

fn report(o: &Output) -> Value {
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap()
}

fn candidate<'a>(r: &'a Value, lp: &str, factor: Value) -> &'a Value {
    r["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["loop"] == lp && c["factor"] == factor)
        .unwrap_or_else(|| panic!("{lp} {factor}: {r:#}"))
}

/// The timing's phases partition its wall time, and it counts the ledger's samples.
fn check_timing(r: &Value, state: &Path) {
    let t = &r["timing"];
    let wall = t["wall"].as_f64().unwrap();
    let sum: f64 = ["measure", "compile", "prepare", "gates", "waiting", "other"]
        .iter()
        .map(|k| {
            let x = t[k].as_f64().unwrap();
            assert!(x >= 0.0, "{k}: {t}");
            x
        })
        .sum();
    assert!((sum - wall).abs() < 1e-6 * wall.max(1.0), "{t}");
    let db = Connection::open(state.join("ledger.db")).unwrap();
    let samples: i64 = db
        .query_row("SELECT count(*) FROM samples", [], |r| r.get(0))
        .unwrap();
    assert_eq!(t["counts"]["samples"].as_i64(), Some(samples), "{t}");
    assert!(t["work"]["samples"].as_f64().unwrap() > 0.0, "{t}");
}

#[test]
fn an_occupancy_loss_alone_is_measured_and_accepted_unless_vetoed() {
    let d = example("");
    let r = report(&tune(d.path(), &["--factors", "2,4"]));
    let c = candidate(&r, "occ:0", Value::from(4));
    assert_eq!(c["status"], "accepted", "{c:#}");
    assert!(c["runs"].as_u64().unwrap() >= 10, "{c:#}");
    assert_eq!(
        c["occupancy"],
        serde_json::json!({"kernel": "occ", "unit": "waves-per-simd", "before": 8, "after": 6,
            "registers": {"before": 56, "after": 76}}),
        "{c:#}"
    );
    // x2 keeps 8 waves (64 VGPRs) and changes nothing measurable.
    let x2 = candidate(&r, "occ:0", Value::from(2));
    assert_eq!(x2["status"], "rejected", "{x2:#}");
    assert_eq!(x2["occupancy"]["after"], 8, "{x2:#}");
    assert_eq!(r["applied"][0]["factor"], 4);
    check_timing(&r, &d.path().join(".state"));

    // The human report shows the change on the variant's row and ends with the timing line.
    let o = tune(d.path(), &["--factors", "2,4", "--format", "human"]);
    let text = String::from_utf8_lossy(&o.stdout);
    let row = text
        .lines()
        .find(|l| l.contains("pragma x4"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        row.contains("accepted") && row.contains("8 -> 6 waves per SIMD (56 -> 76 VGPRs)"),
        "{row}"
    );
    assert!(
        text.lines().last().unwrap().starts_with("timing: ") && text.contains(" s wall = measure "),
        "{text}"
    );

    // With the veto the same variant is gated, and never measured.
    let d = example("[vgpr-pressure]\nmax-occupancy-loss = 0\n");
    let r = report(&tune(d.path(), &["--factors", "4"]));
    let c = candidate(&r, "occ:0", Value::from(4));
    assert_eq!(c["status"], "gated", "{c:#}");
    assert!(c["runs"].is_null(), "{c:#}");
    let why = c["reason"].as_str().unwrap();
    assert!(
        why.starts_with("vgpr-pressure: ")
            && why.contains("occupancy 8 -> 6 waves per SIMD (at most 0 may be lost)"),
        "{why}"
    );
    assert_eq!(c["occupancy"]["after"], 6, "{c:#}");
    assert!(r["applied"].as_array().unwrap().is_empty());
    // (The baseline's A/A repeats were measured before the variant's gates ran.)
    check_timing(&r, &d.path().join(".state"));
}

#[test]
fn factors_full_unrolls_a_constant_trip_loop_and_is_refused_on_a_runtime_one() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(
        d.path().join("k.cu"),
        "#include <hip/hip_runtime.h>\n__global__ void k(float* p, const float* q, int n) {\n    int t = threadIdx.x;\n    float s = 0.0f;\n    for (int i = 0; i < 64; ++i) {\n        s = s * q[i] + p[t * 64 + i] * q[i + 1];\n    }\n    for (int i = 0; i < n; ++i) {\n        p[t * 64 + i] += s;\n    }\n}\n",
    )
    .unwrap();
    // The full unroll of the first loop runs in 5 ms, anything else in 10.
    std::fs::write(
        d.path().join("build.sh"),
        "if grep -q '^ *#pragma unroll$' k.cu; then echo 'time: 5.0' > time.txt; else echo 'time: 10.0' > time.txt; fi\n",
    )
    .unwrap();
    let cache = Path::new(env!("CARGO_TARGET_TMPDIR")).join("tune-policy-objects");
    std::fs::write(
        d.path().join("hip-unroll.toml"),
        format!("[compile]\ncache-dir = \"{}\"\n", cache.display()),
    )
    .unwrap();
    let r = report(&tune(d.path(), &["--factors", "full,4"]));
    let full = candidate(&r, "k:0", Value::Null);
    assert_eq!(full["full"], true, "{full:#}");
    assert_eq!(full["mode"], "pragma");
    assert_eq!(full["status"], "accepted", "{full:#}");
    assert!(full["runs"].as_u64().unwrap() > 0);
    assert_eq!(candidate(&r, "k:0", Value::from(4))["status"], "rejected");
    let refused = candidate(&r, "k:1", Value::Null);
    assert_eq!(refused["status"], "refused", "{refused:#}");
    assert!(
        refused["reason"]
            .as_str()
            .unwrap()
            .starts_with("not-constant-trip: "),
        "{refused:#}"
    );
    assert_eq!(candidate(&r, "k:1", Value::from(4))["status"], "rejected");
    assert_eq!(
        r["applied"],
        serde_json::json!([{"file": "k.cu", "loop": "k:0", "line": 5, "mode": "pragma", "factor": null, "full": true}])
    );
    // Bad factors are one line and exit 2.
    for bad in ["0", "fulll", "4,-1"] {
        let o = tune(d.path(), &["--factors", bad]);
        assert_eq!(o.status.code(), Some(2), "{bad}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("or `full`") || err.contains("full"),
            "{bad}: {err}"
        );
    }
}
