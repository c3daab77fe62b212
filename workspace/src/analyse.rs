//! Parallel analysis with per-file isolation: every file is read (bounded, regular files only)
//! and analysed on a pool of large-stack threads; a panic while analysing one file becomes an
//! error for that file, and every other file is still analysed.

use crate::resolve::Resolved;
use crate::FileError;
use guards::{Diagnostic, FileReport, Settings};
use rayon::prelude::*;
use std::path::PathBuf;
use std::sync::Arc;

/// Stack of each analysis thread: deeply nested input must not overflow it.
const STACK_SIZE: usize = 256 << 20;
const WORKER_PREFIX: &str = "hip-unroll-check-";

/// One file to analyse.
pub(crate) struct Job {
    pub path: PathBuf,
    pub display: String,
    pub resolved: Arc<Resolved>,
}

/// The analysis of one file (`guards::check_source`; tests substitute their own).
pub(crate) type Checker = fn(&str, &[u8], &Settings) -> (FileReport, Vec<Diagnostic>);

/// What analysing one file gave.
pub(crate) struct Outcome {
    pub report: FileReport,
    pub diagnostics: Vec<Diagnostic>,
    /// Kept only when asked for (code frames, SARIF regions, fixes) and there are findings.
    pub source: Option<Vec<u8>>,
}

/// Analyse every job on a pool of large-stack threads; each file's panic is caught and becomes
/// an error for that file. Results come back in `jobs` order.
pub(crate) fn analyse_all(
    jobs: &[Job],
    threads: Option<std::num::NonZeroUsize>,
    keep_source: bool,
    checker: Checker,
) -> Result<Vec<Result<Outcome, FileError>>, rayon::ThreadPoolBuildError> {
    if jobs.is_empty() {
        return Ok(Vec::new());
    }
    let threads = threads
        .or_else(|| std::thread::available_parallelism().ok())
        .map_or(1, |n| n.get())
        .min(jobs.len());
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .stack_size(STACK_SIZE)
        .thread_name(|i| format!("{WORKER_PREFIX}{i}"))
        .build()?;
    Ok(pool.install(|| {
        jobs.par_iter()
            .map(|job| analyse(job, keep_source, checker))
            .collect()
    }))
}

fn analyse(job: &Job, keep_source: bool, checker: Checker) -> Result<Outcome, FileError> {
    let bytes = fsio::read_source(&job.path).map_err(|error| FileError::Read {
        display: job.display.clone(),
        error,
    })?;
    let settings = &job.resolved.settings;
    match crate::panics::catch(|| checker(&job.display, &bytes, settings)) {
        Ok((report, diagnostics)) => {
            let source = (keep_source && !diagnostics.is_empty()).then_some(bytes);
            Ok(Outcome {
                report,
                diagnostics,
                source,
            })
        }
        Err(caught) => Err(FileError::Panic {
            display: job.display.clone(),
            at: caught.at,
            message: caught.message,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discover::display_path;

    fn job(path: PathBuf) -> Job {
        Job {
            display: display_path(&path),
            path,
            resolved: Arc::new(Resolved::plain()),
        }
    }

    /// Panics in `boom.cu`, recurses 100,000 frames deep in `deep.cu`, reports one loop-free
    /// function elsewhere.
    fn fragile(path: &str, source: &[u8], _: &Settings) -> (FileReport, Vec<Diagnostic>) {
        fn recurse(n: u32) -> u32 {
            let pad = std::hint::black_box([n; 64]);
            if n == 0 {
                0
            } else {
                1 + recurse(n - 1) + pad[63] - n
            }
        }
        if path.ends_with("boom.cu") {
            panic!("malformed thing at byte {}", source.len());
        }
        let depth = if path.ends_with("deep.cu") {
            recurse(100_000)
        } else {
            0
        };
        let report = FileReport {
            path: path.into(),
            parse_errors: depth as usize,
            parse_error_locations: Vec::new(),
            parsed: true,
            functions: vec![],
        };
        (report, vec![])
    }

    #[test]
    fn a_panicking_file_becomes_an_error_for_that_file_only() {
        let dir = tempfile::tempdir().unwrap();
        let mut jobs = Vec::new();
        for name in ["a.cu", "boom.cu", "deep.cu", "missing.cu"] {
            if name != "missing.cu" {
                std::fs::write(dir.path().join(name), "x").unwrap();
            }
            jobs.push(job(dir.path().join(name)));
        }
        let out = analyse_all(&jobs, None, true, fragile).unwrap();
        assert_eq!(out.len(), 4);
        assert!(out[0].is_ok());
        let e = out[1].as_ref().err().unwrap().to_string();
        assert!(
            e.contains("boom.cu")
                && e.contains("malformed thing at byte 1")
                && e.contains("analyse.rs"),
            "{e}"
        );
        assert_eq!(
            out[2].as_ref().unwrap().report.parse_errors,
            100_000,
            "large stacks"
        );
        let e = out[3].as_ref().err().unwrap().to_string();
        assert!(
            e.contains("missing.cu") && e.contains("no such file"),
            "{e}"
        );
    }
}
