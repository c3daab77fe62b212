//! The HSA runtime, loaded at run time with libloading (`libhsa-runtime64.so.1`, or the file
//! `$HIP_UNROLL_HSA_RUNTIME` names): every function replay calls is resolved by name when the
//! library is opened; the vmem API (ROCm 6.0+) is resolved separately, because older runtimes
//! (Debian's 5.2) lack it and only the device steps need it.

use crate::ffi::*;
use std::ffi::CStr;
use std::path::{Path, PathBuf};

/// The library replay opens unless `$HIP_UNROLL_HSA_RUNTIME` names another.
pub const DEFAULT_LIBRARY: &str = "libhsa-runtime64.so.1";
/// Overrides [`DEFAULT_LIBRARY`] (a path or a soname).
pub const LIBRARY_ENV: &str = "HIP_UNROLL_HSA_RUNTIME";

#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    #[error("the HSA runtime library {library} cannot be loaded ({error}); install ROCm (libhsa-runtime64) or set {LIBRARY_ENV}")]
    Load { library: String, error: String },
    #[error("the HSA runtime library {library} lacks {missing} ({why})")]
    Missing {
        library: String,
        missing: String,
        why: &'static str,
    },
}

/// The library to open: `$HIP_UNROLL_HSA_RUNTIME` or [`DEFAULT_LIBRARY`].
pub fn library_path(explicit: Option<&Path>) -> PathBuf {
    explicit
        .map(Path::to_path_buf)
        .or_else(|| std::env::var_os(LIBRARY_ENV).map(PathBuf::from))
        .unwrap_or_else(|| PathBuf::from(DEFAULT_LIBRARY))
}

/// The vmem API (ROCm 6.0+).
#[derive(Debug, Clone, Copy)]
pub struct Vmem {
    pub address_reserve: VmemAddressReserveFn,
    pub address_free: VmemAddressFreeFn,
    pub handle_create: VmemHandleCreateFn,
    pub handle_release: VmemHandleReleaseFn,
    pub map: VmemMapFn,
    pub unmap: VmemUnmapFn,
    pub set_access: VmemSetAccessFn,
}

/// The functions replay calls, resolved from one opened library.
#[derive(Debug)]
pub struct Hsa {
    pub library: String,
    pub init: InitFn,
    pub shut_down: ShutDownFn,
    pub status_string: StatusStringFn,
    pub system_get_info: SystemGetInfoFn,
    pub iterate_agents: IterateAgentsFn,
    pub agent_get_info: AgentGetInfoFn,
    pub queue_create: QueueCreateFn,
    pub queue_destroy: QueueDestroyFn,
    pub queue_add_write_index_relaxed: QueueAddWriteIndexFn,
    pub queue_load_read_index_scacquire: QueueLoadWriteIndexFn,
    pub signal_create: SignalCreateFn,
    pub signal_destroy: SignalDestroyFn,
    pub signal_store_relaxed: SignalStoreFn,
    pub signal_store_screlease: SignalStoreFn,
    pub signal_wait_scacquire: SignalWaitFn,
    pub memory_copy: MemoryCopyFn,
    pub reader_create_from_memory: ReaderCreateFromMemoryFn,
    pub reader_destroy: ReaderDestroyFn,
    pub executable_create_alt: ExecutableCreateAltFn,
    pub executable_destroy: ExecutableDestroyFn,
    pub executable_load_agent_code_object: LoadAgentCodeObjectFn,
    pub executable_freeze: ExecutableFreezeFn,
    pub executable_get_symbol_by_name: GetSymbolByNameFn,
    pub executable_symbol_get_info: SymbolGetInfoFn,
    pub agent_iterate_memory_pools: AgentIteratePoolsFn,
    pub memory_pool_get_info: PoolGetInfoFn,
    pub memory_pool_allocate: PoolAllocateFn,
    pub memory_pool_free: PoolFreeFn,
    pub agents_allow_access: AgentsAllowAccessFn,
    pub profiling_set_profiler_enabled: ProfilingSetEnabledFn,
    pub profiling_get_dispatch_time: ProfilingDispatchTimeFn,
    vmem: Result<Vmem, Vec<&'static str>>,
    // Last, so that every pointer above is dropped before the library is closed.
    _lib: libloading::Library,
}

