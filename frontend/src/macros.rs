//! `#define` bodies: the replacement text is not parsed by the grammar, so this lexes it (skipping
//! comments and string/char literals) into the names it calls and the other identifiers it uses.
//! The lexing itself is [`crate::lex`], the one lexer of the workspace.

use crate::lex::{self, Tok, Token};

/// Joins continuation lines (`\` newline) and trims the replacement text.
pub(crate) fn join_continuations(raw: &[u8]) -> String {
    let mut out = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        if raw[i] == b'\\' {
            let mut j = i + 1;
            if raw.get(j) == Some(&b'\r') {
                j += 1;
            }
            if raw.get(j) == Some(&b'\n') {
                out.push(b' ');
                i = j + 1;
                continue;
            }
        }
        out.push(raw[i]);
        i += 1;
    }
    strip_comments(&String::from_utf8_lossy(&out))
}

/// Removes `//` and `/* */` comments (outside string and char literals, as [`lex::comments`]
/// finds them; a block comment becomes a space) and trims.
fn strip_comments(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut seg = 0;
    for c in lex::comments(s.as_bytes(), 0..s.len()) {
        out.push_str(&s[seg..c.range.start]);
        if c.block {
            out.push(' ');
        }
        seg = c.range.end;
    }
    out.push_str(&s[seg..]);
    out.trim().to_string()
}

const KEYWORDS: &[&str] = &[
    "if",
    "else",
    "case",
    "default",
    "sizeof",
    "alignof",
    "decltype",
    "static_cast",
    "reinterpret_cast",
    "const_cast",
    "dynamic_cast",
    "const",
    "volatile",
    "int",
    "unsigned",
    "signed",
    "float",
    "double",
    "char",
    "short",
    "long",
    "void",
    "bool",
    "auto",
    "static",
    "extern",
    "inline",
    "struct",
    "class",
    "typename",
    "template",
    "true",
    "false",
    "constexpr",
    "consteval",
    "noexcept",
    "typeid",
    "static_assert",
    "alignas",
    "asm",
    "__asm",
    "__asm__",
    "__volatile__",
    "__attribute__",
    "__declspec",
    "_Pragma",
    "__pragma",
    "defined",
    "throw",
    "new",
    "delete",
    "operator",
];

const CONTROL: &[&str] = &[
    "break", "continue", "return", "goto", "for", "while", "do", "switch",
];

#[cfg(test)]
fn body_names(body: &str) -> (Vec<String>, Vec<String>, Vec<String>) {
    names_in(&lex::tokenize_macro_body(body))
}

/// What the lowering records of a macro body.
pub(crate) struct BodyFacts {
    /// Names followed by `(`, deduplicated in order.
    pub(crate) calls: Vec<String>,
    /// Other identifiers, deduplicated in order.
    pub(crate) idents: Vec<String>,
    /// `break`, `return`, `for`, ... in order.
    pub(crate) control: Vec<String>,
    /// The inline assembly, as [`asm_in`] finds it.
    pub(crate) asm: Option<String>,
}

/// The [`BodyFacts`] of a macro body (split as [`names_in`] does), lexed once.
pub(crate) fn body_facts(body: &str) -> BodyFacts {
    let toks = lex::tokenize_macro_body(body);
    let (calls, idents, control) = names_in(&toks);
    BodyFacts {
        calls,
        idents,
        control,
        asm: asm_in(body, &toks),
    }
}

/// Splits a macro body's tokens into (called names, other identifiers, control keywords): names
/// are deduplicated in order, control keywords are kept in order. Literals, numbers and member
/// names (`.x`, `->x`) are not names; `name (` is a call.
fn names_in(toks: &[Token]) -> (Vec<String>, Vec<String>, Vec<String>) {
    let mut control: Vec<String> = Vec::new();
    let mut calls: Vec<String> = Vec::new();
    let mut idents: Vec<String> = Vec::new();
    for (i, t) in toks.iter().enumerate() {
        let Tok::Ident(name) = &t.tok else { continue };
        if CONTROL.contains(&name.as_str()) {
            control.push(name.clone());
            continue;
        }
        if KEYWORDS.contains(&name.as_str()) {
            continue;
        }
        // Skip `.member` / `->member`: a member name is not a use of a name.
        let is_member = i > 0 && matches!(toks[i - 1].tok, Tok::Punct("." | "->"));
        // A template call `f<T>(...)` is rare in macros; `f (` and `f(` are calls.
        let is_call = toks.get(i + 1).is_some_and(|n| n.tok == Tok::Punct("("));
        let list = if is_call { &mut calls } else { &mut idents };
        // `.member` is not a name of its own, but `.method(` is a call.
        if (!is_member || is_call) && !list.iter().any(|n| n == name) {
            list.push(name.clone());
        }
    }
    (calls, idents, control)
}

#[cfg(test)]
fn asm_strings(body: &str) -> Option<String> {
    asm_in(body, &lex::tokenize_macro_body(body))
}

/// When a macro body holds inline assembly (an `asm`, `__asm` or `__asm__` keyword): the
/// contents of the string literals after the first such keyword, joined by newlines.
fn asm_in(body: &str, toks: &[Token]) -> Option<String> {
    let mut seen_asm = false;
    let mut out: Vec<&str> = Vec::new();
    for t in toks {
        match &t.tok {
            Tok::Ident(w) if matches!(w.as_str(), "asm" | "__asm" | "__asm__") => seen_asm = true,
            Tok::Str if seen_asm => {
                if let Some((b'"', r)) = lex::literal_contents(body.as_bytes(), t) {
                    out.push(&body[r]);
                }
            }
            _ => {}
        }
    }
    seen_asm.then(|| out.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lexes_bodies() {
        let (c, i, k) = body_names(
            r#"do { __syncthreads(); x = "atomicAdd(" + y.z; g.sync(); } while (0) // f()"#,
        );
        assert_eq!(k, vec!["do", "while"]);
        let (_, _, k) = body_names("if (!(x)) return; else { goto fail; }");
        assert_eq!(k, vec!["return", "goto"]);
        assert_eq!(c, vec!["__syncthreads", "sync"]);
        assert_eq!(i, vec!["x", "y", "g"]);
        assert_eq!(join_continuations(b"a \\\n b \\\r\n c"), "a   b   c");
        assert_eq!(join_continuations(b"32  // the warp"), "32");
        assert_eq!(
            join_continuations(b"f(\"//\") /* c */ + 1"),
            "f(\"//\")   + 1"
        );
    }

    #[test]
    fn finds_asm_in_bodies() {
        assert_eq!(
            asm_strings(r#"asm volatile("s_waitcnt lgkmcnt(0)\n" "s_barrier" ::: "memory")"#)
                .as_deref(),
            Some("s_waitcnt lgkmcnt(0)\\n\ns_barrier\nmemory")
        );
        assert_eq!(
            asm_strings(r#"__asm__ __volatile__("bar.sync 0;")"#).as_deref(),
            Some("bar.sync 0;")
        );
        assert_eq!(asm_strings(r#"printf("s_barrier")"#), None);
        assert_eq!(asm_strings("my_asm_helper()"), None);
    }
}
