//! NVIDIA cubins (`nvcc -cubin`): each kernel's registers, stack frame, static shared memory and
//! parameter layout from the ELF's `.nv.info` attributes, its spills from ptxas's `-v` report,
//! and the register-limited occupancy. What the tuner's gates compare on an NVIDIA target, as
//! the rest of `codeobj` reads AMD code objects for the AMD gates, and what `unroll --verify`
//! compares for a CUDA-only file ([`crate::signature::compare_cubins`]). Parsing never panics:
//! every offset is checked.

use object::read::elf::{FileHeader, SectionHeader};
use object::{elf, Endianness};
use serde::Serialize;
use std::collections::BTreeMap;

/// `EM_CUDA`.
pub const EM_CUDA: u16 = 190;

/// The NVIDIA target when neither a setting nor a device names one: sm_80 (Ampere), which
/// every CUDA toolkit from 11 to 13 builds for.
pub const DEFAULT_ARCH: &str = "sm_80";

/// True when `data` is an ELF file for NVIDIA GPUs (a cubin).
pub fn is_cubin(data: &[u8]) -> bool {
    data.starts_with(b"\x7fELF") && data.get(18..20) == Some(&EM_CUDA.to_le_bytes()[..])
}

/// `.nv.info` attribute ids (`EIATTR_*`) read here.
const EIATTR_FRAME_SIZE: u8 = 0x11;
const EIATTR_KPARAM_INFO: u8 = 0x17;
const EIATTR_CBANK_PARAM_SIZE: u8 = 0x19;
const EIATTR_REGCOUNT: u8 = 0x2f;
/// `.nv.info` attribute formats (`EIFMT_*`).
const EIFMT_NVAL: u8 = 0x01;
const EIFMT_BVAL: u8 = 0x02;
const EIFMT_HVAL: u8 = 0x03;
const EIFMT_SVAL: u8 = 0x04;

/// One kernel of a cubin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CubinKernel {
    /// The mangled name.
    pub name: String,
    /// Registers per thread.
    pub registers: u32,
    /// Stack frame per thread, bytes (local memory: spills and local arrays).
    pub frame_bytes: u32,
    /// Static shared memory per block, bytes.
    pub shared_bytes: u32,
    /// Explicit parameters: (ordinal, offset, size), in ordinal order.
    pub params: Vec<(u32, u32, u32)>,
    /// Bytes of the parameter block.
    pub param_bytes: u32,
    /// Spill stores and loads, bytes, from ptxas's `-v` report (`None` without one).
    pub spills: Option<(u32, u32)>,
}

/// Why a cubin could not be read.
#[derive(Debug, thiserror::Error)]
pub enum CubinError {
    #[error("not an ELF file")]
    NotElf,
    #[error("an ELF file for machine {0}, not an NVIDIA cubin (EM_CUDA = 190)")]
    NotCuda(u16),
    #[error("malformed cubin: {0}")]
    Malformed(String),
}

impl From<object::read::Error> for CubinError {
    fn from(e: object::read::Error) -> Self {
        CubinError::Malformed(e.to_string())
    }
}

type Header = elf::FileHeader64<Endianness>;

/// One `.nv.info` attribute.
#[derive(Debug)]
struct Attr<'a> {
    id: u8,
    /// `EIFMT_SVAL`'s bytes, or the 2-byte value of `EIFMT_HVAL`, or nothing.
    data: &'a [u8],
}

fn attrs(mut b: &[u8]) -> Result<Vec<Attr<'_>>, CubinError> {
    let mut out = Vec::new();
    while b.len() >= 2 {
        let (fmt, id) = (b[0], b[1]);
        match fmt {
            EIFMT_SVAL => {
                let len = b
                    .get(2..4)
                    .map(|s| u16::from_le_bytes([s[0], s[1]]) as usize)
                    .ok_or_else(|| CubinError::Malformed("truncated .nv.info".into()))?;
                let data = b
                    .get(4..4 + len)
                    .ok_or_else(|| CubinError::Malformed("truncated .nv.info value".into()))?;
                out.push(Attr { id, data });
                b = &b[4 + len..];
            }
            EIFMT_HVAL | EIFMT_BVAL => {
                let data = b
                    .get(2..4)
                    .ok_or_else(|| CubinError::Malformed("truncated .nv.info".into()))?;
                out.push(Attr { id, data });
                b = &b[4..];
            }
            EIFMT_NVAL => {
                // No value, but every attribute is 4-byte aligned: two bytes of padding
                // (`01 35 00 00`, EIATTR_SW2393858_WAR in nvcc 13's cubins).
                out.push(Attr { id, data: &[] });
                b = &b[b.len().min(4)..];
            }
            other => {
                return Err(CubinError::Malformed(format!(
                    "unknown .nv.info attribute format {other:#x}"
                )))
            }
        }
    }
    Ok(out)
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    b.get(at..at + 4)
        .map(|s| u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
}

