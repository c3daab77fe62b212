//! Per-loop verdicts: collects the evidence of every blocker rule in a function, assigns it to
//! the innermost loop containing it, and propagates it outwards (a barrier in an inner loop
//! blocks the outer one too; a `break` blocks only the loop it ends). Linear in the size of the
//! function: one sort and one sweep, no loop-by-loop rescans.
//!
//! The engine knows no rule: it runs the [`BlockerRule`]s it is given (the registry's, in
//! registry order; a rule's slot is its index there), each with a [`Cx`] bound to its slot.

use frontend::{Call, Function, FunctionKind, SourceFile, Span};

use crate::callgraph::{Reach, Reaches, Witness, MAX_UNRESOLVED};
use crate::suppress::Suppressions;
use crate::util::{call_evidence, display_callee, within};

/// A blocker rule, by its registry id (`barrier`, `atomic`, ...). Ordered by id: the order of
/// a loop's evidence and blockers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Blocker(&'static str);

impl Blocker {
    /// The blocker of rule `id` (the registry makes one per blocker rule).
    pub(crate) const fn new(id: &'static str) -> Blocker {
        Blocker(id)
    }

    /// The rule's stable id.
    pub fn id(self) -> &'static str {
        self.0
    }
}

/// What a blocker rule supplies, as one entry of the registry: how its evidence travels
/// through the translation unit (the reach model's predicates) and its detection in one
/// function.
pub(crate) struct BlockerRule {
    pub reaches: Reaches,
    /// Collects the rule's evidence in one function (`cx` is bound to the rule).
    pub evidence: fn(&Cx<'_>, &mut Sink<'_>),
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
    /// Calls in the loop (directly, or through the functions and macros of the unit it calls)
    /// to functions whose body nothing visible holds, as written (`ext_helper`, `ns::f`,
    /// `obj.m`), sorted, at most 16: what the verdict could not look into (callees only: no
    /// cast, type or variable).
    pub unresolved: Vec<String>,
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

/// What a blocker rule's detection sees of one function: the file, the function, and the
/// reach of the translation unit (helpers, macros and callables of the file and its headers,
/// computed once per file), for the rule in `slot`.
pub(crate) struct Cx<'a> {
    pub fi: usize,
    pub f: &'a Function,
    pub reach: &'a Reach<'a>,
    slot: usize,
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
    /// What macro node `m` reaches for this rule.
    pub fn macro_witness(&self, m: usize) -> Option<&Witness> {
        self.reach.macro_witness(m, self.slot)
    }

    /// True when some blocker recognises `c` by itself (a barrier, an atomic): then the other
    /// rules do not look through it.
    pub fn is_primitive(&self, c: &Call) -> bool {
        self.reach.is_primitive(c)
    }

    /// The witness of this rule that a call reaches through a function of the unit (by name, or
    /// held by a local callable), as a label: "`f()`, which reaches `__syncthreads` (line 5)"
    /// ("(helpers.cuh:5)" when the witness is in a header); or, when the callee does not, that
    /// it is passed a function, a callable or a lambda that does ("`apply()`, passed `helper`,
    /// which reaches ...").
    pub fn via_call(&self, c: &Call) -> Option<String> {
        let slot = self.slot;
        let reach = self.reach;
        let reaching = |j: usize| reach.fn_witness(j, slot);
        let hit = reach
            .call_targets(self.fi, c)
            .find_map(|j| reaching(j).map(|w| (j, w)));
        if let Some((j, w)) = hit {
            // A call resolved by name says so, with its candidates; a parameter bound to a
            // lambda (by a call of this template, or of the generic lambda it is written in),
            // with the lambda's line.
            let lambda = reach
                .body(j)
                .1
                .map(|l| format!(" (bound to the lambda of line {})", l.line));
            let how = lambda
                .or_else(|| {
                    reach.by_name_candidates(self.fi, c).map(|names| {
                        let shown: Vec<String> =
                            names.iter().take(4).map(|n| format!("`{n}`")).collect();
                        let more = names.len().saturating_sub(4);
                        let more = if more > 0 {
                            format!(" and {more} more")
                        } else {
                            String::new()
                        };
                        format!(
                            " (its type is unknown here: any of {}{more})",
                            shown.join(", ")
                        )
                    })
                })
                .unwrap_or_default();
            return Some(format!(
                "{}{how}, which reaches `{}` ({})",
                call_evidence(c),
                w.what,
                reach.unit.at(w)
            ));
        }
        // Its arguments: functions of the unit named as values, local callables, lambdas.
        let passed = |name: &str, what: String| {
            format!("`{}()`, passed `{name}`, {what}", display_callee(c))
        };
        for (span, j) in reach.values_in(self.fi, c.args) {
            if let Some(w) = reaching(j) {
                let at = self.f.idents.partition_point(|u| u.span.start < span.start);
                let name = self.f.idents.get(at).map_or("?", |u| u.name.as_str());
                let what = format!("which reaches `{}` ({})", w.what, reach.unit.at(w));
                return Some(passed(name, what));
            }
        }
        for u in within(&self.f.idents, |u| u.span.start, c.args) {
            if let Some(w) = reach
                .callable(self.fi, &u.name)
                .iter()
                .find_map(|&j| reaching(j))
            {
                let what = format!("which reaches `{}` ({})", w.what, reach.unit.at(w));
                return Some(passed(&u.name, what));
            }
            if let Some(body) = self.lambda_var(&u.name, u.span) {
                if let Some((what, line)) = self.lambda_hit(body) {
                    let what = format!("a lambda that calls `{what}` (line {line})");
                    return Some(passed(&u.name, what));
                }
            }
        }
        None
    }

