//! Where each HSA API-table entry that capture wraps lives, for every table layout a released
//! runtime hands to `OnLoad`, and the rule that says whether an entry is present.
//!
//! A table starts with an [`ApiTableVersion`] whose `minor_id` is the size in bytes of the
//! table the runtime filled in: an entry at byte offset `o` exists only when `o + 8 <=
//! minor_id`, and nothing past that size is ever read or written.
//!
//! - `CoreApiTable` has one layout in every release (1016 bytes in ROCm 5.2 and 6.x alike;
//!   major id 1 up to ROCm 5.7, 2 from ROCm 6.0).
//! - `AmdExtTable` changed in the middle: ROCm 5.2–5.5 (major 1, 400–424 bytes) is the
//!   [`AmdLayout::Legacy`] order of Debian's `hsa_api_trace.h`; ROCm 5.6 inserted
//!   `hsa_amd_memory_async_copy_on_engine` and `hsa_amd_memory_copy_engine_status` after
//!   `hsa_amd_memory_async_copy` (index 16), shifting every later entry by 16 bytes, and from
//!   then on entries were only appended ([`AmdLayout::Current`]: major 1 from 440 bytes, and
//!   major 2, ROCm 6.0 onward, which adds the vmem API at index 55). A major-1 table between
//!   424 and 440 bytes never shipped and is refused, as is any other major id.

use crate::ffi::ApiTableVersion;

/// An entry of `CoreApiTable` that capture reads or replaces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Core {
    SystemGetInfo,
    AgentGetInfo,
    QueueCreate,
    MemoryAllocate,
    MemoryFree,
    MemoryCopy,
    SignalCreate,
    SignalDestroy,
    SignalLoadScacquire,
    SignalStoreRelaxed,
    SignalWaitScacquire,
    CodeObjectDeserialize,
    ExecutableLoadCodeObject,
    ExecutableSymbolGetInfo,
    ExecutableIterateSymbols,
    StatusString,
    IsaGetInfoAlt,
    CodeObjectReaderCreateFromFile,
    CodeObjectReaderCreateFromMemory,
    ExecutableLoadProgramCodeObject,
    ExecutableLoadAgentCodeObject,
}

impl Core {
    pub const ALL: [Core; 21] = [
        Core::SystemGetInfo,
        Core::AgentGetInfo,
        Core::QueueCreate,
        Core::MemoryAllocate,
        Core::MemoryFree,
        Core::MemoryCopy,
        Core::SignalCreate,
        Core::SignalDestroy,
        Core::SignalLoadScacquire,
        Core::SignalStoreRelaxed,
        Core::SignalWaitScacquire,
        Core::CodeObjectDeserialize,
        Core::ExecutableLoadCodeObject,
        Core::ExecutableSymbolGetInfo,
        Core::ExecutableIterateSymbols,
        Core::StatusString,
        Core::IsaGetInfoAlt,
        Core::CodeObjectReaderCreateFromFile,
        Core::CodeObjectReaderCreateFromMemory,
        Core::ExecutableLoadProgramCodeObject,
        Core::ExecutableLoadAgentCodeObject,
    ];

