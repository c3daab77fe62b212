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

/// What a summary script of bench/ prints for the reports in `dir` (it must exit 0).
fn summary_of(script: &str, dir: &Path) -> String {
    let o = Command::new("python3")
        .arg(root().join(script))
        .arg(dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    String::from_utf8_lossy(&o.stdout).into_owned()
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

fn batch_ab(dev: &Path, out: &Path, env: &[(&str, &str)]) -> Output {
    let mut c = Command::new("bash");
    c.arg(root().join("bench/gpu_batch_ab.sh"))
        .arg(out)
        .arg("3")
        .env("GPU_SMOKE_DEV", dev)
        .env("HIP_UNROLL", BIN);
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

/// `bench/gpu_batch_ab.sh` (launch by launch against batched samples): without a GPU it stops
/// at once with one line, exit 2; on a machine that looks like one (device nodes elsewhere, no
/// driver) each spec's two runs are made from a copy of the spec with `launches-per-sample = 1`
/// and the spec itself (both load: the only failure is the missing driver), and it exits 1.
#[test]
fn the_batch_comparison_stops_without_a_gpu_and_runs_both_modes_with_one() {
    let dev = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let o = batch_ab(dev.path(), &out.path().join("o"), &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(
        stderr(&o).trim(),
        "gpu_batch_ab: no NVIDIA GPU on this machine (no /dev/nvidia0)"
    );
    let nvcc = match runner::build::find_nvcc(None, None) {
        Ok(Some(p)) => p,
        other => panic!(
            "this test needs nvcc ({other:?}): {}",
            runner::build::NVCC_INSTALL
        ),
    };
    std::fs::write(dev.path().join("nvidia0"), "").unwrap();
    let o = batch_ab(
        dev.path(),
        &out.path().join("o"),
        &[
            ("NVCC", nvcc.to_str().unwrap()),
            ("SPECS", "dot"),
            ("ROUNDS", "1"),
        ],
    );
    let stdout = String::from_utf8_lossy(&o.stdout);
    let o_dir = out.path().join("o");
    let log = std::fs::read_to_string(o_dir.join("log.txt")).unwrap_or_default();
    if Path::new("/dev/nvidia0").exists() && Path::new("/dev/nvidiactl").exists() {
        assert_eq!(o.status.code(), Some(0), "{stdout}\n{log}");
        return;
    }
    assert_eq!(o.status.code(), Some(1), "{stdout}\n{}", stderr(&o));
    assert!(
        stdout.contains("failed: dot single (round 1")
            && stdout.contains("failed: dot auto (round 1")
            && stdout.contains("gpu_batch_ab: 2 failed"),
        "{stdout}"
    );
    let errors: Vec<&str> = log.lines().filter(|l| l.starts_with("error")).collect();
    assert_eq!(errors.len(), 2, "{log}");
    assert!(
        errors.iter().all(|l| l.contains("no NVIDIA driver")),
        "only the driver is missing: {log}"
    );
    assert!(o_dir.join("summary.md").is_file());
}

/// bench/batch_summary.py on two rounds of `bench` reports per mode: one row per spec and
/// mode with the batch, the medians over the rounds, each round's A/A ratio and per-pair range,
/// and the runner's note.
#[test]
fn the_batch_summary_reads_bench_reports() {
    let d = tempfile::tempdir().unwrap();
    let report =
        |batch: u32, base: &[f64], var: &[f64], ratio: f64, rel: f64, note: Option<&str>| {
            let median = |v: &[f64]| {
                let mut v = v.to_vec();
                v.sort_by(f64::total_cmp);
                v[v.len() / 2]
            };
            let mut r = serde_json::json!({
                "launches_per_sample": batch,
                "ratio": ratio,
                "kernels": [
                    {"samples_ms": base, "summary": {"median": median(base), "rel_spread": rel}},
                    {"samples_ms": var, "summary": {"median": median(var), "rel_spread": rel}},
                ],
            });
            if let Some(n) = note {
                r["launches_per_sample_note"] = n.into();
            }
            r.to_string()
        };
    let w = |name: &str, text: String| std::fs::write(d.path().join(name), text).unwrap();
    // (file, launches per sample, baseline samples, variant samples, A/A ratio, rel. MAD)
    type Run<'a> = (&'a str, u32, &'a [f64], &'a [f64], f64, f64);
    let dot: [Run<'_>; 4] = [
        (
            "dot.single.1.json",
            1,
            &[0.008, 0.010, 0.009],
            &[0.010, 0.008, 0.009],
            1.0,
            0.064,
        ),
        (
            "dot.single.2.json",
            1,
            &[0.009, 0.009, 0.012],
            &[0.009, 0.0099, 0.006],
            0.99,
            0.070,
        ),
        (
            "dot.auto.1.json",
            16,
            &[0.0090, 0.0091, 0.0092],
            &[0.0091, 0.0091, 0.0092],
            1.001,
            0.011,
        ),
        (
            "dot.auto.2.json",
            16,
            &[0.0090, 0.0090, 0.0090],
            &[0.0090, 0.0090, 0.0090],
            1.0,
            0.009,
        ),
    ];
    for (name, batch, base, var, ratio, rel) in dot {
        w(name, report(batch, base, var, ratio, rel, None));
    }
    w("scan.auto.1.json", report(1, &[0.005, 0.005], &[0.005, 0.005], 1.0, 0.02, Some("timed launch by launch: a launch on its own outputs took 0.20x the time of one on reset outputs")));
    w("broken.auto.1.json", String::new());
    let text = summary_of("bench/batch_summary.py", d.path());
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[2..],
        [
            "| dot | auto | 16 | 9.05 us | 1.0% | 1.001, 1.000 | 1.00-1.01, 1.00-1.00 |",
            "| dot | single | 1 | 9.00 us | 6.7% | 1.000, 0.990 | 0.80-1.25, 0.50-1.10 |",
            "| scan | auto | 1 | 5.00 us | 2.0% | 1.000 | 1.00-1.00 |",
            "|  | note | timed launch by launch: a launch on its own outputs took 0.20x the time of one on reset outputs | | | | |",
        ],
        "{text}"
    );
}

/// bench/gpu_repeat_tune.sh without a GPU: one line, exit 2, nothing written; and
/// bench/repeat_summary.py on three rounds of a tune's reports where the kept variant of one
/// loop flips (pragma x2 accepted, then manual x4, then pragma x2 again) and another loop's
/// decisions hold: one row per variant with each round's status, then the flips counted.
#[test]
fn the_repeat_tune_stops_without_a_gpu_and_its_summary_counts_flips() {
    let dev = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let o = Command::new("bash")
        .arg(root().join("bench/gpu_repeat_tune.sh"))
        .arg(root().join("testdata/bench/dot.toml"))
        .arg(out.path().join("o"))
        .env("GPU_SMOKE_DEV", dev.path())
        .env("HIP_UNROLL", BIN)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(
        stderr(&o).trim(),
        "gpu_repeat_tune: no NVIDIA GPU on this machine (no /dev/nvidia0)"
    );
    assert!(!out.path().join("o").exists(), "nothing written");

    let d = tempfile::tempdir().unwrap();
    let cand = |lp: &str, mode: &str, factor: u32, status: &str, speedup: Option<f64>| serde_json::json!({"loop": lp, "mode": mode, "factor": factor, "status": status, "speedup": speedup});
    for (n, kept) in [(1, "pragma"), (2, "manual"), (3, "pragma")] {
        let (p2, m4) = if kept == "pragma" {
            ("accepted", "rejected")
        } else {
            ("rejected", "accepted")
        };
        let r = serde_json::json!({
            "candidates": [
                cand("k:0", "pragma", 2, p2, Some(1.10)),
                cand("k:0", "manual", 4, m4, Some(1.11)),
                cand("k:1", "pragma", 2, "rejected", Some(0.98)),
                {"loop": "k:2", "mode": null, "factor": null, "status": "blocked"},
            ],
            "timing": {"wall": 2.5},
        });
        std::fs::write(d.path().join(format!("round.{n}.json")), r.to_string()).unwrap();
    }
    std::fs::write(d.path().join("round.x.json"), "not a round").unwrap();
    let text = summary_of("bench/repeat_summary.py", d.path());
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[..6],
        [
            "| variant | round 1 | round 2 | round 3 |",
            "|---|---|---|---|",
            "| k:0 pragma x2 | accepted 1.100x | rejected 1.100x | accepted 1.100x |",
            "| k:0 manual x4 | rejected 1.110x | accepted 1.110x | rejected 1.110x |",
            "| k:1 pragma x2 | rejected 0.980x | rejected 0.980x | rejected 0.980x |",
            "| k:2 (loop) | blocked | blocked | blocked |",
        ],
        "{text}"
    );
    assert!(
        text.contains("- round 2: accepted k:0 manual x4; 2.5 s wall"),
        "{text}"
    );
    assert!(
        text.trim_end().ends_with(
            "3 rounds; status differs between rounds for 2 of 4 variants (k:0 pragma x2, k:0 manual x4); the kept variant differs for 1 of 2 loops (k:0)"
        ),
        "{text}"
    );
}
