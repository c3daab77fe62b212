//! Byte-range edits applied to the original text, so that every untouched byte stays identical.
//! The one edit type of the workspace: `transforms` rewrites and `guards` fixes are made of it.

use serde::Serialize;
use std::ops::Range;

/// Replace `range` of the original bytes with `text`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Edit {
    pub range: Range<usize>,
    pub text: Vec<u8>,
}

impl Edit {
    pub fn replace(range: Range<usize>, text: impl Into<Vec<u8>>) -> Edit {
        Edit {
            range,
            text: text.into(),
        }
    }

    pub fn insert(at: usize, text: impl Into<Vec<u8>>) -> Edit {
        Edit {
            range: at..at,
            text: text.into(),
        }
    }

    pub fn delete(range: Range<usize>) -> Edit {
        Edit {
            range,
            text: Vec::new(),
        }
    }
}

/// Where the byte at offset `o` of the original text is after `edits` (non-overlapping, any
/// order), or `None` when an edit replaces it. An insertion at `o` goes before it.
pub fn map_offset(o: usize, edits: &[Edit]) -> Option<usize> {
    let mut shift: isize = 0;
    for e in edits {
        let r = &e.range;
        if r.end <= o {
            shift += e.text.len() as isize - (r.end - r.start) as isize;
        } else if r.start <= o {
            return None;
        }
    }
    Some((o as isize + shift) as usize)
}

/// Apply non-overlapping edits (in any order) to `src`.
///
/// # Panics
/// When two edits overlap or one lies outside `src`: edits are built by the workspace's own
/// crates, so that is a bug, not bad input (see [`overlaps`] to check first).
pub fn apply(src: &[u8], edits: &[Edit]) -> Vec<u8> {
    let mut sorted: Vec<&Edit> = edits.iter().collect();
    sorted.sort_by_key(|e| (e.range.start, e.range.end));
    let mut out =
        Vec::with_capacity(src.len() + sorted.iter().map(|e| e.text.len()).sum::<usize>());
    let mut pos = 0;
    for e in sorted {
        assert!(
            e.range.start >= pos && e.range.end <= src.len(),
            "overlapping or out-of-range edit {:?}",
            e.range
        );
        out.extend_from_slice(&src[pos..e.range.start]);
        out.extend_from_slice(&e.text);
        pos = e.range.end;
    }
    out.extend_from_slice(&src[pos..]);
    out
}

/// True when edits `a` and `b` touch the same bytes (two insertions at one offset count as
/// overlapping: their order would be ambiguous).
pub fn overlaps(a: &Edit, b: &Edit) -> bool {
    if a.range.start == b.range.start {
        return true;
    }
    a.range.start < b.range.end && b.range.start < a.range.end
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn applies_in_offset_order() {
        let src = b"abcdef";
        let out = apply(
            src,
            &[
                Edit::replace(4..5, "E"),
                Edit::insert(0, ">"),
                Edit::delete(1..3),
            ],
        );
        assert_eq!(out, b">adEf");
    }

    #[test]
    fn overlap_cases() {
        assert!(overlaps(
            &Edit::replace(1..4, "x"),
            &Edit::replace(3..5, "y")
        ));
        assert!(overlaps(&Edit::insert(2, "x"), &Edit::insert(2, "y")));
        assert!(!overlaps(
            &Edit::replace(1..3, "x"),
            &Edit::replace(3..5, "y")
        ));
        assert!(!overlaps(&Edit::insert(3, "x"), &Edit::replace(1..3, "y")));
    }

    #[test]
    #[should_panic(expected = "overlapping")]
    fn rejects_overlaps() {
        apply(
            b"abcdef",
            &[Edit::replace(1..4, "x"), Edit::replace(2..3, "y")],
        );
    }
}
