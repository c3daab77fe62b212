//! The one kernel-resources type: built from a kernel's metadata once, unknown occupancy is
//! `None` (JSON `null`, never `0`), and the `inspect` and `pressure` documents keep their shapes.

use codeobj::inspect::KernelRow;
use codeobj::judge::{judge, Thresholds};
use codeobj::{CodeObject, Kernel, KernelMeta, KernelResources, Limit, Metadata, Occupancy};

fn kernel(name: &str, vgprs: u32, occupancy: Option<(u32, Limit)>) -> Kernel {
    Kernel {
        meta: KernelMeta {
            name: name.into(),
            symbol: format!("{name}.kd"),
            vgpr_count: vgprs,
            agpr_count: None,
            sgpr_count: 20,
            vgpr_spill_count: 3,
            sgpr_spill_count: 0,
            group_segment_fixed_size: 1024,
            private_segment_fixed_size: 16,
            kernarg_segment_size: 24,
            kernarg_segment_align: 8,
            wavefront_size: 64,
            max_flat_workgroup_size: 256,
            uses_dynamic_stack: None,
            workgroup_processor_mode: None,
            args: Vec::new(),
        },
        demangled: None,
        descriptor: None,
        occupancy: occupancy.map(|(waves, limit)| Occupancy {
            waves_per_simd: waves,
            limited_by: limit,
            max_waves: 8,
            by_vgpr: waves,
            by_sgpr: 8,
            by_workgroup: 8,
            by_lds: 8,
        }),
    }
}

fn object(arch: &str, kernels: Vec<Kernel>) -> CodeObject {
    CodeObject {
        source: "k.hsaco".into(),
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

#[test]
fn figures_come_from_the_metadata_and_unknown_occupancy_is_none() {
    let co = object("gfx90a", vec![kernel("k", 128, Some((4, Limit::Vgpr)))]);
    let r = KernelResources::of(&co, &co.kernels[0]);
    assert_eq!(r.arch, "gfx90a");
    assert_eq!((r.vgpr_count, r.agpr_count, r.sgpr_count), (128, 0, 20));
    assert_eq!((r.vgpr_spill_count, r.sgpr_spill_count), (3, 0));
    assert_eq!((r.lds_bytes, r.scratch_bytes), (1024, 16));
    assert_eq!(
        (r.waves_per_simd, r.limited_by),
        (Some(4), Some(Limit::Vgpr))
    );
    assert!(r.spills());

    let unknown = object("gfx1337", vec![kernel("k", 128, None)]);
    let r = KernelResources::of(&unknown, &unknown.kernels[0]);
    assert_eq!((r.waves_per_simd, r.limited_by), (None, None));
    let json = serde_json::to_value(&r).unwrap();
    assert_eq!(json["waves_per_simd"], serde_json::Value::Null, "{json}");
    assert_eq!(json["limited_by"], serde_json::Value::Null, "{json}");
    let known = serde_json::to_value(KernelResources::of(&co, &co.kernels[0])).unwrap();
    assert_eq!(known["waves_per_simd"], 4);
    assert_eq!(known["limited_by"], "vgpr");
}

#[test]
fn resources_json_is_the_check_report_shape() {
    let co = object("gfx942", vec![kernel("k", 64, Some((8, Limit::WaveCap)))]);
    let text = serde_json::to_string(&KernelResources::of(&co, &co.kernels[0])).unwrap();
    assert_eq!(
        text,
        r#"{"arch":"gfx942","vgpr_count":64,"agpr_count":0,"sgpr_count":20,"vgpr_spill_count":3,"sgpr_spill_count":0,"lds_bytes":1024,"scratch_bytes":16,"waves_per_simd":8,"limited_by":"wave-cap"}"#
    );
}

#[test]
fn inspect_row_keeps_its_shape_with_nested_occupancy() {
    let co = object("gfx90a", vec![kernel("k", 128, Some((4, Limit::Vgpr)))]);
    let text = serde_json::to_string(&KernelRow::new(&co, &co.kernels[0])).unwrap();
    assert_eq!(
        text,
        r#"{"name":"k","demangled":null,"symbol":"k.kd","arch":"gfx90a","wavefront_size":64,"vgpr_count":128,"agpr_count":0,"sgpr_count":20,"vgpr_spill_count":3,"sgpr_spill_count":0,"lds_bytes":1024,"scratch_bytes":16,"kernarg_size":24,"max_flat_workgroup_size":256,"occupancy":{"waves_per_simd":4,"limited_by":"vgpr"}}"#
    );
    let unknown = object("gfx1337", vec![kernel("k", 128, None)]);
    let row = serde_json::to_value(KernelRow::new(&unknown, &unknown.kernels[0])).unwrap();
    assert_eq!(row["occupancy"], serde_json::Value::Null, "{row}");
}

#[test]
fn pressure_figures_keep_their_shape_and_unknown_occupancy_never_blocks() {
    let base = object("gfx1337", vec![kernel("k", 64, None)]);
    let var = object("gfx1337", vec![kernel("k", 256, None)]);
    let j = judge(&[base], &[var], &Thresholds::default(), None);
    assert!(!j.blocked, "{j:?}");
    let v = &j.kernels[0];
    assert_eq!(v.after.as_ref().unwrap().vgpr_count, 256);
    let text = serde_json::to_string(v).unwrap();
    assert!(
        text.contains(r#""before":{"vgpr_count":64,"agpr_count":0,"sgpr_count":20,"vgpr_spill_count":3,"sgpr_spill_count":0,"scratch_bytes":16,"lds_bytes":1024,"waves_per_simd":null,"limited_by":null}"#),
        "{text}"
    );

    // Known occupancy on both sides: a loss blocks, and the figures print as numbers.
    let base = object("gfx90a", vec![kernel("k", 64, Some((8, Limit::WaveCap)))]);
    let var = object("gfx90a", vec![kernel("k", 256, Some((2, Limit::Vgpr)))]);
    let j = judge(
        &[base],
        std::slice::from_ref(&var),
        &Thresholds::default(),
        None,
    );
    assert!(j.blocked);
    let text = serde_json::to_string(&j.kernels[0]).unwrap();
    assert!(
        text.contains(r#""after":{"vgpr_count":256,"agpr_count":0,"sgpr_count":20,"vgpr_spill_count":3,"sgpr_spill_count":0,"scratch_bytes":16,"lds_bytes":1024,"waves_per_simd":2,"limited_by":"vgpr"}"#),
        "{text}"
    );
    // A missing kernel serializes `after` as null.
    let j = judge(
        &[var],
        &[object("gfx90a", vec![])],
        &Thresholds::default(),
        None,
    );
    let text = serde_json::to_string(&j.kernels[0]).unwrap();
    assert!(text.contains(r#""after":null"#), "{text}");
}
