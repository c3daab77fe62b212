//! A simulated HSA runtime for the capture tool: API tables in the byte layout the headers
//! give (legacy ROCm 5.2 or current ROCm 6.2 `AmdExtTable`), filled with mock functions over
//! host memory, a "hardware queue" that runs packets only when someone waits on a signal, and
//! kernel objects named after the real code objects loaded into it. The tests load the built
//! `libhip_unroll_capture.so`, call its `OnLoad` with these tables and drive it as an
//! application would.
#![allow(dead_code, clippy::missing_safety_doc)]

#[path = "../../../tests/common/mod.rs"]
pub mod objects;

use replay::ffi::*;
use replay::table::{self, Amd, AmdLayout, Core};
use std::alloc::Layout;
use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_void};
use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard};

pub const AGENT: Agent = Agent { handle: 0xa9e7 };
/// Needs escaping in JSON: quotes and a backslash.
pub const AGENT_NAME: &str = "gfx90a \"mock\" \\agent";
pub const ISA_NAME: &str = "amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-";

#[derive(Clone)]
pub struct Sym {
    pub name: String,
    pub kernel_object: u64,
    pub kernarg_size: u32,
}

#[derive(Default)]
pub struct Mock {
    pub host: HashMap<u64, Layout>,
    /// hsa_memory_copy from inside this range fails.
    pub fail_copy: Option<(u64, u64)>,
    /// The queue never completes anything (drain timeout).
    pub stuck: bool,
    pub signals: HashMap<u64, i64>,
    pub next_handle: u64,
    pub handler: Option<(usize, usize)>,
    pub intercept_queues: usize,
    pub plain_queue_creates: usize,
    /// Every packet written to the hardware queue, in order.
    pub hw: Vec<[u8; 64]>,
    pub pending: usize,
    pub readers: HashMap<u64, Vec<u8>>,
    pub executables: HashMap<u64, Vec<u64>>,
    pub symbols: HashMap<u64, Sym>,
    /// Kernel object -> (byte written over kernarg pointer 0 for kernarg u64 1 bytes).
    pub fill_kernels: Vec<u64>,
    pub waits: usize,
}

static MOCK: Mutex<Option<Mock>> = Mutex::new(None);

pub fn mock() -> MutexGuard<'static, Option<Mock>> {
    MOCK.lock().unwrap_or_else(|e| e.into_inner())
}

pub fn with<R>(f: impl FnOnce(&mut Mock) -> R) -> R {
    let mut g = mock();
    f(g.get_or_insert_with(Mock::default))
}

fn next(m: &mut Mock) -> u64 {
    m.next_handle += 1;
    0x1000 + m.next_handle
}

/// Zeroed host memory standing in for device memory.
pub fn host_alloc(size: usize) -> *mut u8 {
    let layout = Layout::from_size_align(size.max(1), 4096).unwrap();
    // SAFETY: non-zero size.
    let p = unsafe { std::alloc::alloc_zeroed(layout) };
    with(|m| m.host.insert(p as u64, layout));
    p
}

fn host_free(p: *mut c_void) -> Status {
    match with(|m| m.host.remove(&(p as u64))) {
        // SAFETY: allocated by host_alloc with this layout.
        Some(l) => unsafe {
            std::alloc::dealloc(p as *mut u8, l);
            STATUS_SUCCESS
        },
        None => STATUS_ERROR_INVALID_ARGUMENT,
    }
}

// ---- the mock functions ---------------------------------------------------------------------

pub unsafe extern "C" fn m_system_get_info(attr: u32, value: *mut c_void) -> Status {
    if attr == SYSTEM_INFO_TIMESTAMP_FREQUENCY {
        *(value as *mut u64) = 1_000_000_000;
        return STATUS_SUCCESS;
    }
    STATUS_ERROR_INVALID_ARGUMENT
}

