//! `unroll-blocked`: an existing `#pragma unroll` asks to unroll a loop that a guard blocks.
//!
//! ## What it does
//! Reports a `#pragma unroll` (bare, `unroll N` with N > 1, `unroll(N)`, `_Pragma("unroll")`,
//! `#pragma clang loop unroll_count(N)`) on a loop of a kernel or `__device__` function that one
//! of the blocker rules blocks for a reason that touches other threads or the kernel's memory
//! model (`barrier`, `atomic`, `dynamic-lds`, and the blockers added after them). The message
//! names each such blocker with the line of its first occurrence; the related locations point
//! at them. `#pragma unroll 1` and `#pragma nounroll` are never reported.
//!
//! An early exit (`early-exit`: `break`, `return`, `goto` out of the loop) never makes it
//! report: the compiler unrolls a loop with an exit exactly (each copy keeps its test, and a
//! constant-trip loop with a `break` is unrolled with the exit in every copy); only
//! hip-unroll's manual rewrite has to refuse it, because it replicates the body by hand.
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
    let lp = l.lp;
    let p = lp.pragma.as_ref()?;
    // An early exit is the manual rewrite's problem, never the compiler's.
    let evidence: Vec<_> = l
        .evidence
        .iter()
        .filter(|e| e.rule.id() != crate::rules::early_exit::ID)
        .collect();
    if !matches!(p.hint, UnrollHint::Unroll(_)) || evidence.is_empty() {
        return None;
    }
    let cited: Vec<String> = l
        .blockers
        .iter()
        .filter(|b| **b != crate::rules::early_exit::ID)
        .filter_map(|b| {
            let e = evidence.iter().find(|e| e.rule.id() == *b)?;
            Some(format!("{b} at line {}: {}", e.span.line, e.label))
        })
        .collect();
    Some(Finding {
        span: p.span,
        message: format!(
            "`#pragma {}` on loop `{}`, which hip-unroll's guards block (correct for the compiler; hip-unroll never rewrites or tunes it): {}",
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

#[cfg(test)]
mod tests {
    /// The pragmas of `testdata/check/unroll-blocked/early_exit.cu` cite only the blockers that
    /// matter to the compiler, never the early exit beside them.
    #[test]
    fn messages_cite_no_early_exit() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../testdata/check/unroll-blocked/early_exit.cu"
        );
        let src = std::fs::read(path).unwrap();
        let (_, diags) = crate::check_source(path, &src, &crate::Settings::default());
        let messages: Vec<&str> = diags
            .iter()
            .filter(|d| d.rule == super::ID)
            .map(|d| d.message.as_str())
            .collect();
        assert_eq!(messages.len(), 2, "{messages:?}");
        assert!(messages[0].contains("barrier at line"), "{}", messages[0]);
        assert!(messages[1].contains("atomic at line"), "{}", messages[1]);
        for m in messages {
            assert!(!m.contains("early-exit"), "{m}");
        }
    }
}
