//! Per-loop verdicts: collects the evidence of every blocker rule in a function, assigns it to
//! the innermost loop containing it, and propagates it outwards (a barrier in an inner loop
//! blocks the outer one too; a `break` blocks only the loop it ends). Linear in the size of the
//! function: one sort and one sweep, no loop-by-loop rescans.

use frontend::{Access, Function, FunctionKind, JumpKind, JumpTarget, SourceFile, Span};

use crate::callgraph::{call_targets, Reach, R_ATOMIC, R_BARRIER, R_DLDS};
use crate::rules::early_exit::MacroExit;
use crate::rules::{atomic, barrier};
use crate::suppress::Suppressions;
use crate::util::within;

/// A loop blocker rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Blocker {
    Atomic,
    Barrier,
    DynamicLds,
    EarlyExit,
}

impl Blocker {
    pub const ALL: [Blocker; 4] = [
        Blocker::Atomic,
        Blocker::Barrier,
        Blocker::DynamicLds,
        Blocker::EarlyExit,
    ];

    pub fn id(self) -> &'static str {
        match self {
            Blocker::Atomic => crate::rules::atomic::ID,
            Blocker::Barrier => crate::rules::barrier::ID,
            Blocker::DynamicLds => crate::rules::dynamic_lds::ID,
            Blocker::EarlyExit => crate::rules::early_exit::ID,
        }
    }

    fn slot(self) -> usize {
        self as usize
    }
}

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
enum Spread {
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

/// Which blocker rules are active (selection, `allow-file`).
pub(crate) struct Active(pub [bool; 4]);

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
    let mut items: Vec<(usize, Evidence, Spread, Option<usize>)> = Vec::new();
    let mut push =
        |rule: Blocker, span: Span, label: String, how: Spread, target: Option<usize>| {
            if active.0[rule.slot()] && !sup.allows(rule.id(), span.line) {
                items.push((span.start, Evidence { rule, span, label }, how, target));
            }
        };

