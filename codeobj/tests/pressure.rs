//! The vgpr-pressure guard on real compiles (Debian's hipcc, gfx90a): a variant that spills, one
//! that loses occupancy, and one that costs nothing; plus the compile cache and its errors.
//! Needs: hipcc.

use codeobj::compile::{CompileError, Compiler, DEFAULT_COMMAND};
use codeobj::judge::{Reason, Thresholds};
use std::path::PathBuf;
use std::sync::OnceLock;

fn data(n: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../testdata/codeobj")).join(n)
}

fn cache() -> &'static tempfile::TempDir {
    static C: OnceLock<tempfile::TempDir> = OnceLock::new();
    C.get_or_init(|| tempfile::tempdir().unwrap())
}

fn compiler() -> Compiler {
    Compiler::new(DEFAULT_COMMAND, "gfx90a", cache().path())
}

fn judge(base: &str, var: &str, loss: u32) -> codeobj::judge::Judgement {
    let (b, v, j) = codeobj::compile::compile_and_judge(
        &compiler(),
        &data(base),
        &data(var),
        &Thresholds {
            max_occupancy_loss: loss,
        },
        None,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(b.code_objects[0].arch, "gfx90a");
    assert_eq!(v.code_objects[0].arch, "gfx90a");
    j
}

#[test]
fn unrolled_variant_that_spills_is_blocked() {
    let j = judge("tile_gemm.cu", "tile_gemm.unrolled.cu", 0);
    assert!(j.blocked);
    let k = &j.kernels[0];
    assert_eq!(
        k.before.vgpr_spill_count, 0,
        "baseline does not spill: {:?}",
        k.before
    );
    let after = k.after.as_ref().unwrap();
    assert!(
        after.vgpr_spill_count > 0 && after.scratch_bytes > 0,
        "{after:?}"
    );
    assert!(
        k.reasons
            .iter()
            .any(|r| matches!(r, Reason::VgprSpill { before: 0, .. })),
        "{:?}",
        k.reasons
    );
    assert!(
        k.reasons
            .iter()
            .any(|r| matches!(r, Reason::NewScratch { before: 0, .. })),
        "{:?}",
        k.reasons
    );
}

#[test]
fn unrolled_variant_that_loses_occupancy_is_blocked_unless_allowed() {
    let j = judge("tile_gemm_lb.cu", "tile_gemm_lb.unrolled.cu", 0);
    let k = &j.kernels[0];
    let after = k.after.as_ref().unwrap();
    assert_eq!(after.vgpr_spill_count, 0, "{after:?}");
    let (b, a) = (
        k.before.waves_per_simd.unwrap(),
        after.waves_per_simd.unwrap(),
    );
    assert!(a < b, "occupancy {b} -> {a}");
    assert_eq!(
        k.reasons,
        vec![Reason::OccupancyLoss {
            before: b,
            after: a,
            allowed: 0
        }]
    );
    assert!(j.blocked);
    // Allowing the loss accepts it.
    let j = judge("tile_gemm_lb.cu", "tile_gemm_lb.unrolled.cu", b - a);
    assert!(!j.blocked, "{:?}", j.kernels[0].reasons);
}

#[test]
fn cheap_unroll_is_accepted() {
    let j = judge("rowsum.cu", "rowsum.unrolled.cu", 0);
    assert!(!j.blocked, "{:?}", j.kernels);
    assert_eq!(j.kernels.len(), 1);
    let k = &j.kernels[0];
    assert_eq!(
        k.after.as_ref().unwrap().waves_per_simd,
        k.before.waves_per_simd
    );
}

#[test]
fn compiles_are_cached_by_content() {
    let c = compiler();
    let first = c.compile(&data("rowsum.cu")).unwrap();
    let again = c.compile(&data("rowsum.cu")).unwrap();
    assert!(again.cached);
    assert_eq!(first.object, again.object);
    // Another source, command or arch is another key.
    let k1 = c.cache_key(b"a").unwrap();
    assert_ne!(k1, c.cache_key(b"b").unwrap());
    assert_ne!(
        k1,
        Compiler::new(DEFAULT_COMMAND, "gfx940", cache().path())
            .cache_key(b"a")
            .unwrap()
    );
    assert_ne!(
        k1,
        Compiler::new(
            "hipcc -O2 --offload-arch={arch} --genco {src} -o {out}",
            "gfx90a",
            cache().path()
        )
        .cache_key(b"a")
        .unwrap()
    );
}

/// The key covers included headers, found recursively through quotes and `-I` directories:
/// editing a header changes the key, editing an unrelated file does not.
#[test]
fn cache_key_includes_headers() {
    let d = tempfile::tempdir().unwrap();
    let inc = d.path().join("inc");
    std::fs::create_dir_all(d.path().join("sub")).unwrap();
    std::fs::create_dir_all(&inc).unwrap();
    std::fs::write(d.path().join("sub/a.h"), "#include <b.h>\n#define A 1\n").unwrap();
    std::fs::write(inc.join("b.h"), "#include \"../sub/a.h\"\n#define B 2\n").unwrap();
    std::fs::write(d.path().join("other.h"), "x").unwrap();
    let src = d.path().join("k.cu");
    let text = "#include \"sub/a.h\"\n#include <vector>\n__global__ void k() {}\n";
    std::fs::write(&src, text).unwrap();
    let c = Compiler::new(
        format!(
            "hipcc -I {} --offload-arch={{arch}} --genco {{src}} -o {{out}}",
            inc.display()
        ),
        "gfx90a",
        d.path().join("cache"),
    );
    let deps = codeobj::compile::local_includes(&src, text.as_bytes(), &c.include_dirs()).unwrap();
    let names: Vec<String> = deps
        .iter()
        .map(|(p, _)| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, vec!["a.h", "b.h"]);
    let k1 = c.source_key(Some(&src), text.as_bytes()).unwrap();
    assert_ne!(k1, c.source_key(None, text.as_bytes()).unwrap());
    std::fs::write(d.path().join("other.h"), "y").unwrap();
    assert_eq!(k1, c.source_key(Some(&src), text.as_bytes()).unwrap());
    std::fs::write(inc.join("b.h"), "#include \"../sub/a.h\"\n#define B 3\n").unwrap();
    let k2 = c.source_key(Some(&src), text.as_bytes()).unwrap();
    assert_ne!(k1, k2);
    // A copy of the tree elsewhere, compiled from its own directory with a relative -I, has
    // the same key: header paths enter the key relative to the source or the compiler's cwd.
    let copy = tempfile::tempdir().unwrap();
    for f in ["k.cu", "sub/a.h", "inc/b.h"] {
        let to = copy.path().join(f);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(d.path().join(f), &to).unwrap();
    }
    let rel = |root: &std::path::Path| {
        Compiler::new(
            "hipcc -Iinc --offload-arch={arch} --genco {src} -o {out}",
            "gfx90a",
            d.path().join("cache"),
        )
        .in_dir(root)
    };
    let a = rel(d.path())
        .source_key(Some(&src), text.as_bytes())
        .unwrap();
    let b = rel(copy.path())
        .source_key(Some(&copy.path().join("k.cu")), text.as_bytes())
        .unwrap();
    assert_eq!(a, b);
    assert_ne!(a, c.source_key(None, text.as_bytes()).unwrap());
}

#[test]
fn compiler_errors_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let missing = Compiler::new("no-such-compiler-xyz {src} -o {out}", "gfx90a", dir.path());
    match missing.compile(&data("rowsum.cu")) {
        Err(CompileError::CompilerMissing { program, .. }) => {
            assert_eq!(program, "no-such-compiler-xyz")
        }
        other => panic!("{other:?}"),
    }
    let bad = dir.path().join("bad.cu");
    std::fs::write(&bad, "__global__ void k( { syntax error").unwrap();
    match compiler().compile(&bad) {
        Err(CompileError::Failed { stderr, .. }) => assert!(stderr.contains("error"), "{stderr}"),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        Compiler::new("hipcc {src}", "gfx90a", dir.path()).compile(&data("rowsum.cu")),
        Err(CompileError::MissingPlaceholder(_))
    ));
}