    /// The body of the lambda held by local variable `name` (declared before `at`).
    fn lambda_var(&self, name: &str, at: Span) -> Option<Span> {
        let f = self.f;
        f.decls
            .iter()
            .rfind(|d| d.name == name && d.span.start < at.start)
            .and_then(|d| {
                let init = d.init?;
                f.lambdas.iter().find(|l| init.contains(l)).copied()
            })
    }

    /// What a lambda body (`body`, a span of this function) does that this rule looks for: a
    /// call that does it directly or reaches it, a macro that does, or inline assembly that
    /// does (the rule's `Reaches::asm`).
    fn lambda_hit(&self, body: Span) -> Option<(String, u32)> {
        let f = self.f;
        let slot = self.slot;
        let reach = self.reach;
        let direct = reach.reaches(slot).call;
        let inner = within(&f.calls, |x| x.span.start, body);
        let via_call = inner.iter().find(|x| {
            direct.is_some_and(|d| d(x))
                || reach
                    .call_targets(self.fi, x)
                    .any(|j| reach.fn_witness(j, slot).is_some())
        });
        if let Some(x) = via_call {
            return Some((x.callee.clone(), x.span.line));
        }
        let via_macro = self.macro_uses().iter().find(|u| {
            body.contains(&u.span)
                && reach
                    .macros_named(u.name)
                    .iter()
                    .any(|&m| reach.macro_witness(m, slot).is_some())
        });
        if let Some(u) = via_macro {
            return Some((u.name.to_string(), u.span.line));
        }
        let asm = reach.reaches(slot).asm?;
        f.asm
            .iter()
            .filter(|a| body.contains(&a.span))
            .find_map(|a| asm(&a.template).map(|w| (w, a.span.line)))
    }

    /// The macro uses of this function (of the file's own macros and of its headers').
    pub fn macro_uses(&self) -> &[crate::callgraph::MacroUse<'_>] {
        self.reach.uses(self.fi)
    }

    /// How a macro is named in a label: `` `M` ``, with where it is defined when that is a
    /// header (`` `M` (helpers.cuh:3) ``).
    pub fn macro_label(&self, name: &str, m: usize) -> String {
        let k = self.reach.macro_file(m);
        match self.reach.unit.paths.get(k).copied().flatten() {
            Some(p) => format!(
                "`{name}` ({}:{})",
                p.display(),
                self.reach.macro_def(m).span.line
            ),
            None => format!("`{name}`"),
        }
    }

    /// Each use of a macro that reaches this rule, with its label ("macro `M`, which expands
    /// to `atomicAdd`").
    pub fn via_macros(&self, sink: &mut Sink<'_>) {
        for u in self.macro_uses() {
            let hit = self
                .reach
                .macros_named(u.name)
                .iter()
                .find_map(|&m| self.macro_witness(m).map(|w| (m, w)));
            if let Some((m, w)) = hit {
                let label = format!(
                    "macro {}, which expands to `{}`",
                    self.macro_label(u.name, m),
                    w.what
                );
                sink.push(u.span, label, Spread::All, None);
            }
        }
    }

