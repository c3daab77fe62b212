//! guards: decides, for every loop of the IR, whether unrolling it is safe, and why not.
//!
//! One file per rule under `rules/`; [`rules::REGISTRY`] lists them. Rules return data
//! (violations); renderers in the binary print them.

pub mod report;

pub use report::*;
