//! End-to-end tests of the bare-parse baseline binary: counts, error files, lists, exit codes.

use std::path::Path;
use std::process::Command;

fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_bare-parse"))
        .args(args)
        .output()
        .expect("runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn field(stdout: &str, key: &str) -> u64 {
    stdout
        .split_whitespace()
        .find_map(|kv| kv.strip_prefix(&format!("{key}=")))
        .unwrap_or_else(|| panic!("no {key}= in {stdout:?}"))
        .parse::<f64>()
        .expect("number") as u64
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_str().unwrap().to_string()
}

const GOOD: &str =
    "__global__ void k(float* a, int n) {\n  for (int i = 0; i < n; ++i) a[i] += 1.0f;\n}\n";
const BAD: &str = "__global__ void k(float* a { for (;; }\n";

#[test]
fn counts_files_bytes_nodes_and_errors() {
    let dir = tempfile::tempdir().unwrap();
    let good = write(dir.path(), "good.hip", GOOD);
    let bad = write(dir.path(), "bad.cu", BAD);
    let (rc, out, err) = run(&[&good, &bad]);
    assert_eq!(rc, 0, "{err}");
    assert_eq!(field(&out, "files"), 2);
    assert_eq!(field(&out, "bytes"), (GOOD.len() + BAD.len()) as u64);
    assert_eq!(field(&out, "files_with_errors"), 1);
    // A kernel with a loop has dozens of nodes; the count must reflect the parse.
    let (_, one, _) = run(&[&good]);
    assert!(field(&one, "nodes") > 20, "{one}");
    assert!(field(&out, "nodes") > field(&one, "nodes"));
}

#[test]
fn walks_directories_by_extension_and_reads_lists() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.cu", GOOD);
    write(dir.path(), "b.cuh", GOOD);
    write(dir.path(), "notes.txt", "not code");
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    write(&dir.path().join("sub"), "c.hpp", GOOD);
    let (rc, out, _) = run(&[dir.path().to_str().unwrap()]);
    assert_eq!(rc, 0);
    assert_eq!(field(&out, "files"), 3);

    let a = dir.path().join("a.cu");
    let list = write(
        dir.path(),
        "list.txt",
        &format!("{}\n\n{}\n", a.display(), a.display()),
    );
    let (rc, out, _) = run(&["--list", &list]);
    assert_eq!(rc, 0);
    assert_eq!(field(&out, "files"), 2);
    let (rc, out, _) = run(&["--quiet", "--list", &list]);
    assert_eq!((rc, out.as_str()), (0, ""));
}

#[test]
fn usage_and_io_errors_exit_2() {
    let (rc, _, err) = run(&[]);
    assert_eq!(rc, 2);
    assert!(err.contains("no input files"), "{err}");
    let (rc, _, err) = run(&["/nonexistent/file.cu"]);
    assert_eq!(rc, 2);
    assert!(err.contains("/nonexistent/file.cu"), "{err}");
    let (rc, _, err) = run(&["--list"]);
    assert_eq!(rc, 2);
    assert!(err.contains("--list needs a FILE"), "{err}");
}
