//! Small helpers over the IR's position-sorted vectors.

use frontend::Span;

/// The sub-slice of `items` (sorted by `start_of`) whose start lies in `span`.
pub(crate) fn within<T>(items: &[T], start_of: impl Fn(&T) -> usize, span: Span) -> &[T] {
    let lo = items.partition_point(|x| start_of(x) < span.start);
    let hi = items.partition_point(|x| start_of(x) < span.end);
    &items[lo..hi.max(lo)]
}
