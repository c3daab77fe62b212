//! Loop-header analysis: the small [`Expr`] tree and the canonical [`ForHeader`] (their constant
//! trip counts are [`crate::trip`]'s). Expression lowering uses an explicit stack with a depth cap, never Rust recursion on
//! the syntax tree.

use tree_sitter::Node;

use crate::ir::{CmpOp, Expr, ForHeader, Span, Step};
use crate::kinds::fields;
use crate::lex::parse_int_literal;
use crate::node::{first_named_non_comment, span_of, text_of};

/// Deeper sub-expressions are kept as [`Expr::Other`] text (keeps `Expr` drops and serde shallow).
const MAX_EXPR_DEPTH: usize = 48;

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
/// Without an init clause (`for (; i < n; ++i)`) the variable is the side of the comparison that
/// is a plain name (the left one when both are) and `init_value` is `None`.
pub(crate) fn for_header(for_node: Node<'_>, src: &[u8]) -> Option<ForHeader> {
    let cond = unparen(for_node.child_by_field_id(fields().condition)?);
    if cond.kind() != "binary_expression" {
        return None;
    }
    let Some(init) = for_node.child_by_field_id(fields().initializer) else {
        let var = [fields().left, fields().right]
            .into_iter()
            .filter_map(|f| cond.child_by_field_id(f).map(unparen))
            .find(|n| n.kind() == "identifier")?;
        return rest_of_header(for_node, src, cond, text_of(var, src), None, None);
    };
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
            // The grammar keeps qualifiers out of the `type` field; `volatile` must stay visible
            // (a volatile counter has no constant trip count and is not rewritten).
            let mut c = init.walk();
            let volatile = init
                .children(&mut c)
                .any(|ch| ch.kind() == "type_qualifier" && &src[ch.byte_range()] == b"volatile");
            let ty = init
                .child_by_field_id(fields().ty)
                .map(|t| text_of(t, src))
                .map(|t| if volatile { format!("volatile {t}") } else { t });
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
    rest_of_header(for_node, src, cond, var, var_type, Some(init_value))
}

/// The comparison and the update of a canonical header, for the variable `var`.
fn rest_of_header(
    for_node: Node<'_>,
    src: &[u8],
    cond: Node<'_>,
    var: String,
    var_type: Option<String>,
    init_value: Option<Expr>,
) -> Option<ForHeader> {
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
