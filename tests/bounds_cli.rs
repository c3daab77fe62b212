//! Bounds end to end: every bad input is one `error:` line and exit 2 (invalid TOML, unknown
//! config sections and keys, bad regexes, compiler errors, caps on runs, factors, jobs, counts
//! and time limits), and compiler processes die with `hip-unroll` (kill -9) and leave nothing
//! in `$TMPDIR`, with a fake compiler and with real hipcc.
//! Needs: hipcc.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_hip-unroll");

fn data(n: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/testdata")).join(n)
}

fn run_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .env("HIP_UNROLL_CACHE_DIR", dir.join("cache"))
        .output()
        .unwrap()
}

/// Exit 2 and exactly one line on stderr, `error: ...`; the line.
fn one_error_line(o: &Output) -> String {
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "not one line: {err}");
    assert!(err.starts_with("error: "), "{err}");
    err.trim_end().to_string()
}

fn kernel_dir() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::copy(data("codeobj/rowsum.cu"), d.path().join("rowsum.cu")).unwrap();
    d
}

#[test]
fn config_errors_are_one_line_naming_file_place_and_key() {
    let d = kernel_dir();
    let cfg = d.path().join("hip-unroll.toml");
    let shown = cfg.canonicalize().unwrap_or(cfg.clone());
    for (text, want) in [
        (
            "[check\nx = 1\n",
            ":1:7: invalid TOML: unclosed table, expected `]`",
        ),
        (
            "[check]\nselect = [\"barrier\"\n",
            ":2:20: invalid TOML: unclosed array, expected `]`",
        ),
        (
            "[check]\nhints = true\n[chek]\nx = 1\n",
            ":3:2: unknown section `chek` (known: [check], [compile], [vgpr-pressure], [tune])",
        ),
        (
            "[compile]\narhc = \"gfx90a\"\n",
            ":2:1: unknown key `arhc` in [compile]",
        ),
    ] {
        std::fs::write(&cfg, text).unwrap();
        // Whichever command reads the file sees every section.
        for args in [
            &["check", "rowsum.cu"][..],
            &["tune", "--build", "true", "--run", "true", "rowsum.cu"][..],
        ] {
            let line = one_error_line(&run_in(d.path(), args));
            let head = format!("error: {}", shown.display());
            assert!(
                line.starts_with(&head) && line.contains(want),
                "{args:?}: want `{want}`: {line}"
            );
        }
    }
}

#[test]
fn bad_regexes_are_one_line() {
    let d = kernel_dir();
    let line = one_error_line(&run_in(
        d.path(),
        &[
            "tune",
            "--build",
            "true",
            "--run",
            "true",
            "--time-regex",
            "([0-9]+",
            "rowsum.cu",
        ],
    ));
    assert_eq!(
        line,
        "error: --time-regex: `([0-9]+` is not a regex: unclosed group"
    );
}

