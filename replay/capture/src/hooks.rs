//! The API-table hooks: each calls the runtime's own function first, then records what
//! happened (allocations, code objects, kernel objects, queues). Recording never changes what
//! the application sees, and a panic while recording is caught. The queue hook creates an
//! intercept queue whose packet callback ([`on_submit`]) is where a dispatch is captured.

use crate::status::describe;
use crate::{snap, tool, track::Blob};
use replay::aql;
use replay::ffi::*;
use replay::table::{self, Amd, AmdLayout, Core, Table};
use std::ffi::{c_char, c_int, c_void};
use std::panic::AssertUnwindSafe;

/// Run `f`, swallowing a panic: the application's call already succeeded.
fn guard(f: impl FnOnce()) {
    let _ = std::panic::catch_unwind(AssertUnwindSafe(f));
}

macro_rules! real_table {
    ($( $field:ident : $ty:ty = $table:ident :: $entry:ident $(=> $hook:ident)? ;)*) => {
        /// The runtime's own functions, as found in its tables before patching.
        #[derive(Default)]
        pub(crate) struct Real {
            $( pub $field: Option<$ty>, )*
        }

        /// Read every entry capture uses (without patching anything yet); also list the ones the
        /// runtime's tables do not have.
        pub(crate) fn install(core: &Table, amd: Option<&(Table, AmdLayout)>) -> (Real, Vec<String>) {
            let mut real = Real::default();
            let mut absent = Vec::new();
            $(
                let p = lookup!($table, $entry, core, amd);
                match p {
                    // SAFETY: the entry has this type in every table layout (see table.rs).
                    Some(p) => real.$field = Some(unsafe { std::mem::transmute::<*const (), $ty>(p) }),
                    None => absent.push(name!($table, $entry)),
                }
            )*
            (real, absent)
        }

        /// Replace the table entries that have a hook (after the tool is reachable by hooks).
        pub(crate) fn activate() {
            let Some(t) = tool() else { return };
            $($(
                if t.real.$field.is_some() && allowed(t, stringify!($hook)) {
                    let f: $ty = $hook;
                    patch!($table, $entry, t, f as *const ());
                }
            )?)*
        }
    };
}

macro_rules! lookup {
    (Core, $entry:ident, $core:expr, $amd:expr) => {
        table::core_offset(&$core.version(), Core::$entry).and_then(|o| $core.get(o))
    };
    (Amd, $entry:ident, $core:expr, $amd:expr) => {
        $amd.and_then(|(t, l)| {
            table::amd_offset(*l, &t.version(), Amd::$entry).and_then(|o| t.get(o))
        })
    };
}

macro_rules! name {
    (Core, $entry:ident) => {
        Core::$entry.field().to_string()
    };
    (Amd, $entry:ident) => {
        Amd::$entry.field().to_string()
    };
}

macro_rules! patch {
    (Core, $entry:ident, $t:expr, $f:expr) => {
        if let Some(o) = table::core_offset(&$t.core.version(), Core::$entry) {
            // SAFETY: the hook has the entry's type; the offset is within the table's size.
            unsafe { $t.core.replace(o, $f) };
        }
    };
    (Amd, $entry:ident, $t:expr, $f:expr) => {
        if let Some((tab, l)) = &$t.amd {
            if let Some(o) = table::amd_offset(*l, &tab.version(), Amd::$entry) {
                // SAFETY: as above.
                unsafe { tab.replace(o, $f) };
            }
        }
    };
}

