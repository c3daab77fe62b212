//! The code-object join of `check --hsaco`: kernels matched to source functions by bare name,
//! one resources entry per distinct target figures, spill warnings, unknown occupancy as `null`,
//! and load errors as typed errors.

use codeobj::{CodeObject, Kernel, KernelMeta, Limit, Metadata, Occupancy};
use guards::hsaco::{attach, attach_objects, Error};
use guards::{check_source, CheckOutput, Settings};

const SRC: &str = r#"
template <int N>
__global__ void scale(float* a) { for (int i = 0; i < N; ++i) a[i] *= 2.0f; }
extern "C" __global__ void plain(float* a) { a[0] = 1.0f; }
__global__ void absent(float* a) { a[0] = 0.0f; }
"#;

fn report() -> CheckOutput {
    let (file, diagnostics) = check_source("k.cu", SRC.as_bytes(), &Settings::default());
    CheckOutput {
        version: 1,
        files: vec![file],
        diagnostics,
    }
}

fn kernel(name: &str, vgprs: u32, spills: u32, occupancy: Option<u32>) -> Kernel {
    Kernel {
        meta: KernelMeta {
            name: name.into(),
            symbol: format!("{name}.kd"),
            vgpr_count: vgprs,
            agpr_count: Some(0),
            sgpr_count: 16,
            vgpr_spill_count: spills,
            sgpr_spill_count: 0,
            group_segment_fixed_size: 0,
            private_segment_fixed_size: spills * 4,
            kernarg_segment_size: 8,
            kernarg_segment_align: 8,
            wavefront_size: 64,
            max_flat_workgroup_size: 1024,
            uses_dynamic_stack: None,
            workgroup_processor_mode: None,
            args: Vec::new(),
        },
        demangled: codeobj::metadata::demangle(name),
        descriptor: None,
        occupancy: occupancy.map(|w| Occupancy {
            waves_per_simd: w,
            limited_by: Limit::Vgpr,
            max_waves: 8,
            by_vgpr: w,
            by_sgpr: 8,
            by_workgroup: 8,
            by_lds: 8,
        }),
    }
}

fn object(arch: &str, kernels: Vec<Kernel>) -> CodeObject {
    CodeObject {
        source: format!("k.hsaco#{arch}"),
        arch: arch.into(),
        target_id: arch.into(),
        e_flags: 0,
        metadata: Metadata {
            version: vec![1, 2],
            target: None,
            kernels: kernels.iter().map(|k| k.meta.clone()).collect(),
        },
        kernels,
        text: Vec::new(),
    }
}

fn function<'a>(out: &'a CheckOutput, name: &str) -> &'a guards::FunctionReport {
    out.files[0]
        .functions
        .iter()
        .find(|f| f.name == name)
        .unwrap_or_else(|| panic!("no function {name}"))
}

#[test]
fn kernels_join_functions_by_bare_name_per_target() {
    let mut out = report();
    let before = out.diagnostics.len();
    attach_objects(
        &mut out,
        &[
            object(
                "gfx90a",
                vec![
                    kernel("_Z5scaleILi4EEvPf", 32, 0, Some(8)),
                    kernel("_Z5scaleILi8EEvPf", 64, 0, Some(8)),
                    // Same figures as <4>: not a second entry.
                    kernel("_Z5scaleILi16EEvPf", 32, 0, Some(8)),
                    kernel("plain", 8, 0, Some(8)),
                ],
            ),
            object("gfx1337", vec![kernel("plain", 8, 0, None)]),
        ],
    );
    let scale = function(&out, "scale");
    let v: Vec<(&str, u32)> = scale
        .resources
        .iter()
        .map(|r| (r.arch.as_str(), r.vgpr_count))
        .collect();
    assert_eq!(v, vec![("gfx90a", 32), ("gfx90a", 64)]);
    let plain = function(&out, "plain");
    assert_eq!(plain.resources.len(), 2, "{:?}", plain.resources);
    // Unknown occupancy is None, printed as null, never 0.
    let unknown = &plain.resources[1];
    assert_eq!(unknown.arch, "gfx1337");
    assert_eq!((unknown.waves_per_simd, unknown.limited_by), (None, None));
    let json = serde_json::to_value(plain).unwrap();
    assert_eq!(
        json["resources"][1]["waves_per_simd"],
        serde_json::Value::Null
    );
    assert_eq!(json["resources"][1]["limited_by"], serde_json::Value::Null);
    assert_eq!(json["resources"][0]["waves_per_simd"], 8);
    assert_eq!(json["resources"][0]["limited_by"], "vgpr");
    assert!(function(&out, "absent").resources.is_empty());
    // No kernel spills: no new diagnostic; and functions without resources print no key.
    assert_eq!(out.diagnostics.len(), before);
    let json = serde_json::to_value(function(&out, "absent")).unwrap();
    assert!(json.get("resources").is_none(), "{json}");
}

#[test]
fn a_spilling_kernel_gets_a_warning() {
    let mut out = report();
    let before = out.diagnostics.len();
    attach_objects(
        &mut out,
        &[object("gfx90a", vec![kernel("plain", 256, 5, Some(2))])],
    );
    assert_eq!(out.diagnostics.len(), before + 1);
    let d = out.diagnostics.last().unwrap();
    assert_eq!(d.rule, "vgpr-spill");
    assert_eq!(d.severity, guards::Severity::Warning);
    assert_eq!(d.line, function(&out, "plain").line);
    assert_eq!(
        d.message,
        "kernel `plain` already spills on gfx90a: 5 VGPRs and 0 SGPRs spilled, 20 bytes of scratch per work-item"
    );
}

#[test]
fn unreadable_or_empty_inputs_are_typed_errors() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("none.hsaco");
    let e = attach(&mut report(), &missing).unwrap_err();
    assert!(
        matches!(&e, Error::Load(codeobj::LoadError::Io(..))),
        "{e:?}"
    );
    assert!(e.to_string().contains("none.hsaco"), "{e}");
    let junk = dir.path().join("junk.hsaco");
    std::fs::write(&junk, b"not an object").unwrap();
    let e = attach(&mut report(), &junk).unwrap_err();
    assert!(e.to_string().contains("junk.hsaco"), "{e}");
}
