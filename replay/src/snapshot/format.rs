//! The files of a snapshot directory, as serde types. The layout is rocm-perf-lab's (read as it
//! is, version 0): `dispatch.json`, `kernarg.bin`, `kernel.hsaco`, `memory_regions.json` and
//! `memory/region_<hex base>.bin`. hip-unroll writes version 1: the same files and fields plus
//! `snapshot_version`, hashes, the captured packet's setup and header, whether the queue was
//! drained, and a per-region copy error instead of a silently missing region.

use serde::{Deserialize, Serialize};

/// The snapshot version this build writes and the newest it reads.
pub const SNAPSHOT_VERSION: u32 = 1;

pub const DISPATCH_JSON: &str = "dispatch.json";
pub const REGIONS_JSON: &str = "memory_regions.json";
pub const KERNARG_BIN: &str = "kernarg.bin";
pub const KERNEL_HSACO: &str = "kernel.hsaco";
pub const MEMORY_DIR: &str = "memory";

/// The file of the region at `base`, relative to the snapshot directory
/// (`memory/region_7f3a00000000.bin`: lower-case hex, no `0x`, as rocm-perf-lab's `%lx`).
pub fn region_file(base: u64) -> String {
    format!("{MEMORY_DIR}/region_{base:x}.bin")
}

/// `dispatch.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DispatchFile {
    /// Absent in rocm-perf-lab's captures (version 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot_version: Option<u32>,
    /// The kernel symbol as the runtime names it (`_Z6scalePfi.kd`).
    pub mangled_name: String,
    #[serde(default)]
    pub demangled_name: String,
    #[serde(default)]
    pub agent_name: String,
    /// `amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-`.
    #[serde(default)]
    pub isa_name: String,
    #[serde(default)]
    pub wavefront_size: u32,
    /// The kernel object address in the captured process (informational).
    #[serde(default)]
    pub kernel_object: u64,
    pub grid: [u32; 3],
    /// Read as u32 so that an out-of-range value is refused with a message, not a parse error.
    pub block: [u32; 3],
    /// From the captured packet: static plus dynamic LDS bytes.
    pub group_segment_size: u32,
    /// From the captured packet: scratch bytes per work-item.
    pub private_segment_size: u32,
    pub kernarg_size: u32,
    #[serde(default)]
    pub dispatch_index: u64,

    // Version 1 additions.
    /// The captured packet's dimension count (`setup` bits 0..2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setup_dimensions: Option<u16>,
    /// The captured packet's header (type, barrier bit, fence scopes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub packet_header: Option<u16>,
    /// The kernarg segment's address in the captured process.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernarg_address: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernarg_blake3: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hsaco_blake3: Option<String>,
    /// How the code object reached the runtime: `memory`, `file`, `deserialize`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hsaco_source: Option<String>,
    /// Whether every earlier packet of the queue had completed when memory was copied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drained: Option<bool>,
    /// Why the queue could not be drained, when it could not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drain_error: Option<String>,
    /// The tool that wrote the snapshot (`hip-unroll-capture 0.1.0`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
}

/// `memory_regions.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RegionsFile {
    pub regions: Vec<RegionRecord>,
}

/// One device allocation the kernel could see.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RegionRecord {
    pub base: u64,
    pub size: u64,
    #[serde(default)]
    pub is_pool: bool,
    #[serde(default)]
    pub is_vmem: bool,
    #[serde(default)]
    pub contains_kernarg: bool,
    #[serde(default)]
    pub handle: u64,
    /// vmem access permissions granted (`hsa_access_permission_t` bits).
    #[serde(default)]
    pub access: u32,

    // Version 1 additions.
    /// Which API allocated it: `pool`, `vmem`, `memory_allocate`, `lock`, `ipc`, `interop`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// blake3 of the region's file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blake3: Option<String>,
    /// Why the region's contents could not be copied (then it has no file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub copy_error: Option<String>,
}

impl RegionRecord {
    pub fn new(base: u64, size: u64, kind: &str) -> RegionRecord {
        RegionRecord {
            base,
            size,
            is_pool: kind == "pool",
            is_vmem: kind == "vmem",
            contains_kernarg: false,
            handle: 0,
            access: 0,
            kind: Some(kind.to_string()),
            blake3: None,
            copy_error: None,
        }
    }

    /// One past the last byte (saturating; overflow is refused when a snapshot is read).
    pub fn end(&self) -> u64 {
        self.base.saturating_add(self.size)
    }
}
