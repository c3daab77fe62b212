//! `tune --executor slurm` on a real one-node Slurm cluster (CI starts it with `.ci/slurm-up`:
//! munge, slurmctld, slurmd, a fake 2-GPU GRES): two lanes as job steps inside an allocation
//! (`salloc -N1 -n2 --gres=gpu:2`) decide exactly as a local run on the tiny deterministic tree,
//! the steps show in `squeue --steps` while the tune runs, and a step `scancel`led in the middle
//! of its measurement (stopped there by a test point, so the moment is exact) only loses its
//! comparison in flight: it is measured again on the other lane and the decisions are the same.
//! These tests need Slurm: they FAIL when `sinfo` does not answer.

use rusqlite::Connection;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_hip-unroll");

#[path = "support/tiny_tree.rs"]
mod tiny_tree;

/// The tiny tree without links.
fn tiny() -> tempfile::TempDir {
    tiny_tree::tiny(false)
}

fn args(state: &Path) -> Vec<String> {
    [
        "tune",
        "--build",
        "sh build.sh",
        "--run",
        "sh run.sh",
        "--time-regex",
        "cost: ([0-9]+)",
        "--time-unit",
        "units",
        "--factors",
        "2,4",
        "--mode",
        "pragma",
        "--jobs",
        "2",
        "--state",
        state.to_str().unwrap(),
        "--format",
        "json",
        "--dry-run",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// Slurm must answer: a test that needs it fails (CI starts it), never skips.
fn require_slurm() {
    let o = Command::new("sinfo").args(["-h", "-o", "%P %a"]).output();
    match o {
        Ok(o) if o.status.success() && !o.stdout.is_empty() => {}
        Ok(o) => panic!(
            "this test needs a running Slurm cluster (run .ci/slurm-up as root): sinfo says {}",
            String::from_utf8_lossy(&o.stderr).trim()
        ),
        Err(e) => {
            panic!("this test needs Slurm (apt-get install slurm-wlm munge; .ci/slurm-up): {e}")
        }
    }
}

type Row = (String, String, Option<f64>, Option<f64>, Option<i64>);

fn decisions(state: &Path) -> Vec<Row> {
    let db = Connection::open(state.join("ledger.db")).unwrap();
    let mut st = db
        .prepare("SELECT key, status, speedup, p_value, runs FROM decisions ORDER BY key")
        .unwrap();
    st.query_map([], |r| {
        Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
    })
    .unwrap()
    .map(|r| r.unwrap())
    .collect()
}

fn local_reference() -> Vec<Row> {
    let dir = tiny();
    let state = tempfile::tempdir().unwrap();
    let o = Command::new(BIN)
        .args(args(state.path()))
        .current_dir(dir.path())
        .env_remove("HIP_UNROLL_TESTPOINT")
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let d = decisions(state.path());
    assert_eq!(d.len(), 7, "6 variants and the confirmation: {d:?}");
    d
}

/// `squeue --steps` lines (`STEPID NAME`) of this test's lanes.
fn lane_steps() -> Vec<(String, String)> {
    let o = Command::new("squeue")
        .args(["--steps", "-h", "-o", "%i %j"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter_map(|l| l.split_once(' '))
        .filter(|(_, n)| n.starts_with("hip-unroll-lane-"))
        .map(|(i, n)| (i.to_string(), n.to_string()))
        .collect()
}

#[test]
fn slurm_lanes_decide_as_a_local_run_even_when_a_step_is_cancelled() {
    require_slurm();
    let reference = local_reference();
    let dir = tiny();
    let state = tempfile::tempdir().unwrap();
    let mut cmd = Command::new("salloc");
    cmd.args(["-N1", "-n2", "--gres=gpu:2", BIN])
        .args(args(state.path()))
        .args(["--executor", "slurm", "--lanes", "2"])
        .current_dir(dir.path())
        // Lane 1's worker stops itself at its third sample (the step keeps running).
        .env("HIP_UNROLL_TESTPOINT", "tuner.worker.lane-1.sample=stop@3")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("salloc");
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    let reader = std::thread::spawn(move || {
        let mut all = String::new();
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line.clone());
            all.push_str(&line);
            all.push('\n');
        }
        all
    });
    // Wait for the stop (a bound so that a broken tune fails instead of hanging).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(300);
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match rx.recv_timeout(left) {
            Ok(l) if l.contains("testpoint tuner.worker.lane-1.sample stop") => break,
            Ok(_) => {}
            Err(_) => {
                let _ = child.kill();
                panic!("lane 1 never reached its third sample");
            }
        }
    }
    // Both lanes are job steps of the allocation, visible while the tune runs.
    let steps = lane_steps();
    let names: Vec<&str> = steps.iter().map(|(_, n)| n.as_str()).collect();
    assert!(names.contains(&"hip-unroll-lane-0"), "{steps:?}");
    assert!(names.contains(&"hip-unroll-lane-1"), "{steps:?}");
    let (step, _) = steps
        .iter()
        .find(|(_, n)| n == "hip-unroll-lane-1")
        .unwrap()
        .clone();
    let s = Command::new("scancel").arg(&step).status().unwrap();
    assert!(s.success());
    let out = child.wait_with_output().unwrap();
    let err = reader.join().unwrap();
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(decisions(state.path()), reference, "{err}");
    // The comparison lane 1 lost was measured again from scratch on lane 0 (attempt 1).
    let db = Connection::open(state.path().join("ledger.db")).unwrap();
    let retried: i64 = db
        .query_row(
            "SELECT count(DISTINCT comparison) FROM samples s WHERE attempt = 1 AND lane = 0
               AND EXISTS (SELECT 1 FROM samples t WHERE t.comparison = s.comparison
                           AND t.attempt = 0 AND t.lane = 1)",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(retried >= 1, "{retried}");
}
