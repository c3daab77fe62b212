//! The capture tool against a simulated ROCm 6.2 runtime (current AMD table order, major 2,
//! 576 bytes, with the vmem API): vmem mappings tracked with their handle and access, an
//! unmapped range dropped, and a kernel from a code object loaded from a file captured with
//! that file's bytes.
//! Needs: hipcc, clang-offload-bundler-19 (for the code objects).

mod common;

use common::objects::objects;
use common::*;
use replay::ffi::*;
use replay::snapshot::Snapshot;
use replay::table::{Amd, AmdLayout, Core};
use std::ffi::c_void;
use std::os::fd::AsRawFd;

#[test]
fn captures_vmem_regions_and_a_kernel_loaded_from_a_file() {
    let o = objects();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("snap");
    let status_path = tmp.path().join("status.json");
    // rocm-perf-lab's variables are honoured when hip-unroll's are absent.
    set_env(&out, &status_path, "unused", 0, "5");
    std::env::remove_var(replay::launch::env::KERNEL);
    std::env::remove_var(replay::launch::env::DISPATCH);
    std::env::set_var("ISOLATE_KERNEL", "^fill");
    std::env::set_var("ISOLATE_DISPATCH_INDEX", "0");

    const L: AmdLayout = AmdLayout::Current;
    let mut t = Tables::new(2, 2, 576, L);
    assert!(on_load(&mut t));
    let st = read_status(&status_path);
    let tables = st.tables.unwrap();
    assert_eq!((tables.amd_ext_major, tables.amd_ext_size), (2, 576));
    assert!(tables.amd_ext_layout.starts_with("current"));
    assert!(
        !tables.absent.iter().any(|a| a.contains("vmem_map")),
        "{:?}",
        tables.absent
    );

    unsafe {
        let qc: QueueCreateFn = t.core_fn(Core::QueueCreate);
        let mut q: *mut Queue = std::ptr::null_mut();
        assert_eq!(
            qc(
                AGENT,
                64,
                QUEUE_TYPE_MULTI,
                None,
                std::ptr::null_mut(),
                0,
                0,
                &mut q
            ),
            0
        );

        let reserve: VmemAddressReserveFn = t.amd_fn(L, Amd::VmemAddressReserve);
        let create: VmemHandleCreateFn = t.amd_fn(L, Amd::VmemHandleCreate);
        let map: VmemMapFn = t.amd_fn(L, Amd::VmemMap);
        let unmap: VmemUnmapFn = t.amd_fn(L, Amd::VmemUnmap);
        let access: VmemSetAccessFn = t.amd_fn(L, Amd::VmemSetAccess);
        let mut va: *mut c_void = std::ptr::null_mut();
        assert_eq!(reserve(&mut va, 1 << 20, 0, 0), 0);
        let mut h1 = VmemHandle::default();
        let mut h2 = VmemHandle::default();
        create(
            MemoryPool { handle: 1 },
            65536,
            AMD_MEMORY_TYPE_NONE,
            0,
            &mut h1,
        );
        create(
            MemoryPool { handle: 1 },
            65536,
            AMD_MEMORY_TYPE_NONE,
            0,
            &mut h2,
        );
        let base = va as u64;
        assert_eq!(map(va, 65536, 0, h1, 0), 0);
        let second = (base + (512 << 10)) as *mut c_void;
        assert_eq!(map(second, 65536, 0, h2, 0), 0);
        let desc = MemoryAccessDesc {
            permissions: ACCESS_PERMISSION_RW,
            agent_handle: AGENT,
        };
        assert_eq!(access(va, 65536, &desc, 1), 0);
        std::ptr::write_bytes(va as *mut u8, 0x42, 65536);
        // The second mapping goes away again: no region for it.
        assert_eq!(unmap(second, 65536), 0);
        let alloc: PoolAllocateFn = t.amd_fn(L, Amd::MemoryPoolAllocate);
        let mut ka: *mut c_void = std::ptr::null_mut();
        alloc(MemoryPool { handle: 2 }, 4096, 0, &mut ka);

        let from_file: ReaderCreateFromFileFn = t.core_fn(Core::CodeObjectReaderCreateFromFile);
        let from_mem: ReaderCreateFromMemoryFn = t.core_fn(Core::CodeObjectReaderCreateFromMemory);
        let load: LoadAgentCodeObjectFn = t.core_fn(Core::ExecutableLoadAgentCodeObject);
        let file = std::fs::File::open(&o.fill_elf).unwrap();
        let mut r = CodeObjectReader::default();
        assert_eq!(from_file(file.as_raw_fd(), &mut r), 0);
        assert_eq!(
            load(
                Executable { handle: 1 },
                AGENT,
                r,
                std::ptr::null(),
                std::ptr::null_mut()
            ),
            0
        );
        let mut r2 = CodeObjectReader::default();
        assert_eq!(
            from_mem(o.base_elf.as_ptr().cast(), o.base_elf.len(), &mut r2),
            0
        );
        assert_eq!(
            load(
                Executable { handle: 2 },
                AGENT,
                r2,
                std::ptr::null(),
                std::ptr::null_mut()
            ),
            0
        );
        let ko = kernel_objects(&t, Executable { handle: 1 });

        let kab = ka as *mut u8;
        std::ptr::write_unaligned(kab as *mut u64, base);
        std::ptr::write_unaligned(kab.add(8) as *mut u64, 65536);
        *kab.add(16) = 0x77;
        submit(&[dispatch(ko["fill"], ka as u64, 65536, 256, 0)]);
        assert_eq!(hw_types(), "BD");

        let s = Snapshot::open(&out).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(s.dispatch.mangled_name, "fill.kd");
        assert_eq!(
            s.dispatch.demangled_name, "",
            "an extern \"C\" name has no demangling"
        );
        assert_eq!(s.hsaco, std::fs::read(&o.fill_elf).unwrap());
        assert_eq!(s.dispatch.hsaco_source.as_deref(), Some("file"));
        assert_eq!(
            s.regions.len(),
            2,
            "the vmem mapping and the kernarg buffer"
        );
        let v = s.region_at(base).unwrap();
        assert!(v.record.is_vmem && !v.record.is_pool);
        assert_eq!(
            (v.record.size, v.record.handle, v.record.access),
            (65536, h1.handle, ACCESS_PERMISSION_RW)
        );
        // Captured before the fill ran: the buffer holds what the application wrote.
        assert!(v.read().unwrap().iter().all(|&b| b == 0x42));
        assert!(s.region_at(second as u64).is_none());
        drop(file);
    }
}
