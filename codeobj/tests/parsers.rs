//! Tool-free tests of the parsers and the pure judge: bundles built byte by byte, compressed
//! bundles of every version and method, target ids, names, and the judge's rules.

use codeobj::bundle::{self, TargetId};
use codeobj::compressed::{self, Method};
use codeobj::judge::{judge_numbers, Reason, Thresholds};
use codeobj::{KernelResources, Limit};
use proptest::prelude::*;

/// A bundle in clang's layout (OffloadBundler.cpp `BinaryFileHandler::WriteHeader`).
fn make_bundle(entries: &[(&str, &[u8])]) -> Vec<u8> {
    let mut header = bundle::MAGIC.to_vec();
    header.extend((entries.len() as u64).to_le_bytes());
    let header_len = header.len() + entries.iter().map(|(id, _)| 24 + id.len()).sum::<usize>();
    let mut offset = header_len as u64;
    let mut body = Vec::new();
    for (id, data) in entries {
        header.extend(offset.to_le_bytes());
        header.extend((data.len() as u64).to_le_bytes());
        header.extend((id.len() as u64).to_le_bytes());
        header.extend(id.as_bytes());
        body.extend_from_slice(data);
        offset += data.len() as u64;
    }
    header.extend(body);
    header
}

#[test]
fn bundle_entries_and_target_ids() {
    let b = make_bundle(&[
        ("host-x86_64-unknown-linux--", b""),
        (
            "hipv4-amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-",
            b"ELFDATA",
        ),
    ]);
    let parsed = bundle::parse(&b).unwrap();
    assert_eq!(parsed.entries.len(), 2);
    assert_eq!(parsed.len, b.len() as u64);
    let t = parsed.entries[1].target();
    assert_eq!(
        t,
        TargetId {
            kind: "hipv4".into(),
            triple: "amdgcn-amd-amdhsa-".into(),
            target_id: "gfx90a:sramecc+:xnack-".into()
        }
    );
    assert_eq!(t.processor(), "gfx90a");
    assert!(parsed.entries[0].target().is_host());
    assert_eq!(parsed.entries[1].data, b"ELFDATA");
    // An entry that is not an ELF is an error, not a panic; host entries are skipped.
    assert!(codeobj::read(&b, "x").is_err());
    let only_host = make_bundle(&[("host-x86_64-unknown-linux--", b"")]);
    assert_eq!(codeobj::read(&only_host, "x").unwrap().len(), 0);
}

#[test]
fn every_truncation_of_a_bundle_is_an_error() {
    let b = make_bundle(&[
        ("hipv4-amdgcn-amd-amdhsa--gfx942", &[7u8; 100]),
        ("hipv4-amdgcn-amd-amdhsa--gfx1100", &[9u8; 50]),
    ]);
    for cut in 0..b.len() {
        assert!(bundle::parse(&b[..cut]).is_err(), "cut at {cut}");
    }
}

#[test]
fn compressed_round_trip_every_version_and_method() {
    let b = make_bundle(&[("hipv4-amdgcn-amd-amdhsa--gfx90a", &[1u8; 3000])]);
    for v in [1, 2, 3] {
        for m in [Method::Zlib, Method::Zstd] {
            let c = compressed::compress(&b, v, m).unwrap();
            let h = compressed::parse_header(&c).unwrap();
            assert_eq!(
                (h.version, h.method, h.uncompressed_size),
                (v, m, b.len() as u64)
            );
            assert_eq!(h.header_len, [0, 20, 24, 32][v as usize]);
            assert_eq!(compressed::decompress(&c).unwrap(), b, "v{v} {m:?}");
            for cut in [4, 8, 12, (h.header_len - 1) as usize] {
                assert!(compressed::decompress(&c[..cut]).is_err());
            }
            if v > 1 {
                assert!(
                    compressed::decompress(&c[..c.len() - 1]).is_err(),
                    "v{v}: a short payload"
                );
            }
        }
    }
    // Unknown version and method; a forged uncompressed size is refused before allocating.
    let mut c = compressed::compress(&b, 2, Method::Zstd).unwrap();
    c[4] = 9;
    assert!(matches!(
        compressed::parse_header(&c),
        Err(codeobj::Error::CompressedVersion(9))
    ));
    let mut c = compressed::compress(&b, 2, Method::Zstd).unwrap();
    c[6] = 5;
    assert!(matches!(
        compressed::parse_header(&c),
        Err(codeobj::Error::CompressionMethod(5))
    ));
    let mut c = compressed::compress(&b, 3, Method::Zstd).unwrap();
    c[16..24].copy_from_slice(&(1u64 << 40).to_le_bytes());
    assert!(compressed::decompress(&c).is_err());
}

