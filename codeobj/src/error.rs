//! Error types of the code-object readers (one `thiserror` enum; the binary turns them into messages).

use thiserror::Error;

/// Everything that can go wrong while reading a code object, a bundle or a host binary.
#[derive(Debug, Error)]
pub enum Error {
    #[error("empty input")]
    Empty,
    #[error("not an AMDGPU code object, offload bundle or host binary with a .hip_fatbin section")]
    UnknownFormat,
    #[error("truncated {what}: needs {needed} bytes at offset {offset}, input has {len}")]
    Truncated {
        what: &'static str,
        offset: u64,
        needed: u64,
        len: u64,
    },
    #[error("malformed offload bundle: {0}")]
    Bundle(String),
    #[error("malformed compressed bundle: {0}")]
    Compressed(String),
    #[error("unsupported compressed bundle version {0} (known: 1, 2, 3)")]
    CompressedVersion(u16),
    #[error("unknown compression method {0} in compressed bundle (0 = zlib, 1 = zstd)")]
    CompressionMethod(u16),
    #[error("decompression failed: {0}")]
    Decompress(String),
    #[error("malformed ELF: {0}")]
    Elf(String),
    #[error("ELF machine {0} is not AMDGPU (224)")]
    NotAmdgpu(u16),
    #[error("no NT_AMDGPU_METADATA note (type 32, owner \"AMDGPU\") in the code object")]
    NoMetadata,
    #[error("malformed AMDGPU metadata: {0}")]
    Metadata(String),
    #[error("host binary has no .hip_fatbin section and no embedded offload bundle")]
    NoFatbin,
    #[error("nested bundle too deep")]
    TooDeep,
}

impl From<object::read::Error> for Error {
    fn from(e: object::read::Error) -> Self {
        Error::Elf(e.to_string())
    }
}

pub type Result<T> = std::result::Result<T, Error>;

/// Bounds-checked slice `data[offset..offset+len]`.
pub(crate) fn slice<'a>(
    data: &'a [u8],
    offset: u64,
    len: u64,
    what: &'static str,
) -> Result<&'a [u8]> {
    let end = offset.checked_add(len);
    match end {
        Some(end) if end <= data.len() as u64 => Ok(&data[offset as usize..end as usize]),
        _ => Err(Error::Truncated {
            what,
            offset,
            needed: len,
            len: data.len() as u64,
        }),
    }
}

pub(crate) fn read_u64(data: &[u8], offset: u64, what: &'static str) -> Result<u64> {
    let b = slice(data, offset, 8, what)?;
    Ok(u64::from_le_bytes(b.try_into().expect("8 bytes")))
}

pub(crate) fn read_u32(data: &[u8], offset: u64, what: &'static str) -> Result<u32> {
    let b = slice(data, offset, 4, what)?;
    Ok(u32::from_le_bytes(b.try_into().expect("4 bytes")))
}

pub(crate) fn read_u16(data: &[u8], offset: u64, what: &'static str) -> Result<u16> {
    let b = slice(data, offset, 2, what)?;
    Ok(u16::from_le_bytes(b.try_into().expect("2 bytes")))
}
