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

/// How a call is quoted in a blocker's evidence: `` `tile.sync()` ``, the range-for over
/// `` `r` `` (its `begin`, `end` and iterator), the conversion or copy of `` `b` ``.
pub(crate) fn call_evidence(c: &frontend::Call) -> String {
    let r = c.receiver.as_deref().filter(|r| r.len() <= 40);
    match (c.form, r) {
        (frontend::CallForm::Range, Some(r)) => {
            format!("the range-for over `{r}` (its begin/end and iterator)")
        }
        (frontend::CallForm::Convert, Some(r)) => format!("the conversion or copy of `{r}`"),
        _ => format!("`{}()`", display_callee(c)),
    }
}

/// `src` checked as `k.cu` on a thread of its own: the report, its loops' verdicts, and what
/// `counter` (a per-thread counter of the module under test) counted meanwhile.
#[cfg(test)]
pub(crate) fn checked_alone(
    src: String,
    counter: &'static std::thread::LocalKey<std::cell::Cell<u64>>,
) -> (crate::FileReport, Vec<crate::Verdict>, u64) {
    let (report, n) = std::thread::spawn(move || {
        let (report, _) = crate::check_source("k.cu", src.as_bytes(), &Default::default());
        (report, counter.with(|n| n.get()))
    })
    .join()
    .unwrap();
    let verdicts = report
        .functions
        .iter()
        .flat_map(|f| &f.loops)
        .map(|l| l.verdict)
        .collect();
    (report, verdicts, n)
}
