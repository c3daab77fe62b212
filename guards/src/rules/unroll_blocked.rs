//! `unroll-blocked`: an existing `#pragma unroll` asks to unroll a loop that a guard blocks.
//!
//! ## What it does
//! Reports a `#pragma unroll` (bare, `unroll N` with N > 1, `unroll(N)`, `_Pragma("unroll")`) on a
//! loop of a kernel or `__device__` function that one of the blocker rules (`barrier`, `atomic`,
//! `dynamic-lds`, `early-exit`) blocks. The message names each blocker with the line of its
//! first occurrence; the related locations point at them. `#pragma unroll 1` and
//! `#pragma nounroll` are never reported.
//!
//! ## Why
//! The pragma claims the loop is worth unrolling and safe to unroll; the guard found a reason it
//! is not (see `hip-unroll explain barrier` and the others). Either the pragma is stale or the
//! loop changed since it was written.
//!
//! ## Example
//! ```cpp
//! #pragma unroll 4                 // unroll-blocked: barrier (`__syncthreads()` at line 12)
//! for (int t = 0; t < tiles; ++t) {
//!     load_tile(t);
//!     __syncthreads();             // line 12
//! }
//! ```
//! Remove the pragma, write `#pragma unroll 1`, or restructure the loop.
//!
//! ## Fix safety
//! No automatic fix (removing the pragma changes code generation). Suppress a reviewed case
//! with `// hip-unroll: allow(unroll-blocked)` on the pragma's line or the line before, or turn
//! off the blocker itself with `allow(barrier)`.

pub const ID: &str = "unroll-blocked";
