//! `hip-unroll profile` end to end: reading every fixture kind, errors with exit code 2, the
//! no-profiler message, and runs through stand-in rocprofv3 / rocprof scripts on PATH.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_hip-unroll"))
}

fn testdata(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/profiler")
        .join(rel)
}

fn json_of(out: &Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)))
}

fn kernel<'a>(j: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    j["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["name"] == name)
        .unwrap_or_else(|| panic!("no {name}"))
}

fn script(dir: &Path, name: &str, body: &str) {
    use std::os::unix::fs::PermissionsExt;
    let p = dir.join(name);
    std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn no_profiler_installed() {
    let empty = tempfile::tempdir().unwrap();
    let out = bin()
        .args(["profile", "--", "./app"])
        .env("PATH", empty.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("neither rocprofv3 nor rocprof was found on PATH"),
        "{err}"
    );
}

#[test]
fn from_rocprofv3_directory_json() {
    let out = bin()
        .args(["profile", "--format", "json", "--from"])
        .arg(testdata("rocprofv3-1.0"))
        .output()
        .unwrap();
    let j = json_of(&out);
    assert_eq!(j["source"], "rocprofv3-csv");
    let va = kernel(
        &j,
        "void vecAdd<float>(float*, float const*, float const*, int)",
    );
    // 1000, 1200, 1100, 1500 ns: see profiler/tests/readers.rs for the derivation.
    assert_eq!(va["calls"], 4);
    assert_eq!(va["total_ns"].as_f64(), Some(4800.0));
    assert_eq!(va["median_ns"].as_f64(), Some(1150.0));
    assert!((va["stddev_ns"].as_f64().unwrap() - 216.0247).abs() < 1e-3);
    assert_eq!(
        kernel(&j, "__amd_rocclr_fillBufferAligned")["rank"],
        serde_json::Value::Null
    );
    assert_eq!(j["roofline"]["peaks"]["gpu"], "mi210");
    assert!(j["critical_path"]["length_ns"].as_u64().unwrap() > 0);
}

#[test]
fn from_each_kind() {
    for (path, source, first) in [
        (
            "rocprofv3-0.x/1234_kernel_trace.csv",
            "rocprofv3-csv",
            "void addition_kernel<float>(float*, float const*, float const*, int, int)",
        ),
        (
            "rocprofv3-stats/run_kernel_stats.csv",
            "rocprofv3-csv",
            "transpose(float*, float*, int, int)",
        ),
        (
            "rocprof-v1/results.csv",
            "rocprof-v1",
            "matrixTranspose(float*, float*, int)",
        ),
        (
            "rocprof-v2",
            "rocprof-v1",
            "vecCopy(double*, double*, double*, int, int)",
        ),
        (
            "rocprof-compute/MI200",
            "rocprof-compute",
            "vecCopy(double*, double*, double*, int, int)",
        ),
    ] {
        let j = json_of(
            &bin()
                .args(["profile", "--format", "json", "--from"])
                .arg(testdata(path))
                .output()
                .unwrap(),
        );
        assert_eq!(j["source"], source, "{path}");
        assert_eq!(j["kernels"][0]["name"], first, "{path}");
    }
}

#[test]
fn formats_and_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("trace.json");
    let out = bin()
        .args(["profile", "--format", "csv", "-o"])
        .arg(dir.path().join("report"))
        .arg("--trace-json")
        .arg(&trace)
        .arg("--from")
        .arg(testdata("rocprof-compute/MI200"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with("name,calls,total_ns,mean_ns,median_ns"),
        "{text}"
    );
    assert!(text.contains("\"vecCopy(double*, double*, double*, int, int)\",3,51000,17000.000,16000,15000,20000,2645.751,100.0000"), "{text}");
    let svg = std::fs::read_to_string(dir.path().join("report/roofline.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    let t: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&trace).unwrap()).unwrap();
    assert_eq!(
        t["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["ph"] == "X")
            .count(),
        3
    );
    let md = bin()
        .args(["profile", "--format", "markdown", "--from"])
        .arg(testdata("rocprof-v1/results.csv"))
        .output()
        .unwrap();
    let md = String::from_utf8(md.stdout).unwrap();
    assert!(md.contains("| 1 | `matrixTranspose(float*, float*, int)` | 3 | 6900 | 2300.0 | 2300.0 | 2000 | 2600 | 300.0 | 88.46 |"), "{md}");
    // --svg without counters is an error, not a silent empty file.
    let out = bin()
        .args(["profile", "--svg"])
        .arg(dir.path().join("x.svg"))
        .arg("--from")
        .arg(testdata("rocprof-v2"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(!dir.path().join("x.svg").exists());
}

#[test]
fn bad_inputs_exit_2() {
    for (f, needle) in [
        ("bad/empty_kernel_trace.csv", "empty CSV file"),
        ("bad/badnum_kernel_trace.csv", "not an integer"),
        ("bad/foreign.csv", "unrecognised CSV header"),
        ("bad/corrupt_results.db", "not a rocpd database"),
    ] {
        let out = bin()
            .args(["profile", "--from"])
            .arg(testdata(f))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{f}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(needle) && !err.contains("panicked"),
            "{f}: {err}"
        );
    }
    let out = bin()
        .args(["profile", "--kernel", "(", "--from"])
        .arg(testdata("rocprof-v2"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = bin()
        .args(["profile", "--kernel", "nomatch", "--from"])
        .arg(testdata("rocprof-v2"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no kernel matches"));
}

/// Each error is stated once: a reason that a library error already prints is not repeated by
/// its source chain (`{:#}` in main), and names the input it is about.
#[test]
fn errors_say_their_reason_once() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.db");
    let cases: Vec<(Vec<std::ffi::OsString>, &str)> = vec![
        (
            vec!["--from".into(), missing.clone().into()],
            "no such file or directory",
        ),
        (
            vec![
                "--kernel".into(),
                "(".into(),
                "--from".into(),
                testdata("rocprof-v2").into(),
            ],
            "unclosed group",
        ),
        (
            vec![
                "--trace-json".into(),
                dir.path().into(),
                "--from".into(),
                testdata("rocprof-v2").into(),
            ],
            "is a directory, not a file",
        ),
    ];
    for (args, reason) in cases {
        let out = bin().arg("profile").args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.matches(reason).count(), 1, "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

/// Options that only shape a profiler run are refused with `--from` instead of being ignored.
#[test]
fn run_options_conflict_with_from() {
    for opt in [
        &["--preset", "compute"][..],
        &["--pmc", "SQ_WAVES"],
        &["--timeout", "5"],
        &["--arch", "gfx942"],
        &["--dry-run"],
    ] {
        let out = bin()
            .arg("profile")
            .args(opt)
            .arg("--from")
            .arg(testdata("rocprof-v2"))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{opt:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("cannot be used with") && err.contains(opt[0]),
            "{opt:?}: {err}"
        );
    }
}

/// A stand-in rocprofv3 that records its argv and writes what rocprofv3 1.0 writes for a
/// kernel trace (+ counters when --pmc is given) into `-d DIR` with prefix `-o NAME`.
const FAKE_V3: &str = r#"
if [ "$1" = "--version" ]; then echo "         version: 0.6.0"; echo "    git_revision: 1234abc"; exit 0; fi
echo "$@" >> "$LOG"
d=""; o=""; pmc=""
while [ $# -gt 0 ]; do
  case "$1" in
    -d) d="$2"; shift ;;
    -o) o="$2"; shift ;;
    --pmc) pmc=1 ;;
    --) shift; break ;;
  esac
  shift
done
mkdir -p "$d"
cp "$FIXTURE/run_kernel_trace.csv" "$d/${o}_kernel_trace.csv"
cp "$FIXTURE/run_agent_info.csv" "$d/${o}_agent_info.csv"
if [ -n "$pmc" ]; then cp "$FIXTURE/run_counter_collection.csv" "$d/${o}_counter_collection.csv"; fi
"$@"
"#;

#[test]
fn run_under_stand_in_rocprofv3() {
    let dir = tempfile::tempdir().unwrap();
    let bin_dir = dir.path().join("bin");
    std::fs::create_dir(&bin_dir).unwrap();
    script(&bin_dir, "rocprofv3", FAKE_V3);
    let log = dir.path().join("argv.log");
    let out_dir = dir.path().join("out");
    // A stale pass of an earlier run in the same directory must not be read back.
    std::fs::create_dir_all(out_dir.join("pass_2")).unwrap();
    std::fs::copy(
        testdata("rocprofv3-0.x/1234_kernel_trace.csv"),
        out_dir.join("pass_2/old_kernel_trace.csv"),
    )
    .unwrap();
    let out = bin()
        .args([
            "profile", "--preset", "kernel", "--format", "json", "--arch", "gfx90a", "-o",
        ])
        .arg(&out_dir)
        .args(["--", "true", "arg"])
        .env("PATH", format!("{}:/usr/bin:/bin", bin_dir.display()))
        .env("LOG", &log)
        .env("FIXTURE", testdata("rocprofv3-1.0/node01/4711"))
        .output()
        .unwrap();
    let j = json_of(&out);
    assert_eq!(j["source"], "rocprofv3-csv");
    assert_eq!(
        kernel(&j, "transpose(float*, float*, int, int)")["calls"],
        2
    );
    let inputs = j["inputs"].as_array().unwrap();
    assert!(!inputs.is_empty());
    assert!(
        inputs
            .iter()
            .all(|p| !p.as_str().unwrap().contains("pass_2")),
        "stale pass_2 read: {inputs:?}"
    );
    let argv = std::fs::read_to_string(&log).unwrap();
    // rocprofv3 0.6 (no rocpd format): csv only; the kernel preset fits one pass.
    assert_eq!(
        argv.trim(),
        format!("--kernel-trace --stats -f csv -d {}/pass_1 -o run --pmc SQ_WAVES SQ_BUSY_CYCLES GRBM_COUNT GRBM_GUI_ACTIVE -- true arg", out_dir.display())
    );
    assert!(out_dir.join("pass_1/run_kernel_trace.csv").is_file());
    assert!(out_dir.join("pass_1/profiler.log").is_file());
}

#[test]
fn run_falls_back_to_legacy_rocprof() {
    let dir = tempfile::tempdir().unwrap();
    let bin_dir = dir.path().join("bin");
    std::fs::create_dir(&bin_dir).unwrap();
    // rocprof v1: -o names the results CSV.
    script(
        &bin_dir,
        "rocprof",
        r#"echo "$@" >> "$LOG"; while [ $# -gt 0 ]; do case "$1" in -o) cp "$FIXTURE" "$2"; shift ;; esac; shift; done"#,
    );
    let log = dir.path().join("argv.log");
    let out_dir = dir.path().join("out");
    let out = bin()
        .args(["profile", "--format", "json", "-o"])
        .arg(&out_dir)
        .args(["--", "./app"])
        .env("PATH", format!("{}:/usr/bin:/bin", bin_dir.display()))
        .env("LOG", &log)
        .env("FIXTURE", testdata("rocprof-v1/results.csv"))
        .output()
        .unwrap();
    let j = json_of(&out);
    assert_eq!(j["source"], "rocprof-v1");
    let d = out_dir.join("pass_1");
    assert_eq!(
        std::fs::read_to_string(&log).unwrap().trim(),
        format!(
            "--timestamp on --stats -d {} -o {}/results.csv ./app",
            d.display(),
            d.display()
        )
    );
}

#[test]
fn run_timeout_and_no_kernels() {
    let dir = tempfile::tempdir().unwrap();
    let bin_dir = dir.path().join("bin");
    std::fs::create_dir(&bin_dir).unwrap();
    script(
        &bin_dir,
        "rocprofv3",
        "if [ \"$1\" = --version ]; then exit 0; fi; sleep 30",
    );
    let path = format!("{}:/usr/bin:/bin", bin_dir.display());
    let t0 = std::time::Instant::now();
    let out = bin()
        .args(["profile", "--timeout", "1", "-o"])
        .arg(dir.path().join("o1"))
        .args(["--", "./app"])
        .env("PATH", &path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("did not finish within 1 s"));
    assert!(t0.elapsed().as_secs() < 20);
    // A profiler run that writes nothing: a clear message, exit 2.
    script(&bin_dir, "rocprofv3", "exit 0");
    let out = bin()
        .args(["profile", "-o"])
        .arg(dir.path().join("o2"))
        .args(["--", "./app"])
        .env("PATH", &path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("the profiled run produced no kernel dispatches"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn kernel_filter_keeps_whole_critical_path() {
    let out = bin()
        .args([
            "profile",
            "--format",
            "json",
            "--kernel",
            "^void vecAdd",
            "--from",
        ])
        .arg(testdata("rocprofv3-1.0"))
        .output()
        .unwrap();
    let j = json_of(&out);
    let names: Vec<&str> = j["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        vec!["void vecAdd<float>(float*, float const*, float const*, int)"]
    );
    // The path still runs through transpose (10700 ns, see profiler/tests/critical.rs);
    // only vecAdd's row is reported: 2500 / 10700 = 23.364 %.
    assert_eq!(j["critical_path"]["length_ns"], 10_700);
    let cpk = j["critical_path"]["kernels"].as_array().unwrap();
    assert_eq!(cpk.len(), 1);
    assert!((cpk[0]["share"].as_f64().unwrap() - 23.364).abs() < 1e-3);
    // Percent of GPU time is relative to the kept kernels.
    assert_eq!(j["kernels"][0]["percent"].as_f64(), Some(100.0));
}

/// A dispatch whose end precedes its start (one bad row of a kernel trace) is left out of the
/// statistics and counted on stderr, instead of counting as 0 ns.
#[test]
fn inverted_dispatches_are_left_out_and_counted() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(testdata("rocprofv3-0.x/1234_kernel_trace.csv")).unwrap();
    let good = dir.path().join("good");
    let bad = dir.path().join("bad");
    std::fs::create_dir_all(&good).unwrap();
    std::fs::create_dir_all(&bad).unwrap();
    std::fs::write(good.join("1234_kernel_trace.csv"), &text).unwrap();
    // Dispatch 3 ends 70 ns before it starts.
    let broken = text.replace(
        ",8819330200000200,8819330200000270,",
        ",8819330200000270,8819330200000200,",
    );
    assert_ne!(broken, text);
    std::fs::write(bad.join("1234_kernel_trace.csv"), &broken).unwrap();
    let name = "void addition_kernel<float>(float*, float const*, float const*, int, int)";
    let run = |d: &Path| {
        bin()
            .args(["profile", "--format", "json", "--from"])
            .arg(d)
            .output()
            .unwrap()
    };
    let (g, b) = (run(&good), run(&bad));
    assert_eq!((g.status.code(), b.status.code()), (Some(0), Some(0)));
    assert!(String::from_utf8_lossy(&g.stderr).is_empty());
    let e = String::from_utf8_lossy(&b.stderr);
    assert!(
        e.contains("1 dispatch whose end timestamp precedes its start left out"),
        "{e}"
    );
    let (jg, jb) = (json_of(&g), json_of(&b));
    let (kg, kb) = (kernel(&jg, name), kernel(&jb, name));
    assert_eq!(
        kb["calls"].as_u64().unwrap() + 1,
        kg["calls"].as_u64().unwrap()
    );
    assert!(kb["min_ns"].as_f64().unwrap() > 0.0, "{kb}");
}

/// `kill -9` of `hip-unroll profile` while the profiler runs: the profiler and what it started
/// (here a `sleep` standing in for the application) die too, not reparented to PID 1.
#[test]
fn kill_9_of_profile_ends_the_profilers_group() {
    let dir = tempfile::tempdir().unwrap();
    let bin_dir = dir.path().join("bin");
    std::fs::create_dir(&bin_dir).unwrap();
    let pids = dir.path().join("pids");
    script(
        &bin_dir,
        "rocprofv3",
        &format!(
            "if [ \"$1\" = --version ]; then exit 0; fi\nsh -c 'echo $$ >> {0}; exec sleep 300' &\nwait",
            pids.display()
        ),
    );
    let mut child = bin()
        .args(["profile", "--timeout", "600", "-o"])
        .arg(dir.path().join("o"))
        .args(["--", "./app"])
        .env("PATH", format!("{}:/usr/bin:/bin", bin_dir.display()))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let t0 = std::time::Instant::now();
    let pid: i32 = loop {
        if let Some(p) = std::fs::read_to_string(&pids)
            .ok()
            .and_then(|s| s.trim().parse().ok())
        {
            break p;
        }
        assert!(t0.elapsed().as_secs() < 60, "the profiler never started");
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let alive = |p: i32| {
        std::fs::read_to_string(format!("/proc/{p}/stat")).is_ok_and(|s| {
            !s.rsplit(')')
                .next()
                .unwrap_or("")
                .trim_start()
                .starts_with('Z')
        })
    };
    let t0 = std::time::Instant::now();
    while alive(pid) && t0.elapsed().as_secs() < 10 {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let survived = alive(pid);
    if survived {
        let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
    }
    assert!(
        !survived,
        "the profiled application outlived kill -9 of profile"
    );
}
