//! The `hip-unroll inspect --format json` document: one row per kernel per target. Kept here,
//! beside the reader, so the shape is tested against `llvm-readelf` with the parser.

use crate::{CodeObject, Kernel, KernelResources, Limit};
use serde::ser::SerializeStruct;
use serde::{Serialize, Serializer};

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

/// One kernel on one target: its names and launch figures beside its [`KernelResources`].
///
/// The JSON row is flat, in the order `name`, `demangled`, `symbol`, `arch`, `wavefront_size`,
/// the register and memory figures, `kernarg_size`, `max_flat_workgroup_size`, and `occupancy`:
/// `{"waves_per_simd", "limited_by"}`, or `null` for processors whose occupancy rules
/// hip-unroll does not know.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelRow {
    pub name: String,
    pub demangled: Option<String>,
    pub symbol: String,
    pub wavefront_size: u32,
    pub kernarg_size: u32,
    pub max_flat_workgroup_size: u32,
    /// The figures (and the target's `arch`).
    pub resources: KernelResources,
}

impl KernelRow {
    /// The row of kernel `k` of code object `co`.
    pub fn new(co: &CodeObject, k: &Kernel) -> KernelRow {
        let m = &k.meta;
        KernelRow {
            name: m.name.clone(),
            demangled: k.demangled.clone(),
            symbol: m.symbol.clone(),
            wavefront_size: m.wavefront_size,
            kernarg_size: m.kernarg_segment_size,
            max_flat_workgroup_size: m.max_flat_workgroup_size,
            resources: KernelResources::of(co, k),
        }
    }
}

impl Serialize for KernelRow {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Occupancy {
            waves_per_simd: u32,
            limited_by: Limit,
        }
        let r = &self.resources;
        let occupancy = match (r.waves_per_simd, r.limited_by) {
            (Some(waves_per_simd), Some(limited_by)) => Some(Occupancy {
                waves_per_simd,
                limited_by,
            }),
            _ => None,
        };
        let mut st = s.serialize_struct("KernelRow", 15)?;
        st.serialize_field("name", &self.name)?;
        st.serialize_field("demangled", &self.demangled)?;
        st.serialize_field("symbol", &self.symbol)?;
        st.serialize_field("arch", &r.arch)?;
        st.serialize_field("wavefront_size", &self.wavefront_size)?;
        st.serialize_field("vgpr_count", &r.vgpr_count)?;
        st.serialize_field("agpr_count", &r.agpr_count)?;
        st.serialize_field("sgpr_count", &r.sgpr_count)?;
        st.serialize_field("vgpr_spill_count", &r.vgpr_spill_count)?;
        st.serialize_field("sgpr_spill_count", &r.sgpr_spill_count)?;
        st.serialize_field("lds_bytes", &r.lds_bytes)?;
        st.serialize_field("scratch_bytes", &r.scratch_bytes)?;
        st.serialize_field("kernarg_size", &self.kernarg_size)?;
        st.serialize_field("max_flat_workgroup_size", &self.max_flat_workgroup_size)?;
        st.serialize_field("occupancy", &occupancy)?;
        st.end()
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