real_table! {
    system_get_info: SystemGetInfoFn = Core::SystemGetInfo;
    agent_get_info: AgentGetInfoFn = Core::AgentGetInfo;
    queue_create: QueueCreateFn = Core::QueueCreate => hook_queue_create;
    memory_allocate: MemoryAllocateFn = Core::MemoryAllocate => hook_memory_allocate;
    memory_free: MemoryFreeFn = Core::MemoryFree => hook_memory_free;
    memory_copy: MemoryCopyFn = Core::MemoryCopy;
    signal_create: SignalCreateFn = Core::SignalCreate;
    signal_destroy: SignalDestroyFn = Core::SignalDestroy;
    signal_wait_scacquire: SignalWaitFn = Core::SignalWaitScacquire;
    code_object_deserialize: CodeObjectDeserializeFn = Core::CodeObjectDeserialize => hook_deserialize;
    load_code_object: LoadCodeObjectFn = Core::ExecutableLoadCodeObject => hook_load_code_object;
    symbol_get_info: SymbolGetInfoFn = Core::ExecutableSymbolGetInfo => hook_symbol_get_info;
    iterate_symbols: IterateSymbolsFn = Core::ExecutableIterateSymbols;
    status_string: StatusStringFn = Core::StatusString;
    isa_get_info_alt: IsaGetInfoAltFn = Core::IsaGetInfoAlt;
    reader_from_file: ReaderCreateFromFileFn = Core::CodeObjectReaderCreateFromFile => hook_reader_from_file;
    reader_from_memory: ReaderCreateFromMemoryFn = Core::CodeObjectReaderCreateFromMemory => hook_reader_from_memory;
    load_program: LoadProgramCodeObjectFn = Core::ExecutableLoadProgramCodeObject => hook_load_program;
    load_agent: LoadAgentCodeObjectFn = Core::ExecutableLoadAgentCodeObject => hook_load_agent;
    pool_allocate: PoolAllocateFn = Amd::MemoryPoolAllocate => hook_pool_allocate;
    pool_free: PoolFreeFn = Amd::MemoryPoolFree => hook_pool_free;
    memory_lock: MemoryLockFn = Amd::MemoryLock => hook_memory_lock;
    memory_unlock: MemoryUnlockFn = Amd::MemoryUnlock => hook_memory_unlock;
    interop_map: InteropMapBufferFn = Amd::InteropMapBuffer => hook_interop_map;
    interop_unmap: InteropUnmapBufferFn = Amd::InteropUnmapBuffer => hook_interop_unmap;
    ipc_attach: IpcMemoryAttachFn = Amd::IpcMemoryAttach => hook_ipc_attach;
    ipc_detach: IpcMemoryDetachFn = Amd::IpcMemoryDetach => hook_ipc_detach;
    intercept_create: QueueInterceptCreateFn = Amd::QueueInterceptCreate;
    intercept_register: QueueInterceptRegisterFn = Amd::QueueInterceptRegister;
    lock_to_pool: MemoryLockToPoolFn = Amd::MemoryLockToPool => hook_lock_to_pool;
    vmem_reserve: VmemAddressReserveFn = Amd::VmemAddressReserve => hook_vmem_reserve;
    vmem_free: VmemAddressFreeFn = Amd::VmemAddressFree => hook_vmem_free;
    vmem_handle_create: VmemHandleCreateFn = Amd::VmemHandleCreate => hook_vmem_handle_create;
    vmem_handle_release: VmemHandleReleaseFn = Amd::VmemHandleRelease => hook_vmem_handle_release;
    vmem_map: VmemMapFn = Amd::VmemMap => hook_vmem_map;
    vmem_unmap: VmemUnmapFn = Amd::VmemUnmap => hook_vmem_unmap;
    vmem_set_access: VmemSetAccessFn = Amd::VmemSetAccess => hook_vmem_set_access;
    vmem_reserve_align: VmemAddressReserveAlignFn = Amd::VmemAddressReserveAlign => hook_vmem_reserve_align;
}

/// Hooks that depend on another entry: queue creation is only wrapped when the runtime can
/// make intercept queues.
fn allowed(t: &crate::Tool, hook: &str) -> bool {
    match hook {
        "hook_queue_create" => {
            t.real.intercept_create.is_some() && t.real.intercept_register.is_some()
        }
        _ => true,
    }
}

fn state() -> Option<std::sync::MutexGuard<'static, crate::track::State>> {
    tool().map(|t| t.state.lock().unwrap_or_else(|e| e.into_inner()))
}

