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

#[path = "support/bench_tree.rs"]
mod bench_tree;
#[path = "support/tiny_tree.rs"]
mod tiny_tree;

/// The tiny tree without links.
fn tiny() -> tempfile::TempDir {
    tiny_tree::tiny(false)
}

fn args(state: &Path) -> Vec<String> {
    let mut a = tiny_tree::tune_args(state);
    a.push("--dry-run".into());
    a
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

/// The flags of [`args`] that `[tune]` can hold, as a config: with `executor = "slurm"` and
/// `[tune.slurm]`, only the output flags stay on the command line.
fn config_only(state: &Path, srun: &Path) -> String {
    format!(
        "[tune]\nbuild = \"sh build.sh\"\nrun = \"sh run.sh\"\ntime-regex = \"cost: ([0-9]+)\"\n\
         time-unit = \"units\"\nfactors = [2, 4]\nmode = \"pragma\"\njobs = 2\nstate = \"{}\"\n\
         executor = \"slurm\"\n\n[tune.slurm]\nlanes = 2\nargs = [\"--quiet\"]\nsrun = \"{}\"\n",
        state.display(),
        srun.display()
    )
}

#[test]
fn a_config_only_slurm_run_decides_as_the_flag_run() {
    require_slurm();
    let dir = tiny();
    let state = tempfile::tempdir().unwrap();
    // srun through a wrapper that records its arguments (outside the tree: the tree must not
    // change while tune runs), so the config's `srun` and `args` are seen to be used.
    let tools = tempfile::tempdir().unwrap();
    let log = tools.path().join("srun.log");
    let wrapper = tools.path().join("srun-wrapper");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\necho \"$*\" >> '{}'\nexec srun \"$@\"\n",
            log.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    // The tiny tree's config (its `[compile]`) with everything else of the run.
    let cfg = dir.path().join("hip-unroll.toml");
    let mut text = std::fs::read_to_string(&cfg).unwrap();
    text.push_str(&config_only(state.path(), &wrapper));
    std::fs::write(&cfg, text).unwrap();
    // The reference: the same tree and config, on local lanes (the command line wins over the
    // config's executor and state directory).
    let local_state = tempfile::tempdir().unwrap();
    let o = Command::new(BIN)
        .args([
            "tune",
            "--format",
            "json",
            "--dry-run",
            "--executor",
            "local",
            "--state",
        ])
        .arg(local_state.path())
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
    let reference = decisions(local_state.path());
    assert_eq!(
        reference.len(),
        7,
        "6 variants and the confirmation: {reference:?}"
    );
    assert!(!log.exists(), "the local run started srun");
    // The same decisions, statuses, figures and keys as the flag run's local reference (the
    // keys differ only by the tree, which holds the config here).
    let flag_run: Vec<_> = local_reference()
        .into_iter()
        .map(|(_, s, sp, p, r)| (s, sp, p, r))
        .collect();
    let mut ours: Vec<_> = reference
        .iter()
        .map(|(_, s, sp, p, r)| (s.clone(), *sp, *p, *r))
        .collect();
    let mut theirs = flag_run;
    ours.sort_by(|a, b| format!("{a:?}").cmp(&format!("{b:?}")));
    theirs.sort_by(|a, b| format!("{a:?}").cmp(&format!("{b:?}")));
    assert_eq!(ours, theirs);

    let o = Command::new("salloc")
        .args([
            "-N1",
            "-n2",
            "--gres=gpu:2",
            BIN,
            "tune",
            "--format",
            "json",
        ])
        .arg("--dry-run")
        .current_dir(dir.path())
        .env_remove("HIP_UNROLL_TESTPOINT")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert_eq!(decisions(state.path()), reference, "{err}");
    let calls = std::fs::read_to_string(&log).unwrap();
    let calls: Vec<&str> = calls.lines().collect();
    assert_eq!(calls.len(), 2, "{calls:?}");
    for (i, c) in calls.iter().enumerate() {
        assert!(c.contains("--quiet"), "{c}");
        assert!(c.ends_with("tune-worker"), "{c}");
        assert!(
            calls
                .iter()
                .any(|c| c.contains(&format!("--job-name=hip-unroll-lane-{i}"))),
            "{calls:?}"
        );
    }
}

#[test]
fn an_unknown_key_of_tune_slurm_is_refused_with_one_line() {
    let dir = tiny();
    std::fs::write(
        dir.path().join("hip-unroll.toml"),
        "[tune]\nbuild = \"true\"\nrun = \"true\"\n\n[tune.slurm]\nlanes = 2\nnodes = 3\n",
    )
    .unwrap();
    let o = Command::new(BIN)
        .arg("tune")
        .current_dir(dir.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("7:1: unknown key `nodes` in [tune.slurm]"),
        "{err}"
    );
    // A bad executor name is one line too.
    std::fs::write(
        dir.path().join("hip-unroll.toml"),
        "[tune]\nbuild = \"true\"\nrun = \"true\"\nexecutor = \"ssh\"\n",
    )
    .unwrap();
    let o = Command::new(BIN)
        .arg("tune")
        .current_dir(dir.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(
        err.trim(),
        "error: [tune] executor must be `local` or `slurm`, not `ssh`"
    );
    assert!(!dir.path().join(".hip-unroll").exists());
}

/// One lane inside a one-GPU allocation, with `extra` tune arguments: the output.
fn one_slurm_lane(dir: &Path, state: &Path, extra: &[&str]) -> std::process::Output {
    Command::new("salloc")
        .args(["-N1", "-n1", "--gres=gpu:1", BIN, "tune"])
        .args(extra)
        .args(["--executor", "slurm", "--lanes", "1", "--state"])
        .arg(state)
        .current_dir(dir)
        // The node has no ROCm profiler (and neither has this machine).
        .env("PATH", "/usr/bin:/bin")
        .env_remove("HIP_UNROLL_TESTPOINT")
        .output()
        .unwrap()
}

/// The tune's own `error:` line among salloc's (which says when it got and freed the
/// allocation).
fn tune_error(o: &std::process::Output) -> String {
    let err = String::from_utf8_lossy(&o.stderr);
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("error: ")).collect();
    assert_eq!(lines.len(), 1, "{err}");
    lines[0].to_string()
}

#[test]
fn rocprofv3_runs_in_a_slurm_step_and_its_preflight_answers_from_there() {
    require_slurm();
    let dir = tiny();
    let state = tempfile::tempdir().unwrap();
    let o = one_slurm_lane(
        dir.path(),
        state.path(),
        &[
            "--backend",
            "rocprofv3",
            "--build",
            "sh build.sh",
            "--run",
            "sh run.sh",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    let e = tune_error(&o);
    // The worker's line, relayed by the coordinator: the step ran, and rocprofv3 is not there.
    assert!(
        e.starts_with("error: the Slurm lanes did not start: lane 0: rocprofv3 is not on PATH"),
        "{e}"
    );
    // The state is kept (the ledger was opened before the steps started).
    assert!(state.path().join("ledger.db").exists());
}

#[test]
fn bench_runs_in_a_slurm_step_and_says_there_is_no_gpu_there() {
    require_slurm();
    if testenv::lacks(
        "no-gpu",
        !testenv::has_gpu_device(),
        "a GPU device node exists: the no-GPU answer of the bench lane does not apply",
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    bench_tree::write(dir.path());
    let state = tempfile::tempdir().unwrap();
    let o = one_slurm_lane(
        dir.path(),
        state.path(),
        &["--backend", "bench", "--spec", "k.toml"],
    );
    assert_eq!(o.status.code(), Some(2));
    let e = tune_error(&o);
    assert!(
        e.starts_with("error: the Slurm lanes did not start: lane 0: no GPU"),
        "{e}"
    );
    assert!(state.path().join("ledger.db").exists());
}

/// The tuner names settings as data; the binary words each error with the flag at fault (the
/// library's own text names config keys, never a flag). Needs no Slurm: refused before.
#[test]
fn setup_errors_name_the_flags_of_the_command_line() {
    let dir = tiny();
    let run = |extra: &[&str]| -> String {
        let o = Command::new(BIN)
            .args(["tune", "--build", "sh build.sh", "--run", "sh run.sh"])
            .args(extra)
            .current_dir(dir.path())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        err.trim_end().to_string()
    };
    assert_eq!(
        run(&["--lanes", "2"]),
        "error: --lanes applies to --executor slurm (local lanes: --devices)"
    );
    assert_eq!(
        run(&["--slurm-arg=--qos=high"]),
        "error: --slurm-arg applies to --executor slurm (local lanes: --devices)"
    );
    assert_eq!(
        run(&["--executor", "slurm", "--devices", "0"]),
        "error: --devices chooses local lanes; with --executor slurm Slurm gives each step its GPU (--lanes N)"
    );
    assert_eq!(
        run(&["--executor", "slurm", "--lanes", "0"]),
        "error: --lanes must be 1 to 1024"
    );
    assert_eq!(
        run(&["--devices", "0,0"]),
        "error: --devices names device 0 twice"
    );
    assert_eq!(
        run(&["--min-runs", "10", "--max-runs", "5"]),
        "error: --max-runs (5) must be at least --min-runs (10)"
    );
    assert_eq!(
        run(&["--max-noise", "0"]),
        "error: --max-noise must be a positive percentage"
    );
    assert_eq!(
        run(&["--kernel", "k"]),
        "error: --kernel selects kernels for the rocprofv3 backend; the command backend times the whole run"
    );
    assert_eq!(
        run(&["--time-regex", "("]),
        "error: --time-regex: `(` is not a regex: unclosed group"
    );
    assert!(!dir.path().join(".hip-unroll").exists());
}