    /// Calls of local lambdas (`auto step = [&] { __syncthreads(); };`, then `step()`) whose
    /// body does what this rule looks for, directly, through a function of the unit, through a
    /// macro, or through inline assembly.
    pub fn via_lambdas(&self, sink: &mut Sink<'_>) {
        let f = self.f;
        if f.lambdas.is_empty() {
            return;
        }
        for c in f.calls.iter().filter(|c| c.receiver.is_none()) {
            let Some(body) = self.lambda_var(&c.callee, c.span) else {
                continue;
            };
            if body.contains(&c.span) {
                continue;
            }
            if let Some((what, line)) = self.lambda_hit(body) {
                let label = format!(
                    "`{}()`, a lambda that calls `{what}` (line {line})",
                    c.callee
                );
                sink.push(c.span, label, Spread::All, None);
            }
        }
    }
}

/// The verdicts of every loop of `f` (index = `Loop::index`), by the blocker rules `rules`
/// (slot = index, as `reach` was built) whose `active` flag is set.
pub(crate) fn analyse_function(
    file: &SourceFile,
    fi: usize,
    reach: &Reach<'_>,
    rules: &[(Blocker, &BlockerRule)],
    active: &[bool],
    sup: &Suppressions,
) -> Vec<LoopVerdict> {
    let f: &Function = &file.functions[fi];
    let n = f.loops.len();
    let mut out = vec![LoopVerdict::default(); n];
    if n == 0 || f.kind == FunctionKind::Host {
        return out;
    }
    for (l, names) in unresolved_by_loop(f, fi, reach).into_iter().enumerate() {
        out[l].unresolved = names;
    }
    let mut items: Vec<(usize, Evidence, Spread, Option<usize>)> = Vec::new();
    for (slot, &(rule, imp)) in rules.iter().enumerate() {
        if !active[slot] {
            continue;
        }
        let cx = Cx { fi, f, reach, slot };
        let mut sink = Sink {
            rule,
            sup,
            items: std::mem::take(&mut items),
        };
        (imp.evidence)(&cx, &mut sink);
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

/// The unresolved calls of every loop of `f` (index = `Loop::index`): each call and macro use
/// is assigned to the innermost loop containing it (one sort-free sweep: calls and uses are in
/// source order), then names travel outwards, children before parents, at most
/// `MAX_UNRESOLVED` per loop.
fn unresolved_by_loop(f: &Function, fi: usize, reach: &Reach<'_>) -> Vec<Vec<String>> {
    let n = f.loops.len();
    let mut out: Vec<Vec<String>> = vec![Vec::new(); n];
    let own = reach.unresolved_calls(fi);
    let mut items: Vec<(usize, Vec<std::borrow::Cow<'_, str>>)> = Vec::new();
    for (ci, c) in f.calls.iter().enumerate() {
        let mut names: Vec<std::borrow::Cow<'_, str>> = Vec::new();
        if own.binary_search(&ci).is_ok() {
            names.push(display_callee(c).into());
        }
        for j in reach.call_targets(fi, c) {
            names.extend(reach.unresolved_of_fn(j).iter().map(|x| x.as_str().into()));
        }
        if !names.is_empty() {
            items.push((c.span.start, names));
        }
    }
    for u in reach.uses(fi) {
        let names: Vec<std::borrow::Cow<'_, str>> = reach
            .macros_named(u.name)
            .iter()
            .flat_map(|&m| {
                reach
                    .unresolved_of_macro(m)
                    .iter()
                    .map(|x| x.as_str().into())
            })
            .collect();
        if !names.is_empty() {
            items.push((u.span.start, names));
        }
    }
    if items.is_empty() {
        return out;
    }
    items.sort_by_key(|i| i.0);
    let add = |v: &mut Vec<String>, x: &str| {
        if v.len() < MAX_UNRESOLVED && !v.iter().any(|y| y == x) {
            v.push(x.to_string());
        }
    };
    let mut stack: Vec<usize> = Vec::new();
    let mut next = 0;
    for (pos, names) in items {
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
        let Some(&home) = stack.last() else { continue };
        for x in names {
            add(&mut out[home], &x);
        }
    }
    for idx in (0..n).rev() {
        let Some(p) = f.loops[idx].parent else {
            continue;
        };
        if p < idx && !out[idx].is_empty() {
            let child = out[idx].clone();
            for x in &child {
                add(&mut out[p], x);
            }
        }
    }
    for v in &mut out {
        v.sort();
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