macro_rules! real {
    ($field:ident) => {
        match tool().and_then(|t| t.real.$field) {
            Some(f) => f,
            None => return STATUS_ERROR,
        }
    };
}

// ---- queues -------------------------------------------------------------------------------

unsafe extern "C" fn hook_queue_create(
    agent: Agent,
    size: u32,
    type_: u32,
    callback: Option<QueueErrorCallback>,
    data: *mut c_void,
    private_segment_size: u32,
    group_segment_size: u32,
    queue: *mut *mut Queue,
) -> Status {
    let create = real!(intercept_create);
    let register = real!(intercept_register);
    let s = create(
        agent,
        size,
        type_,
        callback,
        data,
        private_segment_size,
        group_segment_size,
        queue,
    );
    if s == STATUS_SUCCESS && !queue.is_null() && !(*queue).is_null() {
        let q = *queue;
        guard(|| {
            if let Some(mut st) = state() {
                st.queues.insert(q as usize, agent);
            }
        });
        let r = register(q, on_submit, q as *mut c_void);
        if r != STATUS_SUCCESS {
            guard(|| {
                note_error(format!(
                    "hsa_amd_queue_intercept_register failed ({})",
                    describe(r)
                ))
            });
        }
    }
    s
}

/// The intercept queue's packet callback: counts dispatches, captures the chosen one (after
/// the packets before it are written and drained), and forwards every packet unchanged.
unsafe extern "C" fn on_submit(
    pkts: *const c_void,
    count: u64,
    _user_index: u64,
    data: *mut c_void,
    writer: PacketWriter,
) {
    let written = std::cell::Cell::new(0u64);
    let base = pkts as *const u8;
    guard(|| {
        let Some(t) = tool() else { return };
        for i in 0..count {
            let p = base.add(i as usize * 64);
            let header = std::ptr::read_unaligned(p as *const u16);
            if aql::packet_type(header) != PACKET_TYPE_KERNEL_DISPATCH {
                continue;
            }
            let pkt = std::ptr::read_unaligned(p as *const KernelDispatchPacket);
            let (index, info) = match state() {
                Some(mut st) => st.count(pkt.kernel_object),
                None => return,
            };
            let Some(info) = info else { continue };
            if !snap::wanted(t, &info.symbol, index) {
                continue;
            }
            // Claim the capture (once per process).
            {
                let mut done = t.capture.lock().unwrap_or_else(|e| e.into_inner());
                if *done {
                    continue;
                }
                *done = true;
                // Everything before the chosen packet goes to the hardware first.
                let from = written.get();
                writer(base.add(from as usize * 64).cast(), i - from);
                written.set(i);
                snap::capture(t, &pkt, data as *mut Queue, &info, index, writer);
            }
            crate::flush_status();
        }
    });
    let from = written.get();
    if from < count {
        writer(base.add(from as usize * 64).cast(), count - from);
    }
}

// ---- code objects -------------------------------------------------------------------------

unsafe extern "C" fn hook_reader_from_memory(
    code_object: *const c_void,
    size: usize,
    reader: *mut CodeObjectReader,
) -> Status {
    let f = real!(reader_from_memory);
    let s = f(code_object, size, reader);
    if s == STATUS_SUCCESS && !reader.is_null() && !code_object.is_null() && size > 0 {
        let handle = (*reader).handle;
        let bytes = std::slice::from_raw_parts(code_object as *const u8, size).to_vec();
        guard(|| {
            let blob = Blob::new(bytes, "memory");
            if let Some(mut st) = state() {
                st.readers.insert(handle, blob);
            }
        });
    }
    s
}

