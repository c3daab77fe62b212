//! `hip-unroll bench` end to end on a machine without a GPU: every bad spec of testdata/bench/bad
//! exits 2 with its one-line message (the expectation is the file's `# expect:` line), refused
//! kernels name their construct, `--compile-only` builds and checks the real kernels (and names a
//! variant that is the baseline's code), a cache carried to a copy of the tree on a machine
//! without any compiler serves them, and asking for a GPU that is not there fails at once with
//! one line, for each backend.
//! Needs: nvcc (CUDA_HOME or PATH: fails without it), clang++-19, hipcc.
#![allow(clippy::print_stdout, clippy::print_stderr, clippy::exit)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

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

fn nvcc() -> PathBuf {
    match runner::build::find_nvcc(None, None) {
        Ok(Some(p)) => p,
        other => panic!(
            "this test needs nvcc ({other:?}): {}; export CUDA_HOME (.ci/run does)",
            runner::build::NVCC_INSTALL
        ),
    }
}

/// The NVIDIA path on a machine with only a driver: the PTX nvcc compiled for a tree is carried
/// in the cache directory to a copy of the tree in another directory (the cache named another
/// way); with no compiler at all (no nvcc, no clang on PATH, no CUDA_HOME) it is served from
/// there, and inputs never compiled say how to prepare them.
#[test]
fn a_carried_cache_serves_a_copy_of_the_tree_on_a_machine_without_a_compiler() {
    let work = tempfile::tempdir().unwrap();
    let (a, b) = (work.path().join("a"), work.path().join("b"));
    for dir in [&a, &b] {
        std::fs::create_dir_all(dir).unwrap();
        for f in [
            "dot.cu",
            "dot.toml",
            "stencil.cu",
            "stencil.toml",
            "dot.unrolled.cu",
        ] {
            std::fs::copy(data(f), dir.join(f)).unwrap();
        }
    }
    let nvcc = nvcc();
    for spec in ["dot.toml", "stencil.toml"] {
        // Built in `a`, into `c` named relative to the working directory.
        let o = Command::new(BIN)
            .current_dir(work.path())
            .args([
                "bench",
                &format!("a/{spec}"),
                "--compile-only",
                "--backend",
                "cuda",
            ])
            .arg("--nvcc")
            .arg(&nvcc)
            .args(["--cache-dir", "c"])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(out.contains("(compiled by nvcc"), "{out}");
    }
    let empty = tempfile::tempdir().unwrap();
    let bare = |args: &[&str]| {
        Command::new(BIN)
            .arg("bench")
            .args(args)
            .arg("--cache-dir")
            .arg(work.path().join("./c"))
            .env("PATH", empty.path())
            .env_remove("CUDA_HOME")
            .output()
            .unwrap()
    };
    for spec in ["dot.toml", "stencil.toml"] {
        let p = b.join(spec);
        let o = bare(&[p.to_str().unwrap(), "--compile-only", "--backend", "cuda"]);
        assert_eq!(o.status.code(), Some(0), "{spec}: {}", stderr(&o));
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(out.contains("(precompiled"), "{spec}: {out}");
    }
    let o = bare(&[
        b.join("dot.toml").to_str().unwrap(),
        "--compile-only",
        "--backend",
        "cuda",
        "--source",
        b.join("dot.unrolled.cu").to_str().unwrap(),
    ]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("neither nvcc nor clang++-19 is installed here and the cache holds no object"),
        "{err}"
    );
    assert!(err.contains("--compile-only"), "{err}");
}

/// A spec whose `flags` are `["-include", "stdlib.h"]` builds on both NVIDIA routes (nvcc, and
/// clang-19 with the prelude where there is no nvcc) and with hipcc, run from a directory that
/// holds no `stdlib.h`: the compiler finds its own header (it once failed with `cannot read
/// stdlib.h`).
#[test]
fn a_spec_that_pre_includes_a_system_header_compiles_on_every_route() {
    let d = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    std::fs::write(
        d.path().join("k.cu"),
        "#include <hip/hip_runtime.h>\n__global__ void k(int* out) { out[threadIdx.x] = EXIT_FAILURE + (int)sizeof(div_t); }\n",
    )
    .unwrap();
    std::fs::write(
        d.path().join("k.toml"),
        "version = 1\nsource = \"k.cu\"\nkernel = \"k\"\ngrid = 1\nblock = 4\nflags = [\"-include\", \"stdlib.h\"]\n[[args]]\nname = \"out\"\nbuffer = \"i32\"\nlength = 4\noutput = \"exact\"\n",
    )
    .unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let nvcc = nvcc();
    let run = |backend: &str, nvcc: Option<&Path>| {
        let mut c = Command::new(BIN);
        c.current_dir(elsewhere.path())
            .arg("bench")
            .arg(d.path().join("k.toml"))
            .args(["--compile-only", "--backend", backend, "--cache-dir"])
            .arg(cache.path());
        match nvcc {
            Some(n) => c.arg("--nvcc").arg(n),
            // No nvcc anywhere: clang-19 with the prelude.
            None => c.env_remove("CUDA_HOME").env("PATH", "/usr/bin:/bin"),
        };
        c.output().unwrap()
    };
    for (backend, nvcc, by) in [
        ("cuda", Some(nvcc.as_path()), "(compiled by nvcc"),
        ("cuda", None, "(compiled by clang++-19"),
        ("hip", None, "gfx"),
    ] {
        let o = run(backend, nvcc);
        assert_eq!(o.status.code(), Some(0), "{backend} {by}: {}", stderr(&o));
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(out.contains(by), "{backend}: {out}");
    }
}