/// A failing compiler's stderr is cut to its last 4000 bytes on a character boundary: clang
/// quotes identifiers with `‘’` in UTF-8 locales, and a cut inside one must not panic.
#[test]
fn long_non_ascii_compiler_output_is_cut_on_a_char_boundary() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let cc = dir.path().join("fails.sh");
    // 3000 * 3 bytes: the cut at len - 4000 = 5000 falls inside a `‘`.
    std::fs::write(
        &cc,
        "#!/bin/sh\ni=0\nwhile [ $i -lt 3000 ]; do printf '\\342\\200\\230' >&2; i=$((i+1)); done\nexit 1\n",
    )
    .unwrap();
    std::fs::set_permissions(&cc, std::fs::Permissions::from_mode(0o755)).unwrap();
    let c = Compiler::new(
        format!("{} {{src}} {{out}}", cc.display()),
        "gfx90a",
        dir.path().join("cache"),
    );
    match c.compile(&data("rowsum.cu")) {
        Err(CompileError::Failed { stderr, .. }) => {
            assert!(
                stderr.len() <= 4000 && stderr.len() >= 3997,
                "{}",
                stderr.len()
            );
            assert!(stderr.chars().all(|ch| ch == '‘'), "{stderr}");
        }
        other => panic!("{other:?}"),
    }
}