/// The whole file behind `fd`, read with pread so the descriptor's offset is left alone.
fn read_fd(fd: c_int) -> std::io::Result<Vec<u8>> {
    // SAFETY: fstat/pread on a descriptor the application owns; nothing is closed or moved.
    unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        if libc::fstat(fd, &mut st) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        let len = st.st_size.max(0) as usize;
        let mut buf = vec![0u8; len];
        let mut done = 0usize;
        while done < len {
            let n = libc::pread(
                fd,
                buf.as_mut_ptr().add(done).cast(),
                len - done,
                done as libc::off_t,
            );
            if n < 0 {
                let e = std::io::Error::last_os_error();
                if e.kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(e);
            }
            if n == 0 {
                break;
            }
            done += n as usize;
        }
        buf.truncate(done);
        Ok(buf)
    }
}

unsafe extern "C" fn hook_reader_from_file(file: c_int, reader: *mut CodeObjectReader) -> Status {
    let f = real!(reader_from_file);
    let s = f(file, reader);
    if s == STATUS_SUCCESS && !reader.is_null() {
        let handle = (*reader).handle;
        guard(|| match read_fd(file) {
            Ok(bytes) => {
                let blob = Blob::new(bytes, "file");
                if let Some(mut st) = state() {
                    st.readers.insert(handle, blob);
                }
            }
            Err(e) => note_error(format!("cannot read a code object file (fd {file}): {e}")),
        });
    }
    s
}

unsafe extern "C" fn hook_deserialize(
    serialized: *mut c_void,
    size: usize,
    options: *const c_char,
    code_object: *mut CodeObject,
) -> Status {
    let f = real!(code_object_deserialize);
    let s = f(serialized, size, options, code_object);
    if s == STATUS_SUCCESS && !code_object.is_null() && !serialized.is_null() {
        let handle = (*code_object).handle;
        let bytes = std::slice::from_raw_parts(serialized as *const u8, size).to_vec();
        guard(|| {
            let blob = Blob::new(bytes, "deserialize");
            if let Some(mut st) = state() {
                st.code_objects.insert(handle, blob);
            }
        });
    }
    s
}

/// After a code object is loaded into `exe`: remember it, then name the kernel objects of the
/// kernels it defines (a kernel is tied to the code object that defines its name, not simply
/// to the last one loaded).
unsafe fn loaded(exe: Executable, blob: Option<std::sync::Arc<Blob>>) {
    let Some(blob) = blob else { return };
    if let Some(mut st) = state() {
        st.executables
            .entry(exe.handle)
            .or_default()
            .push(blob.clone());
    }
    let Some(t) = tool() else { return };
    let (Some(iterate), Some(_)) = (t.real.iterate_symbols, t.real.symbol_get_info) else {
        return;
    };
    let mut found: Vec<(u64, String, u32)> = Vec::new();
    iterate(
        exe,
        collect_kernel,
        &mut found as *mut Vec<(u64, String, u32)> as *mut c_void,
    );
    if let Some(mut st) = state() {
        for (ko, name, size) in found {
            if blob.defines(&name) {
                st.add_kernel(ko, name, size, Some(blob.clone()));
            }
        }
    }
}

/// The name, kernel object and kernarg size of a kernel symbol, through the runtime's own
/// `hsa_executable_symbol_get_info`.
unsafe fn kernel_symbol(sym: ExecutableSymbol) -> Option<(u64, String, u32)> {
    let get = tool()?.real.symbol_get_info?;
    let mut kind = u32::MAX;
    if get(
        sym,
        EXECUTABLE_SYMBOL_INFO_TYPE,
        &mut kind as *mut u32 as *mut c_void,
    ) != STATUS_SUCCESS
        || kind != SYMBOL_KIND_KERNEL
    {
        return None;
    }
    let mut len = 0u32;
    get(
        sym,
        EXECUTABLE_SYMBOL_INFO_NAME_LENGTH,
        &mut len as *mut u32 as *mut c_void,
    );
    // The runtime writes the name without a terminating NUL; leave room for one anyway.
    let mut name = vec![0u8; len as usize + 1];
    get(sym, EXECUTABLE_SYMBOL_INFO_NAME, name.as_mut_ptr().cast());
    name.truncate(len as usize);
    if let Some(nul) = name.iter().position(|&b| b == 0) {
        name.truncate(nul);
    }
    let mut ko = 0u64;
    get(
        sym,
        EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT,
        &mut ko as *mut u64 as *mut c_void,
    );
    let mut size = 0u32;
    get(
        sym,
        EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE,
        &mut size as *mut u32 as *mut c_void,
    );
    (ko != 0).then(|| (ko, String::from_utf8_lossy(&name).into_owned(), size))
}