/// The kernels of a cubin, by name; spills are filled in by [`with_report`].
pub fn parse(data: &[u8]) -> Result<Vec<CubinKernel>, CubinError> {
    if !data.starts_with(b"\x7fELF") {
        return Err(CubinError::NotElf);
    }
    let h = Header::parse(data)?;
    let endian = h.endian()?;
    let machine = h.e_machine(endian);
    if machine != EM_CUDA {
        return Err(CubinError::NotCuda(machine));
    }
    let sections = h.sections(endian, data)?;
    let symbols = sections.symbols(endian, data, elf::SHT_SYMTAB)?;
    let sym_name = |i: u32| -> Option<String> {
        let s = symbols.symbol(object::SymbolIndex(i as usize)).ok()?;
        let n = symbols.symbol_name(endian, s).ok()?;
        Some(String::from_utf8_lossy(n).into_owned())
    };
    // Per-function values of the global `.nv.info`: (symbol index, value) pairs.
    let mut regs: BTreeMap<String, u32> = BTreeMap::new();
    let mut frame: BTreeMap<String, u32> = BTreeMap::new();
    let mut kernels: BTreeMap<String, CubinKernel> = BTreeMap::new();
    let mut shared: BTreeMap<String, u32> = BTreeMap::new();
    for s in sections.iter() {
        let name = sections.section_name(endian, s)?;
        let name = String::from_utf8_lossy(name).into_owned();
        if let Some(f) = name.strip_prefix(".nv.shared.") {
            shared.insert(f.to_string(), s.sh_size(endian) as u32);
            continue;
        }
        if name != ".nv.info" && !name.starts_with(".nv.info.") {
            continue;
        }
        let bytes = s
            .data(endian, data)
            .map_err(|_| CubinError::Malformed(format!("{name}: out of the file")))?;
        let list = attrs(bytes)?;
        if name == ".nv.info" {
            for a in list {
                let (Some(sym), Some(v)) = (u32_at(a.data, 0), u32_at(a.data, 4)) else {
                    continue;
                };
                let Some(f) = sym_name(sym) else { continue };
                match a.id {
                    EIATTR_REGCOUNT => {
                        regs.insert(f, v);
                    }
                    EIATTR_FRAME_SIZE => {
                        frame.insert(f, v);
                    }
                    _ => {}
                }
            }
            continue;
        }
        let f = name[".nv.info.".len()..].to_string();
        let mut k = CubinKernel {
            name: f.clone(),
            registers: 0,
            frame_bytes: 0,
            shared_bytes: 0,
            params: Vec::new(),
            param_bytes: 0,
            spills: None,
        };
        for a in list {
            match a.id {
                EIATTR_KPARAM_INFO => {
                    // index (u32), ordinal (u16), offset (u16), flags (u32; size in bits 18..32).
                    let (Some(w1), Some(w2)) = (u32_at(a.data, 4), u32_at(a.data, 8)) else {
                        return Err(CubinError::Malformed(format!("{f}: short KPARAM_INFO")));
                    };
                    k.params.push((w1 & 0xffff, w1 >> 16, (w2 >> 18) & 0x3fff));
                }
                EIATTR_CBANK_PARAM_SIZE => {
                    k.param_bytes = a.data.first().copied().unwrap_or(0) as u32
                        | (a.data.get(1).copied().unwrap_or(0) as u32) << 8;
                }
                _ => {}
            }
        }
        k.params.sort_unstable();
        kernels.insert(f, k);
    }
    Ok(kernels
        .into_values()
        .map(|mut k| {
            k.registers = regs.get(&k.name).copied().unwrap_or(0);
            k.frame_bytes = frame.get(&k.name).copied().unwrap_or(0);
            k.shared_bytes = shared.get(&k.name).copied().unwrap_or(0);
            k
        })
        .collect())
}

/// ptxas's `-v` report: per function, (registers, spill store bytes, spill load bytes).
pub fn ptxas_report(log: &str) -> BTreeMap<String, (u32, u32, u32)> {
    let mut out = BTreeMap::new();
    let mut current: Option<String> = None;
    let mut spills = (0, 0);
    let number_before = |l: &str, what: &str| -> Option<u32> {
        let at = l.find(what)?;
        l[..at].split_whitespace().last()?.parse().ok()
    };
    for l in log.lines() {
        if let Some(at) = l.find("Function properties for ") {
            current = Some(
                l[at + "Function properties for ".len()..]
                    .trim()
                    .to_string(),
            );
            spills = (0, 0);
        } else if l.contains("bytes spill stores") {
            spills = (
                number_before(l, "bytes spill stores").unwrap_or(0),
                number_before(l, "bytes spill loads").unwrap_or(0),
            );
        } else if let (Some(f), Some(r)) = (&current, number_before(l, "registers")) {
            if l.contains("Used ") {
                out.insert(f.clone(), (r, spills.0, spills.1));
                current = None;
            }
        }
    }
    out
}

/// The kernels of a cubin with the spills of ptxas's report (`log`) filled in.
pub fn with_report(data: &[u8], log: Option<&str>) -> Result<Vec<CubinKernel>, CubinError> {
    let mut ks = parse(data)?;
    if let Some(log) = log {
        let r = ptxas_report(log);
        for k in &mut ks {
            k.spills = r.get(&k.name).map(|&(_, st, ld)| (st, ld));
        }
    }
    Ok(ks)
}