#[test]
fn caps_and_time_limits_are_one_line() {
    let d = kernel_dir();
    let tune = |extra: &[&str]| {
        let mut a = vec!["tune", "--build", "true", "--run", "true", "--dry-run"];
        a.extend_from_slice(extra);
        a.push("rowsum.cu");
        one_error_line(&run_in(d.path(), &a))
    };
    assert_eq!(
        tune(&["--max-runs", "4000000000"]),
        "error: --max-runs must be at most 10000 pairs (got 4000000000)"
    );
    assert_eq!(
        tune(&["--min-runs", "20000", "--max-runs", "20000"]),
        "error: --min-runs must be at most 10000 pairs (got 20000)"
    );
    assert_eq!(
        tune(&["--timeout", "0"]),
        "error: --timeout must be 1 to 86400 seconds (got 0)"
    );
    assert_eq!(
        tune(&["--timeout", "86401"]),
        "error: --timeout must be 1 to 86400 seconds (got 86401)"
    );
    assert_eq!(
        tune(&["--factors", "2,4000000000"]),
        "error: --factors: 4000000000 is over the largest unroll factor, 1024"
    );
    assert_eq!(
        tune(&["--factors", "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17"]),
        "error: --factors lists 17 factors; at most 16"
    );
    assert_eq!(
        tune(&["--jobs", "100000"]),
        "error: --jobs must be 1 to 256 (got 100000)"
    );
    // The same bounds from the config file.
    let cfg = d.path().join("hip-unroll.toml");
    std::fs::write(&cfg, "[tune]\nmax-runs = 4000000000\n").unwrap();
    assert_eq!(
        tune(&[]),
        "error: --max-runs must be at most 10000 pairs (got 4000000000)"
    );
    std::fs::write(&cfg, "[tune]\ntimeout = 0\n").unwrap();
    assert_eq!(
        tune(&[]),
        "error: --timeout must be 1 to 86400 seconds (got 0)"
    );
    std::fs::write(&cfg, "[tune]\nfactors = [2, 0]\n").unwrap();
    assert_eq!(
        tune(&[]),
        "error: --factors must list factors of at least 1 (or `full`)"
    );
    std::fs::write(&cfg, "[compile]\ntimeout = 0\n").unwrap();
    assert_eq!(
        tune(&[]),
        "error: compile time limit must be 1 s to 86400 s (got 0 s)"
    );
    std::fs::remove_file(&cfg).unwrap();

    let spec = data("bench/dot.toml");
    let spec = spec.to_str().unwrap();
    let bench = |extra: &[&str]| {
        let mut a = vec!["bench", spec];
        a.extend_from_slice(extra);
        one_error_line(&run_in(d.path(), &a))
    };
    assert_eq!(
        bench(&["--iterations", "4000000000"]),
        "error: --iterations must be 1 to 1000000 (got 4000000000)"
    );
    assert_eq!(
        bench(&["--iterations", "0"]),
        "error: --iterations must be 1 to 1000000 (got 0)"
    );
    assert_eq!(
        bench(&["--warmup", "2000000"]),
        "error: --warmup must be 0 to 1000000 (got 2000000)"
    );
    assert_eq!(
        bench(&["--timeout", "1e300"]),
        "error: --timeout must be more than 0 and at most 86400 seconds (got 1e300)"
    );
    assert_eq!(
        bench(&["--timeout", "0"]),
        "error: --timeout must be more than 0 and at most 86400 seconds (got 0.0)"
    );
    let replay = |extra: &[&str]| {
        let mut a = vec!["replay", "no-such-snapshot"];
        a.extend_from_slice(extra);
        one_error_line(&run_in(d.path(), &a))
    };
    assert_eq!(
        replay(&["--iterations", "4000000000"]),
        "error: --iterations must be 1 to 1000000 (got 4000000000)"
    );
    assert_eq!(
        replay(&["--timeout", "0"]),
        "error: --timeout must be more than 0 and at most 86400 seconds (got 0.0)"
    );
    assert_eq!(
        one_error_line(&run_in(
            d.path(),
            &["profile", "--timeout", "0", "--", "true"]
        )),
        "error: --timeout must be more than 0 and at most 86400 seconds (got 0)"
    );
}

#[test]
fn a_compiler_error_is_its_first_error_line_and_names_the_log() {
    let d = kernel_dir();
    std::fs::write(
        d.path().join("bad.cu"),
        "#include <hip/hip_runtime.h>\n__global__ void k(float* p) {\n  p[0] = undeclared_a;\n  p[1] = undeclared_b;\n}\n",
    )
    .unwrap();
    let line = one_error_line(&run_in(d.path(), &["pressure", "bad.cu", "rowsum.cu"]));
    assert!(
        line.starts_with("error: bad.cu: hipcc failed (exit 1): ")
            && line.contains(
                "bad.cu:3:10: error: use of undeclared identifier 'undeclared_a' (full output: "
            ),
        "{line}"
    );
    let log = line
        .rsplit_once("(full output: ")
        .map(|(_, l)| l.trim_end_matches(')'))
        .unwrap();
    assert!(std::fs::read_to_string(log)
        .unwrap()
        .contains("undeclared_b"));
}

fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, format!("#!/bin/sh\n{body}")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(s) => !s
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z'),
        Err(_) => false,
    }
}

/// Processes whose command line or environment mentions `needle` (this machine's /proc).
fn processes_mentioning(needle: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let cmd = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
        if String::from_utf8_lossy(&cmd).contains(needle) && alive(pid) {
            out.push(pid);
        }
    }
    out
}

/// `kill -9` of hip-unroll while a compile runs: the compiler and everything it started die
/// too (it was reparented to PID 1 and ran on); the compile's private `$TMPDIR`, left by the
/// kill, is removed by the next run.
#[test]
fn kill_9_during_a_fake_compile_ends_the_compilers_group() {
    kill_9_during_a_fake_compile(&["pressure", "rowsum.cu", "v.cu"], 2);
    // tune: the code-object gates compile the baseline's copy of the file.
    kill_9_during_a_fake_compile(
        &[
            "tune",
            "--build",
            "true",
            "--run",
            "true",
            // The baseline (`true`) is measured before the gates compile; the other tests of
            // this file load the machine, and its spread must not stop the tune first.
            "--max-noise",
            "100000",
            // Nor may a drift between its two sets of baseline repeats (`true` under that load
            // drifts 2x): a disagreement counts only past the smallest speedup sought (11x).
            // The kill comes during the gates' compile, and the next run must reach its own
            // first compile to sweep the directory this one leaves.
            "--min-speedup",
            "1000",
            "--dry-run",
            "loop.cu",
        ],
        1,
    );
}

