//! Constant trip counts: the integer constant-expression evaluator over the header's [`Expr`]s
//! and [`count`], the one trip-count evaluator that both the IR and `transforms` use.

use crate::ir::{CmpOp, Expr, ForHeader, Step};

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
    let a = eval_const(h.init_value.as_ref()?, resolve)?;
    let b = eval_const(&h.bound, resolve)?;
    let s: i128 = match &h.step {
        Step::Const(s) => *s as i128,
        Step::Add(e) => eval_const(e, resolve)?,
        Step::Sub(e) => eval_const(e, resolve)?.checked_neg()?,
    };
    let ty = h.var_type.as_deref();
    if ty.is_some_and(|t| t.split_whitespace().any(|w| w == "volatile")) {
        // A `volatile` variable may change behind the loop's back: its count is not known.
        return None;
    }
    count(a, b, s, h.cmp, ty.and_then(int_type_range))
}

/// The trip count of `for (i = a; i CMP b; i += s)`: `Some(0)` when the loop never runs, `None`
/// when it would not terminate or when the count is not certain. With `range` (the induction
/// variable's value range), also `None` when the start, the bound or the first value that fails
/// the condition lies outside it: the variable wraps or overflows first
/// (`for (unsigned i = 5; i >= 0; --i)` never ends). Without `range` no such check is made.
///
/// The one trip-count evaluator of the workspace: the IR's [`crate::Loop::trip_count`] and the
/// manual unroller's remainder decision both come from here.
pub fn count(a: i128, b: i128, s: i128, cmp: CmpOp, range: Option<(i128, i128)>) -> Option<u64> {
    if s == 0 {
        return None;
    }
    // Distances are computed with checked arithmetic: an overflow means "not known".
    let n: i128 = match cmp {
        CmpOp::Lt => {
            if a >= b {
                0
            } else if s <= 0 {
                return None;
            } else {
                b.checked_sub(a)?.checked_add(s - 1)? / s
            }
        }
        CmpOp::Le => {
            if a > b {
                0
            } else if s <= 0 {
                return None;
            } else {
                b.checked_sub(a)? / s + 1
            }
        }
        CmpOp::Gt => {
            if a <= b {
                0
            } else if s >= 0 {
                return None;
            } else {
                let down = s.checked_neg()?;
                a.checked_sub(b)?.checked_add(down - 1)? / down
            }
        }
        CmpOp::Ge => {
            if a < b {
                0
            } else if s >= 0 {
                return None;
            } else {
                a.checked_sub(b)? / s.checked_neg()? + 1
            }
        }
        CmpOp::Ne => {
            let d = b.checked_sub(a)?;
            if d == 0 {
                0
            } else if d % s != 0 || d / s < 0 {
                return None;
            } else {
                d / s
            }
        }
    };
    if let Some((lo, hi)) = range {
        let last = if cmp == CmpOp::Ne {
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
/// other type (`auto`, typedefs, template parameters), whose range is not known here. Plain
/// `char` is `0..=127` (its sign is implementation-defined). From the one table, [`crate::ints`].
pub fn int_type_range(ty: &str) -> Option<(i128, i128)> {
    crate::ints::value_range(ty)
}
