//! Measurement backends: the one seam between the search and whatever produces a figure.
//!
//! The search ([`crate::search`]) only ever calls the [`Backend`] trait; it never knows whether
//! the figure is the wall time of the user's program (`command`), GPU time read from rocprofv3
//! (`rocprofv3`), a kernel runner (`bench`) or a replayed dispatch (`replay`).
//!
//! ## Contract for implementers
//! - A **slot** ([`Slot`]) is a private working copy of the user's tree. Before [`Backend::prepare`]
//!   is called, the slot already holds the variant's sources (or the baseline's). Everything a
//!   backend writes must stay inside the slot directory (build outputs, profiler output,
//!   captured buffers). Several slots exist; the search prepares different slots **in
//!   parallel** (one thread per slot), so `prepare` must be safe to call concurrently on
//!   different slots, but never concurrently on the same slot.
//! - [`Backend::preflight`] runs once, before anything is built: check what the backend needs
//!   (a tool on PATH, a GPU, a capture) and return [`Error::Environment`] with one line if it is
//!   missing. The CLI exits 2 with that line.
//! - [`Backend::prepare`] makes the slot ready to be sampled: build it, run it once and check its
//!   outputs. `baseline` is `None` when the slot is the baseline itself (the reference: if it
//!   fails the whole tune stops, exit 2) and `Some(prepared baseline)` for a variant, so a
//!   backend that compares outputs (bench, replay) can compare with the baseline's. Return
//!   `Ok(Err(Failure::Build(..)))` when the build fails, `Ok(Err(Failure::Check(..)))` when
//!   the run fails or the outputs are wrong: those are statuses of the variant, not errors.
//!   Return `Err(Error)` only for what stops the whole tune (environment, interruption).
//! - [`Backend::sample`] takes **one** timed sample of a prepared slot: one figure, lower is
//!   better, in [`Backend::unit`]. The search calls it alternately on the baseline's and the
//!   variant's slot (A B, B A, ...), never two at once. Unless [`Backend::overlaps`] says so,
//!   never while anything is being prepared either, so a sample may use the whole machine. A
//!   sample that fails (the program crashed on its 7th run) is `Ok(Err(Failure::Check(..)))`.
//! - [`Backend::overlaps`]: `true` lets the lane prepare its next task (working copies, gates,
//!   `prepare` on other slots) while a sample is taken. Only for a figure the CPU's work does
//!   not disturb (GPU time); such a backend keeps its own runs on the device (a check run in
//!   `prepare`) from sharing the device with a sample (`bench` and `replay` run both on one
//!   session thread, `rocprofv3` takes a lock).
//! - [`Backend::kernels`] may report, from a prepared baseline, which kernels ran and their
//!   share of the critical path (the search ranks loops by it and reports loops of kernels
//!   that never ran as `not-run`); backends without that knowledge return `None`.
//! - Objectives: a backend with several (the `bench` backend's launch specs, one per kernel)
//!   reads [`Slot::spec`] in `prepare` and `sample`: a slot is prepared for one spec, and
//!   sampled for it; the search keeps the specs' baselines and comparisons apart. Backends with
//!   one objective ignore it.
//! - The stop flag ([`Slot::stop`]) is set on Ctrl-C: long work must poll it (the shell runner
//!   in [`crate::shell`] does) and return [`Error::Interrupted`].
//! - Plugging in: implement the trait, add a kind to [`spec::BackendSpec`] (plain data, so a
//!   Slurm worker can build it too) and to [`spec::AnyBackend`], resolve it in
//!   [`crate::setup`], and add its `--backend` value in `src/cli/tune.rs`. A complete in-process implementer is the `Fake`
//!   backend of `tuner/tests/search.rs`; [`command`] shows how to run user commands in a slot
//!   (`run_cmd`, `build_and_check`).

pub mod bench;
pub mod command;
pub mod replay;
pub mod rocprof;
pub mod spec;
pub mod worker;

use crate::error::Error;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// Where a backend works: one working copy.
#[derive(Debug, Clone, Copy)]
pub struct Slot<'a> {
    /// The slot's number (0 is the first baseline).
    pub index: usize,
    /// The working copy: commands run here.
    pub root: &'a Path,
    /// The user's tree (read-only; for `{root}` in commands).
    pub user_root: &'a Path,
    pub stop: &'a Arc<AtomicBool>,
    /// Where commands record their process groups while they run ([`crate::orphans`]);
    /// `None`: not recorded.
    pub records: Option<&'a Path>,
    /// The lane's device: `{device}` in commands, and the variables its commands get.
    pub device: &'a LaneDevice,
    /// Which objective this preparation or sample is for: the index of a launch spec of the
    /// `bench` backend (each spec times its own kernel); `None` for a backend with one
    /// objective (the others ignore it).
    pub spec: Option<usize>,
}

/// The device of a lane as its commands see it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LaneDevice {
    /// The device id (`{device}` in commands); `None`: the default device (`{device}` is `0`).
    pub id: Option<String>,
    /// Variables set for every command of the lane (`HIP_VISIBLE_DEVICES`,
    /// `CUDA_VISIBLE_DEVICES` for a local lane; nothing for a Slurm step, which Slurm sets).
    pub env: Vec<(String, String)>,
}