/// A header the source includes with `#include "..."` is part of the key: editing it rebuilds.
#[test]
fn local_headers_are_part_of_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("k.cu");
    std::fs::create_dir(dir.path().join("inc")).unwrap();
    std::fs::write(
        &src,
        "#include <hip/hip_runtime.h>\n#include \"inc/n.h\"\n__global__ void k(float* p) { p[0] = N; }\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("inc/n.h"), "#include \"m.h\"\n").unwrap();
    std::fs::write(dir.path().join("inc/m.h"), "#define N 1\n").unwrap();
    let c = Compiler::new(DEFAULT_COMMAND, "gfx90a", dir.path().join("cache"));
    let first = c.compile(&src).unwrap();
    assert!(!first.cached);
    assert!(c.compile(&src).unwrap().cached);
    // Two levels down.
    std::fs::write(dir.path().join("inc/m.h"), "#define N 2\n").unwrap();
    let second = c.compile(&src).unwrap();
    assert!(!second.cached, "an edited header must rebuild");
    assert_ne!(first.object, second.object);
    // A define is part of the key too.
    let with_define = c.clone().with_args(["-DUNUSED=3".to_string()]);
    assert!(!with_define.compile(&src).unwrap().cached);
}

/// Where the compiler is missing, the object built from the same inputs is served from the
/// `by-source` index (a cache carried to a machine with only a GPU driver); inputs never built
/// still fail with the missing compiler.
#[test]
fn precompiled_objects_serve_a_machine_without_the_compiler() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let cc = bin.join("fakecc");
    std::fs::write(
        &cc,
        "#!/bin/sh\necho fakecc 1.0\n[ \"$1\" = --version ] && exit 0\ncp \"$1\" \"$2\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&cc, std::fs::Permissions::from_mode(0o755)).unwrap();
    let src = dir.path().join("k.ptx.in");
    std::fs::write(&src, ".entry k()\n").unwrap();
    let cache = dir.path().join("cache");
    let template = format!("{} {{src}} {{out}}", cc.display());
    let c = Compiler::new(template.clone(), "sm_80", &cache)
        .with_output(codeobj::compile::Output::Text("ptx"));
    let built = c.compile(&src).unwrap();
    assert!(!built.precompiled && built.object.extension().unwrap() == "ptx");
    assert!(c.compile(&src).unwrap().cached);
    std::fs::remove_file(&cc).unwrap();
    let served = c.compile(&src).unwrap();
    assert!(served.precompiled && served.cached);
    assert_eq!(served.object, built.object);
    // Inputs never built here still fail with the missing compiler.
    std::fs::write(&src, ".entry other()\n").unwrap();
    match c.compile(&src) {
        Err(CompileError::CompilerMissing { program, .. }) => assert!(program.ends_with("fakecc")),
        other => panic!("{other:?}"),
    }
}
