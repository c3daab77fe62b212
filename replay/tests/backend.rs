//! The replay measurement backend's two operations on a simulated GPU (the fake runtime of
//! `testdata/replay/fake_hsa.c`): prepare compiles real variants with hipcc through codeobj's
//! cache, checks and loads them and compares their outputs with the baseline's; sample times
//! one replay. One test per process: the session reserves fixed addresses.
//! Needs: hipcc, clang-offload-bundler-19, cc, /usr/include/hsa.

mod common;

use codeobj::compile::{Compiler, DEFAULT_COMMAND};
use common::*;
use replay::backend::{BackendError, Session};
use replay::device::Options;
use replay::diff::Tolerance;
use replay::variant::VariantError;

#[test]
fn prepare_accepts_equal_outputs_and_sample_times_one_replay() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("cap");
    write_perf_lab(&dir, &scale_spec());
    std::env::set_var(
        "FAKE_HSA_KERNARG_SIZE",
        kernel_meta(SCALE).kernarg_segment_size.to_string(),
    );
    let options = Options {
        runtime_library: Some(fakes().vmem.clone()),
        ..Options::default()
    };
    let compiler = Compiler::new(DEFAULT_COMMAND, "gfx90a", t.path().join("cache"));
    let mut s = Session::open(&dir, options, compiler, vec![], Tolerance::default()).unwrap();

    let td = testdata();
    let v = s.prepare(&td.join("kernels.unrolled.hip")).unwrap();
    assert!(!v.cached);
    assert_eq!((v.comparison.regions, v.comparison.written), (2, 1));
    assert!(
        s.prepare(&td.join("kernels.unrolled.hip")).unwrap().cached,
        "second build from the cache"
    );

    // A variant that computes one element wrong is rejected with the region and offset.
    match s.prepare(&td.join("kernels.buggy.hip")) {
        Err(BackendError::Mismatch { comparison, .. }) => {
            assert_eq!(comparison.differences.len(), 1);
            assert_eq!(
                (
                    comparison.differences[0].base,
                    comparison.differences[0].first_offset
                ),
                (OUT, 0x16)
            );
        }
        other => panic!("{other:?}"),
    }
    // A variant whose kernel is gone is refused before it runs.
    match s.prepare(&td.join("kernels.changed.hip")) {
        Err(BackendError::Variant(VariantError::Unusable { what, .. })) => {
            assert!(what.contains("is not in the code object"), "{what}")
        }
        other => panic!("{other:?}"),
    }

    // Samples: the fake's clock (100 MHz) and cost (1000 + ELF size % 997 ticks).
    let ns = |elf_len: usize| (1000 + elf_len as u64 % 997) * 10;
    assert_eq!(
        s.sample(s.baseline()).unwrap(),
        ns(objects().base_elf.len())
    );
    let elf = replay::hsaco::device_elf(&std::fs::read(&v.object).unwrap(), "gfx90a").unwrap();
    assert_eq!(s.sample(v.id).unwrap(), ns(elf.len()));
}
