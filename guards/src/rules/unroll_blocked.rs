//! `unroll-blocked`: an existing `#pragma unroll` asks to unroll a loop that a guard blocks.
//!
//! ## What it does
//! Reports a `#pragma unroll` (bare, `unroll N` with N > 1, `unroll(N)`, `_Pragma("unroll")`,
//! `#pragma clang loop unroll_count(N)`) on a loop of a kernel or `__device__` function that one
//! of the blocker rules (`barrier`, `atomic`, `dynamic-lds`, `early-exit`) blocks. The message
//! names each blocker with the line of its first occurrence; the related locations point at
//! them. `#pragma unroll 1` and `#pragma nounroll` are never reported.
//!
//! Its default severity (the rule registry's, printed below by `explain`) does not fail `check`:
//! a compiler pragma over a loop with a barrier or shared memory is correct code (the compiler
//! unrolls it faithfully; experts write it on constant-trip tile loops). The guards are the
//! policy of hip-unroll's automated rewrites, not a defect in the user's code. Raise it where a
//! team wants every such pragma reviewed:
//! ```toml
//! [check.severity]
//! unroll-blocked = "warning"   # or "error"
//! ```
//!
//! ## Why
//! The pragma unrolls a loop that hip-unroll itself would never rewrite (see
//! `hip-unroll explain barrier` and the others): worth a look when the loop changed since the
//! pragma was written, and a reminder that the tuner leaves that loop alone.
//!
//! ## Example
//! ```cpp
//! #pragma unroll 4                 // unroll-blocked: barrier (`__syncthreads()` at line 12)
//! for (int t = 0; t < tiles; ++t) {
//!     load_tile(t);
//!     __syncthreads();             // line 12
//! }
//! ```
//! Keep the pragma if the unrolled barrier loop is intended, or write `#pragma unroll 1`.
//!
//! ## Fix safety
//! No automatic fix: the pragma is correct code, and removing it or writing `unroll 1` changes
//! code generation of a loop an expert may have unrolled on purpose; only a person can tell.
//! Suppress a reviewed case with `// hip-unroll: allow(unroll-blocked)` on the pragma's line or
//! the line before.

use frontend::UnrollHint;

use crate::lint::{DiagnosticRule, Enable, FileCx, Finding, LoopFacts};

/// The rule's stable id.
pub const ID: &str = "unroll-blocked";

/// One line: what the rule reports (`explain --list`, SARIF).
pub const SUMMARY: &str = "an existing `#pragma unroll` is on a loop that a guard blocks";

/// The rule's registry entry: on by default and whenever a selection names a blocker (it is
/// how the blockers report).
pub(crate) const DIAGNOSTIC: DiagnosticRule = DiagnosticRule {
    check,
    enable: Enable::WithBlockers,
};

fn check(cx: &FileCx<'_>) -> Vec<Finding> {
    cx.loops.iter().filter_map(finding).collect()
}

/// The finding for one loop, given the blocker evidence that survived suppression and its
/// blocker ids (sorted, each once): a pragma asking to unroll (not `nounroll`) over a blocked
/// loop. Cites the first piece of evidence of each blocker (in blocker id order) and relates
/// every piece. An `allow` on the loop's line silences it too.
fn finding(l: &LoopFacts<'_>) -> Option<Finding> {
    let (lp, evidence) = (l.lp, &l.evidence);
    let p = lp.pragma.as_ref()?;
    if !matches!(p.hint, UnrollHint::Unroll(_)) || evidence.is_empty() {
        return None;
    }
    let cited: Vec<String> = l
        .blockers
        .iter()
        .filter_map(|b| {
            let e = evidence.iter().find(|e| e.rule.id() == *b)?;
            Some(format!("{b} at line {}: {}", e.span.line, e.label))
        })
        .collect();
    Some(Finding {
        span: p.span,
        message: format!(
            "`#pragma {}` on loop `{}`, which cannot be unrolled safely: {}",
            crate::pragma_text(&p.hint),
            l.id,
            cited.join("; ")
        ),
        related: evidence
            .iter()
            .map(|e| (e.span, format!("{}: {}", e.rule.id(), e.label)))
            .collect(),
        fix: None,
        also_at: Some(lp.keyword.line),
    })
}
