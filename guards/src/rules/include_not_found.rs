//! `include-not-found`: an `#include "..."` of the file (or of a header it includes) that
//! `check` could not follow.
//!
//! ## What it does
//! Names, once per file, every quoted include of the file's translation unit that was not found
//! next to the including file nor in any search directory (`-I DIR`, `[check] include-dirs`,
//! the `-I` of `[compile] command` and `[tune] compile-flags`), a computed include
//! (`#include MACRO`), and a header too large to read. The diagnostic sits on the file's own
//! `#include` line through which the first one was reached. System includes (`#include <...>`)
//! are never followed and never reported: the HIP/CUDA API is known by name. Neither is a
//! toolkit's header spelled with quotes and found nowhere (`"cuda.h"`, `"cuda_runtime.h"`,
//! `"cublas_v2.h"`, `"cooperative_groups.h"`, `"hip/hip_runtime.h"`, `"cub/..."`,
//! `"thrust/..."`, the C and C++ standard headers: the list is `frontend::tu::toolkit_of`'s);
//! a header library that projects vendor (`"cutlass/..."`, `"cute/..."`) is reported when it
//! is not found, since its macros (`CUTLASS_DEVICE`) decide what the guards see.
//!
//! ## Why
//! The guards see a translation unit, not a file: a header's macros and device functions join
//! the file's in the reach of `barrier`, `atomic`, `dynamic-lds` and `early-exit`. What a
//! missing header defines cannot be seen, and nothing the guard cannot see is assumed safe for
//! a manual rewrite: a loop that uses a macro defined nowhere visible is refused by
//! `unroll --mode manual` (`unseen-macro`), and calls whose body is not visible are listed on
//! the loop (`unresolved` in `--format json`). This note says why, and what to pass.
//!
//! ## Example
//! ```cpp
//! #include "common.cuh"   // include-not-found: `common.cuh` is not next to this file
//! __global__ void k(float* a, int n) {
//!     for (int i = 0; i < n; i++) { SKIP_IF(a[i] > 3); a[i] *= 2; }   // SKIP_IF unseen
//! }
//! ```
//! `hip-unroll check -I include/ k.cu`, or `include-dirs = ["include"]` under `[check]`.
//!
//! ## Fix safety
//! No fix: tell the tool where the headers are. `--ignore include-not-found` or
//! `// hip-unroll: allow-file(include-not-found)` silences the note; it changes no verdict.

use frontend::tu::MissingReason;

use crate::lint::{DiagnosticRule, Enable, FileCx, Finding};

/// The rule's stable id.
pub const ID: &str = "include-not-found";

/// One line: what the rule reports (`explain --list`, SARIF).
pub const SUMMARY: &str = "an `#include \"...\"` of the file or of its headers was not found: what it defines is not seen by the guards";

/// The rule's registry entry.
pub(crate) const DIAGNOSTIC: DiagnosticRule = DiagnosticRule {
    check,
    enable: Enable::Default,
};

/// The one finding of a file whose unit misses includes, at the file's `#include` through
/// which the first one was reached; every other such line of the file is related.
fn check(cx: &FileCx<'_>) -> Vec<Finding> {
    let tu = cx.tu;
    let Some(first) = tu.missing.first() else {
        return Vec::new();
    };
    let describe = |m: &frontend::tu::MissingInclude| {
        let why = match &m.reason {
            MissingReason::NotFound => String::new(),
            MissingReason::Computed => " (a computed include)".into(),
            MissingReason::TooLarge => format!(
                " (larger than {} MiB)",
                frontend::tu::MAX_HEADER_BYTES >> 20
            ),
            MissingReason::TooMany => {
                format!(" (over {} headers in the unit)", frontend::tu::MAX_HEADERS)
            }
            MissingReason::Unreadable(e) => format!(" (unreadable: {e})"),
        };
        let from = if m.depth == 0 {
            format!("line {}", m.line)
        } else {
            format!("included from {}:{}", m.from.display(), m.line)
        };
        format!("\"{}\" ({from}){why}", m.spelled)
    };
    let listed: Vec<String> = tu.missing.iter().take(8).map(describe).collect();
    let more = tu.missing.len().saturating_sub(listed.len());
    let head = if tu.missing.len() == 1 {
        "include not found:".to_string()
    } else {
        format!("{} includes not found:", tu.missing.len())
    };
    let mut message = format!("{head} {}", listed.join(", "));
    if more > 0 {
        message.push_str(&format!(" and {more} more"));
    }
    message.push_str("; what they define is not seen by the guards (a loop using a macro defined nowhere visible is not unrolled by hand); add `-I DIR` or `[check] include-dirs`");
    let mut related: Vec<(frontend::Span, String)> = Vec::new();
    for m in tu.missing.iter().skip(1) {
        if m.via != first.via && !related.iter().any(|(s, _)| *s == m.via) {
            related.push((m.via, format!("\"{}\" not found", m.spelled)));
        }
    }
    vec![Finding {
        span: first.via,
        message,
        related,
        fix: None,
        also_at: None,
    }]
}
