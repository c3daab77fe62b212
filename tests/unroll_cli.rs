//! End-to-end tests of `hip-unroll unroll`: the real binary on `testdata/transforms` fixtures
//! and on files written to temp dirs (outputs, atomic writes and permissions, diff, exit
//! codes, guards and `--force`, CRLF, and `--verify` with a real hipcc compile).
#![allow(clippy::print_stdout, clippy::print_stderr, clippy::exit)]

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
        // `--verify` keeps objects and logs in the compile cache: not the user's.
        .env(
            "HIP_UNROLL_CACHE_DIR",
            std::env::temp_dir().join("hip-unroll-unroll-cli-cache"),
        )
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

/// The transforms refuse a `while` loop by hand with a structured alternative; the binary, not
/// the library, words it as the flag to use.
#[test]
fn manual_refusal_of_a_while_loop_names_pragma_mode() {
    let (_dir, p) = temp_kernel(
        "__global__ void k(float* a, int n) {\n    int i = 0;\n    while (i < n) { a[i] *= 2.f; ++i; }\n}\n",
    );
    let o = run(&[
        p.to_str().unwrap(),
        "--loop",
        "k:0",
        "--factor",
        "2",
        "--mode",
        "manual",
    ]);
    assert_eq!(code(&o), 1);
    let e = stderr(&o);
    assert!(
        e.contains("this is a `while` loop (use --mode pragma) [not-a-for-loop]"),
        "{e}"
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
        // Only the notes of a manual unroll (the ids that moved), no error.
        assert!(err.lines().all(|l| l.contains(": note: ")), "{mode}: {err}");
    }
}

// ---------------------------------------------------------------- issue 9: identity and policy

/// The reproduction of issue 9: same-named kernels in two namespaces and two overloads; the
/// loops of `b::k` (barrier) and `over(int*, int)` (atomic) were rewritten by line because the
/// verdict was looked up by a `name:index` string that both namesakes shared.
const ISSUE9: &str = "namespace a { __global__ void k(float* x, int n) { for (int i = 0; i < n; ++i) { x[i] += 1.0f; } } }
namespace b { __global__ void k(float* x, int n) { for (int i = 0; i < n; ++i) { __syncthreads(); x[i] += 1.0f; } } }
__global__ void over(float* x, int n) { for (int i = 0; i < n; ++i) { x[i] += 1.0f; } }
__global__ void over(int* x, int n) { for (int i = 0; i < n; ++i) { atomicAdd(x, 1); } }
";

#[test]
fn issue9_blocked_loops_are_refused_by_id_and_by_line_in_both_modes() {
    let (_d, p) = temp_kernel(ISSUE9);
    let f = p.to_str().unwrap();
    for mode in ["pragma", "manual"] {
        for (r, rule, id) in [
            ("2", "barrier", "b::k:0"),
            ("b::k:0", "barrier", "b::k:0"),
            ("4", "atomic", "over(int*, int):0"),
            ("over(int*, int):0", "atomic", "over(int*, int):0"),
            ("over(int *,int):0", "atomic", "over(int*, int):0"),
        ] {
            let o = run(&[f, "--loop", r, "--factor", "4", "--mode", mode]);
            let e = stderr(&o);
            assert_eq!(code(&o), 1, "{mode} {r}: {e}");
            assert!(o.stdout.is_empty(), "{mode} {r}");
            assert!(
                e.contains(&format!("loop {id} is blocked by {rule}"))
                    && e.contains("[guard-blocked]"),
                "{mode} {r}: {e}"
            );
        }
        // The unblocked namesakes are rewritten.
        for (r, line) in [
            ("1", 1),
            ("a::k:0", 1),
            ("3", 3),
            ("over(float*, int):0", 3),
        ] {
            let o = run(&[f, "--loop", r, "--factor", "4", "--mode", mode]);
            assert_eq!(code(&o), 0, "{mode} {r}: {}", stderr(&o));
            let out = String::from_utf8_lossy(&o.stdout).into_owned();
            let changed: Vec<usize> = out
                .lines()
                .zip(ISSUE9.lines())
                .enumerate()
                .filter(|(_, (a, b))| a != b)
                .map(|(i, _)| i + 1)
                .collect();
            assert_eq!(changed.first(), Some(&line), "{mode} {r}: {out}");
        }
        // --force rewrites the blocked one.
        let o = run(&[
            f, "--loop", "b::k:0", "--factor", "4", "--mode", mode, "--force",
        ]);
        assert_eq!(code(&o), 0, "{mode}: {}", stderr(&o));
    }
    assert_eq!(
        std::fs::read_to_string(&p).unwrap(),
        ISSUE9,
        "input changed"
    );
}