fn kill_9_during_a_fake_compile(args: &[&str], compiles: usize) {
    let d = kernel_dir();
    let tmp = d.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let pids = d.path().join("pids");
    let cc = script(
        d.path(),
        "slow-cc.sh",
        &format!(
            "[ \"$1\" = --version ] && {{ echo slow-cc 1; exit 0; }}\nmkdir \"$TMPDIR/left\"\nsh -c 'echo $$ >> {0}; exec sleep 300' &\nwait\n",
            pids.display()
        ),
    );
    std::fs::write(
        d.path().join("hip-unroll.toml"),
        format!(
            // `sh SCRIPT`, not the script itself: another test thread that forks while this one
            // writes the script holds it open for writing until its exec, and executing it
            // then fails with ETXTBSY ("Text file busy"); sh only reads it.
            "[compile]\ncommand = \"sh {} {{src}} -o {{out}}\"\n",
            cc.display()
        ),
    )
    .unwrap();
    // Other bytes than the baseline's: two compiles (one text is compiled once, the second
    // compile of it waiting for the first).
    let mut v = std::fs::read_to_string(d.path().join("rowsum.cu")).unwrap();
    v.push_str("// the variant\n");
    std::fs::write(d.path().join("v.cu"), v).unwrap();
    std::fs::write(
        d.path().join("loop.cu"),
        "#include <hip/hip_runtime.h>\n__global__ void k(float* p) {\n  for (int i = 0; i < 16; ++i) p[i] += 1.0f;\n}\n",
    )
    .unwrap();
    let mut child = Command::new(BIN)
        .args(args)
        .current_dir(d.path())
        .env("TMPDIR", &tmp)
        .env("HIP_UNROLL_CACHE_DIR", d.path().join("cache"))
        .spawn()
        .unwrap();
    let first = child.id();
    // The compiles have started their sleepers.
    let t0 = Instant::now();
    let started: Vec<u32> = loop {
        let s = std::fs::read_to_string(&pids).unwrap_or_default();
        let v: Vec<u32> = s.lines().filter_map(|l| l.trim().parse().ok()).collect();
        if v.len() >= compiles {
            break v;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "compiles never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let t0 = Instant::now();
    while started.iter().any(|&p| alive(p)) && t0.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(50));
    }
    let survivors: Vec<u32> = started.iter().copied().filter(|&p| alive(p)).collect();
    for &p in &survivors {
        let _ = Command::new("kill").arg("-9").arg(p.to_string()).status();
    }
    assert!(
        survivors.is_empty(),
        "compiler children {survivors:?} outlived kill -9"
    );
    // The compile's private TMPDIR outlives the kill (no destructor ran); the next run's first
    // compile removes it (its hip-unroll is gone), and leaves nothing of its own.
    let listing = || -> Vec<String> {
        std::fs::read_dir(&tmp)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect()
    };
    assert!(
        listing().iter().any(|n| n.starts_with("hip-unroll-cc-")),
        "{:?}",
        listing()
    );
    std::fs::write(
        d.path().join("hip-unroll.toml"),
        "[compile]\ncommand = \"false {src} -o {out}\"\n",
    )
    .unwrap();
    let o = Command::new(BIN)
        .args(args)
        .current_dir(d.path())
        .env("TMPDIR", &tmp)
        .env("HIP_UNROLL_CACHE_DIR", d.path().join("cache2"))
        .output()
        .unwrap();
    assert!(o.status.code().is_some(), "{o:?}");
    assert!(
        listing().is_empty(),
        "left in TMPDIR: {:?} (the killed run was {first}); the next run said: {}",
        listing(),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// A source that takes a compiler a while: many instantiated, fully unrolled kernels.
fn slow_source(header: &str) -> String {
    let mut src = format!("{header}template <int N> __global__ void k(float* p) {{\n  float a = p[0];\n#pragma unroll\n  for (int i = 0; i < N * 64; ++i) a = a * 1.0001f + p[i & 1023];\n  p[1] = a;\n}}\n");
    for i in 1..400 {
        src.push_str(&format!("template __global__ void k<{i}>(float*);\n"));
    }
    src
}

const CLANG19: &str = "clang-19 -x hip --offload-arch={arch} --cuda-device-only --no-gpu-bundle-output -nogpulib -nogpuinc -O3 {src} -o {out}";
const CLANG19_HEADER: &str = "#define __global__ __attribute__((global))\n";

fn kill_9_during_a_real_compile(config: &str, header: &str) {
    let d = kernel_dir();
    if !config.is_empty() {
        std::fs::write(d.path().join("hip-unroll.toml"), config).unwrap();
    }
    let marker = d.path().join("slow_compile_marker.cu");
    std::fs::write(&marker, slow_source(header)).unwrap();
    // Other bytes: both compile at once (the marker's compile is the one awaited below).
    std::fs::write(
        d.path().join("v.cu"),
        format!("{}// the variant\n", slow_source(header)),
    )
    .unwrap();
    let mut child = Command::new(BIN)
        .args(["pressure", "slow_compile_marker.cu", "v.cu"])
        .current_dir(d.path())
        .env("HIP_UNROLL_CACHE_DIR", d.path().join("cache"))
        .spawn()
        .unwrap();
    // Wait until the compiler (for hipcc: clang, started by hipcc's perl through sh) is at work
    // on the marker file.
    let needle = marker.display().to_string();
    let t0 = Instant::now();
    let compilers = loop {
        let v = processes_mentioning(&needle);
        if v.len() >= 2 || (v.len() == 1 && t0.elapsed() > Duration::from_millis(500)) {
            break v;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "the compiler never started on the marker"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    child.kill().unwrap();
    child.wait().unwrap();
    let t0 = Instant::now();
    while !processes_mentioning(&needle).is_empty() && t0.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(50));
    }
    let left = processes_mentioning(&needle);
    for &p in &left {
        let _ = Command::new("kill").arg("-9").arg(p.to_string()).status();
    }
    assert!(
        left.is_empty(),
        "compiler processes {left:?} (of {compilers:?}) outlived kill -9"
    );
}

#[test]
fn kill_9_during_a_hipcc_compile_ends_hipcc_and_clang() {
    kill_9_during_a_real_compile("", "#include <hip/hip_runtime.h>\n");
}

#[test]
fn kill_9_during_a_clang19_compile_ends_it() {
    kill_9_during_a_real_compile(
        &format!("[compile]\ncommand = \"{CLANG19}\"\n"),
        CLANG19_HEADER,
    );
}

/// A real compile past its limit (`[compile] timeout = 1`) is killed with its group and says so.
#[test]
fn a_real_compile_past_its_time_limit_is_killed() {
    for (config, header) in [
        (
            "[compile]\ntimeout = 1\n".to_string(),
            "#include <hip/hip_runtime.h>\n",
        ),
        (
            format!("[compile]\ntimeout = 1\ncommand = \"{CLANG19}\"\n"),
            CLANG19_HEADER,
        ),
    ] {
        let d = kernel_dir();
        std::fs::write(d.path().join("hip-unroll.toml"), &config).unwrap();
        let marker = d.path().join("slow_compile_marker.cu");
        std::fs::write(&marker, slow_source(header)).unwrap();
        let t0 = Instant::now();
        let line = one_error_line(&run_in(
            d.path(),
            &["pressure", "slow_compile_marker.cu", "rowsum.cu"],
        ));
        assert!(t0.elapsed() < Duration::from_secs(30), "{:?}", t0.elapsed());
        assert!(
            line.contains("ran longer than 1 s and was killed"),
            "{config}: {line}"
        );
        std::thread::sleep(Duration::from_millis(200));
        let left = processes_mentioning(&marker.display().to_string());
        assert!(
            left.is_empty(),
            "{config}: {left:?} outlived the time limit"
        );
    }
}

/// hipcc leaves two directories in `$TMPDIR` per compile; they go with the compile's private
/// directory.
#[test]
fn hipcc_leaves_nothing_in_tmpdir() {
    let d = kernel_dir();
    let tmp = d.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    std::fs::copy(data("codeobj/rowsum.unrolled.cu"), d.path().join("v.cu")).unwrap();
    let o = Command::new(BIN)
        .args(["pressure", "rowsum.cu", "v.cu"])
        .current_dir(d.path())
        .env("TMPDIR", &tmp)
        .env("HIP_UNROLL_CACHE_DIR", d.path().join("cache"))
        .output()
        .unwrap();
    assert!(
        o.status.code() == Some(0) || o.status.code() == Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let left: Vec<_> = std::fs::read_dir(&tmp)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert!(left.is_empty(), "left in TMPDIR: {left:?}");
}
