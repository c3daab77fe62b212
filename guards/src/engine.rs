//! Per-loop verdicts: collects the evidence of every blocker rule in a function, assigns it to
//! the innermost loop containing it, and propagates it outwards (a barrier in an inner loop
//! blocks the outer one too; a `break` blocks only the loop it ends). Linear in the size of the
//! function: one sort and one sweep, no loop-by-loop rescans.

use frontend::{Call, Function, FunctionKind, SourceFile, Span};

use crate::callgraph::{call_targets, Reach, R_BARRIER};
use crate::suppress::Suppressions;
use crate::util::within;

pub use crate::rules::Blocker;

/// One piece of evidence: where a blocker happens and what it is.
#[derive(Debug, Clone)]
pub struct Evidence {
    pub rule: Blocker,
    pub span: Span,
    /// Short description: "`__syncthreads()`", "`reduce()`, which reaches `__syncthreads` (line 5)".
    pub label: String,
}

/// How evidence travels to enclosing loops.
#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Spread {
    /// Blocks every enclosing loop (barrier, atomic, dynamic LDS, `return`).
    All,
    /// Blocks only the loop it is assigned to (`break`).
    This,
    /// Blocks enclosing loops that do not contain this byte (`goto` to a label).
    Outside(usize),
}

const MAX_EVIDENCE: usize = 3;

/// The verdict of one loop.
#[derive(Debug, Clone, Default)]
pub struct LoopVerdict {
    /// Up to 3 pieces of evidence per blocker, in source order, blockers in id order.
    pub evidence: Vec<Evidence>,
}

impl LoopVerdict {
    /// The distinct blockers, in id order.
    pub fn blockers(&self) -> Vec<Blocker> {
        let mut b: Vec<Blocker> = self.evidence.iter().map(|e| e.rule).collect();
        b.sort();
        b.dedup();
        b
    }
}

/// Which blocker rules are active (selection, `allow-file`), by [`Blocker::slot`].
pub(crate) struct Active(pub [bool; Blocker::ALL.len()]);

/// What a blocker rule's detection sees of one function: the file, the function, and the
/// file's reach (helpers, macros and dynamic shared memory, computed once per file).
pub(crate) struct Cx<'a> {
    pub file: &'a SourceFile,
    pub fi: usize,
    pub f: &'a Function,
    pub reach: &'a Reach<'a>,
}

/// Where a blocker rule's detection puts its evidence (suppressed lines are dropped here).
pub(crate) struct Sink<'a> {
    rule: Blocker,
    sup: &'a Suppressions,
    items: Vec<(usize, Evidence, Spread, Option<usize>)>,
}

impl Sink<'_> {
    /// Evidence at `span`, spreading as `how`; `target` names the loop it belongs to when that
    /// is not the innermost one containing it (a `break`'s loop).
    pub fn push(&mut self, span: Span, label: String, how: Spread, target: Option<usize>) {
        if !self.sup.allows(self.rule.id(), span.line) {
            let ev = Evidence {
                rule: self.rule,
                span,
                label,
            };
            self.items.push((span.start, ev, how, target));
        }
    }
}

impl Cx<'_> {
    /// The witness of `slot` (barrier, atomic, dynamic LDS) that a call to a same-file function
    /// reaches, as a label: "`f()`, which reaches `__syncthreads` (line 5)".
    pub fn via_call(&self, c: &Call, slot: usize) -> Option<String> {
        let w = call_targets(self.file, &self.reach.func_by_name, c)
            .find_map(|j| self.reach.funcs[j][slot].as_ref())?;
        Some(format!(
            "`{}()`, which reaches `{}` (line {})",
            display_callee(c),
            w.what,
            w.span.line
        ))
    }

    /// Each use of a macro that reaches `slot`, with its label ("macro `M`, which expands to
    /// `atomicAdd`").
    pub fn via_macros(&self, slot: usize, sink: &mut Sink<'_>) {
        for r in &self.f.macro_refs {
            let Some(&m) = self.reach.macro_by_name.get(r.name.as_str()) else {
                continue;
            };
            if let Some(w) = &self.reach.macros[m][slot] {
                let label = format!("macro `{}`, which expands to `{}`", r.name, w.what);
                sink.push(r.span, label, Spread::All, None);
            }
        }
    }

    /// Calls of local lambdas (`auto step = [&] { __syncthreads(); };`, then `step()`) whose
    /// body does what `direct` recognises, directly, through a same-file function that reaches
    /// `slot`, through a macro, or (for barriers) through inline assembly.
    pub fn via_lambdas(&self, slot: usize, direct: fn(&Call) -> bool, sink: &mut Sink<'_>) {
        let f = self.f;
        let lambda_vars: Vec<(&str, Span)> = f
            .decls
            .iter()
            .filter_map(|d| {
                let init = d.init?;
                f.lambdas
                    .iter()
                    .find(|l| init.contains(l))
                    .map(|l| (d.name.as_str(), *l))
            })
            .collect();
        if lambda_vars.is_empty() {
            return;
        }
        let reach = self.reach;
        for c in f.calls.iter().filter(|c| c.receiver.is_none()) {
            let Some(&(_, body)) = lambda_vars
                .iter()
                .find(|(n, l)| *n == c.callee && !l.contains(&c.span))
            else {
                continue;
            };
            let inner = within(&f.calls, |x| x.span.start, body);
            let via_call = inner.iter().find(|x| {
                direct(x)
                    || call_targets(self.file, &reach.func_by_name, x)
                        .any(|j| reach.funcs[j][slot].is_some())
            });
            let via_macro = || {
                f.macro_refs.iter().find(|r| {
                    body.contains(&r.span)
                        && reach
                            .macro_by_name
                            .get(r.name.as_str())
                            .is_some_and(|&m| reach.macros[m][slot].is_some())
                })
            };
            let via_asm = || {
                f.asm
                    .iter()
                    .filter(|a| slot == R_BARRIER && body.contains(&a.span))
                    .find_map(|a| {
                        crate::rules::barrier::asm_barrier(&a.template).map(|w| (w, a.span.line))
                    })
            };
            let hit = match via_call {
                Some(x) => Some((x.callee.clone(), x.span.line)),
                None => via_macro()
                    .map(|r| (r.name.clone(), r.span.line))
                    .or_else(via_asm),
            };
            if let Some((what, line)) = hit {
                let label = format!(
                    "`{}()`, a lambda that calls `{what}` (line {line})",
                    c.callee
                );
                sink.push(c.span, label, Spread::All, None);
            }
        }
    }
}

