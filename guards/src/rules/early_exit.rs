//! `early-exit`: a loop that can be left early (`break`, `return`, `goto`) is not unrolled.
//!
//! ## What it does
//! Blocks unrolling of a loop containing a jump that leaves *this* loop: a `break` whose target
//! is this loop, a `return` from the enclosing function, or a `goto` to a label outside the loop.
//! Jumps that stay inside do not block: a `break` that ends an inner loop or a `switch`, a
//! `continue`, a `return` inside a lambda, a `goto` to a label inside the loop. A `return` (or a
//! `goto`, or a `break` outside any loop of its own) inside a macro of the same file used in the
//! loop counts too.
//!
//! ## Why
//! Full unrolling needs a single exit after a known number of iterations; with an early exit the
//! compiler must keep a compare-and-branch in every unrolled copy, so the code grows without the
//! branch savings unrolling is for, and the transforms of `hip-unroll unroll` cannot produce an
//! equivalent straight-line body.
//!
//! ## Example
//! ```cpp
//! #pragma unroll              // unroll-blocked: early-exit
//! for (int i = 0; i < 16; ++i) {
//!     if (key[i] == probe) { found = i; break; }
//! }
//! ```
//! Replace the exit by a predicate (`found = key[i] == probe ? i : found;`) to make the loop
//! unrollable.
//!
//! ## Fix safety
//! No automatic fix: `hip-unroll unroll` refuses the loop unless `--force` is given.
//! `// hip-unroll: allow(early-exit)` silences the lint (`check`) only; `unroll` and the tuner apply
//! every blocker whatever the suppressions, `--select` or `--ignore` say.

use frontend::{JumpKind, JumpTarget, MacroDef, Span};

use crate::callgraph::{Reaches, Unit};
use crate::engine::{BlockerRule, Cx, Sink, Spread};

/// The rule's registry entry. How an early exit travels: only from macro to macro (a helper's
/// `return` stays in the helper); the witness names the macro that leaves.
pub(crate) const BLOCKER: BlockerRule = BlockerRule {
    reaches: Reaches {
        function: None,
        macro_def: in_macro,
        call: None,
        macro_call: None,
        asm: None,
        unseen: None,
    },
    evidence,
};

fn in_macro(_: &Unit<'_>, m: &MacroDef) -> Option<(String, Span)> {
    macro_exit(m).map(|_| (m.name.clone(), m.span))
}

/// The rule's stable id.
pub const ID: &str = "early-exit";

/// One line: what the rule reports (`explain --list`, SARIF).
pub const SUMMARY: &str = "the loop can be left early by `break`, `return` or `goto`";

/// How a macro body leaves the code it is expanded into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MacroExit {
    /// `return` or `goto`: leaves every enclosing loop.
    Leaves,
    /// `break` (or `continue`-free `break`) with no loop or switch of its own: leaves the
    /// innermost loop it is used in.
    Breaks,
}

/// The early exit a macro body performs by itself (not through other macros).
pub fn macro_exit(m: &MacroDef) -> Option<MacroExit> {
    let has = |k: &str| m.control.iter().any(|c| c == k);
    if has("return") || has("goto") {
        return Some(MacroExit::Leaves);
    }
    let own_scope = has("for") || has("while") || has("do") || has("switch");
    (has("break") && !own_scope).then_some(MacroExit::Breaks)
}

/// The early-exit evidence of one function: macros that return, jump or break out (through
/// other macros too), and every `break` (of its own loop only), `return` and `goto` (of the
/// loops that do not contain its label).
fn evidence(cx: &Cx<'_>, sink: &mut Sink<'_>) {
    for u in cx.macro_uses() {
        let hit = cx.reach.macros_named(u.name).iter().find_map(|&m| {
            let w = cx.macro_witness(m)?;
            // The witness is the macro that leaves; how it leaves is its own body's.
            let root = cx.reach.macros_named(&w.what).iter().find_map(|&r| {
                let d = cx.reach.macro_def(r);
                (d.span == w.span).then(|| macro_exit(d)).flatten()
            })?;
            Some((m, root, w))
        });
        if let Some((m, exit, w)) = hit {
            let (how, verb) = match exit {
                MacroExit::Leaves => (Spread::All, "returns or jumps out"),
                MacroExit::Breaks => (Spread::This, "breaks out of the loop"),
            };
            let via = if w.what == u.name {
                String::new()
            } else {
                format!(" (through `{}`)", w.what)
            };
            sink.push(
                u.span,
                format!("macro {}, which {verb}{via}", cx.macro_label(u.name, m)),
                how,
                None,
            );
        }
    }
    for j in &cx.f.jumps {
        match (&j.kind, &j.target) {
            (JumpKind::Break, JumpTarget::Loop(t)) => {
                sink.push(j.span, "`break`".into(), Spread::This, Some(*t));
            }
            (JumpKind::Return, JumpTarget::Function) => {
                sink.push(j.span, "`return`".into(), Spread::All, None);
            }
            (JumpKind::Goto, JumpTarget::Label(l)) => {
                let how = match cx.f.labels.iter().find(|x| &x.name == l) {
                    Some(label) => Spread::Outside(label.span.start),
                    None => Spread::All,
                };
                sink.push(j.span, format!("`goto {l}`"), how, None);
            }
            _ => {}
        }
    }
}
