//! Recognises loop-unrolling pragmas: `#pragma unroll`, `#pragma unroll N`, `#pragma unroll(N)`,
//! `#pragma nounroll`, `#pragma GCC unroll N`, `#pragma clang loop unroll(...)`, `_Pragma("...")`.

use crate::ir::{PragmaSyntax, UnrollHint};
use crate::lex::parse_int_literal;

/// The factor of `unroll N` when N is a name: resolved by the caller (object-like macros).
pub(crate) enum Factor<'a> {
    None,
    Int(i128),
    Name(&'a str),
}

/// Parses the text after `#pragma` (or inside `_Pragma("...")`), continuation lines already
/// joined. `None` for other pragmas.
pub(crate) fn parse_pragma_text(
    text: &str,
    resolve: impl Fn(&str) -> Option<i128>,
) -> Option<(UnrollHint, PragmaSyntax)> {
    let t = text.trim();
    let (t, syntax) = match t.strip_prefix("GCC ") {
        Some(r) => (r.trim_start(), PragmaSyntax::Gcc),
        None => (t, PragmaSyntax::Unroll),
    };
    if syntax == PragmaSyntax::Unroll && t.starts_with("clang") {
        return parse_clang(t, resolve).map(|h| (h, PragmaSyntax::ClangLoop));
    }
    parse_unroll(t, resolve).map(|h| (h, syntax))
}

fn parse_clang(t: &str, resolve: impl Fn(&str) -> Option<i128>) -> Option<UnrollHint> {
    if let Some(rest) = t.strip_prefix("clang") {
        let rest = rest.trim_start().strip_prefix("loop")?.trim_start();
        let compact: String = rest.chars().filter(|c| !c.is_whitespace()).collect();
        if compact.starts_with("unroll(disable)") {
            return Some(UnrollHint::NoUnroll);
        }
        if compact.starts_with("unroll(full)") || compact.starts_with("unroll(enable)") {
            return Some(UnrollHint::Unroll(None));
        }
        if let Some(n) = compact.strip_prefix("unroll_count(") {
            let n = n.split(')').next().unwrap_or("");
            return Some(hint_for(factor(n), resolve));
        }
        return None;
    }
    None
}

fn parse_unroll(t: &str, resolve: impl Fn(&str) -> Option<i128>) -> Option<UnrollHint> {
    if let Some(rest) = t.strip_prefix("nounroll") {
        if rest.is_empty() || rest.starts_with(char::is_whitespace) {
            return Some(UnrollHint::NoUnroll);
        }
        return None;
    }
    let rest = t.strip_prefix("unroll")?;
    if !(rest.is_empty() || rest.starts_with(char::is_whitespace) || rest.starts_with('(')) {
        return None; // `unrolled_thing`
    }
    let rest = strip_comment(rest).trim();
    let arg = rest
        .strip_prefix('(')
        .and_then(|r| r.strip_suffix(')'))
        .unwrap_or(rest)
        .trim();
    if arg.is_empty() {
        return Some(UnrollHint::Unroll(None));
    }
    Some(hint_for(factor(arg), resolve))
}

fn strip_comment(s: &str) -> &str {
    let cut = [s.find("//"), s.find("/*")].into_iter().flatten().min();
    match cut {
        Some(i) => &s[..i],
        None => s,
    }
}

fn factor(arg: &str) -> Factor<'_> {
    let arg = arg.trim();
    if let Some(v) = parse_int_literal(arg) {
        return Factor::Int(v);
    }
    if !arg.is_empty() && arg.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Factor::Name(arg);
    }
    Factor::None
}

fn hint_for(f: Factor<'_>, resolve: impl Fn(&str) -> Option<i128>) -> UnrollHint {
    let v = match f {
        Factor::Int(v) => Some(v),
        Factor::Name(n) => resolve(n),
        Factor::None => None,
    };
    match v {
        Some(v) if v <= 1 => UnrollHint::NoUnroll,
        Some(v) => UnrollHint::Unroll(u32::try_from(v).ok()),
        None => UnrollHint::Unroll(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(t: &str) -> Option<UnrollHint> {
        parse_pragma_text(t, |n| (n == "UNROLL").then_some(8)).map(|(h, _)| h)
    }

    fn syntax(t: &str) -> Option<PragmaSyntax> {
        parse_pragma_text(t, |_| None).map(|(_, s)| s)
    }

    #[test]
    fn syntaxes() {
        assert_eq!(syntax("unroll 4"), Some(PragmaSyntax::Unroll));
        assert_eq!(syntax("nounroll"), Some(PragmaSyntax::Unroll));
        assert_eq!(syntax("GCC unroll 4"), Some(PragmaSyntax::Gcc));
        assert_eq!(
            syntax("clang loop unroll_count(4)"),
            Some(PragmaSyntax::ClangLoop)
        );
        assert_eq!(syntax("clang loop vectorize(enable)"), None);
        assert_eq!(syntax("GCC clang loop unroll(full)"), None);
    }

    #[test]
    fn forms() {
        assert_eq!(p("unroll"), Some(UnrollHint::Unroll(None)));
        assert_eq!(p("unroll 4"), Some(UnrollHint::Unroll(Some(4))));
        assert_eq!(p("unroll(4)"), Some(UnrollHint::Unroll(Some(4))));
        assert_eq!(p("unroll (16) // why"), Some(UnrollHint::Unroll(Some(16))));
        assert_eq!(p("unroll 1"), Some(UnrollHint::NoUnroll));
        assert_eq!(p("nounroll"), Some(UnrollHint::NoUnroll));
        assert_eq!(p("unroll UNROLL"), Some(UnrollHint::Unroll(Some(8))));
        assert_eq!(p("unroll UNKNOWN"), Some(UnrollHint::Unroll(None)));
        assert_eq!(p("GCC unroll 2"), Some(UnrollHint::Unroll(Some(2))));
        assert_eq!(p("clang loop unroll(disable)"), Some(UnrollHint::NoUnroll));
        assert_eq!(
            p("clang loop unroll_count(4)"),
            Some(UnrollHint::Unroll(Some(4)))
        );
        assert_eq!(p("once"), None);
        assert_eq!(p("unrolled"), None);
    }
}
