//! `hip-unroll tune --backend bench` and `--backend replay` end to end on this machine (no GPU):
//! both refuse at once with one line, before anything is built, when there is no GPU (the
//! real HIP/CUDA libraries, the real HSA runtime); the replay backend then runs a whole tune
//! on the simulated GPU of `testdata/replay/fake_hsa.c` (`HIP_UNROLL_HSA_RUNTIME`), with every
//! candidate compiled by hipcc, replayed on the captured memory and compared, on one local
//! lane, on two (each lane its own GPU agent) and in a Slurm job step (as the local lane).
//! Needs: hipcc, clang-offload-bundler-19, clang++-19, cc, libhsa-runtime64 (+ -dev headers),
//! a running Slurm (`.ci/slurm-up`) for the Slurm test.
#![allow(clippy::print_stdout, clippy::print_stderr, clippy::exit)]

#[path = "../replay/tests/common/mod.rs"]
mod common;

use common::*;
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_hip-unroll");

fn tune(dir: &Path, args: &[&str], envs: &[(&str, String)]) -> Output {
    let mut c = Command::new(BIN);
    c.arg("tune")
        .args(args)
        .current_dir(dir)
        .env_remove("HIP_UNROLL_HSA_RUNTIME")
        .env_remove("HSA_TOOLS_LIB");
    for (k, v) in envs {
        c.env(k, v);
    }
    c.output().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Exactly one `error:` line on stderr, nothing on stdout, exit 2.
fn one_line_error(o: &Output) -> String {
    let e = stderr(o);
    assert_eq!(o.status.code(), Some(2), "stderr: {e}");
    assert_eq!(e.lines().count(), 1, "one line expected: {e}");
    assert!(e.starts_with("error: "), "{e}");
    assert!(o.stdout.is_empty());
    e
}

/// Whether this machine shows no GPU device node; a counted skip (`testenv`) otherwise.
#[path = "support/bench_tree.rs"]
mod bench_tree;

fn no_gpu_here() -> bool {
    !testenv::lacks(
        "no-gpu",
        !testenv::has_gpu_device(),
        "a GPU device node exists: the no-GPU assertions do not apply",
    )
}

/// A tree with two kernels. `other`'s loop comes first, so any rewrite of it moves the
/// `#if __LINE__` line below, which then defines `hip_unroll_fake_bug`: the fake runtime
/// computes one element of `scale` wrong for such a code object (a stand-in for a miscompiled
/// variant). Rewrites of `scale`'s loop, below the `#if`, leave it alone.
fn tree(dir: &Path) {
    let mut text = String::from(
        "#include <hip/hip_runtime.h>\n\n__global__ void other(int* a, int n) {\n  for (int k = 0; k < n; ++k) {\n    a[k] += k;\n  }\n}\n\n",
    );
    let line = text.lines().count() + 1;
    text.push_str(&format!(
        "#if __LINE__ > {line}\n__device__ int hip_unroll_fake_bug = 0;\n#endif\n\n"
    ));
    text.push_str(
        "__global__ void scale(float* out, const float* in, int n, float s) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i >= n) return;\n  float acc = 0.0f;\n  for (int k = 0; k < 8; ++k) {\n    acc += in[(i + k) % n] * s;\n  }\n  out[i] = acc;\n}\n",
    );
    std::fs::write(dir.join("scale.hip"), text).unwrap();
}

#[test]
fn bench_without_a_gpu_fails_at_once_with_one_line_and_builds_nothing() {
    if !no_gpu_here() {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    bench_tree::write(t.path());
    let cache = tempfile::tempdir().unwrap();
    let envs = [("HIP_UNROLL_CACHE_DIR", cache.path().display().to_string())];
    let o = tune(t.path(), &["--backend", "bench", "--spec", "k.toml"], &envs);
    let e = one_line_error(&o);
    assert!(e.contains("no GPU") && !e.contains("--backend"), "{e}");
    // Nothing compiled, no state: neither the state directory nor any cache was written.
    assert!(!t.path().join(".hip-unroll").exists());
    assert_eq!(std::fs::read_dir(cache.path()).unwrap().count(), 0);
    let names: Vec<_> = std::fs::read_dir(t.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");

    // The same from the [tune] section of hip-unroll.toml.
    std::fs::write(
        t.path().join("hip-unroll.toml"),
        "[tune]\nbackend = \"bench\"\nspec = \"k.toml\"\n",
    )
    .unwrap();
    let e = one_line_error(&tune(t.path(), &[], &envs));
    assert!(e.contains("no GPU"), "{e}");
    std::fs::write(
        t.path().join("hip-unroll.toml"),
        "[tune]\nbackend = \"bench\"\nspec = \"k.toml\"\ncheck = \"true\"\n",
    )
    .unwrap();
    let e = one_line_error(&tune(t.path(), &[], &envs));
    assert!(
        e.contains("`check` in [tune] does not apply to the bench backend"),
        "{e}"
    );
    std::fs::remove_file(t.path().join("hip-unroll.toml")).unwrap();
    assert!(!t.path().join(".hip-unroll").exists());

    // Settings that make no sense with this backend are refused before that.
    let o = tune(
        t.path(),
        &["--backend", "bench", "--spec", "k.toml", "--check", "true"],
        &envs,
    );
    assert!(one_line_error(&o).contains("--check does not apply to the bench backend"));
    let o = tune(t.path(), &["--backend", "bench"], &envs);
    assert!(one_line_error(&o).contains("needs --spec SPEC"));
    let o = tune(
        t.path(),
        &["--spec", "k.toml", "--build", "true", "--run", "true"],
        &envs,
    );
    assert!(one_line_error(&o).contains("--spec applies to the bench backend"));
}

/// `--devices 0,1 --backend bench`: two lanes, each with its own bench backend opening its own
/// device (which device each asks for: `tuner::setup`'s unit test), past the refusal of
/// one-device backends there was; without a GPU the first lane's device fails with the
/// runner's one line, before anything is built.
#[test]
fn bench_on_two_devices_opens_a_device_per_lane() {
    if !no_gpu_here() {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    bench_tree::write(t.path());
    let cache = tempfile::tempdir().unwrap();
    let envs = [("HIP_UNROLL_CACHE_DIR", cache.path().display().to_string())];
    let o = tune(
        t.path(),
        &["--backend", "bench", "--spec", "k.toml", "--devices", "0,1"],
        &envs,
    );
    let e = one_line_error(&o);
    assert!(e.starts_with("error: no GPU"), "{e}");
    assert!(!t.path().join(".hip-unroll").exists());
    assert_eq!(std::fs::read_dir(cache.path()).unwrap().count(), 0);
}

#[test]
fn replay_without_a_gpu_agent_fails_at_once_with_one_line() {
    if !no_gpu_here() {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    tree(t.path());
    let cap = tempfile::tempdir().unwrap();
    write_perf_lab(&cap.path().join("cap"), &scale_spec());
    let snap = cap.path().join("cap").display().to_string();
    // The real runtime (Debian's libhsa-runtime64) on a machine without a GPU.
    let o = tune(t.path(), &["--backend", "replay", "--snapshot", &snap], &[]);
    let e = one_line_error(&o);
    assert!(e.starts_with("error: no GPU agent found"), "{e}");
    assert!(!t.path().join(".hip-unroll").exists());

    // The captured kernel must be defined by exactly one file of the tuned paths.
    std::fs::copy(t.path().join("scale.hip"), t.path().join("copy.hip")).unwrap();
    let o = tune(t.path(), &["--backend", "replay", "--snapshot", &snap], &[]);
    let e = one_line_error(&o);
    assert!(
        e.contains("several files define the captured kernel `scale`: copy.hip, scale.hip"),
        "{e}"
    );
    std::fs::write(
        t.path().join("none.hip"),
        "__global__ void k(int* a) { a[0] = 1; }\n",
    )
    .unwrap();
    let o = tune(
        t.path(),
        &["--backend", "replay", "--snapshot", &snap, "none.hip"],
        &[],
    );
    let e = one_line_error(&o);
    assert!(
        e.contains("no file among the tuned paths defines the captured kernel `scale` (kernels found: k (none.hip))"),
        "{e}"
    );
    // A broken snapshot is one line too.
    let o = tune(
        t.path(),
        &["--backend", "replay", "--snapshot", "missing"],
        &[],
    );
    assert!(one_line_error(&o).contains("snapshot missing"));
}

#[test]
fn replay_backend_measures_decides_and_check_fails_on_the_simulated_gpu() {
    let t = tempfile::tempdir().unwrap();
    tree(t.path());
    let cap = tempfile::tempdir().unwrap();
    write_perf_lab(&cap.path().join("cap"), &scale_spec());
    let snap = cap.path().join("cap").display().to_string();
    let envs = [
        ("HIP_UNROLL_HSA_RUNTIME", fakes().vmem.display().to_string()),
        (
            "FAKE_HSA_KERNARG_SIZE",
            kernel_meta(SCALE).kernarg_segment_size.to_string(),
        ),
    ];
    let before = std::fs::read(t.path().join("scale.hip")).unwrap();
    let o = tune(
        t.path(),
        &[
            "--backend",
            "replay",
            "--snapshot",
            &snap,
            "--factors",
            "2,4",
            "--dry-run",
            "--format",
            "json",
        ],
        &envs,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r["baseline"]["unit"], "ns", "{r:#}");
    // The fake's cost: (1000 + code object size % 997) ticks of 10 ns.
    let figure = r["baseline"]["figure"].as_f64().unwrap();
    assert!((10_000.0..20_000.0).contains(&figure), "{figure}");
    let cands = r["candidates"].as_array().unwrap();
    let of = |lp: &str| -> Vec<&Value> { cands.iter().filter(|c| c["loop"] == lp).collect() };
    // Every variant of other's loop defines hip_unroll_fake_bug: check-failed, naming the region.
    let other = of("other:0");
    assert_eq!(other.len(), 4, "{r:#}");
    for c in &other {
        assert_eq!(c["status"], "check-failed", "{c:#}");
        let why = c["reason"].as_str().unwrap();
        assert!(
            why.starts_with("scale.hip: outputs differ from the baseline's"),
            "{why}"
        );
        assert!(why.contains(&format!("{OUT:#x}")), "{why}");
    }
    // scale's variants replay the same outputs: measured and decided.
    let scale = of("scale:0");
    assert_eq!(scale.len(), 4, "{r:#}");
    for c in &scale {
        let s = c["status"].as_str().unwrap();
        assert!(s == "accepted" || s == "rejected", "{c:#}");
        assert!(c["runs"].as_u64().unwrap() >= 1, "{c:#}");
    }
    for c in cands {
        eprintln!(
            "{} {} x{}: {} {}",
            c["loop"], c["mode"], c["factor"], c["status"], c["reason"]
        );
    }
    // Compiled through codeobj's cache in the state directory.
    let objects = std::fs::read_dir(t.path().join(".hip-unroll/objects")).unwrap();
    assert!(objects.count() > 0);
    // --dry-run: the tree is untouched.
    assert_eq!(std::fs::read(t.path().join("scale.hip")).unwrap(), before);
}

/// The simulated runtime's variables.
fn fake_envs() -> Vec<(&'static str, String)> {
    vec![
        ("HIP_UNROLL_HSA_RUNTIME", fakes().vmem.display().to_string()),
        (
            "FAKE_HSA_KERNARG_SIZE",
            kernel_meta(SCALE).kernarg_segment_size.to_string(),
        ),
    ]
}

/// The arguments of a replay tune of `snap` with its state in `state`.
fn replay_args(snap: &str, state: &Path) -> Vec<String> {
    [
        "tune",
        "--backend",
        "replay",
        "--snapshot",
        snap,
        "--factors",
        "2,4",
        "--dry-run",
        "--format",
        "json",
        "--state",
        state.to_str().unwrap(),
    ]
    .map(String::from)
    .to_vec()
}

/// The decisions of the replay tune on one local lane (the in-process default lane).
fn one_lane_reference(dir: &Path, snap: &str) -> Vec<(String, String, Option<f64>, Option<i64>)> {
    let state = tempfile::tempdir().unwrap();
    let mut c = Command::new(BIN);
    c.args(replay_args(snap, state.path()))
        .current_dir(dir)
        .env_remove("HIP_UNROLL_TESTPOINT");
    for (k, v) in fake_envs() {
        c.env(k, v);
    }
    let o = c.output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let d = ledger_decisions(state.path());
    assert!(d.len() >= 8, "{d:?}");
    d
}

/// The `hip-unroll tune-worker` children of process `parent`: (pid, environment).
fn worker_children(parent: u32) -> Vec<(u32, Vec<String>)> {
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // `pid (comm) state ppid ...`: the fields after the last `)`.
        let ppid = stat
            .rsplit_once(')')
            .and_then(|(_, r)| r.split_whitespace().nth(1))
            .and_then(|p| p.parse::<u32>().ok());
        if ppid != Some(parent) {
            continue;
        }
        let argv = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let argv: Vec<String> = argv
            .split(|b| *b == 0)
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect();
        if argv.get(1).map(String::as_str) != Some("tune-worker") {
            continue;
        }
        let env = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
        let env = env
            .split(|b| *b == 0)
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect();
        found.push((pid, env));
    }
    found.sort();
    found
}

/// The stderr lines of a running tune, as they come, and all of them at its end.
fn stderr_lines(
    child: &mut std::process::Child,
) -> (
    std::sync::mpsc::Receiver<String>,
    std::thread::JoinHandle<String>,
) {
    let err = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    let reader = std::thread::spawn(move || {
        use std::io::BufRead;
        let mut all = String::new();
        for line in std::io::BufReader::new(err).lines().map_while(Result::ok) {
            let _ = tx.send(line.clone());
            all.push_str(&line);
            all.push('\n');
        }
        all
    });
    (rx, reader)
}

/// Waits for a stderr line containing `what` (a bound, so a broken tune fails, not hangs).
fn wait_for(rx: &std::sync::mpsc::Receiver<String>, child: &mut std::process::Child, what: &str) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(300);
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match rx.recv_timeout(left) {
            Ok(l) if l.contains(what) => return,
            Ok(_) => {}
            Err(_) => {
                let _ = child.kill();
                panic!("the tune never said `{what}`");
            }
        }
    }
}

/// `--devices 0,1 --backend replay` on the simulated GPU: a replay session reserves the
/// captured addresses in its process, so each local lane is a `hip-unroll tune-worker` process
/// of its own, started by the tune, with its device's id in `HIP_VISIBLE_DEVICES`,
/// `CUDA_VISIBLE_DEVICES` and `ROCR_VISIBLE_DEVICES` and opening that process's only GPU
/// (agent 0: lane 1 asking for agent 1, or both lanes reserving in one process, fails). Lane
/// 1's worker stops itself at its first sample (a test point), so both are seen alive; the
/// tune then decides exactly as the one-lane run.
#[test]
fn replay_lanes_are_worker_processes_and_decide_as_one_lane() {
    let t = tempfile::tempdir().unwrap();
    tree(t.path());
    let cap = tempfile::tempdir().unwrap();
    write_perf_lab(&cap.path().join("cap"), &scale_spec());
    let snap = cap.path().join("cap").display().to_string();
    let reference = one_lane_reference(t.path(), &snap);

    let state = tempfile::tempdir().unwrap();
    let mut c = Command::new(BIN);
    c.args(replay_args(&snap, state.path()))
        .args(["--devices", "0,1"])
        .current_dir(t.path())
        .env("HIP_UNROLL_TESTPOINT", "tuner.worker.lane-1.sample=stop@1")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    for (k, v) in fake_envs() {
        c.env(k, v);
    }
    let mut child = c.spawn().unwrap();
    let (rx, reader) = stderr_lines(&mut child);
    wait_for(&rx, &mut child, "testpoint tuner.worker.lane-1.sample stop");
    let workers = worker_children(child.id());
    assert_eq!(workers.len(), 2, "two worker processes: {workers:?}");
    // Each worker's device variables name one device, its own.
    let mut ids = Vec::new();
    for (pid, env) in &workers {
        let var = |k: &str| {
            env.iter()
                .find_map(|e| e.strip_prefix(&format!("{k}=")))
                .map(str::to_string)
        };
        let id = var("HIP_VISIBLE_DEVICES");
        assert_eq!(var("CUDA_VISIBLE_DEVICES"), id, "{env:?}");
        assert_eq!(var("ROCR_VISIBLE_DEVICES"), id, "{env:?}");
        ids.push((id.unwrap_or_default(), *pid));
    }
    ids.sort();
    let got: Vec<&str> = ids.iter().map(|(i, _)| i.as_str()).collect();
    assert_eq!(got, ["0", "1"], "{workers:?}");
    // Lane 1 (the worker on device 1, stopped) goes on.
    let s = Command::new("kill")
        .args(["-CONT", &ids[1].1.to_string()])
        .status()
        .unwrap();
    assert!(s.success());
    let o = child.wait_with_output().unwrap();
    let err = reader.join().unwrap();
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(!err.contains("cannot reserve"), "{err}");
    assert_eq!(ledger_decisions(state.path()), reference, "{err}");
    // Both lanes decided, each under its own device id.
    let db = rusqlite::Connection::open(state.path().join("ledger.db")).unwrap();
    let mut st = db
        .prepare("SELECT DISTINCT lane FROM samples ORDER BY lane")
        .unwrap();
    let lanes: Vec<i64> = st
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(|r| r.unwrap())
        .collect();
    assert_eq!(lanes, [0, 1], "{err}");
}

/// A replay worker process killed (SIGKILL, by a test point at its second sample) loses only
/// its comparison in flight: the tune measures it again from scratch on the other lane and
/// decides exactly as the one-lane run.
#[test]
fn a_killed_replay_worker_process_loses_only_its_comparison() {
    let t = tempfile::tempdir().unwrap();
    tree(t.path());
    let cap = tempfile::tempdir().unwrap();
    write_perf_lab(&cap.path().join("cap"), &scale_spec());
    let snap = cap.path().join("cap").display().to_string();
    let reference = one_lane_reference(t.path(), &snap);

    let state = tempfile::tempdir().unwrap();
    let mut c = Command::new(BIN);
    c.args(replay_args(&snap, state.path()))
        .args(["--devices", "0,1"])
        .current_dir(t.path())
        .env("HIP_UNROLL_TESTPOINT", "tuner.worker.lane-1.sample=kill@2");
    for (k, v) in fake_envs() {
        c.env(k, v);
    }
    let o = c.output().unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(!err.contains("cannot reserve"), "{err}");
    assert_eq!(ledger_decisions(state.path()), reference, "{err}");
    // Lane 1 took two samples of a comparison (attempt 0), then was gone; lane 0 measured that
    // comparison again from scratch (attempt 1).
    let db = rusqlite::Connection::open(state.path().join("ledger.db")).unwrap();
    let retried: i64 = db
        .query_row(
            "SELECT count(DISTINCT comparison) FROM samples s WHERE attempt = 1 AND lane = 0
               AND EXISTS (SELECT 1 FROM samples t WHERE t.comparison = s.comparison
                           AND t.attempt = 0 AND t.lane = 1)",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(retried, 1, "{err}");
    let lane1: i64 = db
        .query_row("SELECT count(*) FROM samples WHERE lane = 1", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(lane1, 2, "nothing of lane 1 after its kill: {err}");
}

/// The ledger's decisions (key, status, speedup, runs), by key.
fn ledger_decisions(state: &Path) -> Vec<(String, String, Option<f64>, Option<i64>)> {
    let db = rusqlite::Connection::open(state.join("ledger.db")).unwrap();
    let mut st = db
        .prepare("SELECT key, status, speedup, runs FROM decisions ORDER BY key")
        .unwrap();
    st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .map(|r| r.unwrap())
        .collect()
}

/// Every backend runs under Slurm: a replay tune whose lane is a job step (the worker builds
/// the replay backend from its `Init` line and opens the simulated GPU on the node) decides
/// exactly as the same tune on a local lane. Needs Slurm (`.ci/slurm-up`): fails without it.
#[test]
fn replay_in_a_slurm_step_decides_as_a_local_lane() {
    let o = Command::new("sinfo").args(["-h", "-o", "%P %a"]).output();
    assert!(
        matches!(&o, Ok(o) if o.status.success() && !o.stdout.is_empty()),
        "this test needs a running Slurm cluster (run .ci/slurm-up as root): {o:?}"
    );
    let t = tempfile::tempdir().unwrap();
    tree(t.path());
    let cap = tempfile::tempdir().unwrap();
    write_perf_lab(&cap.path().join("cap"), &scale_spec());
    let snap = cap.path().join("cap").display().to_string();
    let envs = [
        ("HIP_UNROLL_HSA_RUNTIME", fakes().vmem.display().to_string()),
        (
            "FAKE_HSA_KERNARG_SIZE",
            kernel_meta(SCALE).kernarg_segment_size.to_string(),
        ),
    ];
    let args = |state: &Path| -> Vec<String> {
        [
            "tune",
            "--backend",
            "replay",
            "--snapshot",
            &snap,
            "--factors",
            "2,4",
            "--dry-run",
            "--format",
            "json",
            "--state",
            state.to_str().unwrap(),
        ]
        .map(String::from)
        .to_vec()
    };
    let local = tempfile::tempdir().unwrap();
    let mut c = Command::new(BIN);
    c.args(args(local.path())).current_dir(t.path());
    for (k, v) in &envs {
        c.env(k, v);
    }
    let o = c.output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let reference = ledger_decisions(local.path());
    assert!(reference.len() >= 8, "{reference:?}");

    let slurm = tempfile::tempdir().unwrap();
    let mut c = Command::new("salloc");
    c.args(["-N1", "-n1", "--gres=gpu:1", BIN])
        .args(&args(slurm.path())[..])
        .args(["--executor", "slurm", "--lanes", "1"])
        .current_dir(t.path());
    for (k, v) in &envs {
        c.env(k, v);
    }
    let o = c.output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(ledger_decisions(slurm.path()), reference, "{}", stderr(&o));
}