/// True when a call is a barrier or an atomic itself (then no other rule looks through it).
pub(crate) fn is_primitive(c: &Call) -> bool {
    crate::rules::barrier::is_barrier_call(c) || crate::rules::atomic::is_atomic_call(c)
}

/// The verdicts of every loop of `f` (index = `Loop::index`).
pub(crate) fn analyse_function(
    file: &SourceFile,
    fi: usize,
    reach: &Reach<'_>,
    active: &Active,
    sup: &Suppressions,
) -> Vec<LoopVerdict> {
    let f: &Function = &file.functions[fi];
    let n = f.loops.len();
    let mut out = vec![LoopVerdict::default(); n];
    if n == 0 || f.kind == FunctionKind::Host {
        return out;
    }
    let cx = Cx { file, fi, f, reach };
    let mut items: Vec<(usize, Evidence, Spread, Option<usize>)> = Vec::new();
    for rule in Blocker::ALL {
        if !active.0[rule.slot()] {
            continue;
        }
        let mut sink = Sink {
            rule,
            sup,
            items: std::mem::take(&mut items),
        };
        rule.evidence(&cx, &mut sink);
        items = sink.items;
    }
    if items.is_empty() {
        return out;
    }
    items.sort_by_key(|i| i.0);

    // Sweep: innermost loop containing each item (loops are in pre-order, properly nested).
    let mut propagate: Vec<Vec<(Evidence, Spread)>> = vec![Vec::new(); n];
    let mut stack: Vec<usize> = Vec::new();
    let mut next = 0;
    for (pos, ev, how, target) in items {
        while next < n && f.loops[next].span.start <= pos {
            let s = f.loops[next].span.start;
            while stack.last().is_some_and(|&t| f.loops[t].span.end <= s) {
                stack.pop();
            }
            stack.push(next);
            next += 1;
        }
        while stack.last().is_some_and(|&t| f.loops[t].span.end <= pos) {
            stack.pop();
        }
        let home = match target {
            Some(t) if t < n => Some(t),
            _ => stack.last().copied(),
        };
        let Some(home) = home else { continue };
        if let Spread::Outside(label) = how {
            if f.loops[home].span.start <= label && label < f.loops[home].span.end {
                continue; // the label is inside this loop: the goto stays in it
            }
        }
        add(&mut out[home], &ev);
        if !matches!(how, Spread::This) {
            propagate[home].push((ev, how));
        }
    }
    // Outwards, children before parents (a child's index is greater than its parent's).
    for idx in (0..n).rev() {
        let Some(p) = f.loops[idx].parent else {
            continue;
        };
        let evs = std::mem::take(&mut propagate[idx]);
        for (ev, how) in evs {
            if let Spread::Outside(label) = how {
                if f.loops[p].span.start <= label && label < f.loops[p].span.end {
                    continue;
                }
            }
            add(&mut out[p], &ev);
            // Keep travelling outwards even when the parent is full, but bounded per rule and
            // reach: `goto`s that stop at the next loop must not crowd out a `return`.
            if propagate[p]
                .iter()
                .filter(|(e, h)| e.rule == ev.rule && *h == how)
                .count()
                < MAX_EVIDENCE
            {
                propagate[p].push((ev, how));
            }
        }
    }
    for v in &mut out {
        v.evidence
            .sort_by(|a, b| a.rule.cmp(&b.rule).then(a.span.start.cmp(&b.span.start)));
    }
    out
}

/// Adds `ev` unless the loop already holds MAX_EVIDENCE items of that rule; true when added.
fn add(v: &mut LoopVerdict, ev: &Evidence) -> bool {
    let count = v.evidence.iter().filter(|e| e.rule == ev.rule).count();
    if count >= MAX_EVIDENCE
        || v.evidence
            .iter()
            .any(|e| e.rule == ev.rule && e.span.start == ev.span.start)
    {
        return false;
    }
    v.evidence.push(ev.clone());
    true
}

/// How a call is named in evidence: `tile.sync`, `cg::sync`, `helper`.
pub(crate) fn display_callee(c: &frontend::Call) -> String {
    match (&c.receiver, &c.qualifier) {
        (Some(r), _) if r.len() <= 40 => format!("{r}.{}", c.callee),
        (_, Some(q)) => format!("{q}::{}", c.callee),
        _ => c.callee.clone(),
    }
}
