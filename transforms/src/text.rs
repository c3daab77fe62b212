//! Byte-level text helpers: lines and indentation, and the tokens of loop headers and bodies
//! (the lexer is `frontend::lex`, shared with the lowering of `#define` bodies).

use std::ops::Range;

pub use frontend::lex::{tokenize, Tok, Token};

/// Offset of the first byte of the line holding `pos`.
pub fn line_start(src: &[u8], pos: usize) -> usize {
    src[..pos]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |p| p + 1)
}

/// Offset just past the end of the line holding `pos` (its `\n` included, if any).
pub fn line_end_inclusive(src: &[u8], pos: usize) -> usize {
    src[pos..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(src.len(), |p| pos + p + 1)
}

/// Leading whitespace of the line holding `pos`.
pub fn indent_of(src: &[u8], pos: usize) -> &[u8] {
    let s = line_start(src, pos);
    let n = src[s..]
        .iter()
        .take_while(|&&b| b == b' ' || b == b'\t')
        .count();
    &src[s..s + n]
}

/// True when only spaces/tabs precede `pos` on its line.
pub fn first_on_line(src: &[u8], pos: usize) -> bool {
    let s = line_start(src, pos);
    src[s..pos].iter().all(|&b| b == b' ' || b == b'\t')
}

/// True when only spaces/tabs (and a `\r`) follow `pos` up to the end of its line.
pub fn last_on_line(src: &[u8], pos: usize) -> bool {
    src[pos..]
        .iter()
        .take_while(|&&b| b != b'\n')
        .all(|&b| b == b' ' || b == b'\t' || b == b'\r')
}

/// The indentation step used inside `body` relative to `outer`: the extra leading whitespace of
/// the first body line that is indented deeper than `outer`; a tab or four spaces otherwise.
pub fn indent_unit(src: &[u8], body: Range<usize>, outer: &[u8]) -> Vec<u8> {
    let mut pos = body.start;
    while pos < body.end {
        let next = line_end_inclusive(src, pos);
        if next >= body.end {
            break;
        }
        let ind = indent_of(src, next);
        let rest_blank = src[next + ind.len()..]
            .first()
            .is_none_or(|&b| b == b'\n' || b == b'\r');
        if !rest_blank && ind.len() > outer.len() && ind.starts_with(outer) {
            return ind[outer.len()..].to_vec();
        }
        pos = next;
    }
    if outer.contains(&b'\t') {
        b"\t".to_vec()
    } else {
        b"    ".to_vec()
    }
}

/// Add `prefix` after every `\n` of `text` (not before the first line), except at line starts
/// that `keep(offset_in_text)` says must stay byte-exact (inside multi-line string literals),
/// and except on empty lines.
pub fn reindent(text: &[u8], prefix: &[u8], keep: impl Fn(usize) -> bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len() + 64);
    for (i, &b) in text.iter().enumerate() {
        out.push(b);
        if b == b'\n' && i + 1 < text.len() && !keep(i + 1) {
            let next = text[i + 1];
            if next != b'\n' && next != b'\r' {
                out.extend_from_slice(prefix);
            }
        }
    }
    out
}

/// True when `src[range]` contains a comma outside any parentheses/brackets/braces.
pub fn has_top_level_comma(src: &[u8], range: Range<usize>) -> bool {
    let mut depth = 0i32;
    for t in tokenize(src, range) {
        match t.tok {
            Tok::Punct("(" | "[" | "{") => depth += 1,
            Tok::Punct(")" | "]" | "}") => depth -= 1,
            Tok::Punct(",") if depth == 0 => return true,
            Tok::Punct("<") | Tok::Punct(">") => {}
            _ => {}
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indent_unit_and_reindent() {
        let src = b"  for (;;) {\n      x;\n  }\n";
        assert_eq!(indent_unit(src, 11..src.len() - 1, b"  "), b"    ".to_vec());
        assert_eq!(
            reindent(b"{\n  x;\n\n}", b"\t", |_| false),
            b"{\n\t  x;\n\n\t}".to_vec()
        );
    }

    #[test]
    fn top_level_comma() {
        let s = b"i < min(a, b)";
        assert!(!has_top_level_comma(s, 0..s.len()));
        let s = b"i = 0, j = 0";
        assert!(has_top_level_comma(s, 0..s.len()));
    }
}
