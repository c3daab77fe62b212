//! replay: one kernel dispatch captured from a running application (its code object, kernel
//! arguments and every device allocation it could see) and replayed alone, at the same
//! addresses, with the original code object or a variant's, on identical memory.
//!
//! - [`snapshot`]: the on-disk format (rocm-perf-lab's layout, versioned), read with every
//!   consistency check and written atomically; [`hsaco`] and [`variant`] find the captured
//!   kernel in code objects and check a variant's signature against it.
//! - [`plan`], [`premap`], [`aql`], [`diff`], [`stats`]: the pure parts of a replay
//!   (reservations, AQL packets, output comparison, statistics), tested without a GPU.
//! - [`ffi`], [`table`], [`runtime`], [`device`]: the HSA ABI, the API-table layouts capture
//!   patches, the runtime loaded at run time, and the replay session ([`device::Replayer`]).
//! - [`launch`]: `hip-unroll capture` (the tool library itself is the `hip-unroll-capture`
//!   crate beside this one).
//!
//! A measurement backend (the tuner's `Backend`) is a thin adapter over [`device::Replayer`]:
//! prepare = compile the variant (codeobj's cache), [`variant::variant`], [`device::Replayer::load`]
//! and [`device::Replayer::compare`] with the baseline; sample = [`device::Replayer::restore`]
//! then [`device::Replayer::run`].

pub mod aql;
pub mod backend;
pub mod device;
pub mod diff;
pub mod ffi;
pub mod hsaco;
pub mod launch;
pub mod plan;
pub mod premap;
pub mod run;
pub mod runtime;
pub mod snapshot;
pub mod stats;
pub mod table;
pub mod variant;

pub use device::{DeviceError, Options, Replayer};
pub use snapshot::{Snapshot, SnapshotError};
