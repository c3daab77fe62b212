//! `candidate`: a loop that no guard blocks and that carries no unroll pragma (a hint).
//!
//! ## What it does
//! With `--hints` (or `hints = true` in `hip-unroll.toml`), lists each loop of a kernel or
//! `__device__` function that passes every blocker rule and has no `#pragma unroll`/`nounroll`,
//! with its constant trip count when the header has one. Its default severity (the registry's)
//! never fails a check.
//!
//! ## Why
//! These are the loops `hip-unroll unroll` and the tuner may rewrite; loops with a small constant
//! trip count are the most likely to gain from full unrolling (fewer branches, more
//! instruction-level parallelism, indices folded into addresses).
//!
//! ## Example
//! ```cpp
//! for (int i = 0; i < 8; ++i)      // candidate: trip count 8
//!     acc += a[i] * b[i];
//! ```
//!
//! ## Fix safety
//! No automatic fix: whether unrolling pays is measured, not guessed; `hip-unroll unroll` applies
//! pragma or manual unrolling and the tuner measures it before anything is kept.

use crate::lint::{DiagnosticRule, Enable, FileCx, Finding, LoopFacts};

/// The rule's stable id.
pub const ID: &str = "candidate";

/// One line: what the rule reports (`explain --list`, SARIF).
pub const SUMMARY: &str = "a loop that no guard blocks and that has no unroll pragma (hint)";

/// The rule's registry entry: a hint, off unless selected or `hints` is on.
pub(crate) const DIAGNOSTIC: DiagnosticRule = DiagnosticRule {
    check,
    enable: Enable::Hint,
};

fn check(cx: &FileCx<'_>) -> Vec<Finding> {
    cx.loops.iter().filter_map(finding).collect()
}

/// The finding for one loop when no blocker evidence survived suppression: a loop without any
/// unroll pragma.
fn finding(l: &LoopFacts<'_>) -> Option<Finding> {
    let lp = l.lp;
    if !l.blockers.is_empty() || lp.pragma.is_some() {
        return None;
    }
    let tc = match lp.trip_count {
        Some(n) => format!(" (constant trip count {n})"),
        None => String::new(),
    };
    Some(Finding {
        span: lp.keyword,
        message: format!("loop `{}` can be unrolled: no guard blocks it{tc}", l.id),
        related: Vec::new(),
        fix: None,
        also_at: None,
    })
}
