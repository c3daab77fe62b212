//! The `hip-unroll inspect --format json` document: one row per kernel per target. Kept here,
//! beside the reader, so the shape is tested against `llvm-readelf` with the parser.

use crate::{CodeObject, Kernel};
use serde::Serialize;

/// The `inspect --format json` document.
#[derive(Serialize)]
pub struct InspectOutput {
    pub code_objects: Vec<CodeObjectRow>,
}

#[derive(Serialize)]
pub struct CodeObjectRow {
    pub source: String,
    pub arch: String,
    pub kernels: Vec<KernelRow>,
}

#[derive(Serialize)]
pub struct KernelRow {
    pub name: String,
    pub demangled: Option<String>,
    pub symbol: String,
    pub arch: String,
    pub wavefront_size: u32,
    pub vgpr_count: u32,
    pub agpr_count: u32,
    pub sgpr_count: u32,
    pub vgpr_spill_count: u32,
    pub sgpr_spill_count: u32,
    pub lds_bytes: u32,
    pub scratch_bytes: u32,
    pub kernarg_size: u32,
    pub max_flat_workgroup_size: u32,
    /// `null` for processors whose occupancy rules hip-unroll does not know.
    pub occupancy: Option<OccupancyRow>,
}

#[derive(Serialize)]
pub struct OccupancyRow {
    pub waves_per_simd: u32,
    pub limited_by: &'static str,
}

impl KernelRow {
    /// The row of kernel `k` of code object `co`.
    pub fn new(co: &CodeObject, k: &Kernel) -> KernelRow {
        let m = &k.meta;
        KernelRow {
            name: m.name.clone(),
            demangled: k.demangled.clone(),
            symbol: m.symbol.clone(),
            arch: co.arch.clone(),
            wavefront_size: m.wavefront_size,
            vgpr_count: m.vgpr_count,
            agpr_count: m.agpr_count.unwrap_or(0),
            sgpr_count: m.sgpr_count,
            vgpr_spill_count: m.vgpr_spill_count,
            sgpr_spill_count: m.sgpr_spill_count,
            lds_bytes: m.group_segment_fixed_size,
            scratch_bytes: m.private_segment_fixed_size,
            kernarg_size: m.kernarg_segment_size,
            max_flat_workgroup_size: m.max_flat_workgroup_size,
            occupancy: k.occupancy.map(|o| OccupancyRow {
                waves_per_simd: o.waves_per_simd,
                limited_by: o.limited_by.as_str(),
            }),
        }
    }
}

/// The JSON rows of one code object.
pub fn rows(co: &CodeObject) -> CodeObjectRow {
    CodeObjectRow {
        source: co.source.clone(),
        arch: co.arch.clone(),
        kernels: co.kernels.iter().map(|k| KernelRow::new(co, k)).collect(),
    }
}

/// The whole document for a list of code objects.
pub fn document(objects: &[CodeObject]) -> InspectOutput {
    InspectOutput {
        code_objects: objects.iter().map(rows).collect(),
    }
}
