//! render: the one home for turning `check`'s findings into text for people and tools. One
//! module per output format (`human`, `json`, `sarif`, `github`), `diff` for rewrites, and
//! `lines` for positions (1-based lines, columns in bytes or UTF-16 code units) that SARIF and
//! the language server share; [`rules`] is the registry as renderers see it.
//!
//! Detection is done by `guards`; these modules only turn a finished [`CheckOutput`] into text.
//! Each renderer is a pure function of its inputs (no I/O, no environment), so each is
//! snapshot-tested on hand-built reports. The `hip-unroll` binary picks the format and prints;
//! the `server` crate turns the same findings into LSP diagnostics through [`lines`].

pub mod diff;
pub mod github;
pub mod human;
pub mod json;
pub mod lines;
pub mod sarif;

pub use lines::{line_col, ColumnUnit};

use guards::{CheckOutput, Severity};
use std::collections::HashMap;

/// What a renderer may know about a rule: its id and one-line summary (for SARIF `rules`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleInfo {
    pub id: String,
    /// One sentence: what the rule reports.
    pub summary: String,
    /// The rule's full documentation (markdown).
    pub doc: String,
    /// Severity of the diagnostics it causes.
    pub severity: Severity,
    /// `blocker` (appears in loops' `blockers`), `lint` or `code object`.
    pub kind: &'static str,
}

/// Source bytes of the files that have diagnostics, keyed by the report's `path`; used for
/// code frames (human) and exact regions (SARIF). A missing entry degrades to `path:line:col`.
pub type Sources = HashMap<String, Vec<u8>>;

/// Per-loop and per-diagnostic counts shown in the human summary and `--statistics`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    pub files: usize,
    pub kernels: usize,
    pub device_functions: usize,
    pub loops: usize,
    pub candidates: usize,
    pub blocked: usize,
    pub hints: usize,
    pub warnings: usize,
    pub errors: usize,
}

impl Summary {
    pub fn of(output: &CheckOutput) -> Summary {
        let mut s = Summary {
            files: output.files.len(),
            ..Summary::default()
        };
        for f in output.files.iter().flat_map(|f| &f.functions) {
            match f.kind {
                frontend::FunctionKind::Kernel => s.kernels += 1,
                _ => s.device_functions += 1,
            }
            for l in &f.loops {
                s.loops += 1;
                match l.verdict {
                    guards::Verdict::Candidate => s.candidates += 1,
                    guards::Verdict::Blocked => s.blocked += 1,
                }
            }
        }
        for d in &output.diagnostics {
            match d.severity {
                Severity::Hint => s.hints += 1,
                Severity::Warning => s.warnings += 1,
                Severity::Error => s.errors += 1,
            }
        }
        s
    }

    pub fn findings(&self) -> usize {
        self.hints + self.warnings + self.errors
    }
}

/// Every rule of the registry (`guards::rules::all`), as renderers see it, in registry order.
pub fn rules() -> Vec<RuleInfo> {
    guards::rules::all()
        .iter()
        .map(|r| RuleInfo {
            id: r.id.to_string(),
            summary: r.summary.to_string(),
            doc: r.doc(),
            severity: r.severity,
            kind: match r.kind {
                guards::rules::RuleKind::Blocker => "blocker",
                guards::rules::RuleKind::Diagnostic => "lint",
                guards::rules::RuleKind::CodeObject => "code object",
            },
        })
        .collect()
}

/// `n thing` / `n things`.
pub fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

#[cfg(test)]
pub(crate) mod fixtures {
    //! Hand-built reports shared by the renderers' snapshot tests.
    use super::*;
    use guards::{Diagnostic, FileReport, FunctionReport, LoopReport, Related, Verdict};

    pub const SOURCE: &str = r#"#include <hip/hip_runtime.h>
__global__ void reduce(float* out, const float* in) {
    __shared__ float tile[256];
    #pragma unroll
    for (int i = 0; i < 8; ++i) {
        tile[threadIdx.x] = in[i];
        __syncthreads();
    }
    for (int j = 0; j < 4; ++j) out[j] = tile[j];
    float v = __shfl_down(out[0], 16, 32);
}
#include "common/missing.cuh"
"#;

    fn at(needle: &str) -> (usize, u32, u32) {
        let start = SOURCE.find(needle).expect("needle in fixture");
        let (l, c) = line_col(SOURCE.as_bytes(), start, ColumnUnit::Bytes);
        (start, l, c)
    }

