//! `spec new` on tricky real-world signatures (testdata/specgen): what each argument becomes
//! (scalar or buffer, element type), which buffers are outputs and on what evidence, and the
//! min-lengths, read from the drafts themselves.

use runner::elem::Elem;
use specgen::{new_spec, Draft, DraftKind, NewError, NewRequest};
use std::path::PathBuf;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../testdata/specgen")).join(name)
}

fn draft(file: &str, kernel: &str) -> Result<Draft, NewError> {
    new_spec(&NewRequest {
        source: fixture(file),
        source_in_spec: file.to_string(),
        kernel: kernel.to_string(),
        include_dirs: Vec::new(),
    })
}

/// Each argument as `name: scalar T`, `name: buffer T` or `name: buffer T -> output`, with the
/// min-length after `min`.
fn summary(d: &Draft) -> Vec<String> {
    d.args
        .iter()
        .map(|a| match &a.kind {
            DraftKind::Scalar { elem } => format!(
                "{}: scalar {}",
                a.name,
                elem.map_or("?".into(), |e| e.to_string())
            ),
            DraftKind::Buffer {
                elem,
                output,
                bound,
                ..
            } => format!(
                "{}: buffer {}{}{}",
                a.name,
                elem.map_or("?".into(), |e| e.to_string()),
                bound
                    .as_ref()
                    .map(|b| format!(" min {}", b.expr))
                    .unwrap_or_default(),
                if output.is_some() { " -> output" } else { "" }
            ),
        })
        .collect()
}

fn evidence(d: &Draft, arg: &str) -> String {
    d.args
        .iter()
        .find(|a| a.name == arg)
        .and_then(|a| match &a.kind {
            DraftKind::Buffer { output, .. } => output.as_ref().map(|o| o.evidence().to_string()),
            _ => None,
        })
        .unwrap_or_default()
}

#[test]
fn restrict_output_and_a_plain_pointer_input_in_a_grid_stride_loop() {
    let d = draft("signatures.cu", "saxpy").unwrap();
    assert_eq!(
        summary(&d),
        [
            "out: buffer f32 min n -> output",
            "x: buffer f32 min n",
            "y: buffer f32 min n",
            "a: scalar f32",
            "n: scalar i32",
        ]
    );
    assert!(
        d.text
            .contains("# an input: the kernel never writes through `x`"),
        "{}",
        d.text
    );
}

#[test]
fn an_output_written_only_through_a_helper_in_a_header() {
    let d = draft("signatures.cu", "fill_through_helper").unwrap();
    assert_eq!(
        summary(&d),
        [
            "dst: buffer f32 -> output",
            "src: buffer f32 min n",
            "n: scalar i32"
        ]
    );
    let e = evidence(&d, "dst");
    assert!(
        e.contains("passed to `store_pair` as `p`")
            && e.contains("helpers.cuh:4: `*p`")
            && e.contains("helpers.cuh:7"),
        "{e}"
    );
}

#[test]
fn templates_by_instantiation_or_the_only_explicit_one() {
    let named = draft("signatures.cu", "scale<float, 2>").unwrap();
    assert_eq!(named.kernel, "scale<float, 2>");
    assert_eq!(
        summary(&named),
        [
            "data: buffer f32 min n -> output",
            "factor: scalar f32",
            "n: scalar u64"
        ]
    );
    let picked = draft("signatures.cu", "scale").unwrap();
    assert_eq!(picked.kernel, "scale<double, 4>");
    assert!(
        picked.text.contains(
            "kernel = \"scale<double, 4>\"  # GUESS: the file's only explicit instantiation"
        ),
        "{}",
        picked.text
    );
    assert_eq!(
        summary(&picked),
        [
            "data: buffer f64 min n -> output",
            "factor: scalar f64",
            "n: scalar u64"
        ]
    );
    assert!(picked
        .text
        .contains("output = { rtol = 1e-12, atol = 1e-14 }"));
    let e = draft("signatures.cu", "scale<float, 2, 3>").unwrap_err();
    assert!(
        e.to_string()
            .contains("3 template argument(s) for 2 parameter(s)"),
        "{e}"
    );
}

#[test]
fn a_kernel_in_a_namespace_with_atomics_and_launch_bounds() {
    for name in ["ops::histogram", "histogram"] {
        let d = draft("signatures.cu", name).unwrap();
        assert_eq!(d.kernel, "ops::histogram");
        assert_eq!(
            summary(&d),
            [
                "in: buffer u8 min n",
                "bins: buffer u32 -> output",
                "n: scalar i32"
            ]
        );
        assert!(d
            .text
            .contains("block = [128]  # GUESS: __launch_bounds__(128)"));
        assert!(d.text.contains("output = \"exact\""));
        assert!(evidence(&d, "bins").contains("atomicAdd(&bins[in[i]], 1u)"));
    }
    assert!(matches!(
        draft("signatures.cu", "other::histogram"),
        Err(NewError::NoKernel { .. })
    ));
}

#[test]
fn derived_pointers_macros_and_const_written_through_a_cast() {
    let d = draft("signatures.cu", "derived").unwrap();
    assert_eq!(
        summary(&d),
        [
            "out: buffer f32 -> output",
            "flags: buffer i32 -> output",
            "n: scalar i64"
        ]
    );
    assert!(evidence(&d, "out").contains("`pair[0]`"));
    assert!(evidence(&d, "flags").contains("passed to macro `PUT`"));
    let d = draft("signatures.cu", "sneaky").unwrap();
    assert_eq!(summary(&d), ["buf: buffer f32 -> output", "n: scalar i32"]);
    assert!(d
        .text
        .contains("the parameter is const, written through a cast"));
}