pub unsafe extern "C" fn m_agent_get_info(agent: Agent, attr: u32, value: *mut c_void) -> Status {
    assert_eq!(
        agent, AGENT,
        "the tool asked about an agent the application never used"
    );
    match attr {
        AGENT_INFO_NAME => {
            let b = AGENT_NAME.as_bytes();
            std::ptr::copy_nonoverlapping(b.as_ptr(), value as *mut u8, b.len());
            *(value as *mut u8).add(b.len()) = 0;
        }
        AGENT_INFO_WAVEFRONT_SIZE => *(value as *mut u32) = 64,
        AGENT_INFO_ISA => *(value as *mut Isa) = Isa { handle: 7 },
        AGENT_INFO_DEVICE => *(value as *mut u32) = DEVICE_TYPE_GPU,
        _ => return STATUS_ERROR_INVALID_ARGUMENT,
    }
    STATUS_SUCCESS
}

pub unsafe extern "C" fn m_isa_get_info_alt(isa: Isa, attr: u32, value: *mut c_void) -> Status {
    assert_eq!(isa.handle, 7);
    match attr {
        0 => *(value as *mut u32) = ISA_NAME.len() as u32 + 1,
        ISA_INFO_NAME => {
            std::ptr::copy_nonoverlapping(ISA_NAME.as_ptr(), value as *mut u8, ISA_NAME.len());
            *(value as *mut u8).add(ISA_NAME.len()) = 0;
        }
        _ => return STATUS_ERROR_INVALID_ARGUMENT,
    }
    STATUS_SUCCESS
}

pub unsafe extern "C" fn m_status_string(s: Status, out: *mut *const c_char) -> Status {
    *out = if s == 0x1003 {
        c"HSA_STATUS_ERROR_INVALID_ALLOCATION: The requested allocation is not valid. (mock)"
            .as_ptr()
    } else {
        c"HSA_STATUS_ERROR: mock".as_ptr()
    };
    STATUS_SUCCESS
}

pub unsafe extern "C" fn m_queue_create(
    _agent: Agent,
    _size: u32,
    _t: u32,
    _cb: Option<QueueErrorCallback>,
    _data: *mut c_void,
    _p: u32,
    _g: u32,
    queue: *mut *mut Queue,
) -> Status {
    with(|m| m.plain_queue_creates += 1);
    *queue = Box::into_raw(Box::new(Queue {
        type_: 0,
        features: 1,
        base_address: std::ptr::null_mut(),
        doorbell_signal: Signal::default(),
        size: 64,
        reserved1: 0,
        id: 1,
    }));
    STATUS_SUCCESS
}

pub unsafe extern "C" fn m_intercept_create(
    agent: Agent,
    _size: u32,
    _t: u32,
    _cb: Option<QueueErrorCallback>,
    _data: *mut c_void,
    _p: u32,
    _g: u32,
    queue: *mut *mut Queue,
) -> Status {
    assert_eq!(agent, AGENT);
    with(|m| m.intercept_queues += 1);
    *queue = Box::into_raw(Box::new(Queue {
        type_: 0,
        features: 1,
        base_address: std::ptr::null_mut(),
        doorbell_signal: Signal::default(),
        size: 64,
        reserved1: 0,
        id: 2,
    }));
    STATUS_SUCCESS
}

pub unsafe extern "C" fn m_intercept_register(
    _q: *mut Queue,
    handler: InterceptHandler,
    data: *mut c_void,
) -> Status {
    with(|m| m.handler = Some((handler as usize, data as usize)));
    STATUS_SUCCESS
}

/// The intercept queue's writer: packets go to the "hardware" and wait there.
pub unsafe extern "C" fn m_writer(pkts: *const c_void, count: u64) {
    with(|m| {
        for i in 0..count as usize {
            let mut p = [0u8; 64];
            std::ptr::copy_nonoverlapping((pkts as *const u8).add(i * 64), p.as_mut_ptr(), 64);
            m.hw.push(p);
        }
    });
}

