//! Real compiles of the testdata kernels (testdata/bench): clang-19 to PTX through the prelude
//! and hipcc to gfx90a code objects, both through codeobj's cache; the kernel found by name
//! (templates instantiated when the source does not), and its real parameters.
//! Needs: clang++-19, hipcc.

use runner::build::{build, BuildOptions, Target};
use runner::ptx;
use runner::spec::Spec;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

fn data(n: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../testdata/bench")).join(n)
}

fn opts() -> &'static BuildOptions {
    static D: OnceLock<(tempfile::TempDir, BuildOptions)> = OnceLock::new();
    &D.get_or_init(|| {
        let d = tempfile::tempdir().unwrap();
        let o = BuildOptions::new(d.path());
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

fn ptx_of(object: &Path) -> ptx::PtxModule {
    ptx::parse(&std::fs::read_to_string(object).unwrap()).unwrap()
}

#[test]
fn dot_compiles_to_ptx_with_its_entry_and_params() {
    let spec = Spec::load(&data("dot.toml")).unwrap();
    for src in ["dot.cu", "dot.unrolled.cu"] {
        let b = build(&spec, &data(src), &cuda(), opts()).unwrap_or_else(|e| panic!("{e}"));
        let m = ptx_of(&b.object);
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
    // stencil<2> is not instantiated by the source: a wrapper does it.
    let text = std::fs::read_to_string(data("stencil.toml"))
        .unwrap()
        .replace("stencil<4>", "stencil<2>");
    let spec2 = Spec::parse(&text, &data("stencil.toml")).unwrap();
    for t in [cuda(), hip()] {
        let b = build(&spec2, &data("stencil.cu"), &t, opts()).unwrap_or_else(|e| panic!("{e}"));
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
    let ptx = std::fs::read_to_string(&b.object).unwrap();
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
