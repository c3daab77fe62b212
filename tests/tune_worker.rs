//! `hip-unroll tune-worker` (one Slurm lane) builds every backend kind from the spec of its
//! `Init` line: the command backend says it is ready; on this machine (no GPU, no ROCm
//! profiler) rocprofv3, bench and replay each answer `failed` with their backend's own one
//! line (rocprofv3 not on PATH; the runner's `no GPU`; the HSA runtime's `no GPU agent
//! found`), and the worker exits 2. The real binary, the real HIP/CUDA/HSA libraries.
//! Needs: libhsa-runtime64, no GPU device node (a counted skip otherwise).
#![allow(clippy::print_stdout, clippy::print_stderr, clippy::exit)]

#[path = "../replay/tests/common/mod.rs"]
mod common;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use tuner::backend::spec::BackendSpec;
use tuner::executor::worker::{CompileSpec, Init, Out};

const BIN: &str = env!("CARGO_BIN_EXE_hip-unroll");

const SPEC: &str = "version = 1\nsource = \"k.cu\"\nkernel = \"k\"\ngrid = [1]\nblock = [64]\n\n[[args]]\nname = \"out\"\nbuffer = \"i32\"\nlength = 64\noutput = \"exact\"\n";

/// A tree holding a bench kernel, its launch spec and a HIP kernel.
fn tree(dir: &Path) {
    std::fs::write(
        dir.join("k.cu"),
        "__global__ void k(int* out) {\n  for (int i = 0; i < 64; ++i) out[i] = i;\n}\n",
    )
    .unwrap();
    std::fs::write(dir.join("k.toml"), SPEC).unwrap();
}

fn init(root: &Path, backend: BackendSpec) -> Init {
    let state = root.join(".hip-unroll");
    let t = tuner::workcopy::Tree::scan(root, std::slice::from_ref(&state)).unwrap();
    Init {
        lane: 0,
        root: t.root.clone(),
        tree_hash: t.hash.clone(),
        state_dir: state.clone(),
        slots_dir: state.join("slots").join("step-0"),
        records_dir: None,
        plan: tuner::stats::Plan {
            min_runs: 2,
            max_runs: 4,
            step: 1,
            confidence: 0.9,
            min_speedup: 0.02,
        },
        jobs: 1,
        compile: CompileSpec {
            command: codeobj::compile::DEFAULT_COMMAND.into(),
            arch: "gfx90a".into(),
            cache_dir: state.join("objects"),
            args: Vec::new(),
            timeout_ms: 60_000,
            max_occupancy_loss: None,
        },
        backend,
        device: None,
    }
}

/// Run a worker on `init` with its input then closed: its first output line and exit status.
fn first_answer(init: &Init) -> (Out, Option<i32>, String) {
    let mut child = Command::new(BIN)
        .arg("tune-worker")
        // No ROCm profiler, no simulated runtime: this machine as it is.
        .env("PATH", "/usr/bin:/bin")
        .env_remove("HIP_UNROLL_HSA_RUNTIME")
        .env_remove("HSA_TOOLS_LIB")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "{}", serde_json::to_string(init).unwrap()).unwrap();
    drop(stdin);
    let o = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    let first = stdout.lines().next().unwrap_or_default();
    let out: Out = serde_json::from_str(first)
        .unwrap_or_else(|e| panic!("not a protocol line ({e}): {stdout}"));
    (
        out,
        o.status.code(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn failed(out: &Out) -> &str {
    match out {
        Out::Failed(m) => m,
        other => panic!("expected `failed`, got {other:?}"),
    }
}

/// Whether this machine shows no GPU device node; a counted skip (`testenv`) otherwise.
fn no_gpu_here() -> bool {
    !testenv::lacks(
        "no-gpu",
        !testenv::has_gpu_device(),
        "a GPU device node exists: the no-GPU answers of the worker do not apply",
    )
}

#[test]
fn the_worker_builds_every_backend_kind_from_its_init_line() {
    let t = tempfile::tempdir().unwrap();
    tree(t.path());
    let root = t.path();

    // command: ready, with the backend's name and unit.
    let command = BackendSpec::Command {
        build: "true".into(),
        run: "true".into(),
        check: None,
        timeout_ms: 10_000,
        time_regex: Some("cost: ([0-9]+)".into()),
        regex_unit: "units".into(),
    };
    let (out, code, err) = first_answer(&init(root, command));
    match out {
        Out::Ready(info) => {
            assert_eq!(info.backend, "command");
            assert_eq!(info.unit, "units");
            assert!(info.fingerprint.is_empty());
        }
        other => panic!("expected ready, got {other:?}: {err}"),
    }
    assert_eq!(code, Some(0), "{err}");

    // rocprofv3: its preflight runs on the node and finds no profiler there.
    let rocprof = BackendSpec::Rocprofv3 {
        build: "true".into(),
        run: "true".into(),
        check: None,
        timeout_ms: 10_000,
        kernel_regex: None,
        path_kernels: ["k".to_string()].into(),
    };
    let (out, code, err) = first_answer(&init(root, rocprof));
    let m = failed(&out);
    assert!(m.starts_with("rocprofv3 is not on PATH"), "{m}");
    assert!(!m.contains('\n'), "{m}");
    assert_eq!(code, Some(2), "{err}");
    // The line goes to the coordinator over the protocol only (it prints it once).
    assert!(err.is_empty(), "{err}");

    if !no_gpu_here() {
        return;
    }
    // bench: the runner opens the step's device, and there is no GPU.
    let bench = BackendSpec::Bench {
        spec: root.join("k.toml"),
        root: root.to_path_buf(),
        arch: None,
        timeout_ms: 10_000,
        cache_dir: root.join(".hip-unroll/objects"),
        nvcc: None,
        gate_flags: Vec::new(),
    };
    let (out, code, err) = first_answer(&init(root, bench));
    let m = failed(&out);
    assert!(m.starts_with("no GPU"), "{m}");
    assert!(!m.contains('\n'), "{m}");
    assert_eq!(code, Some(2), "{err}");

    // replay: the real HSA runtime finds no GPU agent.
    let cap = tempfile::tempdir().unwrap();
    common::write_perf_lab(&cap.path().join("cap"), &common::scale_spec());
    let replay = BackendSpec::Replay {
        snapshot: cap.path().join("cap"),
        source: "k.cu".into(),
        timeout_ms: 10_000,
    };
    let (out, code, err) = first_answer(&init(root, replay));
    let m = failed(&out);
    assert!(m.starts_with("no GPU agent found"), "{m}");
    assert!(!m.contains('\n'), "{m}");
    assert_eq!(code, Some(2), "{err}");
}