/// `--compile-only --source` says when the variant is the baseline's code; `--nvcc` must name
/// a file.
#[test]
fn compile_only_names_the_same_code_and_a_missing_nvcc_is_one_line() {
    let cache = tempfile::tempdir().unwrap();
    let d = tempfile::tempdir().unwrap();
    let copy = d.path().join("dot.cu");
    let text = std::fs::read_to_string(data("dot.cu")).unwrap();
    std::fs::write(&copy, format!("// only a comment differs\n{text}")).unwrap();
    let nvcc = nvcc();
    let run = |variant: &Path| {
        bench(
            &[
                data("dot.toml").to_str().unwrap(),
                "--compile-only",
                "--backend",
                "cuda",
                "--nvcc",
                nvcc.to_str().unwrap(),
                "--source",
                variant.to_str().unwrap(),
            ],
            cache.path(),
        )
    };
    let o = run(&copy);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("the same code as the baseline's"), "{out}");
    let o = run(&data("dot.unrolled.cu"));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(!out.contains("the same code"), "{out}");
    let o = bench(
        &[
            data("dot.toml").to_str().unwrap(),
            "--compile-only",
            "--nvcc",
            "/no/such/nvcc",
        ],
        cache.path(),
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.trim(), "error: --nvcc /no/such/nvcc: no such file");
}

#[test]
fn no_gpu_fails_at_once_with_one_line_for_each_backend() {
    if testenv::lacks(
        "no-gpu",
        !testenv::has_gpu_device(),
        "a GPU device node exists: the no-GPU assertions do not apply",
    ) {
        return;
    }
    let cache = tempfile::tempdir().unwrap();
    for (backend, want) in [
        ("hip", "error: no AMD GPU: "),
        ("cuda", "error: no NVIDIA driver: cannot load libcuda"),
        ("auto", "error: no GPU: "),
    ] {
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
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{backend}: {err}");
        assert_eq!(err.lines().count(), 1, "{backend}: {err}");
        // "At once" is the message, not a stopwatch: a run that waited for the device would
        // end in the initialisation timeout's message (after 5 s), never in this one.
        assert!(err.starts_with(want), "{backend}: {err}");
        assert!(!err.contains("did not finish within"), "{backend}: {err}");
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

/// `bench` reads `[compile]` of the hip-unroll.toml found upward from its spec, as every other
/// command does: `cache-dir` (no `--cache-dir` given) and, for `--compile-only`, `arch`; a broken
/// config is an error.
#[test]
fn bench_honours_the_compile_section() {
    let work = tempfile::tempdir().unwrap();
    for f in ["dot.cu", "dot.toml"] {
        std::fs::copy(data(f), work.path().join(f)).unwrap();
    }
    let cache = work.path().join("configured-cache");
    std::fs::write(
        work.path().join("hip-unroll.toml"),
        format!(
            "[compile]\ncache-dir = {:?}\narch = \"gfx908\"\n",
            cache.display().to_string()
        ),
    )
    .unwrap();
    let run = || {
        Command::new(BIN)
            .args(["bench", "dot.toml", "--compile-only", "--backend", "hip"])
            .args(["--format", "json"])
            .current_dir(work.path())
            .output()
            .unwrap()
    };
    let o = run();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let built = v.as_array().unwrap();
    assert_eq!(built.len(), 1, "{v}");
    assert!(built[0]["target"].to_string().contains("gfx908"), "{v}");
    let object = PathBuf::from(built[0]["object"].as_str().unwrap());
    assert!(object.starts_with(&cache) && object.is_file(), "{v}");

    std::fs::write(
        work.path().join("hip-unroll.toml"),
        "[compile]\nbogus = 1\n",
    )
    .unwrap();
    let o = run();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("unknown key `bogus` in [compile]"),
        "{}",
        stderr(&o)
    );
}
