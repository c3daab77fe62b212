//! AMDGPU ELF code objects: the metadata note, the kernel descriptor symbols (`.kd`) and the
//! 64-byte kernel descriptors they point at. Parsed with `object`'s low-level ELF reader;
//! every offset is checked, nothing is indexed blindly.

use crate::error::{slice, Error, Result};
use crate::metadata::{self, Metadata};
use object::elf;
use object::read::elf::{FileHeader, NoteIterator, SectionHeader, Sym};
use object::Endianness;
use serde::Serialize;

/// `EM_AMDGPU`.
pub const EM_AMDGPU: u16 = 224;
/// `NT_AMDGPU_METADATA`.
pub const NT_AMDGPU_METADATA: u32 = 32;

type Header = elf::FileHeader64<Endianness>;

/// Whether `data` starts with an ELF magic.
pub fn is_elf(data: &[u8]) -> bool {
    data.starts_with(b"\x7fELF")
}

/// The `e_machine` of a 64-bit ELF file.
pub fn machine(data: &[u8]) -> Result<u16> {
    let h = Header::parse(data)?;
    Ok(h.e_machine(h.endian()?))
}

/// The parsed contents of one AMDGPU code object.
#[derive(Debug, Clone)]
pub struct ElfCodeObject {
    pub e_flags: u32,
    pub metadata: Metadata,
    /// Kernel descriptors by symbol name (`foo.kd`).
    pub descriptors: Vec<(String, KernelDescriptor)>,
}

/// The fields of the 64-byte `kernel_descriptor_t` (AMDGPUUsage, "Kernel Descriptor") hip-unroll
/// reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct KernelDescriptor {
    pub group_segment_fixed_size: u32,
    pub private_segment_fixed_size: u32,
    pub kernarg_size: u32,
    pub compute_pgm_rsrc1: u32,
    pub compute_pgm_rsrc2: u32,
    pub compute_pgm_rsrc3: u32,
    pub kernel_code_properties: u16,
}

impl KernelDescriptor {
    /// Parse the 64 descriptor bytes.
    pub fn parse(b: &[u8]) -> Result<Self> {
        let b = slice(b, 0, 64, "kernel descriptor")?;
        let u32_at = |o: usize| u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
        Ok(KernelDescriptor {
            group_segment_fixed_size: u32_at(0),
            private_segment_fixed_size: u32_at(4),
            kernarg_size: u32_at(8),
            compute_pgm_rsrc3: u32_at(44),
            compute_pgm_rsrc1: u32_at(48),
            compute_pgm_rsrc2: u32_at(52),
            kernel_code_properties: u16::from_le_bytes([b[56], b[57]]),
        })
    }

    /// `COMPUTE_PGM_RSRC1.WGP_MODE` (bit 29, gfx10+): waves of a workgroup may use both CUs of a WGP.
    pub fn wgp_mode(&self) -> bool {
        self.compute_pgm_rsrc1 & (1 << 29) != 0
    }

    /// `KERNEL_CODE_PROPERTY_ENABLE_WAVEFRONT_SIZE32` (bit 10).
    pub fn wave32(&self) -> bool {
        self.kernel_code_properties & (1 << 10) != 0
    }

    /// `GRANULATED_WORKITEM_VGPR_COUNT` (bits 0..6): VGPR blocks minus one.
    pub fn granulated_vgprs(&self) -> u32 {
        self.compute_pgm_rsrc1 & 0x3f
    }

    /// `GRANULATED_WAVEFRONT_SGPR_COUNT` (bits 6..10).
    pub fn granulated_sgprs(&self) -> u32 {
        (self.compute_pgm_rsrc1 >> 6) & 0xf
    }
}

