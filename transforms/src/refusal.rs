//! Why a loop cannot be rewritten: typed refusals with stable kebab-case ids and human messages.

use serde::Serialize;

/// The part of a `for` header an invariance refusal is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Part {
    Bound,
    Step,
}

impl std::fmt::Display for Part {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Part::Bound => "bound",
            Part::Step => "step",
        })
    }
}

/// A loop the transform will not rewrite, because equivalence cannot be proven.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// Pragma mode handles the loop (see [`Refusal::alternative`]).
    #[error("manual unrolling handles `for` loops only; this is a `{kind}` loop")]
    NotAForLoop { kind: String },
    #[error("the `for` header is not canonical (`for (T i = a; i CMP b; i += s)` with CMP one of < <= > >=)")]
    NonCanonicalHeader,
    #[error("the `for` header contains a comma expression or several declarators")]
    CommaInHeader,
    #[error("the loop condition uses `{op}`; only <, <=, > and >= are supported")]
    UnsupportedComparison { op: String },
    #[error("the induction variable `{var}` has type `{ty}`, not a known integer type")]
    UnknownInductionType { var: String, ty: String },
    #[error("the step goes {step_dir} but the condition `{cmp}` expects the other direction")]
    DirectionMismatch { step_dir: &'static str, cmp: String },
    #[error("the step is zero")]
    ZeroStep,
    #[error("the sign of the step `{step}` is unknown for a `{cmp}` condition")]
    UnknownStepSign { step: String, cmp: String },
    #[error("the body writes the induction variable `{var}` (line {line})")]
    WritesInductionVariable { var: String, line: u32 },
    #[error("the address of the induction variable `{var}` is taken or bound to a reference (line {line})")]
    InductionVariableAddressTaken { var: String, line: u32 },
    #[error("the body declares another `{var}`, shadowing the induction variable (line {line})")]
    ShadowsInductionVariable { var: String, line: u32 },
    #[error("the body writes `{name}`, which the loop {part} reads (line {line})")]
    WritesInvariant { part: Part, name: String, line: u32 },
    #[error(
        "`{name}`, read by the loop {part}, has its address taken or is a reference (line {line})"
    )]
    InvariantAddressTaken { part: Part, name: String, line: u32 },
    #[error("the loop {part} calls `{callee}`")]
    CallsFunction { part: Part, callee: String },
    #[error("the loop {part} reads memory (`{what}`), which the body may change")]
    ReadsMemory { part: Part, what: String },
    #[error("the loop {part} has side effects (`{op}`)")]
    SideEffects { part: Part, op: String },
    #[error("the loop {part} reads the induction variable")]
    ReadsInductionVariable { part: Part },
    #[error(
        "the loop {part} reads `{name}`, which is neither a local, a parameter nor a constant"
    )]
    ReadsNonLocal { part: Part, name: String },
    #[error("`break` at line {line} leaves the loop")]
    BreakLeavesLoop { line: u32 },
    #[error("`return` at line {line} leaves the loop")]
    ReturnInBody { line: u32 },
    #[error("`goto` at line {line} inside the body")]
    GotoInBody { line: u32 },
    #[error("label `{name}` at line {line} inside the body would be duplicated")]
    LabelInBody { name: String, line: u32 },
    #[error("preprocessor directive `#{directive}` inside the body (line {line}) may differ between copies")]
    PreprocessorInBody { directive: String, line: u32 },
    #[error("macro `{name}` used in the body {why}")]
    MacroInBody { name: String, why: String },
    #[error("the loop uses `{name}` (line {line}), defined nowhere visible: it may be a macro of {why}, whose expansion could leave the loop or read the induction variable (pragma mode does not copy the body; `-I DIR` shows the tool the header)")]
    UnseenMacro {
        name: String,
        line: u32,
        why: &'static str,
    },
    #[error("the loop is written in the replacement list of macro `{name}` (line {line}), which every invocation of the macro shares: rewriting it would rewrite them all")]
    InMacroDefinition { name: String, line: u32 },
    #[error("the loop is written in an argument of macro `{name}` (line {line}), which takes statements: no `#pragma` may stand inside a macro's arguments, and which of them run is the macro's choice")]
    InMacroArgument { name: String, line: u32 },
    #[error("`__shared__` declaration inside the body would be duplicated (line {line})")]
    SharedDeclInBody { line: u32 },
    #[error("`static` local inside the body would be duplicated (line {line})")]
    StaticLocalInBody { line: u32 },
    #[error("a lambda inside the body refers to the induction variable (line {line})")]
    LambdaInBody { line: u32 },
    #[error("the loop contains syntax errors")]
    ParseErrorsInLoop,
    #[error("factor {factor} is too large for the induction variable type `{ty}`: {} steps of {step} overflow it", .factor.saturating_sub(1))]
    FactorTooLarge { factor: u32, ty: String, step: u64 },
    #[error("factor {factor} is above the largest manual unroll factor, {max} (the body would be copied {factor} times)")]
    FactorAboveMax { factor: u32, max: u32 },
    #[error("the rewritten source does not parse cleanly ({new} syntax errors, {old} before)")]
    ReparseFailed { old: usize, new: usize },
    #[error("a full unroll (`#pragma unroll` with no count) needs a trip count known at compile time; this {kind} loop's is not")]
    NotConstantTrip { kind: String },
    #[error("a full unroll is a pragma (`#pragma unroll` with no count); manual mode copies the body a given number of times")]
    FullManual,
}

