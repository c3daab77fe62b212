//! Profiler backend: runs rocprofv3 (or legacy rocprof), reads every output generation
//! (rocpd SQLite, rocprofv3 CSV, legacy rocprof results.csv, rocprof-compute CSV), and turns the
//! dispatches into per-kernel statistics, a roofline, a critical path and a Perfetto trace.
//!
//! Architecture invariant: only this crate knows rocprofv3's command line, its file layouts and
//! SQLite. Everything it hands out is plain data ([`Profile`], [`stats::KernelStats`], ...).

pub mod critical;
pub mod csvread;
pub mod error;
pub mod load;
pub mod model;
pub mod names;
pub mod report;
pub mod rocpd;
pub mod roofline;
pub mod run;
pub mod stats;
pub mod trace;

pub use error::Error;
pub use load::load;
pub use model::{AgentInfo, Dispatch, KernelInfo, PrecomputedStats, Profile, Source};
pub use regex;
