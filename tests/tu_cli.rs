//! End-to-end tests of translation units: issue 17's reproductions through `check` and
//! `unroll` (the real binary, headers on disk), `-I` and `[check] include-dirs`, and the
//! include note in every output format.

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_hip-unroll");

fn run_in(cwd: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir(cwd)
        .env("NO_COLOR", "1")
        .output()
        .expect("run hip-unroll")
}

fn code(o: &Output) -> i32 {
    o.status.code().expect("not killed by a signal")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

const HELPERS2: &str = "#pragma once\n#define SKIP_IF(c) if (c) continue\n#define BAIL_OUT break\n#define AT(k) a[i + (k)]\n__device__ inline float reduce_sync(float v, float* s) { s[threadIdx.x] = v; __syncthreads(); return s[0]; }\n__device__ inline void add_to(float* p, float v) { atomicAdd(p, v); }\n";

const K2: &str = "#include \"helpers2.cuh\"\n__global__ void scale_skip(float* a, int n) {\n  for (int i = 0; i < n; i++) { SKIP_IF(a[i] > 3); a[i] = a[i] * 2; } }\n__global__ void scale_bail(float* a, int n) {\n  for (int i = 0; i < n; i++) { if (a[i] > 3) BAIL_OUT; a[i] = a[i] * 2; } }\n__global__ void shift(float* a, int n) {\n  for (int i = 0; i < n - 1; i++) { AT(0) = AT(1); } }\n__global__ void reduce(float* a, float* s, int n) {\n  for (int i = 0; i < n; i++) a[i] = reduce_sync(a[i], s); }\n__global__ void count(float* a, int n) {\n  for (int i = 0; i < n; i++) add_to(&a[0], a[i]); }\n";

/// The five reproductions of issue 17, with the header in an include directory (`-I inc`,
/// then `[check] include-dirs`): `check` sees the barrier, the atomic and the early exit;
/// `unroll --mode manual` refuses all five, each with its reason id.
#[test]
fn issue_17_reproductions_through_check_and_unroll() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir_all(d.join("inc")).unwrap();
    std::fs::write(d.join("inc/helpers2.cuh"), HELPERS2).unwrap();
    std::fs::write(d.join("k2.cu"), K2).unwrap();

    let verdicts = |o: &Output| -> Vec<(String, Vec<String>)> {
        let v: Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
            panic!("{e}: {}{}", text(&o.stdout), text(&o.stderr));
        });
        v["files"][0]["functions"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|f| f["loops"].as_array().unwrap().iter())
            .map(|l| {
                let b = l["blockers"].as_array().unwrap();
                (
                    l["id"].as_str().unwrap().to_string(),
                    b.iter().map(|x| x.as_str().unwrap().to_string()).collect(),
                )
            })
            .collect()
    };
    let want: Vec<(String, Vec<String>)> = [
        ("scale_skip:0", vec![]),
        ("scale_bail:0", vec!["early-exit"]),
        ("shift:0", vec![]),
        ("reduce:0", vec!["barrier"]),
        ("count:0", vec!["atomic"]),
    ]
    .iter()
    .map(|(id, b)| (id.to_string(), b.iter().map(|s| s.to_string()).collect()))
    .collect();

    // Without the directory: the header is missing, said once, and nothing is blocked.
    let o = run_in(d, &["check", "--format", "json", "k2.cu"]);
    assert_eq!(code(&o), 0, "{}", text(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let notes: Vec<&Value> = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["rule"] == "include-not-found")
        .collect();
    assert_eq!(notes.len(), 1, "{v}");
    assert_eq!(notes[0]["line"], 1);
    assert!(notes[0]["message"]
        .as_str()
        .unwrap()
        .contains("helpers2.cuh"));

    // `-I inc`: the unit is whole.
    let o = run_in(d, &["check", "--format", "json", "-I", "inc", "k2.cu"]);
    assert_eq!(verdicts(&o), want);
    assert!(!text(&o.stdout).contains("include-not-found"));

    // `[check] include-dirs` does the same.
    std::fs::write(
        d.join("hip-unroll.toml"),
        "[check]\ninclude-dirs = [\"inc\"]\n",
    )
    .unwrap();
    let o = run_in(d, &["check", "--format", "json", "k2.cu"]);
    assert_eq!(verdicts(&o), want);

    // `unroll --mode manual` refuses each reproduction.
    for (id, reason) in [
        ("scale_skip:0", "[macro-in-body]"),
        ("scale_bail:0", "[guard-blocked]"),
        ("shift:0", "[macro-in-body]"),
        ("reduce:0", "[guard-blocked]"),
        ("count:0", "[guard-blocked]"),
    ] {
        let o = run_in(
            d,
            &[
                "unroll", "k2.cu", "--loop", id, "--factor", "4", "--mode", "manual",
            ],
        );
        assert_eq!(code(&o), 1, "{id}: {}", text(&o.stderr));
        assert!(
            text(&o.stderr).contains(reason),
            "{id}: {}",
            text(&o.stderr)
        );
        if id == "reduce:0" {
            // The witness in the header is named by the header's path and line.
            let e = text(&o.stderr);
            assert!(e.contains("inc/helpers2.cuh:5)"), "{e}");
        }
    }
    // `--force` passes a guard, never the transform: `BAIL_OUT` still hides a `break`.
    let o = run_in(
        d,
        &[
            "unroll",
            "k2.cu",
            "--loop",
            "scale_bail:0",
            "--factor",
            "4",
            "--mode",
            "manual",
            "--force",
        ],
    );
    assert_eq!(code(&o), 1);
    assert!(
        text(&o.stderr).contains("[macro-in-body]"),
        "{}",
        text(&o.stderr)
    );
    // Pragma mode stays available where no guard blocks.
    let o = run_in(
        d,
        &["unroll", "k2.cu", "--loop", "scale_skip:0", "--factor", "4"],
    );
    assert_eq!(code(&o), 0, "{}", text(&o.stderr));
}

