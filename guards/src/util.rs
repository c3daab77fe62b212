//! Small helpers over the IR: position-sorted vectors, how a call is named.

use frontend::Span;

/// The sub-slice of `items` (sorted by `start_of`) whose start lies in `span`.
pub(crate) fn within<T>(items: &[T], start_of: impl Fn(&T) -> usize, span: Span) -> &[T] {
    let lo = items.partition_point(|x| start_of(x) < span.start);
    let hi = items.partition_point(|x| start_of(x) < span.end);
    &items[lo..hi.max(lo)]
}

/// How a call is named in evidence and in `unresolved`: `tile.sync`, `cg::sync`, `helper`.
pub(crate) fn display_callee(c: &frontend::Call) -> String {
    match (&c.receiver, &c.qualifier) {
        (Some(r), _) if r.len() <= 40 => format!("{r}.{}", c.callee),
        (_, Some(q)) => format!("{q}::{}", c.callee),
        _ => c.callee.clone(),
    }
}
