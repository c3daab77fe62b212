//! Clang offload bundles (`__CLANG_OFFLOAD_BUNDLE__`): the binary format written by
//! `clang-offload-bundler` and by `hipcc --genco`.
//!
//! Layout (clang/lib/Driver/OffloadBundler.cpp, `BinaryFileHandler`; all integers u64 LE):
//! magic (24 bytes), number of entries, then per entry: offset, size, id length, id bytes;
//! then the entries' contents at their offsets. An entry id reads
//! `<kind>-<triple>-<target id>`, for example `hipv4-amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-`
//! (kind `hipv4`, triple `amdgcn-amd-amdhsa-`, target id `gfx90a:sramecc+:xnack-`).

use crate::error::{read_u64, slice, Error, Result};

pub const MAGIC: &[u8] = b"__CLANG_OFFLOAD_BUNDLE__";

/// One entry of a bundle, borrowed from the bundle's bytes.
#[derive(Debug, Clone)]
pub struct Entry<'a> {
    /// The full id, e.g. `hipv4-amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-`.
    pub id: String,
    pub offset: u64,
    pub data: &'a [u8],
}

impl Entry<'_> {
    /// The parsed id.
    pub fn target(&self) -> TargetId {
        TargetId::parse(&self.id)
    }
}

/// A parsed bundle entry id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetId {
    /// `host`, `hip`, `hipv4`, `openmp`.
    pub kind: String,
    /// `amdgcn-amd-amdhsa-` (four components, the last possibly empty).
    pub triple: String,
    /// `gfx90a:sramecc+:xnack-`, empty for host entries.
    pub target_id: String,
}

impl TargetId {
    /// Split `<kind>-<arch>-<vendor>-<os>-<env>[-<target id>]` as clang's `OffloadTargetInfo` does
    /// (split on `-` at most 5 times). Never fails: missing parts are empty.
    pub fn parse(id: &str) -> TargetId {
        let parts: Vec<&str> = id.splitn(6, '-').collect();
        let kind = parts.first().copied().unwrap_or("").to_string();
        let triple = parts
            .get(1..parts.len().min(5))
            .map(|p| p.join("-"))
            .unwrap_or_default();
        let target_id = if parts.len() == 6 {
            parts[5].to_string()
        } else {
            String::new()
        };
        TargetId {
            kind,
            triple,
            target_id,
        }
    }

    /// The processor (`gfx90a`) without features.
    pub fn processor(&self) -> &str {
        self.target_id.split(':').next().unwrap_or("")
    }

    pub fn is_host(&self) -> bool {
        self.kind == "host"
    }
}

/// A parsed (uncompressed) bundle.
#[derive(Debug, Clone)]
pub struct Bundle<'a> {
    pub entries: Vec<Entry<'a>>,
    /// Bytes from the magic to the end of the last entry (or of the header): where a following
    /// bundle may start when several are concatenated.
    pub len: u64,
}

/// Whether `data` starts with the bundle magic.
pub fn is_bundle(data: &[u8]) -> bool {
    data.starts_with(MAGIC)
}

/// Parse a bundle at the start of `data`. Every offset and length is checked against `data`.
pub fn parse(data: &[u8]) -> Result<Bundle<'_>> {
    if !is_bundle(data) {
        return Err(Error::Bundle(
            "missing __CLANG_OFFLOAD_BUNDLE__ magic".into(),
        ));
    }
    let mut pos = MAGIC.len() as u64;
    let count = read_u64(data, pos, "bundle entry count")?;
    pos += 8;
    // Each entry header takes at least 24 bytes: a count beyond that is a lie; cap allocation.
    let max_entries = (data.len() as u64).saturating_sub(pos) / 24;
    if count > max_entries {
        return Err(Error::Bundle(format!(
            "{count} entries declared, room for at most {max_entries}"
        )));
    }
    let mut entries = Vec::with_capacity(count as usize);
    let mut end = 0u64;
    for i in 0..count {
        let offset = read_u64(data, pos, "bundle entry offset")?;
        let size = read_u64(data, pos + 8, "bundle entry size")?;
        let id_len = read_u64(data, pos + 16, "bundle entry id length")?;
        pos += 24;
        let id_bytes = slice(data, pos, id_len, "bundle entry id")?;
        pos += id_len;
        let id = std::str::from_utf8(id_bytes)
            .map_err(|_| Error::Bundle(format!("entry {i} id is not UTF-8")))?
            .to_string();
        let body = slice(data, offset, size, "bundle entry contents").map_err(|_| {
            Error::Bundle(format!(
                "entry {i} (`{id}`) at {offset}+{size} lies beyond the {} bytes of the bundle",
                data.len()
            ))
        })?;
        end = end.max(offset + size);
        entries.push(Entry {
            id,
            offset,
            data: body,
        });
    }
    Ok(Bundle {
        entries,
        len: end.max(pos),
    })
}