/// A macro defined nowhere visible refuses the manual rewrite (`unseen-macro`), whether the
/// include is missing or the name comes from a system header; `-I` makes it visible.
#[test]
fn unseen_macros_refuse_the_manual_rewrite_until_the_header_is_found() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir_all(d.join("include")).unwrap();
    std::fs::write(
        d.join("include/defs.h"),
        "#pragma once\n#define CLAMP(x) ((x) < 0 ? 0 : (x))\n",
    )
    .unwrap();
    std::fs::write(
        d.join("k.cu"),
        "#include \"defs.h\"\n__global__ void k(float* a, int n) {\n  for (int i = 0; i < n; i++) a[i] = CLAMP(a[i]);\n}\n",
    )
    .unwrap();
    let args = [
        "unroll", "k.cu", "--loop", "k:0", "--factor", "2", "--mode", "manual",
    ];
    let o = run_in(d, &args);
    assert_eq!(code(&o), 1, "{}", text(&o.stderr));
    let e = text(&o.stderr);
    assert!(e.contains("[unseen-macro]") && e.contains("CLAMP"), "{e}");
    let mut with_dir = args.to_vec();
    with_dir.extend(["-I", "include"]);
    let o = run_in(d, &with_dir);
    assert_eq!(code(&o), 0, "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("CLAMP(a[i])"));
}

/// The include note appears once per file (not per loop) in every output format.
#[test]
fn the_include_note_is_in_every_format_once_per_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("k.cu"),
        "#include \"gone.cuh\"\n#include \"gone_too.cuh\"\n__global__ void k(float* a, int n) {\n  for (int i = 0; i < n; i++) a[i] += 1;\n  for (int j = 0; j < n; j++) a[j] *= 2;\n}\n",
    )
    .unwrap();
    for (format, needle) in [
        ("human", "hint[include-not-found]"),
        ("json", "\"rule\": \"include-not-found\""),
        ("sarif", "\"ruleId\": \"include-not-found\""),
        ("github", "title=hip-unroll include-not-found"),
    ] {
        let o = run_in(d, &["check", "--format", format, "k.cu"]);
        assert_eq!(code(&o), 0, "{format}: {}", text(&o.stderr));
        let out = text(&o.stdout);
        assert_eq!(out.matches(needle).count(), 1, "{format}: {out}");
        assert!(
            out.contains("gone.cuh") && out.contains("gone_too.cuh"),
            "{format}: {out}"
        );
    }
}

