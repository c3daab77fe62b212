//! runner: the kernel runner behind `hip-unroll bench`. A launch spec ([`spec`]) names a kernel,
//! its launch and its arguments; [`build`] compiles it through `codeobj`'s cache (hipcc for
//! AMD; nvcc to PTX for NVIDIA, or clang-19 with the [`prelude`] where there is no nvcc) and
//! checks the spec against the real parameter list ([`signature`]); [`session`] loads it on a
//! GPU found at run time ([`hip`], [`cuda`]), compiled for that GPU's architecture, times
//! launches with GPU events and compares outputs ([`compare`], [`stats`]); [`measure`] is
//! `bench`'s warm-up and interleaved A B A B loop and [`report`] its report and renderers.
//! [`cubin`] (`codeobj::cubin`, re-exported) reads NVIDIA cubins for the tuner's gates.
//!
//! No GPU library is linked: libamdhip64 and libcuda are opened when a device is asked for,
//! so the binary runs, and fails with one clear line, on machines with neither.

pub mod build;
pub mod compare;
pub use codeobj::cubin;
pub mod cuda;
pub mod device;
pub mod digest;
pub mod elem;
pub mod error;
pub mod expr;
pub mod hip;
pub mod measure;
pub mod prelude;
pub mod ptx;
pub mod report;
pub mod session;
pub mod signature;
pub mod sim;
pub mod spec;
pub mod stats;

pub use error::RunnerError;
pub use session::{Backend, Options, Session};
pub use spec::Spec;
