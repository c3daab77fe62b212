//! `hip-unroll spec new` and `spec check` end to end: every kernel of testdata/bench (and its
//! cuda/ directory) and of testdata/specgen gets a spec that `spec check` refuses (its first
//! placeholder, with the line) until the placeholders it marks are filled, mechanically, and
//! accepts after (the compile included: hipcc for AMD, nvcc for NVIDIA); for every shipped
//! spec, the drafted argument list equals the shipped one (names, types, outputs); `spec check`
//! names the first problem of a broken spec with its line; `spec new` refuses what no spec can
//! describe and never replaces a file.
//! Needs: nvcc (CUDA_HOME or PATH: fails without it), hipcc, clang++-19.
#![allow(clippy::print_stdout, clippy::print_stderr, clippy::exit)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_hip-unroll");

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn run(args: &[&str], cwd: &Path) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir(cwd)
        .output()
        .unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn need_nvcc() {
    if !matches!(runner::build::find_nvcc(None, None), Ok(Some(_))) {
        panic!(
            "this test needs nvcc: {}; export CUDA_HOME (.ci/run does)",
            runner::build::NVCC_INSTALL
        );
    }
}

/// Copy `from` (recursively) into `to`.
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let p = e.path();
        if p.is_dir() {
            copy_tree(&p, &to.join(e.file_name()));
        } else {
            std::fs::copy(&p, to.join(e.file_name())).unwrap();
        }
    }
}

/// The spec with every value marked `# FILL:` replaced, and nothing else: the grid [8], the
/// block [64], lengths 65536, dynamic shared memory 1024 bytes, integer scalars 64, float
/// scalars 1.0, unknown types `types`. Returns the text and how many values it replaced.
fn fill(text: &str, types: &str) -> (String, usize) {
    let re =
        regex::Regex::new(r#"^(\s*([\w-]+)\s*=\s*)(0|0\.0|\[0\]|"FILL")(\s+# FILL:.*)$"#).unwrap();
    let mut n = 0;
    let out: Vec<String> = text
        .lines()
        .map(|l| match re.captures(l) {
            Some(c) => {
                n += 1;
                let v = match (&c[2], &c[3]) {
                    ("grid", _) => "[8]".to_string(),
                    ("block", _) => "[64]".to_string(),
                    ("length", _) => "65536".to_string(),
                    ("shared-bytes", _) => "1024".to_string(),
                    ("value", "0.0") => "1.0".to_string(),
                    ("value", _) => "64".to_string(),
                    (_, "\"FILL\"") => format!("\"{types}\""),
                    (k, v) => panic!("unexpected placeholder {k} = {v}"),
                };
                format!("{}{v}{}", &c[1], &c[4])
            }
            None => l.to_string(),
        })
        .collect();
    (out.join("\n") + "\n", n)
}

/// The kernels of the `.cu` files under `dir`: (file, the name to ask for). A template kernel
/// is named as a shipped spec beside it names it, else bare (its explicit instantiation).
fn kernels_under(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut shipped: Vec<(PathBuf, String)> = Vec::new();
    let mut files: Vec<PathBuf> = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "cu") {
                files.push(p);
            } else if p.extension().is_some_and(|x| x == "toml") {
                if let Ok(s) = runner::Spec::load(&p) {
                    shipped.push((s.source.clone(), s.kernel.clone()));
                }
            }
        }
    }
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let parsed = frontend::parse(&std::fs::read(&f).unwrap());
        for k in parsed
            .functions
            .iter()
            .filter(|k| k.kind == frontend::FunctionKind::Kernel)
        {
            let name = match shipped
                .iter()
                .find(|(s, n)| s == &f && kernelname::is_function(n, &k.qualified_name))
            {
                Some((_, n)) if k.is_template => n.clone(),
                _ => k.qualified_name.clone(),
            };
            out.push((f.clone(), name));
        }
    }
    out
}