unsafe extern "C" fn collect_kernel(
    _exe: Executable,
    sym: ExecutableSymbol,
    data: *mut c_void,
) -> Status {
    guard(|| {
        if let Some(k) = kernel_symbol(sym) {
            (*(data as *mut Vec<(u64, String, u32)>)).push(k);
        }
    });
    STATUS_SUCCESS
}

unsafe extern "C" fn hook_load_agent(
    exe: Executable,
    agent: Agent,
    reader: CodeObjectReader,
    options: *const c_char,
    loaded_code_object: *mut LoadedCodeObject,
) -> Status {
    let f = real!(load_agent);
    let s = f(exe, agent, reader, options, loaded_code_object);
    if s == STATUS_SUCCESS {
        guard(|| {
            let blob = state().and_then(|st| st.readers.get(&reader.handle).cloned());
            loaded(exe, blob);
        });
    }
    s
}

unsafe extern "C" fn hook_load_program(
    exe: Executable,
    reader: CodeObjectReader,
    options: *const c_char,
    loaded_code_object: *mut LoadedCodeObject,
) -> Status {
    let f = real!(load_program);
    let s = f(exe, reader, options, loaded_code_object);
    if s == STATUS_SUCCESS {
        guard(|| {
            let blob = state().and_then(|st| st.readers.get(&reader.handle).cloned());
            loaded(exe, blob);
        });
    }
    s
}

unsafe extern "C" fn hook_load_code_object(
    exe: Executable,
    agent: Agent,
    code_object: CodeObject,
    options: *const c_char,
) -> Status {
    let f = real!(load_code_object);
    let s = f(exe, agent, code_object, options);
    if s == STATUS_SUCCESS {
        guard(|| {
            let blob = state().and_then(|st| st.code_objects.get(&code_object.handle).cloned());
            loaded(exe, blob);
        });
    }
    s
}

unsafe extern "C" fn hook_symbol_get_info(
    sym: ExecutableSymbol,
    attribute: u32,
    value: *mut c_void,
) -> Status {
    let f = real!(symbol_get_info);
    let s = f(sym, attribute, value);
    if s == STATUS_SUCCESS && attribute == EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT {
        guard(|| {
            if let Some((ko, name, size)) = kernel_symbol(sym) {
                if let Some(mut st) = state() {
                    let known = st.kernels.get(&ko).is_some_and(|k| k.blob.is_some());
                    let blob = if known { None } else { st.blob_defining(&name) };
                    st.add_kernel(ko, name, size, blob);
                }
            }
        });
    }
    s
}

// ---- memory -------------------------------------------------------------------------------

fn add(base: *const c_void, size: usize, kind: &'static str, handle: u64) {
    guard(|| {
        if let Some(mut st) = state() {
            st.add_alloc(base as u64, size as u64, kind, handle);
        }
    });
}

fn remove(base: *const c_void) {
    guard(|| {
        if let Some(mut st) = state() {
            st.remove_alloc(base as u64);
        }
    });
}

unsafe extern "C" fn hook_memory_allocate(
    region: Region,
    size: usize,
    ptr: *mut *mut c_void,
) -> Status {
    let f = real!(memory_allocate);
    let s = f(region, size, ptr);
    if s == STATUS_SUCCESS && !ptr.is_null() {
        add(*ptr, size, "memory_allocate", 0);
    }
    s
}

unsafe extern "C" fn hook_memory_free(ptr: *mut c_void) -> Status {
    let f = real!(memory_free);
    let s = f(ptr);
    if s == STATUS_SUCCESS {
        remove(ptr);
    }
    s
}

