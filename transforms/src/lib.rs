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
pub use refusal::{Part, Refusal};

use frontend::SourceFile;
use serde::Serialize;
use std::str::FromStr;

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

/// A loop as the user names it: the line of its keyword, or its `function:index` id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoopRef {
    Line(u32),
    Id { function: String, index: usize },
}

impl FromStr for LoopRef {
    type Err = LookupError;
    fn from_str(s: &str) -> Result<LoopRef, LookupError> {
        let s = s.trim();
        if let Ok(line) = s.parse::<u32>() {
            return Ok(LoopRef::Line(line));
        }
        match s.rsplit_once(':') {
            Some((f, i)) if !f.is_empty() && !f.ends_with(':') => match i.parse::<usize>() {
                Ok(index) => Ok(LoopRef::Id {
                    function: f.to_string(),
                    index,
                }),
                Err(_) => Err(LookupError::BadRef(s.to_string())),
            },
            _ => Err(LookupError::BadRef(s.to_string())),
        }
    }
}

/// A resolved loop: `file.functions[function].loops[index]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoopLoc {
    pub function: usize,
    pub index: usize,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LookupError {
    #[error("`{0}` is neither a line number nor a `function:index` loop id")]
    BadRef(String),
    #[error("no loop starts on line {0}")]
    NoLoopAtLine(u32),
    #[error("several loops start on line {0}; use a `function:index` id")]
    AmbiguousLine(u32),
    #[error("no function named `{0}` with a body")]
    UnknownFunction(String),
    #[error("function `{function}` has no loop {index} (it has {count})")]
    NoSuchLoop {
        function: String,
        index: usize,
        count: usize,
    },
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    #[error("the unroll factor must be at least 1 (got {0})")]
    BadFactor(u32),
    #[error(transparent)]
    Lookup(#[from] LookupError),
    #[error("cannot unroll: {0} [{id}]", id = .0.id())]
    Refused(#[from] Refusal),
}

/// Find a loop by line or id.
pub fn resolve(file: &SourceFile, r: &LoopRef) -> Result<LoopLoc, LookupError> {
    match r {
        LoopRef::Line(line) => {
            let hits: Vec<LoopLoc> = file
                .functions
                .iter()
                .enumerate()
                .flat_map(|(fi, f)| {
                    f.loops
                        .iter()
                        .filter(|l| l.keyword.line == *line)
                        .map(move |l| LoopLoc {
                            function: fi,
                            index: l.index,
                        })
                })
                .collect();
            match hits.len() {
                0 => Err(LookupError::NoLoopAtLine(*line)),
                1 => Ok(hits[0]),
                _ => Err(LookupError::AmbiguousLine(*line)),
            }
        }
        LoopRef::Id { function, index } => {
            let fi = file
                .functions
                .iter()
                .position(|f| f.name == *function || f.qualified_name == *function)
                .ok_or_else(|| LookupError::UnknownFunction(function.clone()))?;
            let count = file.functions[fi].loops.len();
            if *index >= count {
                return Err(LookupError::NoSuchLoop {
                    function: function.clone(),
                    index: *index,
                    count,
                });
            }
            Ok(LoopLoc {
                function: fi,
                index: *index,
            })
        }
    }
}

/// The `function:index` id of a loop (the id `check --format json` prints).
pub fn loop_id(file: &SourceFile, loc: LoopLoc) -> String {
    format!("{}:{}", file.functions[loc.function].name, loc.index)
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

/// Largest manual unroll factor (the body is copied this many times; the runtime guard's
/// arithmetic is exact for factors far beyond it).
pub const MAX_MANUAL_FACTOR: u32 = 1024;

/// Unroll the loop at `loc` of `file` (parsed from `src`) by `factor` in `mode`.
///
/// Pragma mode works on any loop; manual mode needs a canonical `for` loop whose rewrite it
/// can prove equivalent, and refuses otherwise. Manual factor 1 returns the source unchanged.
/// The result is re-parsed: a variant with more syntax errors than the original is refused.
pub fn unroll(
    src: &[u8],
    file: &SourceFile,
    loc: LoopLoc,
    factor: u32,
    mode: Mode,
) -> Result<Variant, Error> {
    if factor < 1 {
        return Err(Error::BadFactor(factor));
    }
    let func = file
        .functions
        .get(loc.function)
        .ok_or(LookupError::NoSuchLoop {
            function: format!("#{}", loc.function),
            index: loc.index,
            count: 0,
        })?;
    let lp = func
        .loops
        .get(loc.index)
        .ok_or_else(|| LookupError::NoSuchLoop {
            function: func.name.clone(),
            index: loc.index,
            count: func.loops.len(),
        })?;
    let edits = match mode {
        Mode::Pragma => pragma::edits(src, file, lp, factor),
        Mode::Manual => {
            let shape = adapter::from_ir(src, file, func, lp)?;
            if factor == 1 {
                Vec::new()
            } else if factor > MAX_MANUAL_FACTOR {
                return Err(Refusal::FactorTooLarge {
                    factor,
                    ty: shape.ty_text.clone(),
                    step: 0,
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
        let reparsed = frontend::parse(&source);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_loop_refs() {
        assert_eq!("12".parse::<LoopRef>().unwrap(), LoopRef::Line(12));
        assert_eq!(
            "saxpy:1".parse::<LoopRef>().unwrap(),
            LoopRef::Id {
                function: "saxpy".into(),
                index: 1
            }
        );
        assert_eq!(
            "ns::k:0".parse::<LoopRef>().unwrap(),
            LoopRef::Id {
                function: "ns::k".into(),
                index: 0
            }
        );
        assert!("k:x".parse::<LoopRef>().is_err());
        assert!("ns::".parse::<LoopRef>().is_err());
    }
}
