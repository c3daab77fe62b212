//! `dynamic-lds`: a loop that touches dynamically sized shared memory (LDS) is not unrolled.
//!
//! ## What it does
//! Blocks unrolling of a loop that reads or writes dynamic shared memory: an `extern __shared__`
//! array (file scope or local, also with `HIP_DYNAMIC_SHARED_ATTRIBUTE`), a
//! `HIP_DYNAMIC_SHARED(type, name)` declaration, or a pointer/reference initialised from one of
//! them, transitively (`float* a = smem; float* b = a + 4;`), or assigned from one later
//! (`float* p; p = smem + off;`), or from what a function or method returns when it returns a
//! pointer into dynamic shared memory (`T* s = smem.getPointer();`, `T* s = SharedMemory<T>();`
//! through its conversion operator, `float* p = (float*)get_smem() + off;`: the pattern of the
//! CUDA samples' reductions, `extern __shared__` declared inside the helper). An object of a
//! class whose constructor touches dynamic shared memory (`Tile() { extern __shared__ char
//! raw[]; p = (T*)raw; }`), or one of whose methods stores a pointer into it in a data member
//! (`void bind() { ...; this->p = (T*)raw + off; }`), holds a pointer into it: every use of the
//! object counts (`t[i]`, `t.p[i]`). Uses inside macros
//! of the translation unit and inside `__device__` helpers that touch dynamic shared memory
//! count too. The message names the dynamic array itself (`row`, a pointer into dynamic shared
//! memory `smem`). Static `__shared__ T x[N]` arrays, and pointers into them, do not block.
//!
//! ## Why
//! Unrolling touches exactly the addresses the loop touched before, so this is not about
//! out-of-bounds accesses. It is a policy of the automated tuner, for two reasons:
//! - The amount of dynamic LDS is chosen at launch and is not in the code object
//!   (`.group_segment_fixed_size` counts static LDS only). hip-unroll therefore cannot tell
//!   whether the kernel's occupancy is limited by LDS or by registers, and its `vgpr-pressure`
//!   judgement of an unrolled variant (which needs more registers) could be wrong either way.
//! - Dynamic LDS is one untyped array that kernels carve into views of different types, whose
//!   accesses the compiler must assume may alias; unrolling gains little there and is not worth
//!   a rewrite that nobody reviewed.
//!
//! The loop is left to a human decision: `hip-unroll unroll --force` rewrites it.
//!
//! ## Example
//! ```cpp
//! extern __shared__ float smem[];
//! float* row = smem + threadIdx.y * pitch;
//! for (int i = 0; i < n; ++i) row[i] *= scale;   // blocked: dynamic-lds (`row` -> `smem`)
//! ```
//! Use a statically sized `__shared__` array when the size is a compile-time constant.
//!
//! ## Fix safety
//! No automatic fix. `// hip-unroll: allow(dynamic-lds)` silences the lint (`check`) only;
//! `unroll` and the tuner apply every blocker whatever the suppressions say.

use std::collections::HashMap;

use frontend::{Access, Function, JumpKind, MacroDef, SharedDecl, SharedKind, Span};

use crate::callgraph::{type_base, Reach, Reaches, Unit, Witness};
use crate::util::within;
use crate::engine::{BlockerRule, Cx, Sink, Spread};

/// The rule's registry entry. How dynamic shared memory travels: a function that uses a name
/// denoting it, a macro that names a file-scope dynamic array of the unit.
pub(crate) const BLOCKER: BlockerRule = BlockerRule {
    reaches: Reaches {
        function: Some(in_function),
        macro_def: in_macro,
        call: None,
        macro_call: None,
        asm: None,
        unseen: None,
    },
    evidence,
};

/// Every file-scope `__shared__` declaration of the unit.
fn unit_shared<'a, 'f>(unit: &'a Unit<'f>) -> impl Iterator<Item = &'f SharedDecl> + 'a {
    unit.files.iter().flat_map(|f| f.shared.iter())
}

fn in_function(unit: &Unit<'_>, f: &Function, part: Option<Span>) -> Option<(String, Span)> {
    let dynamic = dynamic_names(unit_shared(unit), f);
    if dynamic.is_empty() {
        return None;
    }
    f.idents
        .iter()
        .filter(|u| part.is_none_or(|p| p.contains(&u.span)))
        .find_map(|u| dynamic.get(&u.name).map(|root| (root.clone(), u.span)))
}

fn in_macro(unit: &Unit<'_>, m: &MacroDef) -> Option<(String, Span)> {
    let mut dynamic = unit_shared(unit).filter(|s| s.kind != SharedKind::Static);
    m.calls
        .iter()
        .chain(m.idents.iter())
        .find(|name| dynamic.any(|s| s.name == **name))
        .map(|name| (name.clone(), m.span))
}

