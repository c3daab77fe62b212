//! The HSA ABI that replay and capture use, as small `repr(C)` definitions written from
//! `hsa.h`, `hsa_ext_amd.h` and `hsa_api_trace.h` (Debian's ROCm 5.2 headers; the vmem API from
//! ROCm 6's public `hsa_ext_amd.h`). `tests/hsa_layout.rs` compiles a C++ program against
//! `/usr/include/hsa` and compares every size, offset and constant here with the headers'.

use std::ffi::{c_char, c_int, c_void};

/// `hsa_status_t`.
pub type Status = u32;
pub const STATUS_SUCCESS: Status = 0;
pub const STATUS_INFO_BREAK: Status = 1;
pub const STATUS_ERROR: Status = 0x1000;
pub const STATUS_ERROR_INVALID_ARGUMENT: Status = 0x1001;
pub const STATUS_ERROR_OUT_OF_RESOURCES: Status = 0x1008;

macro_rules! handle {
    ($(#[$m:meta])* $name:ident) => {
        $(#[$m])*
        #[repr(C)]
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
        pub struct $name {
            pub handle: u64,
        }
    };
}

handle!(
    /// `hsa_agent_t`.
    Agent
);
handle!(
    /// `hsa_signal_t`.
    Signal
);
handle!(
    /// `hsa_region_t`.
    Region
);
handle!(
    /// `hsa_amd_memory_pool_t`.
    MemoryPool
);
handle!(
    /// `hsa_executable_t`.
    Executable
);
handle!(
    /// `hsa_executable_symbol_t`.
    ExecutableSymbol
);
handle!(
    /// `hsa_code_object_reader_t`.
    CodeObjectReader
);
handle!(
    /// `hsa_code_object_t` (deprecated loader path).
    CodeObject
);
handle!(
    /// `hsa_loaded_code_object_t`.
    LoadedCodeObject
);
handle!(
    /// `hsa_isa_t`.
    Isa
);
handle!(
    /// `hsa_amd_vmem_alloc_handle_t` (ROCm 6).
    VmemHandle
);

/// `hsa_kernel_dispatch_packet_t`: 64 bytes.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KernelDispatchPacket {
    pub header: u16,
    pub setup: u16,
    pub workgroup_size_x: u16,
    pub workgroup_size_y: u16,
    pub workgroup_size_z: u16,
    pub reserved0: u16,
    pub grid_size_x: u32,
    pub grid_size_y: u32,
    pub grid_size_z: u32,
    pub private_segment_size: u32,
    pub group_segment_size: u32,
    pub kernel_object: u64,
    /// `void* kernarg_address` (large model).
    pub kernarg_address: u64,
    pub reserved2: u64,
    pub completion_signal: Signal,
}

/// `hsa_barrier_and_packet_t`: 64 bytes.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BarrierAndPacket {
    pub header: u16,
    pub reserved0: u16,
    pub reserved1: u32,
    pub dep_signal: [Signal; 5],
    pub reserved2: u64,
    pub completion_signal: Signal,
}

/// `hsa_queue_t` (large model).
#[repr(C)]
#[derive(Debug)]
pub struct Queue {
    pub type_: u32,
    pub features: u32,
    pub base_address: *mut c_void,
    pub doorbell_signal: Signal,
    pub size: u32,
    pub reserved1: u32,
    pub id: u64,
}

/// `hsa_amd_profiling_dispatch_time_t`: start and end in the system timestamp domain.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct DispatchTime {
    pub start: u64,
    pub end: u64,
}

/// `hsa_amd_memory_access_desc_t` (ROCm 6).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct MemoryAccessDesc {
    /// `hsa_access_permission_t`.
    pub permissions: u32,
    pub agent_handle: Agent,
}

/// `ApiTableVersion`: the first member of every API table. `minor_id` is the size in bytes of
/// the table the runtime filled in.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ApiTableVersion {
    pub major_id: u32,
    pub minor_id: u32,
    pub step_id: u32,
    pub reserved: u32,
}

