//! `barrier`: a loop that executes a barrier or another synchronisation step cannot be unrolled
//! safely by this tool.
//!
//! ## What it does
//! Blocks unrolling of a loop whose body, condition or header synchronises threads:
//! - workgroup barriers: `__syncthreads()` and its `_count/_and/_or` forms, `__barrier_sync`,
//!   `__builtin_amdgcn_s_barrier` (and the `_signal`/`_wait` split barriers),
//!   `__work_group_barrier`, the `__nvvm_bar*` builtins;
//! - warp barriers: `__syncwarp()`, `__builtin_amdgcn_wave_barrier()`;
//! - inline assembly that contains a barrier instruction: `s_barrier` (AMD GCN/CDNA/RDNA, the
//!   composable_kernel `block_sync_lds` pattern), `bar.*`, `barrier.*`, `mbarrier.*` (PTX);
//! - cooperative groups: `grid.sync()`, `block.sync()`, `this_thread_block().sync()`,
//!   `cg::sync(g)`, `cg::wait(g)` and `cg::wait_prior<N>(g)` (they end with `g.sync()`),
//!   cluster `barrier_arrive()`/`barrier_wait()`;
//! - libcu++ barriers (`cuda::barrier`, `cuda::std::barrier`, latches): `arrive_and_wait()`,
//!   `arrive()`, `wait(token)`, `wait_parity()`, `try_wait*()`, `arrive_and_drop()`,
//!   `cuda::device::barrier_arrive_tx()`;
//! - libcu++ pipelines (`cuda::pipeline`): `producer_acquire()`, `producer_commit()`,
//!   `consumer_wait*()`, `consumer_release()`, `cuda::pipeline_producer_commit(pipe, bar)`,
//!   `cuda::pipeline_consumer_wait_prior<N>(pipe)`. Every operation of a barrier or pipeline
//!   object counts, whatever its scope: the scope (`thread_scope_block`, `_thread`) is a
//!   template argument of a type the tool does not resolve;
//! - block-wide collectives of CUB, hipCUB and rocPRIM, whose bodies (in system headers) are not
//!   read: methods of `BlockReduce`, `BlockScan`, `BlockLoad`, `BlockStore`, `BlockRadixSort`,
//!   `BlockExchange`, ... (`block_reduce`, `block_scan`, ... in rocPRIM) objects and
//!   temporaries, `rocprim::syncthreads()`, and unseen functions named `block_reduce*`,
//!   `blockReduce*`, `*_block_reduce`, `block_scan*` (a visible function of such a name is judged
//!   by its body). They stay listed as `unresolved`;
//! - other libraries' barriers whose bodies are not read: static operations of barrier and
//!   pipeline classes (CUTLASS's `cutlass::arch::NamedBarrier::sync(n, id)`,
//!   `NamedBarrier::arrive`, `ClusterBarrier::wait`), CuTe's cluster barriers
//!   `cute::cluster_sync()`, `cluster_arrive()`, `cluster_arrive_relaxed()`, `cluster_wait()`,
//!   CUB's `global_barrier.Sync()`, and the wrappers `synchronize_workgroup()` (rocWMMA),
//!   `block_sync_lds()` (composable_kernel), `wave_barrier()` (rocPRIM), `CTA_SYNC()`/
//!   `WARP_SYNC()` (CUB), `gms_barrier()`, `s_barrier()` (also listed as `unresolved`).
//!
//! The synchronisation is also found when it is reached through a `__device__` function of the
//! translation unit (at any depth of calls, recursion included): a free function, a method
//! resolved by its receiver's static type (a warp reducer's `allreduce` that only shuffles does
//! not block where a block reducer's that syncs does), a member template called with the
//! `template` keyword, a static member of a class template, a functor (a variable, a temporary
//! `F{}(p)`, a struct defined in the function), the constructor or destructor of a local object
//! or temporary (`Guard g;` in the loop body), a function with an unknown specifier macro
//! (`CUTLASS_DEVICE void f()`), a kernel defined by a macro invocation; through an object-like or
//! function-like macro of the unit (macros that expand to other macros too), or through a
//! lambda called in the loop; through what a template's caller passes (in `each(F f)`, `f(i)`
//! reaches the lambda, functor or function each call of `each` passes, also for `auto`
//! parameters and a generic lambda's own parameters), a data member holding a functor, the
//! overrides of a method called through a base class, and overloaded operators of the unit's
//! classes (`c += v`, `c[i]`); through a function pointer, a table of them or a pointer to
//! member (`table[k](p)`, `(*fp)(p)`, `(o.*pm)()`), which may reach every function of the unit
//! whose address is taken (in a body or a file-scope initialiser). A call whose receiver's type
//! is unknown reaches every function of its name; a namespace alias (`namespace B = ns;`)
//! resolves to its namespace.
//!
//! Not synchronisation, so not reported: fences (`__threadfence*`, `__builtin_amdgcn_fence`)
//! order only the calling thread's own memory accesses and wait for no other thread;
//! `__builtin_amdgcn_s_waitcnt` (and `s_waitcnt` in asm) waits on the issuing wave's own memory
//! counters; `__builtin_amdgcn_sched_barrier`/`sched_group_barrier` only constrain the
//! compiler's scheduling within one wave; warp data exchanges and votes (`__shfl*_sync`,
//! `__ballot_sync`, `__any_sync`, ...) are collectives whose count every lane keeps when a
//! loop is unrolled; asynchronous copies (`cuda::memcpy_async`, `__pipeline_memcpy_async`) only
//! issue a copy, and the per-thread primitives `__pipeline_commit`/`__pipeline_wait_prior`
//! (and `cp.async.wait_group` in asm) order only the calling thread's own copies (the barrier
//! or pipeline operation that consumes a copy is reported).
//!
//! ## Why
//! Every thread of a workgroup (or warp, or pipeline) must reach the same synchronisation point
//! the same number of times and in the same order. Unrolling a loop that contains one duplicates
//! it; if the trip count is not a multiple of the unroll factor, the remainder loop executes the
//! synchronisation in a different pattern, and with a divergent trip count some waves wait
//! forever. Even when it is correct, an unrolled barrier loop rarely gains: the barrier
//! serialises the waves anyway. The automated tuner does not take that risk.
//!
//! ## Example
//! ```cpp
//! for (int k = 0; k < K; k += TILE) {   // blocked: barrier
//!     tile[ty][tx] = A[...];
//!     __syncthreads();
//!     acc += tile[ty][k];
//! }
//! ```
//! Unroll the loop inside the barrier phases instead (the inner `k` loop over the tile).
//!
//! ## Fix safety
//! No automatic fix: `hip-unroll unroll` refuses to rewrite a blocked loop unless `--force` is
//! given. `// hip-unroll: allow(barrier)` on the loop's line or the line before silences the
//! lint (`check`) only; `unroll` and the tuner apply every blocker whatever the suppressions say.

