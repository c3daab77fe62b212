//! Functions defined by macro invocations (`#define DEFINE_KERNEL(name, T) __global__ void
//! name(T* p) { ... }` then `DEFINE_KERNEL(k, float)`): the replacement list is parsed where it
//! is written (tree-sitter included ranges over the `#define`, continuation lines and all, and
//! the block after the invocation when the macro is only a header), so every position is the
//! original's and the loops keep their real lines. Each invocation gives the functions of the
//! replacement list once, named by its arguments where the name is a macro parameter.
//!
//! Loop ids: an expanded function's id is made from its name as the invocation gives it (`k`,
//! `k:0`), like any other function's. When the body is in the replacement list, every
//! invocation's loops share one text (the `#define`'s): `transforms` refuses to rewrite them
//! (the text is the macro's, not the invocation's).

use tree_sitter::Parser;

use crate::elide::{Expansion, Plan};
use crate::identity::{join_tokens, tokens, IdParts};
use crate::ir::{Function, MacroExpansion, ParseError, SourceFile, Span};
use crate::kinds::Kinds;
use crate::lower::Lowerer;

/// At most this many functions come from expansions in one file.
const MAX_EXPANDED: usize = 4096;

/// What the expansions of a file add to its lowering.
#[derive(Default)]
pub(crate) struct Expanded {
    pub(crate) functions: Vec<(Function, IdParts)>,
    pub(crate) parse_errors: Vec<ParseError>,
    pub(crate) inert: Vec<Span>,
}

/// The functions of `plan`'s expansions in `src` (whose lowering without them is `main`).
pub(crate) fn expand(
    src: &[u8],
    parser: &mut Parser,
    kinds: &Kinds,
    plan: &Plan,
    main: &SourceFile,
) -> Expanded {
    let mut out = Expanded::default();
    // One parse per replacement list (and per block that follows an invocation).
    let mut done: Vec<(std::ops::Range<usize>, Option<std::ops::Range<usize>>)> = Vec::new();
    let mut cache: Vec<(usize, SourceFile, Vec<IdParts>)> = Vec::new();
    for (n, e) in plan.expansions.iter().enumerate() {
        if out.functions.len() >= MAX_EXPANDED {
            break;
        }
        let key = (e.body.clone(), e.block.clone());
        let at = match done.iter().position(|k| *k == key) {
            Some(p) => p,
            None => {
                let Some((file, parts)) = parse_range(src, parser, kinds, e, main) else {
                    continue;
                };
                out.parse_errors.extend(file.parse_errors.iter().cloned());
                out.inert.extend(file.inert.iter().copied());
                done.push(key);
                cache.push((n, file, parts));
                done.len() - 1
            }
        };
        let (_, file, parts) = &cache[at];
        for (f, p) in file.functions.iter().zip(parts) {
            out.functions.push(instantiate(src, e, f, p));
        }
    }
    out
}

/// The lowering of `e`'s replacement list (and block), parsed alone.
fn parse_range(
    src: &[u8],
    parser: &mut Parser,
    kinds: &Kinds,
    e: &Expansion,
    main: &SourceFile,
) -> Option<(SourceFile, Vec<IdParts>)> {
    let mut ranges = without_pastes(src, e.body.clone());
    if let Some(b) = &e.block {
        if b.start < e.body.end {
            return None; // a block before its macro's definition: not C++
        }
        ranges.push(b.clone());
    }
    let mut pos = Points::new(src);
    let ts: Vec<tree_sitter::Range> = ranges
        .iter()
        .map(|r| tree_sitter::Range {
            start_byte: r.start,
            end_byte: r.end,
            start_point: pos.point(r.start),
            end_point: pos.point(r.end),
        })
        .collect();
    let set = parser.set_included_ranges(&ts).is_ok();
    let tree = if set { parser.parse(src, None) } else { None };
    let _ = parser.set_included_ranges(&[]);
    let tree = tree?;
    Some(
        Lowerer::new(src, kinds, Plan::default())
            .with_macros_of(main)
            .run_parts(&tree),
    )
}

/// `r` without the token pastes it holds (`##suffix`): the parse sees `name` of
/// `name##_kernel(...)`, which [`instantiate`] pastes back.
fn without_pastes(src: &[u8], r: std::ops::Range<usize>) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut start = r.start;
    let body = &src[r.clone()];
    let mut i = 0;
    while let Some(k) = memchr::memmem::find(&body[i..], b"##") {
        let at = i + k;
        let mut end = at + 2;
        while end < body.len() && matches!(body[end], b' ' | b'\t') {
            end += 1;
        }
        while end < body.len() && (body[end].is_ascii_alphanumeric() || body[end] == b'_') {
            end += 1;
        }
        if r.start + at > start {
            out.push(start..r.start + at);
        }
        start = r.start + end;
        i = end;
    }
    if start < r.end {
        out.push(start..r.end);
    }
    out
}