impl LaneDevice {
    /// No device chosen: today's single lane.
    pub const DEFAULT: LaneDevice = LaneDevice {
        id: None,
        env: Vec::new(),
    };

    /// A local lane on device `id`: its commands see only that device.
    pub fn local(id: &str) -> LaneDevice {
        LaneDevice {
            id: Some(id.to_string()),
            env: vec![
                ("HIP_VISIBLE_DEVICES".into(), id.to_string()),
                ("CUDA_VISIBLE_DEVICES".into(), id.to_string()),
            ],
        }
    }

    /// What `{device}` expands to.
    pub fn shown(&self) -> &str {
        self.id.as_deref().unwrap_or("0")
    }
}

/// Why a variant (or the baseline) is not usable; a status, not an error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// The build failed: `build-failed`.
    Build(String),
    /// The run failed or its outputs are wrong: `check-failed`.
    Check(String),
    /// The compiler is not installed here and the carried cache holds no object for it:
    /// `not-cached`, a fact about this machine, never stored as a decision.
    NotCached(String),
}

impl Failure {
    pub fn message(&self) -> &str {
        match self {
            Failure::Build(m) | Failure::Check(m) | Failure::NotCached(m) => m,
        }
    }
}

/// A kernel seen by a backend in the baseline.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct KernelShare {
    /// The kernel's source-level function name (qualified, no parameters or template
    /// arguments), as [`kernel_function_name`] derives it.
    pub function: String,
    /// Its share of the critical path, 0..=100.
    pub share: f64,
}

/// A measurement backend. See the module documentation for the contract.
pub trait Backend: Sync {
    /// What `prepare` leaves for `sample` (paths of built artifacts, reference outputs...).
    type Prepared: Send + Sync;

    /// `command`, `rocprofv3`, ...
    fn name(&self) -> &'static str;

    /// The unit of the figures (`ms`, `ns`, or the user's for a regex).
    fn unit(&self) -> String;

    /// Check the preconditions before anything is built.
    fn preflight(&self) -> Result<(), Error>;

    /// Build, run once and check the slot.
    fn prepare(
        &self,
        slot: &Slot<'_>,
        baseline: Option<&Self::Prepared>,
    ) -> Result<Result<Self::Prepared, Failure>, Error>;

    /// One timed sample of a prepared slot (lower is better).
    fn sample(
        &self,
        slot: &Slot<'_>,
        prepared: &Self::Prepared,
    ) -> Result<Result<f64, Failure>, Error>;

    /// Whether [`Backend::kernels`] can rank loops (then the search prepares the baseline
    /// before anything else, to order the loops by it).
    fn ranks(&self) -> bool {
        false
    }

    /// Kernels that ran in the prepared baseline, with their critical-path share.
    fn kernels(&self, _baseline: &Self::Prepared) -> Option<Vec<KernelShare>> {
        None
    }

    /// Launches timed back to back as one sample of the prepared baseline (its figures are
    /// their mean per launch), where the backend batches them (`bench`: the spec's
    /// `launches-per-sample` or the runner's choice for a short kernel); `None` where each
    /// sample is one run.
    fn launches_per_sample(&self, _baseline: &Self::Prepared) -> Option<u32> {
        None
    }

    /// The objectives of a backend with several ([`crate::objective`]: the `bench` backend's
    /// launch specs), in the order of [`Slot::spec`]; empty for a backend with one.
    fn objectives(&self) -> Vec<crate::objective::Objective> {
        Vec::new()
    }

    /// Whether the next candidates may be prepared (compiled, built) while a sample is taken:
    /// true for the GPU backends (`rocprofv3`, `bench`, `replay`), whose samples the CPU's work
    /// does not disturb; false for the user's commands on the CPU (the default).
    fn overlaps(&self) -> bool {
        false
    }
}

/// Whether a kernel's function (from [`kernel_function_name`]) is the source function
/// `qualified` (the frontend's qualified name): `kernelname::is_function`, the one rule.
pub fn same_function(kernel_fn: &str, qualified: &str) -> bool {
    kernelname::is_function(kernel_fn, qualified)
}

/// The source-level function of a kernel name: `void ns::k<float>(float*, int)` -> `ns::k`
/// (`kernelname::function_of`).
pub fn kernel_function_name(demangled: &str) -> String {
    kernelname::function_of(demangled)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_names_to_functions() {
        assert_eq!(
            kernel_function_name("chain(int const*, int*, int, int)"),
            "chain"
        );
        assert_eq!(
            kernel_function_name("void vecAdd<float>(float*, float const*, float const*, int)"),
            "vecAdd"
        );
        assert_eq!(
            kernel_function_name("void ns::inner::k<std::pair<int, int> >(int)"),
            "ns::inner::k"
        );
        assert_eq!(
            kernel_function_name("(anonymous namespace)::k(int)"),
            "(anonymous namespace)::k"
        );
        assert_eq!(kernel_function_name("plain_kernel"), "plain_kernel");
        assert!(same_function("(anonymous namespace)::k", "k"));
        assert!(same_function("ns::(anonymous namespace)::k", "ns::k"));
        assert!(!same_function("ns::k", "k"));
    }
}
