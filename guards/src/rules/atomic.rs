//! `atomic`: a loop that performs atomic read-modify-write operations is not unrolled.
//!
//! ## What it does
//! Blocks unrolling of a loop whose body or header (the condition included: `while
//! (atomicCAS(...) != old)`) calls an atomic: `atomicAdd`, `atomicCAS`, `atomicExch`, ... and
//! their scoped `_system`/`_block` forms, `unsafeAtomicAdd`/`safeAtomicAdd`, the `__hip_atomic_*`,
//! `__atomic_*`, `__c11_atomic_*`, `__nv_atomic_*` (CUDA 12.8), `__nvvm_atom_*` and `__sync_*`
//! builtins, `__builtin_amdgcn_*atomic*`, and
//! `fetch_*`/`compare_exchange_*` methods of atomic objects, and atomics written in inline
//! assembly: PTX `atom.*`, `red.*`, `multimem.red.*`, `cp.reduce.async.*`; AMDGPU
//! `global_atomic_*`, `flat_atomic_*`, `buffer_atomic_*`, `image_atomic_*`, `s_atomic_*`,
//! `s_buffer_atomic_*` and the LDS atomics `ds_add_*`, `ds_sub_*`, `ds_rsub_*`, `ds_inc_*`,
//! `ds_dec_*`, `ds_min_*`, `ds_max_*`, `ds_and_*`, `ds_or_*`, `ds_xor_*`, `ds_mskor_*`,
//! `ds_cmpst_*`, `ds_cmpswap*`, `ds_wrxchg*`, `ds_condxchg*`, `ds_pk_add_*`, `ds_append`,
//! `ds_consume` (plain `ds_read*`/`ds_write*`/`ds_swizzle`/`ds_bpermute` are not atomics).
//! Atomics reached through `__device__` functions, methods, constructors and destructors, or
//! macros of the translation unit count too (an asm atomic inside a macro as well), and so do
//! atomics whose bodies are not visible, known by their names (PyTorch's `gpuAtomicAdd`, an
//! intrinsic declaration `llvm_amdgcn_raw_buffer_atomic_add_fp32`: still listed as
//! `unresolved`), and
//! those a function pointer, a table of them or a pointer to member may reach (`table[k](p)`,
//! `(*fp)(p)`: every function of the unit whose address is taken, file-scope initialisers
//! included).
//!
//! ## Why
//! Atomics are ordered, contended memory operations: unrolling does not remove them or let the
//! compiler batch them, it only grows the code. Loops around atomics are often retry loops
//! (CAS loops) whose trip count depends on other threads; unrolling those changes nothing but
//! register pressure, and a wrong remainder handling can double an update.
//!
//! ## Example
//! ```cpp
//! #pragma unroll             // unroll-blocked: atomic
//! for (int i = 0; i < n; ++i)
//!     atomicAdd(&hist[bin(in[i])], 1);
//! ```
//! Accumulate privately (registers or LDS) inside the loop and publish once after it.
//!
//! ## Fix safety
//! No automatic fix: `hip-unroll unroll` refuses the loop unless `--force` is given.
//! `// hip-unroll: allow(atomic)` silences the lint (`check`) only; `unroll` and the tuner apply
//! every blocker whatever the suppressions, `--select` or `--ignore` say.

use frontend::{Call, CallForm, Function, MacroDef, Span};

use crate::callgraph::{type_base, Reaches, Unit};
use crate::engine::{BlockerRule, Cx, Sink, Spread};
use crate::rules::barrier::is_barrier_call;
use crate::util::display_callee;

/// The rule's registry entry. How the atomic travels: a function that calls one (a barrier
/// call is the barrier rule's), a macro whose replacement list names one.
pub(crate) const BLOCKER: BlockerRule = BlockerRule {
    reaches: Reaches {
        function: Some(in_function),
        macro_def: in_macro,
        call: Some(is_atomic_call),
        macro_call: None,
        asm: Some(asm_atomic),
        unseen: Some(is_unseen_atomic),
    },
    evidence,
};

fn in_function(_: &Unit<'_>, f: &Function, part: Option<Span>) -> Option<(String, Span)> {
    let inside = |s: &Span| part.is_none_or(|p| p.contains(s));
    f.calls
        .iter()
        .find(|c| inside(&c.span) && is_atomic_call(c) && !is_barrier_call(c))
        .map(|c| (c.callee.clone(), c.span))
        .or_else(|| {
            f.asm.iter().filter(|a| inside(&a.span)).find_map(|a| {
                asm_atomic(&a.template).map(|w| (format!("asm(\"{w}\")"), a.span))
            })
        })
}