pub unsafe extern "C" fn m_memory_copy(dst: *mut c_void, src: *const c_void, n: usize) -> Status {
    let fail = with(|m| m.fail_copy);
    if let Some((lo, hi)) = fail {
        if (src as u64) >= lo && (src as u64) < hi {
            return 0x1003;
        }
    }
    std::ptr::copy_nonoverlapping(src as *const u8, dst as *mut u8, n);
    STATUS_SUCCESS
}

pub unsafe extern "C" fn m_signal_create(
    init: i64,
    _n: u32,
    _c: *const Agent,
    sig: *mut Signal,
) -> Status {
    with(|m| {
        let h = next(m);
        m.signals.insert(h, init);
        *sig = Signal { handle: h };
    });
    STATUS_SUCCESS
}

pub unsafe extern "C" fn m_signal_destroy(sig: Signal) -> Status {
    with(|m| m.signals.remove(&sig.handle));
    STATUS_SUCCESS
}

/// Run every packet waiting on the "hardware", in order: a dispatch of a fill kernel writes its
/// buffer; completion signals are decremented. Only waiting makes the queue progress.
fn execute(m: &mut Mock) {
    if m.stuck {
        return;
    }
    while m.pending < m.hw.len() {
        let p = m.hw[m.pending];
        m.pending += 1;
        let header = u16::from_le_bytes([p[0], p[1]]);
        // SAFETY: 64 bytes read as the packet type the header names.
        let signal = match replay::aql::packet_type(header) {
            PACKET_TYPE_KERNEL_DISPATCH => {
                let d: KernelDispatchPacket =
                    unsafe { std::ptr::read_unaligned(p.as_ptr().cast()) };
                if m.fill_kernels.contains(&d.kernel_object) {
                    // fill(unsigned char* p, unsigned long n, unsigned char v)
                    unsafe {
                        let ka = d.kernarg_address as *const u8;
                        let dst = std::ptr::read_unaligned(ka as *const u64) as *mut u8;
                        let n = std::ptr::read_unaligned(ka.add(8) as *const u64) as usize;
                        let v = *ka.add(16);
                        std::ptr::write_bytes(dst, v, n);
                    }
                }
                d.completion_signal
            }
            PACKET_TYPE_BARRIER_AND => {
                let b: BarrierAndPacket = unsafe { std::ptr::read_unaligned(p.as_ptr().cast()) };
                b.completion_signal
            }
            _ => Signal::default(),
        };
        if let Some(v) = m.signals.get_mut(&signal.handle) {
            *v -= 1;
        }
    }
}

pub unsafe extern "C" fn m_signal_wait(
    sig: Signal,
    cond: u32,
    value: i64,
    _hint: u64,
    _state: u32,
) -> i64 {
    assert_eq!(
        (cond, value),
        (SIGNAL_CONDITION_LT, 1),
        "the tool waits for completion"
    );
    with(|m| {
        m.waits += 1;
        execute(m);
        m.signals[&sig.handle]
    })
}

pub unsafe extern "C" fn m_pool_allocate(
    _pool: MemoryPool,
    size: usize,
    _f: u32,
    ptr: *mut *mut c_void,
) -> Status {
    *ptr = host_alloc(size).cast();
    STATUS_SUCCESS
}

pub unsafe extern "C" fn m_pool_free(ptr: *mut c_void) -> Status {
    host_free(ptr)
}

pub unsafe extern "C" fn m_memory_allocate(
    _r: Region,
    size: usize,
    ptr: *mut *mut c_void,
) -> Status {
    *ptr = host_alloc(size).cast();
    STATUS_SUCCESS
}

pub unsafe extern "C" fn m_memory_free(ptr: *mut c_void) -> Status {
    host_free(ptr)
}

pub unsafe extern "C" fn m_memory_lock(
    host: *mut c_void,
    _size: usize,
    _a: *mut Agent,
    _n: c_int,
    agent_ptr: *mut *mut c_void,
) -> Status {
    *agent_ptr = host;
    STATUS_SUCCESS
}

