//! `barrier`: a loop that executes a workgroup barrier cannot be unrolled safely by this tool.
//!
//! ## What it does
//! Blocks unrolling of a loop whose body, condition or header executes a barrier:
//! `__syncthreads()` and its `__syncthreads_count/_and/_or` forms, `__builtin_amdgcn_s_barrier`
//! (and the `_signal`/`_wait` split barriers), and cooperative-groups synchronisation
//! (`grid.sync()`, `block.sync()`, `cg::sync(block)`, `this_grid().sync()`). The barrier is also
//! found when it is reached through a `__device__` function defined in the same file (at any
//! depth of calls, recursion included) or through an object-like or function-like macro of the
//! same file (macros that expand to other macros too).
//!
//! ## Why
//! Every work-item of a workgroup must reach the same barrier the same number of times. Unrolling
//! a loop that contains a barrier duplicates it; if the trip count is not a multiple of the
//! unroll factor, the remainder loop executes barriers in a different pattern, and with a
//! divergent trip count some waves wait forever. Even when it is correct, an unrolled barrier
//! loop rarely gains: the barrier serialises the waves anyway.
//!
//! ## Example
//! ```cpp
//! #pragma unroll 4            // unroll-blocked: barrier
//! for (int k = 0; k < K; k += TILE) {
//!     tile[ty][tx] = A[...];
//!     __syncthreads();
//!     acc += tile[ty][k];
//! }
//! ```
//! Unroll the loop inside the barrier phases instead (the inner `k` loop over the tile), or
//! remove the pragma.
//!
//! ## Fix safety
//! No automatic fix: `hip-unroll unroll` refuses to rewrite a blocked loop. Silence a reviewed
//! case with `// hip-unroll: allow(barrier)` on the loop's line or the line before.

use frontend::Call;

pub const ID: &str = "barrier";

/// Free-function barrier intrinsics.
const NAMES: &[&str] = &[
    "__syncthreads",
    "__syncthreads_count",
    "__syncthreads_and",
    "__syncthreads_or",
    "__barrier_sync",
    "__hip_syncthreads",
];

/// True for a barrier intrinsic or builtin called by name (also used for macro bodies).
pub fn is_barrier_name(name: &str) -> bool {
    NAMES.contains(&name) || name.starts_with("__builtin_amdgcn_s_barrier")
}

/// True when `call` is a barrier: an intrinsic, or a cooperative-groups `sync`.
pub fn is_barrier_call(call: &Call) -> bool {
    if is_barrier_name(&call.callee) {
        return true;
    }
    if call.callee == "sync" {
        if call.receiver.is_some() {
            return true; // `g.sync()`, `grid.sync()`, `this_grid().sync()`
        }
        return match call.qualifier.as_deref() {
            Some(q) => is_cg_namespace(q),     // `cg::sync(g)`
            None => call.arg_spans.len() == 1, // `sync(g)` after `using namespace cooperative_groups`
        };
    }
    call.callee == "barrier_wait" && call.receiver.is_some()
}

fn is_cg_namespace(q: &str) -> bool {
    q == "cg" || q.ends_with("cooperative_groups")
}

/// True for a name in a macro body that reaches a barrier (`sync` is a group method there).
pub fn is_barrier_macro_call(name: &str) -> bool {
    is_barrier_name(name) || name == "sync"
}
