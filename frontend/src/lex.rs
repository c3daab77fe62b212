//! The one C/C++ lexer of the workspace: tokens of source text (loop headers and bodies for
//! `transforms`, `#define` replacement lists for the lowering), comment ranges, string-literal
//! contents, and integer literals.
//!
//! It works on bytes, never on the syntax tree: macro bodies are not parsed by the grammar, and
//! `transforms` reasons about the exact text it rewrites.

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

/// A token and its byte range in the text it was read from.
#[derive(Debug, Clone)]
pub struct Token {
    pub tok: Tok,
    pub range: Range<usize>,
}

/// A comment found by the lexer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Comment {
    /// From the `//` or `/*` to the end of the line (newline excluded) or past the `*/`.
    pub range: Range<usize>,
    /// `/* ... */` (as opposed to `// ...`).
    pub block: bool,
}

/// Every punctuator the lexer knows (the reference [`punct_candidates`] is checked against).
#[cfg(test)]
const PUNCTS: &[&str] = &[
    "<<=", ">>=", "...", "->*", "<=>", "->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=", "&&",
    "||", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "::", ".*", "+", "-", "*", "/", "%", "<",
    ">", "=", "!", "~", "&", "|", "^", "?", ":", ";", ",", ".", "(", ")", "[", "]", "{", "}",
];

/// The punctuators that start with `b`, longest first (`PUNCTS` in the tests is the list).
fn punct_candidates(b: u8) -> &'static [&'static str] {
    match b {
        b'<' => &["<<=", "<=>", "<<", "<=", "<"],
        b'>' => &[">>=", ">>", ">=", ">"],
        b'.' => &["...", ".*", "."],
        b'-' => &["->*", "->", "--", "-=", "-"],
        b'+' => &["++", "+=", "+"],
        b'=' => &["==", "="],
        b'!' => &["!=", "!"],
        b'&' => &["&&", "&=", "&"],
        b'|' => &["||", "|=", "|"],
        b'*' => &["*=", "*"],
        b'/' => &["/=", "/"],
        b'%' => &["%=", "%"],
        b'^' => &["^=", "^"],
        b':' => &["::", ":"],
        b'~' => &["~"],
        b'?' => &["?"],
        b';' => &[";"],
        b',' => &[","],
        b'(' => &["("],
        b')' => &[")"],
        b'[' => &["["],
        b']' => &["]"],
        b'{' => &["{"],
        b'}' => &["}"],
        _ => &[],
    }
}

fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_' || b >= 0x80
}

pub(crate) fn is_ident_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

/// True when `src[range]` is not glued to an identifier character (ASCII letters, digits and
/// `_`) on either side: a name found by a byte search is a whole identifier there.
pub fn is_whole_identifier(src: &[u8], range: Range<usize>) -> bool {
    let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let before = range.start.checked_sub(1).and_then(|i| src.get(i).copied());
    let after = src.get(range.end).copied();
    !before.is_some_and(ident) && !after.is_some_and(ident)
}

/// Tokenize `src[range]`. Comments are skipped; string and char literals become [`Tok::Str`];
/// a `#` first on its line becomes [`Tok::Directive`] holding the directive name (`if`, `pragma`).
pub fn tokenize(src: &[u8], range: Range<usize>) -> Vec<Token> {
    let mut out = Vec::new();
    lex(src, range, true, Sink::Tokens(&mut out));
    out
}

/// Tokenize a `#define` replacement list (one logical line): there a `#` stringizes its operand
/// and is never a directive, so it is [`Tok::Other`].
pub fn tokenize_macro_body(body: &str) -> Vec<Token> {
    let mut out = Vec::new();
    lex(
        body.as_bytes(),
        0..body.len(),
        false,
        Sink::Tokens(&mut out),
    );
    out
}

/// What kind of token [`scan`] met: [`Tok`] without the text (nothing is allocated).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Ident,
    Num,
    Str,
    Punct(&'static str),
    Directive,
    Other,
}

/// Calls `f` with the kind and range of every token of `src[range]`, in order, as
/// [`tokenize`] would list them, without building them: for one pass over a large text.
pub fn scan(src: &[u8], range: Range<usize>, mut f: impl FnMut(Kind, Range<usize>)) {
    lex(src, range, true, Sink::Visit(&mut f));
}

