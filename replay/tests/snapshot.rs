//! Snapshots on disk: rocm-perf-lab's capture directories read as they are, version-1 round
//! trips through the writer, and every way a snapshot can be truncated or inconsistent refused
//! with a message naming the file. Code objects are real (hipcc, gfx90a).
//! Needs: hipcc, clang-offload-bundler-19.

mod common;

use common::*;
use replay::snapshot::{Contents, Snapshot, SnapshotError};
use std::path::Path;

fn open_err(dir: &Path) -> String {
    match Snapshot::open(dir) {
        Ok(_) => panic!("{} was accepted", dir.display()),
        Err(e) => e.to_string(),
    }
}

#[test]
fn reads_rocm_perf_lab_captures_as_they_are() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("isolate_capture_4242");
    let spec = scale_spec();
    write_perf_lab(&dir, &spec);
    let s = Snapshot::open(&dir).unwrap();
    assert_eq!(s.version, 0);
    assert_eq!(s.dispatch.mangled_name, "_Z5scalePfPKfif.kd");
    assert_eq!(s.kernel.name, SCALE);
    assert_eq!(s.kernel_display_name(), spec.demangled);
    assert_eq!(s.processor(), "gfx90a");
    assert_eq!(s.geometry.grid, [1024, 1, 1]);
    assert_eq!(s.geometry.block, [256, 1, 1]);
    assert_eq!(s.geometry.dimensions, 1);
    assert_eq!(s.kernarg, spec.kernarg);
    assert_eq!(s.regions.len(), 2);
    // Every region hashed, even though rocm-perf-lab records no hash.
    for (r, (base, bytes)) in s.regions.iter().zip(&spec.regions) {
        assert_eq!(r.base(), *base);
        assert!(r.record.is_pool && !r.record.is_vmem);
        match &r.contents {
            Contents::File { blake3, .. } => {
                assert_eq!(blake3, &blake3::hash(bytes).to_hex().to_string())
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(&r.read().unwrap(), bytes);
    }
    assert_eq!(s.region_at(IN + 5).unwrap().base(), IN);
    assert!(s.region_at(IN + N as u64 * 4).is_none());
}

#[test]
fn version_1_round_trip_keeps_names_that_need_escaping() {
    let t = tempfile::tempdir().unwrap();
    let mut spec = scale_spec();
    spec.demangled = "scale(float*, \"quoted\" \\ back\\slash\nnewline\ttab)".into();
    spec.agent = "gfx90a \"Aldebaran\" \u{1}".into();
    let dir = write_v1(&t.path().join("snap"), &spec);
    // The JSON is valid JSON (serde wrote it) and keeps every byte of the names.
    let raw: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("dispatch.json")).unwrap()).unwrap();
    assert_eq!(raw["demangled_name"], spec.demangled.as_str());
    assert_eq!(raw["agent_name"], spec.agent.as_str());
    assert_eq!(raw["snapshot_version"], 1);
    let s = Snapshot::open(&dir).unwrap();
    assert_eq!(s.version, 1);
    assert_eq!(s.dispatch.demangled_name, spec.demangled);
    assert_eq!(s.dispatch.agent_name, spec.agent);
    assert_eq!(s.dispatch.dispatch_index, 3);
    assert_eq!(
        s.dispatch.kernarg_blake3.as_deref(),
        Some(s.kernarg_blake3.as_str())
    );
    let regions: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("memory_regions.json")).unwrap()).unwrap();
    assert_eq!(
        regions["regions"][1]["blake3"],
        blake3::hash(&spec.regions[1].1).to_hex().as_str()
    );
    // rocm-perf-lab's own reader looks for `"base":` then digits: our regions keep that shape.
    let text = std::fs::read_to_string(dir.join("memory_regions.json")).unwrap();
    assert!(text.contains(&format!("\"base\": {OUT}")), "{text}");
    // No partial directory is left behind.
    let left: Vec<_> = std::fs::read_dir(t.path()).unwrap().collect();
    assert_eq!(left.len(), 1);
}