/// The most resident warps per SM of a compute capability (`sm_90` -> 64), when known.
pub fn max_warps_per_sm(arch: &str) -> Option<u32> {
    let n: u32 = arch
        .trim_start_matches("sm_")
        .trim_start_matches("compute_")
        .trim_end_matches(|c: char| c.is_ascii_alphabetic())
        .parse()
        .ok()?;
    Some(match n {
        50..=53 | 60..=62 | 70 | 72 | 80 | 90 | 100 | 103 => 64,
        75 => 32,
        86 | 87 | 88 | 89 | 110 | 120 | 121 => 48,
        _ => return None,
    })
}

/// Warps per SM that `registers` per thread allow (64K registers per SM, allocated per warp in
/// units of 256), at most the architecture's; `None` for an unknown architecture. Block
/// granularity is not counted.
pub fn register_limited_warps(registers: u32, arch: &str) -> Option<u32> {
    let max = max_warps_per_sm(arch)?;
    if registers == 0 {
        return Some(max);
    }
    let per_warp = (registers * 32).div_ceil(256) * 256;
    Some((65536 / per_warp).min(max))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ptxas_reports_are_read_per_function() {
        let log = "ptxas info    : 0 bytes gmem\nptxas info    : Compiling entry function '_Z5heavyPfPKfi' for 'sm_90'\nptxas info    : Function properties for _Z5heavyPfPKfi\n    1256 bytes stack frame, 1244 bytes spill stores, 2404 bytes spill loads\nptxas info    : Used 32 registers, used 0 barriers, 1256 bytes cumulative stack size\nptxas info    : Function properties for _Z1kPf\n    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\nptxas info    : Used 24 registers, used 1 barriers, 1024 bytes smem, 380 bytes cmem[0]\n";
        let r = ptxas_report(log);
        assert_eq!(r["_Z5heavyPfPKfi"], (32, 1244, 2404));
        assert_eq!(r["_Z1kPf"], (24, 0, 0));
    }

    #[test]
    fn occupancy_by_registers() {
        assert_eq!(register_limited_warps(32, "sm_90"), Some(64));
        assert_eq!(register_limited_warps(72, "sm_90"), Some(28));
        assert_eq!(register_limited_warps(255, "sm_80"), Some(8));
        assert_eq!(register_limited_warps(32, "sm_86"), Some(48));
        assert_eq!(register_limited_warps(40, "sm_90a"), Some(51));
        assert_eq!(register_limited_warps(40, "sm_13"), None);
    }

    /// A kernel's `.nv.info` section as nvcc 13 writes it (`scale(float*, int, double)` for
    /// sm_80): a value-less attribute padded to 4 bytes among the others.
    #[test]
    fn attributes_with_no_value_take_four_bytes() {
        let section: &[u8] = &[
            0x04, 0x37, 0x04, 0x00, 0x82, 0x00, 0x00, 0x00, 0x01, 0x35, 0x00, 0x00, 0x04, 0x0a,
            0x08, 0x00, 0x04, 0x00, 0x00, 0x00, 0x60, 0x01, 0x18, 0x00, 0x03, 0x19, 0x18, 0x00,
            0x04, 0x17, 0x0c, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x10, 0x00, 0x00, 0xf0,
            0x21, 0x00, 0x04, 0x17, 0x0c, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x08, 0x00,
            0x00, 0xf0, 0x11, 0x00, 0x04, 0x17, 0x0c, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
            0x00, 0x00, 0x00, 0xf0, 0x21, 0x00, 0x03, 0x1b, 0xff, 0x00, 0x03, 0x5f, 0x00, 0x00,
            0x04, 0x1c, 0x0c, 0x00, 0x30, 0x00, 0x00, 0x00, 0xc0, 0x0b, 0x00, 0x00, 0x10, 0x0d,
            0x00, 0x00,
        ];
        let a = attrs(section).unwrap();
        let ids: Vec<u8> = a.iter().map(|x| x.id).collect();
        assert_eq!(
            ids,
            [0x37, 0x35, 0x0a, 0x19, 0x17, 0x17, 0x17, 0x1b, 0x5f, 0x1c]
        );
        // The three parameters: (ordinal, offset, size) from KPARAM_INFO.
        let params: Vec<(u32, u32, u32)> = a
            .iter()
            .filter(|x| x.id == EIATTR_KPARAM_INFO)
            .map(|x| {
                let (w1, w2) = (u32_at(x.data, 4).unwrap(), u32_at(x.data, 8).unwrap());
                (w1 & 0xffff, w1 >> 16, (w2 >> 18) & 0x3fff)
            })
            .collect();
        assert_eq!(params, [(2, 16, 8), (1, 8, 4), (0, 0, 8)]);
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        assert!(matches!(parse(b"nope"), Err(CubinError::NotElf)));
        let mut elf = b"\x7fELF".to_vec();
        elf.resize(70, 0);
        assert!(parse(&elf).is_err());
        assert!(attrs(&[4, 0x2f, 200, 0]).is_err());
    }
}
