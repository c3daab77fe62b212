//! `hip-unroll tune --plan` (issue 28 item 3): what a tune would do, printed before any build or
//! GPU time. On the tiny tree of the tune tests (before a tune: everything to measure; after a
//! `--dry-run` tune with the same settings: everything reused, nothing to measure), on the
//! example repository testdata/tune with a build that would fail and a PATH without any
//! compiler, and with several launch specs on testdata/bench: it compiles and runs nothing and
//! writes nothing (no state directory, no ledger, no cache entry).

#[path = "support/tiny_tree.rs"]
mod tiny_tree;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_hip-unroll");

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn run(dir: &Path, args: &[String], path: Option<&Path>) -> Output {
    let mut c = Command::new(BIN);
    c.args(args).current_dir(dir);
    if let Some(p) = path {
        c.env("PATH", p);
    }
    c.output().unwrap()
}

fn json(o: &Output) -> Value {
    assert!(
        o.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap()
}

/// Every candidate's status, as `loop mode factor status`.
fn statuses(plan: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for l in plan["loops"].as_array().unwrap() {
        for c in l["candidates"].as_array().unwrap() {
            out.push(format!(
                "{} {} {} {}",
                l["loop"].as_str().unwrap(),
                c["mode"].as_str().unwrap(),
                c["factor"],
                c["status"].as_str().unwrap()
            ));
        }
    }
    out
}

/// Every path under `d`.
fn walk(d: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(d).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        }
        out.push(p);
    }
    out.sort();
    out
}

#[test]
fn before_a_tune_everything_is_to_measure_after_it_everything_is_reused() {
    let dir = tiny_tree::tiny(false);
    let state = dir.path().join("state");
    let mut args = tiny_tree::tune_args(&state);
    args.push("--dry-run".into());
    let mut plan = args.clone();
    plan.retain(|a| a != "--dry-run");
    plan.push("--plan".into());
    let before = walk(dir.path());
    let p = json(&run(dir.path(), &plan, None));
    assert_eq!(walk(dir.path()), before, "the plan wrote something");
    assert!(!state.exists());
    for s in statuses(&p) {
        assert!(s.ends_with(" to-measure"), "{s}");
    }
    assert_eq!(statuses(&p).len(), 6, "{p:#}");
    let e = &p["estimate"];
    assert_eq!(e["variants"], 6);
    assert_eq!(e["comparisons"], 6);
    assert_eq!(e["reused"], 0);
    assert_eq!(e["baselines"], 1);
    // builds = comparisons + 2 x baselines; launches from A + C x 2 x (min_runs + 1).
    assert_eq!(e["builds"], 8);
    let min_runs = 10;
    assert_eq!(
        e["launches_min"],
        (2 * min_runs + 1) + 6 * 2 * (min_runs + 1)
    );
    assert_eq!(p["settings_source"], "none");
    let kernels: Vec<&str> = p["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["kernel"].as_str().unwrap())
        .collect();
    assert_eq!(kernels.len(), 3, "{kernels:?}");

    // The tune itself, then the same plan: every variant decided in the ledger.
    let o = run(dir.path(), &args, None);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let after = json(&run(dir.path(), &plan, None));
    let s = statuses(&after);
    assert_eq!(s.len(), 6, "{after:#}");
    assert!(s.iter().all(|x| x.ends_with(" reused")), "{s:?}");
    assert_eq!(after["estimate"]["variants"], 0);
    assert_eq!(after["estimate"]["reused"], 6);
    assert_eq!(after["settings_source"], "computed");
    // The reused decisions are the tune's: fast's loop x4 accepted, flat's rejected.
    let decision = |lp: &str, f: u64| -> String {
        after["loops"]
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["loop"] == lp)
            .unwrap()["candidates"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["factor"] == f)
            .unwrap()["decision"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(decision("fast:0", 4), "accepted");
    assert_eq!(decision("flat:0", 2), "rejected");
    // Human text: the same plan in words.
    let mut human = plan.clone();
    let at = human.iter().position(|a| a == "json").unwrap();
    human[at] = "human".into();
    let o = run(dir.path(), &human, None);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("nothing was compiled or run"), "{text}");
    assert!(text.contains("estimate: 0 variants to measure"), "{text}");
}

#[test]
fn the_example_repository_is_planned_with_a_failing_build_and_no_compiler_on_path() {
    let d = tempfile::tempdir().unwrap();
    for e in std::fs::read_dir(repo().join("testdata/tune")).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), d.path().join(e.file_name())).unwrap();
    }
    let empty = tempfile::tempdir().unwrap();
    let args: Vec<String> = [
        "tune", "--plan", "--build", "exit 1", "--run", "./app", "--format", "json", ".",
    ]
    .map(String::from)
    .to_vec();
    let before = walk(d.path());
    let p = json(&run(d.path(), &args, Some(empty.path())));
    assert_eq!(walk(d.path()), before, "the plan wrote something");
    let loops = p["loops"].as_array().unwrap();
    let tile = loops.iter().find(|l| l["file"] == "tile.cu").unwrap();
    assert_eq!(tile["status"], "blocked");
    assert!(p["estimate"]["variants"].as_u64().unwrap() > 0);
    assert!(p.get("specs").is_none());
}

#[test]
fn several_specs_on_testdata_bench_each_loop_with_its_judges() {
    let d = tempfile::tempdir().unwrap();
    let cp = Command::new("cp")
        .arg("-r")
        .arg(repo().join("testdata/bench"))
        .arg(d.path())
        .status()
        .unwrap();
    assert!(cp.success());
    let tree = d.path().join("bench");
    let empty = tempfile::tempdir().unwrap();
    let args: Vec<String> = [
        "tune",
        "--plan",
        "--backend",
        "bench",
        "--spec",
        "cuda/*.toml",
        "--spec",
        "dot.toml",
        "--spec",
        "stencil.toml",
        "--format",
        "json",
        ".",
    ]
    .map(String::from)
    .to_vec();
    let before = walk(&tree);
    let p = json(&run(&tree, &args, Some(empty.path())));
    assert_eq!(walk(&tree), before, "the plan wrote something");
    let specs: Vec<&str> = p["specs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["spec"].as_str().unwrap())
        .collect();
    assert_eq!(
        specs,
        [
            "cuda/adamw.toml",
            "cuda/gelu.toml",
            "cuda/layernorm.toml",
            "cuda/sgemm.toml",
            "cuda/softmax.toml",
            "dot.toml",
            "stencil.toml"
        ]
    );
    let loops = p["loops"].as_array().unwrap();
    let dot = loops.iter().find(|l| l["file"] == "dot.cu").unwrap();
    assert_eq!(dot["specs"], serde_json::json!(["dot.toml"]));
    // A kernel no spec launches: its loops are not tuned.
    let unrolled = loops
        .iter()
        .find(|l| l["file"] == "dot.unrolled.cu")
        .unwrap();
    assert_eq!(unrolled["status"], "not-run", "{unrolled:#}");
    assert!(p["estimate"]["comparisons"].as_u64().unwrap() > 0);
    assert_eq!(p["backend"], "bench");
}