/// `spec new` for each kernel into `gen/`, `spec check` refuses it at its first placeholder,
/// the filled spec passes (checked with `--backend B` for the files `backends` names).
fn round_trip(
    tree: &Path,
    kernels: &[(PathBuf, String)],
    cache: &Path,
    skip: &[&str],
    backends: &[(&str, &str)],
    new_extra: &[&str],
) -> usize {
    std::fs::create_dir_all(tree.join("gen")).unwrap();
    let mut n = 0;
    for (i, (file, kernel)) in kernels.iter().enumerate() {
        if skip.contains(&kernel.as_str()) {
            continue;
        }
        let spec = format!("gen/{i}.toml");
        let o = run(
            &[
                "spec",
                "new",
                file.to_str().unwrap(),
                "--kernel",
                kernel,
                "-o",
                &spec,
            ]
            .into_iter()
            .chain(new_extra.iter().copied())
            .collect::<Vec<_>>(),
            tree,
        );
        assert_eq!(o.status.code(), Some(0), "{kernel}: {}", stderr(&o));
        let text = std::fs::read_to_string(tree.join(&spec)).unwrap();
        let mut args = vec![
            "spec",
            "check",
            &spec,
            "--cache-dir",
            cache.to_str().unwrap(),
        ];
        if let Some((_, b)) = backends.iter().find(|(f, _)| file.ends_with(f)) {
            args.extend(["--backend", b]);
        }
        let check = |tree: &Path| run(&args, tree);
        let o = check(tree);
        let err = stderr(&o);
        let first_fill = text
            .lines()
            .position(|l| !l.starts_with('#') && l.contains("# FILL:"))
            .map(|l| l + 1)
            .unwrap_or_else(|| panic!("{kernel}: no placeholder in\n{text}"));
        assert_eq!(o.status.code(), Some(1), "{kernel}: {err}");
        assert!(
            err.starts_with(&format!("{spec}:{first_fill}: ")) && err.contains("placeholder"),
            "{kernel}: want the placeholder of line {first_fill}: {err}"
        );
        let (filled, replaced) = fill(&text, "f32");
        assert!(replaced > 0);
        // Only the marked values changed.
        let changed = text
            .lines()
            .zip(filled.lines())
            .filter(|(a, b)| a != b)
            .count();
        assert_eq!(changed, replaced, "{kernel}");
        std::fs::write(tree.join(&spec), &filled).unwrap();
        let o = check(tree);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{kernel}: {}\n{filled}",
            stderr(&o)
        );
        n += 1;
    }
    n
}

#[test]
fn every_bench_kernel_gets_a_spec_that_checks_once_filled() {
    need_nvcc();
    let tree = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    copy_tree(&root().join("testdata/bench"), tree.path());
    let kernels: Vec<(PathBuf, String)> = kernels_under(tree.path())
        .into_iter()
        .map(|(f, k)| (f.strip_prefix(tree.path()).unwrap().to_path_buf(), k))
        .collect();
    let names: Vec<&str> = kernels.iter().map(|(_, k)| k.as_str()).collect();
    for want in [
        "dot",
        "stencil",
        "features",
        "broadcast",
        "upper",
        "adamw_kernel",
        "gelu_forward",
        "layernorm_forward",
        "softmax_forward",
        "sgemm_blocktiling<64, 64, 8, 8>",
    ] {
        assert!(names.contains(&want), "{want} in {names:?}");
    }
    // prelude_features.cu exercises the NVIDIA prelude's mapping of HIP names (the `_sync`
    // shuffles), which ROCm 5's hipcc does not declare: NVIDIA only, as in runner's tests.
    let nvidia_only = [("prelude_features.cu", "cuda")];
    let n = round_trip(tree.path(), &kernels, cache.path(), &[], &nvidia_only, &[]);
    assert_eq!(n, kernels.len());
}

#[test]
fn every_specgen_fixture_kernel_checks_once_filled() {
    need_nvcc();
    let tree = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    copy_tree(&root().join("testdata/specgen"), tree.path());
    let kernels: Vec<(PathBuf, String)> = kernels_under(tree.path())
        .into_iter()
        .map(|(f, k)| (f.strip_prefix(tree.path()).unwrap().to_path_buf(), k))
        .filter(|(f, _)| f.ends_with("signatures.cu"))
        .collect();
    // `with_struct` is refused (see `new_refuses_what_no_spec_describes`).
    let n = round_trip(
        tree.path(),
        &kernels,
        cache.path(),
        &["with_struct"],
        &[],
        &[],
    );
    assert_eq!(n, 6, "{kernels:?}");
}