fn in_macro(_: &Unit<'_>, m: &MacroDef) -> Option<(String, Span)> {
    if let Some(w) = m.asm.as_deref().and_then(asm_atomic) {
        return Some((format!("asm(\"{w}\")"), m.span));
    }
    m.calls
        .iter()
        .chain(m.idents.iter())
        .find(|name| is_atomic_name(name))
        .map(|name| (name.clone(), m.span))
}

/// The rule's stable id.
pub const ID: &str = "atomic";

/// One line: what the rule reports (`explain --list`, SARIF).
pub const SUMMARY: &str =
    "the loop (or its condition) performs atomic operations, directly or through helpers/macros";

/// True for the name of an atomic function, builtin or intrinsic (also used for macro bodies).
pub fn is_atomic_name(name: &str) -> bool {
    if let Some(rest) = name.strip_prefix("atomic") {
        // atomicAdd, atomicAdd_system, atomic_fetch_add; not `atomically_ok`.
        return rest.starts_with(|c: char| c.is_ascii_uppercase()) || rest.starts_with('_');
    }
    name.starts_with("unsafeAtomic")
        || name.starts_with("safeAtomic")
        || name.starts_with("__hip_atomic")
        || name.starts_with("__atomic_")
        || name.starts_with("__c11_atomic_")
        || name.starts_with("__nv_atomic_")
        || name.starts_with("__nvvm_atom_")
        || name.starts_with("__sync_fetch_and_")
        || name.starts_with("__sync_add_and_fetch")
        || name.starts_with("__sync_sub_and_fetch")
        || name.starts_with("__sync_val_compare_and_swap")
        || name.starts_with("__sync_bool_compare_and_swap")
        || name.starts_with("__sync_lock_test_and_set")
        || (name.starts_with("__builtin_amdgcn_") && name.contains("atomic"))
}

/// Prefixes of AMDGPU atomic instructions.
const AMD_ATOMICS: &[&str] = &[
    "global_atomic_",
    "flat_atomic_",
    "buffer_atomic_",
    "image_atomic_",
    "s_atomic_",
    "s_buffer_atomic_",
    "ds_add_",
    "ds_sub_",
    "ds_rsub_",
    "ds_inc_",
    "ds_dec_",
    "ds_min_",
    "ds_max_",
    "ds_and_",
    "ds_or_",
    "ds_xor_",
    "ds_mskor_",
    "ds_cmpst_",
    "ds_cmpswap",
    "ds_wrxchg",
    "ds_condxchg",
    "ds_pk_add_",
];

/// Prefixes of PTX atomic instructions (`atom.global.add.u32`, `red.global.add.f32`).
const PTX_ATOMICS: &[&str] = &["atom.", "red.", "multimem.red.", "cp.reduce.async."];

/// The atomic instruction in an inline-assembly template, if any (see the rule's
/// documentation for the instructions).
pub fn asm_atomic(template: &str) -> Option<String> {
    // Escapes are kept as written: `\n`, `\t` separate instructions.
    let t = template.replace("\\n", "\n").replace("\\t", "\t");
    let b = t.as_bytes();
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'.';
    let mut i = 0;
    while i < b.len() {
        if !word(b[i]) || (i > 0 && (word(b[i - 1]) || b[i - 1] == b'%')) {
            i += 1;
            continue;
        }
        let s = i;
        while i < b.len() && word(b[i]) {
            i += 1;
        }
        let w = &t[s..i];
        let amd = AMD_ATOMICS.iter().any(|p| w.starts_with(p) && w.len() > p.len())
            || w == "ds_append"
            || w == "ds_consume";
        let ptx = PTX_ATOMICS.iter().any(|p| w.starts_with(p) && w.len() > p.len());
        if amd || ptx {
            return Some(w.to_string());
        }
    }
    None
}

