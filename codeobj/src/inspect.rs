//! The `hip-unroll inspect --format json` document: one row per kernel per target. Kept here,
//! beside the reader, so the shape is tested against `llvm-readelf` with the parser.

use crate::CodeObject;
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

/// The JSON rows of one code object.
pub fn rows(co: &CodeObject) -> CodeObjectRow {
    CodeObjectRow {
        source: co.source.clone(),
        arch: co.arch.clone(),
        kernels: co
            .kernels
            .iter()
            .map(|k| KernelRow {
                name: k.meta.name.clone(),
                demangled: k.demangled.clone(),
                symbol: k.meta.symbol.clone(),
                arch: co.arch.clone(),
                wavefront_size: k.meta.wavefront_size,
                vgpr_count: k.meta.vgpr_count,
                agpr_count: k.meta.agpr_count.unwrap_or(0),
                sgpr_count: k.meta.sgpr_count,
                vgpr_spill_count: k.meta.vgpr_spill_count,
                sgpr_spill_count: k.meta.sgpr_spill_count,
                lds_bytes: k.meta.group_segment_fixed_size,
                scratch_bytes: k.meta.private_segment_fixed_size,
                kernarg_size: k.meta.kernarg_segment_size,
                max_flat_workgroup_size: k.meta.max_flat_workgroup_size,
                occupancy: k.occupancy.map(|o| OccupancyRow {
                    waves_per_simd: o.waves_per_simd,
                    limited_by: o.limited_by.as_str(),
                }),
            })
            .collect(),
    }
}

/// The whole document for a list of code objects.
pub fn document(objects: &[CodeObject]) -> InspectOutput {
    InspectOutput {
        code_objects: objects.iter().map(rows).collect(),
    }
}