pub unsafe extern "C" fn m_memory_unlock(_host: *mut c_void) -> Status {
    STATUS_SUCCESS
}

pub unsafe extern "C" fn m_vmem_reserve(
    va: *mut *mut c_void,
    size: usize,
    _addr: u64,
    _f: u64,
) -> Status {
    *va = host_alloc(size).cast();
    STATUS_SUCCESS
}

pub unsafe extern "C" fn m_vmem_free(va: *mut c_void, _size: usize) -> Status {
    host_free(va)
}

pub unsafe extern "C" fn m_vmem_handle_create(
    _p: MemoryPool,
    _size: usize,
    _t: u32,
    _f: u64,
    h: *mut VmemHandle,
) -> Status {
    *h = VmemHandle { handle: with(next) };
    STATUS_SUCCESS
}

pub unsafe extern "C" fn m_vmem_handle_release(_h: VmemHandle) -> Status {
    STATUS_SUCCESS
}

pub unsafe extern "C" fn m_vmem_map(
    _va: *mut c_void,
    _s: usize,
    _o: usize,
    _h: VmemHandle,
    _f: u64,
) -> Status {
    STATUS_SUCCESS
}

pub unsafe extern "C" fn m_vmem_unmap(_va: *mut c_void, _s: usize) -> Status {
    STATUS_SUCCESS
}

pub unsafe extern "C" fn m_vmem_set_access(
    _va: *mut c_void,
    _s: usize,
    _d: *const MemoryAccessDesc,
    _n: usize,
) -> Status {
    STATUS_SUCCESS
}

pub unsafe extern "C" fn m_reader_from_memory(
    p: *const c_void,
    n: usize,
    r: *mut CodeObjectReader,
) -> Status {
    let bytes = std::slice::from_raw_parts(p as *const u8, n).to_vec();
    with(|m| {
        let h = next(m);
        m.readers.insert(h, bytes);
        *r = CodeObjectReader { handle: h };
    });
    STATUS_SUCCESS
}

pub unsafe extern "C" fn m_reader_from_file(fd: c_int, r: *mut CodeObjectReader) -> Status {
    let Ok(bytes) = std::fs::read(format!("/proc/self/fd/{fd}")) else {
        return 0x1019;
    };
    with(|m| {
        let h = next(m);
        m.readers.insert(h, bytes);
        *r = CodeObjectReader { handle: h };
    });
    STATUS_SUCCESS
}

/// Loading defines one kernel symbol (`name.kd`) per kernel of the code object's metadata.
pub unsafe extern "C" fn m_load_agent(
    exe: Executable,
    agent: Agent,
    reader: CodeObjectReader,
    _o: *const c_char,
    _l: *mut LoadedCodeObject,
) -> Status {
    assert_eq!(agent, AGENT);
    with(|m| {
        let bytes = m.readers[&reader.handle].clone();
        let cos = codeobj::read(&bytes, "mock").unwrap();
        for k in &cos[0].kernels {
            let h = next(m);
            let ko = 0x7f00_0000_0000 + next(m) * 0x100;
            m.symbols.insert(
                h,
                Sym {
                    name: format!("{}.kd", k.meta.name),
                    kernel_object: ko,
                    kernarg_size: k.meta.kernarg_segment_size,
                },
            );
            m.executables.entry(exe.handle).or_default().push(h);
        }
    });
    STATUS_SUCCESS
}

pub unsafe extern "C" fn m_iterate_symbols(
    exe: Executable,
    cb: SymbolCallback,
    data: *mut c_void,
) -> Status {
    let syms = with(|m| m.executables.get(&exe.handle).cloned().unwrap_or_default());
    for s in syms {
        if cb(exe, ExecutableSymbol { handle: s }, data) != STATUS_SUCCESS {
            break;
        }
    }
    STATUS_SUCCESS
}

