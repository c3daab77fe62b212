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
    /// Every dispatch read ends before it starts: the timestamps are wrong, not missing.
    #[error("every kernel dispatch in {what} ends before it starts ({count} with end < start): the timestamps are unusable")]
    AllInverted { what: String, count: usize },
    /// A query ran past the time limit (a view that never ends, such as a recursive one).
    #[error("{}: reading the database took longer than {secs} s and was stopped (a view that never ends?)", path.display())]
    QueryTimeout { path: PathBuf, secs: u64 },
    /// No profiler to run (the binary names the option that reads existing output instead).
    #[error("neither rocprofv3 nor rocprof was found on PATH; install ROCm's rocprofiler-sdk (rocprofv3) or read existing profiler output")]
    NoProfiler,
    #[error("failed to start {program}: {error}")]
    Spawn {
        program: String,
        error: std::io::Error,
    },
    #[error("{program} did not finish within {secs} s and was killed")]
    Timeout { program: String, secs: u64 },
    /// One line: the first error line of the output (else its last line); the whole output is
    /// in `log`.
    #[error("{program} failed ({status}): {} (full output: {})", summary_line(.tail), .log.display())]
    ProfilerFailed {
        program: String,
        status: String,
        /// The last lines of its output.
        tail: String,
        log: std::path::PathBuf,
    },
    #[error("invalid kernel regex: {}", regex_reason(.0))]
    Regex(regex::Error),
    /// The profiler's time limit is out of bounds (the binary names its flag).
    #[error("the time limit must be more than 0 and at most 86400 seconds (got {0})")]
    BadTimeout(f64),
    #[error(
        "unknown counter preset {0:?} (expected lightweight, kernel, compute, memory or full)"
    )]
    UnknownPreset(String),
    #[error("unknown GPU {0:?} for the roofline (expected mi210, mi250x or mi300x)")]
    UnknownGpu(String),
    /// No kernel of the profile matches the kernel regex (the pattern).
    #[error("no kernel matches {0:?}")]
    NoKernelMatches(String),
}

/// The regex crate's syntax errors are a code frame (pattern, caret, reason): keep the reason.
pub fn regex_reason(e: &regex::Error) -> String {
    match e {
        regex::Error::Syntax(text) => {
            let lines: Vec<&str> = text
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .collect();
            let reason = lines
                .iter()
                .rev()
                .find_map(|l| l.strip_prefix("error: "))
                .unwrap_or(lines.last().copied().unwrap_or(""));
            reason.to_string()
        }
        other => other.to_string().lines().next().unwrap_or("").to_string(),
    }
}

fn summary_line(tail: &str) -> String {
    tail.lines()
        .map(str::trim)
        .find(|l| l.contains("error") || l.contains("ERROR"))
        .or_else(|| tail.lines().rev().map(str::trim).find(|l| !l.is_empty()))
        .unwrap_or("no output")
        .to_string()
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
