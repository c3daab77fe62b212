//! Constant-expression contexts of the binary operations with a number (`ConstOp::in_constant`):
//! where only a constant can go, so a rewrite must not put a run-time value there (`warpSize`
//! in `reduce<B / 32>()`, `constexpr int w = B / 32;`, `static_assert(N % 32 == 0)`,
//! `case 64 / 32:`, `__launch_bounds__(B / 32)`, an array size).
//!
//! Read from the tokens of the operation's statement: from the last `;`, `{` or `}` before it
//! to the first after it. A `<` right after a name opens a template argument list only when a
//! matching `>` closes it before the statement ends (`i < n % 32)` is a comparison).

use crate::ir::SourceFile;
use crate::lex::{self, Kind};

/// Names whose parenthesised argument is a constant expression.
const CONSTANT_CALLS: &[&str] = &["static_assert", "alignas", "__launch_bounds__", "_Alignas"];

/// Operators whose constant a rewrite may replace (lane and warp arithmetic): only these are
/// looked at (each costs a pass over its statement's tokens).
const REPLACEABLE: &[&str] = &["%", "/", "&", ">>", "<<"];

/// Set `in_constant` on the `ConstOp`s of `file` (parsed from `src`) whose operator is one of
/// [`REPLACEABLE`] (the others keep `in_array_size`).
pub(crate) fn mark(src: &[u8], file: &mut SourceFile) {
    for f in &mut file.functions {
        for op in &mut f.const_ops {
            if !op.in_constant && REPLACEABLE.contains(&op.op.as_str()) {
                op.in_constant = in_constant(src, op.span.start, op.span.end);
            }
        }
    }
}

/// An open bracket before the operation.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Open {
    /// `(` or `[`; `true` when its contents must be constant (`static_assert(`).
    Paren(bool),
    /// `<` after a name: a template argument list if a `>` closes it.
    Angle,
}

fn in_constant(src: &[u8], start: usize, end: usize) -> bool {
    let stmt_start = memchr::memrchr3(b';', b'{', b'}', &src[..start]).map_or(0, |i| i + 1);
    let stmt_end = memchr::memchr3(b';', b'{', b'}', &src[end.min(src.len())..])
        .map_or(src.len(), |i| end + i);
    // Before the operation: the brackets still open at it, and the statement's keywords.
    let mut stack: Vec<Open> = Vec::new();
    let mut constexpr = false;
    let mut case = false;
    let mut prev: Option<(Kind, std::ops::Range<usize>)> = None;
    lex::scan(src, stmt_start..start, |kind, range| {
        let word = &src[range.clone()];
        match kind {
            Kind::Ident if stack.is_empty() && word == b"constexpr" => constexpr = true,
            Kind::Ident if stack.is_empty() && word == b"case" => case = true,
            Kind::Punct(":") if stack.is_empty() => case = false,
            Kind::Punct("(" | "[") => {
                let constant = matches!(&prev, Some((Kind::Ident, r))
                    if CONSTANT_CALLS.iter().any(|c| c.as_bytes() == &src[r.clone()]));
                stack.push(Open::Paren(constant));
            }
            Kind::Punct(")" | "]") => {
                // Close the innermost paren (and any angle left open inside it: a comparison).
                while let Some(o) = stack.pop() {
                    if matches!(o, Open::Paren(_)) {
                        break;
                    }
                }
            }
            Kind::Punct("<") if matches!(prev, Some((Kind::Ident, _))) => stack.push(Open::Angle),
            Kind::Punct(">") if stack.last() == Some(&Open::Angle) => {
                stack.pop();
            }
            // Logical operators and `?` belong to comparisons, not template arguments.
            Kind::Punct("&&" | "||" | "?") => {
                while stack.last() == Some(&Open::Angle) {
                    stack.pop();
                }
            }
            _ => {}
        }
        prev = Some((kind, range));
    });
    if constexpr || case || stack.contains(&Open::Paren(true)) {
        return true;
    }
    if !stack.contains(&Open::Angle) {
        return false;
    }
    // After it: does a `>` close one of the angles open at the operation?
    let mut open = stack;
    let mut found = false;
    let mut done = false;
    lex::scan(src, end.min(src.len())..stmt_end, |kind, _| {
        if done {
            return;
        }
        match kind {
            Kind::Punct("(" | "[") => open.push(Open::Paren(false)),
            Kind::Punct(")" | "]") => loop {
                match open.pop() {
                    Some(Open::Paren(_)) => break,
                    Some(Open::Angle) => {}
                    None => {
                        done = true;
                        break;
                    }
                }
            },
            Kind::Punct("<") => open.push(Open::Angle),
            Kind::Punct(p @ (">" | ">>")) => {
                for _ in 0..p.len() {
                    match open.last() {
                        Some(Open::Angle) => {
                            open.pop();
                            found = true;
                        }
                        _ => {
                            done = true;
                            break;
                        }
                    }
                }
            }
            Kind::Punct("&&" | "||" | "?") => done = true,
            _ => {}
        }
        if open.is_empty() {
            done = true;
        }
    });
    found
}

#[cfg(test)]
mod tests {
    /// Each line of a kernel body with whether its operations with a number are in a constant
    /// context; every operation the lowering records on a line must agree.
    #[test]
    fn constant_contexts() {
        let lines: &[(&str, bool)] = &[
            ("  constexpr int W = B / 32;", true),
            ("  static_assert(B % 32 == 0, \"x\");", true),
            ("  reduce<B / 32>(a);", true),
            ("  Tile<B / 32, float> t;", true),
            ("  __shared__ float s[B / 32];", true),
            ("  switch (n) { case B / 32: break; }", true),
            ("  int lane = threadIdx.x % 32;", false),
            ("  if (n < threadIdx.x % 32) a[0] = 1;", false),
            ("  a[n % 32] = n < 3 && n > 1;", false),
            ("  a[0] = reduce<4>(B / 32);", false),
        ];
        let body: String = lines.iter().map(|(l, _)| format!("{l}\n")).collect();
        let src = format!("__global__ void k(int* a, int B, int n) {{\n{body}}}\n");
        let file = crate::parse(src.as_bytes());
        let ops = &file.functions[0].const_ops;
        let mut seen = vec![0; lines.len()];
        for o in ops
            .iter()
            .filter(|o| super::REPLACEABLE.contains(&o.op.as_str()))
        {
            let k = o.span.line as usize - 2;
            seen[k] += 1;
            assert_eq!(
                o.in_constant,
                lines[k].1,
                "{} in `{}`",
                &src[o.span.start..o.span.end],
                lines[k].0
            );
        }
        // The lowering records at least one operation on most lines.
        assert!(seen.iter().filter(|&&n| n > 0).count() >= 6, "{seen:?}");
    }
}