#[test]
fn writer_records_failed_copies_and_refuses_an_existing_directory() {
    use replay::snapshot::write::SnapshotWriter;
    use replay::snapshot::RegionRecord;
    let t = tempfile::tempdir().unwrap();
    let spec = scale_spec();
    let dest = t.path().join("snap");
    let mut w = SnapshotWriter::create(&dest).unwrap();
    w.write_kernarg(&spec.kernarg).unwrap();
    w.write_hsaco(&spec.hsaco).unwrap();
    let mut ok = w.begin_region(RegionRecord::new(OUT, 4096, "pool"));
    ok.write(&[7u8; 4096]);
    w.end_region(ok);
    let mut bad = w.begin_region(RegionRecord::new(IN, 4096, "vmem"));
    bad.write(&[1u8; 1024]);
    bad.fail("hsa_memory_copy failed: HSA_STATUS_ERROR_INVALID_ALLOCATION");
    w.end_region(bad);
    let mut short = w.begin_region(RegionRecord::new(IN + 0x10000, 4096, "pool"));
    short.write(&[1u8; 100]);
    w.end_region(short);
    let mut d = serde_json::from_str::<replay::snapshot::DispatchFile>(
        &serde_json::to_string(&serde_json::json!({
            "mangled_name": spec.mangled, "grid": spec.grid, "block": spec.block,
            "group_segment_size": 0, "private_segment_size": 0,
            "kernarg_size": spec.kernarg.len(), "isa_name": spec.isa
        }))
        .unwrap(),
    )
    .unwrap();
    d.drained = Some(true);
    let dir = w.finish(d).unwrap();
    let s = Snapshot::open(&dir).unwrap();
    let missing = s.missing();
    assert_eq!(missing.len(), 2);
    assert!(
        matches!(&missing[0].contents, Contents::Missing { error } if error.contains("INVALID_ALLOCATION"))
    );
    assert!(
        matches!(&missing[1].contents, Contents::Missing { error } if error == "100 of 4096 bytes copied")
    );
    assert!(!dir.join(format!("memory/region_{IN:x}.bin")).exists());
    assert!(SnapshotWriter::create(&dir).is_err());
}

/// Build a valid rocm-perf-lab capture, break it with `f`, and return the error.
fn broken(f: impl FnOnce(&Path, &mut Spec)) -> String {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("cap");
    let mut spec = scale_spec();
    write_perf_lab(&dir, &spec);
    f(&dir, &mut spec);
    open_err(&dir)
}

#[test]
fn refuses_truncated_and_padded_regions() {
    let e = broken(|dir, _| {
        let p = dir.join(format!("memory/region_{IN:x}.bin"));
        let b = std::fs::read(&p).unwrap();
        std::fs::write(&p, &b[..b.len() - 1]).unwrap();
    });
    assert!(
        e.contains(&format!(
            "region_{IN:x}.bin: truncated or padded: 4096 bytes expected"
        )),
        "{e}"
    );
    assert!(e.contains("the file has 4095"), "{e}");
    let e = broken(|dir, _| {
        let p = dir.join(format!("memory/region_{OUT:x}.bin"));
        let mut b = std::fs::read(&p).unwrap();
        b.push(0);
        std::fs::write(&p, b).unwrap();
    });
    assert!(e.contains("the file has 4097"), "{e}");
    let e = broken(|dir, _| {
        std::fs::remove_file(dir.join(format!("memory/region_{OUT:x}.bin"))).unwrap()
    });
    assert!(e.contains("No such file"), "{e}");
    let e = broken(|dir, spec| {
        spec.kernarg.pop();
        std::fs::write(dir.join("kernarg.bin"), &spec.kernarg).unwrap();
    });
    assert!(e.contains("kernarg.bin: truncated or padded"), "{e}");
}

#[test]
fn refuses_overlapping_and_degenerate_regions() {
    let e = broken(|dir, spec| {
        spec.regions.push((OUT + 4000, vec![0u8; 200]));
        write_perf_lab(dir, spec);
    });
    assert!(e.contains("memory_regions.json: regions 0x510000000000..0x510000001000 (4096 bytes) and 0x510000000fa0"), "{e}");
    let e = broken(|dir, spec| {
        spec.regions.push((0x7f20_0000_0000, vec![]));
        write_perf_lab(dir, spec);
    });
    assert!(e.contains("region at 0x7f2000000000 has size 0"), "{e}");
}

#[test]
fn refuses_a_kernarg_size_the_code_object_disagrees_with() {
    let e = broken(|dir, spec| {
        spec.kernarg.extend([0u8; 8]);
        write_perf_lab(dir, spec);
    });
    let meta = kernel_meta(SCALE);
    assert!(
        e.contains(&format!(
            "kernarg_size {} disagrees with the code object's .kernarg_segment_size {} for `{SCALE}`",
            meta.kernarg_segment_size + 8,
            meta.kernarg_segment_size
        )),
        "{e}"
    );
}

#[test]
fn refuses_a_missing_kernel_symbol() {
    let e = broken(|dir, spec| {
        spec.mangled = "_Z7missingPf.kd".into();
        write_perf_lab(dir, spec);
    });
    assert!(e.contains("kernel.hsaco: kernel symbol `_Z7missingPf.kd` is not in the code object (its kernels: _Z5saxpyPfPKf6Params, _Z5scalePfPKfif, _ZN2ns7dyn_ldsEPKiPi)"), "{e}");
    let e = broken(|dir, _| std::fs::write(dir.join("kernel.hsaco"), b"garbage").unwrap());
    assert!(
        e.contains("kernel.hsaco: not a readable code object"),
        "{e}"
    );
    let e = broken(|dir, _| std::fs::remove_file(dir.join("kernel.hsaco")).unwrap());
    assert!(e.contains("kernel.hsaco: No such file"), "{e}");
}

