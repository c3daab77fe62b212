//! What `hip-unroll replay` and `replay reserve-check` do, start to finish, as library calls
//! returning serialisable reports: open and check the snapshot, check a variant against it
//! (before anything touches a device), then replay, time and compare.

use crate::device::{self, DeviceError, Options, Placement, Replayer, ReservationReport};
use crate::diff::{Comparison, FloatRegion, Tolerance};
use crate::snapshot::{Snapshot, SnapshotError};
use crate::stats::{self, Summary};
use crate::variant::{self, VariantError};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// One `replay` invocation.
#[derive(Debug, Clone)]
pub struct Request {
    pub dir: PathBuf,
    pub variant: Option<PathBuf>,
    pub iterations: usize,
    pub warmup: usize,
    pub recopy: bool,
    pub compare: bool,
    pub float_regions: Vec<FloatRegion>,
    pub tolerance: Tolerance,
    pub options: Options,
}

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Snapshot(#[from] SnapshotError),
    #[error(transparent)]
    Variant(#[from] VariantError),
    #[error(transparent)]
    Device(#[from] DeviceError),
    /// A setting of the request out of its bounds or unfit for the snapshot: `setting` says
    /// which (the binary names its flag), `message` the rest.
    #[error("{} {message}", .setting.noun())]
    Setting { setting: Setting, message: String },
    #[error("{0}")]
    Usage(String),
}

/// The settings a [`RunError::Setting`] can be about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Setting {
    /// The time limit of every wait for the GPU.
    Timeout,
    /// The number of timed dispatches.
    Iterations,
    /// The number of warm-up dispatches.
    Warmup,
    /// Comparing the outputs (which needs a variant).
    Compare,
    /// A region typed as floating point.
    FloatRegion,
}

impl Setting {
    /// The setting in words, for messages that do not come through the binary.
    pub fn noun(self) -> &'static str {
        match self {
            Setting::Timeout => "the time limit",
            Setting::Iterations => "the number of timed dispatches",
            Setting::Warmup => "the number of warm-up dispatches",
            Setting::Compare => "comparing outputs",
            Setting::FloatRegion => "the floating-point region",
        }
    }
}

impl RunError {
    /// A variant refused for its signature is a finding (exit 1); everything else is an input
    /// or environment error (exit 2).
    pub fn is_refusal(&self) -> bool {
        matches!(self, RunError::Variant(VariantError::Refused { .. }))
    }
}

/// Raw samples and their summary.
#[derive(Debug, Clone, Serialize)]
pub struct Timing {
    pub hsaco: String,
    pub samples_ns: Vec<u64>,
    pub summary: Option<Summary>,
}

impl Timing {
    fn new(hsaco: String, samples_ns: Vec<u64>) -> Timing {
        let summary = stats::summarize(&samples_ns);
        Timing {
            hsaco,
            samples_ns,
            summary,
        }
    }
}

/// The result of `replay`.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub snapshot: String,
    pub snapshot_version: u32,
    pub kernel: String,
    pub symbol: String,
    pub agent: String,
    pub iterations: usize,
    pub warmup: usize,
    pub recopy: bool,
    pub baseline: Timing,
    pub variant: Option<Timing>,
    /// Variant median over baseline median.
    pub ratio: Option<f64>,
    pub comparison: Option<Comparison>,
}

/// The most timed dispatches, and the most warm-up dispatches, of one replay.
pub const MAX_ITERATIONS: usize = 1_000_000;
/// The longest wait for one dispatch (one day).
pub const MAX_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(86_400);

/// A time limit from seconds (`--timeout`): positive, at most [`MAX_TIMEOUT`].
pub fn timeout_from_secs(secs: f64) -> Result<std::time::Duration, RunError> {
    if !(secs > 0.0 && secs <= MAX_TIMEOUT.as_secs_f64()) {
        return Err(RunError::Setting {
            setting: Setting::Timeout,
            message: format!(
                "must be more than 0 and at most {} seconds (got {secs:?})",
                MAX_TIMEOUT.as_secs()
            ),
        });
    }
    Ok(std::time::Duration::from_secs_f64(secs))
}

/// The request's own bounds, checked before the snapshot is read.
fn check_settings(req: &Request) -> Result<(), RunError> {
    if req.iterations == 0 || req.iterations > MAX_ITERATIONS {
        return Err(RunError::Setting {
            setting: Setting::Iterations,
            message: format!("must be 1 to {MAX_ITERATIONS} (got {})", req.iterations),
        });
    }
    if req.warmup > MAX_ITERATIONS {
        return Err(RunError::Setting {
            setting: Setting::Warmup,
            message: format!("must be 0 to {MAX_ITERATIONS} (got {})", req.warmup),
        });
    }
    let t = req.options.timeout;
    if t.is_zero() || t > MAX_TIMEOUT {
        return Err(RunError::Usage(format!(
            "the dispatch time limit must be more than 0 and at most {} seconds (got {} s)",
            MAX_TIMEOUT.as_secs(),
            t.as_secs_f64()
        )));
    }
    Ok(())
}