use frontend::{Call, Function, MacroDef, Span};

use crate::callgraph::{type_base, Reaches, Unit};
use crate::engine::{BlockerRule, Cx, Sink, Spread};
use crate::util::display_callee;

/// The rule's stable id.
pub const ID: &str = "barrier";

/// One line: what the rule reports (`explain --list`, SARIF).
pub const SUMMARY: &str = "the loop synchronises threads (`__syncthreads`, `__syncwarp`, asm `s_barrier`, cooperative groups, libcu++ barriers and pipelines), directly or through helpers/macros/lambdas";

/// Free-function barrier intrinsics.
const NAMES: &[&str] = &[
    "__syncthreads",
    "__syncthreads_count",
    "__syncthreads_and",
    "__syncthreads_or",
    "__barrier_sync",
    "__barrier_sync_count",
    "__hip_syncthreads",
    "__syncwarp",
    "__work_group_barrier",
    "__builtin_amdgcn_wave_barrier",
];

/// Prefixes of barrier builtins (`__builtin_amdgcn_s_barrier_signal`, `__nvvm_bar0_popc`).
const PREFIXES: &[&str] = &["__builtin_amdgcn_s_barrier", "__nvvm_bar"];

/// Methods of synchronisation objects: cooperative groups, libcu++ barriers, latches and
/// pipelines. Called on any receiver.
const METHODS: &[&str] = &[
    "sync",
    "barrier_arrive",
    "barrier_wait",
    "arrive",
    "arrive_and_wait",
    "arrive_and_drop",
    "wait",
    "wait_parity",
    "try_wait",
    "try_wait_parity",
    "try_wait_for",
    "try_wait_until",
    "producer_acquire",
    "producer_commit",
    "consumer_wait",
    "consumer_wait_for",
    "consumer_wait_until",
    "consumer_release",
];

/// Free functions of the cooperative-groups namespace that synchronise the group passed to
/// them (`cg::sync(g)`, `cg::wait(g)`, `cg::wait_prior<1>(g)`).
const CG_FREE: &[&str] = &[
    "sync",
    "wait",
    "wait_prior",
    "barrier_arrive",
    "barrier_wait",
];

