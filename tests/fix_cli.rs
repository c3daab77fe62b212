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

/// Three copies of `reduction.cu` (`a.cu`, `b.cu`, `c.cu`) in a temporary directory.
fn three() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for n in ["a.cu", "b.cu", "c.cu"] {
        std::fs::copy(fixture("reduction.cu"), dir.path().join(n)).unwrap();
    }
    dir
}

/// `check --unsafe-fixes a.cu b.cu c.cu`, stopped at the `n`-th file's test point between its
/// check and its rename; `edit` runs while it is stopped; then it goes on.
fn fix_stopped_at(dir: &Path, n: u32, edit: impl FnOnce()) -> Output {
    let c = Command::new(BIN)
        .args(["check", "--unsafe-fixes", "a.cu", "b.cu", "c.cu"])
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env(
            "HIP_UNROLL_TESTPOINT",
            format!("check.fix.before-rename=stop@{n}"),
        )
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stat = format!("/proc/{}/stat", c.id());
    let stopped = (0..12000).any(|_| {
        let s = std::fs::read_to_string(&stat).unwrap_or_default();
        let t = s
            .rsplit(')')
            .next()
            .is_some_and(|r| r.trim_start().starts_with('T'));
        if !t {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        t
    });
    assert!(stopped, "check never stopped at its test point");
    edit();
    // SAFETY: a signal to our own child.
    unsafe { libc::kill(c.id() as i32, libc::SIGCONT) };
    c.wait_with_output().unwrap()
}

fn errors(o: &Output) -> Vec<String> {
    stderr(o)
        .lines()
        .filter(|l| l.starts_with("error: "))
        .map(String::from)
        .collect()
}

/// An edit saved between a file's check and its rename is kept, the file is reported and the
/// exit status is 3; the other files are fixed.
#[test]
fn fix_never_overwrites_an_edit_saved_before_the_rename() {
    let dir = three();
    let b = dir.path().join("b.cu");
    let mut edited = std::fs::read_to_string(&b).unwrap();
    edited.push_str("// USER EDIT\n");
    let o = fix_stopped_at(dir.path(), 2, || std::fs::write(&b, &edited).unwrap());
    assert_eq!(code(&o), 3, "{}", stderr(&o));
    assert_eq!(
        errors(&o),
        ["error: b.cu: edited since check read it; its fixes were not written, it is left as saved"]
    );
    assert_eq!(std::fs::read_to_string(&b).unwrap(), edited);
    for n in ["a.cu", "c.cu"] {
        assert_eq!(
            std::fs::read(dir.path().join(n)).unwrap(),
            fixed_text("reduction.cu"),
            "{n}"
        );
    }
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(left.len(), 3, "no temporary file left");
}

/// An edit of a file already written, saved while the others are written, is found by the
/// check of the whole set at the end: reported, exit 3, the edit kept.
#[test]
fn fix_rechecks_the_whole_set_after_writing() {
    let dir = three();
    let a = dir.path().join("a.cu");
    let o = fix_stopped_at(dir.path(), 3, || {
        std::fs::write(&a, "// rewritten by the user\n").unwrap()
    });
    assert_eq!(code(&o), 3, "{}", stderr(&o));
    assert_eq!(
        errors(&o),
        ["error: a.cu: edited while check --fix ran, after its fixes were written; left as saved"]
    );
    assert_eq!(
        std::fs::read_to_string(&a).unwrap(),
        "// rewritten by the user\n"
    );
    assert_eq!(
        std::fs::read(dir.path().join("c.cu")).unwrap(),
        fixed_text("reduction.cu")
    );
}

/// `--fix` writes through a symbolic link (the link stays a link), and refuses a read-only or
/// hard-linked file with one line each (exit 2) while still fixing the others.
#[test]
fn fix_follows_links_and_refuses_read_only_and_hard_linked_files() {
    use std::os::unix::fs::PermissionsExt;
    let dir = three();
    let real = dir.path().join("real.cu");
    std::fs::copy(fixture("reduction.cu"), &real).unwrap();
    std::os::unix::fs::symlink("real.cu", dir.path().join("d.cu")).unwrap();
    std::fs::set_permissions(
        dir.path().join("a.cu"),
        std::fs::Permissions::from_mode(0o444),
    )
    .unwrap();
    std::fs::hard_link(dir.path().join("b.cu"), dir.path().join("b.other")).unwrap();
    let o = run_in(
        dir.path(),
        &["check", "--unsafe-fixes", "a.cu", "b.cu", "c.cu", "d.cu"],
    );
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert_eq!(
        errors(&o),
        [
            "error: a.cu: fixes not written: cannot write a.cu: the file is read-only for you (mode 0444); it is left as it was",
            "error: b.cu: fixes not written: cannot write b.cu: it has 2 hard links, and replacing it would leave the other names with the old content; it is left as it was",
        ]
    );
    let original = std::fs::read(fixture("reduction.cu")).unwrap();
    assert_eq!(std::fs::read(dir.path().join("a.cu")).unwrap(), original);
    assert_eq!(std::fs::read(dir.path().join("b.cu")).unwrap(), original);
    assert_eq!(
        std::fs::read(dir.path().join("c.cu")).unwrap(),
        fixed_text("reduction.cu")
    );
    assert_eq!(std::fs::read(&real).unwrap(), fixed_text("reduction.cu"));
    assert!(std::fs::symlink_metadata(dir.path().join("d.cu"))
        .unwrap()
        .file_type()
        .is_symlink());
}