/// The comments of `src[range]`, in order (string and char literals are skipped, so a `//`
/// inside a literal is no comment).
pub fn comments(src: &[u8], range: Range<usize>) -> Vec<Comment> {
    let mut out = Vec::new();
    lex(src, range, false, Sink::Comments(&mut out));
    out
}

/// The contents of a [`Tok::Str`] token's literal (between its quotes; up to the end of the
/// token when it is unterminated) and its quote byte (`"` or `'`). A prefix (`L`, `u8`) is not
/// part of the contents.
pub fn literal_contents(src: &[u8], token: &Token) -> Option<(u8, Range<usize>)> {
    if token.tok != Tok::Str {
        return None;
    }
    let end = token.range.end.min(src.len());
    let open = token.range.start
        + src
            .get(token.range.start..end)?
            .iter()
            .position(|&b| b == b'"' || b == b'\'')?;
    Some((src[open], open + 1..closing_quote(src, open, end)))
}

/// What a lexing pass collects: tokens (comments skipped), comments only (no token is built),
/// or each token's kind handed to a visitor.
enum Sink<'a> {
    Tokens(&'a mut Vec<Token>),
    Comments(&'a mut Vec<Comment>),
    Visit(&'a mut dyn FnMut(Kind, Range<usize>)),
}

impl Sink<'_> {
    /// A token of kind `kind`; `make` builds it only when tokens are collected.
    fn token(&mut self, kind: Kind, make: impl FnOnce() -> Tok, range: Range<usize>) {
        match self {
            Sink::Tokens(out) => out.push(Token { tok: make(), range }),
            Sink::Comments(_) => {}
            Sink::Visit(f) => f(kind, range),
        }
    }

    fn comment(&mut self, range: Range<usize>, block: bool) {
        if let Sink::Comments(out) = self {
            out.push(Comment { range, block });
        }
    }
}

fn lex(src: &[u8], range: Range<usize>, directives: bool, mut out: Sink<'_>) {
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
            let start = i;
            while i < end && src[i] != b'\n' {
                i += 1;
            }
            out.comment(start..i, false);
            continue;
        }
        if src[i..end].starts_with(b"/*") {
            let start = i;
            i += 2;
            while i < end && !src[i..end].starts_with(b"*/") {
                i += 1;
            }
            i = (i + 2).min(end);
            out.comment(start..i, true);
            continue;
        }
        let start = i;
        let was_line_start = line_start;
        line_start = false;
        if b == b'#' && was_line_start && directives {
            i += 1;
            while i < end && (src[i] == b' ' || src[i] == b'\t') {
                i += 1;
            }
            let s = i;
            while i < end && is_ident_char(src[i]) {
                i += 1;
            }
            out.token(
                Kind::Directive,
                || Tok::Directive(String::from_utf8_lossy(&src[s..i]).into_owned()),
                start..i,
            );
            continue;
        }
        if b == b'"' || b == b'\'' {
            i = skip_quoted(src, i, end);
            out.token(Kind::Str, || Tok::Str, start..i);
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
                out.token(Kind::Str, || Tok::Str, start..i);
                continue;
            }
            out.token(
                Kind::Ident,
                || Tok::Ident(String::from_utf8_lossy(&src[start..i]).into_owned()),
                start..i,
            );
            continue;
        }
        if b.is_ascii_digit() || (b == b'.' && i + 1 < end && src[i + 1].is_ascii_digit()) {
            // A preprocessing number: digits, identifier characters, `.`, `'` separators and a
            // sign after an exponent letter.
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
            out.token(
                Kind::Num,
                || Tok::Num(String::from_utf8_lossy(&src[start..i]).into_owned()),
                start..i,
            );
            continue;
        }
        // Punctuators by their first byte, longest first: no search over the whole list (a run
        // of millions of brackets costs as much as any other byte).
        if let Some(p) = punct_candidates(b)
            .iter()
            .find(|p| src[i..end].starts_with(p.as_bytes()))
        {
            i += p.len();
            out.token(Kind::Punct(p), || Tok::Punct(p), start..i);
            continue;
        }
        i += 1;
        out.token(Kind::Other, || Tok::Other(b), start..i);
    }
}

