//! The fix loop over every analysed file: `guards::fix::fix_source` on each file that has an
//! applicable fix, the result written in place through `fsio::rewrite` (never over an edit) or
//! kept as a before/after pair for a diff, and the report replaced by the fixed text's.

use crate::analyse::{Job, Outcome};
use crate::{FileError, Warning};

/// How fixes are applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FixMode {
    /// Write the fixed files (else only collect each change for a diff).
    pub write: bool,
    /// Apply unsafe fixes too.
    pub unsafe_fixes: bool,
}

/// One file's change as a diff shows it.
#[derive(Debug, Clone)]
pub struct FileChange {
    pub display: String,
    pub before: Vec<u8>,
    pub after: Vec<u8>,
}

/// A file the fixes were not written to because it was edited while check ran, or (`after`)
/// found changed again once every file was written; it is left as saved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edited {
    pub display: String,
    pub after: bool,
}

/// What the fix loop did over all files.
#[derive(Debug, Default)]
pub struct FixSummary {
    /// Findings fixed (or, not writing, that would be).
    pub fixed: usize,
    /// Files changed (or that would change).
    pub files: usize,
    /// Remaining findings with an unsafe fix that was not applied.
    pub unsafe_left: usize,
    /// Not writing: every change, in file order.
    pub changes: Vec<FileChange>,
    /// Writing: files left alone because they were edited.
    pub edited: Vec<Edited>,
}

/// Applies the fixes of every analysed file that has an applicable one: the outcome is replaced
/// by the fixed text's report and diagnostics; the file is written atomically (`mode.write`) or
/// its change collected. A fix that would add a parse error is left out (a warning); a file
/// that cannot be written is an error, the others are still fixed. A file edited since it was
/// read is left as saved (its report stays the one of what was read) and listed in `edited`;
/// so is a written file found changed again once all are written.
pub(crate) fn apply_fixes(
    jobs: &[Job],
    outcomes: &mut [Result<Outcome, FileError>],
    mode: FixMode,
    errors: &mut Vec<FileError>,
    warnings: &mut Vec<Warning>,
) -> FixSummary {
    let unsafe_ok = mode.unsafe_fixes;
    let mut sum = FixSummary::default();
    // What each written file must still hold once all are written.
    let mut written: Vec<(&Job, String)> = Vec::new();
    for (job, outcome) in jobs.iter().zip(outcomes.iter_mut()) {
        let Ok(o) = outcome else { continue };
        let wanted = o
            .diagnostics
            .iter()
            .any(|d| d.fix.as_ref().is_some_and(|f| f.applies(unsafe_ok)));
        if wanted {
            if let Some(src) = &o.source {
                let fixed =
                    guards::fix::fix_source(&job.display, src, &job.resolved.settings, unsafe_ok);
                for d in &fixed.rejected {
                    warnings.push(Warning::FixRejected {
                        path: d.path.clone(),
                        line: d.line,
                        column: d.column,
                        rule: d.rule.clone(),
                    });
                }
                if fixed.changed(src) {
                    if !mode.write {
                        sum.changes.push(FileChange {
                            display: job.display.clone(),
                            before: src.clone(),
                            after: fixed.source.clone(),
                        });
                    } else {
                        match fsio::rewrite(
                            &job.path,
                            &fixed.source,
                            &fsio::digest(src),
                            Some("check.fix"),
                        ) {
                            Ok(()) => written.push((job, fsio::digest(&fixed.source))),
                            Err(e) if e.is_edited() => {
                                sum.edited.push(Edited {
                                    display: job.display.clone(),
                                    after: false,
                                });
                                continue;
                            }
                            Err(error) => {
                                errors.push(FileError::NotWritten {
                                    display: job.display.clone(),
                                    error,
                                });
                                continue;
                            }
                        }
                    }
                    sum.fixed += fixed.fixed;
                    sum.files += 1;
                    o.report = fixed.report;
                    o.diagnostics = fixed.diagnostics;
                    o.source = (!o.diagnostics.is_empty()).then_some(fixed.source);
                }
            }
        }
        sum.unsafe_left += o
            .diagnostics
            .iter()
            .filter(|d| d.fix.as_ref().is_some_and(|f| !f.applies(unsafe_ok)))
            .count();
    }
    // The whole set once more: an edit saved after a file was written is reported too.
    for (job, want) in written {
        let now = fsio::read_source(&job.path).map(|b| fsio::digest(&b)).ok();
        if now.as_deref() != Some(want.as_str()) {
            sum.edited.push(Edited {
                display: job.display.clone(),
                after: true,
            });
        }
    }
    sum
}