    /// The member name in `hsa_api_trace.h`.
    pub fn field(self) -> &'static str {
        match self {
            Core::SystemGetInfo => "hsa_system_get_info_fn",
            Core::AgentGetInfo => "hsa_agent_get_info_fn",
            Core::QueueCreate => "hsa_queue_create_fn",
            Core::MemoryAllocate => "hsa_memory_allocate_fn",
            Core::MemoryFree => "hsa_memory_free_fn",
            Core::MemoryCopy => "hsa_memory_copy_fn",
            Core::SignalCreate => "hsa_signal_create_fn",
            Core::SignalDestroy => "hsa_signal_destroy_fn",
            Core::SignalLoadScacquire => "hsa_signal_load_scacquire_fn",
            Core::SignalStoreRelaxed => "hsa_signal_store_relaxed_fn",
            Core::SignalWaitScacquire => "hsa_signal_wait_scacquire_fn",
            Core::CodeObjectDeserialize => "hsa_code_object_deserialize_fn",
            Core::ExecutableLoadCodeObject => "hsa_executable_load_code_object_fn",
            Core::ExecutableSymbolGetInfo => "hsa_executable_symbol_get_info_fn",
            Core::ExecutableIterateSymbols => "hsa_executable_iterate_symbols_fn",
            Core::StatusString => "hsa_status_string_fn",
            Core::IsaGetInfoAlt => "hsa_isa_get_info_alt_fn",
            Core::CodeObjectReaderCreateFromFile => "hsa_code_object_reader_create_from_file_fn",
            Core::CodeObjectReaderCreateFromMemory => {
                "hsa_code_object_reader_create_from_memory_fn"
            }
            Core::ExecutableLoadProgramCodeObject => "hsa_executable_load_program_code_object_fn",
            Core::ExecutableLoadAgentCodeObject => "hsa_executable_load_agent_code_object_fn",
        }
    }

    /// Index among the table's function pointers (after the 16-byte version).
    fn index(self) -> usize {
        match self {
            Core::SystemGetInfo => 2,
            Core::AgentGetInfo => 6,
            Core::QueueCreate => 7,
            Core::MemoryAllocate => 33,
            Core::MemoryFree => 34,
            Core::MemoryCopy => 35,
            Core::SignalCreate => 37,
            Core::SignalDestroy => 38,
            Core::SignalLoadScacquire => 40,
            Core::SignalStoreRelaxed => 41,
            Core::SignalWaitScacquire => 44,
            Core::CodeObjectDeserialize => 77,
            Core::ExecutableLoadCodeObject => 85,
            Core::ExecutableSymbolGetInfo => 93,
            Core::ExecutableIterateSymbols => 94,
            Core::StatusString => 95,
            Core::IsaGetInfoAlt => 109,
            Core::CodeObjectReaderCreateFromFile => 115,
            Core::CodeObjectReaderCreateFromMemory => 116,
            Core::ExecutableLoadProgramCodeObject => 119,
            Core::ExecutableLoadAgentCodeObject => 120,
        }
    }

    /// Byte offset in `CoreApiTable` (the same in every release).
    pub fn offset(self) -> usize {
        HEADER + 8 * self.index()
    }
}

/// An entry of `AmdExtTable` that capture reads or replaces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Amd {
    MemoryPoolAllocate,
    MemoryPoolFree,
    MemoryLock,
    MemoryUnlock,
    InteropMapBuffer,
    InteropUnmapBuffer,
    IpcMemoryAttach,
    IpcMemoryDetach,
    QueueInterceptCreate,
    QueueInterceptRegister,
    MemoryLockToPool,
    VmemAddressReserve,
    VmemAddressFree,
    VmemHandleCreate,
    VmemHandleRelease,
    VmemMap,
    VmemUnmap,
    VmemSetAccess,
    VmemAddressReserveAlign,
}

impl Amd {
    pub const ALL: [Amd; 19] = [
        Amd::MemoryPoolAllocate,
        Amd::MemoryPoolFree,
        Amd::MemoryLock,
        Amd::MemoryUnlock,
        Amd::InteropMapBuffer,
        Amd::InteropUnmapBuffer,
        Amd::IpcMemoryAttach,
        Amd::IpcMemoryDetach,
        Amd::QueueInterceptCreate,
        Amd::QueueInterceptRegister,
        Amd::MemoryLockToPool,
        Amd::VmemAddressReserve,
        Amd::VmemAddressFree,
        Amd::VmemHandleCreate,
        Amd::VmemHandleRelease,
        Amd::VmemMap,
        Amd::VmemUnmap,
        Amd::VmemSetAccess,
        Amd::VmemAddressReserveAlign,
    ];

