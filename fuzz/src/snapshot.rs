//! The snapshot reader (`replay::snapshot::Snapshot::open`) on hostile directories: one input
//! is a whole snapshot directory flattened into one byte string, its files separated by
//! [`SEP`]: `dispatch.json`, `memory_regions.json`, `kernarg.bin`, `kernel.hsaco`, then any
//! number of region files, each an 8-byte little-endian base address followed by its bytes
//! (written as `memory/region_<hex base>.bin`). [`flatten`] makes such an input from a real
//! snapshot (the `seed_snapshot` binary).

use std::path::{Path, PathBuf};

/// Separates the files of a flattened snapshot.
pub const SEP: &[u8] = b"\n\x00--8<--\x00\n";

/// The fixed files, in order.
const FILES: [&str; 4] = [
    "dispatch.json",
    "memory_regions.json",
    "kernarg.bin",
    "kernel.hsaco",
];

fn split(data: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut rest = data;
    while let Some(i) = memchr_find(rest, SEP) {
        out.push(&rest[..i]);
        rest = &rest[i + SEP.len()..];
    }
    out.push(rest);
    out
}

fn memchr_find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn scratch() -> PathBuf {
    std::env::temp_dir().join(format!("hip-unroll-snapshot-fuzz-{}", std::process::id()))
}

/// Write a flattened snapshot into `dir` (emptied first).
pub fn unflatten(data: &[u8], dir: &Path) -> std::io::Result<()> {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir.join("memory"))?;
    let parts = split(data);
    for (i, part) in parts.iter().enumerate() {
        match FILES.get(i) {
            Some(name) => std::fs::write(dir.join(name), part)?,
            None if part.len() >= 8 => {
                let base = u64::from_le_bytes(part[..8].try_into().expect("8 bytes"));
                std::fs::write(dir.join(format!("memory/region_{base:x}.bin")), &part[8..])?;
            }
            None => {}
        }
    }
    Ok(())
}

/// Flatten a snapshot directory into one input.
pub fn flatten(dir: &Path) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::new();
    for (i, name) in FILES.iter().enumerate() {
        if i > 0 {
            out.extend_from_slice(SEP);
        }
        out.extend(std::fs::read(dir.join(name))?);
    }
    let mut regions: Vec<PathBuf> = std::fs::read_dir(dir.join("memory"))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    regions.sort();
    for p in regions {
        let name = p.file_stem().and_then(|s| s.to_str()).unwrap_or("");
        let Some(base) = name
            .strip_prefix("region_")
            .and_then(|h| u64::from_str_radix(h, 16).ok())
        else {
            continue;
        };
        out.extend_from_slice(SEP);
        out.extend(base.to_le_bytes());
        out.extend(std::fs::read(&p)?);
    }
    Ok(out)
}

/// Open the snapshot an input describes; whatever it contains, no panic. What a successful
/// open promises is checked too: regions sorted, non-overlapping, files of the recorded size.
pub fn check(data: &[u8]) {
    let dir = scratch();
    if unflatten(data, &dir).is_err() {
        return;
    }
    let _ = serde_json::from_slice::<replay::snapshot::DispatchFile>(split(data)[0]);
    if let Ok(s) = replay::snapshot::Snapshot::open(&dir) {
        let spans: Vec<(u64, u64)> = s.regions.iter().map(|r| (r.base(), r.size())).collect();
        for w in spans.windows(2) {
            assert!(
                w[0].0 + w[0].1 <= w[1].0,
                "overlapping regions accepted: {spans:?}"
            );
        }
        for r in &s.regions {
            if let Ok(b) = r.read() {
                assert_eq!(b.len() as u64, r.size());
            }
            let _ = s.region_at(r.base());
        }
        assert_eq!(s.kernarg.len(), s.dispatch.kernarg_size as usize);
        let _ = replay::plan::plan(&spans, 4096);
        let _ = replay::variant::baseline(&s);
        let _ = (
            s.total_bytes(),
            s.missing(),
            s.processor(),
            s.kernel_display_name(),
        );
    }
}