#[test]
fn refuses_bad_dispatch_geometry_and_segments() {
    let e = broken(|dir, spec| {
        spec.block = [256, 0, 1];
        write_perf_lab(dir, spec);
    });
    assert!(e.contains("has a zero dimension"), "{e}");
    let e = broken(|dir, spec| {
        spec.block = [70000, 1, 1];
        write_perf_lab(dir, spec);
    });
    assert!(e.contains("block[0] = 70000 does not fit"), "{e}");
    // ns::dyn_lds has 256 bytes of static LDS: a packet with less is inconsistent.
    let e = broken(|dir, spec| {
        let meta = kernel_meta(DYN_LDS);
        spec.mangled = format!("{DYN_LDS}.kd");
        spec.kernarg = vec![0u8; meta.kernarg_segment_size as usize];
        spec.group = 128;
        write_perf_lab(dir, spec);
    });
    assert!(
        e.contains("group_segment_size 128 is less than the kernel's static LDS (256 bytes)"),
        "{e}"
    );
}

#[test]
fn refuses_malformed_json_and_newer_versions() {
    let e = broken(|dir, _| {
        let p = dir.join("dispatch.json");
        let t = std::fs::read_to_string(&p).unwrap();
        std::fs::write(&p, &t[..t.len() / 2]).unwrap();
    });
    assert!(e.contains("dispatch.json: malformed JSON"), "{e}");
    // rocm-perf-lab writes names without escaping: a quote in a name breaks its JSON, and
    // such a capture is refused rather than half-read.
    let e = broken(|dir, spec| {
        spec.demangled = "operator\"\" _x".into();
        write_perf_lab(dir, spec);
    });
    assert!(e.contains("dispatch.json: malformed JSON"), "{e}");
    let e = broken(|dir, _| {
        let p = dir.join("dispatch.json");
        let t = std::fs::read_to_string(&p).unwrap();
        std::fs::write(&p, t.replacen('{', "{\"snapshot_version\": 9,", 1)).unwrap();
    });
    assert!(
        e.contains("snapshot version 9 is newer than this hip-unroll reads (up to 1)"),
        "{e}"
    );
}

#[test]
fn version_1_hashes_are_checked() {
    let t = tempfile::tempdir().unwrap();
    let dir = write_v1(&t.path().join("snap"), &scale_spec());
    let p = dir.join(format!("memory/region_{IN:x}.bin"));
    let mut b = std::fs::read(&p).unwrap();
    b[100] ^= 1;
    std::fs::write(&p, b).unwrap();
    let e = open_err(&dir);
    assert!(e.contains(&format!("region_{IN:x}.bin: blake3 ")), "{e}");
    assert!(e.contains("recorded in memory_regions.json"), "{e}");
    // A version-1 snapshot that lost its hash is refused too.
    let dir2 = write_v1(&t.path().join("snap2"), &scale_spec());
    let p = dir2.join("memory_regions.json");
    let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
    v["regions"][0].as_object_mut().unwrap().remove("blake3");
    std::fs::write(&p, serde_json::to_vec(&v).unwrap()).unwrap();
    let e = open_err(&dir2);
    assert!(
        e.contains("no blake3 recorded in memory_regions.json"),
        "{e}"
    );
    let dir3 = write_v1(&t.path().join("snap3"), &scale_spec());
    std::fs::write(
        dir3.join("kernarg.bin"),
        vec![1u8; scale_spec().kernarg.len()],
    )
    .unwrap();
    let e = open_err(&dir3);
    assert!(e.contains("kernarg.bin: blake3"), "{e}");
}

#[test]
fn refuses_a_snapshot_taken_without_draining() {
    let t = tempfile::tempdir().unwrap();
    let dir = write_v1(&t.path().join("snap"), &scale_spec());
    let p = dir.join("dispatch.json");
    let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
    v["drained"] = false.into();
    v["drain_error"] = "the barrier packet did not complete within 60 s".into();
    std::fs::write(&p, serde_json::to_vec(&v).unwrap()).unwrap();
    let e = open_err(&dir);
    assert!(e.contains("captured while earlier work on the queue was still running: the barrier packet did not complete within 60 s"), "{e}");
    assert!(matches!(
        Snapshot::open(&dir),
        Err(SnapshotError::NotDrained { .. })
    ));
}

#[test]
fn not_a_directory() {
    let e = open_err(Path::new("/nonexistent/snapshot"));
    assert!(
        e.contains("/nonexistent/snapshot: not a snapshot directory"),
        "{e}"
    );
}