pub unsafe extern "C" fn m_symbol_get_info(
    sym: ExecutableSymbol,
    attr: u32,
    value: *mut c_void,
) -> Status {
    let Some(s) = with(|m| m.symbols.get(&sym.handle).cloned()) else {
        return 0x1018;
    };
    match attr {
        EXECUTABLE_SYMBOL_INFO_TYPE => *(value as *mut u32) = SYMBOL_KIND_KERNEL,
        EXECUTABLE_SYMBOL_INFO_NAME_LENGTH => *(value as *mut u32) = s.name.len() as u32,
        // Like the runtime: the name's bytes, no terminating NUL.
        EXECUTABLE_SYMBOL_INFO_NAME => {
            std::ptr::copy_nonoverlapping(s.name.as_ptr(), value as *mut u8, s.name.len())
        }
        EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT => *(value as *mut u64) = s.kernel_object,
        EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE => *(value as *mut u32) = s.kernarg_size,
        _ => return STATUS_ERROR_INVALID_ARGUMENT,
    }
    STATUS_SUCCESS
}

// ---- the tables -----------------------------------------------------------------------------

/// API tables in the runtime's byte layout (8-byte slots after a 16-byte version).
pub struct Tables {
    pub root: Box<HsaApiTable>,
    pub core: Box<[u64]>,
    pub amd: Box<[u64]>,
}

fn version(major: u32, size: u32) -> [u64; 2] {
    [major as u64 | (size as u64) << 32, 0]
}

impl Tables {
    /// `layout` decides where the AMD entries go; `amd_size` is the size the runtime declares.
    pub fn new(core_major: u32, amd_major: u32, amd_size: u32, layout: AmdLayout) -> Tables {
        let mut core = vec![0u64; 1016 / 8].into_boxed_slice();
        core[..2].copy_from_slice(&version(core_major, 1016));
        let mut amd = vec![0u64; amd_size as usize / 8].into_boxed_slice();
        amd[..2].copy_from_slice(&version(amd_major, amd_size));
        let cv = ApiTableVersion {
            major_id: core_major,
            minor_id: 1016,
            step_id: 0,
            reserved: 0,
        };
        let mut set_core = |e: Core, f: usize| {
            let o = table::core_offset(&cv, e).unwrap();
            core[o / 8] = f as u64;
        };
        set_core(Core::SystemGetInfo, m_system_get_info as *const () as usize);
        set_core(Core::AgentGetInfo, m_agent_get_info as *const () as usize);
        set_core(Core::QueueCreate, m_queue_create as *const () as usize);
        set_core(
            Core::MemoryAllocate,
            m_memory_allocate as *const () as usize,
        );
        set_core(Core::MemoryFree, m_memory_free as *const () as usize);
        set_core(Core::MemoryCopy, m_memory_copy as *const () as usize);
        set_core(Core::SignalCreate, m_signal_create as *const () as usize);
        set_core(Core::SignalDestroy, m_signal_destroy as *const () as usize);
        set_core(
            Core::SignalWaitScacquire,
            m_signal_wait as *const () as usize,
        );
        set_core(
            Core::ExecutableSymbolGetInfo,
            m_symbol_get_info as *const () as usize,
        );
        set_core(
            Core::ExecutableIterateSymbols,
            m_iterate_symbols as *const () as usize,
        );
        set_core(Core::StatusString, m_status_string as *const () as usize);
        set_core(
            Core::IsaGetInfoAlt,
            m_isa_get_info_alt as *const () as usize,
        );
        set_core(
            Core::CodeObjectReaderCreateFromFile,
            m_reader_from_file as *const () as usize,
        );
        set_core(
            Core::CodeObjectReaderCreateFromMemory,
            m_reader_from_memory as *const () as usize,
        );
        set_core(
            Core::ExecutableLoadAgentCodeObject,
            m_load_agent as *const () as usize,
        );
        let av = ApiTableVersion {
            major_id: amd_major,
            minor_id: amd_size,
            step_id: 0,
            reserved: 0,
        };
        let mut set_amd = |e: Amd, f: usize| {
            if let Some(o) = table::amd_offset(layout, &av, e) {
                amd[o / 8] = f as u64;
            }
        };
        set_amd(
            Amd::MemoryPoolAllocate,
            m_pool_allocate as *const () as usize,
        );
        set_amd(Amd::MemoryPoolFree, m_pool_free as *const () as usize);
        set_amd(Amd::MemoryLock, m_memory_lock as *const () as usize);
        set_amd(Amd::MemoryUnlock, m_memory_unlock as *const () as usize);
        set_amd(
            Amd::QueueInterceptCreate,
            m_intercept_create as *const () as usize,
        );
        set_amd(
            Amd::QueueInterceptRegister,
            m_intercept_register as *const () as usize,
        );
        set_amd(
            Amd::VmemAddressReserve,
            m_vmem_reserve as *const () as usize,
        );
        set_amd(Amd::VmemAddressFree, m_vmem_free as *const () as usize);
        set_amd(
            Amd::VmemHandleCreate,
            m_vmem_handle_create as *const () as usize,
        );
        set_amd(
            Amd::VmemHandleRelease,
            m_vmem_handle_release as *const () as usize,
        );
        set_amd(Amd::VmemMap, m_vmem_map as *const () as usize);
        set_amd(Amd::VmemUnmap, m_vmem_unmap as *const () as usize);
        set_amd(Amd::VmemSetAccess, m_vmem_set_access as *const () as usize);
        let mut t = Tables {
            root: Box::new(HsaApiTable {
                version: ApiTableVersion {
                    major_id: 1,
                    minor_id: std::mem::size_of::<HsaApiTable>() as u32,
                    step_id: 0,
                    reserved: 0,
                },
                core: std::ptr::null_mut(),
                amd_ext: std::ptr::null_mut(),
                finalizer_ext: std::ptr::null_mut(),
                image_ext: std::ptr::null_mut(),
            }),
            core,
            amd,
        };
        t.root.core = t.core.as_mut_ptr().cast();
        t.root.amd_ext = t.amd.as_mut_ptr().cast();
        t
    }