#[test]
fn const_pointer_inputs_are_inputs() {
    let d = draft("signatures.cu", "saxpy").unwrap();
    let DraftKind::Buffer {
        constant, output, ..
    } = &d.args[2].kind
    else {
        panic!("y is a buffer");
    };
    assert!(*constant && output.is_none());
}

#[test]
fn struct_and_half_parameters_are_refused_with_the_reason() {
    let e = draft("signatures.cu", "with_struct").unwrap_err();
    assert!(
        matches!(&e, NewError::Unsupported { index: 0, name, line: 71, .. } if name == "p"),
        "{e:?}"
    );
    assert!(
        e.to_string()
            .contains("`Params` is a struct passed by value"),
        "{e}"
    );
    let e = draft("types.cu", "halves").unwrap_err();
    assert!(e.to_string().contains("`__half` is half precision"), "{e}");
}

#[test]
fn typedefs_resolve_and_unknown_types_are_placeholders() {
    let d = draft("types.cu", "typed").unwrap();
    assert_eq!(
        summary(&d),
        [
            "out: buffer f32 min n -> output",
            "n: scalar u32",
            "scale: scalar ?"
        ]
    );
    assert!(
        d.fills.contains(&"scalar type of scale".to_string()),
        "{:?}",
        d.fills
    );
    assert!(d.text.contains("scalar = \"FILL\"  # FILL:"));
}

#[test]
fn vector_types_are_carried_as_elements() {
    let d = new_spec(&NewRequest {
        source: PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../testdata/bench/cuda/gelu.cu"
        )),
        source_in_spec: "gelu.cu".into(),
        kernel: "gelu_forward".into(),
        include_dirs: Vec::new(),
    })
    .unwrap();
    assert_eq!(
        summary(&d),
        [
            "out: buffer f32 min 4 * packs -> output",
            "inp: buffer f32 min 4 * packs",
            "packs: scalar i32"
        ]
    );
    assert!(matches!(
        d.args[0].kind,
        DraftKind::Buffer {
            elem: Some(Elem::F32),
            lanes: 4,
            ..
        }
    ));
    assert!(d.text.contains("`float4*` points to 4 x f32 per element"));
}

/// Whether `arg` is written: `Some(true)` a store hip-unroll sees, `Some(false)` a maybe.
fn written(d: &Draft, arg: &str) -> Option<bool> {
    d.args
        .iter()
        .find(|a| a.name == arg)
        .and_then(|a| match &a.kind {
            DraftKind::Buffer { output, .. } => output
                .as_ref()
                .map(|w| matches!(w, specgen::writes::Written::Yes(_))),
            _ => None,
        })
}

#[test]
fn stores_hidden_by_index_macros_result_pointers_and_loop_macros() {
    let d = draft("macros.cu", "halo_init").unwrap();
    assert_eq!(
        (written(&d, "x"), written(&d, "src")),
        (Some(true), None),
        "{}",
        d.text
    );
    assert!(evidence(&d, "x").contains("macro `xv` stores through `x`"));

    let d = draft("macros.cu", "polar").unwrap();
    assert_eq!(
        ["a", "s", "c"].map(|a| written(&d, a)),
        [None, Some(true), Some(true)]
    );
    assert!(evidence(&d, "c").contains("sincosf"));

    // The frontend reads `KERNEL_LOOP(k, n) { ... }` as a definition of its own: `out` is at
    // least a maybe (a store once the body is read), never an input.
    let d = draft("macros.cu", "scatter_add").unwrap();
    assert!(written(&d, "out").is_some(), "{}", d.text);
    assert_eq!((written(&d, "vals"), written(&d, "idx")), (None, None));
}

#[test]
fn macros_of_a_header_not_found_make_maybes_until_i_finds_it() {
    let d = draft("macros.cu", "relax").unwrap();
    assert_eq!(
        (written(&d, "a_lu"), written(&d, "a_u")),
        (Some(false), None),
        "{}",
        d.text
    );
    assert!(evidence(&d, "a_lu").contains("`lu` is no function or macro hip-unroll sees"));
    assert!(d.text.contains("# not found: `#include \"grid3.cuh\"` (",));
    assert!(!d.text.contains("flags ="));

    let include = fixture("include");
    let d = new_spec(&NewRequest {
        source: fixture("macros.cu"),
        source_in_spec: "macros.cu".into(),
        kernel: "relax".into(),
        include_dirs: vec![include.clone()],
    })
    .unwrap();
    assert_eq!(
        (written(&d, "a_lu"), written(&d, "a_u")),
        (Some(true), None),
        "{}",
        d.text
    );
    assert!(evidence(&d, "a_lu").contains("macro `lu` stores through `a_lu`"));
    assert!(!d.text.contains("# not found"));
    let flags = format!("flags = [\"-I{}\"]  # GUESS: ", include.display());
    assert!(d.text.contains(&flags), "{}", d.text);
}

#[test]
fn a_template_only_launched_is_named_by_its_launch() {
    match draft("types.cu", "fill_t") {
        Err(NewError::NeedsInstantiation { instances, .. }) => {
            assert_eq!(instances, ["fill_t<float, 128>"]);
        }
        other => panic!("{other:?}"),
    }
    let d = draft("types.cu", "fill_t<float, 128>").unwrap();
    assert_eq!(
        summary(&d),
        [
            "out: buffer f32 min n -> output",
            "v: scalar f32",
            "n: scalar i32"
        ]
    );
}
