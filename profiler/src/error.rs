//! The profiler crate's error type: one variant per way an input or a run can fail.
//!
//! Each message states its cause itself (`path: reason`), so no variant also exposes that cause
//! as its `source()`: printed with its chain (anyhow's `{:#}`), a reason would appear twice.

use std::path::PathBuf;

/// Everything that can go wrong while running a profiler or reading its output.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{}: {error}", path.display())]
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("{}: not a rocpd database: {reason}", path.display())]
    NotRocpd { path: PathBuf, reason: String },
    #[error("{}: unsupported rocpd schema version {version:?} (this reader knows schema 3.x, written by rocprofv3 1.0+/ROCm 7.x)", path.display())]
    SchemaVersion { path: PathBuf, version: String },
    #[error("{}: SQLite error: {error}", path.display())]
    Sqlite {
        path: PathBuf,
        error: rusqlite::Error,
    },
    #[error("{}: empty CSV file (no header row)", path.display())]
    EmptyCsv { path: PathBuf },
    #[error("{}: malformed CSV: {reason}", path.display())]
    BadCsv { path: PathBuf, reason: String },
    #[error("{}: unrecognised CSV header ({header}); expected a rocprofv3 kernel trace, kernel stats or counter collection, a rocprof results.csv, or rocprof-compute timestamps.csv/pmc_perf.csv", path.display())]
    UnknownCsv { path: PathBuf, header: String },
    #[error("{}: no profiler output found (looked for *_results.db, *_kernel_trace.csv, *_kernel_stats.csv, results*.csv, timestamps.csv, pmc_perf.csv)", path.display())]
    NothingFound { path: PathBuf },
    #[error("{}: unsupported input (expected a rocpd .db, a .csv, or a directory)", path.display())]
    UnknownInput { path: PathBuf },
    #[error("inputs mix different tools ({first} and {second}); read them separately")]
    MixedSources {
        first: &'static str,
        second: &'static str,
    },
    #[error("no kernel dispatches found in {what}")]
    NoKernels { what: String },
    #[error("neither rocprofv3 nor rocprof was found on PATH; install ROCm's rocprofiler-sdk (rocprofv3) or pass --from with existing profiler output")]
    NoProfiler,
    #[error("failed to start {program}: {error}")]
    Spawn {
        program: String,
        error: std::io::Error,
    },
    #[error("{program} did not finish within {secs} s and was killed")]
    Timeout { program: String, secs: u64 },
    #[error("{program} failed ({status}); last lines of its output:\n{tail}")]
    ProfilerFailed {
        program: String,
        status: String,
        tail: String,
    },
    #[error("invalid kernel regex: {0}")]
    Regex(regex::Error),
    #[error(
        "unknown counter preset {0:?} (expected lightweight, kernel, compute, memory or full)"
    )]
    UnknownPreset(String),
    #[error("unknown GPU {0:?} for the roofline (expected mi210, mi250x or mi300x)")]
    UnknownGpu(String),
}

impl From<regex::Error> for Error {
    fn from(e: regex::Error) -> Self {
        Error::Regex(e)
    }
}

pub type Result<T> = std::result::Result<T, Error>;

pub(crate) fn io(path: &std::path::Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |error| Error::Io {
        path: path.to_path_buf(),
        error,
    }
}