#[test]
fn fatbin_scan_finds_concatenated_aligned_bundles() {
    let a = make_bundle(&[("hipv4-amdgcn-amd-amdhsa--gfx90a", &[1u8; 10])]);
    let c = compressed::compress(
        &make_bundle(&[("hipv4-amdgcn-amd-amdhsa--gfx942", &[2u8; 10])]),
        2,
        Method::Zstd,
    )
    .unwrap();
    let mut fat = a.clone();
    fat.resize(4096, 0);
    fat.extend(&c);
    fat.resize(8192, 0);
    fat.extend(&a);
    let blobs = codeobj::fatbin::scan(&fat).unwrap();
    assert_eq!(
        blobs
            .iter()
            .map(|b| (b.offset, b.compressed))
            .collect::<Vec<_>>(),
        vec![(0, false), (4096, true), (8192, false)]
    );
    assert_eq!(blobs[1].data.len(), c.len());
}

#[test]
fn names() {
    use codeobj::metadata::{base_name, demangle};
    assert_eq!(base_name("_Z5scaleILi4EEvPfPKfif"), "scale");
    assert_eq!(base_name("_ZN2ns7dyn_ldsEPKiPi"), "dyn_lds");
    assert_eq!(base_name("plain"), "plain");
    assert_eq!(demangle("plain"), None);
    assert_eq!(
        demangle("_Z6rowsumPKfPfi").as_deref(),
        Some("rowsum(float const*, float*, int)")
    );
}

fn numbers(vspill: u32, sspill: u32, scratch: u32, waves: u32) -> KernelResources {
    KernelResources {
        arch: "gfx90a".into(),
        vgpr_count: 64,
        agpr_count: 0,
        sgpr_count: 20,
        vgpr_spill_count: vspill,
        sgpr_spill_count: sspill,
        scratch_bytes: scratch,
        lds_bytes: 0,
        waves_per_simd: Some(waves),
        limited_by: Some(Limit::Vgpr),
    }
}

#[test]
fn judge_rules() {
    let t = Thresholds::default();
    assert_eq!(
        judge_numbers(&numbers(0, 0, 0, 8), &numbers(0, 0, 0, 8), &t),
        vec![]
    );
    assert_eq!(
        judge_numbers(&numbers(0, 0, 0, 8), &numbers(3, 0, 16, 8), &t),
        vec![
            Reason::VgprSpill {
                before: 0,
                after: 3
            },
            Reason::NewScratch {
                before: 0,
                after: 16
            }
        ]
    );
    assert_eq!(
        judge_numbers(&numbers(0, 0, 0, 8), &numbers(0, 2, 0, 8), &t),
        vec![Reason::SgprSpill {
            before: 0,
            after: 2
        }]
    );
    // A baseline that already spills: only more spilling is blamed on the variant.
    assert_eq!(
        judge_numbers(&numbers(5, 0, 40, 4), &numbers(5, 0, 40, 4), &t),
        vec![]
    );
    assert_eq!(
        judge_numbers(&numbers(0, 0, 0, 8), &numbers(0, 0, 0, 7), &t),
        vec![Reason::OccupancyLoss {
            before: 8,
            after: 7,
            allowed: 0
        }]
    );
    let t1 = Thresholds {
        max_occupancy_loss: 1,
    };
    assert_eq!(
        judge_numbers(&numbers(0, 0, 0, 8), &numbers(0, 0, 0, 7), &t1),
        vec![]
    );
    assert_eq!(
        judge_numbers(&numbers(0, 0, 0, 8), &numbers(0, 0, 0, 6), &t1).len(),
        1
    );
    // Gaining occupancy is fine.
    assert_eq!(
        judge_numbers(&numbers(0, 0, 0, 4), &numbers(0, 0, 0, 8), &t),
        vec![]
    );
    // The largest allowance (`--max-occupancy-loss 4294967295`) allows any loss: no overflow.
    let max = Thresholds {
        max_occupancy_loss: u32::MAX,
    };
    assert_eq!(
        judge_numbers(&numbers(0, 0, 0, 8), &numbers(0, 0, 0, 4), &max),
        vec![]
    );
}

proptest! {
    #[test]
    fn bundles_round_trip(entries in proptest::collection::vec(("[a-z0-9:+-]{0,40}", proptest::collection::vec(any::<u8>(), 0..64)), 0..6)) {
        let refs: Vec<(&str, &[u8])> = entries.iter().map(|(i, d)| (i.as_str(), d.as_slice())).collect();
        let b = make_bundle(&refs);
        let p = bundle::parse(&b).unwrap();
        prop_assert_eq!(p.entries.len(), entries.len());
        for (e, (id, d)) in p.entries.iter().zip(&entries) {
            prop_assert_eq!(&e.id, id);
            prop_assert_eq!(e.data, d.as_slice());
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic(data in proptest::collection::vec(any::<u8>(), 0..512), magic in 0usize..4) {
        let mut d = match magic {
            0 => bundle::MAGIC.to_vec(),
            1 => compressed::MAGIC.to_vec(),
            2 => b"\x7fELF\x02\x01\x01".to_vec(),
            _ => vec![],
        };
        d.extend(data);
        let _ = codeobj::read(&d, "p");
        let _ = codeobj::fatbin::scan(&d);
        let _ = codeobj::metadata::decode(&d);
    }
}