unsafe extern "C" fn hook_pool_allocate(
    pool: MemoryPool,
    size: usize,
    flags: u32,
    ptr: *mut *mut c_void,
) -> Status {
    let f = real!(pool_allocate);
    let s = f(pool, size, flags, ptr);
    if s == STATUS_SUCCESS && !ptr.is_null() {
        add(*ptr, size, "pool", 0);
    }
    s
}

unsafe extern "C" fn hook_pool_free(ptr: *mut c_void) -> Status {
    let f = real!(pool_free);
    let s = f(ptr);
    if s == STATUS_SUCCESS {
        remove(ptr);
    }
    s
}

unsafe extern "C" fn hook_memory_lock(
    host: *mut c_void,
    size: usize,
    agents: *mut Agent,
    n: c_int,
    agent_ptr: *mut *mut c_void,
) -> Status {
    let f = real!(memory_lock);
    let s = f(host, size, agents, n, agent_ptr);
    if s == STATUS_SUCCESS && !agent_ptr.is_null() {
        locked(host, *agent_ptr, size);
    }
    s
}

unsafe extern "C" fn hook_lock_to_pool(
    host: *mut c_void,
    size: usize,
    agents: *mut Agent,
    n: c_int,
    pool: MemoryPool,
    flags: u32,
    agent_ptr: *mut *mut c_void,
) -> Status {
    let f = real!(lock_to_pool);
    let s = f(host, size, agents, n, pool, flags, agent_ptr);
    if s == STATUS_SUCCESS && !agent_ptr.is_null() {
        locked(host, *agent_ptr, size);
    }
    s
}

fn locked(host: *mut c_void, agent: *mut c_void, size: usize) {
    guard(|| {
        if let Some(mut st) = state() {
            st.locked.insert(host as u64, agent as u64);
            st.add_alloc(agent as u64, size as u64, "lock", 0);
        }
    });
}

unsafe extern "C" fn hook_memory_unlock(host: *mut c_void) -> Status {
    let f = real!(memory_unlock);
    let s = f(host);
    if s == STATUS_SUCCESS {
        guard(|| {
            if let Some(mut st) = state() {
                if let Some(a) = st.locked.remove(&(host as u64)) {
                    st.remove_alloc(a);
                }
            }
        });
    }
    s
}

unsafe extern "C" fn hook_interop_map(
    num_agents: u32,
    agents: *mut Agent,
    handle: c_int,
    flags: u32,
    size: *mut usize,
    ptr: *mut *mut c_void,
    metadata_size: *mut usize,
    metadata: *mut *const c_void,
) -> Status {
    let f = real!(interop_map);
    let s = f(
        num_agents,
        agents,
        handle,
        flags,
        size,
        ptr,
        metadata_size,
        metadata,
    );
    if s == STATUS_SUCCESS && !ptr.is_null() && !size.is_null() {
        add(*ptr, *size, "interop", 0);
    }
    s
}

unsafe extern "C" fn hook_interop_unmap(ptr: *mut c_void) -> Status {
    let f = real!(interop_unmap);
    let s = f(ptr);
    if s == STATUS_SUCCESS {
        remove(ptr);
    }
    s
}

unsafe extern "C" fn hook_ipc_attach(
    handle: *const c_void,
    len: usize,
    n: u32,
    agents: *const Agent,
    mapped: *mut *mut c_void,
) -> Status {
    let f = real!(ipc_attach);
    let s = f(handle, len, n, agents, mapped);
    if s == STATUS_SUCCESS && !mapped.is_null() {
        add(*mapped, len, "ipc", 0);
    }
    s
}

unsafe extern "C" fn hook_ipc_detach(ptr: *mut c_void) -> Status {
    let f = real!(ipc_detach);
    let s = f(ptr);
    if s == STATUS_SUCCESS {
        remove(ptr);
    }
    s
}

// ---- vmem (ROCm 6) ------------------------------------------------------------------------

fn reserved(va: *mut *mut c_void, size: usize) {
    guard(|| {
        // SAFETY: checked non-null by the callers.
        let base = unsafe { *va } as u64;
        if let Some(mut st) = state() {
            st.reservations.insert(base, size as u64);
        }
    });
}

