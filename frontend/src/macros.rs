//! `#define` bodies: the replacement text is not parsed by the grammar, so this lexes it (skipping
//! comments and string/char literals) into the names it calls and the other identifiers it uses.

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

/// Removes `//` and `/* */` comments (outside string and char literals) and trims.
fn strip_comments(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    let mut seg = 0;
    while i < b.len() {
        match b[i] {
            b'"' | b'\'' => {
                let q = b[i];
                i += 1;
                while i < b.len() && b[i] != q {
                    if b[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
                i += 1;
            }
            b'/' if b.get(i + 1) == Some(&b'/') => {
                out.push_str(&s[seg..i]);
                seg = b.len();
                i = b.len();
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                out.push_str(&s[seg..i]);
                out.push(' ');
                i = s[i + 2..].find("*/").map_or(b.len(), |k| i + 2 + k + 2);
                seg = i.min(b.len());
            }
            _ => i += 1,
        }
    }
    if seg < b.len() {
        out.push_str(&s[seg.min(s.len())..]);
    }
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
];

const CONTROL: &[&str] = &[
    "break", "continue", "return", "goto", "for", "while", "do", "switch",
];

/// Splits a macro body into (called names, other identifiers, control keywords): names are
/// deduplicated in order, control keywords are kept in order.
pub(crate) fn body_names(body: &str) -> (Vec<String>, Vec<String>, Vec<String>) {
    let mut control: Vec<String> = Vec::new();
    let b = body.as_bytes();
    let mut calls: Vec<String> = Vec::new();
    let mut idents: Vec<String> = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            break;
        }
        if c == b'/' && b.get(i + 1) == Some(&b'*') {
            i = match body[i + 2..].find("*/") {
                Some(k) => i + 2 + k + 2,
                None => b.len(),
            };
            continue;
        }
        if c == b'"' || c == b'\'' {
            i += 1;
            while i < b.len() && b[i] != c {
                if b[i] == b'\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
            continue;
        }
        if c.is_ascii_digit() {
            // Numbers (with suffixes like 0xffu) are not identifiers.
            while i < b.len()
                && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'.' || b[i] == b'\'')
            {
                i += 1;
            }
            continue;
        }
        if c.is_ascii_alphabetic() || c == b'_' {
            let s = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            let name = &body[s..i];
            if CONTROL.contains(&name) {
                control.push(name.to_string());
                continue;
            }
            if KEYWORDS.contains(&name) {
                continue;
            }
            // Skip `.member` / `->member`: a member name is not a use of a name.
            let prev = body[..s].trim_end();
            let is_member = prev.ends_with('.') || prev.ends_with("->");
            let mut j = i;
            while j < b.len() && (b[j] == b' ' || b[j] == b'\t') {
                j += 1;
            }
            // A template call `f<T>(...)` is rare in macros; `f (` and `f(` are calls.
            let is_call = b.get(j) == Some(&b'(');
            let list = if is_call { &mut calls } else { &mut idents };
            // `.member` is not a name of its own, but `.method(` is a call.
            if (!is_member || is_call) && !list.iter().any(|n| n == name) {
                list.push(name.to_string());
            }
            continue;
        }
        i += 1;
    }
    (calls, idents, control)
}

/// When a macro body holds inline assembly (an `asm`, `__asm` or `__asm__` keyword): the
/// contents of the string literals after the first such keyword, joined by newlines.
pub(crate) fn asm_strings(body: &str) -> Option<String> {
    let b = body.as_bytes();
    let mut i = 0;
    let mut seen_asm = false;
    let mut out: Vec<&str> = Vec::new();
    while i < b.len() {
        let c = b[i];
        if c == b'"' || c == b'\'' {
            let s = i + 1;
            i += 1;
            while i < b.len() && b[i] != c {
                if b[i] == b'\\' {
                    i += 1;
                }
                i += 1;
            }
            if seen_asm && c == b'"' {
                out.push(&body[s..i.min(b.len())]);
            }
            i += 1;
            continue;
        }
        if c.is_ascii_alphabetic() || c == b'_' {
            let s = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            if matches!(&body[s..i], "asm" | "__asm" | "__asm__") {
                seen_asm = true;
            }
            continue;
        }
        i += 1;
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
