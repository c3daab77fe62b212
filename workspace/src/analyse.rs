//! Parallel analysis with per-file isolation: every file is read (bounded, regular files only)
//! and analysed on a pool of large-stack threads; a panic while analysing one file becomes an
//! error for that file, and every other file is still analysed.
//!
//! Before the analysis, one pass over the files learns the run's GPU specifier macros
//! (`#define DS_D_INLINE __device__ __forceinline__` in one header, `DS_D_INLINE float f()` in a
//! file that does not include it): a file that uses one is parsed although it names no GPU
//! qualifier itself (without it, the skip of files with no GPU code would hide its loops).

use crate::resolve::Resolved;
use crate::FileError;
use guards::{Diagnostic, FileReport, Settings};
use rayon::prelude::*;
use std::path::{Path, PathBuf};
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
        let learned = GpuMacros::learn(jobs);
        jobs.par_iter()
            .map(|job| analyse(job, keep_source, checker, learned.as_ref()))
            .collect()
    }))
}

/// At most this many files of a workspace are read by [`GpuMacros::learn_dirs`].
pub const LEARN_MAX_FILES: usize = 50_000;
/// Files larger than this are not read by [`GpuMacros::learn_dirs`].
pub const LEARN_MAX_BYTES: u64 = 4 << 20;

/// The GPU specifier macros defined by the files of a run ([`frontend::gpu_specifier_defines`]),
/// found as whole identifiers in one pass over a file.
#[derive(Debug)]
pub struct GpuMacros {
    names: Vec<String>,
    finder: aho_corasick::AhoCorasick,
}

impl GpuMacros {
    /// From every job's file (read once more by the analysis; a file that cannot be read here
    /// is reported there). `None` when no file defines one.
    pub(crate) fn learn(jobs: &[Job]) -> Option<GpuMacros> {
        let paths: Vec<&Path> = jobs.iter().map(|j| j.path.as_path()).collect();
        GpuMacros::defined_in(&paths)
    }

    /// From the source files of `dirs` walked as `check DIR` walks them (ignore files
    /// honoured, `check`'s extensions; files over [`LEARN_MAX_BYTES`] left out), at most
    /// [`LEARN_MAX_FILES`] of them: what a language server learns of its workspace. `None`
    /// when no file defines one.
    pub fn learn_dirs(dirs: &[PathBuf]) -> Option<GpuMacros> {
        let mut errors = Vec::new();
        let (mut files, _) = crate::discover::collect_files(dirs, false, &mut errors);
        files.sort();
        files.truncate(LEARN_MAX_FILES);
        let paths: Vec<&Path> = files
            .iter()
            .map(|(p, _)| p.as_path())
            .filter(|p| std::fs::metadata(p).is_ok_and(|m| m.len() <= LEARN_MAX_BYTES))
            .collect();
        GpuMacros::defined_in(&paths)
    }

    /// The specifier macros the files at `paths` define (a file that cannot be read defines
    /// none), read in parallel.
    fn defined_in(paths: &[&Path]) -> Option<GpuMacros> {
        let names: Vec<String> = paths
            .par_iter()
            .flat_map_iter(|p| {
                fsio::read_source(p)
                    .map(|b| frontend::gpu_specifier_defines(&b))
                    .unwrap_or_default()
            })
            .collect();
        GpuMacros::new(names)
    }

    /// These and `more`.
    pub fn with(this: Option<&GpuMacros>, more: &[String]) -> Option<GpuMacros> {
        let mut names: Vec<String> = this.map(|g| g.names.clone()).unwrap_or_default();
        names.extend(more.iter().cloned());
        GpuMacros::new(names)
    }

    /// The names, sorted.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// From these names (sorted and deduplicated here).
    pub(crate) fn new(mut names: Vec<String>) -> Option<GpuMacros> {
        names.sort();
        names.dedup();
        if names.is_empty() {
            return None;
        }
        let finder = aho_corasick::AhoCorasick::new(&names).ok()?;
        Some(GpuMacros { names, finder })
    }

    /// The first of these names that `source` uses as a whole identifier.
    pub fn used_in(&self, source: &[u8]) -> Option<&str> {
        self.finder
            .find_overlapping_iter(source)
            .find(|m| frontend::lex::is_whole_identifier(source, m.range()))
            .map(|m| self.names[m.pattern().as_usize()].as_str())
    }
}

fn analyse(
    job: &Job,
    keep_source: bool,
    checker: Checker,
    learned: Option<&GpuMacros>,
) -> Result<Outcome, FileError> {
    let bytes = fsio::read_source(&job.path).map_err(|error| FileError::Read {
        display: job.display.clone(),
        error,
    })?;
    let mut settings = std::borrow::Cow::Borrowed(&job.resolved.settings);
    if !settings.parse_all
        && !frontend::may_contain_gpu_code(&bytes)
        && learned.is_some_and(|l| l.used_in(&bytes).is_some())
    {
        settings.to_mut().parse_all = true;
    }
    let settings = settings.as_ref();
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