/// macros.cu (stores behind index macros, result pointers, a loop macro, a header found with
/// `-I`): drafted with `-I include`, whose `flags` line makes the compile find the header too.
#[test]
fn kernels_with_hidden_stores_check_once_filled() {
    need_nvcc();
    let tree = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    copy_tree(&root().join("testdata/specgen"), tree.path());
    let kernels: Vec<(PathBuf, String)> = kernels_under(tree.path())
        .into_iter()
        .map(|(f, k)| (f.strip_prefix(tree.path()).unwrap().to_path_buf(), k))
        .filter(|(f, _)| f.ends_with("macros.cu"))
        .collect();
    let n = round_trip(
        tree.path(),
        &kernels,
        cache.path(),
        &[],
        &[],
        &["-I", "include"],
    );
    assert_eq!(n, 4, "{kernels:?}");
    // Without `-I` the compile does not find the header: `spec check` says so at `source`.
    let o = run(
        &[
            "spec",
            "new",
            "macros.cu",
            "--kernel",
            "polar",
            "-o",
            "p.toml",
        ],
        tree.path(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let (filled, _) = fill(
        &std::fs::read_to_string(tree.path().join("p.toml")).unwrap(),
        "f32",
    );
    std::fs::write(tree.path().join("p.toml"), filled).unwrap();
    let o = run(
        &[
            "spec",
            "check",
            "p.toml",
            "--cache-dir",
            cache.path().to_str().unwrap(),
        ],
        tree.path(),
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("grid3.cuh"), "{}", stderr(&o));
}

/// (name, `buffer`/`scalar` and its type, output) of every argument of a spec.
fn arg_list(spec: &runner::Spec) -> Vec<(String, String, bool)> {
    spec.args
        .iter()
        .map(|a| {
            let (ty, out) = match &a.kind {
                runner::spec::ArgKind::Scalar { elem, .. } => (format!("scalar {elem}"), false),
                runner::spec::ArgKind::Buffer(b) => {
                    (format!("buffer {}", b.elem), b.output.is_some())
                }
            };
            (a.name.clone().unwrap_or_default(), ty, out)
        })
        .collect()
}

/// The drafted spec of the shipped spec's kernel, filled, has the shipped argument list.
fn same_args_as_shipped(shipped: &str) {
    let path = root().join("testdata/bench").join(shipped);
    let spec = runner::Spec::load(&path).unwrap();
    let dir = path.parent().unwrap();
    let o = run(
        &[
            "spec",
            "new",
            spec.source.to_str().unwrap(),
            "--kernel",
            &spec.kernel,
        ],
        dir,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let (filled, _) = fill(&String::from_utf8(o.stdout).unwrap(), "f32");
    let drafted = runner::Spec::parse(&filled, &dir.join("drafted.toml"))
        .unwrap_or_else(|e| panic!("{e}\n{filled}"));
    assert_eq!(drafted.kernel, spec.kernel);
    assert_eq!(arg_list(&drafted), arg_list(&spec), "{shipped}\n{filled}");
}

macro_rules! shipped {
    ($($name:ident: $file:literal,)*) => {$(
        #[test]
        fn $name() {
            same_args_as_shipped($file);
        }
    )*};
}

shipped! {
    drafted_args_equal_shipped_dot: "dot.toml",
    drafted_args_equal_shipped_stencil: "stencil.toml",
    drafted_args_equal_shipped_adamw: "cuda/adamw.toml",
    drafted_args_equal_shipped_gelu: "cuda/gelu.toml",
    drafted_args_equal_shipped_layernorm: "cuda/layernorm.toml",
    drafted_args_equal_shipped_sgemm: "cuda/sgemm.toml",
    drafted_args_equal_shipped_softmax: "cuda/softmax.toml",
    drafted_args_equal_shipped_amd_builtin: "refused/amd_builtin.toml",
    drafted_args_equal_shipped_wave64: "refused/wave64.toml",
}

#[test]
fn every_shipped_spec_is_covered_by_a_test() {
    let mut n = 0;
    let mut stack = vec![root().join("testdata/bench")];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() && !p.ends_with("bad") {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "toml") {
                n += 1;
            }
        }
    }
    assert_eq!(n, 9, "a new shipped spec needs its `shipped!` line");
}

/// A drafted spec of dot.cu, filled, in a scratch copy; `edit` breaks it; `spec check` must
/// exit 1 with `gen.toml:LINE: ` and `want` in its one line, LINE the line holding `at`.
fn broken(edit: impl Fn(&str) -> String, at: &str, want: &str) {
    let tree = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    std::fs::copy(
        root().join("testdata/bench/dot.cu"),
        tree.path().join("dot.cu"),
    )
    .unwrap();
    let o = run(&["spec", "new", "dot.cu", "--kernel", "dot"], tree.path());
    let (filled, _) = fill(&String::from_utf8(o.stdout).unwrap(), "f32");
    let text = edit(&filled);
    std::fs::write(tree.path().join("gen.toml"), &text).unwrap();
    let line = text
        .lines()
        .position(|l| l.contains(at))
        .unwrap_or_else(|| panic!("no `{at}` in\n{text}"))
        + 1;
    let o = run(
        &[
            "spec",
            "check",
            "gen.toml",
            "--backend",
            "hip",
            "--cache-dir",
            cache.path().to_str().unwrap(),
        ],
        tree.path(),
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}\n{text}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with(&format!("gen.toml:{line}: ")) && err.contains(want),
        "want line {line} (`{at}`) and `{want}`: {err}"
    );
}

