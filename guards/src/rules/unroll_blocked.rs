//! `unroll-blocked`: an existing `#pragma unroll` asks to unroll a loop that a guard blocks.
//!
//! ## What it does
//! Reports a `#pragma unroll` (bare, `unroll N` with N > 1, `unroll(N)`, `_Pragma("unroll")`,
//! `#pragma clang loop unroll_count(N)`) on a loop of a kernel or `__device__` function that one
//! of the blocker rules (`barrier`, `atomic`, `dynamic-lds`, `early-exit`) blocks. The message
//! names each blocker with the line of its first occurrence; the related locations point at
//! them. `#pragma unroll 1` and `#pragma nounroll` are never reported.
//!
//! A **hint** by default: a compiler pragma over a loop with a barrier or shared memory is
//! correct code (the compiler unrolls it faithfully; experts write it on constant-trip tile
//! loops). The guards are the policy of hip-unroll's automated rewrites, not a defect in the
//! user's code, so this finding does not fail `check`. Raise it where a team wants every such
//! pragma reviewed:
//! ```toml
//! [check.severity]
//! unroll-blocked = "warning"   # or "error"
//! ```
//!
//! ## Why
//! The pragma unrolls a loop that hip-unroll itself would never rewrite (see
//! `hip-unroll explain barrier` and the others): worth a look when the loop changed since the
//! pragma was written, and a reminder that the tuner leaves that loop alone.
//!
//! ## Example
//! ```cpp
//! #pragma unroll 4                 // unroll-blocked: barrier (`__syncthreads()` at line 12)
//! for (int t = 0; t < tiles; ++t) {
//!     load_tile(t);
//!     __syncthreads();             // line 12
//! }
//! ```
//! Keep the pragma if the unrolled barrier loop is intended, or write `#pragma unroll 1`.
//!
//! ## Fix safety
//! No automatic fix (removing the pragma changes code generation). Suppress a reviewed case
//! with `// hip-unroll: allow(unroll-blocked)` on the pragma's line or the line before.

pub const ID: &str = "unroll-blocked";
