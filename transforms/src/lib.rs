//! transforms: source-to-source loop unrolling (pragma and manual) as byte-range edits.
//!
//! Entry points: [`resolve`] finds a loop by line or `function:index` id, [`unroll`] builds one
//! variant, [`candidates`] builds every variant the tuner may try. No I/O happens here: callers
//! read and write files. Every variant is re-parsed and rejected if it has more syntax errors
//! than the original.

pub mod adapter;
pub mod edit;
pub mod manual;
pub mod pragma;
pub mod refusal;
pub mod shape;
pub mod text;

pub use edit::{apply, Edit};
pub use refusal::{Alternative, Part, Refusal};

use frontend::tu::TranslationUnit;
use frontend::SourceFile;
use serde::Serialize;

/// How a loop is unrolled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Insert or rewrite `#pragma unroll N` and let the compiler unroll.
    Pragma,
    /// Replicate the body N times in the source, with a remainder loop.
    Manual,
}

impl std::fmt::Display for Mode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Mode::Pragma => "pragma",
            Mode::Manual => "manual",
        })
    }
}

pub use frontend::{Candidate, LookupError, LoopId, LoopLoc, LoopRef};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Lookup(#[from] LookupError),
    #[error("cannot unroll: {0} [{id}]", id = .0.id())]
    Refused(#[from] Refusal),
}

/// Find a loop by line or id (see [`frontend::SourceFile::resolve`]).
pub fn resolve(file: &SourceFile, r: &LoopRef) -> Result<LoopLoc, LookupError> {
    file.resolve(r)
}

/// The `FUNCTION:INDEX` id of a loop (the id `check --format json` prints).
pub fn loop_id(file: &SourceFile, loc: LoopLoc) -> String {
    file.loop_id(loc).to_string()
}

/// One rewritten version of a file.
#[derive(Debug, Clone, Serialize)]
pub struct Variant {
    pub loop_id: String,
    /// Line of the loop keyword in the original file.
    pub line: u32,
    pub mode: Mode,
    pub factor: u32,
    /// The edits on the original bytes.
    pub edits: Vec<Edit>,
    /// The whole new source.
    #[serde(skip)]
    pub source: Vec<u8>,
}

/// The factor of a full unroll: `#pragma unroll` with no count, pragma mode only, and only on a
/// loop whose trip count is a compile-time constant (the IR's `Loop::trip_count`, from
/// `frontend::trip`): elsewhere refused, `not-constant-trip` (a count the compiler cannot know
/// makes the pragma a request it ignores or, worse, a guess), and `full-manual` in manual mode.
pub const FULL: u32 = 0;

/// Largest manual unroll factor (the body is copied this many times; the runtime guard's
/// arithmetic is exact for factors far beyond it).
pub const MAX_MANUAL_FACTOR: u32 = 1024;

/// Unroll the loop at `loc` of `file` (parsed from `src`) by `factor` in `mode` ([`FULL`]: a
/// full unroll by pragma).
///
/// Pragma mode works on any loop (a full unroll on a constant-trip one); manual mode needs a canonical `for` loop whose rewrite it
/// can prove equivalent, and refuses otherwise. Manual factor 1 returns the source unchanged.
/// The result is re-parsed: a variant with more syntax errors than the original is refused.
pub fn unroll(
    src: &[u8],
    file: &SourceFile,
    loc: LoopLoc,
    factor: u32,
    mode: Mode,
) -> Result<Variant, Error> {
    unroll_in(src, file, &TranslationUnit::empty(), loc, factor, mode)
}

/// [`unroll`] in the file's translation unit (`frontend::tu`): the macros, functions and
/// declarations of its headers count as the file's own for the manual rewrite's proof, and a
/// name nothing visible defines is refused (`unseen-macro`) rather than assumed harmless.
pub fn unroll_in(
    src: &[u8],
    file: &SourceFile,
    tu: &TranslationUnit,
    loc: LoopLoc,
    factor: u32,
    mode: Mode,
) -> Result<Variant, Error> {
    if factor == FULL && mode == Mode::Manual {
        return Err(Refusal::FullManual.into());
    }
    let func = file
        .functions
        .get(loc.function)
        .ok_or(LookupError::NoSuchLoop {
            function: format!("#{}", loc.function),
            index: loc.index,
            count: 0,
            candidates: Vec::new(),
        })?;
    let lp = func
        .loops
        .get(loc.index)
        .ok_or_else(|| LookupError::NoSuchLoop {
            function: func.id.to_string(),
            index: loc.index,
            count: func.loops.len(),
            candidates: Vec::new(),
        })?;
    // A loop of a function that a macro invocation defines, written in the macro's
    // replacement list: its text is the macro's, shared by every invocation.
    if let Some(e) = func.expansion.as_ref().filter(|e| e.body_in_macro) {
        return Err(Refusal::InMacroDefinition {
            name: e.name.clone(),
            line: lp.keyword.line,
        }
        .into());
    }
    // A loop written in an argument of a macro that takes statements (`NV_IF_TARGET(C, (for
    // (...) ...;))`): a directive cannot go there.
    if let Some(m) = file
        .statement_macros
        .iter()
        .find(|m| m.span.start < lp.keyword.start && lp.keyword.start < m.span.end)
    {
        return Err(Refusal::InMacroArgument {
            name: m.name.clone(),
            line: m.span.line,
        }
        .into());
    }
    // A manual copy of a body holding one: the proof reads the statements of every group in
    // a row, the macro runs some of them.
    if let Some(m) = file.statement_macros.iter().find(|m| {
        mode == Mode::Manual && lp.span.start < m.span.start && m.span.start < lp.span.end
    }) {
        return Err(Refusal::MacroInBody {
            name: m.name.clone(),
            why: "takes statements as arguments: which of them run is its expansion's choice"
                .into(),
        }
        .into());
    }
    let edits = match mode {
        Mode::Pragma if factor == FULL && lp.trip_count.is_none() => {
            let kind = match lp.kind {
                frontend::LoopKind::For => "`for`",
                frontend::LoopKind::While => "`while`",
                frontend::LoopKind::Do => "`do`",
                frontend::LoopKind::RangeFor => "range-`for`",
            };
            return Err(Refusal::NotConstantTrip { kind: kind.into() }.into());
        }
        Mode::Pragma => pragma::edits(src, file, lp, factor),
        Mode::Manual => {
            let shape = adapter::from_ir_in(src, file, tu, func, lp)?;
            if factor == 1 {
                Vec::new()
            } else if factor > MAX_MANUAL_FACTOR {
                return Err(Refusal::FactorAboveMax {
                    factor,
                    max: MAX_MANUAL_FACTOR,
                }
                .into());
            } else {
                if let shape::StepShape::Const(a) = shape.step {
                    if !manual::fits(shape.ty, shape.generic, a, factor) {
                        return Err(Refusal::FactorTooLarge {
                            factor,
                            ty: shape.ty_text.clone(),
                            step: a,
                        }
                        .into());
                    }
                }
                let mut edits = vec![Edit::replace(
                    shape.span.clone(),
                    manual::expand(src, &shape, factor),
                )];
                edits.extend(pragma::removal(src, lp));
                edits
            }
        }
    };
    let source = edit::apply(src, &edits);
    if !edits.is_empty() {
        // Parsed as the original was: with the specifier macros of the unit's headers.
        let reparsed = tu.parse(&source);
        if reparsed.parse_errors.len() > file.parse_errors.len() {
            return Err(Refusal::ReparseFailed {
                old: file.parse_errors.len(),
                new: reparsed.parse_errors.len(),
            }
            .into());
        }
    }
    Ok(Variant {
        loop_id: loop_id(file, loc),
        line: lp.keyword.line,
        mode,
        factor,
        edits,
        source,
    })
}

/// Every variant of the loop at `loc` for `factors`, in both modes (manual factor 1 is the
/// original and is left out; pragma factor 1 is `#pragma unroll 1`, i.e. no unrolling).
/// Refused variants are left out; call [`unroll`] to learn why.
pub fn candidates(src: &[u8], file: &SourceFile, loc: LoopLoc, factors: &[u32]) -> Vec<Variant> {
    let mut out = Vec::new();
    for &f in factors {
        for mode in [Mode::Pragma, Mode::Manual] {
            if mode == Mode::Manual && f == 1 {
                continue;
            }
            if let Ok(v) = unroll(src, file, loc, f, mode) {
                out.push(v);
            }
        }
    }
    out
}