/// `HsaApiTable`: the root the runtime passes to a tool's `OnLoad`. Only the members every
/// version has are declared (later versions append `tools_` and `pc_sampling_ext_`).
#[repr(C)]
#[derive(Debug)]
pub struct HsaApiTable {
    pub version: ApiTableVersion,
    pub core: *mut ApiTableVersion,
    pub amd_ext: *mut ApiTableVersion,
    pub finalizer_ext: *mut ApiTableVersion,
    pub image_ext: *mut ApiTableVersion,
}

// hsa_packet_type_t
pub const PACKET_TYPE_VENDOR_SPECIFIC: u16 = 0;
pub const PACKET_TYPE_INVALID: u16 = 1;
pub const PACKET_TYPE_KERNEL_DISPATCH: u16 = 2;
pub const PACKET_TYPE_BARRIER_AND: u16 = 3;
// hsa_packet_header_t (bit offsets) and widths
pub const PACKET_HEADER_TYPE: u16 = 0;
pub const PACKET_HEADER_BARRIER: u16 = 8;
pub const PACKET_HEADER_SCACQUIRE_FENCE_SCOPE: u16 = 9;
pub const PACKET_HEADER_SCRELEASE_FENCE_SCOPE: u16 = 11;
pub const PACKET_HEADER_WIDTH_TYPE: u16 = 8;
pub const PACKET_HEADER_WIDTH_FENCE_SCOPE: u16 = 2;
// hsa_fence_scope_t
pub const FENCE_SCOPE_NONE: u16 = 0;
pub const FENCE_SCOPE_AGENT: u16 = 1;
pub const FENCE_SCOPE_SYSTEM: u16 = 2;
// hsa_kernel_dispatch_packet_setup_t
pub const KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS: u16 = 0;
pub const KERNEL_DISPATCH_PACKET_SETUP_WIDTH_DIMENSIONS: u16 = 2;

// hsa_agent_info_t
pub const AGENT_INFO_NAME: u32 = 0;
pub const AGENT_INFO_WAVEFRONT_SIZE: u32 = 6;
pub const AGENT_INFO_DEVICE: u32 = 17;
pub const AGENT_INFO_ISA: u32 = 19;
// hsa_device_type_t
pub const DEVICE_TYPE_CPU: u32 = 0;
pub const DEVICE_TYPE_GPU: u32 = 1;
// hsa_system_info_t
pub const SYSTEM_INFO_VERSION_MAJOR: u32 = 0;
pub const SYSTEM_INFO_VERSION_MINOR: u32 = 1;
pub const SYSTEM_INFO_TIMESTAMP_FREQUENCY: u32 = 3;
// hsa_isa_info_t
pub const ISA_INFO_NAME: u32 = 1;
// hsa_executable_symbol_info_t
pub const EXECUTABLE_SYMBOL_INFO_TYPE: u32 = 0;
pub const EXECUTABLE_SYMBOL_INFO_NAME_LENGTH: u32 = 1;
pub const EXECUTABLE_SYMBOL_INFO_NAME: u32 = 2;
pub const EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE: u32 = 11;
pub const EXECUTABLE_SYMBOL_INFO_KERNEL_GROUP_SEGMENT_SIZE: u32 = 13;
pub const EXECUTABLE_SYMBOL_INFO_KERNEL_PRIVATE_SEGMENT_SIZE: u32 = 14;
pub const EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT: u32 = 22;
// hsa_symbol_kind_t
pub const SYMBOL_KIND_KERNEL: u32 = 1;
// hsa_signal_condition_t / hsa_wait_state_t
pub const SIGNAL_CONDITION_EQ: u32 = 0;
pub const SIGNAL_CONDITION_LT: u32 = 2;
pub const WAIT_STATE_BLOCKED: u32 = 0;
pub const WAIT_STATE_ACTIVE: u32 = 1;
// hsa_queue_type_t
pub const QUEUE_TYPE_MULTI: u32 = 0;
pub const QUEUE_TYPE_SINGLE: u32 = 1;
// hsa_profile_t / hsa_default_float_rounding_mode_t
pub const PROFILE_FULL: u32 = 1;
pub const DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT: u32 = 0;
// hsa_access_permission_t
pub const ACCESS_PERMISSION_RO: u32 = 1;
pub const ACCESS_PERMISSION_WO: u32 = 2;
pub const ACCESS_PERMISSION_RW: u32 = 3;
// hsa_amd_memory_pool_info_t
pub const AMD_MEMORY_POOL_INFO_SEGMENT: u32 = 0;
pub const AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS: u32 = 1;
pub const AMD_MEMORY_POOL_INFO_SIZE: u32 = 2;
pub const AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED: u32 = 5;
pub const AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_GRANULE: u32 = 6;
// hsa_amd_segment_t
pub const AMD_SEGMENT_GLOBAL: u32 = 0;
// hsa_amd_memory_pool_global_flag_t
pub const AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT: u32 = 1;
pub const AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED: u32 = 2;
pub const AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED: u32 = 4;
/// `hsa_amd_memory_type_t::MEMORY_TYPE_NONE` (ROCm 6).
pub const AMD_MEMORY_TYPE_NONE: u32 = 0;