#[test]
fn ambiguous_or_unknown_loops_exit_2_with_the_candidates() {
    let (_d, p) = temp_kernel(ISSUE9);
    let f = p.to_str().unwrap();
    for (r, needles) in [
        (
            "k:0",
            vec!["names several loops", "a::k:0 (line 1)", "b::k:0 (line 2)"],
        ),
        (
            "over:0",
            vec!["over(float*, int):0 (line 3)", "over(int*, int):0 (line 4)"],
        ),
        (
            "c::k:0",
            vec!["no function named `c::k`", "over(int*, int):0 (line 4)"],
        ),
        (
            "b::k:1",
            vec!["has no loop 1 (it has 1)", "b::k:0 (line 2)"],
        ),
        (
            "7",
            vec!["no loop starts on line 7", "over(int*, int):0 (line 4)"],
        ),
    ] {
        let o = run(&[f, "--loop", r, "--factor", "2"]);
        let e = stderr(&o);
        assert_eq!(code(&o), 2, "{r}: {e}");
        for n in needles {
            assert!(e.contains(n), "{r}: want {n:?} in {e}");
        }
    }
    let (_d2, p2) = temp_kernel(
        "__global__ void k(float* x) { for (int i = 0; i < 4; ++i) x[i] = 0; for (int j = 0; j < 4; ++j) x[j] = 1; }\n",
    );
    let o = run(&[p2.to_str().unwrap(), "--loop", "1", "--factor", "2"]);
    let e = stderr(&o);
    assert_eq!(code(&o), 2, "{e}");
    assert!(
        e.contains("several loops start on line 1")
            && e.contains("k:0 (line 1)")
            && e.contains("k:1 (line 1)"),
        "{e}"
    );
}

/// Suppressions quiet the lint; they never open a loop to rewriting (only --force does).
#[test]
fn suppressions_do_not_bypass_the_guard() {
    let text = "__global__ void k(float* a, int n) {\n    // hip-unroll: allow(barrier)\n    for (int i = 0; i < n; ++i) {\n        a[i] = 1.0f;\n        __syncthreads();\n    }\n}\n";
    let (_d, p) = temp_kernel(text);
    let check = Command::new(BIN)
        .args(["check", "--format", "json", p.to_str().unwrap()])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&check.stdout).unwrap();
    assert_eq!(
        v["files"][0]["functions"][0]["loops"][0]["verdict"],
        "candidate"
    );
    let o = run(&[p.to_str().unwrap(), "--loop", "3", "--factor", "2"]);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    assert!(stderr(&o).contains("blocked by barrier"), "{}", stderr(&o));
    let cfg = p.parent().unwrap().join("hip-unroll.toml");
    std::fs::write(&cfg, "[check]\nignore = [\"barrier\"]\n").unwrap();
    let o = run(&[
        p.to_str().unwrap(),
        "--loop",
        "3",
        "--factor",
        "2",
        "--mode",
        "manual",
    ]);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
}