#[test]
fn check_names_the_first_problem_with_its_line() {
    // A placeholder put back (the second of the spec).
    broken(
        |t| t.replacen("value = 64  # FILL", "value = 0  # FILL", 1),
        "value = 0",
        "argument 4 `value` is still a placeholder",
    );
    // An argument renamed.
    broken(
        |t| t.replace("name = \"b\"", "name = \"bee\""),
        "name = \"bee\"",
        "the kernel's parameter 2 is `b`",
    );
    // The output not marked.
    broken(
        |t| {
            t.lines()
                .filter(|l| !l.starts_with("output"))
                .collect::<Vec<_>>()
                .join("\n")
        },
        "name = \"partial\"",
        "the kernel writes through it (line 25: `partial[blockIdx.x]`), but it is not an output",
    );
    // The wrong element type.
    broken(
        |t| t.replacen("buffer = \"f32\"", "buffer = \"i32\"", 1),
        "buffer = \"i32\"",
        "buffer of i32, but parameter 1 is `const float*` (f32)",
    );
    // A scalar of the wrong type.
    broken(
        |t| t.replace("scalar = \"i32\"", "scalar = \"i64\""),
        "scalar = \"i64\"",
        "scalar i64, but parameter 4 is `int` (i32)",
    );
    // An argument too many.
    broken(
        |t| format!("{t}\n[[args]]\nname = \"extra\"\nscalar = \"i32\"\nvalue = 1\n"),
        "name = \"extra\"",
        "the spec has 5 argument(s), kernel `dot` takes 4 (a, b, partial, n)",
    );
    // No such kernel.
    broken(
        |t| t.replace("kernel = \"dot\"", "kernel = \"dott\""),
        "kernel = \"dott\"",
        "no kernel `dott` in",
    );
    // A length below the min-length: the spec's own check, at the length's line.
    broken(
        |t| t.replacen("length = 65536", "length = 7", 1),
        "length = 7",
        "buffer too short for the launch: length 7 < min-length `n` = 64",
    );
    // A TOML error: the parser's line.
    broken(|t| t.replace("seed = 2", "seed = = 2"), "seed = = 2", "");
    // The block over __launch_bounds__: the compile's check, at the block's line.
    broken(
        |t| t.replace("block = [256]", "block = [512]"),
        "block = [512]",
        "over the kernel's maximum of 256",
    );
    // The source missing.
    broken(
        |t| t.replace("source = \"dot.cu\"", "source = \"gone.cu\""),
        "source = \"gone.cu\"",
        "gone.cu",
    );
}