/// Parse an AMDGPU ELF code object: header, metadata note, `.kd` symbols and descriptors.
pub fn parse(data: &[u8]) -> Result<ElfCodeObject> {
    let h = Header::parse(data)?;
    let endian = h.endian()?;
    let machine = h.e_machine(endian);
    if machine != EM_AMDGPU {
        return Err(Error::NotAmdgpu(machine));
    }
    let metadata = find_metadata(data)?;
    let sections = h.sections(endian, data)?;
    let mut descriptors = Vec::new();
    let symbols = sections.symbols(endian, data, elf::SHT_SYMTAB)?;
    for sym in symbols.iter() {
        let name = symbols.symbol_name(endian, sym)?;
        if !name.ends_with(b".kd") || sym.st_size(endian) < 64 {
            continue;
        }
        let Ok(name) = std::str::from_utf8(name) else {
            continue;
        };
        let shndx = sym.st_shndx(endian);
        if shndx == elf::SHN_UNDEF || shndx >= elf::SHN_LORESERVE {
            continue;
        }
        let Ok(section) = sections.section(object::SectionIndex(shndx as usize)) else {
            continue;
        };
        if section.sh_type(endian) == elf::SHT_NOBITS {
            continue;
        }
        let value = sym.st_value(endian);
        let Some(rel) = value.checked_sub(section.sh_addr(endian)) else {
            continue;
        };
        let Some(off) = section.sh_offset(endian).checked_add(rel) else {
            continue;
        };
        if let Ok(bytes) = slice(data, off, 64, "kernel descriptor") {
            descriptors.push((name.to_string(), KernelDescriptor::parse(bytes)?));
        }
    }
    Ok(ElfCodeObject {
        e_flags: h.e_flags(endian),
        metadata,
        descriptors,
    })
}

/// Find and decode the NT_AMDGPU_METADATA note (section notes first, then program headers).
pub fn find_metadata(data: &[u8]) -> Result<Metadata> {
    use object::read::elf::ProgramHeader;
    let h = Header::parse(data)?;
    let endian = h.endian()?;
    for section in h.sections(endian, data)?.iter() {
        if let Some(m) = metadata_note(section.notes(endian, data)?, endian)? {
            return Ok(m);
        }
    }
    for ph in h.program_headers(endian, data)? {
        if let Some(m) = metadata_note(ph.notes(endian, data)?, endian)? {
            return Ok(m);
        }
    }
    Err(Error::NoMetadata)
}

/// The decoded NT_AMDGPU_METADATA note among `notes`, if there is one.
fn metadata_note(
    notes: Option<NoteIterator<'_, Header>>,
    endian: Endianness,
) -> Result<Option<Metadata>> {
    let Some(mut notes) = notes else {
        return Ok(None);
    };
    while let Some(note) = notes.next()? {
        if note.name() == b"AMDGPU" && note.n_type(endian) == NT_AMDGPU_METADATA {
            return metadata::decode(note.desc()).map(Some);
        }
    }
    Ok(None)
}

/// The machine code of any 64-bit ELF file: every section whose name starts with `.text`
/// (AMDGPU code objects have one, cubins one per kernel), by name, in the file's order.
pub fn text_sections(data: &[u8]) -> Result<Vec<(String, Vec<u8>)>> {
    let h = Header::parse(data)?;
    let endian = h.endian()?;
    let sections = h.sections(endian, data)?;
    let mut out = Vec::new();
    for s in sections.iter() {
        let name = sections.section_name(endian, s).unwrap_or_default();
        if !name.starts_with(b".text") || s.sh_type(endian) == elf::SHT_NOBITS {
            continue;
        }
        let bytes = s.data(endian, data).map_err(|_| Error::Truncated {
            what: "ELF section",
            offset: s.sh_offset(endian),
            needed: s.sh_size(endian),
            len: data.len() as u64,
        })?;
        out.push((String::from_utf8_lossy(name).into_owned(), bytes.to_vec()));
    }
    Ok(out)
}

/// The contents of the section called `name` of any 64-bit ELF file (host binaries), if present.
pub fn section_data<'a>(data: &'a [u8], name: &[u8]) -> Result<Option<&'a [u8]>> {
    let h = Header::parse(data)?;
    let endian = h.endian()?;
    let sections = h.sections(endian, data)?;
    match sections.section_by_name(endian, name) {
        Some((_, s)) if s.sh_type(endian) != elf::SHT_NOBITS => {
            Ok(Some(s.data(endian, data).map_err(|_| {
                Error::Truncated {
                    what: "ELF section",
                    offset: s.sh_offset(endian),
                    needed: s.sh_size(endian),
                    len: data.len() as u64,
                }
            })?))
        }
        _ => Ok(None),
    }
}
