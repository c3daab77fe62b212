//! `hip-unroll tune --backend rocprofv3` without a GPU: a stand-in `rocprofv3` on PATH
//! (testdata/tune-rocprof/bin) runs the application and writes a kernel trace in rocprofv3's
//! real CSV format. Checks the command line tune gives rocprofv3 (built by
//! `profiler::run::build`), that the figure is the GPU time of the kernels of PATHS read back
//! through `profiler::load`, that loops of kernels never dispatched are `not-run`, and the
//! preconditions (rocprofv3 on PATH, a GPU node) before anything is built.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_hip-unroll");

fn data() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata/tune-rocprof")
}

fn tree() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    for f in ["hot.cu", "cold.cu", "run.sh"] {
        std::fs::copy(data().join("tree").join(f), d.path().join(f)).unwrap();
    }
    d
}

fn path_with_fake() -> String {
    format!(
        "{}:{}",
        data().join("bin").display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

fn tune(dir: &Path, state: &Path, log: &Path, kfd: &str, extra: &[&str]) -> std::process::Output {
    Command::new(BIN)
        .args([
            "tune",
            "--backend",
            "rocprofv3",
            "--build",
            "true",
            "--run",
            "sh run.sh",
            "--factors",
            "4",
            "--state",
            state.to_str().unwrap(),
            "--format",
            "json",
            "--dry-run",
        ])
        .args(extra)
        .current_dir(dir)
        .env("PATH", path_with_fake())
        .env("ROCPROF_ARGV_LOG", log)
        .env("HIP_UNROLL_KFD", kfd)
        .output()
        .unwrap()
}

#[test]
fn rocprofv3_backend_reads_gpu_time_and_reports_not_run_kernels() {
    let d = tree();
    let state = tempfile::tempdir().unwrap();
    let log = state.path().join("argv.log");
    let o = tune(d.path(), state.path(), &log, "/dev/null", &[]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    // The figure: GPU time of `hot` in ms (10 ms + up to 65 us of jitter).
    assert_eq!(r["baseline"]["unit"], "ms");
    let b = r["baseline"]["figure"].as_f64().unwrap();
    assert!((10.0..10.07).contains(&b), "{b}");
    let cands = r["candidates"].as_array().unwrap();
    let hot_pragma = cands
        .iter()
        .find(|c| c["loop"] == "hot:0" && c["mode"] == "pragma")
        .unwrap();
    assert_eq!(hot_pragma["status"], "accepted", "{hot_pragma}");
    let s = hot_pragma["speedup"].as_f64().unwrap();
    assert!((1.95..2.05).contains(&s), "{s}");
    // The manual variant has no pragma text: same GPU time, rejected.
    let hot_manual = cands
        .iter()
        .find(|c| c["loop"] == "hot:0" && c["mode"] == "manual")
        .unwrap();
    assert_eq!(hot_manual["status"], "rejected", "{hot_manual}");
    let cold: Vec<&Value> = cands.iter().filter(|c| c["loop"] == "cold:0").collect();
    assert_eq!(cold.len(), 1);
    assert_eq!(cold[0]["status"], "not-run");
    // The command line rocprofv3 got: kernel trace, CSV and rocpd for 1.0, one output
    // directory per working copy, the run command after `--`.
    let argv = std::fs::read_to_string(&log).unwrap();
    let first = argv.lines().next().unwrap();
    let re = regex::Regex::new(
        r"^--kernel-trace --stats -f csv rocpd -d \S+/slots/\d+/rocprofv3/pass_1 -o run -- sh -c sh run.sh$",
    )
    .unwrap();
    assert!(re.is_match(first), "{first}");
    // Only `hot` was ranked and measured: 20 A/A runs, then pairs.
    assert!(argv.lines().count() >= 20 + 2 * 10);
}

#[test]
fn rocprofv3_preconditions_are_checked_before_anything_is_built() {
    let d = tree();
    let state = tempfile::tempdir().unwrap();
    let log = state.path().join("argv.log");
    let o = Command::new(BIN)
        .args([
            "tune",
            "--backend",
            "rocprofv3",
            "--build",
            "touch BUILT",
            "--run",
            "sh run.sh",
            "--state",
        ])
        .arg(state.path().join("s"))
        .current_dir(d.path())
        .env("PATH", path_with_fake())
        .env("ROCPROF_ARGV_LOG", &log)
        .env("HIP_UNROLL_KFD", d.path().join("no-such-kfd"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(e.trim_end().lines().count(), 1, "{e}");
    assert!(e.contains("no AMD GPU") && e.contains("no-such-kfd"), "{e}");
    assert!(!state.path().join("s").exists());
    assert!(!log.exists(), "rocprofv3 was run");
}