    pub fn field(self) -> &'static str {
        match self {
            Amd::MemoryPoolAllocate => "hsa_amd_memory_pool_allocate_fn",
            Amd::MemoryPoolFree => "hsa_amd_memory_pool_free_fn",
            Amd::MemoryLock => "hsa_amd_memory_lock_fn",
            Amd::MemoryUnlock => "hsa_amd_memory_unlock_fn",
            Amd::InteropMapBuffer => "hsa_amd_interop_map_buffer_fn",
            Amd::InteropUnmapBuffer => "hsa_amd_interop_unmap_buffer_fn",
            Amd::IpcMemoryAttach => "hsa_amd_ipc_memory_attach_fn",
            Amd::IpcMemoryDetach => "hsa_amd_ipc_memory_detach_fn",
            Amd::QueueInterceptCreate => "hsa_amd_queue_intercept_create_fn",
            Amd::QueueInterceptRegister => "hsa_amd_queue_intercept_register_fn",
            Amd::MemoryLockToPool => "hsa_amd_memory_lock_to_pool_fn",
            Amd::VmemAddressReserve => "hsa_amd_vmem_address_reserve_fn",
            Amd::VmemAddressFree => "hsa_amd_vmem_address_free_fn",
            Amd::VmemHandleCreate => "hsa_amd_vmem_handle_create_fn",
            Amd::VmemHandleRelease => "hsa_amd_vmem_handle_release_fn",
            Amd::VmemMap => "hsa_amd_vmem_map_fn",
            Amd::VmemUnmap => "hsa_amd_vmem_unmap_fn",
            Amd::VmemSetAccess => "hsa_amd_vmem_set_access_fn",
            Amd::VmemAddressReserveAlign => "hsa_amd_vmem_address_reserve_align_fn",
        }
    }

    /// Index in the [`AmdLayout::Legacy`] order; `None` for entries it does not have.
    pub fn legacy_index(self) -> Option<usize> {
        Some(match self {
            Amd::MemoryPoolAllocate => 13,
            Amd::MemoryPoolFree => 14,
            Amd::MemoryLock => 20,
            Amd::MemoryUnlock => 21,
            Amd::InteropMapBuffer => 23,
            Amd::InteropUnmapBuffer => 24,
            Amd::IpcMemoryAttach => 29,
            Amd::IpcMemoryDetach => 30,
            Amd::QueueInterceptCreate => 35,
            Amd::QueueInterceptRegister => 36,
            Amd::MemoryLockToPool => 40,
            _ => return None,
        })
    }

    /// Index in the [`AmdLayout::Current`] order.
    pub fn current_index(self) -> usize {
        match self {
            Amd::VmemAddressReserve => 55,
            Amd::VmemAddressFree => 56,
            Amd::VmemHandleCreate => 57,
            Amd::VmemHandleRelease => 58,
            Amd::VmemMap => 59,
            Amd::VmemUnmap => 60,
            Amd::VmemSetAccess => 61,
            Amd::VmemAddressReserveAlign => 69,
            other => {
                let i = other
                    .legacy_index()
                    .expect("every other entry is in both layouts");
                // The two copy-engine entries went in at index 16.
                if i >= INSERTED_AT {
                    i + 2
                } else {
                    i
                }
            }
        }
    }
}

/// Index at which ROCm 5.6 inserted two entries into `AmdExtTable`.
pub const INSERTED_AT: usize = 16;
/// Size of [`ApiTableVersion`], before the first function pointer.
pub const HEADER: usize = 16;
/// The largest major-1 `AmdExtTable` with the legacy order (ROCm 5.5).
pub const LEGACY_MAX_SIZE: u32 = 424;
/// The smallest major-1 `AmdExtTable` with the current order (ROCm 5.6).
pub const CURRENT_MIN_SIZE_MAJOR1: u32 = 440;

/// The entry order of an `AmdExtTable`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AmdLayout {
    /// ROCm 5.2–5.5 (Debian's headers).
    Legacy,
    /// ROCm 5.6 onward (ROCm 6 adds vmem).
    Current,
}

/// Why a table cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LayoutError {
    #[error("the HSA runtime passed no {0} table")]
    Missing(&'static str),
    #[error("unknown {table} table version (major {major}, {size} bytes); this capture tool knows majors 1 and 2")]
    Unknown {
        table: &'static str,
        major: u32,
        size: u32,
    },
}

/// Which order a core table's entries are in: there is only one, but the major id must be one
/// this file describes.
pub fn check_core(v: &ApiTableVersion) -> Result<(), LayoutError> {
    match v.major_id {
        1 | 2 => Ok(()),
        major => Err(LayoutError::Unknown {
            table: "core",
            major,
            size: v.minor_id,
        }),
    }
}

/// The order of an AMD extension table, from its version.
pub fn amd_layout(v: &ApiTableVersion) -> Result<AmdLayout, LayoutError> {
    match (v.major_id, v.minor_id) {
        (1, size) if size <= LEGACY_MAX_SIZE => Ok(AmdLayout::Legacy),
        (1, size) if size >= CURRENT_MIN_SIZE_MAJOR1 => Ok(AmdLayout::Current),
        (2, _) => Ok(AmdLayout::Current),
        (major, size) => Err(LayoutError::Unknown {
            table: "AMD extension",
            major,
            size,
        }),
    }
}

/// Byte offset of a core entry, if the table is large enough to hold it.
pub fn core_offset(v: &ApiTableVersion, e: Core) -> Option<usize> {
    present(v, e.offset())
}

/// Byte offset of an AMD extension entry in a table of this layout and size, if it has it.
pub fn amd_offset(layout: AmdLayout, v: &ApiTableVersion, e: Amd) -> Option<usize> {
    let index = match layout {
        AmdLayout::Legacy => e.legacy_index()?,
        AmdLayout::Current => e.current_index(),
    };
    present(v, HEADER + 8 * index)
}

fn present(v: &ApiTableVersion, offset: usize) -> Option<usize> {
    (offset + 8 <= v.minor_id as usize).then_some(offset)
}