#[test]
fn a_compile_error_is_a_problem_at_the_source_line() {
    let tree = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    std::fs::copy(
        root().join("testdata/bench/dot.cu"),
        tree.path().join("dot.cu"),
    )
    .unwrap();
    let o = run(
        &["spec", "new", "dot.cu", "--kernel", "dot", "-o", "dot.toml"],
        tree.path(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let (filled, _) = fill(
        &std::fs::read_to_string(tree.path().join("dot.toml")).unwrap(),
        "f32",
    );
    std::fs::write(tree.path().join("dot.toml"), filled).unwrap();
    let src = std::fs::read_to_string(tree.path().join("dot.cu")).unwrap();
    std::fs::write(
        tree.path().join("dot.cu"),
        src.replace("sum += a[i] * b[i];", "sum += a[i] * b[i] * undeclared;"),
    )
    .unwrap();
    let o = run(
        &[
            "spec",
            "check",
            "dot.toml",
            "--backend",
            "hip",
            "--cache-dir",
            cache.path().to_str().unwrap(),
        ],
        tree.path(),
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.starts_with("dot.toml:6: gfx90a (hipcc): ") && err.contains("undeclared"),
        "{err}"
    );
}

#[test]
fn new_refuses_what_no_spec_describes_and_never_replaces_a_file() {
    let dir = root().join("testdata/specgen");
    let o = run(
        &["spec", "new", "signatures.cu", "--kernel", "with_struct"],
        &dir,
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.starts_with("signatures.cu:71: no spec can launch kernel `with_struct`: parameter 1 (`p`): `Params` is a struct passed by value"),
        "{err}"
    );
    assert!(o.stdout.is_empty());
    let o = run(&["spec", "new", "types.cu", "--kernel", "halves"], &dir);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("`__half` is half precision"),
        "{}",
        stderr(&o)
    );
    // Usage errors: no such kernel, a template without an instantiation to pick.
    let o = run(&["spec", "new", "signatures.cu", "--kernel", "nope"], &dir);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.starts_with("error: signatures.cu: no kernel `nope` (kernels: saxpy, fill_through_helper, scale, ops::histogram, derived, sneaky, with_struct)"),
        "{err}"
    );
    let sgemm = root().join("testdata/bench/cuda");
    let o = run(
        &["spec", "new", "sgemm.cu", "--kernel", "sgemm_blocktiling"],
        &sgemm,
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("is a template <BM, BN, BK, TM>: name an instantiation with --kernel 'sgemm_blocktiling<...>'"),
        "{}",
        stderr(&o)
    );
    let o = run(
        &["spec", "new", "signatures.cu", "--kernel", "saxpy<float>"],
        &dir,
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("not a template"), "{}", stderr(&o));
    // An existing -o is never replaced.
    let tree = tempfile::tempdir().unwrap();
    std::fs::copy(dir.join("signatures.cu"), tree.path().join("signatures.cu")).unwrap();
    std::fs::copy(dir.join("helpers.cuh"), tree.path().join("helpers.cuh")).unwrap();
    std::fs::write(tree.path().join("mine.toml"), "filled by hand\n").unwrap();
    let o = run(
        &[
            "spec",
            "new",
            "signatures.cu",
            "--kernel",
            "saxpy",
            "-o",
            "mine.toml",
        ],
        tree.path(),
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("already exists"), "{}", stderr(&o));
    assert_eq!(
        std::fs::read_to_string(tree.path().join("mine.toml")).unwrap(),
        "filled by hand\n"
    );
    // A spec written elsewhere names its source relative to itself.
    std::fs::create_dir(tree.path().join("specs")).unwrap();
    let o = run(
        &[
            "spec",
            "new",
            "signatures.cu",
            "--kernel",
            "ops::histogram",
            "-o",
            "specs/h.toml",
        ],
        tree.path(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = std::fs::read_to_string(tree.path().join("specs/h.toml")).unwrap();
    assert!(
        text.contains("source = \"../signatures.cu\"\nkernel = \"ops::histogram\"\n"),
        "{text}"
    );
}

#[test]
fn an_unknown_type_is_a_placeholder_until_filled() {
    let tree = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    std::fs::copy(
        root().join("testdata/specgen/types.cu"),
        tree.path().join("types.cu"),
    )
    .unwrap();
    let o = run(
        &[
            "spec", "new", "types.cu", "--kernel", "typed", "-o", "t.toml",
        ],
        tree.path(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = std::fs::read_to_string(tree.path().join("t.toml")).unwrap();
    assert!(text.contains("name = \"n\"\nscalar = \"u32\"\n"), "{text}");
    assert!(
        text.contains("scalar = \"FILL\"  # FILL: `intmax_t` is a type hip-unroll does not know"),
        "{text}"
    );
    let (filled, _) = fill(&text, "i64");
    std::fs::write(tree.path().join("t.toml"), filled).unwrap();
    let o = run(
        &[
            "spec",
            "check",
            "t.toml",
            "--backend",
            "hip",
            "--cache-dir",
            cache.path().to_str().unwrap(),
        ],
        tree.path(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.starts_with("t.toml: ok: kernel `typed`, 3 argument(s), built for gfx90a with hipcc"),
        "{out}"
    );
}

#[test]
fn check_usage_errors_exit_2() {
    let tree = tempfile::tempdir().unwrap();
    let o = run(&["spec", "check", "missing.toml"], tree.path());
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    let o = run(&["spec", "check"], tree.path());
    assert_eq!(o.status.code(), Some(2));
}
