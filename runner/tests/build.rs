//! Real compiles of the testdata kernels (testdata/bench): nvcc (the NVIDIA route) and clang-19
//! (its fallback) to PTX (nvcc: a cubin and the PTX kept beside it), hipcc to gfx90a code
//! objects, all through codeobj's cache; the kernel
//! found by name (templates instantiated when the source does not), checked against its real
//! parameters. Every shipped spec and the unrolled variants of its loops compile for sm_80 and
//! sm_90 with nvcc; CUDA sources written like llm.c's and SGEMM_CUDA's compile as they are; a
//! float fma stays fma.rn.f32 on both compilers; a cache serves a copy of the tree elsewhere.
//! Needs: nvcc (CUDA_HOME or PATH; these tests fail without it), clang++-19, hipcc.
#![allow(clippy::print_stdout, clippy::print_stderr, clippy::exit)]

mod support;

use runner::build::{build, BuildOptions, CudaCompiler, Target};
use runner::ptx;
use runner::spec::{ArgKind, Spec};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

fn data(n: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../testdata/bench")).join(n)
}

/// One cache for the clang and hipcc builds of this file.
fn opts() -> &'static BuildOptions {
    static D: OnceLock<(tempfile::TempDir, BuildOptions)> = OnceLock::new();
    &D.get_or_init(|| {
        let d = tempfile::tempdir().unwrap();
        let o = BuildOptions::new(d.path()).with_nvcc(None);
        (d, o)
    })
    .1
}

/// One cache for the nvcc builds of this file.
fn nvcc_opts() -> &'static BuildOptions {
    static D: OnceLock<(tempfile::TempDir, BuildOptions)> = OnceLock::new();
    &D.get_or_init(|| {
        let d = tempfile::tempdir().unwrap();
        let o = BuildOptions::new(d.path()).with_nvcc(Some(support::nvcc()));
        (d, o)
    })
    .1
}

fn cuda() -> Target {
    Target::Cuda("sm_80".into())
}

fn hip() -> Target {
    Target::Hip("gfx90a".into())
}

/// The PTX of a build (nvcc's: the one kept beside its cubin).
fn ptx_of(image: &[u8]) -> ptx::PtxModule {
    ptx::parse(std::str::from_utf8(image).unwrap()).unwrap()
}

#[test]
fn dot_compiles_to_ptx_with_its_entry_and_params() {
    let spec = Spec::load(&data("dot.toml")).unwrap();
    for src in ["dot.cu", "dot.unrolled.cu"] {
        let b = build(&spec, &data(src), &cuda(), opts()).unwrap_or_else(|e| panic!("{e}"));
        let m = ptx_of(&b.image);
        assert_eq!(m.target.as_deref(), Some("sm_80"));
        assert_eq!(m.version.as_deref(), Some("7.8"));
        let e = m
            .entries
            .iter()
            .find(|e| e.name == "_Z3dotPKfS0_Pfi")
            .expect("the dot entry");
        assert_eq!(
            e.params
                .iter()
                .map(|p| (p.ty.as_str(), p.size))
                .collect::<Vec<_>>(),
            [("u64", 8), ("u64", 8), ("u64", 8), ("u32", 4)]
        );
        assert_eq!(
            b.signature.demangled.as_deref(),
            Some("dot(float const*, float const*, float*, int)")
        );
        assert_eq!(
            b.signature
                .params
                .iter()
                .map(|p| p.pointer)
                .collect::<Vec<_>>(),
            [Some(true), Some(true), Some(true), Some(false)]
        );
        assert_eq!(b.ptx_cc, Some((8, 0)));
    }
}

#[test]
fn dot_compiles_to_a_code_object_whose_args_codeobj_reads() {
    let spec = Spec::load(&data("dot.toml")).unwrap();
    let b = build(&spec, &data("dot.cu"), &hip(), opts()).unwrap_or_else(|e| panic!("{e}"));
    let v =
        build(&spec, &data("dot.unrolled.cu"), &hip(), opts()).unwrap_or_else(|e| panic!("{e}"));
    let s = &b.signature;
    assert_eq!(s.symbol, "_Z3dotPKfS0_Pfi");
    assert_eq!(
        s.params
            .iter()
            .map(|p| (p.offset, p.size))
            .collect::<Vec<_>>(),
        [(0, 8), (8, 8), (16, 8), (24, 4)]
    );
    assert_eq!(s.kernarg_size, 28);
    assert_eq!(s.max_block_size, Some(256), "__launch_bounds__(256)");
    assert_eq!(b.static_shared, 1024, "__shared__ float sums[256]");
    assert_eq!(
        v.signature, b.signature,
        "the unrolled variant keeps the argument layout"
    );
    let cos = codeobj::load(&b.object).unwrap();
    assert_eq!(cos[0].arch, "gfx90a");
    assert_eq!(cos[0].kernels[0].meta.name, "_Z3dotPKfS0_Pfi");
}

