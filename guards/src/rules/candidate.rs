//! `candidate`: a loop that no guard blocks and that carries no unroll pragma (a hint).
//!
//! ## What it does
//! With `--hints` (or `hints = true` in `hip-unroll.toml`), lists each loop of a kernel or
//! `__device__` function that passes every blocker rule and has no `#pragma unroll`/`nounroll`,
//! with its constant trip count when the header has one. Severity `hint`: never fails a check.
//!
//! ## Why
//! These are the loops `hip-unroll unroll` and the tuner may rewrite; loops with a small constant
//! trip count are the most likely to gain from full unrolling (fewer branches, more
//! instruction-level parallelism, indices folded into addresses).
//!
//! ## Example
//! ```cpp
//! for (int i = 0; i < 8; ++i)      // candidate: trip count 8
//!     acc += a[i] * b[i];
//! ```
//!
//! ## Fix safety
//! A hint has no fix; `hip-unroll unroll` applies pragma or manual unrolling and is measured by the
//! tuner before anything is kept.

pub const ID: &str = "candidate";
