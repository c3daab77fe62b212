//! Byte-level text helpers: a small C++ tokenizer for loop headers and bodies, lines and indentation.

use std::ops::Range;

/// One token of C/C++ source text (comments and whitespace are skipped).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tok {
    /// Identifier or keyword.
    Ident(String),
    /// Numeric literal, suffix included (`42u`, `0x10`, `1.5f`).
    Num(String),
    /// String or character literal.
    Str,
    /// Punctuator, longest match (`<<=`, `->`, `::`, `++`, ...).
    Punct(&'static str),
    /// A `#` that starts a preprocessor line.
    Directive(String),
    /// Any other byte.
    Other(u8),
}

#[derive(Debug, Clone)]
pub struct Token {
    pub tok: Tok,
    pub range: Range<usize>,
}

const PUNCTS: &[&str] = &[
    "<<=", ">>=", "...", "->*", "<=>", "->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=", "&&",
    "||", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "::", ".*", "+", "-", "*", "/", "%", "<",
    ">", "=", "!", "~", "&", "|", "^", "?", ":", ";", ",", ".", "(", ")", "[", "]", "{", "}",
];

fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_' || b >= 0x80
}

fn is_ident_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

/// Tokenize `src[range]`. Comments are skipped; string and char literals become [`Tok::Str`];
/// a `#` first on its line becomes [`Tok::Directive`] holding the directive name (`if`, `pragma`).
pub fn tokenize(src: &[u8], range: Range<usize>) -> Vec<Token> {
    let mut out = Vec::new();
    let end = range.end.min(src.len());
    let mut i = range.start;
    let mut line_start = true;
    while i < end {
        let b = src[i];
        if b == b'\n' {
            line_start = true;
            i += 1;
            continue;
        }
        if b.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if b == b'\\' && i + 1 < end && (src[i + 1] == b'\n' || src[i + 1] == b'\r') {
            i += 2;
            continue;
        }
        if src[i..end].starts_with(b"//") {
            while i < end && src[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        if src[i..end].starts_with(b"/*") {
            i += 2;
            while i < end && !src[i..end].starts_with(b"*/") {
                i += 1;
            }
            i = (i + 2).min(end);
            continue;
        }
        let start = i;
        let was_line_start = line_start;
        line_start = false;
        if b == b'#' && was_line_start {
            i += 1;
            while i < end && (src[i] == b' ' || src[i] == b'\t') {
                i += 1;
            }
            let s = i;
            while i < end && is_ident_char(src[i]) {
                i += 1;
            }
            let name = String::from_utf8_lossy(&src[s..i]).into_owned();
            out.push(Token {
                tok: Tok::Directive(name),
                range: start..i,
            });
            continue;
        }
        if b == b'"' || b == b'\'' {
            i = skip_quoted(src, i, end);
            out.push(Token {
                tok: Tok::Str,
                range: start..i,
            });
            continue;
        }
        if is_ident_start(b) {
            while i < end && is_ident_char(src[i]) {
                i += 1;
            }
            // String literal prefixes (u8"..", L'..', R"(..)") are rare in kernels: a prefix
            // directly followed by a quote makes the whole thing a string token.
            if i < end && (src[i] == b'"' || src[i] == b'\'') {
                i = skip_quoted(src, i, end);
                out.push(Token {
                    tok: Tok::Str,
                    range: start..i,
                });
                continue;
            }
            out.push(Token {
                tok: Tok::Ident(String::from_utf8_lossy(&src[start..i]).into_owned()),
                range: start..i,
            });
            continue;
        }
        if b.is_ascii_digit() || (b == b'.' && i + 1 < end && src[i + 1].is_ascii_digit()) {
            while i < end {
                let c = src[i];
                let exponent_sign =
                    (c == b'+' || c == b'-') && matches!(src[i - 1], b'e' | b'E' | b'p' | b'P');
                if is_ident_char(c) || c == b'.' || c == b'\'' || exponent_sign {
                    i += 1;
                } else {
                    break;
                }
            }
            out.push(Token {
                tok: Tok::Num(String::from_utf8_lossy(&src[start..i]).into_owned()),
                range: start..i,
            });
            continue;
        }
        if let Some(p) = PUNCTS
            .iter()
            .find(|p| src[i..end].starts_with(p.as_bytes()))
        {
            i += p.len();
            out.push(Token {
                tok: Tok::Punct(p),
                range: start..i,
            });
            continue;
        }
        i += 1;
        out.push(Token {
            tok: Tok::Other(b),
            range: start..i,
        });
    }
    out
}

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

/// The end of the string or char literal whose opening quote is at `open` (just past its
/// closing quote, or `end` when it is unterminated); backslash escapes are skipped.
fn skip_quoted(src: &[u8], open: usize, end: usize) -> usize {
    let q = src[open];
    let mut i = open + 1;
    while i < end && src[i] != q {
        if src[i] == b'\\' {
            i += 1;
        }
        i += 1;
    }
    (i + 1).min(end)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Vec<Tok> {
        tokenize(s.as_bytes(), 0..s.len())
            .into_iter()
            .map(|t| t.tok)
            .collect()
    }

    #[test]
    fn tokenizes_operators_longest_first() {
        assert_eq!(
            toks("i <<= 2; p->x /* c */ // d\n a::b"),
            vec![
                Tok::Ident("i".into()),
                Tok::Punct("<<="),
                Tok::Num("2".into()),
                Tok::Punct(";"),
                Tok::Ident("p".into()),
                Tok::Punct("->"),
                Tok::Ident("x".into()),
                Tok::Ident("a".into()),
                Tok::Punct("::"),
                Tok::Ident("b".into()),
            ]
        );
    }

    #[test]
    fn directives_only_at_line_start() {
        assert_eq!(
            toks("  #if X\n a # b"),
            vec![
                Tok::Directive("if".into()),
                Tok::Ident("X".into()),
                Tok::Ident("a".into()),
                Tok::Other(b'#'),
                Tok::Ident("b".into()),
            ]
        );
    }

    #[test]
    fn strings_and_numbers() {
        assert_eq!(
            toks(r#""a\"i" 'i' 1.5e-3f 0x1Fu"#),
            vec![
                Tok::Str,
                Tok::Str,
                Tok::Num("1.5e-3f".into()),
                Tok::Num("0x1Fu".into())
            ]
        );
    }

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
