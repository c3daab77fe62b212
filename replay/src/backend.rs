//! What a replay measurement backend needs, so that the tuner's `Backend` (issue 11) is a thin
//! adapter: [`Session::prepare`] compiles a variant source through codeobj's content-hash cache,
//! checks its kernel against the snapshot's, loads it, replays baseline and variant once each
//! on identical memory and compares every written region; [`Session::sample`] is one timed
//! replay on restored memory (lower is better). The search never sees any of this.

use crate::device::{DeviceError, KernelId, Options, Replayer};
use crate::diff::{Comparison, FloatRegion, Tolerance};
use crate::snapshot::{Snapshot, SnapshotError};
use crate::variant::{self, VariantError};
use codeobj::compile::{CompileError, Compiler};
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    #[error(transparent)]
    Snapshot(#[from] SnapshotError),
    #[error(transparent)]
    Compile(#[from] CompileError),
    /// The variant's kernel cannot stand in for the captured one (refused, not measured).
    #[error(transparent)]
    Variant(#[from] VariantError),
    #[error(transparent)]
    Device(#[from] DeviceError),
    /// The variant ran but wrote different outputs (or the baseline is not deterministic).
    #[error("{variant}: outputs differ from the baseline's: {}", .comparison.differences.iter().chain(&.comparison.unstable).map(|d| d.to_string()).collect::<Vec<_>>().join("; "))]
    Mismatch {
        variant: String,
        comparison: Comparison,
    },
}

/// A prepared variant.
#[derive(Debug, Clone)]
pub struct Variant {
    pub id: KernelId,
    pub source: PathBuf,
    /// The compiled object (in the cache).
    pub object: PathBuf,
    pub cached: bool,
    pub comparison: Comparison,
}

/// One snapshot replayed for a whole tuning session.
pub struct Session {
    replayer: Replayer,
    compiler: Compiler,
    float_regions: Vec<FloatRegion>,
    tolerance: Tolerance,
}

impl Session {
    /// Open the snapshot and set up the replay (memory reserved and restored, the captured
    /// kernel loaded).
    pub fn open(
        dir: &Path,
        options: Options,
        compiler: Compiler,
        float_regions: Vec<FloatRegion>,
        tolerance: Tolerance,
    ) -> Result<Session, BackendError> {
        let snapshot = Snapshot::open(dir)?;
        let replayer = Replayer::open(snapshot, options)?;
        Ok(Session {
            replayer,
            compiler,
            float_regions,
            tolerance,
        })
    }

    /// The captured kernel.
    pub fn baseline(&self) -> KernelId {
        self.replayer.baseline()
    }

    /// Compile `source`, check and load its kernel, and accept it only if one replay of it
    /// writes what one replay of the baseline writes.
    pub fn prepare(&mut self, source: &Path) -> Result<Variant, BackendError> {
        let compiled = self.compiler.compile(source)?;
        let prepared = variant::variant(self.replayer.snapshot(), &compiled.object)?;
        let id = self.replayer.load(&prepared)?;
        let base = self.replayer.baseline();
        let comparison = self
            .replayer
            .compare(base, id, &self.float_regions, self.tolerance)?;
        if !comparison.identical() {
            return Err(BackendError::Mismatch {
                variant: source.display().to_string(),
                comparison,
            });
        }
        Ok(Variant {
            id,
            source: source.to_path_buf(),
            object: compiled.object,
            cached: compiled.cached,
            comparison,
        })
    }

    /// One timed replay of a prepared kernel (or the baseline) on restored memory, in ns.
    pub fn sample(&mut self, id: KernelId) -> Result<u64, BackendError> {
        self.replayer.restore()?;
        Ok(self.replayer.run(id)?)
    }
}
