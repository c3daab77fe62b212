//! The analysis result of one file: per-function, per-loop verdicts and the diagnostics.
//! This is the data every renderer (human, json, sarif, github) prints; the JSON shape of
//! `check --format json` is exactly the serde shape of [`CheckOutput`].

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Hint,
    Warning,
    Error,
}

/// One finding, located in a file.
#[derive(Debug, Clone, Serialize)]
pub struct Diagnostic {
    pub path: String,
    /// 1-based line and column (column in bytes) of the start of `span`.
    pub line: u32,
    pub column: u32,
    /// Rule id (`unroll-blocked`, `wave-size`, `candidate`, `vgpr-spill`...).
    pub rule: String,
    pub severity: Severity,
    pub message: String,
    /// Byte range in the file (not in the JSON contract).
    #[serde(skip)]
    pub span: (usize, usize),
    /// Secondary locations (the blocking `__syncthreads`, ...) with a label.
    #[serde(skip)]
    pub related: Vec<Related>,
    /// The fix, when the rule has one (absent from the JSON when `None`, so reports without
    /// fixes keep their exact shape).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<crate::fix::Fix>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Related {
    pub line: u32,
    pub column: u32,
    pub span: (usize, usize),
    pub label: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Candidate,
    Blocked,
}

#[derive(Debug, Clone, Serialize)]
pub struct LoopReport {
    /// The loop's identity, `FUNCTION:INDEX` ([`frontend::LoopId`] displayed): FUNCTION is the
    /// qualified name with enclosing namespaces and classes (`a::k`, `(anonymous namespace)::k`)
    /// plus, only when that is not unique in the file, a disambiguator (`k<float>`,
    /// `over(float*, int)`, `k(float*)#2`); INDEX is the loop's position among the function's
    /// loops in source order, outer before inner. Unique within the file; no line number in it.
    /// `hip-unroll unroll --loop` accepts it.
    pub id: String,
    pub line: u32,
    pub column: u32,
    pub kind: frontend::LoopKind,
    pub depth: u32,
    pub trip_count: Option<u64>,
    /// `null`, `"unroll"`, `"unroll N"` or `"nounroll"`.
    pub unroll_pragma: Option<String>,
    pub verdict: Verdict,
    /// Rule ids of the blockers, sorted, deduplicated.
    pub blockers: Vec<String>,
    /// Calls in the loop (directly or through the helpers and macros it uses) to functions
    /// whose body is not visible in the file or its headers, as written (`ext_helper`,
    /// `ns::f`, `obj.m`: a method the receiver's class only declares counts), sorted, at most
    /// 16: what the verdict could not look into. Callees only: never a cast (`float(x)`,
    /// `static_cast<T>(x)`), a type or a call through a variable. Absent from the JSON when
    /// empty.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub unresolved: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct FunctionReport {
    pub name: String,
    pub kind: frontend::FunctionKind,
    pub line: u32,
    pub loops: Vec<LoopReport>,
    /// Per-target resources from a compiled code object (`check --hsaco FILE`).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub resources: Vec<KernelResources>,
}

/// Register, memory and occupancy figures of one kernel on one target, read from a code object
/// (`codeobj`'s one resources type; unknown occupancy is `null`).
pub use codeobj::KernelResources;

#[derive(Debug, Clone, Serialize)]
pub struct FileReport {
    pub path: String,
    pub parse_errors: usize,
    /// Where each parse error is (1-based line, byte column) and what it is, in source order;
    /// absent from the JSON when there is none.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub parse_error_locations: Vec<ParseErrorLocation>,
    /// False when the file was skipped unparsed because it holds no GPU code
    /// (see `Settings::parse_all`); `parse_errors` is then 0 because nothing was parsed.
    pub parsed: bool,
    pub functions: Vec<FunctionReport>,
}

/// One parse error of a file: where the grammar could not read it (an ERROR or MISSING node, or
/// a definition the lowering could not read as a function).
#[derive(Debug, Clone, Serialize)]
pub struct ParseErrorLocation {
    pub line: u32,
    pub column: u32,
    pub message: String,
}

/// The whole `check --format json` document.
#[derive(Debug, Clone, Serialize)]
pub struct CheckOutput {
    pub version: u32,
    pub files: Vec<FileReport>,
    pub diagnostics: Vec<Diagnostic>,
}