/// The rule's stable id.
pub const ID: &str = "dynamic-lds";

/// One line: what the rule reports (`explain --list`, SARIF).
pub const SUMMARY: &str = "the loop touches dynamic shared memory (`extern __shared__`, `HIP_DYNAMIC_SHARED`) or a pointer into it";

/// Names that denote dynamic shared memory inside `f`, each with the dynamic array it points
/// into: the file's and the function's dynamic declarations (mapped to themselves) plus the
/// local pointers/references initialised or assigned from them (transitively).
pub fn dynamic_names<'s>(
    file_shared: impl Iterator<Item = &'s SharedDecl>,
    f: &'s Function,
) -> HashMap<String, String> {
    // File-scope ones, unless the function declares its own variable of that name (a static
    // `__shared__ float smem[256]` or a parameter shadows `extern __shared__ float smem[]`).
    let shadowed = |n: &str| {
        f.params.iter().any(|p| p.name == n)
            || f.shared
                .iter()
                .any(|s| s.name == n && s.kind == SharedKind::Static)
            || f.decls
                .iter()
                .any(|d| d.name == n && !f.shared.iter().any(|s| s.name == n))
    };
    let mut names: HashMap<String, String> = file_shared
        .filter(|s| s.kind != SharedKind::Static && !shadowed(&s.name))
        .chain(f.shared.iter().filter(|s| s.kind != SharedKind::Static))
        .map(|s| (s.name.clone(), s.name.clone()))
        .collect();
    if names.is_empty() {
        return names;
    }
    extend_aliases(f, &mut names);
    names
}

/// Adds to `names` the local pointers and references of `f` initialised or assigned from one
/// of them (transitively).
fn extend_aliases(f: &Function, names: &mut HashMap<String, String>) {
    // Aliases: iterate to a fixpoint (declarations are in source order, so one or two passes).
    loop {
        let mut grew = false;
        for d in &f.decls {
            if names.contains_key(&d.name) || d.init.is_none() {
                continue;
            }
            let aliasing = d.is_pointer_or_ref || d.type_text.contains("auto");
            if !aliasing {
                continue;
            }
            if let Some(root) = d.init_idents.iter().find_map(|n| names.get(n)) {
                names.insert(d.name.clone(), root.clone());
                grew = true;
            }
        }
        // `float* p; ... p = smem + off;`: a pointer assigned from dynamic LDS later.
        for a in &f.assigns {
            if names.contains_key(&a.target) {
                continue;
            }
            let Some(root) = a.value_idents.iter().find_map(|n| names.get(n)).cloned() else {
                continue;
            };
            let is_pointer = f
                .decls
                .iter()
                .any(|d| d.name == a.target && d.is_pointer_or_ref)
                || f.params
                    .iter()
                    .any(|p| p.name == a.target && p.is_pointer_or_ref);
            if is_pointer {
                names.insert(a.target.clone(), root);
                grew = true;
            }
        }
        if !grew {
            break;
        }
    }
}

/// How deep a returned pointer is followed through functions that return what they call.
const MAX_RETURN_DEPTH: usize = 4;

/// Adds to `names` (see [`dynamic_names`]) the local pointers of `f` (function `fi` of the
/// analysed file) initialised or assigned from a call whose target returns a pointer into
/// dynamic shared memory, and their aliases.
fn returned_aliases(reach: &Reach<'_>, fi: usize, f: &Function, names: &mut HashMap<String, String>) {
    let mut grew = false;
    let returned = |span: Span| -> Option<String> {
        within(&f.calls, |c| c.span.start, span).iter().find_map(|c| {
            reach
                .call_targets(fi, c)
                .find_map(|j| returns_dynamic(reach, j, 0))
        })
    };
    for d in &f.decls {
        let aliasing = d.is_pointer_or_ref || d.type_text.contains("auto");
        if names.contains_key(&d.name) || !aliasing {
            continue;
        }
        if let Some(root) = d.init.and_then(returned) {
            names.insert(d.name.clone(), root);
            grew = true;
        }
    }
    for a in &f.assigns {
        if names.contains_key(&a.target) {
            continue;
        }
        let is_pointer = f
            .decls
            .iter()
            .any(|d| d.name == a.target && d.is_pointer_or_ref);
        if !is_pointer {
            continue;
        }
        if let Some(root) = returned(a.span) {
            names.insert(a.target.clone(), root);
            grew = true;
        }
    }
    if grew {
        extend_aliases(f, names);
    }
}

