//! A queue that never drains: the capture's wait gives up after the configured timeout (it
//! does not hang), the snapshot says it was not drained, and replay refuses it.
//! Needs: hipcc, clang-offload-bundler-19 (for the code objects).

mod common;

use common::objects::{objects, DYN_LDS};
use common::*;
use replay::ffi::*;
use replay::snapshot::{Snapshot, SnapshotError};
use replay::table::{Amd, AmdLayout, Core};
use std::ffi::c_void;
use std::time::{Duration, Instant};

#[test]
fn a_stuck_queue_times_out_and_the_snapshot_is_marked() {
    let o = objects();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("snap");
    let status_path = tmp.path().join("status.json");
    set_env(&out, &status_path, "dyn_lds", 0, "0.3");
    let mut t = Tables::new(1, 1, 400, AmdLayout::Legacy);
    assert!(on_load(&mut t));
    with(|m| m.stuck = true);
    unsafe {
        let qc: QueueCreateFn = t.core_fn(Core::QueueCreate);
        let mut q: *mut Queue = std::ptr::null_mut();
        qc(
            AGENT,
            64,
            QUEUE_TYPE_MULTI,
            None,
            std::ptr::null_mut(),
            0,
            0,
            &mut q,
        );
        let alloc: PoolAllocateFn = t.amd_fn(AmdLayout::Legacy, Amd::MemoryPoolAllocate);
        let mut ka: *mut c_void = std::ptr::null_mut();
        alloc(MemoryPool { handle: 2 }, 4096, 0, &mut ka);
        let from_mem: ReaderCreateFromMemoryFn = t.core_fn(Core::CodeObjectReaderCreateFromMemory);
        let load: LoadAgentCodeObjectFn = t.core_fn(Core::ExecutableLoadAgentCodeObject);
        let mut r = CodeObjectReader::default();
        from_mem(o.base_elf.as_ptr().cast(), o.base_elf.len(), &mut r);
        load(
            Executable { handle: 1 },
            AGENT,
            r,
            std::ptr::null(),
            std::ptr::null_mut(),
        );
        let ko = kernel_objects(&t, Executable { handle: 1 });
        let start = Instant::now();
        submit(&[dispatch(ko[DYN_LDS], ka as u64, 64, 64, 256)]);
        let took = start.elapsed();
        // It waited out its deadline (a monotonic clock: never less), then gave up: the
        // status below says the wait timed out. No upper bound: returning at all is the event
        // that it does not hang (a hang fails the run), and a busy machine may be slow.
        assert!(took >= Duration::from_millis(300), "{took:?}");
        // The packet still went to the queue after the barrier.
        assert_eq!(hw_types(), "BD");
    }
    let st = read_status(&status_path);
    assert_eq!(
        st.capture_error.as_deref(),
        Some("the barrier packet did not complete within 0.3 s")
    );
    assert!(matches!(
        Snapshot::open(&out),
        Err(SnapshotError::NotDrained { .. })
    ));
}