#[test]
fn template_kernels_are_found_and_instantiated() {
    let spec = Spec::load(&data("stencil.toml")).unwrap();
    for t in [cuda(), hip()] {
        let b = build(&spec, &data("stencil.cu"), &t, opts()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(b.signature.symbol, "_Z7stencilILi4EEvPKfPfS1_i");
    }
    let b =
        build(&spec, &data("stencil.cu"), &cuda(), nvcc_opts()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(b.signature.symbol, "_Z7stencilILi4EEvPKfPfS1_i");
    // stencil<2> is not instantiated by the source: a wrapper does it.
    let text = std::fs::read_to_string(data("stencil.toml"))
        .unwrap()
        .replace("stencil<4>", "stencil<2>");
    let spec2 = Spec::parse(&text, &data("stencil.toml")).unwrap();
    for (t, o) in [(cuda(), opts()), (hip(), opts()), (cuda(), nvcc_opts())] {
        let b = build(&spec2, &data("stencil.cu"), &t, o).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(b.signature.symbol, "_Z7stencilILi2EEvPKfPfS1_i", "{t:?}");
    }
    // A template argument of the wrong kind fails in the compiler, with its message.
    let text = std::fs::read_to_string(data("stencil.toml"))
        .unwrap()
        .replace("stencil<4>", "stencil<float>");
    let bad = Spec::parse(&text, &data("stencil.toml")).unwrap();
    let e = build(&bad, &data("stencil.cu"), &cuda(), opts())
        .unwrap_err()
        .to_string();
    assert!(e.contains("error"), "{e}");
}

/// The prelude maps every HIP name of prelude_features.cu to what PTX has for it.
#[test]
fn prelude_maps_hip_names_to_ptx() {
    let text = "version = 1\nsource = \"prelude_features.cu\"\nkernel = \"features\"\ngrid = 1\nblock = 256\nshared-bytes = 1024\n\
[[args]]\nbuffer = \"f32\"\nlength = 256\n[[args]]\nbuffer = \"i32\"\nlength = 2\n[[args]]\nbuffer = \"u64\"\nlength = 1\n[[args]]\nbuffer = \"f64\"\nlength = 1\n";
    let spec = Spec::parse(text, &data("features.toml")).unwrap();
    let b = build(
        &spec,
        &data("prelude_features.cu"),
        &Target::Cuda("sm_90".into()),
        opts(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let ptx = String::from_utf8(b.image.clone()).unwrap();
    for needle in [
        "shfl.sync.down.b32",
        "shfl.sync.bfly.b32",
        "shfl.sync.up.b32",
        "shfl.sync.idx.b32",
        "vote.sync.ballot.b32",
        "%laneid",
        "atom.global.add.u32",
        "atom.global.max.s32",
        "atom.global.add.f64",
        "membar.gl",
        "bar.sync",
        ".maxntid 256, 1, 1",
        ".extern .shared",
    ] {
        assert!(ptx.contains(needle), "{needle} missing from the PTX");
    }
    // shfl_xor with width 16 carries PTX's clamp value ((32 - 16) << 8) | 31 = 4127.
    assert!(ptx.contains("4127"), "width-16 clamp");
    // (No AMD build of this one: hipcc 5.2 has no `_sync` shuffles.)
}

#[test]
fn refused_kernels_name_the_construct_and_line() {
    for (spec, want) in [
        (
            "refused/amd_builtin.toml",
            "line 8: `__builtin_amdgcn_readfirstlane`: an AMDGPU builtin, with no CUDA equivalent (through macro `FIRST_LANE`)",
        ),
        (
            "refused/wave64.toml",
            "line 7: `ballot >> 32`: reads the upper 32 lanes of a ballot",
        ),
    ] {
        let spec = Spec::load(&data(spec)).unwrap();
        let e = build(&spec, &spec.source, &cuda(), opts())
            .unwrap_err()
            .to_string();
        assert!(e.contains("cannot run on NVIDIA: ") && e.contains(want), "{e}");
        // AMD compiles them.
        build(&spec, &spec.source, &hip(), opts()).unwrap_or_else(|e| panic!("{e}"));
    }
}

#[test]
fn file_init_must_have_the_buffer_size() {
    let dir = tempfile::tempdir().unwrap();
    let text = "version = 1\nsource = \"k.cu\"\nkernel = \"k\"\ngrid = 1\nblock = 1\n[[args]]\nname = \"a\"\nbuffer = \"f32\"\nlength = 4\nfile = \"a.bin\"\n";
    let path = dir.path().join("s.toml");
    // Checked when the spec loads: a missing file, and one of the wrong size.
    let e = Spec::parse(text, &path).unwrap_err().to_string();
    assert!(
        e.ends_with(&format!(
            "argument 1 (`a`): file {}: no such file or directory",
            dir.path().join("a.bin").display()
        )),
        "{e}"
    );
    std::fs::write(dir.path().join("a.bin"), [0u8; 12]).unwrap();
    let e = Spec::parse(text, &path).unwrap_err().to_string();
    assert!(
        e.ends_with("a.bin holds 12 bytes, the buffer is 4 x f32 = 16 bytes"),
        "{e}"
    );
    std::fs::write(dir.path().join("a.bin"), 1.5f32.to_le_bytes().repeat(4)).unwrap();
    let spec = Spec::parse(text, &path).unwrap();
    assert_eq!(
        runner::session::contents(&spec, 0).unwrap(),
        1.5f32.to_le_bytes().repeat(4)
    );
    // And again when it is read (it may have changed since).
    std::fs::write(dir.path().join("a.bin"), [0u8; 12]).unwrap();
    let e = runner::session::contents(&spec, 0).unwrap_err().to_string();
    assert!(
        e.ends_with("a.bin holds 12 bytes, the buffer is 4 x f32 = 16 bytes"),
        "{e}"
    );
}

/// A spec whose `flags` pre-include a system header (`-include stdlib.h`, in any of the
/// spellings nvcc knows) compiles with nvcc, clang-19 and hipcc: the name is left to the
/// compiler's own search (never read from the working directory), while a header of that
/// name-style beside the spec is the spec directory's file, hashed into the key.
#[test]
fn pre_included_headers_are_found_as_the_compiler_finds_them() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("k.cu"),
        "#include <hip/hip_runtime.h>\n__global__ void k(int* out) { out[threadIdx.x] = EXIT_FAILURE + (int)sizeof(div_t) + LOCAL; }\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("local.h"), "#define LOCAL 1\n").unwrap();
    let spec = |flags: &str| {
        let text = format!(
            "version = 1\nsource = \"k.cu\"\nkernel = \"k\"\ngrid = 1\nblock = 4\nflags = [{flags}, \"-include\", \"local.h\"]\n[[args]]\nname = \"out\"\nbuffer = \"i32\"\nlength = 4\noutput = \"exact\"\n"
        );
        Spec::parse(&text, &dir.path().join("k.toml")).unwrap()
    };
    // The working directory of the tests is the crate's, not the spec's.
    assert!(!Path::new("local.h").exists());
    let local = dir.path().join("local.h").display().to_string();
    for flags in [
        r#""-include", "stdlib.h""#,
        r#""-include=stdlib.h""#,
        r#""--pre-include", "stdlib.h""#,
        r#""--pre-include=stdlib.h""#,
    ] {
        let s = spec(flags);
        let args = runner::build::spec_flags(&s);
        assert_eq!(args[..2], ["-include", "stdlib.h"], "{flags}");
        assert_eq!(
            args[args.len() - 2..],
            ["-include".to_string(), local.clone()]
        );
        for (target, o) in [(&cuda(), nvcc_opts()), (&cuda(), opts()), (&hip(), opts())] {
            let b = build(&s, &s.source, target, o)
                .unwrap_or_else(|e| panic!("{flags} for {target:?}: {e}"));
            assert_eq!(b.signature.params.len(), 1);
        }
    }
    // `-imacros` (clang's and hipcc's; nvcc has none) keeps its name, in the separate form.
    let args = runner::build::spec_flags(&spec(r#""-imacros=stdlib.h""#));
    assert_eq!(args[..2], ["-imacros", "stdlib.h"]);
    // The spec directory's header is in the key: another content, another compile.
    let s = spec(r#""-include", "stdlib.h""#);
    assert!(build(&s, &s.source, &cuda(), nvcc_opts()).unwrap().cached);
    std::fs::write(dir.path().join("local.h"), "#define LOCAL 2\n").unwrap();
    assert!(!build(&s, &s.source, &cuda(), nvcc_opts()).unwrap().cached);
}

/// The shipped specs: testdata/bench/*.toml and testdata/bench/cuda/*.toml.
fn shipped_specs() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for dir in [data(""), data("cuda")] {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "toml") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The spec's arguments against the PTX entry's `.param`s: one each, of the same size.
fn check_ptx_params(spec: &Spec, ptx: &[u8], symbol: &str) {
    let m = ptx_of(ptx);
    let e = m
        .entries
        .iter()
        .find(|e| e.name == symbol)
        .unwrap_or_else(|| panic!("{symbol} not in the PTX of {}", spec.path.display()));
    assert_eq!(e.params.len(), spec.args.len(), "{}", spec.path.display());
    for (a, p) in spec.args.iter().zip(&e.params) {
        let want = match &a.kind {
            ArgKind::Buffer(_) => 8,
            ArgKind::Scalar { elem, .. } => elem.size() as u32,
        };
        assert_eq!(p.size, want, "{}: {:?}", spec.path.display(), a.name);
    }
}

/// Every shipped spec's kernel, and every variant `unroll` makes of its loops (factor 4, both
/// modes), compiles with nvcc for sm_80 and sm_90, and the spec fits the real PTX parameters.
#[test]
fn every_shipped_spec_and_its_variants_compile_for_sm_80_and_sm_90_with_nvcc() {
    let work = tempfile::tempdir().unwrap();
    let mut jobs: Vec<(Spec, PathBuf)> = Vec::new();
    let specs = shipped_specs();
    assert!(specs.len() >= 7, "{specs:?}");
    for path in &specs {
        let spec = Spec::load(path).unwrap_or_else(|e| panic!("{e}"));
        jobs.push((spec.clone(), spec.source.clone()));
        let text = std::fs::read(&spec.source).unwrap();
        let src = pipeline::Source::new(text);
        for l in src.loops() {
            for mode in [pipeline::Mode::Pragma, pipeline::Mode::Manual] {
                let Ok(v) = src.variant(l.loc, 4, mode, pipeline::Policy::default()) else {
                    continue;
                };
                // Beside nothing else: the shipped kernels include only system headers.
                let dir = work.path().join(format!("v{}", jobs.len()));
                std::fs::create_dir_all(&dir).unwrap();
                let file = dir.join(spec.source.file_name().unwrap());
                std::fs::write(&file, &v.source).unwrap();
                jobs.push((spec.clone(), file));
            }
        }
    }
    assert!(jobs.len() >= 20, "{} sources", jobs.len());
    eprintln!("{} sources x 2 architectures", jobs.len());
    let next = std::sync::atomic::AtomicUsize::new(0);
    let failures = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|sc| {
        for _ in 0..2 {
            sc.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some((spec, src)) = jobs.get(i) else {
                    break;
                };
                for arch in ["sm_80", "sm_90"] {
                    match build(spec, src, &Target::Cuda(arch.into()), nvcc_opts()) {
                        Ok(b) => {
                            assert!(matches!(b.compiler, Some(CudaCompiler::Nvcc(_))));
                            assert_eq!(ptx_of(&b.image).target.as_deref(), Some(arch));
                            check_ptx_params(spec, &b.image, &b.signature.symbol);
                        }
                        Err(e) => failures
                            .lock()
                            .unwrap()
                            .push(format!("{} for {arch}: {e}", src.display())),
                    }
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// CUDA sources written as llm.c's and SGEMM_CUDA's kernels are (cuda_runtime.h, cooperative
/// groups, vector types, __ldcs/__stcs, expf/tanhf, assert, <algorithm>, a `const uint`
/// template) compile with nvcc as they are, into what those constructs are in PTX.
#[test]
fn cuda_sources_compile_unchanged_with_nvcc() {
    for (spec, needles) in [
        (
            "cuda/layernorm.toml",
            &[
                "shfl.sync.bfly.b32",
                "rsqrt.approx.f32",
                "st.global.cs.f32",
                "__assertfail",
            ][..],
        ),
        (
            "cuda/gelu.toml",
            &["ld.global.cs.v4.f32", "st.global.cs.v4.f32", "__assertfail"][..],
        ),
        (
            "cuda/softmax.toml",
            &["ex2.approx", "shfl.sync.bfly.b32", "__assertfail"][..],
        ),
        (
            "cuda/sgemm.toml",
            &[".shared", "bar.sync", "__assertfail"][..],
        ),
    ] {
        let spec = Spec::load(&data(spec)).unwrap();
        let b = build(
            &spec,
            &spec.source,
            &Target::Cuda("sm_90".into()),
            nvcc_opts(),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let text = String::from_utf8(b.image.clone()).unwrap();
        for n in needles {
            assert!(text.contains(n), "{}: {n} missing", spec.path.display());
        }
    }
    // The `const uint` template the spec names as `sgemm_blocktiling<64, 64, 8, 8>`.
    let spec = Spec::load(&data("cuda/sgemm.toml")).unwrap();
    let b = build(
        &spec,
        &spec.source,
        &Target::Cuda("sm_80".into()),
        nvcc_opts(),
    )
    .unwrap();
    assert_eq!(
        b.signature.symbol,
        "_Z17sgemm_blocktilingILj64ELj64ELj8ELj8EEviiifPKfS1_fPf"
    );
}

/// nvcc compiles a HIP source through the thin mapping header: HIP's names become CUDA's.
#[test]
fn nvcc_compiles_hip_names_through_the_mapping_header() {
    let text = "version = 1\nsource = \"prelude_features.cu\"\nkernel = \"features\"\ngrid = 1\nblock = 256\nshared-bytes = 1024\n\
[[args]]\nbuffer = \"f32\"\nlength = 256\n[[args]]\nbuffer = \"i32\"\nlength = 2\n[[args]]\nbuffer = \"u64\"\nlength = 1\n[[args]]\nbuffer = \"f64\"\nlength = 1\n";
    let spec = Spec::parse(text, &data("features.toml")).unwrap();
    let b = build(
        &spec,
        &data("prelude_features.cu"),
        &Target::Cuda("sm_90".into()),
        nvcc_opts(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let ptx = String::from_utf8(b.image.clone()).unwrap();
    for needle in [
        "shfl.sync.down.b32",
        "shfl.sync.bfly.b32",
        "shfl.sync.up.b32",
        "shfl.sync.idx.b32",
        "vote.sync.ballot.b32",
        "%laneid",
        "atom.global.add",
        "atom.global.max.s32",
        "membar.gl",
        "bar.sync",
        ".maxntid 256, 1, 1",
        ".extern .shared",
    ] {
        assert!(ptx.contains(needle), "{needle} missing from nvcc's PTX");
    }
}

/// llm.c's adamw `lerp` is `fma` on floats: fma.rn.f32 with nvcc and with the clang fallback,
/// never a conversion to double and a double fma.
#[test]
fn a_float_fma_stays_fma_rn_f32_on_both_compilers() {
    let spec = Spec::load(&data("cuda/adamw.toml")).unwrap();
    for o in [nvcc_opts(), opts()] {
        let b = build(&spec, &spec.source, &cuda(), o).unwrap_or_else(|e| panic!("{e}"));
        let ptx = String::from_utf8(b.image.clone()).unwrap();
        let who = format!("{:?}", b.compiler);
        assert!(ptx.contains("fma.rn.f32"), "{who}");
        assert!(
            !ptx.contains("fma.rn.f64") && !ptx.contains("cvt.f64.f32"),
            "{who}"
        );
    }
}

/// A cache built for one tree serves a copy of it in another directory (a working copy, another
/// machine): the same keys whatever the directories, the cache directory's spelling included,
/// template wrappers too; and where nvcc is missing the objects are served as precompiled.
#[test]
fn a_cache_built_in_one_directory_serves_a_copy_in_another() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    for dir in [a.path(), b.path()] {
        for f in ["stencil.cu", "stencil.toml", "dot.cu", "dot.toml"] {
            std::fs::copy(data(f), dir.join(f)).unwrap();
        }
    }
    let specs = |dir: &Path| {
        let st = std::fs::read_to_string(dir.join("stencil.toml")).unwrap();
        vec![
            Spec::load(&dir.join("dot.toml")).unwrap(),
            Spec::load(&dir.join("stencil.toml")).unwrap(),
            // Not instantiated by the source: through the wrapper.
            Spec::parse(
                &st.replace("stencil<4>", "stencil<2>"),
                &dir.join("stencil.toml"),
            )
            .unwrap(),
        ]
    };
    let first = BuildOptions::new(cache.path()).with_nvcc(Some(support::nvcc()));
    for s in specs(a.path()) {
        let built = build(&s, &s.source, &cuda(), &first).unwrap_or_else(|e| panic!("{e}"));
        assert!(!built.cached, "{}", s.path.display());
    }
    let again = BuildOptions::new(cache.path().join(".")).with_nvcc(Some(support::nvcc()));
    let gone =
        BuildOptions::new(cache.path()).with_nvcc(Some(cache.path().join("no-toolkit/bin/nvcc")));
    for s in specs(b.path()) {
        let built = build(&s, &s.source, &cuda(), &again).unwrap_or_else(|e| panic!("{e}"));
        assert!(built.cached && !built.precompiled, "{}", s.path.display());
        let served = build(&s, &s.source, &cuda(), &gone).unwrap_or_else(|e| panic!("{e}"));
        assert!(served.precompiled, "{}", s.path.display());
        assert_eq!(served.image, built.image);
    }
    // An edit in the copy is another key: not served.
    let edited = std::fs::read_to_string(b.path().join("dot.cu"))
        .unwrap()
        .replace("sum += a[i] * b[i];", "sum += a[i] * b[i] + 1.0f;");
    std::fs::write(b.path().join("dot.cu"), edited).unwrap();
    let s = Spec::load(&b.path().join("dot.toml")).unwrap();
    let e = build(&s, &s.source, &cuda(), &gone)
        .unwrap_err()
        .to_string();
    assert!(e.contains("is not installed here"), "{e}");
}

/// A variant whose PTX is the baseline's (comments aside) is the same code; an unrolled one is
/// not.
#[test]
fn the_same_code_is_recognised() {
    let spec = Spec::load(&data("dot.toml")).unwrap();
    let base = build(&spec, &data("dot.cu"), &cuda(), nvcc_opts()).unwrap();
    let d = tempfile::tempdir().unwrap();
    let copy = d.path().join("dot.cu");
    let text = std::fs::read_to_string(data("dot.cu")).unwrap();
    std::fs::write(&copy, format!("// a comment changes nothing\n{text}")).unwrap();
    let same = build(&spec, &copy, &cuda(), nvcc_opts()).unwrap();
    assert!(base.same_code(&same));
    let unrolled = build(&spec, &data("dot.unrolled.cu"), &cuda(), nvcc_opts()).unwrap();
    assert!(!base.same_code(&unrolled));
    let hip_base = build(&spec, &data("dot.cu"), &hip(), opts()).unwrap();
    let hip_same = build(&spec, &copy, &hip(), opts()).unwrap();
    assert!(hip_base.same_code(&hip_same));
    assert!(!hip_base.same_code(&base), "another target");
}

/// With nvcc, one compile serves the tuner's gates and the runner: the build is the gates'
/// cubin (with ptxas's report) and the PTX it was assembled from, kept beside it in the cache;
/// the signature is read from that PTX, the cubin is what a GPU of the target's architecture
/// loads (another architecture gets the PTX, for the driver to JIT), and the gates' compile of
/// the same source afterwards runs no compiler.
#[test]
fn one_nvcc_compile_serves_the_gates_and_the_runner() {
    let cache = tempfile::tempdir().unwrap();
    let spec = Spec::load(&data("dot.toml")).unwrap();
    let o = BuildOptions::new(cache.path()).with_nvcc(Some(support::nvcc()));
    let target = Target::Cuda("sm_90".into());
    let b = build(&spec, &data("dot.cu"), &target, &o).unwrap_or_else(|e| panic!("{e}"));
    assert!(!b.cached);
    let cubin = b.cubin.as_deref().expect("nvcc's cubin");
    assert!(cubin.starts_with(b"\x7fELF"), "a cubin is an ELF file");
    assert_eq!(std::fs::read(&b.object).unwrap(), cubin);
    let ptx = String::from_utf8(b.image.clone()).unwrap();
    assert!(ptx.contains(".entry _Z3dotPKfS0_Pfi"), "{ptx}");
    assert!(codeobj::compile::ptx_path(&b.object).is_file());
    assert_eq!(b.signature.symbol, "_Z3dotPKfS0_Pfi");
    assert_eq!(b.loadable(Some("sm_90")), cubin);
    assert_eq!(b.loadable(Some("sm_100")), b.image.as_slice());
    assert_eq!(b.loadable(None), b.image.as_slice());
    let gates = runner::build::nvcc_compiler(
        &support::nvcc(),
        "sm_90",
        cache.path(),
        true,
        runner::build::spec_args(&spec),
    )
    .unwrap();
    let g = gates.compile(&data("dot.cu")).unwrap();
    assert!(g.cached, "the gates' compile is the build's");
    assert_eq!(g.object, b.object);
    assert!(g.log.unwrap().contains("registers"));
    // Built again: from the cache, the same machine code.
    let again = build(&spec, &data("dot.cu"), &target, &o).unwrap();
    assert!(again.cached && again.same_code(&b));
}

/// The on-device comparison kernel (`runner::cuda::DIFFER_PTX`, loaded by the CUDA device and
/// JIT-compiled by its driver) is valid PTX: ptxas, beside nvcc, assembles it for every
/// architecture from Turing to Hopper, and its one entry takes the four 8-byte parameters the
/// device passes (a, b, bytes, flag).
#[test]
fn the_comparison_kernel_assembles_with_ptxas() {
    let ptxas = support::nvcc().with_file_name("ptxas");
    let d = tempfile::tempdir().unwrap();
    let src = d.path().join("differ.ptx");
    std::fs::write(&src, runner::cuda::DIFFER_PTX).unwrap();
    for arch in ["sm_75", "sm_80", "sm_86", "sm_90"] {
        let out = std::process::Command::new(&ptxas)
            .arg(format!("-arch={arch}"))
            .arg(&src)
            .arg("-o")
            .arg(d.path().join(format!("{arch}.cubin")))
            .output()
            .unwrap_or_else(|e| panic!("{}: {e}", ptxas.display()));
        assert!(
            out.status.success(),
            "{arch}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let m = ptx::parse(runner::cuda::DIFFER_PTX).unwrap();
    let e = m
        .entries
        .iter()
        .find(|e| e.name == "hip_unroll_differ")
        .expect("its entry");
    assert_eq!(
        e.params.iter().map(|p| p.size).collect::<Vec<_>>(),
        [8, 8, 8, 8]
    );
}

/// The comparison kernel of AMD GPUs (`runner::hip::rtc`) compiles with hiprtc, the HIP
/// runtime's own compiler, for gfx90a and gfx908 without a GPU (Debian's ROCm 5.2 here, which
/// knows no gfx942; a runtime that found a GPU knows its architecture): one kernel,
/// `hip_unroll_differ`, whose explicit arguments are the four 8-byte values the device passes
/// (a, b, bytes, flag) at offsets 0, 8, 16, 24, as `Differ::load` lays them out.
#[test]
fn the_amd_comparison_kernel_compiles_with_hiprtc() {
    for arch in ["gfx90a", "gfx908"] {
        let code = runner::hip::rtc::compile_differ(arch).unwrap_or_else(|e| panic!("{arch}: {e}"));
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("differ.co");
        std::fs::write(&path, &code).unwrap();
        let cos = codeobj::load(&path).unwrap_or_else(|e| panic!("{arch}: {e}"));
        let co = cos
            .iter()
            .find(|c| c.arch == arch)
            .expect("the asked architecture");
        assert_eq!(co.kernels.len(), 1);
        let sig = runner::signature::from_amd(&co.kernels[0].meta);
        assert_eq!(sig.symbol, "hip_unroll_differ");
        assert_eq!(
            sig.params
                .iter()
                .map(|p| (p.offset, p.size))
                .collect::<Vec<_>>(),
            [(0, 8), (8, 8), (16, 8), (24, 8)]
        );
    }
}
