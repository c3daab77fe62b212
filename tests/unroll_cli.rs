//! End-to-end tests of `hip-unroll unroll`: the real binary on `testdata/transforms` fixtures
//! and on files written to temp dirs (outputs, atomic writes and permissions, diff, exit
//! codes, guards and `--force`, CRLF, and `--verify` with a real hipcc compile).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_hip-unroll");

fn testdata(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/transforms")
        .join(name)
}

fn run(args: &[&str]) -> Output {
    Command::new(BIN)
        .arg("unroll")
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .expect("run hip-unroll")
}

fn code(o: &Output) -> i32 {
    o.status.code().expect("exit code")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

const KERNEL: &str = "__global__ void k(float* a, int n) {\n    for (int i = 0; i < n; ++i) {\n        a[i] = 1.0f;\n    }\n}\n";

fn temp_kernel(text: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("k.cu");
    std::fs::write(&p, text).unwrap();
    (dir, p)
}

#[test]
fn stdout_matches_the_pragma_fixture() {
    let src = testdata("pragma_insert.cu");
    let o = run(&[src.to_str().unwrap(), "--loop", "4", "--factor", "4"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(
        o.stdout,
        std::fs::read(testdata("pragma_insert.fixed.cu")).unwrap()
    );
}

#[test]
fn manual_by_id_matches_the_fixture() {
    let src = testdata("manual_by_id.cu");
    let o = run(&[
        src.to_str().unwrap(),
        "--loop",
        "two:1",
        "--factor",
        "2",
        "--mode",
        "manual",
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(
        o.stdout,
        std::fs::read(testdata("manual_by_id.fixed.cu")).unwrap()
    );
}

#[test]
fn in_place_keeps_permissions_and_crlf() {
    let (_d, p) = temp_kernel(&KERNEL.replace('\n', "\r\n"));
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o754)).unwrap();
    let o = run(&[
        p.to_str().unwrap(),
        "--loop",
        "2",
        "--factor",
        "2",
        "--mode",
        "manual",
        "--in-place",
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(o.stdout.is_empty());
    let new = std::fs::read_to_string(&p).unwrap();
    assert!(new.contains("i += 2) {\r\n"), "{new}");
    assert!(
        !new.replace("\r\n", "").contains('\n'),
        "a bare LF was written"
    );
    assert_eq!(
        std::fs::metadata(&p).unwrap().permissions().mode() & 0o777,
        0o754
    );
    // Nothing but the file itself is left in the directory (no temp files).
    assert_eq!(std::fs::read_dir(p.parent().unwrap()).unwrap().count(), 1);
}

#[test]
fn output_file_gets_the_input_permissions() {
    let (d, p) = temp_kernel(KERNEL);
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o640)).unwrap();
    let out = d.path().join("out.cu");
    let o = run(&[
        p.to_str().unwrap(),
        "--loop",
        "2",
        "--factor",
        "8",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(std::fs::read_to_string(&out)
        .unwrap()
        .contains("    #pragma unroll 8\n    for (int i"));
    assert_eq!(
        std::fs::metadata(&out).unwrap().permissions().mode() & 0o777,
        0o640
    );
    assert_eq!(
        std::fs::read_to_string(&p).unwrap(),
        KERNEL,
        "input changed"
    );
}

#[test]
fn diff_is_a_unified_diff() {
    let (_d, p) = temp_kernel(KERNEL);
    let o = run(&[
        p.to_str().unwrap(),
        "--loop",
        "2",
        "--factor",
        "4",
        "--diff",
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let out = String::from_utf8(o.stdout).unwrap();
    assert!(out.starts_with("--- "), "{out}");
    assert!(out.contains("@@ -1,4 +1,5 @@"), "{out}");
    assert!(out.contains("\n+    #pragma unroll 4\n"), "{out}");
    assert_eq!(std::fs::read_to_string(&p).unwrap(), KERNEL);
}

#[test]
fn pragma_twice_is_idempotent_in_place() {
    let (_d, p) = temp_kernel(KERNEL);
    for _ in 0..2 {
        let o = run(&[
            p.to_str().unwrap(),
            "--loop",
            "k:0",
            "--factor",
            "4",
            "--in-place",
        ]);
        assert_eq!(code(&o), 0, "{}", stderr(&o));
    }
    assert_eq!(
        std::fs::read_to_string(&p)
            .unwrap()
            .matches("#pragma unroll 4")
            .count(),
        1
    );
}

#[test]
fn refusal_exits_1_with_the_reason() {
    let src = testdata("refuse_break.cu");
    // Without --force the early-exit guard already blocks it (also exit 1).
    let o = run(&[
        src.to_str().unwrap(),
        "--loop",
        "4",
        "--factor",
        "4",
        "--mode",
        "manual",
    ]);
    assert_eq!(code(&o), 1);
    assert!(
        stderr(&o).contains("blocked by early-exit"),
        "{}",
        stderr(&o)
    );
    let o = run(&[
        src.to_str().unwrap(),
        "--loop",
        "4",
        "--factor",
        "4",
        "--mode",
        "manual",
        "--force",
    ]);
    assert_eq!(code(&o), 1);
    assert!(o.stdout.is_empty());
    let e = stderr(&o);
    assert!(
        e.contains("break-leaves-loop") && e.contains("`break` at line 5 leaves the loop"),
        "{e}"
    );
}

#[test]
fn force_never_overrides_a_correctness_refusal() {
    let src = testdata("refuse_writes_induction_variable.cu");
    let o = run(&[
        src.to_str().unwrap(),
        "--loop",
        "4",
        "--factor",
        "2",
        "--mode",
        "manual",
        "--force",
    ]);
    assert_eq!(code(&o), 1);
    assert!(stderr(&o).contains("writes-induction-variable"));
}

#[test]
fn guard_blocks_unless_forced() {
    let text = "__global__ void k(float* a, int n) {\n    for (int i = 0; i < n; ++i) {\n        a[i] = 1.0f;\n        __syncthreads();\n    }\n}\n";
    let (_d, p) = temp_kernel(text);
    let o = run(&[p.to_str().unwrap(), "--loop", "2", "--factor", "2"]);
    assert_eq!(code(&o), 1);
    assert!(stderr(&o).contains("blocked by barrier"), "{}", stderr(&o));
    let o = run(&[
        p.to_str().unwrap(),
        "--loop",
        "2",
        "--factor",
        "2",
        "--force",
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("#pragma unroll 2"));
}

#[test]
fn bad_arguments_exit_2() {
    let (_d, p) = temp_kernel(KERNEL);
    let f = p.to_str().unwrap();
    for (args, needle) in [
        (vec![f, "--loop", "2", "--factor", "0"], "at least 1"),
        (
            vec![f, "--loop", "2", "--factor", "4294967296"],
            "at most 4294967295 (got 4294967296)",
        ),
        (
            vec![f, "--loop", "3", "--factor", "2"],
            "no loop starts on line 3",
        ),
        (
            vec![f, "--loop", "nope:0", "--factor", "2"],
            "no function named `nope`",
        ),
        (vec![f, "--loop", "k:7", "--factor", "2"], "has no loop 7"),
        (
            vec![f, "--loop", "k:x", "--factor", "2"],
            "neither a line number",
        ),
        (
            vec!["/nonexistent/x.cu", "--loop", "2", "--factor", "2"],
            "cannot read",
        ),
        (
            vec![f, "--loop", "2", "--factor", "2", "--mode", "sideways"],
            "invalid value",
        ),
    ] {
        let o = run(&args);
        assert_eq!(code(&o), 2, "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(needle), "{args:?}: {}", stderr(&o));
        assert!(o.stdout.is_empty());
    }
}

/// `--verify` compiles both versions with hipcc for gfx90a and compares kernel signatures.
#[test]
fn verify_compiles_both_and_accepts_an_unchanged_signature() {
    let (_d, p) = temp_kernel(&format!("#include <hip/hip_runtime.h>\n{KERNEL}"));
    let o = run(&[
        p.to_str().unwrap(),
        "--loop",
        "3",
        "--factor",
        "4",
        "--mode",
        "manual",
        "--verify",
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("i += 4"));
    // No temporary variant is left beside the source.
    assert_eq!(std::fs::read_dir(p.parent().unwrap()).unwrap().count(), 1);
}

/// A reader that closes the pipe early (`| head`) ends the output quietly: exit 0, no
/// "Broken pipe" error, no panic. The file is padded past the pipe buffer so the write fails.
#[test]
fn output_into_a_closed_pipe_is_quiet() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("big.cu");
    let mut text = String::from(
        "__global__ void k(float* a, int n) {\n  for (int i = 0; i < n; ++i) {\n    a[i] += 1.0f;\n  }\n}\n",
    );
    for i in 0..20_000 {
        text.push_str(&format!(
            "// padding line {i} so that the output exceeds a pipe buffer\n"
        ));
    }
    std::fs::write(&src, text).unwrap();
    for mode in ["pragma", "manual"] {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_hip-unroll"))
            .args([
                "unroll",
                src.to_str().unwrap(),
                "--loop",
                "2",
                "--factor",
                "4",
                "--mode",
                mode,
            ])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{mode}: {err}");
        assert!(err.is_empty(), "{mode}: {err}");
    }
}
