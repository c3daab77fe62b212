//! `hip-unroll bench` end to end on a machine without a GPU: every bad spec of testdata/bench/bad
//! exits 2 with its one-line message (the expectation is the file's `# expect:` line), refused
//! kernels name their construct, `--compile-only` builds and checks the real kernels, a cache
//! carried to a machine without the compiler serves them, and asking for a GPU that is not there
//! fails at once with one line, for each backend.
//! Needs: clang++-19, hipcc.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_hip-unroll");

fn data(n: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/bench")).join(n)
}

fn bench(args: &[&str], cache: &Path) -> Output {
    Command::new(BIN)
        .arg("bench")
        .args(args)
        .arg("--cache-dir")
        .arg(cache)
        .output()
        .unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// True when this machine has a GPU device node (then the no-GPU tests do not apply).
fn has_gpu() -> bool {
    Path::new("/dev/kfd").exists() || Path::new("/dev/nvidia0").exists()
}

#[test]
fn every_bad_spec_exits_2_with_its_message() {
    let cache = tempfile::tempdir().unwrap();
    let mut n = 0;
    for e in std::fs::read_dir(data("bad")).unwrap() {
        let path = e.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        let expect = text
            .lines()
            .find_map(|l| l.strip_prefix("# expect: "))
            .unwrap_or_else(|| panic!("{}: no `# expect:` line", path.display()));
        let backends: Vec<&str> = match text.lines().find_map(|l| l.strip_prefix("# backend: ")) {
            Some(b) => vec![b],
            None => vec!["cuda", "hip"],
        };
        for b in backends {
            let o = bench(
                &[path.to_str().unwrap(), "--compile-only", "--backend", b],
                cache.path(),
            );
            let err = stderr(&o);
            assert_eq!(o.status.code(), Some(2), "{} ({b}): {err}", path.display());
            assert_eq!(
                err.lines().count(),
                1,
                "{} ({b}): one line: {err}",
                path.display()
            );
            assert!(
                // `FILE: ` or, for TOML errors, `FILE:LINE:COL: `.
                err.starts_with(&format!("error: {}:", path.display())) && err.contains(expect),
                "{} ({b}): want `{expect}`, got {err}",
                path.display()
            );
        }
        n += 1;
    }
    assert!(n >= 19, "{n} bad specs");
}

#[test]
fn refused_kernels_exit_2_on_nvidia_and_build_for_amd() {
    let cache = tempfile::tempdir().unwrap();
    for (spec, construct) in [
        (
            "refused/amd_builtin.toml",
            "`__builtin_amdgcn_readfirstlane`",
        ),
        ("refused/wave64.toml", "`ballot >> 32`"),
    ] {
        let p = data(spec);
        let o = bench(
            &[p.to_str().unwrap(), "--compile-only", "--backend", "cuda"],
            cache.path(),
        );
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(
            err.contains("cannot run on NVIDIA: line ") && err.contains(construct),
            "{err}"
        );
        let o = bench(
            &[p.to_str().unwrap(), "--compile-only", "--backend", "hip"],
            cache.path(),
        );
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    }
}

#[test]
fn compile_only_builds_both_targets_and_reports_the_kernel() {
    let cache = tempfile::tempdir().unwrap();
    let o = bench(
        &[
            data("dot.toml").to_str().unwrap(),
            "--compile-only",
            "--source",
            data("dot.unrolled.cu").to_str().unwrap(),
            "--format",
            "json",
        ],
        cache.path(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let built = v.as_array().unwrap();
    assert_eq!(built.len(), 4, "2 sources x 2 targets");
    let targets: Vec<String> = built.iter().map(|b| b["target"].to_string()).collect();
    assert!(
        targets.iter().any(|t| t.contains("gfx90a")) && targets.iter().any(|t| t.contains("sm_80")),
        "{targets:?}"
    );
    for b in built {
        assert_eq!(b["signature"]["symbol"], "_Z3dotPKfS0_Pfi");
        assert_eq!(b["signature"]["params"].as_array().unwrap().len(), 4);
        assert!(Path::new(b["object"].as_str().unwrap()).is_file());
    }
}

/// The NVIDIA path on a machine with only a driver: the PTX compiled here is carried in the
/// cache directory; without clang it is served from there, and inputs never compiled say how
/// to prepare them.
#[test]
fn a_carried_cache_serves_a_machine_without_clang() {
    let cache = tempfile::tempdir().unwrap();
    let spec = data("dot.toml");
    let o = bench(
        &[
            spec.to_str().unwrap(),
            "--compile-only",
            "--backend",
            "cuda",
        ],
        cache.path(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("(compiled)"));
    let empty = tempfile::tempdir().unwrap();
    let no_clang = |args: &[&str]| {
        Command::new(BIN)
            .arg("bench")
            .args(args)
            .arg("--cache-dir")
            .arg(cache.path())
            .env("PATH", empty.path())
            .output()
            .unwrap()
    };
    let o = no_clang(&[
        spec.to_str().unwrap(),
        "--compile-only",
        "--backend",
        "cuda",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("(precompiled)"),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let o = no_clang(&[
        spec.to_str().unwrap(),
        "--compile-only",
        "--backend",
        "cuda",
        "--source",
        data("dot.unrolled.cu").to_str().unwrap(),
    ]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("clang++-19 is not installed here") && err.contains("--compile-only"),
        "{err}"
    );
}

#[test]
fn no_gpu_fails_at_once_with_one_line_for_each_backend() {
    if has_gpu() {
        eprintln!("skipped: this machine has a GPU");
        return;
    }
    let cache = tempfile::tempdir().unwrap();
    for (backend, want) in [
        ("hip", "error: no AMD GPU: "),
        ("cuda", "error: no NVIDIA driver: cannot load libcuda"),
        ("auto", "error: no GPU: "),
    ] {
        let start = Instant::now();
        let o = bench(
            &[
                data("dot.toml").to_str().unwrap(),
                "--backend",
                backend,
                "--timeout",
                "5",
            ],
            cache.path(),
        );
        let took = start.elapsed();
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{backend}: {err}");
        assert_eq!(err.lines().count(), 1, "{backend}: {err}");
        assert!(err.starts_with(want), "{backend}: {err}");
        assert!(took < Duration::from_secs(5), "{backend} took {took:?}");
        assert!(o.stdout.is_empty());
    }
    // A bad spec is reported before the missing GPU.
    let o = bench(
        &[data("bad/too_short.toml").to_str().unwrap()],
        cache.path(),
    );
    assert!(stderr(&o).contains("buffer too short"), "{}", stderr(&o));
}

#[test]
fn usage_errors_exit_2() {
    let cache = tempfile::tempdir().unwrap();
    let spec = data("dot.toml");
    for (args, want) in [
        (vec![spec.to_str().unwrap(), "--compare"], "--source"),
        (
            vec![spec.to_str().unwrap(), "--iterations", "0"],
            "iterations",
        ),
        (
            vec![spec.to_str().unwrap(), "--timeout", "0"],
            "--timeout must be more than 0",
        ),
        (
            vec!["no-such-spec.toml"],
            "no-such-spec.toml: no such file or directory",
        ),
    ] {
        let o = bench(&args, cache.path());
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(stderr(&o).contains(want), "{args:?}: {}", stderr(&o));
    }
}