/// What the caller can do instead of the refused rewrite (the binary words it as a hint: a
/// library message names no command-line flag).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Alternative {
    /// Unroll by pragma instead (the compiler unrolls loops of any kind).
    PragmaMode,
}

impl Refusal {
    /// What would do instead, when something would: pragma mode for a loop that is not a `for`.
    pub fn alternative(&self) -> Option<Alternative> {
        match self {
            Refusal::NotAForLoop { .. } => Some(Alternative::PragmaMode),
            _ => None,
        }
    }

    /// Stable kebab-case id of the reason (for scripts, counts and the tuner).
    pub fn id(&self) -> &'static str {
        use Part::*;
        match self {
            Refusal::NotAForLoop { .. } => "not-a-for-loop",
            Refusal::NonCanonicalHeader => "non-canonical-header",
            Refusal::CommaInHeader => "comma-in-header",
            Refusal::UnsupportedComparison { .. } => "unsupported-comparison",
            Refusal::UnknownInductionType { .. } => "unknown-induction-type",
            Refusal::DirectionMismatch { .. } => "direction-mismatch",
            Refusal::ZeroStep => "zero-step",
            Refusal::UnknownStepSign { .. } => "unknown-step-sign",
            Refusal::WritesInductionVariable { .. } => "writes-induction-variable",
            Refusal::InductionVariableAddressTaken { .. } => "induction-variable-address-taken",
            Refusal::ShadowsInductionVariable { .. } => "shadows-induction-variable",
            Refusal::WritesInvariant { part: Bound, .. } => "writes-bound",
            Refusal::WritesInvariant { part: Step, .. } => "writes-step",
            Refusal::InvariantAddressTaken { part: Bound, .. } => "bound-address-taken",
            Refusal::InvariantAddressTaken { part: Step, .. } => "step-address-taken",
            Refusal::CallsFunction { part: Bound, .. } => "bound-calls-function",
            Refusal::CallsFunction { part: Step, .. } => "step-calls-function",
            Refusal::ReadsMemory { part: Bound, .. } => "bound-reads-memory",
            Refusal::ReadsMemory { part: Step, .. } => "step-reads-memory",
            Refusal::SideEffects { part: Bound, .. } => "bound-side-effects",
            Refusal::SideEffects { part: Step, .. } => "step-side-effects",
            Refusal::ReadsInductionVariable { part: Bound } => "bound-reads-induction-variable",
            Refusal::ReadsInductionVariable { part: Step } => "step-reads-induction-variable",
            Refusal::ReadsNonLocal { part: Bound, .. } => "bound-reads-global",
            Refusal::ReadsNonLocal { part: Step, .. } => "step-reads-global",
            Refusal::BreakLeavesLoop { .. } => "break-leaves-loop",
            Refusal::ReturnInBody { .. } => "return-in-body",
            Refusal::GotoInBody { .. } => "goto-in-body",
            Refusal::LabelInBody { .. } => "label-in-body",
            Refusal::PreprocessorInBody { .. } => "preprocessor-in-body",
            Refusal::MacroInBody { .. } => "macro-in-body",
            Refusal::UnseenMacro { .. } => "unseen-macro",
            Refusal::InMacroDefinition { .. } => "in-macro-definition",
            Refusal::InMacroArgument { .. } => "in-macro-argument",
            Refusal::SharedDeclInBody { .. } => "shared-decl-in-body",
            Refusal::StaticLocalInBody { .. } => "static-local-in-body",
            Refusal::LambdaInBody { .. } => "lambda-in-body",
            Refusal::ParseErrorsInLoop => "parse-errors-in-loop",
            Refusal::FactorTooLarge { .. } | Refusal::FactorAboveMax { .. } => "factor-too-large",
            Refusal::ReparseFailed { .. } => "reparse-failed",
            Refusal::NotConstantTrip { .. } => "not-constant-trip",
            Refusal::FullManual => "full-manual",
        }
    }
}
