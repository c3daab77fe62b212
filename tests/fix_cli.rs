//! End-to-end tests of `hip-unroll check --fix`, `--unsafe-fixes` and `--diff` on copies of the
//! fix fixtures of `testdata/fix/` (written files, exit codes, diffs, SARIF and JSON fixes).

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_hip-unroll");

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn fixture(name: &str) -> PathBuf {
    root().join("testdata/fix/wave-size").join(name)
}

fn run_in(cwd: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir(cwd)
        .env("NO_COLOR", "1")
        .output()
        .expect("run hip-unroll")
}

fn code(o: &Output) -> i32 {
    o.status.code().expect("exit code")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A temporary directory holding a copy of fixture `name` as `k.cu`.
fn copy(name: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("k.cu");
    std::fs::copy(fixture(name), &path).unwrap();
    (dir, path)
}

fn fixed_text(name: &str) -> Vec<u8> {
    std::fs::read(fixture(&name.replace(".cu", ".fixed.cu"))).unwrap()
}

#[test]
fn unsafe_fixes_write_the_fixed_text_and_exit_0_when_nothing_remains() {
    let (dir, path) = copy("reduction.cu");
    let before = run_in(dir.path(), &["check", "k.cu"]);
    assert_eq!(code(&before), 1, "wave-size warnings before fixing");
    let o = run_in(dir.path(), &["check", "--unsafe-fixes", "k.cu"]);
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    assert!(
        stderr(&o).contains("fixed 2 findings in 1 file"),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read(&path).unwrap(), fixed_text("reduction.cu"));
    // Idempotent: a second run finds nothing to fix and leaves the bytes alone.
    let again = run_in(dir.path(), &["check", "--fix", "--unsafe-fixes", "k.cu"]);
    assert_eq!(code(&again), 0);
    assert!(stderr(&again).contains("fixed 0 findings in 0 files"));
    assert_eq!(std::fs::read(&path).unwrap(), fixed_text("reduction.cu"));
}

#[test]
fn fix_alone_applies_no_unsafe_fix_and_says_how_many_wait() {
    let (dir, path) = copy("shuffle_width.cu");
    let src = std::fs::read(&path).unwrap();
    let o = run_in(dir.path(), &["check", "--fix", "k.cu"]);
    assert_eq!(code(&o), 1, "the findings remain");
    assert_eq!(std::fs::read(&path).unwrap(), src, "nothing written");
    assert!(
        stdout(&o).contains("; 3 unsafe fixes available with --unsafe-fixes\n"),
        "the human summary says so too: {}",
        stdout(&o)
    );
    assert!(
        stderr(&o)
            .contains("fixed 0 findings in 0 files; 3 unsafe fixes available with --unsafe-fixes"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn remaining_findings_are_reported_after_fixing() {
    let (dir, path) = copy("mixed.cu");
    let o = run_in(
        dir.path(),
        &["check", "--unsafe-fixes", "--format", "json", "k.cu"],
    );
    assert_eq!(
        code(&o),
        1,
        "`#define WARP_SIZE 32` has no fix and is still a warning"
    );
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let d = v["diagnostics"].as_array().unwrap();
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(
        (d[0]["line"].as_u64(), d[0]["rule"].as_str()),
        (Some(3), Some("wave-size"))
    );
    assert!(d[0].get("fix").is_none());
    assert_eq!(std::fs::read(&path).unwrap(), fixed_text("mixed.cu"));
    // The fixed file is what the JSON describes: checking it again gives the same report.
    let again = run_in(dir.path(), &["check", "--format", "json", "k.cu"]);
    assert_eq!(again.stdout, o.stdout);
}

#[test]
fn diff_writes_nothing_and_exits_1_when_a_file_would_change() {
    let (dir, path) = copy("mixed.cu");
    let src = std::fs::read(&path).unwrap();
    let mtime = std::fs::metadata(&path).unwrap().modified().unwrap();
    let o = run_in(dir.path(), &["check", "--diff", "--unsafe-fixes", "k.cu"]);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    let diff = stdout(&o);
    assert!(diff.starts_with("--- k.cu\n+++ k.cu\n@@ "), "{diff}");
    assert!(
        diff.contains("-  x += __shfl_xor_sync(0xffffffff, x, 1, 32);\n+  x += __shfl_xor_sync(0xffffffffffffffffULL, x, 1, warpSize);\n"),
        "{diff}"
    );
    assert!(
        stderr(&o).contains("would fix 4 findings in 1 file"),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read(&path).unwrap(), src, "--diff writes nothing");
    assert_eq!(std::fs::metadata(&path).unwrap().modified().unwrap(), mtime);
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "no stray file"
    );
    // Safe fixes only: nothing to show, exit 0.
    let o = run_in(dir.path(), &["check", "--diff", "k.cu"]);
    assert_eq!((code(&o), stdout(&o).as_str()), (0, ""));
    assert!(
        stderr(&o).contains("4 unsafe fixes available"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn diff_and_output_file_conflict() {
    let (dir, _) = copy("mixed.cu");
    let o = run_in(dir.path(), &["check", "--diff", "-o", "r.txt", "k.cu"]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
}

#[test]
fn json_fix_field_only_on_fixable_diagnostics() {
    let o = run_in(
        &root(),
        &[
            "check",
            "--format",
            "json",
            "testdata/fix/wave-size/mixed.cu",
        ],
    );
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let d = v["diagnostics"].as_array().unwrap();
    let fixes: Vec<(u64, bool)> = d
        .iter()
        .map(|d| (d["line"].as_u64().unwrap(), d.get("fix").is_some()))
        .collect();
    assert_eq!(
        fixes,
        vec![(3, false), (7, true), (7, true), (9, true), (9, true)]
    );
    let f = &d[1]["fix"];
    assert_eq!(f["applicability"], "unsafe");
    let e = &f["edits"][0];
    let src = std::fs::read(fixture("mixed.cu")).unwrap();
    let (s, t) = (
        e["start"].as_u64().unwrap() as usize,
        e["end"].as_u64().unwrap() as usize,
    );
    assert_eq!(&src[s..t], b"0xffffffff");
    assert_eq!(e["content"], "0xffffffffffffffffULL");
    // A file without fixable findings has no `fix` key at all.
    let o = run_in(
        &root(),
        &[
            "check",
            "--format",
            "json",
            "testdata/cli/blocked.cu",
            "--select",
            "unroll-blocked",
        ],
    );
    assert!(!stdout(&o).contains("\"fix\""), "{}", stdout(&o));
}

#[test]
fn sarif_carries_fixes_that_reproduce_the_fixed_file() {
    let o = run_in(
        &root(),
        &[
            "check",
            "--format",
            "sarif",
            "testdata/fix/wave-size/mixed.cu",
        ],
    );
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let results = v["runs"][0]["results"].as_array().unwrap();
    let mut src = std::fs::read(fixture("mixed.cu")).unwrap();
    let mut reps: Vec<(usize, usize, String)> = Vec::new();
    for r in results {
        for fix in r["fixes"].as_array().into_iter().flatten() {
            assert!(!fix["description"]["text"].as_str().unwrap().is_empty());
            let change = &fix["artifactChanges"][0];
            assert_eq!(
                change["artifactLocation"]["uri"],
                "testdata/fix/wave-size/mixed.cu"
            );
            for rep in change["replacements"].as_array().unwrap() {
                reps.push((
                    rep["deletedRegion"]["byteOffset"].as_u64().unwrap() as usize,
                    rep["deletedRegion"]["byteLength"].as_u64().unwrap() as usize,
                    rep["insertedContent"]["text"].as_str().unwrap().to_string(),
                ));
            }
        }
    }
    assert_eq!(reps.len(), 4);
    reps.sort();
    for (off, len, text) in reps.into_iter().rev() {
        src.splice(off..off + len, text.into_bytes());
    }
    assert_eq!(src, fixed_text("mixed.cu"));
    insta::assert_snapshot!(
        "sarif_fixes",
        serde_json::to_string_pretty(results).unwrap()
    );
}
