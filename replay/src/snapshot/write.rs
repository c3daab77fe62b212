//! Writing a version-1 snapshot: every file goes into a hidden sibling directory, JSON through
//! serde, each region streamed through blake3 as it is written; [`SnapshotWriter::finish`]
//! renames the directory into place, so a reader never sees half a snapshot (not even after
//! kill -9: what is left is the hidden `.NAME.partial-PID` directory).

use super::format::{self, DispatchFile, RegionRecord, RegionsFile, SNAPSHOT_VERSION};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// A snapshot being written.
#[derive(Debug)]
pub struct SnapshotWriter {
    dest: PathBuf,
    tmp: PathBuf,
    regions: Vec<RegionRecord>,
    kernarg_blake3: Option<String>,
    hsaco_blake3: Option<String>,
}

/// One region's file being written (see [`SnapshotWriter::begin_region`]).
pub struct RegionSink {
    record: RegionRecord,
    path: PathBuf,
    file: Option<BufWriter<File>>,
    hasher: blake3::Hasher,
    written: u64,
    error: Option<String>,
}

impl RegionSink {
    /// Append bytes of the region (in order).
    pub fn write(&mut self, bytes: &[u8]) {
        if self.error.is_some() {
            return;
        }
        self.hasher.update(bytes);
        self.written += bytes.len() as u64;
        if let Some(f) = &mut self.file {
            if let Err(e) = f.write_all(bytes) {
                self.error = Some(format!("cannot write {}: {e}", self.path.display()));
            }
        }
    }

    /// Record that the region's contents could not be read; the region stays in the snapshot
    /// with this reason and no file.
    pub fn fail(&mut self, why: impl Into<String>) {
        if self.error.is_none() {
            self.error = Some(why.into());
        }
    }
}

fn io_msg(path: &Path, e: std::io::Error) -> std::io::Error {
    std::io::Error::new(e.kind(), format!("{}: {e}", path.display()))
}

impl SnapshotWriter {
    /// Start a snapshot that will appear at `dest` (which must not exist).
    pub fn create(dest: &Path) -> std::io::Result<SnapshotWriter> {
        if dest.exists() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::AlreadyExists,
                format!("{} already exists", dest.display()),
            ));
        }
        let name = dest
            .file_name()
            .ok_or_else(|| {
                std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    format!("{}: not a directory name", dest.display()),
                )
            })?
            .to_string_lossy()
            .into_owned();
        let parent = match dest.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let tmp = parent.join(format!(".{name}.partial-{}", std::process::id()));
        if tmp.exists() {
            std::fs::remove_dir_all(&tmp).map_err(|e| io_msg(&tmp, e))?;
        }
        std::fs::create_dir_all(tmp.join(format::MEMORY_DIR)).map_err(|e| io_msg(&tmp, e))?;
        Ok(SnapshotWriter {
            dest: dest.to_path_buf(),
            tmp,
            regions: Vec::new(),
            kernarg_blake3: None,
            hsaco_blake3: None,
        })
    }

    fn write_file(&self, name: &str, bytes: &[u8]) -> std::io::Result<()> {
        let path = self.tmp.join(name);
        std::fs::write(&path, bytes).map_err(|e| io_msg(&path, e))
    }

    pub fn write_kernarg(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.write_file(format::KERNARG_BIN, bytes)?;
        self.kernarg_blake3 = Some(blake3::hash(bytes).to_hex().to_string());
        Ok(())
    }

    pub fn write_hsaco(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.write_file(format::KERNEL_HSACO, bytes)?;
        self.hsaco_blake3 = Some(blake3::hash(bytes).to_hex().to_string());
        Ok(())
    }

    /// Start writing a region's bytes.
    pub fn begin_region(&mut self, record: RegionRecord) -> RegionSink {
        let path = self.tmp.join(format::region_file(record.base));
        let (file, error) = match File::create(&path) {
            Ok(f) => (Some(BufWriter::with_capacity(1 << 20, f)), None),
            Err(e) => (None, Some(format!("cannot create {}: {e}", path.display()))),
        };
        RegionSink {
            record,
            path,
            file,
            hasher: blake3::Hasher::new(),
            written: 0,
            error,
        }
    }

    /// Finish a region: recorded with its hash, or with its copy error (and no file). Returns
    /// whether its contents were kept.
    pub fn end_region(&mut self, mut sink: RegionSink) -> bool {
        if sink.error.is_none() {
            if let Some(f) = sink.file.take() {
                if let Err(e) = f.into_inner().map_err(|e| e.into_error()) {
                    sink.error = Some(format!("cannot write {}: {e}", sink.path.display()));
                }
            }
        }
        if sink.error.is_none() && sink.written != sink.record.size {
            sink.error = Some(format!(
                "{} of {} bytes copied",
                sink.written, sink.record.size
            ));
        }
        let mut record = sink.record;
        let ok = sink.error.is_none();
        match sink.error {
            None => {
                record.blake3 = Some(sink.hasher.finalize().to_hex().to_string());
                record.copy_error = None;
            }
            Some(e) => {
                drop(sink.file.take());
                let _ = std::fs::remove_file(&sink.path);
                record.blake3 = None;
                record.copy_error = Some(e);
            }
        }
        self.regions.push(record);
        ok
    }

    /// Write the JSON files (with the hashes and the version filled in) and move the snapshot
    /// into place. Returns its final path.
    pub fn finish(self, mut dispatch: DispatchFile) -> std::io::Result<PathBuf> {
        dispatch.snapshot_version = Some(SNAPSHOT_VERSION);
        dispatch.kernarg_blake3 = self.kernarg_blake3.clone();
        dispatch.hsaco_blake3 = self.hsaco_blake3.clone();
        let mut regions = self.regions.clone();
        regions.sort_by_key(|r| r.base);
        self.write_file(format::DISPATCH_JSON, &json(&dispatch)?)?;
        self.write_file(format::REGIONS_JSON, &json(&RegionsFile { regions })?)?;
        for name in [format::DISPATCH_JSON, format::REGIONS_JSON] {
            let p = self.tmp.join(name);
            File::open(&p)
                .and_then(|f| f.sync_all())
                .map_err(|e| io_msg(&p, e))?;
        }
        if self.dest.exists() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::AlreadyExists,
                format!(
                    "{} appeared while the snapshot was written (kept in {})",
                    self.dest.display(),
                    self.tmp.display()
                ),
            ));
        }
        std::fs::rename(&self.tmp, &self.dest).map_err(|e| io_msg(&self.dest, e))?;
        Ok(self.dest)
    }

    /// Give up: remove the partial directory.
    pub fn abandon(self) {
        let _ = std::fs::remove_dir_all(&self.tmp);
    }
}

fn json<T: serde::Serialize>(v: &T) -> std::io::Result<Vec<u8>> {
    let mut out = serde_json::to_vec_pretty(v).map_err(std::io::Error::other)?;
    out.push(b'\n');
    Ok(out)
}