/// A table the runtime owns, addressed by byte offset. Every access is bounded by the size the
/// table declares.
#[derive(Debug, Clone, Copy)]
pub struct Table(*mut ApiTableVersion);

// SAFETY: the tables live for the process; capture serialises its writes (OnLoad runs once).
unsafe impl Send for Table {}
unsafe impl Sync for Table {}

impl Table {
    /// # Safety
    /// `ptr` must be null or point at a table whose first `minor_id` bytes are readable and
    /// writable for as long as the `Table` is used.
    pub unsafe fn new(ptr: *mut ApiTableVersion) -> Option<Table> {
        (!ptr.is_null()).then_some(Table(ptr))
    }

    pub fn version(&self) -> ApiTableVersion {
        // SAFETY: `new`'s contract.
        unsafe { *self.0 }
    }

    /// The function pointer at `offset` (an offset from [`core_offset`]/[`amd_offset`], so
    /// within the declared size); null reads as `None`.
    pub fn get(&self, offset: usize) -> Option<*const ()> {
        assert!(offset + 8 <= self.version().minor_id as usize);
        // SAFETY: in bounds (asserted), pointer-aligned (tables are arrays of pointers).
        let p = unsafe { *(self.0.cast::<u8>().add(offset) as *const *const ()) };
        (!p.is_null()).then_some(p)
    }

    /// Replace the function pointer at `offset`, returning the previous one.
    ///
    /// # Safety
    /// `f` must have the type of the entry at `offset`.
    pub unsafe fn replace(&self, offset: usize, f: *const ()) -> Option<*const ()> {
        assert!(offset + 8 <= self.version().minor_id as usize);
        let slot = self.0.cast::<u8>().add(offset) as *mut *const ();
        let old = *slot;
        *slot = f;
        (!old.is_null()).then_some(old)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(major: u32, size: u32) -> ApiTableVersion {
        ApiTableVersion {
            major_id: major,
            minor_id: size,
            step_id: 0,
            reserved: 0,
        }
    }

    #[test]
    fn layouts_by_version() {
        assert_eq!(amd_layout(&v(1, 400)), Ok(AmdLayout::Legacy)); // ROCm 5.2
        assert_eq!(amd_layout(&v(1, 424)), Ok(AmdLayout::Legacy)); // ROCm 5.5
        assert_eq!(amd_layout(&v(1, 456)), Ok(AmdLayout::Current)); // ROCm 5.6/5.7
        assert_eq!(amd_layout(&v(2, 552)), Ok(AmdLayout::Current)); // ROCm 6.0
        assert!(amd_layout(&v(1, 432)).is_err());
        assert!(amd_layout(&v(3, 600)).is_err());
        assert!(check_core(&v(2, 1016)).is_ok());
        assert!(check_core(&v(7, 1016)).is_err());
    }

    #[test]
    fn entries_beyond_the_declared_size_are_absent() {
        // ROCm 5.2: no vmem at all; intercept entries at the legacy offsets.
        let t = v(1, 400);
        assert_eq!(
            amd_offset(AmdLayout::Legacy, &t, Amd::QueueInterceptCreate),
            Some(296)
        );
        assert_eq!(amd_offset(AmdLayout::Legacy, &t, Amd::VmemMap), None);
        // ROCm 5.7: current order, 456 bytes: the vmem entries start at 456, so none fits.
        let t = v(1, 456);
        assert_eq!(
            amd_offset(AmdLayout::Current, &t, Amd::QueueInterceptCreate),
            Some(312)
        );
        assert_eq!(
            amd_offset(AmdLayout::Current, &t, Amd::VmemAddressReserve),
            None
        );
        // ROCm 6.0: 552 bytes, vmem present, reserve_align (6.2) absent.
        let t = v(2, 552);
        assert_eq!(
            amd_offset(AmdLayout::Current, &t, Amd::VmemAddressReserve),
            Some(456)
        );
        assert_eq!(
            amd_offset(AmdLayout::Current, &t, Amd::VmemSetAccess),
            Some(504)
        );
        assert_eq!(
            amd_offset(AmdLayout::Current, &t, Amd::VmemAddressReserveAlign),
            None
        );
        // ROCm 6.2: 576 bytes.
        assert_eq!(
            amd_offset(AmdLayout::Current, &v(2, 576), Amd::VmemAddressReserveAlign),
            Some(568)
        );
        // A truncated core table hides the entries past its end.
        assert_eq!(core_offset(&v(1, 80), Core::QueueCreate), Some(72));
        assert_eq!(core_offset(&v(1, 79), Core::QueueCreate), None);
    }
}