// Function types, as the headers declare them.
pub type AgentCallback = unsafe extern "C" fn(Agent, *mut c_void) -> Status;
pub type PoolCallback = unsafe extern "C" fn(MemoryPool, *mut c_void) -> Status;
pub type SymbolCallback = unsafe extern "C" fn(Executable, ExecutableSymbol, *mut c_void) -> Status;
pub type QueueErrorCallback = unsafe extern "C" fn(Status, *mut Queue, *mut c_void);

pub type InitFn = unsafe extern "C" fn() -> Status;
pub type ShutDownFn = unsafe extern "C" fn() -> Status;
pub type StatusStringFn = unsafe extern "C" fn(Status, *mut *const c_char) -> Status;
pub type SystemGetInfoFn = unsafe extern "C" fn(u32, *mut c_void) -> Status;
pub type IterateAgentsFn = unsafe extern "C" fn(AgentCallback, *mut c_void) -> Status;
pub type AgentGetInfoFn = unsafe extern "C" fn(Agent, u32, *mut c_void) -> Status;
pub type IsaGetInfoAltFn = unsafe extern "C" fn(Isa, u32, *mut c_void) -> Status;
pub type QueueCreateFn = unsafe extern "C" fn(
    Agent,
    u32,
    u32,
    Option<QueueErrorCallback>,
    *mut c_void,
    u32,
    u32,
    *mut *mut Queue,
) -> Status;
pub type QueueDestroyFn = unsafe extern "C" fn(*mut Queue) -> Status;
pub type QueueLoadWriteIndexFn = unsafe extern "C" fn(*const Queue) -> u64;
pub type QueueAddWriteIndexFn = unsafe extern "C" fn(*const Queue, u64) -> u64;
pub type MemoryAllocateFn = unsafe extern "C" fn(Region, usize, *mut *mut c_void) -> Status;
pub type MemoryFreeFn = unsafe extern "C" fn(*mut c_void) -> Status;
pub type MemoryCopyFn = unsafe extern "C" fn(*mut c_void, *const c_void, usize) -> Status;
pub type SignalCreateFn = unsafe extern "C" fn(i64, u32, *const Agent, *mut Signal) -> Status;
pub type SignalDestroyFn = unsafe extern "C" fn(Signal) -> Status;
pub type SignalLoadFn = unsafe extern "C" fn(Signal) -> i64;
pub type SignalStoreFn = unsafe extern "C" fn(Signal, i64);
pub type SignalWaitFn = unsafe extern "C" fn(Signal, u32, i64, u64, u32) -> i64;
pub type SymbolGetInfoFn = unsafe extern "C" fn(ExecutableSymbol, u32, *mut c_void) -> Status;
pub type IterateSymbolsFn = unsafe extern "C" fn(Executable, SymbolCallback, *mut c_void) -> Status;
pub type ReaderCreateFromMemoryFn =
    unsafe extern "C" fn(*const c_void, usize, *mut CodeObjectReader) -> Status;
