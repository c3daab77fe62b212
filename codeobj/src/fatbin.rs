//! Host executables and shared libraries: the `.hip_fatbin` section holds one or more offload
//! bundles (plain or `CCOB`-compressed), each aligned; this finds every one of them.

use crate::bundle;
use crate::compressed;
use crate::error::Result;

/// One bundle blob found inside a fat binary: its offset in the scanned bytes and its bytes.
#[derive(Debug, Clone)]
pub struct Blob<'a> {
    pub offset: u64,
    pub data: &'a [u8],
    pub compressed: bool,
}

/// Find every bundle in `data` (the `.hip_fatbin` contents): scan for either magic, take the
/// blob's own length (bundle header, or the CCOB total size; a v1 CCOB runs to the next magic),
/// and continue after it. Malformed blobs are returned as errors, not skipped.
pub fn scan(data: &[u8]) -> Result<Vec<Blob<'_>>> {
    let mut out = Vec::new();
    let mut pos = 0usize;
    let plain = memchr::memmem::Finder::new(bundle::MAGIC);
    let packed = memchr::memmem::Finder::new(compressed::MAGIC);
    while pos < data.len() {
        let rest = &data[pos..];
        let next_plain = plain.find(rest);
        let next_packed = packed.find(rest);
        let (at, is_packed) = match (next_plain, next_packed) {
            (None, None) => break,
            (Some(a), None) => (a, false),
            (None, Some(b)) => (b, true),
            (Some(a), Some(b)) => {
                if a <= b {
                    (a, false)
                } else {
                    (b, true)
                }
            }
        };
        let start = pos + at;
        let blob = &data[start..];
        let len = if is_packed {
            let header = compressed::parse_header(blob)?;
            match header.total_size {
                Some(_) => compressed::blob_len(&header, blob) as usize,
                None => {
                    // v1: up to the next magic of either kind.
                    let after = &blob[4..];
                    let n = [plain.find(after), packed.find(after)]
                        .into_iter()
                        .flatten()
                        .min();
                    n.map(|n| n + 4).unwrap_or(blob.len())
                }
            }
        } else {
            bundle::parse(blob)?.len as usize
        };
        let len = len.clamp(1, blob.len());
        out.push(Blob {
            offset: start as u64,
            data: &blob[..len],
            compressed: is_packed,
        });
        pos = start + len;
    }
    Ok(out)
}
