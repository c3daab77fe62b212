//! A snapshot of one kernel dispatch on disk: reading (rocm-perf-lab's version 0 and
//! hip-unroll's version 1) with every check that makes a replay trustworthy, and writing
//! ([`write::SnapshotWriter`]). Reading a snapshot that is truncated or inconsistent fails with
//! a [`SnapshotError`] naming the file and what disagrees; nothing is guessed.

pub mod format;
pub mod write;

pub use format::{DispatchFile, RegionRecord, RegionsFile, SNAPSHOT_VERSION};

use crate::aql::{self, Geometry};
use crate::hsaco;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Why a snapshot cannot be used. Every message names the snapshot file it is about.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    #[error("{path}: {error}")]
    Io { path: String, error: std::io::Error },
    #[error("{path}: malformed JSON: {error}")]
    Json {
        path: String,
        error: serde_json::Error,
    },
    #[error("{path}: snapshot version {found} is newer than this hip-unroll reads (up to {SNAPSHOT_VERSION})")]
    Version { path: String, found: u32 },
    #[error(
        "{path}: truncated or padded: {expected} bytes expected ({why}), the file has {found}"
    )]
    Size {
        path: String,
        expected: u64,
        found: u64,
        why: String,
    },
    #[error("{path}: blake3 {found} differs from the {recorded} recorded in {record}")]
    Hash {
        path: String,
        recorded: String,
        found: String,
        record: String,
    },
    #[error("{path}: regions {a} and {b} overlap")]
    Overlap { path: String, a: String, b: String },
    #[error("{path}: {what}")]
    Region { path: String, what: String },
    #[error("{path}: {what}")]
    Kernel { path: String, what: String },
    #[error("{path}: kernarg_size {snapshot} disagrees with the code object's .kernarg_segment_size {metadata} for `{kernel}`")]
    KernargSize {
        path: String,
        kernel: String,
        snapshot: u32,
        metadata: u32,
    },
    #[error("{path}: {what}")]
    Dispatch { path: String, what: String },
    #[error("{path}: captured while earlier work on the queue was still running: {why}")]
    NotDrained { path: String, why: String },
}

/// Where a region's bytes are.
#[derive(Debug, Clone, PartialEq)]
pub enum Contents {
    /// In `path`, with this blake3 (checked when the snapshot was opened).
    File { path: PathBuf, blake3: String },
    /// The capture could not copy them (recorded, never dropped).
    Missing { error: String },
}

/// One region of a snapshot.
#[derive(Debug, Clone, PartialEq)]
pub struct Region {
    pub record: RegionRecord,
    pub contents: Contents,
}

impl Region {
    pub fn base(&self) -> u64 {
        self.record.base
    }
    pub fn size(&self) -> u64 {
        self.record.size
    }
    pub fn label(&self) -> String {
        label(self.record.base, self.record.size)
    }
    /// The region's bytes.
    pub fn read(&self) -> std::io::Result<Vec<u8>> {
        match &self.contents {
            // Regular files only, of any size: the snapshot's own record bounds it.
            Contents::File { path, .. } => {
                fsio::read(path, u64::MAX, "a memory region").map_err(fsio::Error::into_io)
            }
            Contents::Missing { error } => Err(std::io::Error::other(format!(
                "region {} was not captured: {error}",
                self.label()
            ))),
        }
    }
}

/// `0x7f00..0x7f40 (64 bytes)`.
pub fn label(base: u64, size: u64) -> String {
    format!(
        "{:#x}..{:#x} ({size} bytes)",
        base,
        base.saturating_add(size)
    )
}

/// A snapshot that passed every check.
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub dir: PathBuf,
    /// 0 for rocm-perf-lab's captures.
    pub version: u32,
    pub dispatch: DispatchFile,
    pub geometry: Geometry,
    pub kernarg: Vec<u8>,
    /// `kernel.hsaco` as captured.
    pub hsaco: Vec<u8>,
    pub kernarg_blake3: String,
    pub hsaco_blake3: String,
    /// The code object's target id (`gfx90a:sramecc+:xnack-`).
    pub target_id: String,
    /// The dispatched kernel's metadata, found by its symbol.
    pub kernel: codeobj::KernelMeta,
    /// Sorted by base, non-overlapping.
    pub regions: Vec<Region>,
}

impl Snapshot {
    /// Read and check the snapshot in `dir`.
    pub fn open(dir: &Path) -> Result<Snapshot, SnapshotError> {
        open(dir)
    }

    /// The processor to load code objects for: the ISA the dispatch ran on, else the code
    /// object's own.
    pub fn processor(&self) -> &str {
        match hsaco::processor(&self.dispatch.isa_name) {
            "" => hsaco::processor(&self.target_id),
            p => p,
        }
    }