/// A bare `#pragma unroll` (full unroll), `#pragma nounroll`, `unroll 1`, `clang loop
/// unroll_count(N)` and `unroll(disable)` are the author's decisions: refused in both modes
/// unless --force; a plain `#pragma unroll 4` is rewritten.
#[test]
fn user_decision_pragmas_are_not_replaced_without_force() {
    for pragma in [
        "#pragma unroll",
        "#pragma nounroll",
        "#pragma unroll 1",
        "#pragma unroll(1)",
        "#pragma clang loop unroll_count(4)",
        "#pragma clang loop unroll(disable)",
        "#pragma clang loop unroll(full)",
    ] {
        let text = format!(
            "__global__ void k(float* a, int n) {{\n    {pragma}\n    for (int i = 0; i < n; ++i) {{\n        a[i] = 1.0f;\n    }}\n}}\n"
        );
        let (_d, p) = temp_kernel(&text);
        let f = p.to_str().unwrap();
        for mode in ["pragma", "manual"] {
            let o = run(&[f, "--loop", "3", "--factor", "8", "--mode", mode]);
            let e = stderr(&o);
            assert_eq!(code(&o), 1, "{pragma} {mode}: {e}");
            assert!(
                e.contains("[user-pragma]") && e.contains(pragma) && e.contains("(line 2)"),
                "{pragma} {mode}: {e}"
            );
            let o = run(&[f, "--loop", "3", "--factor", "8", "--mode", mode, "--force"]);
            assert_eq!(code(&o), 0, "{pragma} {mode} --force: {}", stderr(&o));
        }
    }
    let text = "__global__ void k(float* a, int n) {\n    #pragma unroll 4\n    for (int i = 0; i < n; ++i) {\n        a[i] = 1.0f;\n    }\n}\n";
    let (_d, p) = temp_kernel(text);
    let o = run(&[p.to_str().unwrap(), "--loop", "3", "--factor", "8"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("    #pragma unroll 8\n    for"));
}

/// `#pragma unroll \` continued with `8` on the next line is a factor of 8 (it was read as a
/// full unroll): `check` reports `unroll 8`, and rewriting to 8 leaves the loop as it is.
#[test]
fn continued_pragma_is_read_whole() {
    let text = "__global__ void k(float* a) {\n#pragma unroll \\\n    8\n    for (int i = 0; i < 64; ++i) {\n        a[i] = 1.0f;\n    }\n}\n";
    let (_d, p) = temp_kernel(text);
    let check = Command::new(BIN)
        .args(["check", "--format", "json", p.to_str().unwrap()])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&check.stdout).unwrap();
    assert_eq!(
        v["files"][0]["functions"][0]["loops"][0]["unroll_pragma"],
        "unroll 8"
    );
    let o = run(&[p.to_str().unwrap(), "--loop", "4", "--factor", "2"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        out.contains("#pragma unroll 2\n    for") && !out.contains("    8\n"),
        "{out}"
    );
}

/// `--verify` honours `[compile] command` of hip-unroll.toml (as `pressure` does), and `-I`
/// lets a file that needs an include path verify.
#[test]
fn verify_uses_the_config_command_and_include_paths() {
    let dir = tempfile::tempdir().unwrap();
    let inc = dir.path().join("inc");
    std::fs::create_dir(&inc).unwrap();
    std::fs::write(inc.join("defs.h"), "#define SCALE 2.0f\n").unwrap();
    let src = dir.path().join("k.cu");
    std::fs::write(
        &src,
        "#include <hip/hip_runtime.h>\n#include \"defs.h\"\n__global__ void k(float* a, int n) {\n    for (int i = 0; i < n; ++i) {\n        a[i] = SCALE;\n    }\n}\n",
    )
    .unwrap();
    let f = src.to_str().unwrap();
    let args = [f, "--loop", "4", "--factor", "4", "--verify"];
    let o = run(&args);
    assert_eq!(code(&o), 2, "no include path: {}", stderr(&o));
    assert!(stderr(&o).contains("defs.h"), "{}", stderr(&o));
    let mut with_i = args.to_vec();
    with_i.extend(["-I", inc.to_str().unwrap()]);
    let o = run(&with_i);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("#pragma unroll 4"));
    // The config's command is used: a compiler that always fails shows up by name.
    std::fs::write(
        dir.path().join("hip-unroll.toml"),
        "[compile]\ncommand = \"/bin/false {src} -o {out}\"\n",
    )
    .unwrap();
    let o = run(&with_i);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(stderr(&o).contains("/bin/false"), "{}", stderr(&o));
    // Only the variant file and nothing else was ever left beside the source.
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(names.is_empty(), "{names:?}");
}

