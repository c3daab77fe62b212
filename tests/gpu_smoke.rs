//! `bench/gpu_smoke.sh`, the first command to run on a machine with a GPU, on this machine
//! (no GPU needed): without a GPU it stops at once with one line and exit status 2; on an
//! NVIDIA machine without nvcc likewise; and its whole flow (baseline, A/A, the variants of
//! every candidate loop, one tune over every spec, JSON, summary) runs against device nodes
//! pointed elsewhere, each run failing for want of a driver (or timing, where this machine has
//! a GPU).
//! Needs: bash, python3, nvcc (fails without it).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_hip-unroll");

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn smoke(dev: &Path, out: &Path, env: &[(&str, &str)], remove: &[&str]) -> Output {
    let mut c = Command::new("bash");
    c.arg(root().join("bench/gpu_smoke.sh"))
        .arg(out)
        .arg("3")
        .env("GPU_SMOKE_DEV", dev)
        .env("HIP_UNROLL", BIN);
    for (k, v) in env {
        c.env(k, v);
    }
    for k in remove {
        c.env_remove(k);
    }
    c.output().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn without_a_gpu_or_without_nvcc_it_stops_at_once_with_one_line() {
    let dev = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let o = smoke(dev.path(), &out.path().join("o"), &[], &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(
        stderr(&o).trim(),
        "gpu_smoke: no GPU on this machine (no /dev/nvidia0, no /dev/kfd): run it on one that has a GPU"
    );
    assert!(!out.path().join("o").exists(), "nothing written");
    std::fs::write(dev.path().join("nvidia0"), "").unwrap();
    let o = smoke(
        dev.path(),
        &out.path().join("o"),
        &[("PATH", "/usr/bin:/bin")],
        &["NVCC", "CUDA_HOME"],
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("gpu_smoke: no nvcc on this NVIDIA machine")
            && err.contains("pip install nvidia-cuda-nvcc==13.0.88"),
        "{err}"
    );
}

#[test]
fn its_whole_flow_runs_and_writes_json_and_a_summary() {
    let nvcc = match runner::build::find_nvcc(None, None) {
        Ok(Some(p)) => p,
        other => panic!(
            "this test needs nvcc ({other:?}): {}",
            runner::build::NVCC_INSTALL
        ),
    };
    let dev = tempfile::tempdir().unwrap();
    std::fs::write(dev.path().join("nvidia0"), "").unwrap();
    let out = tempfile::tempdir().unwrap();
    let o = smoke(
        dev.path(),
        &out.path().join("o"),
        &[
            ("NVCC", nvcc.to_str().unwrap()),
            ("SPECS", "testdata/bench/dot.toml"),
        ],
        &[],
    );
    let stdout = String::from_utf8_lossy(&o.stdout);
    let o_dir = out.path().join("o");
    let summary = std::fs::read_to_string(o_dir.join("summary.md")).unwrap_or_default();
    for run in ["dot.baseline", "dot.aa", "dot.v1"] {
        assert!(summary.contains(&format!("| {run} |")), "{run}: {summary}");
        assert!(o_dir.join(format!("{run}.json")).is_file(), "{run}");
    }
    let variants = std::fs::read_to_string(o_dir.join("variants.txt")).unwrap();
    assert_eq!(
        variants.trim(),
        "dot.v1: dot:0 pragma x4",
        "one candidate loop in dot.cu"
    );
    let log = std::fs::read_to_string(o_dir.join("log.txt")).unwrap();
    assert!(
        log.contains("## bench.tune: tune . --backend bench --spec dot.toml\n"),
        "{log}"
    );
    let gpu = Path::new("/dev/nvidia0").exists() && Path::new("/dev/nvidiactl").exists();
    if gpu {
        // A real GPU and driver here: the runs time for real.
        assert_eq!(o.status.code(), Some(0), "{stdout}\n{log}");
    } else {
        assert_eq!(o.status.code(), Some(1), "{stdout}\n{}", stderr(&o));
        assert!(stdout.contains("4 runs, 4 failed"), "{stdout}");
        assert!(
            log.contains("no NVIDIA driver: cannot load libcuda"),
            "{log}"
        );
    }
}

/// Several specs: each has its own runs, and the closed loop is one tune over all of them (one
/// line in the log naming every spec); a spec outside testdata/bench is left out of it.
#[test]
fn several_specs_are_tuned_in_one_run() {
    let nvcc = match runner::build::find_nvcc(None, None) {
        Ok(Some(p)) => p,
        other => panic!(
            "this test needs nvcc ({other:?}): {}",
            runner::build::NVCC_INSTALL
        ),
    };
    let dev = tempfile::tempdir().unwrap();
    std::fs::write(dev.path().join("nvidia0"), "").unwrap();
    let out = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let stray = outside.path().join("stray.toml");
    std::fs::copy(root().join("testdata/bench/dot.toml"), &stray).unwrap();
    let specs = format!(
        "testdata/bench/dot.toml testdata/bench/stencil.toml {}",
        stray.display()
    );
    let o = smoke(
        dev.path(),
        &out.path().join("o"),
        &[("NVCC", nvcc.to_str().unwrap()), ("SPECS", &specs)],
        &[],
    );
    let o_dir = out.path().join("o");
    let log = std::fs::read_to_string(o_dir.join("log.txt")).unwrap();
    let tunes: Vec<&str> = log.lines().filter(|l| l.contains(".tune: ")).collect();
    assert_eq!(
        tunes,
        ["## bench.tune: tune . --backend bench --spec dot.toml --spec stencil.toml"],
        "{log}"
    );
    assert!(
        log.contains(&format!(
            "## {} is outside testdata/bench: not in the tune",
            stray.display()
        )),
        "{log}"
    );
    // Every run is counted: each spec's own, and the one tune.
    let stdout = String::from_utf8_lossy(&o.stdout);
    let runs = log
        .lines()
        .filter(|l| l.starts_with("## ") && l.contains(": "))
        .count()
        - log
            .lines()
            .filter(|l| l.contains("is outside testdata/bench"))
            .count();
    assert!(
        stdout.contains(&format!("{runs} runs,")),
        "{runs}: {stdout}\n{log}"
    );
    if !(Path::new("/dev/nvidia0").exists() && Path::new("/dev/nvidiactl").exists()) {
        assert_eq!(o.status.code(), Some(1), "{stdout}\n{}", stderr(&o));
    }
}
