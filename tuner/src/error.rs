//! The tuner's errors. Each one is a single line for the user; all but [`Error::Interrupted`]
//! mean exit status 2 (usage, input, environment, baseline, state directory).

use std::path::Path;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Bad arguments or settings.
    #[error("{0}")]
    Usage(String),
    /// A setting's value out of its bounds: `rule` follows the setting's name (`: ...` or
    /// ` must be ...`).
    #[error("`{}`{rule}", setting.key())]
    Invalid {
        setting: crate::setting::Setting,
        rule: String,
    },
    /// A plan of measurement that cannot work.
    #[error(transparent)]
    Plan(#[from] crate::stats::PlanError),
    /// `message`, fixed by giving the setting `fix`.
    #[error("{message}; give `{}`", fix.key())]
    NeedsSetting {
        message: String,
        fix: crate::setting::Setting,
    },
    /// Another tune holds the state directory.
    #[error("another hip-unroll tune is using the state directory {path}; wait for it or choose another state directory")]
    StateBusy { path: String },
    #[error("{path}: {reason}")]
    Io { path: String, reason: String },
    #[error("the state directory {path} is not writable: {reason}")]
    StateDir { path: String, reason: String },
    #[error("the ledger {path} is not a hip-unroll ledger or is corrupt ({reason}); move it away or choose another state directory")]
    Ledger { path: String, reason: String },
    /// The state directory's disk is full: nothing is wrong with the ledger, and `--resume`
    /// continues once there is space.
    #[error("{path}: disk full (no space left on device); free some space, then resume the tune")]
    DiskFull { path: String },
    /// The baseline could not be built, run, checked or measured reliably.
    #[error("baseline: {0}")]
    Baseline(String),
    /// A missing tool or device (rocprofv3, a GPU, a compiler).
    #[error("{0}")]
    Environment(String),
    #[error("{0} changed while tune was running; nothing was applied")]
    TreeChanged(String),
    #[error("no HIP kernels (__global__ functions) in {0}")]
    NoKernels(String),
    /// Commands of an earlier, killed tune could not be ended.
    #[error(transparent)]
    Orphans(#[from] crate::orphans::ReapError),
    /// The user's files: a refused target, a bounded read, an apply rolled back part-way.
    #[error(transparent)]
    File(#[from] fsio::Error),
    /// An error a lane reported (its one line).
    #[error("{0}")]
    Lane(String),
    /// Every lane is gone (their Slurm steps ended): the state is kept for `--resume`.
    #[error("{0}")]
    LanesGone(String),
    /// Settings that do not fit together (which setting, as data: the binary names its flag).
    #[error(transparent)]
    Setup(#[from] crate::setting::SetupError),
    /// Ctrl-C: the search stopped, nothing was applied, the ledger keeps what was done.
    #[error("interrupted")]
    Interrupted,
}

/// A short reason for an I/O error (`no such file or directory`, `disk full`): fsio's one
/// wording.
pub use fsio::reason as io_reason;

/// `map_err(io_err(path))`: an I/O error on `path` ([`Error::DiskFull`] for a full disk).
pub fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |e| {
        if e.kind() == std::io::ErrorKind::StorageFull {
            Error::DiskFull {
                path: path.display().to_string(),
            }
        } else {
            Error::Io {
                path: path.display().to_string(),
                reason: io_reason(&e),
            }
        }
    }
}