/// The end of the string or char literal whose opening quote is at `open` (just past its
/// closing quote, or `end` when it is unterminated); backslash escapes are skipped.
fn skip_quoted(src: &[u8], open: usize, end: usize) -> usize {
    (closing_quote(src, open, end) + 1).min(end)
}

/// The position of the closing quote of the literal whose opening quote is at `open`, or `end`
/// when it is unterminated; backslash escapes are skipped.
fn closing_quote(src: &[u8], open: usize, end: usize) -> usize {
    let q = src[open];
    let mut i = open + 1;
    while i < end && src[i] != q {
        if src[i] == b'\\' {
            i += 1;
        }
        i += 1;
    }
    i.min(end)
}

/// Parses a C/C++ integer literal (`42`, `0x2A`, `052`, `0b101`, `1'000`, `16u`, `8ULL`).
pub fn parse_int_literal(text: &str) -> Option<i128> {
    let t: String = text.chars().filter(|&c| c != '\'').collect();
    let t = t.trim_end_matches(['u', 'U', 'l', 'L', 'z', 'Z']);
    if t.is_empty() {
        return None;
    }
    let (digits, radix) = if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        (h, 16)
    } else if let Some(b) = t.strip_prefix("0b").or_else(|| t.strip_prefix("0B")) {
        (b, 2)
    } else if t.len() > 1 && t.starts_with('0') {
        (&t[1..], 8)
    } else {
        (t, 10)
    };
    if digits.is_empty() {
        return None;
    }
    i128::from_str_radix(digits, radix).ok()
}

#[cfg(test)]
mod tests {
    /// The first-byte table holds exactly [`super::PUNCTS`], longest first.
    #[test]
    fn punctuator_table_agrees_with_the_list() {
        let mut from_table: Vec<&str> = (0u8..=255)
            .flat_map(|b| super::punct_candidates(b).iter().copied())
            .collect();
        let mut list = super::PUNCTS.to_vec();
        from_table.sort();
        list.sort();
        assert_eq!(from_table, list);
        for b in 0u8..=255 {
            let c = super::punct_candidates(b);
            assert!(c.iter().all(|p| p.as_bytes()[0] == b));
            assert!(c.windows(2).all(|w| w[0].len() >= w[1].len()), "{c:?}");
        }
    }

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
    fn macro_bodies_have_no_directives() {
        let t: Vec<Tok> = tokenize_macro_body("#x ## y")
            .into_iter()
            .map(|t| t.tok)
            .collect();
        assert_eq!(
            t,
            vec![
                Tok::Other(b'#'),
                Tok::Ident("x".into()),
                Tok::Other(b'#'),
                Tok::Other(b'#'),
                Tok::Ident("y".into()),
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
    fn comments_outside_literals() {
        let s = b"a /* b */ \"//\" 1'000 // c\nd";
        let c = comments(s, 0..s.len());
        assert_eq!(
            c,
            vec![
                Comment {
                    range: 2..9,
                    block: true
                },
                Comment {
                    range: 21..25,
                    block: false
                },
            ]
        );
    }

    #[test]
    fn literal_contents_skip_prefix_and_escapes() {
        let s = br#"L"a\"b" 'c' "open"#;
        let t = tokenize(s, 0..s.len());
        let c: Vec<_> = t
            .iter()
            .filter_map(|t| literal_contents(s, t))
            .map(|(q, r)| (q, String::from_utf8_lossy(&s[r]).into_owned()))
            .collect();
        assert_eq!(
            c,
            vec![
                (b'"', r#"a\"b"#.to_string()),
                (b'\'', "c".to_string()),
                (b'"', "open".to_string()),
            ]
        );
    }

    #[test]
    fn int_literals() {
        assert_eq!(parse_int_literal("0x2A"), Some(42));
        assert_eq!(parse_int_literal("052"), Some(42));
        assert_eq!(parse_int_literal("0b101"), Some(5));
        assert_eq!(parse_int_literal("1'000"), Some(1000));
        assert_eq!(parse_int_literal("8ULL"), Some(8));
        assert_eq!(parse_int_literal("1.5"), None);
        assert_eq!(parse_int_literal("u"), None);
    }
}