/// The name written at `leaf` in a replacement list, with its parameters replaced by `e`'s
/// arguments and the pastes that follow it (`name##_kernel_v1`) made.
fn pasted_name(src: &[u8], e: &Expansion, leaf: &str, end: usize) -> String {
    let arg = |w: &str| -> String {
        match e.params.iter().position(|p| p == w) {
            Some(k) => e
                .args
                .get(k)
                .and_then(|r| src.get(r.clone()))
                .map_or(String::new(), |b| {
                    join_tokens(tokens(&String::from_utf8_lossy(b)))
                }),
            None => w.to_string(),
        }
    };
    let mut name = arg(leaf);
    let mut i = end;
    loop {
        let mut j = i;
        while j < src.len() && matches!(src[j], b' ' | b'\t') {
            j += 1;
        }
        if !src[j..].starts_with(b"##") {
            break;
        }
        j += 2;
        while j < src.len() && matches!(src[j], b' ' | b'\t') {
            j += 1;
        }
        let s = j;
        while j < src.len() && (src[j].is_ascii_alphanumeric() || src[j] == b'_') {
            j += 1;
        }
        if s == j {
            break;
        }
        name.push_str(&arg(&String::from_utf8_lossy(&src[s..j])));
        i = j;
    }
    name
}

/// Function `f` (of `e`'s replacement list) as invocation `e` defines it.
fn instantiate(src: &[u8], e: &Expansion, f: &Function, parts: &IdParts) -> (Function, IdParts) {
    let arg = |name: &str| -> Option<(String, Span)> {
        let k = e.params.iter().position(|p| p == name)?;
        let r = e.args.get(k)?;
        let text = String::from_utf8_lossy(src.get(r.clone())?).into_owned();
        let text = join_tokens(tokens(&text));
        let mut at = Points::new(src);
        let p = at.point(r.start);
        Some((
            text,
            Span {
                start: r.start,
                end: r.end,
                line: p.row as u32 + 1,
                column: p.column as u32 + 1,
            },
        ))
    };
    let mut g = f.clone();
    // Calls and names that are the macro's parameters are what the invocation passes
    // (`#define DEF(name, OP) ... OP(x) ...` then `DEF(k, ns::step)`: a call of `ns::step`),
    // where that is a name.
    let name_arg = |name: &str| -> Option<String> {
        let (text, _) = arg(name)?;
        let is_name = !text.is_empty()
            && text
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b':')
            && !text.starts_with(|c: char| c.is_ascii_digit());
        is_name.then_some(text)
    };
    if !e.params.is_empty() {
        for c in g.calls.iter_mut() {
            if c.receiver.is_none() && c.qualifier.is_none() {
                if let Some(t) = name_arg(&c.callee) {
                    match t.trim_start_matches("::").rsplit_once("::") {
                        Some((q, leaf)) => {
                            c.qualifier = Some(q.to_string());
                            c.callee = leaf.to_string();
                        }
                        None => c.callee = t.trim_start_matches("::").to_string(),
                    }
                }
            } else if let Some(t) = c.qualifier.as_deref().and_then(&name_arg) {
                c.qualifier = Some(t);
            }
        }
        for u in g.idents.iter_mut() {
            if let Some(t) = name_arg(&u.name) {
                u.name = t.rsplit("::").next().unwrap_or(&t).to_string();
            }
        }
    }
    let mut with_args = parts.with_args.clone();
    let pasted = pasted_name(src, e, &f.name, f.name_span.end);
    if let Some((name, span)) = arg(&f.name) {
        g.name_span = span;
        g.name = name;
    }
    if pasted != f.name {
        g.name = pasted.clone();
        with_args = pasted;
    }
    let mut q: Vec<&str> = e.namespaces.iter().map(|s| s.as_str()).collect();
    q.push(&with_args);
    let with_args = q.join("::");
    g.qualified_name = crate::identity::strip_template_args(&with_args);
    if let Some(b) = &e.block {
        // The body is the file's own text after the invocation.
        g.span.start = e.invocation.start;
        g.span.end = g.span.end.max(b.end);
        let mut at = Points::new(src);
        let p = at.point(e.invocation.start);
        g.span.line = p.row as u32 + 1;
        g.span.column = p.column as u32 + 1;
    }
    let mut at = Points::new(src);
    let p = at.point(e.invocation.start);
    // Its parameters may be written with the macro's own (`__VA_ARGS__`).
    g.arity = None;
    g.expansion = Some(MacroExpansion {
        name: e.name.clone(),
        invocation: Span {
            start: e.invocation.start,
            end: e.invocation.end,
            line: p.row as u32 + 1,
            column: p.column as u32 + 1,
        },
        body_in_macro: e.block.is_none(),
    });
    (
        g,
        IdParts {
            with_args,
            signature: parts.signature.clone(),
        },
    )
}

/// Row/column of byte offsets.
struct Points<'s> {
    src: &'s [u8],
}

impl<'s> Points<'s> {
    fn new(src: &'s [u8]) -> Self {
        Points { src }
    }

    fn point(&mut self, offset: usize) -> tree_sitter::Point {
        let offset = offset.min(self.src.len());
        let before = &self.src[..offset];
        let row = memchr::memchr_iter(b'\n', before).count();
        let line_start = memchr::memrchr(b'\n', before).map_or(0, |i| i + 1);
        tree_sitter::Point {
            row,
            column: offset - line_start,
        }
    }
}