/// When function node `j` returns a pointer into dynamic shared memory (a `return` whose
/// expression names it, or returns what a call of such a function returns): the dynamic array.
fn returns_dynamic(reach: &Reach<'_>, j: usize, depth: usize) -> Option<String> {
    if depth > MAX_RETURN_DEPTH {
        return None;
    }
    // Asked once per node and depth in a unit: CUTLASS's epilogues return calls of calls
    // (`return make_tensor(...)`) whose overloads fan out at every level, walked again for
    // every call site (30 s for one header).
    let memo = || reach.returns_memo.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(found) = memo().get(&(j, depth)) {
        return found.clone();
    }
    let found = returns_dynamic_walk(reach, j, depth);
    memo().insert((j, depth), found.clone());
    found
}

#[cfg(test)]
thread_local! {
    /// Every [`returns_dynamic_walk`] on this thread (what a test reads).
    static RETURN_WALKS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

fn returns_dynamic_walk(reach: &Reach<'_>, j: usize, depth: usize) -> Option<String> {
    #[cfg(test)]
    RETURN_WALKS.with(|n| n.set(n.get() + 1));
    // A lambda's node: the returns of its body only.
    let (g, part) = reach.body(j);
    let returns: Vec<Span> = g
        .jumps
        .iter()
        .filter(|x| x.kind == JumpKind::Return && part.is_none_or(|p| p.contains(&x.span)))
        .map(|x| x.span)
        .collect();
    if returns.is_empty() {
        return None;
    }
    let dynamic = dynamic_names(unit_shared(&reach.unit), g);
    for r in &returns {
        if let Some(root) = within(&g.idents, |u| u.span.start, *r)
            .iter()
            .find_map(|u| dynamic.get(&u.name))
        {
            return Some(root.clone());
        }
        for c in within(&g.calls, |c| c.span.start, *r) {
            if let Some(root) = reach
                .node_call_targets(j, c)
                .find_map(|k| returns_dynamic(reach, k, depth + 1))
            {
                return Some(root);
            }
        }
    }
    None
}

/// Classes of the unit whose constructor touches dynamic shared memory (`Smem() { extern
/// __shared__ char raw[]; p = (T*)raw; }`), or one of whose methods stores a pointer into it in
/// a data member (`void bind() { ...; p = (T*)raw; }`): an object of one holds a pointer into
/// it, so every use of the object may touch it. `(class leaf name, dynamic array, where)`, computed once per
/// unit.
fn holders<'r>(reach: &'r Reach<'_>) -> &'r [(String, String, Witness)] {
    reach.memo.get_or_init(|| {
        let mut out = Vec::new();
        for (k, file) in reach.unit.files.iter().enumerate() {
            for g in &file.functions {
                let class = g
                    .class_name
                    .clone()
                    .or_else(|| g.qualified_name.rsplit_once("::").map(|x| x.0.to_string()));
                let Some(class) = class else { continue };
                let leaf = type_base(&class);
                let found = if g.name == leaf {
                    in_function(&reach.unit, g, None)
                } else {
                    stored_in_member(&reach.unit, g, leaf)
                };
                if let Some((root, span)) = found {
                    let w = Witness {
                        what: root.clone(),
                        span,
                        file: k,
                    };
                    out.push((leaf.to_string(), root, w));
                }
            }
        }
        out
    })
}

/// A method `g` of class `leaf` that stores a pointer into dynamic shared memory in a data
/// member (`void bind() { extern __shared__ char raw[]; p = (T*)raw; }`, `this->p = smem +
/// off;`): the dynamic array and the assignment.
fn stored_in_member(unit: &Unit<'_>, g: &Function, leaf: &str) -> Option<(String, Span)> {
    if g.assigns.is_empty() {
        return None;
    }
    let dynamic = dynamic_names(unit_shared(unit), g);
    if dynamic.is_empty() {
        return None;
    }
    let fields: Vec<&str> = unit
        .files
        .iter()
        .flat_map(|f| f.types.iter())
        .filter(|t| t.name == leaf)
        .flat_map(|t| t.fields.iter().map(|f| f.name.as_str()))
        .collect();
    g.assigns.iter().find_map(|a| {
        let target = a.target.trim();
        let target = target.strip_prefix("this->").unwrap_or(target);
        let local = g.decls.iter().any(|d| d.name == target)
            || g.params.iter().any(|p| p.name == target);
        if local || !fields.contains(&target) {
            return None;
        }
        a.value_idents
            .iter()
            .find_map(|n| dynamic.get(n))
            .map(|root| (root.clone(), a.span))
    })
}

/// Uses of local objects and parameters of a class whose constructor stores a pointer into
/// dynamic shared memory (see [`holders`]).
fn held_objects(cx: &Cx<'_>, sink: &mut Sink<'_>) {
    let hs = holders(cx.reach);
    if hs.is_empty() {
        return;
    }
    let f = cx.f;
    let mut objects: HashMap<&str, &(String, String, Witness)> = HashMap::new();
    for (name, ty) in f
        .decls
        .iter()
        .filter(|d| !d.is_pointer_or_ref || d.type_text.contains('&'))
        .map(|d| (d.name.as_str(), d.type_text.as_str()))
        .chain(f.params.iter().map(|p| (p.name.as_str(), p.type_text.as_str())))
    {
        let leaf = type_base(ty);
        if let Some(h) = hs.iter().find(|h| h.0 == leaf) {
            objects.insert(name, h);
        }
    }
    if objects.is_empty() {
        return;
    }
    for u in &f.idents {
        if u.access == Access::Decl {
            continue;
        }
        if let Some((class, root, w)) = objects.get(u.name.as_str()) {
            let label = format!(
                "`{}` (a `{class}`, whose constructor points it into dynamic shared memory `{root}`, {})",
                u.name,
                cx.reach.unit.at(w)
            );
            sink.push(u.span, label, Spread::All, None);
        }
    }
}

/// The dynamic-LDS evidence of one function: calls of same-file functions that touch dynamic
/// shared memory, macros that do (or that name a local pointer into it), and every use of a
/// name that denotes it.
fn evidence(cx: &Cx<'_>, sink: &mut Sink<'_>) {
    for c in &cx.f.calls {
        if !cx.is_primitive(c) {
            if let Some(label) = cx.via_call(c) {
                sink.push(c.span, label, Spread::All, None);
            }
        }
    }
    cx.via_macros(sink);
    held_objects(cx, sink);
    let mut dynamic = dynamic_names(unit_shared(&cx.reach.unit), cx.f);
    returned_aliases(cx.reach, cx.fi, cx.f, &mut dynamic);
    if dynamic.is_empty() {
        return;
    }
    for u in cx.macro_uses() {
        let ms = cx.reach.macros_named(u.name);
        // A macro that reaches dynamic shared memory itself is `Cx::via_macros`'s (above).
        if ms.is_empty() || ms.iter().any(|&m| cx.macro_witness(m).is_some()) {
            continue;
        }
        let found = ms.iter().find_map(|&m| {
            cx.reach
                .macro_names(m)
                .into_iter()
                .find_map(|n| dynamic.get(n).map(|root| (n, root)))
        });
        if let Some((name, root)) = found {
            let label = if name == root {
                format!(
                    "macro `{}`, which uses dynamic shared memory `{root}`",
                    u.name
                )
            } else {
                format!(
                    "macro `{}`, which uses `{name}`, a pointer into dynamic shared memory `{root}`",
                    u.name
                )
            };
            sink.push(u.span, label, Spread::All, None);
        }
    }
    for u in &cx.f.idents {
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
            sink.push(u.span, label, Spread::All, None);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::checked_alone;

    /// `levels` levels of 3 overloads each returning a call of the level below (resolved by
    /// argument count: every overload), the last returning `tail`, and `kernels` kernels
    /// whose loop initialises a pointer from the top level.
    fn fan(levels: usize, kernels: usize, tail: &str) -> String {
        let mut s = String::from("extern __shared__ float smem[];\n__device__ float gbuf[64];\n");
        for t in ["int", "float", "double"] {
            s += &format!("__device__ float* l0({t} a) {{ return {tail}; }}\n");
        }
        for l in 1..levels {
            for t in ["int", "float", "double"] {
                s += &format!("__device__ float* l{l}({t} a) {{ return l{}(a); }}\n", l - 1);
            }
        }
        for k in 0..kernels {
            s += &format!(
                "__global__ void k{k}(int n) {{\n  for (int i = 0; i < n; ++i) {{ float* p = l{}(i); p[0] = 1.f; }}\n}}\n",
                levels - 1
            );
        }
        s
    }

    /// What a function returns is walked once per unit (node and depth), not once per call
    /// site and path: 5 levels of 3 overloads that never reach shared memory were walked
    /// 3 + 9 + 27 + 81 + 243 times for each of the 20 kernels (CUTLASS's epilogues, whose
    /// `return make_tensor(...)` chains fan out the same way: 30 s for one header). The
    /// verdicts are those of the full walk, either way.
    #[test]
    fn a_returned_pointer_is_followed_once_per_function() {
        let (_, verdicts, walks) = checked_alone(fan(5, 20, "gbuf"), &RETURN_WALKS);
        assert_eq!(verdicts, vec![crate::Verdict::Candidate; 20]);
        assert!(walks < 200, "{walks} walks");
        let (_, verdicts, _) = checked_alone(fan(5, 20, "smem"), &RETURN_WALKS);
        assert_eq!(verdicts, vec![crate::Verdict::Blocked; 20]);
    }
}
