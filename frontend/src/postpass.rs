//! Whole-file facts the lowering settles after the walk: qualifiers that come from macros, loop
//! counts voided by by-reference calls, line endings.

use std::collections::{HashMap, HashSet};

use crate::ir::{Function, FunctionKind, MacroDef};

/// A loop variable passed to a non-const `T&` parameter of a function of this file
/// (`bump(i)` with `void bump(int& v)`) may be written there: its loop has no constant count.
pub(crate) fn void_counts_of_by_ref_args(functions: &mut [Function], src: &[u8]) {
    let mut by_ref: HashMap<String, Vec<bool>> = HashMap::new();
    for f in functions.iter() {
        let refs = by_ref.entry(f.name.clone()).or_default();
        for (k, p) in f.params.iter().enumerate() {
            let text = src.get(p.span.start..p.span.end).unwrap_or_default();
            let r = p.is_pointer_or_ref && !text.windows(5).any(|w| w == b"const");
            match refs.get_mut(k) {
                Some(x) => *x |= r,
                None => refs.push(r),
            }
        }
    }
    for f in functions.iter_mut() {
        let Function { loops, calls, .. } = f;
        for l in loops.iter_mut().filter(|l| l.trip_count.is_some()) {
            let Some(var) = l.header.as_ref().map(|h| h.var.as_bytes()) else {
                continue;
            };
            let written = calls.iter().any(|c| {
                l.body.contains(&c.span)
                    && by_ref.get(&c.callee).is_some_and(|refs| {
                        c.arg_spans.iter().zip(refs).any(|(a, &r)| {
                            r && src
                                .get(a.start..a.end)
                                .is_some_and(|t| t.trim_ascii() == var)
                        })
                    })
            });
            if written {
                l.trip_count = None;
            }
        }
    }
}

/// True when the first line of `src` ends with CRLF.
pub(crate) fn memchr_crlf(src: &[u8]) -> bool {
    match src.iter().position(|&b| b == b'\n') {
        Some(i) => i > 0 && src[i - 1] == b'\r',
        None => false,
    }
}

/// Does the macro `name` expand (transitively, through other macros) to `__global__` or
/// `__device__`? Kernel wins over device. Cycle-safe and depth-bounded.
pub(crate) fn qualifier_through_macros<'m>(
    name: &str,
    macros: &impl Fn(&str) -> Option<&'m MacroDef>,
) -> Option<FunctionKind> {
    let mut seen: HashSet<String> = HashSet::new();
    let mut stack: Vec<String> = vec![name.to_string()];
    let mut found = None;
    while let Some(n) = stack.pop() {
        if seen.len() > 256 || !seen.insert(n.clone()) {
            continue;
        }
        let Some(m) = macros(&n) else { continue };
        for t in m.idents.iter().chain(m.calls.iter()) {
            match t.as_str() {
                "__global__" | "__launch_bounds__" => return Some(FunctionKind::Kernel),
                "__device__" => found = Some(FunctionKind::Device),
                other => {
                    if macros(other).is_some() {
                        stack.push(other.to_string());
                    }
                }
            }
        }
    }
    found
}