    /// The name to show: demangled when known.
    pub fn kernel_display_name(&self) -> &str {
        if self.dispatch.demangled_name.is_empty() {
            &self.dispatch.mangled_name
        } else {
            &self.dispatch.demangled_name
        }
    }

    pub fn total_bytes(&self) -> u64 {
        self.regions.iter().map(|r| r.size()).sum()
    }

    /// The regions whose contents the capture could not copy.
    pub fn missing(&self) -> Vec<&Region> {
        self.regions
            .iter()
            .filter(|r| matches!(r.contents, Contents::Missing { .. }))
            .collect()
    }

    /// The region containing `addr`, if any.
    pub fn region_at(&self, addr: u64) -> Option<&Region> {
        let i = self.regions.partition_point(|r| r.base() <= addr);
        let r = self.regions.get(i.checked_sub(1)?)?;
        (addr < r.record.end()).then_some(r)
    }
}

fn path_str(p: &Path) -> String {
    p.display().to_string()
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> SnapshotError + '_ {
    move |error| SnapshotError::Io {
        path: path_str(path),
        error,
    }
}

fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, SnapshotError> {
    let bytes = fsio::read(path, fsio::TEXT_CAP, "a snapshot's JSON file")
        .map_err(|e| io(path)(e.into_io()))?;
    serde_json::from_slice(&bytes).map_err(|error| SnapshotError::Json {
        path: path_str(path),
        error,
    })
}

/// blake3 of a file, streamed, and its length.
fn hash_file(path: &Path) -> Result<(String, u64), SnapshotError> {
    fsio::regular(path).map_err(|e| io(path)(e.into_io()))?;
    let mut f = std::fs::File::open(path).map_err(io(path))?;
    let mut h = blake3::Hasher::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut len = 0u64;
    loop {
        let n = f.read(&mut buf).map_err(io(path))?;
        if n == 0 {
            break;
        }
        len += n as u64;
        h.update(&buf[..n]);
    }
    Ok((h.finalize().to_hex().to_string(), len))
}

fn hex(bytes: &[u8]) -> String {
    blake3::hash(bytes).to_hex().to_string()
}

fn check_hash(
    path: &Path,
    recorded: Option<&String>,
    found: &str,
    record: &str,
    version: u32,
) -> Result<(), SnapshotError> {
    match recorded {
        Some(r) if !r.eq_ignore_ascii_case(found) => Err(SnapshotError::Hash {
            path: path_str(path),
            recorded: r.clone(),
            found: found.to_string(),
            record: record.to_string(),
        }),
        None if version >= 1 => Err(SnapshotError::Region {
            path: path_str(path),
            what: format!("no blake3 recorded in {record} (version {version} records one)"),
        }),
        _ => Ok(()),
    }
}