/// A header named `h.cuh` in five places: the one that wins is the first in the search order of
/// issue 17 (the including file's directory, `-I`, `[check] include-dirs`, the `-I` of
/// `[compile] command`, the `-I` of `[tune] compile-flags`). Each copy calls a function defined
/// nowhere, of its own name, so the loop's `unresolved` says which copy the unit holds; the
/// winner is removed and the next one must take its place.
#[test]
fn includes_are_searched_in_the_documented_order() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let places = [
        ("src", "from_own_dir"),
        ("cli", "from_command_line"),
        ("cfg", "from_check_include_dirs"),
        ("cc", "from_compile_command"),
        ("tf", "from_tune_compile_flags"),
    ];
    for (sub, name) in places {
        std::fs::create_dir_all(d.join(sub)).unwrap();
        std::fs::write(
            d.join(sub).join("h.cuh"),
            format!("#pragma once\n__device__ void {name}(float* a, int i);\n__device__ inline void step(float* a, int i) {{ {name}(a, i); }}\n"),
        )
        .unwrap();
    }
    std::fs::write(
        d.join("src/k.cu"),
        "#include \"h.cuh\"\n__global__ void k(float* a, int n) {\n  for (int i = 0; i < n; i++) step(a, i);\n}\n",
    )
    .unwrap();
    std::fs::write(
        d.join("hip-unroll.toml"),
        "[check]\ninclude-dirs = [\"cfg\"]\n[compile]\ncommand = \"hipcc -I cc --genco {src} -o {out}\"\n[tune]\ncompile-flags = [\"-Itf\"]\n",
    )
    .unwrap();
    let unresolved = || -> Vec<String> {
        let o = run_in(d, &["check", "--format", "json", "-I", "cli", "src/k.cu"]);
        assert!(code(&o) <= 1, "{}", text(&o.stderr));
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        v["files"][0]["functions"][0]["loops"][0]["unresolved"]
            .as_array()
            .unwrap_or_else(|| panic!("{v}"))
            .iter()
            .map(|x| x.as_str().unwrap().to_string())
            .collect()
    };
    for (sub, name) in places {
        assert_eq!(unresolved(), [name], "with {sub}/h.cuh first");
        std::fs::remove_file(d.join(sub).join("h.cuh")).unwrap();
    }
}

/// `tune -I DIR`: the loops are judged in their unit (a barrier in a header's helper blocks the
/// loop, never built); without it the header is not seen and the loop is a candidate.
#[test]
fn tune_takes_include_dirs_for_its_verdicts() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir_all(d.join("inc")).unwrap();
    std::fs::write(d.join("inc/helpers2.cuh"), HELPERS2).unwrap();
    std::fs::write(
        d.join("k.cu"),
        "#include \"helpers2.cuh\"\n__global__ void reduce(float* a, float* s, int n) {\n  for (int i = 0; i < n; i++) a[i] = reduce_sync(a[i], s);\n}\n",
    )
    .unwrap();
    let status = |extra: &[&str]| -> String {
        let state = tempfile::tempdir().unwrap();
        let mut args = vec![
            "tune",
            "k.cu",
            "--build",
            "true",
            "--run",
            "echo 'time: 1'",
            "--time-regex",
            "time: ([0-9]+)",
            "--factors",
            "2",
            "--mode",
            "pragma",
            "--dry-run",
            "--format",
            "json",
            "--state",
            state.path().to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        let o = run_in(d, &args);
        assert_eq!(code(&o), 0, "{}", text(&o.stderr));
        let r: Value = serde_json::from_slice(&o.stdout).unwrap();
        let c = r["candidates"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["loop"] == "reduce:0")
            .unwrap_or_else(|| panic!("{r}"))
            .clone();
        format!("{} {}", c["status"].as_str().unwrap(), c["reason"])
    };
    assert_eq!(status(&["-I", "inc"]), "blocked \"blocked by barrier\"");
    assert!(!status(&[]).starts_with("blocked"));
}

/// `pressure -I DIR`: both sources are compiled with the directory (a header they include is
/// found); without it the compile fails, one line and exit 2.
#[test]
fn pressure_takes_include_dirs_for_its_compile() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir_all(d.join("inc")).unwrap();
    std::fs::write(
        d.join("inc/scale.cuh"),
        "#pragma once\n#define SCALE 2.0f\n",
    )
    .unwrap();
    let k = "#include <hip/hip_runtime.h>\n#include \"scale.cuh\"\n__global__ void k(float* a, int n) {\n  UNROLL_HERE\n  for (int i = 0; i < n; i++) a[i] *= SCALE;\n}\n";
    std::fs::write(d.join("base.cu"), k.replace("UNROLL_HERE", "")).unwrap();
    std::fs::write(
        d.join("variant.cu"),
        k.replace("UNROLL_HERE", "#pragma unroll 2"),
    )
    .unwrap();
    let o = run_in(d, &["pressure", "base.cu", "variant.cu"]);
    assert_eq!(code(&o), 2, "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("scale.cuh"), "{}", text(&o.stderr));
    let o = run_in(d, &["pressure", "base.cu", "variant.cu", "-I", "inc"]);
    assert_eq!(code(&o), 0, "{}{}", text(&o.stdout), text(&o.stderr));
}