/// A write error names the user's path, not the internal temporary file.
#[test]
fn write_errors_name_the_users_path() {
    let d = tempfile::Builder::new()
        .prefix("hu-write")
        .tempdir()
        .unwrap();
    let p = d.path().join("k.cu");
    std::fs::write(&p, KERNEL).unwrap();
    let out = d.path().join("k.cu").join("out.cu"); // k.cu is a file, not a directory
    let o = run(&[
        p.to_str().unwrap(),
        "--loop",
        "2",
        "--factor",
        "2",
        "-o",
        out.to_str().unwrap(),
    ]);
    let e = stderr(&o);
    assert_eq!(code(&o), 2, "{e}");
    assert!(
        e.contains(&format!("cannot write {}", out.display())),
        "{e}"
    );
    assert!(!e.contains(".tmp") && !e.contains("at path"), "{e}");
    assert_eq!(e.lines().count(), 1, "{e}");
}

/// `--in-place` on another user's file in a writable directory keeps its owner and mode (as
/// root, who may give the file back); a read-only file (no write bit: the user's decision) is
/// refused even for root; a user who cannot write the file, or cannot keep its owner, is refused
/// and the file is left as it was.
#[test]
fn in_place_keeps_owner_and_mode_or_refuses() {
    use std::os::unix::fs::MetadataExt;
    let (d, p) = temp_kernel(KERNEL);
    let euid = std::fs::metadata(d.path()).unwrap().uid();
    if testenv::lacks(
        "root",
        euid == 0,
        "needs root to create another user's file",
    ) {
        return;
    }
    const NOBODY: u32 = 65534;
    std::os::unix::fs::chown(&p, Some(NOBODY), Some(NOBODY)).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o444)).unwrap();
    let args = [
        p.to_str().unwrap(),
        "--loop",
        "2",
        "--factor",
        "2",
        "--in-place",
    ];
    let o = run(&args);
    let e = stderr(&o);
    assert_eq!(code(&o), 2, "{e}");
    assert!(
        e.contains("read-only for you (mode 0444)") && e.contains("left as it was"),
        "{e}"
    );
    assert_eq!(std::fs::read_to_string(&p).unwrap(), KERNEL);
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o640)).unwrap();
    let o = run(&args);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let m = std::fs::metadata(&p).unwrap();
    assert_eq!(
        (m.uid(), m.gid(), m.mode() & 0o777),
        (NOBODY, NOBODY, 0o640)
    );
    assert!(std::fs::read_to_string(&p)
        .unwrap()
        .contains("#pragma unroll 2"));
    // As an unprivileged user in a world-writable directory: a root-owned file it may not
    // write is refused; one it may write but whose owner it cannot keep is refused too.
    if testenv::lacks(
        "setpriv",
        testenv::has_program("setpriv"),
        "util-linux `setpriv` is not installed: the unprivileged half is not run",
    ) {
        return;
    }
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    for (mode, needle) in [
        (0o444, "read-only for you"),
        (0o666, "another user (uid 0)"),
    ] {
        std::fs::write(&p, KERNEL).unwrap();
        std::os::unix::fs::chown(&p, Some(0), Some(0)).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
        let o = Command::new("setpriv")
            .args([
                "--reuid=65534",
                "--regid=65534",
                "--clear-groups",
                BIN,
                "unroll",
            ])
            .args([
                p.to_str().unwrap(),
                "--loop",
                "2",
                "--factor",
                "2",
                "--in-place",
            ])
            .output()
            .unwrap();
        let e = stderr(&o);
        assert_eq!(code(&o), 2, "{mode:o}: {e}");
        assert!(
            e.contains(needle) && e.contains("left as it was"),
            "{mode:o}: {e}"
        );
        let m = std::fs::metadata(&p).unwrap();
        assert_eq!((m.uid(), m.mode() & 0o777), (0, mode), "{mode:o}");
        assert_eq!(std::fs::read_to_string(&p).unwrap(), KERNEL);
        assert_eq!(
            std::fs::read_dir(d.path()).unwrap().count(),
            1,
            "no temp left"
        );
    }
}

