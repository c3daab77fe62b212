//! The tiny deterministic tree of the tune tests (`tune_kill`, `tune_slurm`): three kernels of
//! one loop each, a build that concatenates them into `app.src` and a run that prints a cost
//! following from the pragmas there. The code-object gates are off (`[compile] command` fails).
#![allow(dead_code)]

pub const A: &str = "__global__ void fast(float* a, int n) {
    for (int i = 0; i < n; ++i) {
        a[i] = a[i] * 2.0f + 1.0f;
    }
}
";

pub const B: &str = "__global__ void more(float* b, int n) {
    for (int j = 0; j < n; ++j) {
        b[j] = b[j] * 3.0f;
    }
}
";

pub const C: &str = "__global__ void flat(float* c, int n) {
    for (int k = 0; k < n; ++k) {
        c[k] += 1.0f;
    }
}
";

/// The figure: 2000, less 200 or 500 for `fast`'s loop unrolled 2 or 4 times, less 100 or 300
/// for `more`'s; `flat`'s loop changes nothing.
pub const RUN: &str = "c=2000
if grep -A1 'pragma unroll 4' app.src | grep -q 'int i = 0'; then c=$((c - 500)); fi
if grep -A1 'pragma unroll 2' app.src | grep -q 'int i = 0'; then c=$((c - 200)); fi
if grep -A1 'pragma unroll 4' app.src | grep -q 'int j = 0'; then c=$((c - 300)); fi
if grep -A1 'pragma unroll 2' app.src | grep -q 'int j = 0'; then c=$((c - 100)); fi
echo \"cost: $c\"
";

/// The tiny tree: `a.cu`, `b.cu`, `c.cu`, each a kernel with one loop. With `link`, `a.cu` is a
/// symbolic link to `src/a.cu` and `inc` one to `src` (the build reads both links).
pub fn tiny(link: bool) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    let mut build = "cat a.cu b.cu c.cu > app.src\n".to_string();
    if link {
        std::fs::create_dir(p.join("src")).unwrap();
        std::fs::write(p.join("src/a.cu"), A).unwrap();
        std::os::unix::fs::symlink("src/a.cu", p.join("a.cu")).unwrap();
        std::os::unix::fs::symlink("src", p.join("inc")).unwrap();
        build.push_str("cmp -s a.cu inc/a.cu\n");
    } else {
        std::fs::write(p.join("a.cu"), A).unwrap();
    }
    std::fs::write(p.join("b.cu"), B).unwrap();
    std::fs::write(p.join("c.cu"), C).unwrap();
    std::fs::write(p.join("build.sh"), build).unwrap();
    std::fs::write(p.join("run.sh"), RUN).unwrap();
    std::fs::write(p.join(".gitignore"), "app.src\n").unwrap();
    std::fs::write(
        p.join("hip-unroll.toml"),
        "[compile]\ncommand = \"false {src} -o {out}\"\n",
    )
    .unwrap();
    d
}

/// The tune command line over the tiny tree (JSON report, state in `state`): factors 2 and 4 in
/// pragma mode, two jobs.
pub fn tune_args(state: &std::path::Path) -> Vec<String> {
    [
        "tune",
        "--build",
        "sh build.sh",
        "--run",
        "sh run.sh",
        "--time-regex",
        "cost: ([0-9]+)",
        "--time-unit",
        "units",
        "--factors",
        "2,4",
        // One chunk of two variants per loop: the winner's working copy becomes the baseline's
        // and the next loop's variants are prepared in the copy that held the baseline.
        "--mode",
        "pragma",
        "--jobs",
        "2",
        "--state",
        state.to_str().unwrap(),
        "--format",
        "json",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}
