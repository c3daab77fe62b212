//! The identity types of functions and loops (`FunctionId`, `LoopId`, `LoopLoc`, what users type
//! as `LoopRef`, and the `LookupError` that lists candidates). A leaf module: `ir` holds these
//! ids and `identity` computes and resolves them, so neither needs the other's internals.

use std::fmt;
use std::str::FromStr;

use serde::{Serialize, Serializer};

/// The identity of a function within its file (see the module documentation).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize)]
#[serde(transparent)]
pub struct FunctionId(String);

impl FunctionId {
    /// Only the frontend assigns ids (`identity::assign_ids`).
    pub(crate) fn new(id: String) -> FunctionId {
        FunctionId(id)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for FunctionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The identity of a loop: its function's id and its index among that function's loops.
/// Displayed (and serialised) as `FUNCTION:INDEX`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LoopId {
    pub function: FunctionId,
    pub index: usize,
}

impl fmt::Display for LoopId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.function, self.index)
    }
}

impl Serialize for LoopId {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Where a loop is in one parse: `file.functions[function].loops[index]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct LoopLoc {
    pub function: usize,
    pub index: usize,
}

/// A loop as a user names it: the line of its `for`/`while`/`do` keyword, or an id (the full
/// `FUNCTION:INDEX`, or a shorter `name:INDEX` that must name exactly one loop).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoopRef {
    Line(u32),
    Id { function: String, index: usize },
}

impl FromStr for LoopRef {
    type Err = LookupError;
    fn from_str(s: &str) -> Result<LoopRef, LookupError> {
        let s = s.trim();
        if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
            return s
                .parse::<u32>()
                .map(LoopRef::Line)
                .map_err(|_| LookupError::BadRef(s.to_string()));
        }
        match s.rsplit_once(':') {
            Some((f, i))
                if !f.trim().is_empty()
                    && !f.ends_with(':')
                    && !i.is_empty()
                    && i.bytes().all(|b| b.is_ascii_digit()) =>
            {
                match i.parse::<usize>() {
                    Ok(index) => Ok(LoopRef::Id {
                        function: f.trim().to_string(),
                        index,
                    }),
                    Err(_) => Err(LookupError::BadRef(s.to_string())),
                }
            }
            _ => Err(LookupError::BadRef(s.to_string())),
        }
    }
}

/// A loop offered to the user when a reference does not name exactly one loop.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Candidate {
    pub id: String,
    pub line: u32,
}

/// At most this many candidates are listed in a message.
const MAX_LISTED: usize = 20;

fn inside_of(c: &Option<Candidate>) -> String {
    match c {
        Some(c) => format!(
            ", which is inside loop {} (line {}): name that loop by its line or its id",
            c.id, c.line
        ),
        None => String::new(),
    }
}

fn listed(c: &[Candidate]) -> String {
    let mut s = String::new();
    for x in c.iter().take(MAX_LISTED) {
        s.push_str(&format!("\n  {} (line {})", x.id, x.line));
    }
    if c.len() > MAX_LISTED {
        s.push_str(&format!("\n  ... and {} more", c.len() - MAX_LISTED));
    }
    if c.is_empty() {
        s.push_str("\n  (the file has no loop in a kernel or device function)");
    }
    s
}

/// Why a [`LoopRef`] names no single loop. Every variant but `BadRef` lists candidates.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LookupError {
    #[error("`{0}` is neither a line number nor a `FUNCTION:INDEX` loop id")]
    BadRef(String),
    #[error("no loop starts on line {line}{}; the nearest loops:{}", inside_of(.inside), listed(.candidates))]
    NoLoopAtLine {
        line: u32,
        /// The innermost loop whose statement holds the line, if any.
        inside: Option<Candidate>,
        candidates: Vec<Candidate>,
    },
    #[error("several loops start on line {line}; name one by its id:{}", listed(.candidates))]
    AmbiguousLine {
        line: u32,
        candidates: Vec<Candidate>,
    },
    #[error("no function named `{function}` with a loop; the loops of this file:{}", listed(.candidates))]
    UnknownFunction {
        function: String,
        candidates: Vec<Candidate>,
    },
    #[error("function `{function}` has no loop {index} (it has {count}):{}", listed(.candidates))]
    NoSuchLoop {
        function: String,
        index: usize,
        count: usize,
        candidates: Vec<Candidate>,
    },
    #[error("`{wanted}` names several loops; use the full id:{}", listed(.candidates))]
    AmbiguousId {
        wanted: String,
        candidates: Vec<Candidate>,
    },
}

impl LookupError {
    /// The loops the message offers (empty for `BadRef`).
    pub fn candidates(&self) -> &[Candidate] {
        match self {
            LookupError::BadRef(_) => &[],
            LookupError::NoLoopAtLine { candidates, .. }
            | LookupError::AmbiguousLine { candidates, .. }
            | LookupError::UnknownFunction { candidates, .. }
            | LookupError::NoSuchLoop { candidates, .. }
            | LookupError::AmbiguousId { candidates, .. } => candidates,
        }
    }
}