/// True when `call` is an atomic operation.
pub fn is_atomic_call(call: &Call) -> bool {
    if call.form == CallForm::Operator {
        // `a += 1`, `++a` on a `cuda::atomic`, `cuda::atomic_ref`, `std::atomic`: read-modify-
        // write operators of atomic objects.
        let leaf = type_base(call.receiver_type.as_deref().unwrap_or_default());
        let rmw = matches!(
            call.callee.as_str(),
            "operator+=" | "operator-=" | "operator&=" | "operator|=" | "operator^=" | "operator++"
                | "operator--"
        );
        return rmw && matches!(leaf, "atomic" | "atomic_ref");
    }
    if call.receiver.is_none() {
        return is_atomic_name(&call.callee);
    }
    // A method: only the operations of atomic objects (`a.fetch_add(1)`), not any method whose
    // name starts with "atomic" (`layout.atomic_local_m()` is a query).
    call.callee.starts_with("fetch_")
        || call.callee.starts_with("compare_exchange")
        || call.callee == "exchange"
}

/// True for an atomic whose body is not visible (the guards ask only for unresolved calls),
/// known by its name: a wrapper such as PyTorch's `gpuAtomicAdd` or `fastAtomicAdd` (`Atomic`
/// in a camel-case name), or a name with an `atomic` part (`llvm_amdgcn_raw_buffer_atomic_add`,
/// `atomic_add_g`; not `nonatomic_add`). Methods are left to [`is_atomic_call`].
pub fn is_unseen_atomic(call: &Call) -> bool {
    if call.receiver.is_some() {
        return false;
    }
    let name = call.callee.as_str();
    name.contains("Atomic")
        || name
            .split('_')
            .any(|part| part.eq_ignore_ascii_case("atomic"))
}

/// The atomic evidence of one function: atomic calls (a barrier call is the barrier rule's),
/// calls of functions of the unit (and of local callables) that reach one, lambdas and macros that do.
fn evidence(cx: &Cx<'_>, sink: &mut Sink<'_>) {
    let unresolved = cx.reach.unresolved_calls(cx.fi);
    for (ci, c) in cx.f.calls.iter().enumerate() {
        if is_barrier_call(c) {
            continue;
        }
        if is_atomic_call(c) {
            sink.push(
                c.span,
                format!("`{}()`", display_callee(c)),
                Spread::All,
                None,
            );
        } else if unresolved.binary_search(&ci).is_ok() && is_unseen_atomic(c) {
            sink.push(
                c.span,
                format!(
                    "`{}()` (an atomic by its name; no body of it is visible here)",
                    display_callee(c)
                ),
                Spread::All,
                None,
            );
        } else if let Some(label) = cx.via_call(c) {
            sink.push(c.span, label, Spread::All, None);
        }
    }
    for a in &cx.f.asm {
        if let Some(w) = asm_atomic(&a.template) {
            sink.push(a.span, format!("`asm(\"{w}\")`"), Spread::All, None);
        }
    }
    cx.via_lambdas(sink);
    cx.via_macros(sink);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn asm_templates() {
        for (t, w) in [
            ("red.global.add.f32 [%0], %1;", "red.global.add.f32"),
            ("atom.shared.cas.b32 %0, [%1], %2, %3;", "atom.shared.cas.b32"),
            ("global_atomic_add_f32 %0, %1, off", "global_atomic_add_f32"),
            ("flat_atomic_cmpswap v0, v[1:2], v[3:4]", "flat_atomic_cmpswap"),
            ("buffer_atomic_add %0, %1, 0 offen", "buffer_atomic_add"),
            ("s_waitcnt lgkmcnt(0)\\n ds_add_u32 %0, %1", "ds_add_u32"),
            ("ds_cmpst_rtn_b32 %0, %1, %2, %3", "ds_cmpst_rtn_b32"),
            ("ds_append %0", "ds_append"),
        ] {
            assert_eq!(asm_atomic(t).as_deref(), Some(w), "{t}");
        }
        for clean in [
            "ds_read_b32 %0, %1",
            "ds_write_b128 %0, %1",
            "ds_bpermute_b32 %0, %1, %2",
            "ds_swizzle_b32 %0, %1 offset:0x1f",
            "redux.sync.add.s32 %0, %1, 0xffffffff;",
            "ld.global.red_count.u32 %0, [%1];",
            "mov.u32 %0, %%red.x;",
            "v_add_f32 %0, %1, %2",
            "global_load_dword %0, %1, off",
        ] {
            assert_eq!(asm_atomic(clean), None, "{clean}");
        }
    }
}