pub type ReaderCreateFromFileFn = unsafe extern "C" fn(c_int, *mut CodeObjectReader) -> Status;
pub type ReaderDestroyFn = unsafe extern "C" fn(CodeObjectReader) -> Status;
pub type ExecutableCreateAltFn =
    unsafe extern "C" fn(u32, u32, *const c_char, *mut Executable) -> Status;
pub type ExecutableDestroyFn = unsafe extern "C" fn(Executable) -> Status;
pub type LoadAgentCodeObjectFn = unsafe extern "C" fn(
    Executable,
    Agent,
    CodeObjectReader,
    *const c_char,
    *mut LoadedCodeObject,
) -> Status;
pub type LoadProgramCodeObjectFn = unsafe extern "C" fn(
    Executable,
    CodeObjectReader,
    *const c_char,
    *mut LoadedCodeObject,
) -> Status;
pub type CodeObjectDeserializeFn =
    unsafe extern "C" fn(*mut c_void, usize, *const c_char, *mut CodeObject) -> Status;
pub type LoadCodeObjectFn =
    unsafe extern "C" fn(Executable, Agent, CodeObject, *const c_char) -> Status;
pub type ExecutableFreezeFn = unsafe extern "C" fn(Executable, *const c_char) -> Status;
pub type GetSymbolByNameFn =
    unsafe extern "C" fn(Executable, *const c_char, *const Agent, *mut ExecutableSymbol) -> Status;

pub type AgentIteratePoolsFn = unsafe extern "C" fn(Agent, PoolCallback, *mut c_void) -> Status;
pub type PoolGetInfoFn = unsafe extern "C" fn(MemoryPool, u32, *mut c_void) -> Status;
pub type PoolAllocateFn = unsafe extern "C" fn(MemoryPool, usize, u32, *mut *mut c_void) -> Status;
pub type PoolFreeFn = unsafe extern "C" fn(*mut c_void) -> Status;
pub type AgentsAllowAccessFn =
    unsafe extern "C" fn(u32, *const Agent, *const u32, *const c_void) -> Status;
pub type MemoryLockFn =
    unsafe extern "C" fn(*mut c_void, usize, *mut Agent, c_int, *mut *mut c_void) -> Status;
pub type MemoryLockToPoolFn = unsafe extern "C" fn(
    *mut c_void,
    usize,
    *mut Agent,
    c_int,
    MemoryPool,
    u32,
    *mut *mut c_void,
) -> Status;
pub type MemoryUnlockFn = unsafe extern "C" fn(*mut c_void) -> Status;
pub type IpcMemoryAttachFn =
    unsafe extern "C" fn(*const c_void, usize, u32, *const Agent, *mut *mut c_void) -> Status;
pub type InteropMapBufferFn = unsafe extern "C" fn(
    u32,
    *mut Agent,
    c_int,
    u32,
    *mut usize,
    *mut *mut c_void,
    *mut usize,
    *mut *const c_void,
) -> Status;
pub type InteropUnmapBufferFn = unsafe extern "C" fn(*mut c_void) -> Status;
pub type IpcMemoryDetachFn = unsafe extern "C" fn(*mut c_void) -> Status;
pub type ProfilingSetEnabledFn = unsafe extern "C" fn(*mut Queue, c_int) -> Status;
pub type ProfilingDispatchTimeFn = unsafe extern "C" fn(Agent, Signal, *mut DispatchTime) -> Status;
/// `hsa_amd_queue_intercept_packet_writer`.
pub type PacketWriter = unsafe extern "C" fn(*const c_void, u64);
/// `hsa_amd_queue_intercept_handler`.
pub type InterceptHandler =
    unsafe extern "C" fn(*const c_void, u64, u64, *mut c_void, PacketWriter);
pub type QueueInterceptCreateFn = QueueCreateFn;
pub type QueueInterceptRegisterFn =
    unsafe extern "C" fn(*mut Queue, InterceptHandler, *mut c_void) -> Status;
