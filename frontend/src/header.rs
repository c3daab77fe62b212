//! Loop-header analysis: the small [`Expr`] tree, the canonical [`ForHeader`] and constant trip
//! counts. Expression lowering uses an explicit stack with a depth cap, never Rust recursion on
//! the syntax tree.

use crate::ir::{CmpOp, Expr, ForHeader, Span, Step};
use crate::lower::{span_of, text_of};
use tree_sitter::Node;

use crate::kinds::fields;

/// Deeper sub-expressions are kept as [`Expr::Other`] text (keeps `Expr` drops and serde shallow).
const MAX_EXPR_DEPTH: usize = 48;

/// Parses a C/C++ integer literal (`42`, `0x2A`, `052`, `0b101`, `1'000`, `16u`, `8ULL`).
pub(crate) fn parse_int_literal(text: &str) -> Option<i128> {
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

enum Task<'t> {
    Visit(Node<'t>, usize),
    Unary(String, Span),
    Binary(String, Span),
}

/// Lowers an expression node into an [`Expr`] (iteratively).
pub(crate) fn lower_expr(node: Node<'_>, src: &[u8]) -> Expr {
    let mut tasks = vec![Task::Visit(node, 0)];
    let mut out: Vec<Expr> = Vec::new();
    while let Some(task) = tasks.pop() {
        match task {
            Task::Visit(n, depth) => {
                let span = span_of(n);
                let other = || Expr::Other {
                    text: text_of(n, src),
                    span,
                };
                if depth > MAX_EXPR_DEPTH {
                    out.push(other());
                    continue;
                }
                match n.kind() {
                    "number_literal" => match parse_int_literal(&text_of(n, src)) {
                        Some(value) => out.push(Expr::Int { value, span }),
                        None => out.push(other()),
                    },
                    "identifier" => out.push(Expr::Ident {
                        name: text_of(n, src),
                        span,
                    }),
                    "parenthesized_expression" => match first_named_non_comment(n) {
                        Some(inner) => tasks.push(Task::Visit(inner, depth + 1)),
                        None => out.push(other()),
                    },
                    "unary_expression" => {
                        match (
                            n.child_by_field_id(fields().operator),
                            n.child_by_field_id(fields().argument),
                        ) {
                            (Some(op), Some(arg)) => {
                                tasks.push(Task::Unary(text_of(op, src), span));
                                tasks.push(Task::Visit(arg, depth + 1));
                            }
                            _ => out.push(other()),
                        }
                    }
                    "binary_expression" => match (
                        n.child_by_field_id(fields().left),
                        n.child_by_field_id(fields().operator),
                        n.child_by_field_id(fields().right),
                    ) {
                        (Some(l), Some(op), Some(r)) => {
                            tasks.push(Task::Binary(text_of(op, src), span));
                            tasks.push(Task::Visit(r, depth + 1));
                            tasks.push(Task::Visit(l, depth + 1));
                        }
                        _ => out.push(other()),
                    },
                    _ => out.push(other()),
                }
            }
            Task::Unary(op, span) => {
                let operand = out.pop().unwrap_or(Expr::Other {
                    text: String::new(),
                    span,
                });
                // Fold `-5` into a literal so constant bounds stay constants.
                match (&op[..], &operand) {
                    ("-", Expr::Int { value, .. }) => out.push(Expr::Int {
                        value: -value,
                        span,
                    }),
                    ("+", Expr::Int { value, .. }) => out.push(Expr::Int {
                        value: *value,
                        span,
                    }),
                    _ => out.push(Expr::Unary {
                        op,
                        operand: Box::new(operand),
                        span,
                    }),
                }
            }
            Task::Binary(op, span) => {
                let rhs = out.pop().unwrap_or(Expr::Other {
                    text: String::new(),
                    span,
                });
                let lhs = out.pop().unwrap_or(Expr::Other {
                    text: String::new(),
                    span,
                });
                out.push(Expr::Binary {
                    op,
                    lhs: Box::new(lhs),
                    rhs: Box::new(rhs),
                    span,
                });
            }
        }
    }
    out.pop().unwrap_or(Expr::Other {
        text: String::new(),
        span: span_of(node),
    })
}

pub(crate) fn first_named_non_comment(n: Node<'_>) -> Option<Node<'_>> {
    let mut c = n.walk();
    let found = n.named_children(&mut c).find(|ch| ch.kind() != "comment");
    found
}

/// Strips any number of parentheses around an expression node.
fn unparen(mut n: Node<'_>) -> Node<'_> {
    while n.kind() == "parenthesized_expression" {
        match first_named_non_comment(n) {
            Some(inner) => n = inner,
            None => break,
        }
    }
    n
}

fn is_ident(n: Node<'_>, src: &[u8], name: &str) -> bool {
    let n = unparen(n);
    n.kind() == "identifier" && &src[n.byte_range()] == name.as_bytes()
}

/// Recognises `for (T i = a; i CMP b; i += s)` and its variants.
pub(crate) fn for_header(for_node: Node<'_>, src: &[u8]) -> Option<ForHeader> {
    let init = for_node.child_by_field_id(fields().initializer)?;
    let (var, var_type, init_value) = match init.kind() {
        "declaration" => {
            let mut c = init.walk();
            let mut decls = init.children_by_field_id(fields().declarator_nz, &mut c);
            let d = decls.next()?;
            if decls.next().is_some() || d.kind() != "init_declarator" {
                return None;
            }
            let name = d.child_by_field_id(fields().declarator)?;
            let value = d.child_by_field_id(fields().value)?;
            if name.kind() != "identifier"
                || value.kind() == "argument_list"
                || value.kind() == "initializer_list"
            {
                return None;
            }
            let ty = init.child_by_field_id(fields().ty).map(|t| text_of(t, src));
            (text_of(name, src), ty, lower_expr(value, src))
        }
        "assignment_expression" => {
            let op = init.child_by_field_id(fields().operator)?;
            let left = unparen(init.child_by_field_id(fields().left)?);
            if &src[op.byte_range()] != b"=" || left.kind() != "identifier" {
                return None;
            }
            (
                text_of(left, src),
                None,
                lower_expr(init.child_by_field_id(fields().right)?, src),
            )
        }
        _ => return None,
    };

    let cond = unparen(for_node.child_by_field_id(fields().condition)?);
    if cond.kind() != "binary_expression" {
        return None;
    }
    let op = text_of(cond.child_by_field_id(fields().operator)?, src);
    let cmp = match &op[..] {
        "<" => CmpOp::Lt,
        "<=" => CmpOp::Le,
        ">" => CmpOp::Gt,
        ">=" => CmpOp::Ge,
        "!=" => CmpOp::Ne,
        _ => return None,
    };
    let (l, r) = (
        cond.child_by_field_id(fields().left)?,
        cond.child_by_field_id(fields().right)?,
    );
    let (var_on_left, bound_node) = if is_ident(l, src, &var) {
        (true, r)
    } else if is_ident(r, src, &var) {
        (false, l)
    } else {
        return None;
    };
    let cmp = if var_on_left {
        cmp
    } else {
        match cmp {
            CmpOp::Lt => CmpOp::Gt,
            CmpOp::Gt => CmpOp::Lt,
            CmpOp::Le => CmpOp::Ge,
            CmpOp::Ge => CmpOp::Le,
            CmpOp::Ne => CmpOp::Ne,
        }
    };
    let bound = lower_expr(bound_node, src);

    let upd = unparen(for_node.child_by_field_id(fields().update)?);
    let step = match upd.kind() {
        "update_expression" => {
            if !is_ident(upd.child_by_field_id(fields().argument)?, src, &var) {
                return None;
            }
            match &src[upd.child_by_field_id(fields().operator)?.byte_range()] {
                b"++" => Step::Const(1),
                b"--" => Step::Const(-1),
                _ => return None,
            }
        }
        "assignment_expression" => {
            if !is_ident(upd.child_by_field_id(fields().left)?, src, &var) {
                return None;
            }
            let right = upd.child_by_field_id(fields().right)?;
            match &src[upd.child_by_field_id(fields().operator)?.byte_range()] {
                b"+=" => add_step(lower_expr(right, src), false),
                b"-=" => add_step(lower_expr(right, src), true),
                b"=" => {
                    // i = i + s, i = s + i, i = i - s
                    let rb = unparen(right);
                    if rb.kind() != "binary_expression" {
                        return None;
                    }
                    let op = &src[rb.child_by_field_id(fields().operator)?.byte_range()];
                    let (bl, br) = (
                        rb.child_by_field_id(fields().left)?,
                        rb.child_by_field_id(fields().right)?,
                    );
                    match op {
                        b"+" if is_ident(bl, src, &var) => add_step(lower_expr(br, src), false),
                        b"+" if is_ident(br, src, &var) => add_step(lower_expr(bl, src), false),
                        b"-" if is_ident(bl, src, &var) => add_step(lower_expr(br, src), true),
                        _ => return None,
                    }
                }
                _ => return None,
            }
        }
        _ => return None,
    };
    Some(ForHeader {
        var,
        var_type,
        init_value,
        cmp,
        bound,
        var_on_left,
        step,
    })
}

fn add_step(e: Expr, negate: bool) -> Step {
    if let Expr::Int { value, .. } = e {
        if let Ok(v) = i64::try_from(if negate { -value } else { value }) {
            return Step::Const(v);
        }
    }
    if negate {
        Step::Sub(e)
    } else {
        Step::Add(e)
    }
}

/// Exact trip count of a canonical header whose init, bound and step are integer literals.
/// `Some(0)` when the loop never runs; `None` when unknown or when it would not terminate.
pub fn trip_count(h: &ForHeader) -> Option<u64> {
    trip_count_with(h, &|_| None)
}

/// Evaluates an integer constant expression; names are looked up with `resolve` (object-like
/// macros, `constexpr`/`const` integers). `None` when anything is not a known constant.
pub fn eval_const(e: &Expr, resolve: &dyn Fn(&str) -> Option<i128>) -> Option<i128> {
    // Iterative post-order over the (depth-capped) tree.
    enum T<'e> {
        Visit(&'e Expr),
        Unary(&'e str),
        Binary(&'e str),
    }
    let mut tasks = vec![T::Visit(e)];
    let mut vals: Vec<i128> = Vec::new();
    while let Some(t) = tasks.pop() {
        match t {
            T::Visit(Expr::Int { value, .. }) => vals.push(*value),
            T::Visit(Expr::Ident { name, .. }) => vals.push(resolve(name)?),
            T::Visit(Expr::Unary { op, operand, .. }) => {
                tasks.push(T::Unary(op));
                tasks.push(T::Visit(operand));
            }
            T::Visit(Expr::Binary { op, lhs, rhs, .. }) => {
                tasks.push(T::Binary(op));
                tasks.push(T::Visit(rhs));
                tasks.push(T::Visit(lhs));
            }
            T::Visit(Expr::Other { .. }) => return None,
            T::Unary(op) => {
                let v = vals.pop()?;
                vals.push(match op {
                    "-" => v.checked_neg()?,
                    "+" => v,
                    "~" => !v,
                    _ => return None,
                });
            }
            T::Binary(op) => {
                let r = vals.pop()?;
                let l = vals.pop()?;
                vals.push(match op {
                    "+" => l.checked_add(r)?,
                    "-" => l.checked_sub(r)?,
                    "*" => l.checked_mul(r)?,
                    "/" => l.checked_div(r)?,
                    "%" => l.checked_rem(r)?,
                    "<<" => l.checked_shl(u32::try_from(r).ok().filter(|s| *s < 64)?)?,
                    ">>" => l.checked_shr(u32::try_from(r).ok().filter(|s| *s < 64)?)?,
                    "&" => l & r,
                    "|" => l | r,
                    "^" => l ^ r,
                    _ => return None,
                });
            }
        }
    }
    vals.pop()
}

/// [`trip_count`] where init, bound and step may be constant expressions over names that
/// `resolve` knows (`for (int i = 0; i < TILE * 2; i += STEP)`).
pub fn trip_count_with(h: &ForHeader, resolve: &dyn Fn(&str) -> Option<i128>) -> Option<u64> {
    let a = eval_const(&h.init_value, resolve)?;
    let b = eval_const(&h.bound, resolve)?;
    let s: i128 = match &h.step {
        Step::Const(s) => *s as i128,
        Step::Add(e) => eval_const(e, resolve)?,
        Step::Sub(e) => eval_const(e, resolve)?.checked_neg()?,
    };
    if s == 0 {
        return None;
    }
    let n: i128 = match h.cmp {
        CmpOp::Lt => {
            if a >= b {
                0
            } else if s <= 0 {
                return None;
            } else {
                (b - a + s - 1) / s
            }
        }
        CmpOp::Le => {
            if a > b {
                0
            } else if s <= 0 {
                return None;
            } else {
                (b - a) / s + 1
            }
        }
        CmpOp::Gt => {
            if a <= b {
                0
            } else if s >= 0 {
                return None;
            } else {
                (a - b + (-s) - 1) / (-s)
            }
        }
        CmpOp::Ge => {
            if a < b {
                0
            } else if s >= 0 {
                return None;
            } else {
                (a - b) / (-s) + 1
            }
        }
        CmpOp::Ne => {
            if a == b {
                0
            } else if s == 0 || (b - a) % s != 0 || (b - a) / s < 0 {
                return None;
            } else {
                (b - a) / s
            }
        }
    };
    // The loop stops at the first value that fails the condition; if that value (or the start,
    // or the bound) does not fit the variable's type, the variable wraps or overflows first
    // (`for (unsigned i = 5; i >= 0; --i)` never ends).
    if let Some((lo, hi)) = h.var_type.as_deref().and_then(int_type_range) {
        let last = if h.cmp == CmpOp::Ne {
            b
        } else {
            a.checked_add(n.checked_mul(s)?)?
        };
        if [a, b, last].iter().any(|v| !(lo..=hi).contains(v)) {
            return None;
        }
    }
    u64::try_from(n).ok()
}

/// Value range of a builtin or `<cstdint>` integer type named in a loop header; `None` for any
/// other type (`auto`, typedefs, template parameters), whose range is not known here.
fn int_type_range(ty: &str) -> Option<(i128, i128)> {
    let words: Vec<&str> = ty
        .split_whitespace()
        .filter(|w| !matches!(*w, "const" | "volatile" | "register" | "int"))
        .collect();
    let name = match words.as_slice() {
        [] => "int",
        [one] => one.trim_start_matches("std::"),
        ["signed", w] => w,
        ["unsigned", "char"] => "uint8_t",
        ["unsigned", "short"] => "uint16_t",
        ["unsigned", "long"] | ["unsigned", "long", "long"] => "uint64_t",
        ["long", "long"] => "int64_t",
        _ => return None,
    };
    let bits = |n: u32, signed: bool| {
        if signed {
            (-(1i128 << (n - 1)), (1i128 << (n - 1)) - 1)
        } else {
            (0, (1i128 << n) - 1)
        }
    };
    Some(match name {
        "char" | "int8_t" => bits(8, true),
        "uint8_t" => bits(8, false),
        "short" | "int16_t" => bits(16, true),
        "uint16_t" => bits(16, false),
        "int" | "signed" | "int32_t" => bits(32, true),
        "unsigned" | "uint" | "uint32_t" => bits(32, false),
        "long" | "int64_t" | "ptrdiff_t" | "ssize_t" | "intptr_t" => bits(64, true),
        "uint64_t" | "size_t" | "uintptr_t" => bits(64, false),
        _ => return None,
    })
}