macro_rules! resolve {
    ($lib:expr, $missing:expr, $name:literal) => {{
        // SAFETY: the type is the header's prototype of this symbol (see ffi.rs).
        match unsafe { $lib.get(concat!($name, "\0").as_bytes()) } {
            Ok(s) => Some(*s),
            Err(_) => {
                $missing.push($name);
                None
            }
        }
    }};
}

impl Hsa {
    /// Open the runtime library and resolve every function replay needs.
    pub fn open(explicit: Option<&Path>) -> Result<Hsa, RuntimeError> {
        let path = library_path(explicit);
        let library = path.display().to_string();
        // SAFETY: loading the HSA runtime runs its initialisers, which is what it is for.
        let lib = unsafe { libloading::Library::new(&path) }.map_err(|e| RuntimeError::Load {
            library: library.clone(),
            error: e.to_string(),
        })?;
        let mut missing: Vec<&'static str> = Vec::new();
        let m = &mut missing;
        let init = resolve!(lib, m, "hsa_init");
        let shut_down = resolve!(lib, m, "hsa_shut_down");
        let status_string = resolve!(lib, m, "hsa_status_string");
        let system_get_info = resolve!(lib, m, "hsa_system_get_info");
        let iterate_agents = resolve!(lib, m, "hsa_iterate_agents");
        let agent_get_info = resolve!(lib, m, "hsa_agent_get_info");
        let queue_create = resolve!(lib, m, "hsa_queue_create");
        let queue_destroy = resolve!(lib, m, "hsa_queue_destroy");
        let queue_add_write_index_relaxed = resolve!(lib, m, "hsa_queue_add_write_index_relaxed");
        let queue_load_read_index_scacquire =
            resolve!(lib, m, "hsa_queue_load_read_index_scacquire");
        let signal_create = resolve!(lib, m, "hsa_signal_create");
        let signal_destroy = resolve!(lib, m, "hsa_signal_destroy");
        let signal_store_relaxed = resolve!(lib, m, "hsa_signal_store_relaxed");
        let signal_store_screlease = resolve!(lib, m, "hsa_signal_store_screlease");
        let signal_wait_scacquire = resolve!(lib, m, "hsa_signal_wait_scacquire");
        let memory_copy = resolve!(lib, m, "hsa_memory_copy");
        let reader_create_from_memory =
            resolve!(lib, m, "hsa_code_object_reader_create_from_memory");
        let reader_destroy = resolve!(lib, m, "hsa_code_object_reader_destroy");
        let executable_create_alt = resolve!(lib, m, "hsa_executable_create_alt");
        let executable_destroy = resolve!(lib, m, "hsa_executable_destroy");
        let executable_load_agent_code_object =
            resolve!(lib, m, "hsa_executable_load_agent_code_object");
        let executable_freeze = resolve!(lib, m, "hsa_executable_freeze");
        let executable_get_symbol_by_name = resolve!(lib, m, "hsa_executable_get_symbol_by_name");
        let executable_symbol_get_info = resolve!(lib, m, "hsa_executable_symbol_get_info");
        let agent_iterate_memory_pools = resolve!(lib, m, "hsa_amd_agent_iterate_memory_pools");
        let memory_pool_get_info = resolve!(lib, m, "hsa_amd_memory_pool_get_info");
        let memory_pool_allocate = resolve!(lib, m, "hsa_amd_memory_pool_allocate");
        let memory_pool_free = resolve!(lib, m, "hsa_amd_memory_pool_free");
        let agents_allow_access = resolve!(lib, m, "hsa_amd_agents_allow_access");
        let profiling_set_profiler_enabled =
            resolve!(lib, m, "hsa_amd_profiling_set_profiler_enabled");
        let profiling_get_dispatch_time = resolve!(lib, m, "hsa_amd_profiling_get_dispatch_time");
        if !missing.is_empty() {
            return Err(RuntimeError::Missing {
                library,
                missing: missing.join(", "),
                why: "not an HSA runtime, or a very old one",
            });
        }
        let mut vm: Vec<&'static str> = Vec::new();
        let v = &mut vm;
        let vmem = (
            resolve!(lib, v, "hsa_amd_vmem_address_reserve"),
            resolve!(lib, v, "hsa_amd_vmem_address_free"),
            resolve!(lib, v, "hsa_amd_vmem_handle_create"),
            resolve!(lib, v, "hsa_amd_vmem_handle_release"),
            resolve!(lib, v, "hsa_amd_vmem_map"),
            resolve!(lib, v, "hsa_amd_vmem_unmap"),
            resolve!(lib, v, "hsa_amd_vmem_set_access"),
        );
        let vmem = match vmem {
            (Some(a), Some(b), Some(c), Some(d), Some(e), Some(f), Some(g)) => Ok(Vmem {
                address_reserve: a,
                address_free: b,
                handle_create: c,
                handle_release: d,
                map: e,
                unmap: f,
                set_access: g,
            }),
            _ => Err(vm),
        };
        // Every `?` above was checked by `missing`.
        Ok(Hsa {
            library,
            init: init.expect("resolved"),
            shut_down: shut_down.expect("resolved"),
            status_string: status_string.expect("resolved"),
            system_get_info: system_get_info.expect("resolved"),
            iterate_agents: iterate_agents.expect("resolved"),
            agent_get_info: agent_get_info.expect("resolved"),
            queue_create: queue_create.expect("resolved"),
            queue_destroy: queue_destroy.expect("resolved"),
            queue_add_write_index_relaxed: queue_add_write_index_relaxed.expect("resolved"),
            queue_load_read_index_scacquire: queue_load_read_index_scacquire.expect("resolved"),
            signal_create: signal_create.expect("resolved"),
            signal_destroy: signal_destroy.expect("resolved"),
            signal_store_relaxed: signal_store_relaxed.expect("resolved"),
            signal_store_screlease: signal_store_screlease.expect("resolved"),
            signal_wait_scacquire: signal_wait_scacquire.expect("resolved"),
            memory_copy: memory_copy.expect("resolved"),
            reader_create_from_memory: reader_create_from_memory.expect("resolved"),
            reader_destroy: reader_destroy.expect("resolved"),
            executable_create_alt: executable_create_alt.expect("resolved"),
            executable_destroy: executable_destroy.expect("resolved"),
            executable_load_agent_code_object: executable_load_agent_code_object.expect("resolved"),
            executable_freeze: executable_freeze.expect("resolved"),
            executable_get_symbol_by_name: executable_get_symbol_by_name.expect("resolved"),
            executable_symbol_get_info: executable_symbol_get_info.expect("resolved"),
            agent_iterate_memory_pools: agent_iterate_memory_pools.expect("resolved"),
            memory_pool_get_info: memory_pool_get_info.expect("resolved"),
            memory_pool_allocate: memory_pool_allocate.expect("resolved"),
            memory_pool_free: memory_pool_free.expect("resolved"),
            agents_allow_access: agents_allow_access.expect("resolved"),
            profiling_set_profiler_enabled: profiling_set_profiler_enabled.expect("resolved"),
            profiling_get_dispatch_time: profiling_get_dispatch_time.expect("resolved"),
            vmem,
            _lib: lib,
        })
    }

    /// The vmem API, or which of its functions this runtime lacks.
    pub fn vmem(&self) -> Result<Vmem, RuntimeError> {
        self.vmem.clone().map_err(|missing| RuntimeError::Missing {
            library: self.library.clone(),
            missing: missing.join(", "),
            why: "exact-address replay needs the vmem API of ROCm 6.0 or newer",
        })
    }

    /// The runtime's description of a status (`HSA_STATUS_ERROR_OUT_OF_RESOURCES: ...`).
    pub fn describe(&self, s: Status) -> String {
        let mut p: *const std::ffi::c_char = std::ptr::null();
        // SAFETY: hsa_status_string writes a pointer to a static string.
        let ok = unsafe { (self.status_string)(s, &mut p) } == STATUS_SUCCESS;
        if ok && !p.is_null() {
            // SAFETY: a NUL-terminated static string from the runtime.
            let text = unsafe { CStr::from_ptr(p) }.to_string_lossy();
            // The runtime's strings are long sentences; the first clause names the status.
            text.split(". ")
                .next()
                .unwrap_or(&text)
                .trim_end_matches('.')
                .to_string()
        } else {
            format!("{} ({s:#x})", status_name(s))
        }
    }
}
