//! Fixes, as ruff's `Fix`: a diagnostic may carry non-overlapping byte edits on the original text
//! with an [`Applicability`]. [`fix_source`] applies the applicable fixes of a file round after
//! round (re-checking in between, at most [`MAX_ROUNDS`]), re-parses every result and keeps no fix
//! that would add a parse error. Pure: the binary reads and writes the files.

use frontend::edit::{self, Edit};
use serde::ser::{SerializeStruct, Serializer};
use serde::Serialize;

use crate::{check_source, Diagnostic, FileReport, Settings};

/// Whether a fix may be applied without review.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Applicability {
    /// Keeps the program's meaning: `check --fix` applies it.
    Safe,
    /// May change what the program does (that is often the point, e.g. wave64 instead of
    /// wave32): applied only with `--unsafe-fixes`.
    Unsafe,
}

/// One fix: what it does, in one line, and the edits that do it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fix {
    pub applicability: Applicability,
    /// Imperative, one line: "Replace `32` with `warpSize`".
    pub message: String,
    /// Non-overlapping edits on the original bytes, sorted by position.
    pub edits: Vec<Edit>,
}

impl Fix {
    /// A fix of one edit.
    pub fn new(applicability: Applicability, message: impl Into<String>, edit: Edit) -> Fix {
        Fix {
            applicability,
            message: message.into(),
            edits: vec![edit],
        }
    }

    /// An unsafe fix replacing `span` with `text`.
    pub fn unsafe_replace(message: impl Into<String>, span: frontend::Span, text: &str) -> Fix {
        Fix::new(
            Applicability::Unsafe,
            message,
            Edit::replace(span.start..span.end, text),
        )
    }

    /// Applied in this mode (`--fix`: safe ones; `--unsafe-fixes`: all)?
    pub fn applies(&self, unsafe_fixes: bool) -> bool {
        unsafe_fixes || self.applicability == Applicability::Safe
    }

    fn overlaps(&self, taken: &[&Edit]) -> bool {
        self.edits
            .iter()
            .any(|e| taken.iter().any(|t| edit::overlaps(e, t)))
    }
}

/// JSON shape (`check --format json`): `{"applicability", "message", "edits": [{"start", "end",
/// "content"}]}`, offsets in bytes of the original file, `content` as text.
impl Serialize for Fix {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct EditJson<'a> {
            start: usize,
            end: usize,
            content: std::borrow::Cow<'a, str>,
        }
        let edits: Vec<EditJson> = self
            .edits
            .iter()
            .map(|e| EditJson {
                start: e.range.start,
                end: e.range.end,
                content: String::from_utf8_lossy(&e.text),
            })
            .collect();
        let mut st = s.serialize_struct("Fix", 3)?;
        st.serialize_field("applicability", &self.applicability)?;
        st.serialize_field("message", &self.message)?;
        st.serialize_field("edits", &edits)?;
        st.end()
    }
}

/// Fix rounds before giving up on a file whose fixes keep producing new fixable findings.
pub const MAX_ROUNDS: usize = 10;

/// The result of one round: the new text, the indices of the fixes applied, and those refused
/// because they would add a parse error.
#[derive(Debug, Clone)]
struct Round {
    pub source: Vec<u8>,
    pub applied: Vec<usize>,
    pub rejected: Vec<usize>,
}

fn parse_errors(src: &[u8]) -> usize {
    frontend::parse(src).parse_errors.len()
}

/// Applies `fixes` to `src`: in order of position, each fix whose edits overlap none already
/// taken (the others wait for the next round, as in ruff). When the result has more parse errors
/// than `src`, every fix is tried alone and only those that add none are kept.
fn apply_round(src: &[u8], fixes: &[&Fix]) -> Round {
    let mut order: Vec<usize> = (0..fixes.len())
        .filter(|&i| !fixes[i].edits.is_empty())
        .collect();
    order.sort_by_key(|&i| fixes[i].edits.iter().map(|e| e.range.start).min());
    let select = |candidates: &[usize]| -> Vec<usize> {
        let mut taken: Vec<&Edit> = Vec::new();
        let mut chosen = Vec::new();
        for &i in candidates {
            if fixes[i].overlaps(&taken) || fixes[i].edits.iter().any(|e| e.range.end > src.len()) {
                continue;
            }
            taken.extend(fixes[i].edits.iter());
            chosen.push(i);
        }
        chosen.sort_unstable();
        chosen
    };
    let apply = |chosen: &[usize]| -> Vec<u8> {
        let edits: Vec<Edit> = chosen
            .iter()
            .flat_map(|&i| fixes[i].edits.iter().cloned())
            .collect();
        edit::apply(src, &edits)
    };
    let chosen = select(&order);
    if chosen.is_empty() {
        return Round {
            source: src.to_vec(),
            applied: Vec::new(),
            rejected: Vec::new(),
        };
    }
    let base = parse_errors(src);
    let out = apply(&chosen);
    if parse_errors(&out) <= base {
        return Round {
            source: out,
            applied: chosen,
            rejected: Vec::new(),
        };
    }
    let (good, rejected): (Vec<usize>, Vec<usize>) = chosen
        .iter()
        .partition(|&&i| parse_errors(&apply(&[i])) <= base);
    let out = apply(&good);
    if good.is_empty() || parse_errors(&out) > base {
        return Round {
            source: src.to_vec(),
            applied: Vec::new(),
            rejected: chosen,
        };
    }
    Round {
        source: out,
        applied: good,
        rejected,
    }
}