unsafe extern "C" fn hook_vmem_reserve(
    va: *mut *mut c_void,
    size: usize,
    address: u64,
    flags: u64,
) -> Status {
    let f = real!(vmem_reserve);
    let s = f(va, size, address, flags);
    if s == STATUS_SUCCESS && !va.is_null() {
        reserved(va, size);
    }
    s
}

unsafe extern "C" fn hook_vmem_reserve_align(
    va: *mut *mut c_void,
    size: usize,
    address: u64,
    alignment: u64,
    flags: u64,
) -> Status {
    let f = real!(vmem_reserve_align);
    let s = f(va, size, address, alignment, flags);
    if s == STATUS_SUCCESS && !va.is_null() {
        reserved(va, size);
    }
    s
}

unsafe extern "C" fn hook_vmem_free(va: *mut c_void, size: usize) -> Status {
    let f = real!(vmem_free);
    let s = f(va, size);
    if s == STATUS_SUCCESS {
        guard(|| {
            if let Some(mut st) = state() {
                st.reservations.remove(&(va as u64));
                st.remove_range(va as u64, size as u64, "vmem");
            }
        });
    }
    s
}

unsafe extern "C" fn hook_vmem_handle_create(
    pool: MemoryPool,
    size: usize,
    type_: u32,
    flags: u64,
    handle: *mut VmemHandle,
) -> Status {
    let f = real!(vmem_handle_create);
    let s = f(pool, size, type_, flags, handle);
    if s == STATUS_SUCCESS && !handle.is_null() {
        let h = (*handle).handle;
        guard(|| {
            if let Some(mut st) = state() {
                st.handles.insert(h, size as u64);
            }
        });
    }
    s
}

unsafe extern "C" fn hook_vmem_handle_release(handle: VmemHandle) -> Status {
    let f = real!(vmem_handle_release);
    let s = f(handle);
    if s == STATUS_SUCCESS {
        guard(|| {
            if let Some(mut st) = state() {
                st.handles.remove(&handle.handle);
            }
        });
    }
    s
}

/// A mapping is what holds data: each mapped range is a region (a reservation with several
/// mappings gives several regions; an unmapped reservation has no contents to copy).
unsafe extern "C" fn hook_vmem_map(
    va: *mut c_void,
    size: usize,
    offset: usize,
    handle: VmemHandle,
    flags: u64,
) -> Status {
    let f = real!(vmem_map);
    let s = f(va, size, offset, handle, flags);
    if s == STATUS_SUCCESS {
        add(va, size, "vmem", handle.handle);
    }
    s
}

unsafe extern "C" fn hook_vmem_unmap(va: *mut c_void, size: usize) -> Status {
    let f = real!(vmem_unmap);
    let s = f(va, size);
    if s == STATUS_SUCCESS {
        guard(|| {
            if let Some(mut st) = state() {
                st.remove_range(va as u64, size as u64, "vmem");
            }
        });
    }
    s
}

unsafe extern "C" fn hook_vmem_set_access(
    va: *mut c_void,
    size: usize,
    desc: *const MemoryAccessDesc,
    count: usize,
) -> Status {
    let f = real!(vmem_set_access);
    let s = f(va, size, desc, count);
    if s == STATUS_SUCCESS && !desc.is_null() {
        let perms = std::slice::from_raw_parts(desc, count)
            .iter()
            .fold(0, |acc, d| acc | d.permissions);
        guard(|| {
            if let Some(mut st) = state() {
                st.grant(va as u64, size as u64, perms);
            }
        });
    }
    s
}

// ---- helpers ------------------------------------------------------------------------------

/// Record a problem in the status file's `error` (the first one is kept).
pub(crate) fn note_error(e: String) {
    if let Some(t) = tool() {
        let mut st = t.status.lock().unwrap_or_else(|e| e.into_inner());
        st.error.get_or_insert(e);
    }
}