/// Free functions of libcu++ that operate on a barrier or pipeline object.
const CUDA_FREE: &[&str] = &[
    "barrier_arrive_tx",
    "pipeline_producer_commit",
    "pipeline_consumer_wait_prior",
];

/// True for a barrier intrinsic or builtin called by name (also used for macro bodies).
pub fn is_barrier_name(name: &str) -> bool {
    NAMES.contains(&name) || PREFIXES.iter().any(|p| name.starts_with(p))
}

/// True when `call` synchronises: an intrinsic, a cooperative-groups or libcu++ operation.
pub fn is_barrier_call(call: &Call) -> bool {
    let name = call.callee.as_str();
    if call.receiver.is_some() {
        // `g.sync()`, `grid.sync()`, `this_grid().sync()`, `bar.arrive_and_wait()`,
        // `pipe.consumer_wait()`; also an intrinsic reached as `obj.__syncthreads()` (never).
        return METHODS.contains(&name);
    }
    if is_barrier_name(name) {
        return true;
    }
    let one_arg = call.arg_spans.len() == 1;
    match call.qualifier.as_deref() {
        Some(q) if is_cg_namespace(q) => CG_FREE.contains(&name),
        Some(q) if is_cuda_namespace(q) => CUDA_FREE.contains(&name),
        Some(_) => false,
        // `sync(g)` / `wait(g)` after `using namespace cooperative_groups`.
        None => (one_arg && CG_FREE.contains(&name)) || CUDA_FREE.contains(&name),
    }
}

fn is_cg_namespace(q: &str) -> bool {
    let q = q.trim_start_matches("::");
    q == "cg" || q.ends_with("cooperative_groups")
}

fn is_cuda_namespace(q: &str) -> bool {
    let q = q.trim_start_matches("::");
    q == "cuda" || q.starts_with("cuda::")
}

/// The block-wide collectives of CUB, hipCUB and rocPRIM (and of the kernels that write their
/// own): each synchronises the thread block (`__syncthreads()` between its phases).
const COLLECTIVES: &[&str] = &[
    "BlockReduce",
    "BlockScan",
    "BlockLoad",
    "BlockStore",
    "BlockRadixSort",
    "BlockMergeSort",
    "BlockExchange",
    "BlockHistogram",
    "BlockDiscontinuity",
    "BlockAdjacentDifference",
    "BlockShuffle",
    "BlockRunLengthDecode",
    // composable_kernel's block-wide reductions (`block_sync_lds()` between their steps).
    "PartitionedBlockwiseReduction",
    "PartitionedBlockwiseReductionWithIndex",
    "BlockwiseReduce",
    "BlockwiseReduceWithIndex",
    "BlockwiseWelford",
    "block_reduce",
    "block_scan",
    "block_load",
    "block_store",
    "block_sort",
    "block_radix_sort",
    "block_exchange",
    "block_histogram",
    "block_discontinuity",
    "block_adjacent_difference",
    "block_shuffle",
    "block_run_length_decode",
];

/// Methods of block-wide collectives that do not synchronise (the object's constructor does):
/// a run-length decoder's decode step ("calling __syncthreads() between any two calls ... is
/// not required", rocPRIM's and CUB's documentation).
const NOT_SYNCING: &[&str] = &["RunLengthDecode", "run_length_decode"];

/// True for a call of a block-wide collective whose body is not visible (the guards ask only
/// for unresolved calls): a method of a collective object (`BlockReduce(temp).Sum(x)`,
/// `scan.InclusiveSum(...)` on a `hipcub::BlockScan<...>`, `rocprim::block_reduce<...>{}`), or
/// a function named as one (`block_reduce(v)`, `blockReduceSum(v)`,
/// `ar_fusion_epilogue_block_reduce(v)`), or rocPRIM's `syncthreads()` wrapper.
pub fn is_block_collective(call: &Call) -> bool {
    // `hipcub::BlockReduce<float, 256>(temp)` -> `BlockReduce`.
    let leaf = |t: &str| COLLECTIVES.contains(&type_base(t.split(['(', '{']).next().unwrap_or(t)));
    if NOT_SYNCING.contains(&call.callee.as_str()) {
        return false;
    }
    if call.receiver.is_some() {
        return call.receiver_type.as_deref().is_some_and(leaf)
            || call.receiver.as_deref().is_some_and(leaf);
    }
    if call.qualifier.as_deref().is_some_and(leaf) {
        return true;
    }
    let name: String = call
        .callee
        .chars()
        .filter(|ch| *ch != '_')
        .map(|ch| ch.to_ascii_lowercase())
        .collect();
    // `rocprim::syncthreads()` (through any namespace alias) is the block barrier itself.
    name == "syncthreads"
        || ["blockreduce", "blockscan", "blockallreduce"]
            .iter()
            .any(|w| name.starts_with(w) || name.ends_with(w))
}

