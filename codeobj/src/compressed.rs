//! Compressed offload bundles (`CCOB`), versions 1, 2 and 3, zlib or zstd.
//!
//! Header layout from clang/lib/Driver/OffloadBundler.cpp (`RawCompressedBundleHeader`, packed,
//! little-endian): magic `CCOB` (4), version u16, method u16 (`llvm::compression::Format`:
//! 0 = zlib, 1 = zstd), then
//! - v1: uncompressed size u32, hash u64 (20 bytes; the payload runs to the end of the blob);
//! - v2: total file size u32, uncompressed size u32, hash u64 (24 bytes);
//! - v3: total file size u64, uncompressed size u64, hash u64 (32 bytes).
//!
//! The hash is the low 64 bits of the MD5 of the uncompressed bundle; it is not checked here.

use crate::error::{read_u16, read_u32, read_u64, Error, Result};
use std::io::Read;

pub const MAGIC: &[u8] = b"CCOB";

/// Largest uncompressed size accepted, whatever the header says.
pub const MAX_UNCOMPRESSED: u64 = 1 << 30;

/// Largest ratio of uncompressed to compressed size accepted (guards allocation on forged headers).
pub const MAX_RATIO: u64 = 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    Zlib,
    Zstd,
}

/// A parsed compressed-bundle header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    pub version: u16,
    pub method: Method,
    /// Whole blob size including the header (v2, v3).
    pub total_size: Option<u64>,
    pub uncompressed_size: u64,
    pub hash: u64,
    pub header_len: u64,
}

pub fn is_compressed(data: &[u8]) -> bool {
    data.starts_with(MAGIC)
}

/// Parse the header at the start of `data`.
pub fn parse_header(data: &[u8]) -> Result<Header> {
    if !is_compressed(data) {
        return Err(Error::Compressed("missing CCOB magic".into()));
    }
    let version = read_u16(data, 4, "compressed bundle version")?;
    let method_raw = read_u16(data, 6, "compressed bundle method")?;
    let (total_size, uncompressed_size, hash, header_len) = match version {
        1 => (
            None,
            read_u32(data, 8, "compressed bundle header")? as u64,
            read_u64(data, 12, "compressed bundle header")?,
            20,
        ),
        2 => (
            Some(read_u32(data, 8, "compressed bundle header")? as u64),
            read_u32(data, 12, "compressed bundle header")? as u64,
            read_u64(data, 16, "compressed bundle header")?,
            24,
        ),
        3 => (
            Some(read_u64(data, 8, "compressed bundle header")?),
            read_u64(data, 16, "compressed bundle header")?,
            read_u64(data, 24, "compressed bundle header")?,
            32,
        ),
        v => return Err(Error::CompressedVersion(v)),
    };
    let method = match method_raw {
        0 => Method::Zlib,
        1 => Method::Zstd,
        m => return Err(Error::CompressionMethod(m)),
    };
    if let Some(t) = total_size {
        if t < header_len {
            return Err(Error::Compressed(format!(
                "total size {t} is smaller than the {header_len}-byte header"
            )));
        }
    }
    Ok(Header {
        version,
        method,
        total_size,
        uncompressed_size,
        hash,
        header_len,
    })
}

/// The blob's length in `data` (from the header for v2/v3; v1 runs to the end of `data`).
pub fn blob_len(header: &Header, data: &[u8]) -> u64 {
    header
        .total_size
        .unwrap_or(data.len() as u64)
        .min(data.len() as u64)
}

/// Decompress the blob at the start of `data` into the (uncompressed) bundle bytes.
pub fn decompress(data: &[u8]) -> Result<Vec<u8>> {
    let header = parse_header(data)?;
    let end = match header.total_size {
        Some(t) if t > data.len() as u64 => {
            return Err(Error::Truncated {
                what: "compressed bundle payload",
                offset: 0,
                needed: t,
                len: data.len() as u64,
            })
        }
        Some(t) => t,
        None => data.len() as u64,
    };
    let payload = &data[header.header_len as usize..end as usize];
    let want = header.uncompressed_size;
    if want > MAX_UNCOMPRESSED
        || want
            > (payload.len() as u64)
                .saturating_mul(MAX_RATIO)
                .saturating_add(4096)
    {
        return Err(Error::Compressed(format!(
            "declared uncompressed size {want} is implausible for a {}-byte payload",
            payload.len()
        )));
    }
    let mut out = Vec::with_capacity(want.min(16 << 20) as usize);
    let res = match header.method {
        Method::Zstd => zstd::stream::read::Decoder::new(payload)
            .and_then(|d| d.take(want + 1).read_to_end(&mut out)),
        Method::Zlib => flate2::read::ZlibDecoder::new(payload)
            .take(want + 1)
            .read_to_end(&mut out),
    };
    res.map_err(|e| Error::Decompress(e.to_string()))?;
    if out.len() as u64 != want {
        return Err(Error::Decompress(format!(
            "expected {want} bytes, got {}{}",
            out.len(),
            if out.len() as u64 > want {
                " or more"
            } else {
                ""
            }
        )));
    }
    Ok(out)
}

/// Build a compressed bundle around `bundle` (used by tests and tools; the layout is the one
/// documented above; the hash field is left 0 since readers do not check it).
pub fn compress(bundle: &[u8], version: u16, method: Method) -> Result<Vec<u8>> {
    let payload = match method {
        Method::Zstd => {
            zstd::stream::encode_all(bundle, 3).map_err(|e| Error::Decompress(e.to_string()))?
        }
        Method::Zlib => {
            use std::io::Write;
            let mut enc =
                flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
            enc.write_all(bundle)
                .map_err(|e| Error::Decompress(e.to_string()))?;
            enc.finish().map_err(|e| Error::Decompress(e.to_string()))?
        }
    };
    let m: u16 = match method {
        Method::Zlib => 0,
        Method::Zstd => 1,
    };
    let mut out = Vec::with_capacity(payload.len() + 32);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&version.to_le_bytes());
    out.extend_from_slice(&m.to_le_bytes());
    match version {
        1 => out.extend_from_slice(&(bundle.len() as u32).to_le_bytes()),
        2 => {
            out.extend_from_slice(&((24 + payload.len()) as u32).to_le_bytes());
            out.extend_from_slice(&(bundle.len() as u32).to_le_bytes());
        }
        3 => {
            out.extend_from_slice(&((32 + payload.len()) as u64).to_le_bytes());
            out.extend_from_slice(&(bundle.len() as u64).to_le_bytes());
        }
        v => return Err(Error::CompressedVersion(v)),
    }
    out.extend_from_slice(&0u64.to_le_bytes());
    out.extend_from_slice(&payload);
    Ok(out)
}