pub type VmemAddressReserveFn = unsafe extern "C" fn(*mut *mut c_void, usize, u64, u64) -> Status;
pub type VmemAddressReserveAlignFn =
    unsafe extern "C" fn(*mut *mut c_void, usize, u64, u64, u64) -> Status;
pub type VmemAddressFreeFn = unsafe extern "C" fn(*mut c_void, usize) -> Status;
pub type VmemHandleCreateFn =
    unsafe extern "C" fn(MemoryPool, usize, u32, u64, *mut VmemHandle) -> Status;
pub type VmemHandleReleaseFn = unsafe extern "C" fn(VmemHandle) -> Status;
pub type VmemMapFn = unsafe extern "C" fn(*mut c_void, usize, usize, VmemHandle, u64) -> Status;
pub type VmemUnmapFn = unsafe extern "C" fn(*mut c_void, usize) -> Status;
pub type VmemSetAccessFn =
    unsafe extern "C" fn(*mut c_void, usize, *const MemoryAccessDesc, usize) -> Status;

/// The name of an `hsa_status_t` the headers define, for messages that must not depend on a
/// runtime (`hsa_status_string` needs one).
pub fn status_name(s: Status) -> &'static str {
    match s {
        0 => "HSA_STATUS_SUCCESS",
        1 => "HSA_STATUS_INFO_BREAK",
        0x1000 => "HSA_STATUS_ERROR",
        0x1001 => "HSA_STATUS_ERROR_INVALID_ARGUMENT",
        0x1002 => "HSA_STATUS_ERROR_INVALID_QUEUE_CREATION",
        0x1003 => "HSA_STATUS_ERROR_INVALID_ALLOCATION",
        0x1004 => "HSA_STATUS_ERROR_INVALID_AGENT",
        0x1005 => "HSA_STATUS_ERROR_INVALID_REGION",
        0x1006 => "HSA_STATUS_ERROR_INVALID_SIGNAL",
        0x1007 => "HSA_STATUS_ERROR_INVALID_QUEUE",
        0x1008 => "HSA_STATUS_ERROR_OUT_OF_RESOURCES",
        0x1009 => "HSA_STATUS_ERROR_INVALID_PACKET_FORMAT",
        0x100A => "HSA_STATUS_ERROR_RESOURCE_FREE",
        0x100B => "HSA_STATUS_ERROR_NOT_INITIALIZED",
        0x100C => "HSA_STATUS_ERROR_REFCOUNT_OVERFLOW",
        0x100D => "HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS",
        0x100E => "HSA_STATUS_ERROR_INVALID_INDEX",
        0x100F => "HSA_STATUS_ERROR_INVALID_ISA",
        0x1010 => "HSA_STATUS_ERROR_INVALID_CODE_OBJECT",
        0x1011 => "HSA_STATUS_ERROR_INVALID_EXECUTABLE",
        0x1012 => "HSA_STATUS_ERROR_FROZEN_EXECUTABLE",
        0x1013 => "HSA_STATUS_ERROR_INVALID_SYMBOL_NAME",
        0x1014 => "HSA_STATUS_ERROR_VARIABLE_ALREADY_DEFINED",
        0x1015 => "HSA_STATUS_ERROR_VARIABLE_UNDEFINED",
        0x1016 => "HSA_STATUS_ERROR_EXCEPTION",
        0x1017 => "HSA_STATUS_ERROR_INVALID_CODE_SYMBOL",
        0x1018 => "HSA_STATUS_ERROR_INVALID_EXECUTABLE_SYMBOL",
        0x1019 => "HSA_STATUS_ERROR_INVALID_FILE",
        0x101A => "HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER",
        0x101B => "HSA_STATUS_ERROR_INVALID_CACHE",
        0x101C => "HSA_STATUS_ERROR_INVALID_WAVEFRONT",
        0x101D => "HSA_STATUS_ERROR_INVALID_SIGNAL_GROUP",
        0x101E => "HSA_STATUS_ERROR_INVALID_RUNTIME_STATE",
        0x101F => "HSA_STATUS_ERROR_FATAL",
        _ => "an unknown HSA status",
    }
}