    /// The function now in a core slot (the tool's hook, or the mock if not hooked).
    pub unsafe fn core_fn<T: Copy>(&self, e: Core) -> T {
        let o = table::core_offset(&(*self.root.core), e).unwrap();
        std::mem::transmute_copy(&self.core[o / 8])
    }

    pub unsafe fn amd_fn<T: Copy>(&self, layout: AmdLayout, e: Amd) -> T {
        let o = table::amd_offset(layout, &(*self.root.amd_ext), e).unwrap();
        std::mem::transmute_copy(&self.amd[o / 8])
    }

    pub fn core_slot(&self, e: Core) -> u64 {
        let o = table::core_offset(unsafe { &*self.root.core }, e).unwrap();
        self.core[o / 8]
    }

    pub fn amd_bytes(&self) -> Vec<u8> {
        self.amd.iter().flat_map(|w| w.to_le_bytes()).collect()
    }
}

// ---- the tool -------------------------------------------------------------------------------

/// The built capture library: beside the test binary's directory (cargo builds the cdylib
/// into target/<profile>/ and target/<profile>/deps/).
pub fn tool_path() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let deps = exe.parent().unwrap();
    for p in [
        deps.join("libhip_unroll_capture.so"),
        deps.join("../libhip_unroll_capture.so"),
    ] {
        if p.is_file() {
            return p;
        }
    }
    panic!(
        "libhip_unroll_capture.so not built beside {}",
        deps.display()
    );
}

pub type OnLoadFn = unsafe extern "C" fn(*mut HsaApiTable, u64, u64, *const *const c_char) -> bool;