/// `check --statistics` says what the units cost: a header included by every file of a run is
/// parsed once.
#[test]
fn a_header_included_by_many_files_is_parsed_once_per_run() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("helpers2.cuh"), HELPERS2).unwrap();
    for i in 0..6 {
        std::fs::write(d.join(format!("k{i}.cu")), K2).unwrap();
    }
    let o = run_in(d, &["check", "--statistics", "."]);
    assert!(code(&o) <= 1, "{}", text(&o.stderr));
    let out = text(&o.stdout);
    // The walk also checks helpers2.cuh itself: its parse is the one the units share.
    assert!(
        out.contains("headers: 1 parsed for 6 includes followed"),
        "{out}"
    );
}

/// `-D NAME[=VALUE]` and `-U NAME` (issue 26) on `check`, `unroll` (without `--verify`) and
/// `tune`: the guards see the macros as the compiler would, so a barrier behind two command-line
/// macros blocks the loop, and a constant defined with `-D` is no unseen macro.
#[test]
fn command_line_macros_for_check_unroll_and_tune() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("k.cu"),
        "// k.cu\nDINLINE void step(float* s) { SYNC; }\n__global__ void k(float* a, float* s, int n) {\n  for (int i = 0; i < n; ++i) { a[i] *= 2.f; step(s); }\n  for (int i = 0; i < n; ++i) a[i] += TILE;\n}\n",
    )
    .unwrap();
    let blockers = |o: &Output| -> Vec<Vec<String>> {
        let v: Value = serde_json::from_slice(&o.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", text(&o.stderr)));
        v["files"][0]["functions"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["name"] == "k")
            .flat_map(|f| f["loops"].as_array().unwrap().iter())
            .map(|l| {
                l["blockers"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|b| b.as_str().unwrap().to_string())
                    .collect()
            })
            .collect()
    };
    let defs = ["-DDINLINE=__device__", "-DSYNC=__syncthreads()"];
    let check = |extra: &[&str]| {
        let mut args = vec!["check", "--format", "json", "--parse-all"];
        args.extend_from_slice(extra);
        args.push("k.cu");
        run_in(d, &args)
    };
    let none: Vec<String> = Vec::new();
    assert_eq!(blockers(&check(&[])), [none.clone(), none.clone()]);
    assert_eq!(
        blockers(&check(&defs)),
        [vec!["barrier".to_string()], none.clone()]
    );
    // `-U` takes a `-D` back; the `-D` of `[compile] command` counts too.
    let mut undone = defs.to_vec();
    undone.extend(["-U", "SYNC"]);
    assert_eq!(blockers(&check(&undone)), [none.clone(), none.clone()]);
    std::fs::write(
        d.join("hip-unroll.toml"),
        "[compile]\ncommand = \"false -DDINLINE=__device__ -DSYNC=__syncthreads() {src} -o {out}\"\n",
    )
    .unwrap();
    assert_eq!(
        blockers(&check(&[])),
        [vec!["barrier".to_string()], none.clone()]
    );
    std::fs::remove_file(d.join("hip-unroll.toml")).unwrap();
    // A malformed name is one line, exit 2.
    let o = check(&["-D", "9x=1"]);
    assert_eq!(code(&o), 2);
    assert!(text(&o.stderr).contains("-D") && text(&o.stderr).contains("9x=1"));

    // unroll: the barrier loop is refused with the macros, `TILE` is no unseen macro with -D.
    let unroll = |extra: &[&str], lp: &str, mode: &str| {
        let mut args = vec![
            "unroll", "k.cu", "--loop", lp, "--factor", "2", "--mode", mode,
        ];
        args.extend_from_slice(extra);
        run_in(d, &args)
    };
    assert_eq!(code(&unroll(&[], "k:0", "pragma")), 0);
    let o = unroll(&defs, "k:0", "pragma");
    assert_eq!(code(&o), 1, "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("[guard-blocked]"),
        "{}",
        text(&o.stderr)
    );
    let o = unroll(&[], "k:1", "manual");
    assert_eq!(code(&o), 1);
    assert!(
        text(&o.stderr).contains("[unseen-macro]"),
        "{}",
        text(&o.stderr)
    );
    let o = unroll(&["-DTILE=4"], "k:1", "manual");
    assert_eq!(code(&o), 0, "{}", text(&o.stderr));

    // tune: the barrier loop is blocked and never built; the gates are off (`false`).
    std::fs::write(
        d.join("hip-unroll.toml"),
        "[compile]\ncommand = \"false {src} -o {out}\"\n",
    )
    .unwrap();
    let state = d.join("state");
    let mut args = vec![
        "tune",
        "k.cu",
        "--build",
        "true",
        "--run",
        "echo cost: 100",
        "--time-regex",
        "cost: ([0-9]+)",
        "--time-unit",
        "units",
        "--factors",
        "2",
        "--mode",
        "pragma",
        "--dry-run",
        "--state",
        state.to_str().unwrap(),
        "--format",
        "json",
    ];
    args.extend(defs);
    let o = run_in(d, &args);
    assert!(code(&o) == 0 || code(&o) == 1, "{}", text(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", text(&o.stdout), text(&o.stderr)));
    let report = v.to_string();
    assert!(report.contains("blocked by barrier"), "{report}");
    // White space cannot go through the gates' compile command: one line, exit 2.
    let o = run_in(d, &["tune", "k.cu", "-D", "DINLINE=__device__ inline"]);
    assert_eq!(code(&o), 2);
    assert!(
        text(&o.stderr).contains("white space"),
        "{}",
        text(&o.stderr)
    );
}

/// `-D`/`-U` reach the bodies of kernels that a function-like macro defines (`DEFINE_KERNEL(k,
/// float) { ... }`): a barrier macro given on the command line blocks the loop in `check` and
/// `unroll`, and its undefinition (`-U`) takes it back; without it the call is `unresolved`.
#[test]
fn command_line_macros_reach_macro_defined_kernels() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("k.cu"),
        "#define DEFINE_KERNEL(name, T) __global__ void name(T* p)\n\
         DEFINE_KERNEL(k, float) {\n  for (int i = 0; i < 8; ++i) { p[i] = 0; SYNC(); }\n}\n\
         DEFINE_KERNEL(j, int) {\n  for (int i = 0; i < 8; ++i) p[i] = 0;\n}\n",
    )
    .unwrap();
    let verdicts = |extra: &[&str]| -> Vec<(String, String, String)> {
        let mut args = vec!["check", "--format", "json"];
        args.extend_from_slice(extra);
        args.push("k.cu");
        let o = run_in(d, &args);
        assert!(code(&o) <= 1, "{}", text(&o.stderr));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        v["files"][0]["functions"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|f| f["loops"].as_array().unwrap().iter())
            .map(|l| {
                (
                    l["id"].as_str().unwrap().to_string(),
                    l["verdict"].as_str().unwrap().to_string(),
                    l["unresolved"].to_string(),
                )
            })
            .collect()
    };
    let row = |id: &str, verdict: &str, unresolved: &str| {
        (id.to_string(), verdict.to_string(), unresolved.to_string())
    };
    assert_eq!(
        verdicts(&[]),
        [
            row("k:0", "candidate", "[\"SYNC\"]"),
            row("j:0", "candidate", "null")
        ]
    );
    let sync = ["-D", "SYNC()=__syncthreads()"];
    assert_eq!(
        verdicts(&sync),
        [
            row("k:0", "blocked", "null"),
            row("j:0", "candidate", "null")
        ]
    );
    let undone = ["-D", "SYNC()=__syncthreads()", "-U", "SYNC"];
    assert_eq!(
        verdicts(&undone),
        [
            row("k:0", "candidate", "[\"SYNC\"]"),
            row("j:0", "candidate", "null")
        ]
    );
    let o = run_in(
        d,
        &[
            "unroll",
            "k.cu",
            "--loop",
            "k:0",
            "--factor",
            "2",
            "-D",
            "SYNC()=__syncthreads()",
        ],
    );
    assert_eq!(code(&o), 1, "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("blocked by barrier") && text(&o.stderr).contains("`SYNC`"),
        "{}",
        text(&o.stderr)
    );
}
