//! `--hsaco VARIANT`: a variant is compared with the snapshot's kernel (signature, kernarg
//! layout, target) through codeobj before anything runs, and its packet segment sizes keep the
//! captured dynamic part. Real hipcc code objects.
//! Needs: hipcc, clang-offload-bundler-19.

mod common;

use common::*;
use replay::snapshot::Snapshot;
use replay::variant::{self, VariantError};

fn snapshot_of(spec: &Spec) -> (tempfile::TempDir, Snapshot) {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("cap");
    write_perf_lab(&dir, spec);
    let s = Snapshot::open(&dir).unwrap();
    (t, s)
}

#[test]
fn device_elf_equals_clang_offload_bundlers_unbundling() {
    let data = std::fs::read(&objects().base).unwrap();
    assert_eq!(
        replay::hsaco::device_elf(&data, "gfx90a").unwrap(),
        objects().base_elf
    );
    // A bare ELF is taken as it is; a bundle without the processor is refused by name.
    assert_eq!(
        replay::hsaco::device_elf(&objects().base_elf, "gfx90a").unwrap(),
        objects().base_elf
    );
    let e = replay::hsaco::device_elf(&data, "gfx942").unwrap_err();
    assert!(e.contains("no entry for gfx942 (it has: gfx90a"), "{e}");
}

#[test]
fn an_unrolled_variant_with_the_same_signature_is_accepted() {
    let (_t, s) = snapshot_of(&scale_spec());
    let b = variant::baseline(&s).unwrap();
    assert_eq!(b.symbol, "_Z5scalePfPKfif.kd");
    assert_eq!(b.elf, objects().base_elf);
    let v = variant::variant(&s, &objects().unrolled).unwrap();
    assert_eq!(v.kernel.name, SCALE);
    assert_eq!(v.kernel.kernarg_segment_size, s.kernel.kernarg_segment_size);
    assert_eq!(v.path.as_deref(), Some(objects().unrolled.as_path()));
    assert_ne!(v.elf, b.elf, "a different code object");
}

#[test]
fn a_variant_with_another_kernarg_layout_is_refused_with_every_difference() {
    // saxpy(float*, const float*, Params): same mangled name, but Params grew.
    let mut spec = scale_spec();
    let meta = kernel_meta(SAXPY);
    spec.mangled = format!("{SAXPY}.kd");
    spec.kernarg = vec![0u8; meta.kernarg_segment_size as usize];
    let (_t, s) = snapshot_of(&spec);
    let e = variant::variant(&s, &objects().changed).unwrap_err();
    let VariantError::Refused { differences, .. } = &e else {
        panic!("{e}")
    };
    let all = differences.join("\n");
    assert!(all.contains("argument 2 size `8` -> `16`"), "{all}");
    assert!(all.contains("kernarg size"), "{all}");
    assert!(
        e.to_string().starts_with(&format!(
            "{}: refused: the variant's `{SAXPY}` differs from the captured kernel: ",
            objects().changed.display()
        )),
        "{e}"
    );
    // The unrolled variant's saxpy is the same kernel and is accepted.
    assert!(variant::variant(&s, &objects().unrolled).is_ok());
}

#[test]
fn a_variant_whose_kernel_was_renamed_is_refused() {
    // scale's parameters changed in kernels.changed.hip, so its mangled name did too.
    let (_t, s) = snapshot_of(&scale_spec());
    let e = variant::variant(&s, &objects().changed)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("kernel symbol `_Z5scalePfPKfif.kd` is not in the code object (its kernels: _Z5saxpyPfPKf6Params, _Z5scalePfPKffii)"),
        "{e}"
    );
}

#[test]
fn a_variant_without_the_kernel_or_for_another_gpu_is_unusable() {
    let mut spec = scale_spec();
    let meta = kernel_meta(DYN_LDS);
    spec.mangled = format!("{DYN_LDS}.kd");
    spec.kernarg = vec![0u8; meta.kernarg_segment_size as usize];
    spec.group = 256 + 1024;
    let (_t, s) = snapshot_of(&spec);
    let e = variant::variant(&s, &objects().changed)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("kernel symbol `_ZN2ns7dyn_ldsEPKiPi.kd` is not in the code object"),
        "{e}"
    );
    let e = variant::variant(&s, &objects().gfx940)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("the bundle has no entry for gfx90a (it has: gfx940"),
        "{e}"
    );
    let e = variant::variant(&s, std::path::Path::new("/nonexistent.hsaco"))
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("/nonexistent.hsaco: "), "{e}");
}

#[test]
fn dynamic_lds_from_the_packet_is_kept_for_a_variant_with_more_static_lds() {
    let mut spec = scale_spec();
    let meta = kernel_meta(DYN_LDS);
    assert_eq!(meta.group_segment_fixed_size, 256);
    spec.mangled = format!("{DYN_LDS}.kd");
    spec.kernarg = vec![0u8; meta.kernarg_segment_size as usize];
    // 256 static + 1 KiB dynamic, as the captured packet said.
    spec.group = 256 + 1024;
    let (_t, s) = snapshot_of(&spec);
    let b = variant::baseline(&s).unwrap();
    assert_eq!(
        b.group_segment_size, 1280,
        "the packet's size, not the symbol's 256"
    );
    let v = variant::variant(&s, &objects().unrolled).unwrap();
    assert_eq!(v.kernel.group_segment_fixed_size, 512);
    assert_eq!(v.group_segment_size, 512 + 1024);
    assert_eq!(v.private_segment_size, s.dispatch.private_segment_size);
}
