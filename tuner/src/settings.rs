//! The settings of one tune (what the search, the lanes and the limits read).

use crate::gates::Gates;
use crate::stats::Plan;
use pipeline::Mode;
use std::path::PathBuf;

/// What to do with the accepted edits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApplyMode {
    /// Write them into the user's files (atomically).
    Write,
    /// Write nothing; report what would be applied.
    DryRun,
    /// Write nothing; return the unified diff.
    Diff,
}

/// The settings of one tune.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Files or directories holding the loops that may change (relative to the tree root).
    pub paths: Vec<PathBuf>,
    pub factors: Vec<u32>,
    pub modes: Vec<Mode>,
    /// Working copies prepared in parallel (per lane).
    pub jobs: usize,
    pub plan: Plan,
    /// Largest relative spread of the baseline repeats (fraction).
    pub max_noise: f64,
    pub state_dir: PathBuf,
    pub resume: bool,
    pub gates: Gates,
    pub apply: ApplyMode,
    /// Reject a variant whose machine code is byte-identical to the baseline's with reason
    /// `same-code` and no run.
    pub skip_same_code: bool,
    /// Everything that shapes a decision (backend, commands, regex, plan, arch, compile
    /// command...), as text: part of every decision's key (with the device model).
    pub fingerprint: String,
    /// Where `#include "..."` is looked for after the including file's directory (`-I`,
    /// `[check] include-dirs`, the `-I` of `[compile]`/`[tune] compile-flags`): the headers'
    /// helpers and macros are in the guards' reach and the manual rewrite's proof.
    pub include_dirs: Vec<PathBuf>,
}
