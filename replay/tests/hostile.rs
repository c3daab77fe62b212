//! Hostile snapshots, generated: a valid capture (real hipcc code object) with its files
//! truncated, padded, bit-flipped or their JSON numbers replaced. Opening one never panics, and
//! whatever is accepted keeps the reader's promises (sorted, non-overlapping regions whose files
//! have the recorded sizes; kernargs of the recorded size; the kernel in the code object).
//! The cargo-fuzz target `snapshot` (fuzz/) does the same without a fixed seed.
//! Needs: hipcc, clang-offload-bundler-19.

mod common;

use common::*;
use proptest::prelude::*;
use replay::snapshot::Snapshot;
use std::path::Path;

#[derive(Debug, Clone)]
enum Mutation {
    Truncate {
        file: usize,
        keep: usize,
    },
    Pad {
        file: usize,
        extra: usize,
    },
    Flip {
        file: usize,
        at: usize,
        bit: u8,
    },
    /// Replace the n-th run of digits in a JSON file by a number.
    Number {
        json: usize,
        nth: usize,
        value: u64,
    },
    Remove {
        file: usize,
    },
}

fn files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut v = vec![
        dir.join("dispatch.json"),
        dir.join("memory_regions.json"),
        dir.join("kernarg.bin"),
        dir.join("kernel.hsaco"),
        dir.join(format!("memory/region_{OUT:x}.bin")),
        dir.join(format!("memory/region_{IN:x}.bin")),
    ];
    v.retain(|p| p.exists());
    v
}

fn apply(dir: &Path, m: &Mutation) {
    let fs = files(dir);
    if fs.is_empty() {
        return;
    }
    let pick = |i: usize| fs[i % fs.len()].clone();
    match m {
        Mutation::Truncate { file, keep } => {
            let p = pick(*file);
            let b = std::fs::read(&p).unwrap();
            std::fs::write(&p, &b[..(*keep).min(b.len())]).unwrap();
        }
        Mutation::Pad { file, extra } => {
            let p = pick(*file);
            let mut b = std::fs::read(&p).unwrap();
            b.extend(std::iter::repeat_n(0x20, *extra));
            std::fs::write(&p, b).unwrap();
        }
        Mutation::Flip { file, at, bit } => {
            let p = pick(*file);
            let mut b = std::fs::read(&p).unwrap();
            if !b.is_empty() {
                let i = at % b.len();
                b[i] ^= 1 << (bit % 8);
            }
            std::fs::write(&p, b).unwrap();
        }
        Mutation::Number { json, nth, value } => {
            let p = dir.join(["dispatch.json", "memory_regions.json"][json % 2]);
            let Ok(t) = std::fs::read_to_string(&p) else {
                return;
            };
            let runs: Vec<(usize, usize)> = regex::Regex::new(r"\d+")
                .unwrap()
                .find_iter(&t)
                .map(|m| (m.start(), m.end()))
                .collect();
            if !runs.is_empty() {
                let (s, e) = runs[nth % runs.len()];
                std::fs::write(&p, format!("{}{value}{}", &t[..s], &t[e..])).unwrap();
            }
        }
        Mutation::Remove { file } => {
            let _ = std::fs::remove_file(pick(*file));
        }
    }
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (0..6usize, 0..5000usize).prop_map(|(file, keep)| Mutation::Truncate { file, keep }),
        (0..6usize, 1..64usize).prop_map(|(file, extra)| Mutation::Pad { file, extra }),
        (0..6usize, any::<usize>(), any::<u8>()).prop_map(|(file, at, bit)| Mutation::Flip {
            file,
            at,
            bit
        }),
        (
            0..2usize,
            any::<usize>(),
            prop_oneof![
                Just(0u64),
                Just(1),
                Just(4096),
                Just(u32::MAX as u64),
                Just(u64::MAX),
                any::<u64>()
            ]
        )
            .prop_map(|(json, nth, value)| Mutation::Number { json, nth, value }),
        (0..6usize).prop_map(|file| Mutation::Remove { file }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn hostile_snapshots_are_refused_or_consistent(ms in prop::collection::vec(mutation(), 1..4), v1 in any::<bool>()) {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("cap");
        if v1 {
            write_v1(&dir, &scale_spec());
        } else {
            write_perf_lab(&dir, &scale_spec());
        }
        for m in &ms {
            apply(&dir, m);
        }
        match Snapshot::open(&dir) {
            Err(e) => {
                let text = e.to_string();
                prop_assert!(!text.is_empty() && !text.contains('\n') || text.contains("JSON"), "{text}");
            }
            Ok(s) => {
                for w in s.regions.windows(2) {
                    prop_assert!(w[0].base() + w[0].size() <= w[1].base());
                }
                for r in &s.regions {
                    if let Ok(b) = r.read() {
                        prop_assert_eq!(b.len() as u64, r.size());
                    }
                }
                prop_assert_eq!(s.kernarg.len(), s.dispatch.kernarg_size as usize);
                prop_assert_eq!(s.kernel.kernarg_segment_size, s.dispatch.kernarg_size);
                prop_assert!(s.dispatch.group_segment_size >= s.kernel.group_segment_fixed_size);
            }
        }
    }
}
