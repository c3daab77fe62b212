//! Renderers of a `check` report: one file per output format (human, json, sarif, github).
//!
//! Detection is done by `guards`; these modules only turn a finished [`CheckOutput`] into text.
//! Each renderer is a pure function of its inputs (no I/O, no environment), so each is
//! snapshot-tested on hand-built reports.

pub mod diff;
pub mod github;
pub mod human;
pub mod json;
pub mod sarif;

use guards::{CheckOutput, Severity};
use std::collections::HashMap;

/// `--format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Code frames and a summary line, for people.
    Human,
    /// Machine-readable report, schema version 1 (loops, verdicts, blockers, diagnostics).
    Json,
    /// SARIF 2.1.0, for code-scanning services.
    Sarif,
    /// GitHub Actions workflow commands (`::warning file=...::message`).
    Github,
}

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

/// `n thing` / `n things`.
pub(crate) fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// 1-based line and 1-based column of byte offset `at` in `source`, the column counted in
/// units of `unit` (bytes, chars or UTF-16 code units) over the line's text up to `at`.
pub(crate) fn line_col(source: &[u8], at: usize, unit: ColumnUnit) -> (u32, u32) {
    let at = at.min(source.len());
    let line_start = memrchr_newline(&source[..at]).map_or(0, |i| i + 1);
    let line = 1 + source[..line_start].iter().filter(|&&b| b == b'\n').count();
    let prefix = &source[line_start..at];
    let col = match unit {
        ColumnUnit::Bytes => prefix.len(),
        ColumnUnit::Utf16 => prefix
            .utf8_chunks()
            .map(|c| c.valid().encode_utf16().count() + c.invalid().len())
            .sum(),
    };
    (line as u32, col as u32 + 1)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ColumnUnit {
    Bytes,
    /// SARIF's default `columnKind`.
    Utf16,
}

fn memrchr_newline(bytes: &[u8]) -> Option<usize> {
    bytes.iter().rposition(|&b| b == b'\n')
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
        ["barrier", "unroll-blocked", "wave-size", "candidate"]
            .iter()
            .map(|id| RuleInfo {
                id: id.to_string(),
                summary: format!("summary of {id}"),
                doc: format!("## What it does\nDocuments {id}."),
                severity: if *id == "candidate" {
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
    fn line_col_counts_bytes_and_utf16() {
        let src = "ab\n\u{e9}\u{1F600}x\n".as_bytes();
        let x = src.iter().position(|&b| b == b'x').unwrap();
        assert_eq!(line_col(src, x, ColumnUnit::Bytes), (2, 7));
        // é is one UTF-16 unit, the emoji two.
        assert_eq!(line_col(src, x, ColumnUnit::Utf16), (2, 4));
        assert_eq!(line_col(src, 0, ColumnUnit::Bytes), (1, 1));
        assert_eq!(line_col(src, 10_000, ColumnUnit::Bytes), (3, 1));
    }

    #[test]
    fn summary_counts_loops_and_findings() {
        let (out, _) = fixtures::output();
        let s = Summary::of(&out);
        assert_eq!(
            (s.files, s.kernels, s.loops, s.candidates, s.blocked),
            (1, 1, 2, 1, 1)
        );
        assert_eq!((s.hints, s.warnings, s.errors, s.findings()), (1, 2, 0, 3));
    }
}