/// A refusal names the real reason: in `i += warp.size()` with a local
/// `cg::thread_block_tile<32> warp` (which the grammar reads as a comparison), the step calls a
/// member function; `warp` is a local, not "neither a local, a parameter nor a constant".
#[test]
fn refusal_names_the_real_reason() {
    let text = "namespace cg = cooperative_groups;\n__global__ void k(float* a, int n) {\n  cg::thread_block block = cg::this_thread_block();\n  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);\n  for (int i = warp.thread_rank(); i < n; i += warp.size()) {\n    a[i] = 0;\n  }\n}\n";
    let (_d, p) = temp_kernel(text);
    let o = run(&[
        p.to_str().unwrap(),
        "--loop",
        "5",
        "--factor",
        "2",
        "--mode",
        "manual",
    ]);
    let e = stderr(&o);
    assert_eq!(code(&o), 1, "{e}");
    assert!(
        e.contains("the loop step calls `warp.size` [step-calls-function]"),
        "{e}"
    );
    assert!(!e.contains("neither a local"), "{e}");
}

/// `--verify` on a header compiles it as HIP: hipcc (real) verifies `.h` and `.hpp` kernels,
/// and the compile command gets `-x hip` before the file (`-x cu` when the compiler is nvcc;
/// nothing for a `.cu` source).
#[test]
fn verify_compiles_a_header_as_hip() {
    let dir = tempfile::tempdir().unwrap();
    let text = format!("#include <hip/hip_runtime.h>\n{KERNEL}");
    for ext in ["h", "hpp", "cuh"] {
        let p = dir.path().join(format!("k.{ext}"));
        std::fs::write(&p, &text).unwrap();
        let o = run(&[
            p.to_str().unwrap(),
            "--loop",
            "3",
            "--factor",
            "4",
            "--verify",
        ]);
        assert_eq!(code(&o), 0, "{ext}: {}", stderr(&o));
        std::fs::remove_file(&p).unwrap();
    }
    // A stand-in compiler that records its arguments and fails with one error.
    let bin = tempfile::tempdir().unwrap();
    for name in ["fakecc", "nvcc"] {
        let cc = bin.path().join(name);
        std::fs::write(
            &cc,
            format!(
                "#!/bin/sh\necho \"$@\" >> {}/args.txt\necho 'k.h:3:5: error: expected expression' >&2\nexit 1\n",
                bin.path().display()
            ),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&cc, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    for (ext, name, want) in [
        ("h", "fakecc", Some("-x hip")),
        ("cuh", "nvcc", Some("-x cu")),
        ("cu", "fakecc", None),
    ] {
        let p = dir.path().join(format!("k.{ext}"));
        std::fs::write(&p, &text).unwrap();
        let _ = std::fs::remove_file(bin.path().join("args.txt"));
        let cmd = format!("{}/{name} {{src}} -o {{out}}", bin.path().display());
        let o = run(&[
            p.to_str().unwrap(),
            "--loop",
            "3",
            "--factor",
            "4",
            "--verify",
            "--compile",
            &cmd,
        ]);
        assert_eq!(code(&o), 2, "{ext}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("k.h:3:5: error: expected expression"),
            "{}",
            stderr(&o)
        );
        let args = std::fs::read_to_string(bin.path().join("args.txt")).unwrap();
        // The compile lines (the compiler is also asked its `--version`).
        let compiles: Vec<&str> = args.lines().filter(|l| l.contains(" -o ")).collect();
        assert!(!compiles.is_empty(), "{args}");
        for line in compiles {
            match want {
                Some(x) => assert!(line.starts_with(&format!("{x} ")), "{ext}: {line}"),
                None => assert!(!line.contains("-x "), "{ext}: {line}"),
            }
        }
        std::fs::remove_file(&p).unwrap();
    }
}

/// `--factor 1` says what it does: manual unrolling by 1 changes nothing (the output is the
/// input, `--in-place` leaves the file untouched); `#pragma unroll 1` unrolls nothing.
#[test]
fn factor_one_says_it_changes_nothing() {
    let (_d, p) = temp_kernel(KERNEL);
    let f = p.to_str().unwrap();
    let o = run(&[f, "--loop", "2", "--factor", "1", "--mode", "manual"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(o.stdout, KERNEL.as_bytes());
    assert!(
        stderr(&o).contains(
            ":2: note: --factor 1 changes nothing: unrolling loop k:0 by 1 is the loop itself"
        ),
        "{}",
        stderr(&o)
    );
    let before = std::fs::metadata(&p).unwrap().modified().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    let o = run(&[
        f,
        "--loop",
        "2",
        "--factor",
        "1",
        "--mode",
        "manual",
        "--in-place",
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(std::fs::metadata(&p).unwrap().modified().unwrap(), before);
    let o = run(&[f, "--loop", "2", "--factor", "1"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("note: --factor 1 unrolls nothing: `#pragma unroll 1` keeps the compiler from unrolling loop k:0"),
        "{}",
        stderr(&o)
    );
}

/// A line inside a loop, not on its keyword, names the loop that holds it.
#[test]
fn a_line_inside_a_loop_suggests_that_loop() {
    let text = "__global__ void k(float* a, int n) {\n    for (int i = 0; i < n; ++i) {\n        for (int j = 0; j < 4; ++j) {\n            a[i] += j;\n        }\n    }\n}\n";
    let (_d, p) = temp_kernel(text);
    let o = run(&[p.to_str().unwrap(), "--loop", "4", "--factor", "2"]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("no loop starts on line 4, which is inside loop k:1 (line 3)"),
        "{}",
        stderr(&o)
    );
    let o = run(&[p.to_str().unwrap(), "--loop", "6", "--factor", "2"]);
    assert!(
        stderr(&o).contains("no loop starts on line 6, which is inside loop k:0 (line 2)"),
        "{}",
        stderr(&o)
    );
    let o = run(&[p.to_str().unwrap(), "--loop", "1", "--factor", "2"]);
    assert!(!stderr(&o).contains("inside loop"), "{}", stderr(&o));
}

/// The ids after a manual unroll are read in the file's unit, as the ids before it: in a
/// namespace that a header's macro opens (`BEGIN_NS` is `namespace lib {`) they keep it (the
/// rewritten text was parsed alone: `lib::k:0 -> k:0 (unrolled), k:1 (remainder)`).
#[test]
fn ids_after_a_manual_unroll_keep_a_macro_namespace() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("ns.cuh"),
        "#pragma once\n#define BEGIN_NS namespace lib {\n#define END_NS }\n",
    )
    .unwrap();
    let p = dir.path().join("k.cu");
    std::fs::write(
        &p,
        "#include \"ns.cuh\"\nBEGIN_NS\n__global__ void k(float* a, int n) {\n    for (int i = 0; i < n; ++i) {\n        a[i] = 1.0f;\n    }\n    for (int j = 0; j < n; ++j) {\n        a[j] += 2.0f;\n    }\n}\nEND_NS\n",
    )
    .unwrap();
    let o = run(&[
        p.to_str().unwrap(),
        "--loop",
        "lib::k:0",
        "--factor",
        "2",
        "--mode",
        "manual",
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(
        stderr(&o).contains(
            "note: loop ids after the rewrite: lib::k:0 -> lib::k:0 (unrolled), lib::k:1 (remainder); lib::k:1 -> lib::k:2"
        ),
        "{}",
        stderr(&o)
    );
}

/// After a manual unroll, the ids that moved are printed (old -> new); a pragma moves none.
#[test]
fn manual_unroll_prints_the_ids_that_moved() {
    let text = "__global__ void k(float* a, int n) {\n    for (int i = 0; i < n; ++i) {\n        a[i] = 1.0f;\n    }\n    for (int j = 0; j < n; ++j) {\n        a[j] += 2.0f;\n    }\n}\n";
    let (_d, p) = temp_kernel(text);
    let f = p.to_str().unwrap();
    let o = run(&[f, "--loop", "k:0", "--factor", "2", "--mode", "manual"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(
        stderr(&o).contains(
            "note: loop ids after the rewrite: k:0 -> k:0 (unrolled), k:1 (remainder); k:1 -> k:2"
        ),
        "{}",
        stderr(&o)
    );
    let o = run(&[f, "--loop", "k:0", "--factor", "2"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(!stderr(&o).contains("loop ids"), "{}", stderr(&o));
}

/// nvcc, which the CUDA tests need (`$CUDA_HOME/bin` or `PATH`; `.ci/run` exports CUDA_HOME).
fn nvcc() -> PathBuf {
    match runner::build::find_nvcc(None, None) {
        Ok(Some(p)) => p,
        other => panic!("this test needs nvcc ({other:?}); export CUDA_HOME (.ci/run does)"),
    }
}

/// A CUDA-only file (`cuda_runtime.h`, no HIP header): `--verify` compiles it with nvcc
/// `-cubin`, says so, and compares the cubins' kernel signatures (issue 26).
#[test]
fn verify_compiles_a_cuda_only_file_with_nvcc() {
    let nvcc = nvcc();
    let (d, p) = temp_kernel(
        "#include <cuda_runtime.h>\n__global__ void scale(float* a, int n, double s) {\n    for (int i = 0; i < n; ++i) {\n        a[i] = a[i] * s;\n    }\n}\n",
    );
    let f = p.to_str().unwrap();
    let o = Command::new(BIN)
        .args([
            "unroll", f, "--loop", "scale:0", "--factor", "4", "--mode", "manual", "--verify",
        ])
        .env("CUDA_HOME", nvcc.parent().unwrap().parent().unwrap())
        .env("HIP_UNROLL_CACHE_DIR", d.path().join("cache"))
        .output()
        .unwrap();
    let e = stderr(&o);
    assert_eq!(code(&o), 0, "{e}");
    assert!(e.contains("--verify compiles with nvcc for sm_"), "{e}");
    assert!(
        e.contains("compared in the cubins; CUDA-only: it includes cuda_runtime.h"),
        "{e}"
    );
    assert!(!e.contains("AMDGPU"), "{e}");
    assert!(String::from_utf8_lossy(&o.stdout).contains("i += 4"));
    // `--arch sm_75` names the target; the cache holds the cubins.
    let o = Command::new(BIN)
        .args([
            "unroll", f, "--loop", "scale:0", "--factor", "2", "--verify", "--arch", "sm_75",
        ])
        .env("CUDA_HOME", nvcc.parent().unwrap().parent().unwrap())
        .env("HIP_UNROLL_CACHE_DIR", d.path().join("cache"))
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(stderr(&o).contains("nvcc for sm_75,"), "{}", stderr(&o));
    let cubins = std::fs::read_dir(d.path().join("cache"))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "cubin")
        })
        .count();
    assert!(cubins >= 2, "{cubins}");
}

/// A variant whose kernel signature changes is refused from the cubins' parameter layouts:
/// a stand-in `nvcc` compiles the variant with `-DWIDE`, which widens a parameter.
#[test]
fn verify_finds_a_changed_signature_in_cubins() {
    let real = nvcc();
    let (d, p) = temp_kernel(
        "#include <cuda_runtime.h>\n#ifdef WIDE\ntypedef double T;\n#else\ntypedef float T;\n#endif\nextern \"C\" __global__ void k(float* a, T s, int n) {\n    for (int i = 0; i < n; ++i) {\n        a[i] = a[i] * s;\n    }\n}\n",
    );
    let bin = d.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let wrapper = bin.join("nvcc");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\n[ \"$1\" = --version ] && exec {real} --version\nextra=\nfor a in \"$@\"; do case \"$a\" in *.hip-unroll-verify-*) extra=-DWIDE;; esac; done\nexec {real} $extra \"$@\"\n",
            real = real.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    let cmd = format!(
        "{} -cubin -arch={{arch}} {{src}} -o {{out}}",
        wrapper.display()
    );
    let o = Command::new(BIN)
        .args([
            "unroll",
            p.to_str().unwrap(),
            "--loop",
            "k:0",
            "--factor",
            "2",
            "--verify",
            "--compile",
            &cmd,
        ])
        .env("HIP_UNROLL_CACHE_DIR", d.path().join("cache"))
        .output()
        .unwrap();
    let e = stderr(&o);
    assert_eq!(code(&o), 1, "{e}");
    assert!(e.contains("[signature-changed]"), "{e}");
    // Unmangled: the same kernel, its second parameter wider (and the third moved).
    assert!(e.contains("k: argument 1 size `4` -> `8`"), "{e}");
    assert!(e.contains("k: argument 2 offset `12` -> `16`"), "{e}");
}

/// A compile error's message points to the whole output, which is still there after the
/// command ends (issue 26: it named a deleted temporary cache); a variant's error names the
/// user's file, not the removed temporary one.
#[test]
fn a_compile_error_points_to_a_log_that_exists() {
    let (d, p) = temp_kernel(KERNEL);
    let cc = d.path().join("fakecc");
    std::fs::write(
        &cc,
        "#!/bin/sh\nfor a in \"$@\"; do case \"$a\" in *.hip-unroll-verify-*) echo 'error: the variant breaks' >&2; exit 1;; esac; done\necho 'error: always broken' >&2\nexit 1\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&cc, std::fs::Permissions::from_mode(0o755)).unwrap();
    let cmd = format!("{} {{src}} -o {{out}}", cc.display());
    let o = Command::new(BIN)
        .args([
            "unroll",
            p.to_str().unwrap(),
            "--loop",
            "k:0",
            "--factor",
            "2",
            "--verify",
            "--compile",
            &cmd,
        ])
        .env("HIP_UNROLL_CACHE_DIR", d.path().join("cache"))
        .output()
        .unwrap();
    let e = stderr(&o);
    assert_eq!(code(&o), 2, "{e}");
    let log = e
        .split("(full output: ")
        .nth(1)
        .and_then(|r| r.split(')').next())
        .unwrap_or_else(|| panic!("no log named: {e}"));
    let text = std::fs::read_to_string(log).unwrap_or_else(|err| panic!("{log}: {err}"));
    assert!(text.contains("error: always broken"), "{text}");
    assert!(
        log.starts_with(d.path().join("cache").to_str().unwrap()),
        "{log}"
    );

    // Only the variant fails (the original goes to the real hipcc): the message names
    // `k.cu (variant)`.
    std::fs::write(
        &cc,
        "#!/bin/sh\nfor a in \"$@\"; do case \"$a\" in *.hip-unroll-verify-*) echo 'error: the variant breaks' >&2; exit 1;; esac; done\nexec hipcc \"$@\"\n",
    )
    .unwrap();
    let cmd = format!(
        "{} --offload-arch={{arch}} --genco -O3 {{src}} -o {{out}}",
        cc.display()
    );
    let o = Command::new(BIN)
        .args([
            "unroll",
            p.to_str().unwrap(),
            "--loop",
            "k:0",
            "--factor",
            "2",
            "--verify",
            "--compile",
            &cmd,
        ])
        .env("HIP_UNROLL_CACHE_DIR", d.path().join("cache"))
        .output()
        .unwrap();
    let e = stderr(&o);
    assert_eq!(code(&o), 2, "{e}");
    let first = e
        .lines()
        .find(|l| l.starts_with("error:"))
        .unwrap_or_default();
    assert!(first.contains("(variant)"), "{e}");
    assert!(
        !first
            .split("(full output")
            .next()
            .unwrap()
            .contains(".hip-unroll-verify-"),
        "{e}"
    );
}