/// Load the tool and call its OnLoad with `tables` (the library stays loaded).
pub fn on_load(tables: &mut Tables) -> bool {
    // SAFETY: loading the tool runs no initialisers of note; OnLoad has the runtime's signature.
    unsafe {
        let lib = libloading::Library::new(tool_path()).unwrap();
        let f: libloading::Symbol<OnLoadFn> = lib.get(b"OnLoad\0").unwrap();
        let ok = f(&mut *tables.root, 0x0005_0002, 0, std::ptr::null());
        std::mem::forget(lib);
        ok
    }
}

/// Submit packets the way the runtime's intercept queue does: through the registered handler.
pub fn submit(pkts: &[KernelDispatchPacket]) {
    let (h, data) = with(|m| m.handler.expect("no intercept handler registered"));
    // SAFETY: the handler the tool registered, with the runtime's signature.
    unsafe {
        let h: InterceptHandler = std::mem::transmute(h);
        h(
            pkts.as_ptr().cast(),
            pkts.len() as u64,
            0,
            data as *mut c_void,
            m_writer,
        );
    }
}

/// A kernel dispatch packet as HIP would build it.
pub fn dispatch(
    kernel_object: u64,
    kernarg: u64,
    grid: u32,
    block: u16,
    group: u32,
) -> KernelDispatchPacket {
    let g = replay::aql::Geometry::new([grid, 1, 1], [block, 1, 1], None);
    let mut p =
        replay::aql::dispatch_packet(&g, kernel_object, kernarg, group, 0, Signal::default());
    p.header = (PACKET_TYPE_KERNEL_DISPATCH << PACKET_HEADER_TYPE)
        | (FENCE_SCOPE_SYSTEM << PACKET_HEADER_SCACQUIRE_FENCE_SCOPE)
        | (FENCE_SCOPE_SYSTEM << PACKET_HEADER_SCRELEASE_FENCE_SCOPE);
    p
}

/// The packet types on the "hardware" queue, in order (`D` dispatch, `B` barrier).
pub fn hw_types() -> String {
    with(|m| {
        m.hw.iter()
            .map(
                |p| match replay::aql::packet_type(u16::from_le_bytes([p[0], p[1]])) {
                    PACKET_TYPE_KERNEL_DISPATCH => 'D',
                    PACKET_TYPE_BARRIER_AND => 'B',
                    _ => '?',
                },
            )
            .collect()
    })
}

/// Look up the kernel objects of an executable as HIP does: `hsa_executable_symbol_get_info`
/// (through the tool's hook) for each symbol.
pub fn kernel_objects(t: &Tables, exe: Executable) -> HashMap<String, u64> {
    let syms = with(|m| m.executables.get(&exe.handle).cloned().unwrap_or_default());
    // SAFETY: the hooked entry has SymbolGetInfoFn's type.
    let get: SymbolGetInfoFn = unsafe { t.core_fn(Core::ExecutableSymbolGetInfo) };
    let mut out = HashMap::new();
    for s in syms {
        let sym = ExecutableSymbol { handle: s };
        let mut ko = 0u64;
        let name = with(|m| m.symbols[&s].name.clone());
        // SAFETY: KERNEL_OBJECT is a u64.
        assert_eq!(
            unsafe {
                get(
                    sym,
                    EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT,
                    &mut ko as *mut u64 as *mut c_void,
                )
            },
            STATUS_SUCCESS
        );
        out.insert(replay::hsaco::kernel_name(&name).to_string(), ko);
    }
    out
}

pub fn set_env(
    out: &std::path::Path,
    status: &std::path::Path,
    kernel: &str,
    dispatch: u64,
    timeout: &str,
) {
    use replay::launch::env;
    std::env::set_var(env::KERNEL, kernel);
    std::env::set_var(env::DISPATCH, dispatch.to_string());
    std::env::set_var(env::OUT, out);
    std::env::set_var(env::STATUS, status);
    std::env::set_var(env::TIMEOUT, timeout);
}

pub fn read_status(p: &std::path::Path) -> replay::launch::CaptureStatus {
    serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
}
