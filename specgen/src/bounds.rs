//! `min-length` from a kernel's indexing: a buffer parameter whose every access is `p[i]` or
//! `p + i` (a call argument) with `i` bounded by a guard that is a plain expression of the
//! kernel's integer parameters and constants needs at least that many elements. The guards
//! read: a `for` loop over `i` with `i < E` (or `i <= E`) whose body holds the access (grid-stride
//! loops included), an `if (i < E && ...)` whose branch holds it, an `if (i >= E) return;` (or
//! `|| ...`) before it. `p[blockIdx.x]` needs `grid.x`, `p[threadIdx.x]` `block.x`. Anything
//! else is no plain bound, and the reason says which access.

use frontend::lex::{parse_int_literal, tokenize, Tok, Token};
use frontend::{CmpOp, Function};
use std::collections::{HashMap, HashSet};

/// A bound found for a buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bound {
    /// The `min-length` expression, in the spec's syntax (`n`, `4 * packs`, `grid.x`).
    pub expr: String,
    /// Where it comes from, for the spec's comment (`a[i] with i < n, line 13`).
    pub evidence: String,
}

/// What the bound may name: the kernel's integer scalar parameters (kept by name, as the spec's
/// arguments are) and constants (template values, integer macros: replaced by their values).
pub struct Names<'a> {
    pub scalars: &'a HashSet<String>,
    pub constants: &'a HashMap<String, i128>,
}

/// The bound of buffer parameter `param` of `f` (source `src`), its elements being `lanes` spec
/// elements each (4 for `float4`).
pub fn min_length(
    f: &Function,
    src: &[u8],
    param: &str,
    lanes: u32,
    names: &Names<'_>,
) -> Result<Bound, String> {
    let toks = tokenize(src, f.body.start..f.body.end.min(src.len()));
    let mut found: Option<(String, String)> = None;
    let mut accesses = 0usize;
    for (k, t) in toks.iter().enumerate() {
        if !matches!(&t.tok, Tok::Ident(s) if s == param) {
            continue;
        }
        if matches!(
            toks.get(k.wrapping_sub(1)).map(|t| &t.tok),
            Some(Tok::Punct("." | "->" | "::"))
        ) {
            continue; // a member of that name
        }
        let line = line_of(src, t.range.start);
        let (index, shown) = match access(&toks, k, src) {
            Some(a) => a,
            None => {
                return Err(format!(
                    "`{param}` is used otherwise than `{param}[i]` at line {line}"
                ))
            }
        };
        accesses += 1;
        let bound = match index.as_slice() {
            [Tok::Ident(b), Tok::Punct("."), Tok::Ident(axis)] if is_axis(axis) => match b.as_str() {
                "blockIdx" => format!("grid.{axis}"),
                "threadIdx" => format!("block.{axis}"),
                _ => return Err(format!("`{shown}` at line {line}: no plain bound")),
            },
            [Tok::Ident(v)] => guard(f, &toks, src, v, t.range.start, names).ok_or_else(|| {
                format!("`{shown}` at line {line}: no guard of `{v}` that is a plain expression of the parameters")
            })?,
            _ => {
                return Err(format!(
                    "`{shown}` at line {line}: the index is not one variable"
                ))
            }
        };
        match &found {
            None => found = Some((bound, format!("`{shown}` at line {line}"))),
            Some((b, _)) if *b == bound => {}
            Some((b, e)) => {
                return Err(format!(
                    "accesses with different bounds: `{b}` ({e}) and `{bound}` (`{shown}` at line {line})"
                ))
            }
        }
    }
    let (expr, evidence) = found.ok_or_else(|| format!("`{param}` is never indexed"))?;
    let expr = if lanes > 1 {
        if expr
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '.')
        {
            format!("{lanes} * {expr}")
        } else {
            format!("{lanes} * ({expr})")
        }
    } else {
        expr
    };
    let evidence = if accesses > 1 {
        format!("{evidence} and {} more", accesses - 1)
    } else {
        evidence
    };
    Ok(Bound { expr, evidence })
}

fn is_axis(a: &str) -> bool {
    matches!(a, "x" | "y" | "z")
}

