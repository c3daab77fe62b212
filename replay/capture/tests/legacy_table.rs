//! The capture tool against a simulated ROCm 5.2 runtime (legacy 400-byte AMD table, no vmem):
//! more than 256 live allocations, a failing copy, code objects loaded from memory and from a
//! file into one executable, a dispatch with dynamic LDS chosen by regex and index, an earlier
//! dispatch still running when the chosen one is submitted. One scenario per process: the tool
//! is process-wide.
//! Needs: hipcc, clang-offload-bundler-19 (for the code objects).

mod common;

use common::objects::{objects, DYN_LDS, SCALE};
use common::*;
use replay::ffi::*;
use replay::snapshot::{Contents, Snapshot};
use replay::table::{Amd, AmdLayout, Core};
use std::ffi::c_void;
use std::os::fd::AsRawFd;

#[test]
fn captures_the_named_dispatch_after_draining_with_every_region() {
    let o = objects();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("snap");
    let status_path = tmp.path().join("status.json");
    set_env(&out, &status_path, r"ns::dyn_lds\(", 1, "5");

    let mut t = Tables::new(1, 1, 400, AmdLayout::Legacy);
    let original_amd = t.amd_bytes();
    assert!(on_load(&mut t));
    // Only entries within the declared 400 bytes were touched; nothing was written past them.
    assert_eq!(t.amd.len(), 50);
    assert_ne!(
        t.amd_bytes(),
        original_amd,
        "the allocation entries are hooked"
    );
    let st = read_status(&status_path);
    let tables = st.tables.unwrap();
    assert_eq!((tables.amd_ext_major, tables.amd_ext_size), (1, 400));
    assert!(tables.amd_ext_layout.starts_with("legacy"));
    assert!(
        tables.absent.contains(&"hsa_amd_vmem_map_fn".to_string()),
        "{:?}",
        tables.absent
    );
    assert_eq!(st.error, None);
    // hsa_memory_copy is used, not wrapped.
    assert_eq!(
        t.core_slot(Core::MemoryCopy),
        m_memory_copy as *const () as u64
    );

    unsafe {
        // The application creates a queue: the tool makes it an intercept queue.
        let qc: QueueCreateFn = t.core_fn(Core::QueueCreate);
        let mut q: *mut Queue = std::ptr::null_mut();
        assert_eq!(
            qc(
                AGENT,
                64,
                QUEUE_TYPE_MULTI,
                None,
                std::ptr::null_mut(),
                u32::MAX,
                u32::MAX,
                &mut q
            ),
            0
        );
        assert_eq!(mock().as_ref().unwrap().intercept_queues, 1);
        assert_eq!(mock().as_ref().unwrap().plain_queue_creates, 0);

        // 300 pool allocations, each filled with its index; one is freed again.
        let alloc: PoolAllocateFn = t.amd_fn(AmdLayout::Legacy, Amd::MemoryPoolAllocate);
        let free: PoolFreeFn = t.amd_fn(AmdLayout::Legacy, Amd::MemoryPoolFree);
        let pool = MemoryPool { handle: 1 };
        let mut bufs = Vec::new();
        for i in 0..300usize {
            let mut p: *mut c_void = std::ptr::null_mut();
            assert_eq!(alloc(pool, 4096, 0, &mut p), 0);
            std::ptr::write_bytes(p as *mut u8, i as u8, 4096);
            bufs.push(p as u64);
        }
        assert_eq!(free(bufs[7] as *mut c_void), 0);
        // One allocation the runtime cannot copy.
        let mut bad: *mut c_void = std::ptr::null_mut();
        alloc(pool, 8192, 0, &mut bad);
        mock().as_mut().unwrap().fail_copy = Some((bad as u64, bad as u64 + 8192));
        // hsa_memory_allocate and a locked host buffer.
        let ma: MemoryAllocateFn = t.core_fn(Core::MemoryAllocate);
        let mut legacy: *mut c_void = std::ptr::null_mut();
        assert_eq!(ma(Region { handle: 3 }, 8192, &mut legacy), 0);
        std::ptr::write_bytes(legacy as *mut u8, 0xc3, 8192);
        let lock: MemoryLockFn = t.amd_fn(AmdLayout::Legacy, Amd::MemoryLock);
        let host = host_alloc(4096);
        std::ptr::write_bytes(host, 0x11, 4096);
        let mut agent_ptr: *mut c_void = std::ptr::null_mut();
        assert_eq!(
            lock(host.cast(), 4096, std::ptr::null_mut(), 0, &mut agent_ptr),
            0
        );
        // The buffer the earlier "fill" dispatch writes, and the kernarg buffer.
        let mut x: *mut c_void = std::ptr::null_mut();
        alloc(pool, 65536, 0, &mut x);
        let mut ka: *mut c_void = std::ptr::null_mut();
        alloc(pool, 4096, 0, &mut ka);

        // Code objects: kernels.hip from memory, fill.hip from a file, into one executable.
        let from_mem: ReaderCreateFromMemoryFn = t.core_fn(Core::CodeObjectReaderCreateFromMemory);
        let from_file: ReaderCreateFromFileFn = t.core_fn(Core::CodeObjectReaderCreateFromFile);
        let load: LoadAgentCodeObjectFn = t.core_fn(Core::ExecutableLoadAgentCodeObject);
        let exe = Executable { handle: 100 };
        let mut r1 = CodeObjectReader::default();
        assert_eq!(
            from_mem(o.base_elf.as_ptr().cast(), o.base_elf.len(), &mut r1),
            0
        );
        assert_eq!(
            load(exe, AGENT, r1, std::ptr::null(), std::ptr::null_mut()),
            0
        );
        let file = std::fs::File::open(&o.fill_elf).unwrap();
        let mut r2 = CodeObjectReader::default();
        assert_eq!(from_file(file.as_raw_fd(), &mut r2), 0);
        assert_eq!(
            load(exe, AGENT, r2, std::ptr::null(), std::ptr::null_mut()),
            0
        );
        let ko = kernel_objects(&t, exe);
        // The simulated GPU runs `fill` by writing its buffer.
        mock().as_mut().unwrap().fill_kernels.push(ko["fill"]);

        // Kernargs: fill(x, 65536, 0x5a) at +0, ns::dyn_lds at +256.
        let kab = ka as *mut u8;
        std::ptr::write_unaligned(kab as *mut u64, x as u64);
        std::ptr::write_unaligned(kab.add(8) as *mut u64, 65536);
        *kab.add(16) = 0x5a;
        let dyn_kernarg = kab.add(256);
        std::ptr::write_unaligned(dyn_kernarg as *mut u64, bufs[0]);
        std::ptr::write_unaligned(dyn_kernarg.add(8) as *mut u64, bufs[1]);

        let dyn_lds = ko[DYN_LDS];
        // Dynamic LDS: 256 static bytes plus 2 KiB requested at launch.
        let lds = 256 + 2048;
        submit(&[dispatch(dyn_lds, dyn_kernarg as u64, 64, 64, lds)]);
        submit(&[dispatch(ko["fill"], ka as u64, 65536, 256, 0)]);
        submit(&[dispatch(ko[SCALE], dyn_kernarg as u64, 1024, 256, 0)]);
        assert_eq!(mock().as_ref().unwrap().waits, 0, "nothing has waited yet");
        // Dispatch 1 of ns::dyn_lds is the one: the fill before it must have run first.
        submit(&[dispatch(dyn_lds, dyn_kernarg as u64, 128, 64, lds)]);
        submit(&[dispatch(dyn_lds, dyn_kernarg as u64, 64, 64, lds)]);
        assert_eq!(
            hw_types(),
            "DDDBDD",
            "a barrier drained the queue before the captured packet"
        );
        drop(file);

        let s = Snapshot::open(&out).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(s.version, 1);
        assert_eq!(s.kernel.name, DYN_LDS);
        assert_eq!(s.dispatch.mangled_name, format!("{DYN_LDS}.kd"));
        assert_eq!(s.dispatch.demangled_name, "ns::dyn_lds(int const*, int*)");
        assert_eq!(s.dispatch.dispatch_index, 1);
        assert_eq!(s.dispatch.grid, [128, 1, 1]);
        // Segment sizes from the packet (the symbol says 256).
        assert_eq!(s.dispatch.group_segment_size, 2304);
        assert_eq!(s.dispatch.setup_dimensions, Some(1));
        assert_eq!(s.dispatch.drained, Some(true));
        // The code object is the one defining the kernel, not the last one loaded.
        assert_eq!(s.hsaco, o.base_elf);
        assert_eq!(s.dispatch.hsaco_source.as_deref(), Some("memory"));
        assert_eq!(s.kernarg.len(), s.kernel.kernarg_segment_size as usize);
        assert_eq!(s.kernarg[..8], bufs[0].to_le_bytes());
        assert_eq!(s.dispatch.agent_name, AGENT_NAME);
        assert_eq!(s.dispatch.isa_name, ISA_NAME);
        assert_eq!(s.dispatch.wavefront_size, 64);

        // Every region: 299 pool buffers, the failing one, hsa_memory_allocate, the lock,
        // the fill target, the kernarg buffer.
        assert_eq!(s.regions.len(), 299 + 5);
        assert!(s.region_at(bufs[7]).is_none(), "the freed buffer is gone");
        for (i, b) in bufs.iter().enumerate().filter(|(i, _)| *i != 7) {
            let r = s.region_at(*b).unwrap();
            assert_eq!(r.record.kind.as_deref(), Some("pool"));
            assert!(
                r.read().unwrap().iter().all(|&v| v == i as u8),
                "buffer {i}"
            );
        }
        let xr = s.region_at(x as u64).unwrap().read().unwrap();
        assert!(
            xr.iter().all(|&v| v == 0x5a),
            "the earlier dispatch finished before the copy"
        );
        let missing = s.missing();
        assert_eq!(missing.len(), 1);
        assert_eq!(missing[0].base(), bad as u64);
        match &missing[0].contents {
            Contents::Missing { error } => assert!(
                error.contains("HSA_STATUS_ERROR_INVALID_ALLOCATION"),
                "{error}"
            ),
            c => panic!("{c:?}"),
        }
        assert_eq!(
            s.region_at(legacy as u64).unwrap().record.kind.as_deref(),
            Some("memory_allocate")
        );
        assert_eq!(
            s.region_at(agent_ptr as u64)
                .unwrap()
                .record
                .kind
                .as_deref(),
            Some("lock")
        );
        let kr = s.region_at(ka as u64).unwrap();
        assert!(kr.record.contains_kernarg);
        assert!(!s.region_at(x as u64).unwrap().record.contains_kernarg);

        // The JSON is serde's: the agent name's quotes and backslash are escaped.
        let raw = std::fs::read_to_string(out.join("dispatch.json")).unwrap();
        assert!(
            raw.contains(r#""agent_name": "gfx90a \"mock\" \\agent""#),
            "{raw}"
        );

        let st = read_status(&status_path);
        let c = st.captured.unwrap();
        assert_eq!(
            (
                c.kernel.as_str(),
                c.dispatch_index,
                c.regions,
                c.failed_regions
            ),
            (s.dispatch.mangled_name.as_str(), 1, 304, 1)
        );
        assert_eq!(st.capture_error, None);
        let counts: Vec<(String, u64)> = st
            .kernels
            .iter()
            .map(|k| (k.name.clone(), k.dispatches))
            .collect();
        assert_eq!(
            counts,
            vec![
                (format!("{DYN_LDS}.kd"), 2),
                ("fill.kd".into(), 1),
                (format!("{SCALE}.kd"), 1)
            ],
            "status written right after the capture"
        );
    }
}