/// True for a library's barrier whose body is not visible (the guards ask only for unresolved
/// calls): a static operation of a barrier or pipeline class (CUTLASS's
/// `cutlass::arch::NamedBarrier::sync(n, id)`, `NamedBarrier::arrive(...)`,
/// `ClusterBarrier::wait(bar, phase)`), CuTe's cluster barriers (`cute::cluster_sync()`,
/// `cluster_arrive()`, `cluster_arrive_relaxed()`, `cluster_wait()`), CUB's grid barrier
/// (`global_barrier.Sync()`), and the wrappers of rocWMMA, composable_kernel, rocPRIM and CUB
/// (`synchronize_workgroup()`, `block_sync_lds()`, `wave_barrier()`, `CTA_SYNC()`).
pub fn is_library_barrier(call: &Call) -> bool {
    let name = call.callee.as_str();
    if let Some(r) = call.receiver.as_deref() {
        // CUB's `GridBarrier::Sync()` (`global_barrier.Sync()`); the lower-case methods are
        // `is_barrier_call`'s, on any receiver.
        let on_barrier = |t: &str| t.to_ascii_lowercase().contains("barrier");
        return matches!(name, "Sync" | "Wait" | "Arrive" | "ArriveAndWait")
            && (on_barrier(r) || call.receiver_type.as_deref().is_some_and(on_barrier));
    }
    // Wrappers of the barrier in other libraries: rocWMMA's `synchronize_workgroup()`,
    // composable_kernel's `block_sync_lds()` (`s_waitcnt` + `s_barrier` in assembly), rocPRIM's
    // `wave_barrier()`, CUB's `CTA_SYNC()`/`WARP_SYNC()`, a grid barrier `gms_barrier()`, a
    // function named `s_barrier()`.
    if matches!(
        name,
        "synchronize_workgroup"
            | "block_sync_lds"
            | "block_sync_lds_direct_load"
            | "wave_barrier"
            | "gms_barrier"
            | "s_barrier"
            | "CTA_SYNC"
            | "CTA_SYNC_AND"
            | "CTA_SYNC_OR"
            | "WARP_SYNC"
    ) {
        return true;
    }
    if let Some(q) = call.qualifier.as_deref() {
        let class = type_base(q).to_ascii_lowercase();
        if METHODS.contains(&name) && (class.contains("barrier") || class.contains("pipeline")) {
            return true;
        }
    }
    matches!(
        name,
        "cluster_sync" | "cluster_arrive" | "cluster_arrive_relaxed" | "cluster_wait"
    )
}

/// A call that nothing visible answers and that synchronises by what it names: a block-wide
/// collective ([`is_block_collective`]) or a CUTLASS/CuTe barrier ([`is_library_barrier`]).
pub fn is_unseen_barrier(call: &Call) -> bool {
    is_block_collective(call) || is_library_barrier(call)
}

/// True for a name called in a macro body that reaches a synchronisation (methods included:
/// the lexer cannot tell `g.sync()` from `sync(g)` there).
pub fn is_barrier_macro_call(name: &str) -> bool {
    is_barrier_name(name) || METHODS.contains(&name) || CUDA_FREE.contains(&name)
}

/// The barrier instruction in an inline-assembly template, if any: `s_barrier` (AMD, also
/// `s_barrier_signal`/`s_barrier_wait`), `bar.*`, `barrier.*`, `mbarrier.*` (PTX).
pub fn asm_barrier(template: &str) -> Option<String> {
    // Escapes are kept as written: `\n`, `\t` separate instructions.
    let t = template.replace("\\n", "\n").replace("\\t", "\t");
    let b = t.as_bytes();
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'.' || c == b'%';
    let mut i = 0;
    while i < b.len() {
        if !word(b[i]) {
            i += 1;
            continue;
        }
        let s = i;
        while i < b.len() && word(b[i]) {
            i += 1;
        }
        let w = &t[s..i];
        let hit = w == "s_barrier"
            || w.starts_with("s_barrier_")
            || ["bar.", "barrier.", "mbarrier."]
                .iter()
                .any(|p| w.starts_with(p) && w.len() > p.len());
        if hit {
            return Some(w.to_string());
        }
    }
    None
}