fn open(dir: &Path) -> Result<Snapshot, SnapshotError> {
    let dispatch_path = dir.join(format::DISPATCH_JSON);
    if !dir.is_dir() {
        return Err(SnapshotError::Io {
            path: path_str(dir),
            error: std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "not a snapshot directory (no such directory)",
            ),
        });
    }
    let dispatch: DispatchFile = read_json(&dispatch_path)?;
    let version = dispatch.snapshot_version.unwrap_or(0);
    if version > SNAPSHOT_VERSION {
        return Err(SnapshotError::Version {
            path: path_str(&dispatch_path),
            found: version,
        });
    }
    let dispatch_err = |what: String| SnapshotError::Dispatch {
        path: path_str(&dispatch_path),
        what,
    };
    if dispatch.mangled_name.is_empty() {
        return Err(dispatch_err("mangled_name is empty".into()));
    }
    if dispatch.drained == Some(false) {
        return Err(SnapshotError::NotDrained {
            path: path_str(&dispatch_path),
            why: dispatch
                .drain_error
                .clone()
                .unwrap_or_else(|| "no reason recorded".into()),
        });
    }
    let mut block = [0u16; 3];
    for (d, &b) in dispatch.block.iter().enumerate() {
        block[d] = u16::try_from(b).map_err(|_| {
            dispatch_err(format!("block[{d}] = {b} does not fit a packet's 16 bits"))
        })?;
    }
    let geometry = Geometry::new(dispatch.grid, block, dispatch.setup_dimensions);
    aql::check_geometry(&geometry).map_err(dispatch_err)?;

    // kernarg.bin
    let kernarg_path = dir.join(format::KERNARG_BIN);
    let kernarg = fsio::read(&kernarg_path, fsio::TEXT_CAP, "kernel arguments")
        .map_err(|e| io(&kernarg_path)(e.into_io()))?;
    if kernarg.len() as u64 != dispatch.kernarg_size as u64 {
        return Err(SnapshotError::Size {
            path: path_str(&kernarg_path),
            expected: dispatch.kernarg_size as u64,
            found: kernarg.len() as u64,
            why: "kernarg_size in dispatch.json".into(),
        });
    }
    let kernarg_blake3 = hex(&kernarg);
    check_hash(
        &kernarg_path,
        dispatch.kernarg_blake3.as_ref(),
        &kernarg_blake3,
        "dispatch.json",
        version,
    )?;

    // kernel.hsaco and the kernel it must define.
    let hsaco_path = dir.join(format::KERNEL_HSACO);
    let hsaco = fsio::read(&hsaco_path, fsio::OBJECT_CAP, "a code object")
        .map_err(|e| io(&hsaco_path)(e.into_io()))?;
    let hsaco_blake3 = hex(&hsaco);
    check_hash(
        &hsaco_path,
        dispatch.hsaco_blake3.as_ref(),
        &hsaco_blake3,
        "dispatch.json",
        version,
    )?;
    let kernel_err = |what: String| SnapshotError::Kernel {
        path: path_str(&hsaco_path),
        what,
    };
    let objects = codeobj::read(&hsaco, &path_str(&hsaco_path))
        .map_err(|e| kernel_err(format!("not a readable code object: {e}")))?;
    let (co, k) = hsaco::find_kernel(&objects, &dispatch.isa_name, &dispatch.mangled_name)
        .map_err(kernel_err)?;
    if k.meta.kernarg_segment_size != dispatch.kernarg_size {
        return Err(SnapshotError::KernargSize {
            path: path_str(&dispatch_path),
            kernel: k.meta.name.clone(),
            snapshot: dispatch.kernarg_size,
            metadata: k.meta.kernarg_segment_size,
        });
    }
    if dispatch.group_segment_size < k.meta.group_segment_fixed_size {
        return Err(dispatch_err(format!(
            "group_segment_size {} is less than the kernel's static LDS ({} bytes)",
            dispatch.group_segment_size, k.meta.group_segment_fixed_size
        )));
    }
    if dispatch.private_segment_size < k.meta.private_segment_fixed_size {
        return Err(dispatch_err(format!(
            "private_segment_size {} is less than the kernel's fixed scratch ({} bytes per work-item)",
            dispatch.private_segment_size, k.meta.private_segment_fixed_size
        )));
    }
    let threads: u32 = block.iter().map(|&b| b as u32).product();
    if threads > k.meta.max_flat_workgroup_size && k.meta.max_flat_workgroup_size > 0 {
        return Err(dispatch_err(format!(
            "a work-group of {threads} work-items exceeds the kernel's .max_flat_workgroup_size {}",
            k.meta.max_flat_workgroup_size
        )));
    }
    let target_id = co.target_id.clone();
    let kernel = k.meta.clone();

    // memory_regions.json and the region files.
    let regions_path = dir.join(format::REGIONS_JSON);
    let file: RegionsFile = read_json(&regions_path)?;
    let mut records = file.regions;
    records.sort_by_key(|r| (r.base, r.size));
    for r in &records {
        let what = if r.size == 0 {
            Some("has size 0".to_string())
        } else if r.base.checked_add(r.size).is_none() {
            Some("ends past the 64-bit address space".to_string())
        } else {
            None
        };
        if let Some(what) = what {
            return Err(SnapshotError::Region {
                path: path_str(&regions_path),
                what: format!("region at {:#x} {what}", r.base),
            });
        }
    }
    for w in records.windows(2) {
        if w[1].base < w[0].end() {
            return Err(SnapshotError::Overlap {
                path: path_str(&regions_path),
                a: label(w[0].base, w[0].size),
                b: label(w[1].base, w[1].size),
            });
        }
    }
    let mut regions = Vec::with_capacity(records.len());
    for r in records {
        let path = dir.join(format::region_file(r.base));
        let contents = match &r.copy_error {
            Some(error) => Contents::Missing {
                error: error.clone(),
            },
            None => {
                let len = std::fs::metadata(&path).map_err(io(&path))?.len();
                if len != r.size {
                    return Err(SnapshotError::Size {
                        path: path_str(&path),
                        expected: r.size,
                        found: len,
                        why: format!("size of region {:#x} in memory_regions.json", r.base),
                    });
                }
                let (blake3, len) = hash_file(&path)?;
                if len != r.size {
                    return Err(SnapshotError::Size {
                        path: path_str(&path),
                        expected: r.size,
                        found: len,
                        why: "the file changed while it was read".into(),
                    });
                }
                check_hash(
                    &path,
                    r.blake3.as_ref(),
                    &blake3,
                    "memory_regions.json",
                    version,
                )?;
                Contents::File { path, blake3 }
            }
        };
        regions.push(Region {
            record: r,
            contents,
        });
    }
    Ok(Snapshot {
        dir: dir.to_path_buf(),
        version,
        dispatch,
        geometry,
        kernarg,
        hsaco,
        kernarg_blake3,
        hsaco_blake3,
        target_id,
        kernel,
        regions,
    })
}
