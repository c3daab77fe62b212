//! The objectives of a tune: what a variant is measured by. A backend has one objective (the
//! `command` backend's run, the profiler's) or, the `bench` backend, one per launch spec: each
//! spec times the kernel it launches, and a loop is judged by the specs of the kernels that
//! reach it ([`judges`], from the call graph's reach, [`crate::discover::Discovery::reaching`]):
//! a loop of one kernel by that kernel's spec, a loop of a helper several kernels call by all
//! of theirs ([`crate::stats::judge`]). A spec whose baseline fails stops only the loops it
//! alone would judge.

use crate::discover::{Discovery, LoopInfo};
use std::path::PathBuf;

/// One objective: a launch spec and the kernel it launches.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Objective {
    /// The spec's path as the user gave it (the report's name for it).
    pub name: String,
    /// The kernel it launches, as the spec names it.
    pub kernel: String,
    /// The kernel's source, relative to the tree (`None`: the spec could not be read).
    pub source: Option<PathBuf>,
    /// The spec's content digest: part of the key of every decision it judges, so that a
    /// changed spec measures its kernel's loops again and an added one only its own kernel's.
    pub digest: String,
    /// Why the spec cannot be used (it does not load, its source is outside the tree).
    pub failed: Option<String>,
}

impl Objective {
    /// Whether this spec launches the kernel `kernel` (a qualified name) of `file`.
    pub fn launches(&self, file: &std::path::Path, kernel: &str) -> bool {
        self.source.as_deref() == Some(file)
            && (self.kernel == kernel || kernelname::is_function(&self.kernel, kernel))
    }
}

/// The objectives (indices into `objectives`) that judge loop `l`: the specs launching a kernel
/// that reaches the function holding it, in the order given. Failed specs included: the
/// caller leaves them out (and says so when no other is left).
pub fn judges(objectives: &[Objective], disc: &Discovery, l: &LoopInfo) -> Vec<usize> {
    let reaching = disc.reaching(l);
    objectives
        .iter()
        .enumerate()
        .filter(|(_, o)| reaching.iter().any(|(f, k)| o.launches(f, k)))
        .map(|(i, _)| i)
        .collect()
}

/// The key of the decision of a variant judged by the specs `digests` (in the order of the
/// specs), from its key without specs.
pub fn judged_key(key: &str, digests: &[&str]) -> String {
    let mut h = blake3::Hasher::new();
    h.update(b"hip-unroll judged decision\0");
    h.update(key.as_bytes());
    for d in digests {
        h.update(b"\0");
        h.update(d.as_bytes());
    }
    h.finalize().to_hex().to_string()
}

/// The comparison key of one spec's measurement of the decision `key`: its samples are
/// recorded under it.
pub fn spec_key(key: &str, digest: &str) -> String {
    format!("{key}@{}", &digest[..digest.len().min(16)])
}

/// The kernels of the tree that no spec launches (failed specs count: their kernel has a spec).
///
/// The kernels under the tuned paths that no spec launches (each objective is one spec's
/// kernel): in discovery order, once per kernel.
pub fn uncovered(objectives: &[Objective], disc: &Discovery) -> Vec<crate::discover::KernelRef> {
    disc.kernels()
        .filter(|(f, k)| !objectives.iter().any(|o| o.launches(f, k)))
        .map(|(f, k)| (f.to_path_buf(), k.to_string()))
        .collect()
}

/// How many uncovered kernels the note names before counting the rest.
const NOTE_NAMES: usize = 6;

/// The report's note on the kernels without a spec (once per tune), if there are some: the
/// line `specgen::coverage::summary` writes (the one `spec new` users see), naming the first
/// kernels by file and counting the rest.
pub fn uncovered_note(objectives: &[Objective], disc: &Discovery) -> Option<String> {
    let list: Vec<specgen::coverage::Uncovered> = uncovered(objectives, disc)
        .into_iter()
        .map(|(file, kernel)| specgen::coverage::Uncovered { file, kernel })
        .collect();
    specgen::coverage::summary(&list, NOTE_NAMES)
}