fn line_of(src: &[u8], pos: usize) -> usize {
    src[..pos.min(src.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// The index tokens of the access at `k` (`p[...]`, or `p + ...` as a call argument or under
/// `*`), and the access as written.
fn access(toks: &[Token], k: usize, src: &[u8]) -> Option<(Vec<Tok>, String)> {
    let next = toks.get(k + 1).map(|t| &t.tok);
    let (start, end) = match next {
        Some(Tok::Punct("[")) => {
            let close = matching(toks, k + 1, "[", "]")?;
            (k + 2, close)
        }
        Some(Tok::Punct("+")) => {
            let before = toks.get(k.wrapping_sub(1)).map(|t| &t.tok);
            if !matches!(before, Some(Tok::Punct("(" | ","))) {
                return None;
            }
            // To the `,` or `)` that ends the argument.
            let mut depth = 0i32;
            let mut j = k + 2;
            while let Some(t) = toks.get(j) {
                match t.tok {
                    Tok::Punct("(" | "[") => depth += 1,
                    Tok::Punct(")" | "]") if depth == 0 => break,
                    Tok::Punct(")" | "]") => depth -= 1,
                    Tok::Punct(",") if depth == 0 => break,
                    _ => {}
                }
                j += 1;
            }
            (k + 2, j)
        }
        _ => return None,
    };
    // The `]` of a subscript is shown; the `,` or `)` after an argument is not.
    let shown_end = if matches!(next, Some(Tok::Punct("["))) {
        end
    } else {
        end - 1
    };
    let last = toks.get(shown_end).map_or(src.len(), |t| t.range.end);
    let shown =
        String::from_utf8_lossy(&src[toks[k].range.start..last.min(src.len())]).into_owned();
    let shown = shown.split_whitespace().collect::<Vec<_>>().join(" ");
    Some((
        toks[start..end].iter().map(|t| t.tok.clone()).collect(),
        shown,
    ))
}

/// The index of the token closing the `open` at `at`.
fn matching(toks: &[Token], at: usize, open: &str, close: &str) -> Option<usize> {
    let mut depth = 0i32;
    for (i, t) in toks.iter().enumerate().skip(at) {
        match &t.tok {
            Tok::Punct(p) if *p == open => depth += 1,
            Tok::Punct(p) if *p == close => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// The bound of variable `v` at byte `pos`: the innermost `for` over `v` holding `pos`, else an
/// `if` guard.
fn guard(
    f: &Function,
    toks: &[Token],
    src: &[u8],
    v: &str,
    pos: usize,
    names: &Names<'_>,
) -> Option<String> {
    let mut best: Option<(usize, String)> = None;
    for l in &f.loops {
        let Some(h) = &l.header else { continue };
        if h.var != v || !(l.body.start <= pos && pos < l.body.end) {
            continue;
        }
        let span = h.bound.span();
        let bound_toks = tokenize(src, span.start..span.end);
        let plus_one = match h.cmp {
            CmpOp::Lt => false,
            CmpOp::Le => true,
            _ => continue,
        };
        let Some(e) = plain(&bound_toks, names) else {
            continue;
        };
        let e = if plus_one { format!("{e} + 1") } else { e };
        if best.as_ref().is_none_or(|(start, _)| l.body.start > *start) {
            best = Some((l.body.start, e));
        }
    }
    if let Some((_, e)) = best {
        return Some(e);
    }
    if_guard(toks, src, v, pos, names)
}

/// `if (v < E && ...) { ... pos ... }` or `if (v >= E || ...) return;` before `pos`.
fn if_guard(toks: &[Token], src: &[u8], v: &str, pos: usize, names: &Names<'_>) -> Option<String> {
    let mut found = None;
    for (i, t) in toks.iter().enumerate() {
        if t.range.start >= pos {
            break;
        }
        if !matches!(&t.tok, Tok::Ident(s) if s == "if") {
            continue;
        }
        let Some(close) = matching(toks, i + 1, "(", ")") else {
            continue;
        };
        let cond = &toks[i + 2..close];
        // The branch: a block or one statement.
        let (branch_end, returns) = match toks.get(close + 1).map(|t| &t.tok) {
            Some(Tok::Punct("{")) => {
                let end = matching(toks, close + 1, "{", "}")?;
                let only_return = matches!(
                    &toks[close + 2..end],
                    [Token { tok: Tok::Ident(r), .. }, Token { tok: Tok::Punct(";"), .. }] if r == "return"
                );
                (toks[end].range.end, only_return)
            }
            _ => {
                let mut j = close + 1;
                while j < toks.len() && !matches!(toks[j].tok, Tok::Punct(";")) {
                    j += 1;
                }
                let only_return = j == close + 2
                    && matches!(&toks[close + 1].tok, Tok::Ident(r) if r == "return");
                (toks.get(j).map_or(src.len(), |t| t.range.end), only_return)
            }
        };
        let inside = toks[close].range.end <= pos && pos < branch_end;
        if inside {
            for c in split(cond, "&&") {
                if let Some(e) = compare(c, v, names, false) {
                    found = Some(e);
                }
            }
        } else if returns && branch_end <= pos {
            for c in split(cond, "||") {
                if let Some(e) = compare(c, v, names, true) {
                    found = Some(e);
                }
            }
        }
    }
    found
}

/// `cond` split at top-level `op`.
fn split<'t>(cond: &'t [Token], op: &str) -> Vec<&'t [Token]> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (i, t) in cond.iter().enumerate() {
        match &t.tok {
            Tok::Punct("(" | "[") => depth += 1,
            Tok::Punct(")" | "]") => depth -= 1,
            Tok::Punct(p) if *p == op && depth == 0 => {
                out.push(&cond[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&cond[start..]);
    out
}

/// `v < E` / `E > v` (`v <= E`: `E + 1`), or with `exits` the negation that leaves: `v >= E` /
/// `E <= v` (`v > E`: `E + 1`).
fn compare(c: &[Token], v: &str, names: &Names<'_>, exits: bool) -> Option<String> {
    let c = strip_parens(c);
    let is_v =
        |t: &[Token]| matches!(strip_parens(t), [Token { tok: Tok::Ident(s), .. }] if s == v);
    let (at, op) = c.iter().enumerate().find_map(|(i, t)| match t.tok {
        Tok::Punct(p @ ("<" | "<=" | ">" | ">=")) => Some((i, p)),
        _ => None,
    })?;
    let (l, r) = (&c[..at], &c[at + 1..]);
    // Normalise to `v OP E`.
    let (op, e) = if is_v(l) {
        (op, r)
    } else if is_v(r) {
        let flipped = match op {
            "<" => ">",
            "<=" => ">=",
            ">" => "<",
            _ => "<=",
        };
        (flipped, l)
    } else {
        return None;
    };
    let e = plain(e, names)?;
    match (op, exits) {
        ("<", false) | (">=", true) => Some(e),
        ("<=", false) | (">", true) => Some(format!("{e} + 1")),
        _ => None,
    }
}

fn strip_parens(mut t: &[Token]) -> &[Token] {
    while t.len() >= 2
        && matches!(t[0].tok, Tok::Punct("("))
        && matches!(t[t.len() - 1].tok, Tok::Punct(")"))
        && matching(t, 0, "(", ")") == Some(t.len() - 1)
    {
        t = &t[1..t.len() - 1];
    }
    t
}

/// A bound expression in the spec's syntax when it is plain: integer literals, the kernel's
/// integer parameters, constants (replaced by their values), `blockDim.x`/`gridDim.x`, `+ - *
/// / %` and parentheses.
fn plain(toks: &[Token], names: &Names<'_>) -> Option<String> {
    let mut out = String::new();
    let mut i = 0;
    while i < toks.len() {
        let piece = match &toks[i].tok {
            Tok::Num(n) => parse_int_literal(n)?.to_string(),
            Tok::Ident(d) if (d == "blockDim" || d == "gridDim") => {
                match (
                    toks.get(i + 1).map(|t| &t.tok),
                    toks.get(i + 2).map(|t| &t.tok),
                ) {
                    (Some(Tok::Punct(".")), Some(Tok::Ident(a))) if is_axis(a) => {
                        i += 2;
                        format!("{}.{a}", if d == "blockDim" { "block" } else { "grid" })
                    }
                    _ => return None,
                }
            }
            Tok::Ident(n) if names.scalars.contains(n) => n.clone(),
            Tok::Ident(n) => names.constants.get(n)?.to_string(),
            Tok::Punct(p @ ("+" | "-" | "*" | "/" | "%" | "(" | ")")) => p.to_string(),
            _ => return None,
        };
        if !out.is_empty() && !matches!(piece.as_str(), ")") && !out.ends_with('(') {
            out.push(' ');
        }
        out.push_str(&piece);
        i += 1;
    }
    (!out.is_empty()).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bound(src: &str, kernel: &str, param: &str, lanes: u32) -> Result<String, String> {
        let file = frontend::parse(src.as_bytes());
        let f = file.functions.iter().find(|f| f.name == kernel).unwrap();
        let scalars: HashSet<String> = ["n", "N", "C", "packs"].map(String::from).into();
        let constants: HashMap<String, i128> = [("R".to_string(), 4)].into();
        let names = Names {
            scalars: &scalars,
            constants: &constants,
        };
        min_length(f, src.as_bytes(), param, lanes, &names).map(|b| b.expr)
    }

    #[test]
    fn guards_of_every_shape() {
        let src = r#"
__global__ void k(float* a, float* b, float* c, float4* d, float* e, float* f, float* g, float* h,
                  float* part, int n, int N, int C, int packs) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    for (int j = i; j < n; j += blockDim.x * gridDim.x) { a[j] = 0; }
    if (i < N && i > 0) { b[i] = 1; }
    int row = blockIdx.x;
    if (row >= N || i >= C) { return; }
    c[row] += 1;
    for (int p = threadIdx.x; p <= packs; p += 32) { __stcs(d + p, d[p]); }
    for (int q = 0; q < R * C; ++q) e[q] = 0;
    f[i + 1] = 0;
    g[i] = g[row];
    h[i] = 0;
    part[blockIdx.x] = 0;
}
"#;
        assert_eq!(bound(src, "k", "a", 1).unwrap(), "n");
        assert_eq!(bound(src, "k", "b", 1).unwrap(), "N");
        assert_eq!(bound(src, "k", "c", 1).unwrap(), "N");
        assert_eq!(bound(src, "k", "d", 4).unwrap(), "4 * (packs + 1)");
        assert_eq!(bound(src, "k", "e", 1).unwrap(), "4 * C");
        assert!(bound(src, "k", "f", 1)
            .unwrap_err()
            .contains("not one variable"));
        assert!(bound(src, "k", "g", 1)
            .unwrap_err()
            .contains("different bounds"));
        assert_eq!(bound(src, "k", "h", 1).unwrap(), "C");
        assert_eq!(bound(src, "k", "part", 1).unwrap(), "grid.x");
    }
}
