//! `check` over a tree of files, as ruff's `ruff_workspace`: which files to analyse
//! (`discover`: explicit files and `ignore`-crate walks by extension), the settings of each
//! file (`resolve`: the nearest `hip-unroll.toml` per directory merged under the caller's
//! options), their parallel analysis with per-file panic isolation (`analyse`), the fix loop
//! (`fix`), and the exit-status policy ([`Checked::status`]). It returns data; the binary
//! renders it and turns errors and statuses into messages and exit codes.

mod analyse;
mod discover;
mod fix;
pub mod panics;
mod resolve;

pub use analyse::{GpuMacros, LEARN_MAX_BYTES, LEARN_MAX_FILES};
pub use discover::{display_path, has_source_extension, EXTENSIONS};
pub use fix::{Edited, FileChange, FixMode, FixSummary};
pub use resolve::{file_settings, rule_ids, severity, validate_rules, FileSettings};

use config::FailOn;
use guards::CheckOutput;
use std::collections::HashMap;
use std::path::PathBuf;

/// What to check and how; `None` options defer to each file's config.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Files or directories (empty: `.`).
    pub paths: Vec<PathBuf>,
    /// Rules to run (replaces the config's `select`).
    pub select: Option<Vec<String>>,
    /// Rules turned off (replaces the config's `ignore`).
    pub ignore: Option<Vec<String>>,
    /// The least severity that fails (else the config's `fail-on`, else warning).
    pub fail_on: Option<FailOn>,
    /// `candidate` hints on or off (else the config's `hints`, else off).
    pub hints: Option<bool>,
    /// Parse every file, also those the byte pre-filter would skip.
    pub parse_all: bool,
    /// This config file for every file instead of finding one upward from each.
    pub config: Option<PathBuf>,
    /// Do not honour .gitignore, .ignore and git exclude files.
    pub no_ignore: bool,
    /// Apply the config's `exclude` also to files named explicitly.
    pub force_exclude: bool,
    /// Attach register/occupancy figures from this code object (not with a non-writing fix).
    pub hsaco: Option<PathBuf>,
    /// Apply fixes (write them, or collect them for a diff).
    pub fix: Option<FixMode>,
    /// Keep the source of each file with findings (for code frames and SARIF regions).
    pub keep_sources: bool,
    /// `-I` directories for `#include "..."` (after the including file's own directory, before
    /// `[check] include-dirs` and the `-I` of `[compile]`/`[tune]`).
    pub include: Vec<PathBuf>,
    /// Macros for the guards' view of every file (`-D`/`-U`), after those of each file's
    /// config (`[compile] command`, `[tune] compile-flags`).
    pub defines: frontend::tu::Defines,
    /// Analysis threads (`None`: one per core, at most one per file). The report is the same
    /// bytes at any count.
    pub threads: Option<std::num::NonZeroUsize>,
}

/// Why the whole check could not run (per-file problems are [`FileError`]s instead).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Config(#[from] config::Error),
    #[error("unknown rule id{} in {origin}: {} (known rule ids: {})", if named.len() == 1 { "" } else { "s" }, named.join(", "), known.join(", "))]
    UnknownRules {
        origin: String,
        /// Each unknown id, with a `did you mean` when one is close.
        named: Vec<String>,
        known: Vec<String>,
    },
    #[error("{}", match pattern { Some(p) => format!("invalid {key} pattern {p:?} in {origin}"), None => format!("invalid {key} patterns in {origin}") })]
    Pattern {
        key: &'static str,
        pattern: Option<String>,
        origin: String,
        #[source]
        source: ignore::Error,
    },
    #[error("cannot start analysis threads")]
    Threads(#[source] rayon::ThreadPoolBuildError),
    /// The code object to attach could not be read or holds no AMDGPU code object.
    #[error(transparent)]
    Hsaco(guards::hsaco::Error),
}

/// A problem with one file (or one path given); the others are still checked.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    #[error("{}: {reason}", path.display())]
    Missing { path: PathBuf, reason: String },
    #[error("{0}")]
    Walk(String),
    #[error("{display}: {}", match error { fsio::Error::Io { .. } => format!("cannot read: {}", error.reason()), e => e.reason() })]
    Read { display: String, error: fsio::Error },
    #[error("{display}: internal error while analysing this file (panicked{}: {message}); please report it", at.as_ref().map_or(String::new(), |l| format!(" at {l}")))]
    Panic {
        display: String,
        at: Option<String>,
        message: String,
    },
    #[error("{display}: fixes not written: {error}")]
    NotWritten { display: String, error: fsio::Error },
}

/// Something the caller should tell the user; the results stand.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Warning {
    /// A directory that gave no file to check (a typo'd or wrong path would otherwise pass as
    /// clean).
    NothingToCheck(PathBuf),
    /// A fix left out because it would add a parse error.
    FixRejected {
        path: String,
        line: u32,
        column: u32,
        rule: String,
    },
}

impl std::fmt::Display for Warning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Warning::NothingToCheck(dir) => write!(
                f,
                "{}: no file to check (no .cu/.cuh/.hip/.cpp/.h/... file, or every one excluded)",
                dir.display()
            ),
            Warning::FixRejected {
                path,
                line,
                column,
                rule,
            } => write!(
                f,
                "{path}:{line}:{column}: {rule} fix not applied: it would add a parse error"
            ),
        }
    }
}