    /// A report with a blocked loop under `#pragma unroll`, a candidate, a wave-size finding and
    /// a hint, in a file whose path needs escaping in every format (`,` `:` `%` and a space).
    pub fn output() -> (CheckOutput, Sources) {
        let path = "kernels/odd name,100%:v2.cu".to_string();
        let (for0, l0, c0) = at("for (int i");
        let (sync, ls, cs) = at("__syncthreads");
        let (for1, l1, c1) = at("for (int j");
        let (shfl, lw, cw) = at("32);");
        let (inc, li, ci) = at("#include \"common");
        let loops = vec![
            LoopReport {
                id: "reduce:0".into(),
                line: l0,
                column: c0,
                kind: frontend::LoopKind::For,
                depth: 0,
                trip_count: Some(8),
                unroll_pragma: Some("unroll".into()),
                verdict: Verdict::Blocked,
                blockers: vec!["barrier".into()],
                unresolved: vec![],
            },
            LoopReport {
                id: "reduce:1".into(),
                line: l1,
                column: c1,
                kind: frontend::LoopKind::For,
                depth: 0,
                trip_count: Some(4),
                unroll_pragma: None,
                verdict: Verdict::Candidate,
                blockers: vec![],
                unresolved: vec!["ext_scale".into()],
            },
        ];
        let file = FileReport {
            path: path.clone(),
            parse_errors: 0,
            parse_error_locations: Vec::new(),
            parsed: true,
            functions: vec![FunctionReport {
                name: "reduce".into(),
                kind: frontend::FunctionKind::Kernel,
                line: 2,
                loops,
                resources: vec![],
            }],
        };
        let diagnostics = vec![
            Diagnostic {
                path: path.clone(),
                line: l0,
                column: c0,
                rule: "unroll-blocked".into(),
                severity: Severity::Warning,
                message: "`#pragma unroll` on a loop that cannot be unrolled: barrier".into(),
                span: (for0, for0 + 3),
                related: vec![Related {
                    line: ls,
                    column: cs,
                    span: (sync, sync + "__syncthreads()".len()),
                    label: "barrier: every thread must reach this, in every iteration".into(),
                }],
                fix: None,
            },
            Diagnostic {
                path: path.clone(),
                line: l1,
                column: c1,
                rule: "candidate".into(),
                severity: Severity::Hint,
                message: "loop can be unrolled (trip count 4)".into(),
                span: (for1, for1 + 3),
                related: vec![],
                fix: None,
            },
            Diagnostic {
                path: path.clone(),
                line: lw,
                column: cw,
                rule: "wave-size".into(),
                severity: Severity::Warning,
                message: "shuffle width 32 assumes a 32-lane wave;\nuse warpSize".into(),
                span: (shfl, shfl + 2),
                related: vec![],
                fix: None,
            },
            Diagnostic {
                path: path.clone(),
                line: li,
                column: ci,
                rule: "include-not-found".into(),
                severity: Severity::Hint,
                message: "include not found: \"common/missing.cuh\" (line 12); what they define is not seen by the guards".into(),
                span: (inc, inc + "#include \"common/missing.cuh\"".len()),
                related: vec![],
                fix: None,
            },
        ];
        let output = CheckOutput {
            version: 1,
            files: vec![file],
            diagnostics,
        };
        let mut sources = Sources::new();
        sources.insert(path, SOURCE.as_bytes().to_vec());
        (output, sources)
    }

    pub fn rules() -> Vec<RuleInfo> {
        [
            "barrier",
            "unroll-blocked",
            "wave-size",
            "candidate",
            "include-not-found",
        ]
        .iter()
        .map(|id| RuleInfo {
            id: id.to_string(),
            summary: format!("summary of {id}"),
            doc: format!("## What it does\nDocuments {id}."),
            severity: if *id == "candidate" || *id == "include-not-found" {
                Severity::Hint
            } else {
                Severity::Warning
            },
            kind: if *id == "barrier" { "blocker" } else { "lint" },
        })
        .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_counts_loops_and_findings() {
        let (out, _) = fixtures::output();
        let s = Summary::of(&out);
        assert_eq!(
            (s.files, s.kernels, s.loops, s.candidates, s.blocked),
            (1, 1, 2, 1, 1)
        );
        assert_eq!((s.hints, s.warnings, s.errors, s.findings()), (2, 2, 0, 4));
    }
}
