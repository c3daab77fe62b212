//! Profiler backend: runs rocprofv3 (or legacy rocprof), reads every output generation
//! (rocpd SQLite, rocprofv3 CSV, legacy rocprof results.csv, rocprof-compute CSV), and turns the
//! dispatches into per-kernel statistics, a roofline, a critical path and a Perfetto trace.
//!
//! Formats read (layouts taken from AMD's sources, ROCm/rocm-systems at 1b1610fc2b2a, Aug 2025,
//! and ROCm/rocprofiler-sdk at 8ab1ed78d8c2, Oct 2024):
//! - rocpd SQLite, schema 3.x (`rocpd_tables.sql`/`rocpd_views.sql`, rocprofv3 1.0+ / ROCm 7):
//!   UUID-suffixed tables or plain views, several databases merged ([`rocpd`]);
//! - rocprofv3 kernel trace CSV, both generations: with `Stream_Id`, `LDS_Block_Size`,
//!   `VGPR_Count` (generateCSV.cpp since 2025) and without (`Private_Segment_Size`,
//!   `Group_Segment_Size`, as in the rocprofiler-sdk docs of ROCm 6.2/6.3); kernel stats,
//!   counter collection and agent info CSVs;
//! - legacy rocprof v1 `results.csv` (tblextr.py) and the rocprofv2 kernel CSV (plugin/file);
//! - rocprof-compute `timestamps.csv`, `pmc_perf.csv` (instance `X[i]` and `X_sum` columns),
//!   `sysinfo.csv`.
//!
//! Architecture invariant: only this crate knows rocprofv3's command line, its file layouts and
//! SQLite. Everything it hands out is plain data ([`Profile`], [`stats::KernelStats`], ...).

pub mod analyze;
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