/// What fixing one file gave.
#[derive(Debug, Clone)]
pub struct Fixed {
    /// The fixed text (the input when nothing applied).
    pub source: Vec<u8>,
    /// Findings fixed, over all rounds.
    pub fixed: usize,
    /// Findings whose fix was not applied because it would add a parse error.
    pub rejected: Vec<Diagnostic>,
    /// The report and diagnostics of the fixed text (what remains).
    pub report: FileReport,
    pub diagnostics: Vec<Diagnostic>,
}

impl Fixed {
    pub fn changed(&self, original: &[u8]) -> bool {
        self.source != original
    }
}

/// Checks `source` and applies its applicable fixes until none is left (or [`MAX_ROUNDS`]),
/// re-checking after each round; a fix that would add a parse error is left out and listed in
/// [`Fixed::rejected`].
pub fn fix_source(path: &str, source: &[u8], settings: &Settings, unsafe_fixes: bool) -> Fixed {
    let mut cur = source.to_vec();
    let mut fixed = 0;
    let mut rejected: Vec<Diagnostic> = Vec::new();
    let (mut report, mut diagnostics) = check_source(path, &cur, settings);
    for _ in 0..MAX_ROUNDS {
        let fixable: Vec<&Diagnostic> = diagnostics
            .iter()
            .filter(|d| d.fix.as_ref().is_some_and(|f| f.applies(unsafe_fixes)))
            .filter(|d| !rejected.iter().any(|r| same_finding(r, d)))
            .collect();
        if fixable.is_empty() {
            break;
        }
        let fixes: Vec<&Fix> = fixable.iter().filter_map(|d| d.fix.as_ref()).collect();
        let round = apply_round(&cur, &fixes);
        rejected.extend(round.rejected.iter().map(|&i| fixable[i].clone()));
        if round.applied.is_empty() {
            if round.rejected.is_empty() {
                break;
            }
            continue;
        }
        fixed += round.applied.len();
        cur = round.source;
        (report, diagnostics) = check_source(path, &cur, settings);
    }
    Fixed {
        source: cur,
        fixed,
        rejected,
        report,
        diagnostics,
    }
}

/// The same finding in the same text (a rejected fix is not retried).
fn same_finding(a: &Diagnostic, b: &Diagnostic) -> bool {
    a.rule == b.rule && a.span == b.span && a.message == b.message
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fix(a: Applicability, range: std::ops::Range<usize>, text: &str) -> Fix {
        Fix::new(a, "f", Edit::replace(range, text))
    }

    #[test]
    fn overlapping_fixes_wait_for_the_next_round() {
        let src = b"int a = 1; int b = 2;";
        let f1 = fix(Applicability::Safe, 8..9, "3");
        let f2 = fix(Applicability::Safe, 8..9, "4");
        let f3 = fix(Applicability::Safe, 19..20, "5");
        let r = apply_round(src, &[&f3, &f2, &f1]);
        assert_eq!(r.source, b"int a = 4; int b = 5;");
        assert_eq!(r.applied, vec![0, 1]);
        assert!(r.rejected.is_empty());
    }

    #[test]
    fn a_fix_that_adds_a_parse_error_is_refused_alone() {
        let src = b"__global__ void k(int* a) { a[0] = 1; }\n";
        let good = fix(Applicability::Safe, 35..36, "2");
        let bad = fix(Applicability::Safe, 38..39, "{ {");
        let r = apply_round(src, &[&good, &bad]);
        assert_eq!(r.applied, vec![0]);
        assert_eq!(r.rejected, vec![1]);
        assert_eq!(
            r.source,
            b"__global__ void k(int* a) { a[0] = 2; }\n".to_vec()
        );
        let r = apply_round(src, &[&bad]);
        assert_eq!(r.source, src.to_vec(), "nothing written");
        assert_eq!(r.rejected, vec![0]);
    }

    #[test]
    fn applicability() {
        let s = fix(Applicability::Safe, 0..1, "x");
        let u = fix(Applicability::Unsafe, 0..1, "x");
        assert!(s.applies(false) && s.applies(true));
        assert!(!u.applies(false) && u.applies(true));
    }

    #[test]
    fn json_shape() {
        let f = fix(Applicability::Unsafe, 3..5, "warpSize");
        let v = serde_json::to_value(&f).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"applicability": "unsafe", "message": "f",
                "edits": [{"start": 3, "end": 5, "content": "warpSize"}]})
        );
    }
}
