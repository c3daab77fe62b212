//! `check` prints the same bytes on every run and at every thread count (issue 26 item 4): a
//! header-heavy tree (`testdata/determinism/`: headers that include each other in a cycle, some
//! defining the specifier macros the others use, one missing include) checked 100 times on one
//! thread and 100 times on eight, headers named on the command line and as a directory.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_hip-unroll");

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/determinism")
}

/// The paths of the fixture as the command line names them: every header, then every source.
fn named_files() -> Vec<String> {
    let mut out = Vec::new();
    for dir in ["inc", "src"] {
        let mut names: Vec<String> = std::fs::read_dir(fixture().join(dir))
            .unwrap()
            .map(|e| format!("{dir}/{}", e.unwrap().file_name().to_string_lossy()))
            .collect();
        names.sort();
        out.extend(names);
    }
    out
}

/// One run of `check ARGS` in the fixture: its stdout (exit 0 or 1 required).
fn check(args: &[String]) -> Vec<u8> {
    let o = Command::new(BIN)
        .arg("check")
        .args(args)
        .current_dir(fixture())
        .env("NO_COLOR", "1")
        .output()
        .expect("run hip-unroll");
    let code = o.status.code().expect("not killed by a signal");
    assert!(
        code == 0 || code == 1,
        "exit {code}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    o.stdout
}

/// `runs` runs at 1 thread, then `runs` at 8, all of them the same bytes as the first.
fn same_every_time(args: &[String], runs: usize) -> Vec<u8> {
    let first = check(&[&["--threads".to_string(), "1".to_string()], args].concat());
    for threads in ["1", "8"] {
        for run in 0..runs {
            let out = check(&[&["--threads".to_string(), threads.to_string()], args].concat());
            assert!(
                out == first,
                "run {run} at {threads} threads differs from the first run of `check {}`:\n--- first\n{}\n--- this run\n{}",
                args.join(" "),
                String::from_utf8_lossy(&first),
                String::from_utf8_lossy(&out)
            );
        }
    }
    first
}

/// Each header's functions as `name:loops`, by path.
fn functions(json: &[u8]) -> Vec<(String, Vec<String>)> {
    let v: Value = serde_json::from_slice(json).unwrap();
    v["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let fns = f["functions"]
                .as_array()
                .unwrap()
                .iter()
                .map(|g| {
                    format!(
                        "{}:{}",
                        g["name"].as_str().unwrap(),
                        g["loops"].as_array().unwrap().len()
                    )
                })
                .collect();
            (f["path"].as_str().unwrap().to_string(), fns)
        })
        .collect()
}

/// Headers named on the command line with `--parse-all`, as issue 26 reported it: 100 runs at
/// one thread and 100 at eight give one output, and every header shows its own functions
/// whichever unit reached it first (a unit reads a header with no GPU keyword for its macros
/// only; a header `check` analyses itself is parsed in full).
#[test]
fn headers_on_the_command_line_same_bytes_every_run() {
    let mut args: Vec<String> = ["--format", "json", "--parse-all", "-I", "inc"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    args.extend(named_files());
    let out = same_every_time(&args, 100);
    let want: Vec<(String, Vec<String>)> = [
        (
            "inc/broken.hpp",
            &["lerp:0", "smooth:0", "blend:1", "smooth_all:1"][..],
        ),
        ("inc/defs.cuh", &[]),
        (
            "inc/math.cuh",
            &["sq:0", "square_all:1", "clamp_index:0", "dot:1"],
        ),
        ("inc/reduce.cuh", &["block_sum:1", "accumulate:1"]),
        ("inc/tiles.h", &["copy_tile:1", "scale_tile:1"]),
        ("src/a.cu", &["k_square:1", "k_tiles:1"]),
        ("src/b.cu", &["k_reduce:1", "k_blend:2"]),
        ("src/c.cu", &["k_mix:3"]),
        ("src/d.cu", &["k_plain:1"]),
    ]
    .iter()
    .map(|(p, f)| (p.to_string(), f.iter().map(|s| s.to_string()).collect()))
    .collect();
    assert_eq!(functions(&out), want);
    // Each header alone says the same of itself as in the company of the others.
    for (path, fns) in &want[..5] {
        let alone = check(&[
            "--format".into(),
            "json".into(),
            "--parse-all".into(),
            "-I".into(),
            "inc".into(),
            path.clone(),
        ]);
        assert_eq!(functions(&alone), vec![(path.clone(), fns.clone())]);
    }
}

/// The directory walked, in the formats
/// that lists findings, and the header statistics of the human format.
#[test]
fn a_directory_of_headers_same_bytes_every_run() {
    for args in [
        &["--format", "json", "--parse-all", "-I", "inc", "."][..],
        &["--format", "json", "-I", "inc", "."],
        &["--statistics", "--parse-all", "-I", "inc", "."],
        &["--format", "sarif", "--parse-all", "-I", "inc", "."],
    ] {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        same_every_time(&args, 30);
    }
}
