//! codeobj: reads AMDGPU code objects exactly (bare ELF `.hsaco`/`.co`, clang offload bundles,
//! `CCOB` compressed bundles, host executables and shared libraries with `.hip_fatbin`),
//! computes occupancy per architecture, compares kernel signatures, and judges an unrolled
//! variant's register cost (the `vgpr-pressure` guard; [`judge`] is pure, [`compile`] does I/O).

pub mod bundle;
pub mod compile;
pub mod compressed;
pub mod cubin;
pub mod elf;
pub mod error;
pub mod fatbin;
pub mod inspect;
pub mod judge;
pub mod metadata;
pub mod occupancy;
pub mod resources;
pub mod signature;

pub use error::{Error, Result};
pub use metadata::{ArgMeta, KernelMeta, Metadata};
pub use occupancy::{Limit, Occupancy};
pub use resources::KernelResources;

use serde::Serialize;
use std::path::Path;

/// One AMDGPU code object (one target) found in an input.
#[derive(Debug, Clone, Serialize)]
pub struct CodeObject {
    /// Where it came from: the file, plus `#<bundle entry id>` for bundle entries and
    /// `#.hip_fatbin+<offset>` for bundles inside host binaries.
    pub source: String,
    /// The processor, e.g. `gfx90a`.
    pub arch: String,
    /// The full target id, e.g. `gfx90a:sramecc+:xnack-`.
    pub target_id: String,
    pub e_flags: u32,
    pub metadata: Metadata,
    pub kernels: Vec<Kernel>,
    /// The machine code: the ELF's `.text` sections (name, bytes). Two code objects with the
    /// same target and the same text run the same instructions.
    #[serde(skip)]
    pub text: Vec<(String, Vec<u8>)>,
}

/// One kernel of a code object, with what is derived from it.
#[derive(Debug, Clone, Serialize)]
pub struct Kernel {
    pub meta: KernelMeta,
    pub demangled: Option<String>,
    /// The kernel descriptor at `meta.symbol`, when the symbol table has it.
    pub descriptor: Option<elf::KernelDescriptor>,
    /// `None` for processors whose rules hip-unroll does not know.
    pub occupancy: Option<Occupancy>,
}

impl Kernel {
    /// Whether the kernel spills VGPRs or SGPRs.
    pub fn spills(&self) -> bool {
        self.meta.vgpr_spill_count > 0 || self.meta.sgpr_spill_count > 0
    }
}

/// Bundles nest at most this deep (a bundle entry that is itself a bundle).
const MAX_DEPTH: u32 = 4;

/// Read every code object in the regular file at `path` (size-capped: `fsio::read`). I/O errors
/// and refusals (a FIFO, a device, a file too large) are returned as `std::io::Error` inside
/// [`LoadError`].
pub fn load(path: &Path) -> std::result::Result<Vec<CodeObject>, LoadError> {
    let data = fsio::read(path, fsio::OBJECT_CAP, "a code object")
        .map_err(|e| LoadError::Io(path.display().to_string(), e.into_io()))?;
    read(&data, &path.display().to_string())
        .map_err(|e| LoadError::Parse(path.display().to_string(), e))
}

/// [`load`]'s error: the path and what went wrong.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("{0}: {1}")]
    Io(String, std::io::Error),
    #[error("{0}: {1}")]
    Parse(String, Error),
}

/// Read every code object in `data`; `source` names the input in the results.
pub fn read(data: &[u8], source: &str) -> Result<Vec<CodeObject>> {
    let mut out = Vec::new();
    read_into(data, source, None, 0, &mut out)?;
    Ok(out)
}

fn read_into(
    data: &[u8],
    source: &str,
    entry_target: Option<&str>,
    depth: u32,
    out: &mut Vec<CodeObject>,
) -> Result<()> {
    if depth > MAX_DEPTH {
        return Err(Error::TooDeep);
    }
    if data.is_empty() {
        return Err(Error::Empty);
    }
    if compressed::is_compressed(data) {
        let inner = compressed::decompress(data)?;
        return read_into(&inner, source, entry_target, depth + 1, out);
    }
    if bundle::is_bundle(data) {
        let b = bundle::parse(data)?;
        for e in &b.entries {
            let t = e.target();
            if t.is_host() || e.data.is_empty() {
                continue;
            }
            let src = format!("{source}#{}", e.id);
            read_into(e.data, &src, Some(&t.target_id), depth + 1, out)?;
        }
        return Ok(());
    }
    if elf::is_elf(data) {
        if elf::machine(data)? == elf::EM_AMDGPU {
            out.push(code_object(data, source, entry_target)?);
            return Ok(());
        }
        let Some(fat) = elf::section_data(data, b".hip_fatbin")? else {
            return Err(Error::NoFatbin);
        };
        let blobs = fatbin::scan(fat)?;
        if blobs.is_empty() {
            return Err(Error::NoFatbin);
        }
        for blob in blobs {
            let src = format!("{source}#.hip_fatbin+{}", blob.offset);
            read_into(blob.data, &src, None, depth + 1, out)?;
        }
        return Ok(());
    }
    Err(Error::UnknownFormat)
}

/// Build a [`CodeObject`] from one AMDGPU ELF.
fn code_object(data: &[u8], source: &str, entry_target: Option<&str>) -> Result<CodeObject> {
    let parsed = elf::parse(data)?;
    // `amdhsa.target` reads `amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-`: the target id is the
    // fifth `-`-separated field (features may themselves end in `-`).
    let target_id = parsed
        .metadata
        .target
        .as_deref()
        .and_then(|t| t.splitn(5, '-').nth(4))
        .filter(|t| !t.is_empty())
        .or(entry_target)
        .unwrap_or("")
        .to_string();
    let arch = target_id.split(':').next().unwrap_or("").to_string();
    let info = occupancy::arch_info(&arch);
    let kernels = parsed
        .metadata
        .kernels
        .iter()
        .map(|m| {
            let descriptor = parsed
                .descriptors
                .iter()
                .find(|(n, _)| *n == m.symbol)
                .map(|(_, d)| *d);
            let wgp_mode = m
                .workgroup_processor_mode
                .or(descriptor.map(|d| d.wgp_mode()))
                .unwrap_or(true);
            let occupancy = info.map(|a| {
                occupancy::occupancy(
                    &a,
                    &occupancy::Usage {
                        vgprs: m.vgpr_count,
                        sgprs: m.sgpr_count,
                        lds_bytes: m.group_segment_fixed_size,
                        workgroup_size: m.max_flat_workgroup_size,
                        wave_size: m.wavefront_size,
                        wgp_mode,
                    },
                )
            });
            Kernel {
                demangled: metadata::demangle(&m.name),
                meta: m.clone(),
                descriptor,
                occupancy,
            }
        })
        .collect();
    Ok(CodeObject {
        source: source.to_string(),
        arch,
        target_id,
        e_flags: parsed.e_flags,
        metadata: parsed.metadata,
        kernels,
        text: elf::text_sections(data)?,
    })
}