    for c in &f.calls {
        if barrier::is_barrier_call(c) {
            push(
                Blocker::Barrier,
                c.span,
                format!("`{}()`", display_callee(c)),
                Spread::All,
                None,
            );
        } else if atomic::is_atomic_call(c) {
            push(
                Blocker::Atomic,
                c.span,
                format!("`{}()`", display_callee(c)),
                Spread::All,
                None,
            );
        } else {
            let js: Vec<usize> = call_targets(file, &reach.func_by_name, c).collect();
            if !js.is_empty() {
                for (slot, rule) in [
                    (R_BARRIER, Blocker::Barrier),
                    (R_ATOMIC, Blocker::Atomic),
                    (R_DLDS, Blocker::DynamicLds),
                ] {
                    if let Some(w) = js.iter().find_map(|&j| reach.funcs[j][slot].as_ref()) {
                        let label = format!(
                            "`{}()`, which reaches `{}` (line {})",
                            display_callee(c),
                            w.what,
                            w.span.line
                        );
                        push(rule, c.span, label, Spread::All, None);
                    }
                }
            }
        }
    }
    for a in &f.asm {
        if let Some(w) = barrier::asm_barrier(&a.template) {
            push(
                Blocker::Barrier,
                a.span,
                format!("`asm(\"{w}\")`"),
                Spread::All,
                None,
            );
        }
    }
    // Lambdas bound to a local (`auto step = [&] { __syncthreads(); };`) and called in a loop.
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
    if !lambda_vars.is_empty() {
        for c in f.calls.iter().filter(|c| c.receiver.is_none()) {
            let Some(&(_, body)) = lambda_vars
                .iter()
                .find(|(n, l)| *n == c.callee && !l.contains(&c.span))
            else {
                continue;
            };
            let inner = within(&f.calls, |x| x.span.start, body);
            for (slot, rule, pred) in [
                (
                    R_BARRIER,
                    Blocker::Barrier,
                    barrier::is_barrier_call as fn(&frontend::Call) -> bool,
                ),
                (R_ATOMIC, Blocker::Atomic, atomic::is_atomic_call),
            ] {
                // Directly, through a `__device__` function, or through a macro.
                let via_call = inner.iter().find(|x| {
                    pred(x)
                        || call_targets(file, &reach.func_by_name, x)
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
                        .find_map(|a| barrier::asm_barrier(&a.template).map(|w| (w, a.span.line)))
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
                    push(rule, c.span, label, Spread::All, None);
                }
            }
        }
    }
    let dynamic = &reach.dynamic[fi];
    for r in &f.macro_refs {
        let Some(&m) = reach.macro_by_name.get(r.name.as_str()) else {
            continue;
        };
        for (slot, rule) in [
            (R_BARRIER, Blocker::Barrier),
            (R_ATOMIC, Blocker::Atomic),
            (R_DLDS, Blocker::DynamicLds),
        ] {
            if let Some(w) = &reach.macros[m][slot] {
                let label = format!("macro `{}`, which expands to `{}`", r.name, w.what);
                push(rule, r.span, label, Spread::All, None);
            }
        }
        if reach.macros[m][R_DLDS].is_none() && !dynamic.is_empty() {
            if let Some((name, root)) = reach
                .macro_names(file, m)
                .into_iter()
                .find_map(|n| dynamic.get(n).map(|root| (n, root)))
            {
                let label = if name == root {
                    format!(
                        "macro `{}`, which uses dynamic shared memory `{root}`",
                        r.name
                    )
                } else {
                    format!(
                        "macro `{}`, which uses `{name}`, a pointer into dynamic shared memory `{root}`",
                        r.name
                    )
                };
                push(Blocker::DynamicLds, r.span, label, Spread::All, None);
            }
        }
        if let Some((exit, w)) = &reach.macro_exit[m] {
            let (how, verb) = match exit {
                MacroExit::Leaves => (Spread::All, "returns or jumps out"),
                MacroExit::Breaks => (Spread::This, "breaks out of the loop"),
            };
            let via = if w.what == r.name {
                String::new()
            } else {
                format!(" (through `{}`)", w.what)
            };
            push(
                Blocker::EarlyExit,
                r.span,
                format!("macro `{}`, which {verb}{via}", r.name),
                how,
                None,
            );
        }
    }
    if !dynamic.is_empty() {
        for u in &f.idents {
            if let Some(root) = dynamic.get(&u.name) {
                let label = match (u.name == *root, u.access == Access::Decl) {
                    (true, true) => format!("`{root}` (declares dynamic shared memory)"),
                    (true, false) => format!("`{root}` (dynamic shared memory)"),
                    (false, true) => {
                        format!(
                            "`{}`, a pointer into dynamic shared memory `{root}`",
                            u.name
                        )
                    }
                    (false, false) => {
                        format!("`{}` (points into dynamic shared memory `{root}`)", u.name)
                    }
                };
                push(Blocker::DynamicLds, u.span, label, Spread::All, None);
            }
        }
    }
    for j in &f.jumps {
        match (&j.kind, &j.target) {
            (JumpKind::Break, JumpTarget::Loop(t)) => {
                push(
                    Blocker::EarlyExit,
                    j.span,
                    "`break`".into(),
                    Spread::This,
                    Some(*t),
                );
            }
            (JumpKind::Return, JumpTarget::Function) => {
                push(
                    Blocker::EarlyExit,
                    j.span,
                    "`return`".into(),
                    Spread::All,
                    None,
                );
            }
            (JumpKind::Goto, JumpTarget::Label(l)) => {
                let how = match f.labels.iter().find(|x| &x.name == l) {
                    Some(label) => Spread::Outside(label.span.start),
                    None => Spread::All,
                };
                push(Blocker::EarlyExit, j.span, format!("`goto {l}`"), how, None);
            }
            _ => {}
        }
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

fn display_callee(c: &frontend::Call) -> String {
    match (&c.receiver, &c.qualifier) {
        (Some(r), _) if r.len() <= 40 => format!("{r}.{}", c.callee),
        (_, Some(q)) => format!("{q}::{}", c.callee),
        _ => c.callee.clone(),
    }
}