/// The rule's registry entry. How the barrier travels: a function that calls a barrier or
/// holds one in inline assembly, a macro whose replacement list names one (methods included)
/// or holds one in assembly.
pub(crate) const BLOCKER: BlockerRule = BlockerRule {
    reaches: Reaches {
        function: Some(in_function),
        macro_def: in_macro,
        call: Some(is_barrier_call),
        macro_call: Some(is_barrier_macro_call),
        asm: Some(asm_barrier),
        unseen: Some(is_unseen_barrier),
    },
    evidence,
};

fn in_function(_: &Unit<'_>, f: &Function, part: Option<Span>) -> Option<(String, Span)> {
    let inside = |s: &Span| part.is_none_or(|p| p.contains(s));
    f.calls
        .iter()
        .find(|c| inside(&c.span) && is_barrier_call(c))
        .map(|c| (c.callee.clone(), c.span))
        .or_else(|| {
            f.asm.iter().filter(|a| inside(&a.span)).find_map(|a| {
                asm_barrier(&a.template).map(|w| (format!("asm(\"{w}\")"), a.span))
            })
        })
}

fn in_macro(_: &Unit<'_>, m: &MacroDef) -> Option<(String, Span)> {
    if let Some(w) = m.asm.as_deref().and_then(asm_barrier) {
        return Some((format!("asm(\"{w}\")"), m.span));
    }
    m.calls
        .iter()
        .chain(m.idents.iter())
        .find(|name| {
            is_barrier_name(name) || (m.calls.contains(name) && is_barrier_macro_call(name))
        })
        .map(|name| (name.clone(), m.span))
}

/// The barrier evidence of one function: barrier calls, calls of functions of the unit (and of
/// local callables) that reach one, inline assembly, lambdas and macros that synchronise. A
/// call another blocker recognises by itself (an atomic) is not looked through.
fn evidence(cx: &Cx<'_>, sink: &mut Sink<'_>) {
    let unresolved = cx.reach.unresolved_calls(cx.fi);
    for (ci, c) in cx.f.calls.iter().enumerate() {
        if is_barrier_call(c) {
            sink.push(
                c.span,
                format!("`{}()`", display_callee(c)),
                Spread::All,
                None,
            );
        } else if unresolved.binary_search(&ci).is_ok() && is_unseen_barrier(c) {
            let what = if is_block_collective(c) {
                "a block-wide collective: it synchronises the thread block"
            } else {
                "a library's barrier"
            };
            sink.push(
                c.span,
                format!(
                    "`{}()` ({what}; no body of it is visible here)",
                    display_callee(c)
                ),
                Spread::All,
                None,
            );
        } else if !cx.is_primitive(c) {
            if let Some(label) = cx.via_call(c) {
                sink.push(c.span, label, Spread::All, None);
            }
        }
    }
    for a in &cx.f.asm {
        if let Some(w) = asm_barrier(&a.template) {
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
        assert_eq!(
            asm_barrier("s_waitcnt lgkmcnt(0)\\n s_barrier").as_deref(),
            Some("s_barrier")
        );
        assert_eq!(
            asm_barrier("s_waitcnt lgkmcnt(0)\\ns_barrier").as_deref(),
            Some("s_barrier")
        );
        assert_eq!(asm_barrier("bar.sync 0;").as_deref(), Some("bar.sync"));
        assert_eq!(
            asm_barrier("barrier.sync.aligned 1, 64;").as_deref(),
            Some("barrier.sync.aligned")
        );
        assert_eq!(
            asm_barrier("mbarrier.try_wait.parity.shared.b64 p, [%0], %1;").as_deref(),
            Some("mbarrier.try_wait.parity.shared.b64")
        );
        assert_eq!(
            asm_barrier("s_barrier_signal -1").as_deref(),
            Some("s_barrier_signal")
        );
        for clean in [
            "s_waitcnt vmcnt(0)",
            "v_add_f32 %0, %1, %2",
            "cp.async.wait_group 0;",
            "membar.cta;",
            "fence.acq_rel.gpu;",
            "s_nop 0 // no s_barrierx here",
            "ld.shared.u32 %0, [foo_bar.x];",
        ] {
            assert_eq!(asm_barrier(clean), None, "{clean}");
        }
    }
}