/// How a check ended, for the exit status (as ruff: clean, findings, errors; and an edited
/// file left alone).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Nothing at or above the failing level (with a non-writing fix: no file would change).
    Clean,
    /// A finding at or above its file's failing level (after fixing, what remains), or, with a
    /// non-writing fix, a file the fixes would change.
    Findings,
    /// A file or path could not be checked (or its fixes not written).
    Errors,
    /// A fixed file was left alone because it was edited while check ran (and no error).
    Edited,
}

/// Everything a check found, sorted, ready for a renderer.
#[derive(Debug)]
pub struct Checked {
    /// Reports and diagnostics (sorted by path, line, column, rule, message).
    pub output: CheckOutput,
    /// The source of each file with findings, by displayed path, when asked for.
    pub sources: HashMap<String, Vec<u8>>,
    /// Per-file problems, in path order (walk errors first).
    pub errors: Vec<FileError>,
    pub warnings: Vec<Warning>,
    /// What the fix loop did, when fixes were asked for.
    pub fixes: Option<FixSummary>,
    /// Header contents parsed in this run (each content once), and includes followed.
    pub header_parses: usize,
    pub header_lookups: usize,
    /// Failing level of each checked file (its config's, under the options).
    fail_on: HashMap<String, FailOn>,
    default_fail_on: FailOn,
    mode: Option<FixMode>,
}

impl Checked {
    /// The exit-status policy.
    pub fn status(&self) -> Status {
        if let Some(f) = self.fixes.as_ref().filter(|_| self.diff_only()) {
            return if !self.errors.is_empty() {
                Status::Errors
            } else if f.files > 0 {
                Status::Findings
            } else {
                Status::Clean
            };
        }
        if !self.errors.is_empty() {
            return Status::Errors;
        }
        if self.fixes.as_ref().is_some_and(|f| !f.edited.is_empty()) {
            return Status::Edited;
        }
        let failing = self.output.diagnostics.iter().any(|d| {
            d.severity
                >= severity(
                    self.fail_on
                        .get(&d.path)
                        .copied()
                        .unwrap_or(self.default_fail_on),
                )
        });
        if failing {
            Status::Findings
        } else {
            Status::Clean
        }
    }

    fn diff_only(&self) -> bool {
        self.mode.is_some_and(|m| !m.write)
    }
}

/// Check every file of `opts.paths`.
pub fn check(opts: &Options) -> Result<Checked, Error> {
    check_with(opts, guards::check_source)
}

fn check_with(opts: &Options, checker: analyse::Checker) -> Result<Checked, Error> {
    let known = rule_ids();
    for ids in [&opts.select, &opts.ignore].into_iter().flatten() {
        validate_rules(ids, &known, "the command line")?;
    }
    let paths = if opts.paths.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        opts.paths.clone()
    };
    let mut errors = Vec::new();
    let mut warnings = Vec::new();
    let (found, others) = discover::collect_files(&paths, opts.no_ignore, &mut errors);

    let mut resolver = resolve::Resolver::new(opts, &known)?;
    let mut jobs: Vec<analyse::Job> = Vec::with_capacity(found.len());
    let mut extra = Vec::new();
    for path in others {
        let resolved = resolver.for_file(&path)?;
        if resolver.included(&path, &resolved) {
            extra.push((path, false));
        }
    }
    for (path, explicit) in found.into_iter().chain(extra) {
        let resolved = resolver.for_file(&path)?;
        if (!explicit || opts.force_exclude) && resolver.excluded(&path, &resolved) {
            continue;
        }
        jobs.push(analyse::Job {
            display: display_path(&path),
            path,
            resolved,
        });
    }
    jobs.sort_by(|a, b| a.display.cmp(&b.display));
    jobs.dedup_by(|a, b| a.display == b.display);
    for dir in paths.iter().filter(|p| p.is_dir()) {
        if !jobs.iter().any(|j| j.path.starts_with(dir)) {
            warnings.push(Warning::NothingToCheck(dir.clone()));
        }
    }

    let keep_source = opts.fix.is_some() || opts.keep_sources;
    let mut outcomes =
        analyse::analyse_all(&jobs, opts.threads, keep_source, checker).map_err(Error::Threads)?;
    let fixes = opts
        .fix
        .map(|mode| fix::apply_fixes(&jobs, &mut outcomes, mode, &mut errors, &mut warnings));

    let mut output = CheckOutput {
        version: 1,
        files: Vec::with_capacity(jobs.len()),
        diagnostics: Vec::new(),
    };
    let mut sources = HashMap::new();
    let mut fail_on = HashMap::new();
    for (job, outcome) in jobs.iter().zip(outcomes) {
        match outcome {
            Ok(o) => {
                if let Some(src) = o.source {
                    sources.insert(job.display.clone(), src);
                }
                fail_on.insert(job.display.clone(), job.resolved.fail_on);
                output.files.push(o.report);
                output.diagnostics.extend(o.diagnostics);
            }
            Err(e) => errors.push(e),
        }
    }
    let diff_only = opts.fix.is_some_and(|m| !m.write);
    if let (Some(hsaco), false) = (&opts.hsaco, diff_only) {
        guards::hsaco::attach(&mut output, hsaco).map_err(Error::Hsaco)?;
    }
    output.diagnostics.sort_by(|a, b| {
        (&a.path, a.line, a.column, &a.rule, &a.message)
            .cmp(&(&b.path, b.line, b.column, &b.rule, &b.message))
    });
    Ok(Checked {
        output,
        sources,
        errors,
        warnings,
        fixes,
        header_parses: resolver.headers.parses(),
        header_lookups: resolver.headers.lookups(),
        fail_on,
        default_fail_on: resolver.default_fail_on(),
        mode: opts.fix,
    })
}