fn check_request(req: &Request, s: &Snapshot) -> Result<(), RunError> {
    if req.compare && req.variant.is_none() {
        return Err(RunError::Setting {
            setting: Setting::Compare,
            message: "needs a variant code object".into(),
        });
    }
    for f in &req.float_regions {
        if !s.regions.iter().any(|r| r.base() == f.base) {
            let bases: Vec<String> = s
                .regions
                .iter()
                .take(8)
                .map(|r| format!("{:#x}", r.base()))
                .collect();
            return Err(RunError::Setting {
                setting: Setting::FloatRegion,
                message: format!(
                    "{:#x}: no region of the snapshot starts there (regions start at {}{})",
                    f.base,
                    bases.join(", "),
                    if s.regions.len() > 8 { ", ..." } else { "" }
                ),
            });
        }
    }
    Ok(())
}

/// Replay a snapshot (and a variant), time it, and compare outputs when asked.
pub fn replay(req: &Request) -> Result<Report, RunError> {
    check_settings(req)?;
    let s = Snapshot::open(&req.dir)?;
    check_request(req, &s)?;
    // The variant is checked against the snapshot before anything runs.
    let prepared = match &req.variant {
        Some(p) => Some(variant::variant(&s, p)?),
        None => None,
    };
    let kernel = s.kernel_display_name().to_string();
    let symbol = s.dispatch.mangled_name.clone();
    let version = s.version;
    let baseline_path = s
        .dir
        .join(crate::snapshot::format::KERNEL_HSACO)
        .display()
        .to_string();
    let mut r = Replayer::open(s, req.options.clone())?;
    let agent = r.agent_name().to_string();
    let base = r.baseline();
    let (baseline, variant, comparison) = match &prepared {
        None => {
            let t = r.time(base, req.iterations, req.warmup, req.recopy)?;
            (Timing::new(baseline_path, t), None, None)
        }
        Some(p) => {
            let v = r.load(p)?;
            let comparison = if req.compare {
                Some(r.compare(base, v, &req.float_regions, req.tolerance)?)
            } else {
                None
            };
            let (ta, tb) = r.time_pair(base, v, req.iterations, req.warmup, req.recopy)?;
            let path = p
                .path
                .as_ref()
                .map(|p| p.display().to_string())
                .unwrap_or_default();
            (
                Timing::new(baseline_path, ta),
                Some(Timing::new(path, tb)),
                comparison,
            )
        }
    };
    let ratio = match (
        &baseline.summary,
        variant.as_ref().and_then(|v| v.summary.as_ref()),
    ) {
        (Some(a), Some(b)) if a.median_ns > 0.0 => Some(b.median_ns / a.median_ns),
        _ => None,
    };
    Ok(Report {
        snapshot: req.dir.display().to_string(),
        snapshot_version: version,
        kernel,
        symbol,
        agent,
        iterations: req.iterations,
        warmup: req.warmup,
        recopy: req.recopy,
        baseline,
        variant,
        ratio,
        comparison,
    })
}

/// The result of `replay reserve-check`.
#[derive(Debug, Clone, Serialize)]
pub struct ReserveReport {
    pub snapshot: String,
    pub agent: String,
    pub granule: u64,
    pub regions: usize,
    pub bytes: u64,
    pub reservations: Vec<ReservationReport>,
}

/// `reserve-check`'s verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Every range reserved at its captured address (exit 0).
    Exact,
    /// Some reservation failed outright (exit 1).
    Failed,
    /// None failed, some came back at another address (exit 2).
    Relocated,
}

impl ReserveReport {
    pub fn verdict(&self) -> Verdict {
        if self
            .reservations
            .iter()
            .any(|r| matches!(r.placement, Placement::Failed { .. }))
        {
            Verdict::Failed
        } else if self
            .reservations
            .iter()
            .any(|r| matches!(r.placement, Placement::Relocated { .. }))
        {
            Verdict::Relocated
        } else {
            Verdict::Exact
        }
    }
}

/// Can every captured range be reserved at its address on this machine?
pub fn reserve_check(dir: &Path, options: &Options) -> Result<ReserveReport, RunError> {
    let s = Snapshot::open(dir)?;
    let (agent, granule, reservations) = device::reserve_check(&s, options)?;
    Ok(ReserveReport {
        snapshot: dir.display().to_string(),
        agent,
        granule,
        regions: s.regions.len(),
        bytes: s.total_bytes(),
        reservations,
    })
}
