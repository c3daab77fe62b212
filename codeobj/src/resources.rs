//! The one kernel-resources type: the register, memory and occupancy figures of one kernel on
//! one target, derived once from a code object's metadata note and kernel descriptor. `inspect`,
//! the `vgpr-pressure` judge and `check --hsaco` all read these figures from here.

use crate::{CodeObject, Kernel, Limit};
use serde::Serialize;

/// Register, memory and occupancy figures of one kernel on one target, read from a code object.
///
/// Its serde shape is the `resources` entry of `check --format json`. Occupancy is unknown
/// (`None`, JSON `null`) for processors whose occupancy rules hip-unroll does not know; it is
/// never written as `0`. `waves_per_simd` and `limited_by` are both known or both unknown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KernelResources {
    /// The processor, e.g. `gfx90a`.
    pub arch: String,
    /// `.vgpr_count` (on gfx90a/gfx94x the unified count, AGPRs included).
    pub vgpr_count: u32,
    /// `.agpr_count`, `0` where the target emits none.
    pub agpr_count: u32,
    pub sgpr_count: u32,
    pub vgpr_spill_count: u32,
    pub sgpr_spill_count: u32,
    /// Static LDS bytes (`.group_segment_fixed_size`).
    pub lds_bytes: u32,
    /// Scratch bytes per work-item (`.private_segment_fixed_size`).
    pub scratch_bytes: u32,
    /// `None` where the architecture's occupancy rules are unknown.
    pub waves_per_simd: Option<u32>,
    /// `vgpr`, `sgpr`, `lds`, `workgroup`, or `wave-cap` when nothing binds below the
    /// hardware's maximum waves per SIMD; `None` where occupancy is unknown.
    pub limited_by: Option<Limit>,
}

impl KernelResources {
    /// The figures of kernel `k` on the target `arch`.
    pub fn new(arch: &str, k: &Kernel) -> KernelResources {
        let m = &k.meta;
        KernelResources {
            arch: arch.to_string(),
            vgpr_count: m.vgpr_count,
            agpr_count: m.agpr_count.unwrap_or(0),
            sgpr_count: m.sgpr_count,
            vgpr_spill_count: m.vgpr_spill_count,
            sgpr_spill_count: m.sgpr_spill_count,
            lds_bytes: m.group_segment_fixed_size,
            scratch_bytes: m.private_segment_fixed_size,
            waves_per_simd: k.occupancy.map(|o| o.waves_per_simd),
            limited_by: k.occupancy.map(|o| o.limited_by),
        }
    }

    /// The figures of kernel `k` of code object `co`.
    pub fn of(co: &CodeObject, k: &Kernel) -> KernelResources {
        KernelResources::new(&co.arch, k)
    }

    /// Whether the kernel spills VGPRs or SGPRs.
    pub fn spills(&self) -> bool {
        self.vgpr_spill_count > 0 || self.sgpr_spill_count > 0
    }
}
