//! One serializable description of a measurement backend ([`BackendSpec`]: `command`,
//! `rocprofv3`, `bench`, `replay`) and the one way to build it for a lane
//! ([`BackendSpec::build`]): the local path builds one backend per lane from it (each bench or
//! replay lane opens its own device), and a Slurm worker builds its backend from the spec the
//! coordinator sends in its `Init` line. [`AnyBackend`] is the built backend, whichever kind.

use super::bench::BenchBackend;
use super::command::{CommandBackend, Commands};
use super::replay::{ReplayBackend, ReplaySettings};
use super::rocprof::RocprofBackend;
use super::{Backend, Failure, KernelShare, Slot};
use crate::error::Error;
use crate::gates::Gates;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The longest wait of the GPU backends for their runtime's start or one launch (the per-build
/// time limit may be much longer).
pub const DEVICE_TIMEOUT: Duration = Duration::from_secs(60);

/// What a backend is built from: plain data, the same on this machine and on a Slurm node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum BackendSpec {
    /// The wall time of the run command, or the number `time_regex` finds in its output.
    Command {
        build: String,
        run: String,
        check: Option<String>,
        timeout_ms: u64,
        time_regex: Option<String>,
        regex_unit: String,
    },
    /// GPU time of the objective kernels under rocprofv3.
    Rocprofv3 {
        build: String,
        run: String,
        check: Option<String>,
        timeout_ms: u64,
        /// The objective kernels by name; `None`: those defined in the tuned paths.
        kernel_regex: Option<String>,
        /// Function names of the kernels defined in the tuned paths.
        path_kernels: BTreeSet<String>,
    },
    /// The kernels of launch specs, each launched alone by the runner.
    Bench {
        /// The launch specs, by objective index ([`crate::objective`]): the name the user
        /// gave each (the report's) and its absolute path.
        specs: Vec<(String, PathBuf)>,
        /// The tuned tree the spec's source lies in.
        root: PathBuf,
        /// The compile target asked for; `None`: the device's own.
        arch: Option<String>,
        timeout_ms: u64,
        cache_dir: PathBuf,
        nvcc: Option<PathBuf>,
        /// Extra flags of the gates' compile (the code-object gates' and, for NVIDIA, nvcc's).
        gate_flags: Vec<String>,
    },
    /// A captured dispatch replayed with each variant's code object.
    Replay {
        /// The snapshot directory (absolute).
        snapshot: PathBuf,
        /// The file defining the captured kernel, relative to the tuned tree.
        source: PathBuf,
        timeout_ms: u64,
    },
}

/// A regex of a spec (sent by hand, or from another version): one line when it is invalid.
fn regex(what: &'static str, r: &Option<String>) -> Result<Option<regex::Regex>, Error> {
    r.as_deref()
        .map(|p| {
            regex::Regex::new(p).map_err(|e| {
                Error::Usage(format!(
                    "the {what} regex `{p}` is invalid: {}",
                    profiler::error::regex_reason(&e)
                ))
            })
        })
        .transpose()
}

impl BackendSpec {
    /// The backend's name (`command`, `rocprofv3`, `bench`, `replay`).
    pub fn name(&self) -> &'static str {
        match self {
            BackendSpec::Command { .. } => "command",
            BackendSpec::Rocprofv3 { .. } => "rocprofv3",
            BackendSpec::Bench { .. } => "bench",
            BackendSpec::Replay { .. } => "replay",
        }
    }

    /// Whether each lane must be a process of its own (`tune-worker`) rather than a thread:
    /// a replay session reserves the captured virtual addresses in its process, so two in one
    /// process collide.
    pub fn objectives(&self) -> Vec<crate::objective::Objective> {
        match self {
            BackendSpec::Bench { specs, root, .. } => BenchBackend::load_specs(specs, root)
                .into_iter()
                .map(|(o, _)| o)
                .collect(),
            _ => Vec::new(),
        }
    }

    pub fn needs_own_process(&self) -> bool {
        matches!(self, BackendSpec::Replay { .. })
    }

    /// The spec of a command backend.
    pub fn command(b: &CommandBackend) -> BackendSpec {
        BackendSpec::Command {
            build: b.commands.build.clone(),
            run: b.commands.run.clone(),
            check: b.commands.check.clone(),
            timeout_ms: b.commands.timeout.as_millis() as u64,
            time_regex: b.time_regex.as_ref().map(|r| r.as_str().to_string()),
            regex_unit: b.regex_unit.clone(),
        }
    }

    /// The backend of one lane on device `device` (the ordinal of the lane's GPU as this
    /// process sees it: the `--devices` id locally, 0 in a Slurm step, which sees only its
    /// own). `gates` are the lane's code-object gates (replay compiles with their compiler).
    /// Nothing is opened here: [`Backend::preflight`] opens the device.
    pub fn build(&self, device: u32, gates: &Gates) -> Result<AnyBackend, Error> {
        Ok(match self {
            BackendSpec::Command {
                build,
                run,
                check,
                timeout_ms,
                time_regex,
                regex_unit,
            } => AnyBackend::Command(CommandBackend {
                commands: Commands {
                    build: build.clone(),
                    run: run.clone(),
                    check: check.clone(),
                    timeout: Duration::from_millis(*timeout_ms),
                },
                time_regex: regex("time", time_regex)?,
                regex_unit: regex_unit.clone(),
            }),
            BackendSpec::Rocprofv3 {
                build,
                run,
                check,
                timeout_ms,
                kernel_regex,
                path_kernels,
            } => AnyBackend::Rocprofv3(RocprofBackend::new(
                Commands {
                    build: build.clone(),
                    run: run.clone(),
                    check: check.clone(),
                    timeout: Duration::from_millis(*timeout_ms),
                },
                regex("kernel", kernel_regex)?,
                path_kernels.clone(),
            )),
            BackendSpec::Bench {
                specs,
                root,
                arch,
                timeout_ms,
                cache_dir,
                nvcc,
                ..
            } => {
                // A spec that cannot be used fails alone: its objective is marked failed.
                let loaded = BenchBackend::load_specs(specs, root);
                let options = bench_options(arch, *timeout_ms, cache_dir, nvcc, device);
                let opts = options.clone();
                let open: super::bench::OpenDevice =
                    std::sync::Arc::new(move || runner::session::open_device(&opts));
                AnyBackend::Bench(BenchBackend::with_specs(loaded, options, open))
            }
            BackendSpec::Replay {
                snapshot,
                source,
                timeout_ms,
            } => AnyBackend::Replay(ReplayBackend::new(
                ReplaySettings {
                    snapshot: snapshot.clone(),
                    options: replay::device::Options {
                        timeout: Duration::from_millis(*timeout_ms).min(DEVICE_TIMEOUT),
                        runtime_library: None,
                        allow_missing_regions: false,
                        device: device as usize,
                    },
                    compiler: gates.compiler.clone(),
                    float_regions: Vec::new(),
                    tolerance: Default::default(),
                },
                source.clone(),
            )),
        })
    }

    /// For a preflighted bench backend: the gates its kernel is judged with (nvcc cubins for
    /// an NVIDIA target, AMD's code-object gates for the device's own gfx target unless an
    /// arch was asked for) and what the device's target and compiler add to the fingerprint
    /// (`target`, `gates`, `compiler`). Other kinds: `gates` unchanged, nothing added.
    pub fn device_gates(
        &self,
        backend: &AnyBackend,
        gates: &Gates,
    ) -> Result<(Gates, Option<serde_json::Map<String, serde_json::Value>>), Error> {
        let (
            BackendSpec::Bench {
                arch: explicit_arch,
                cache_dir,
                nvcc,
                gate_flags,
                ..
            },
            AnyBackend::Bench(b),
        ) = (self, backend)
        else {
            return Ok((gates.clone(), None));
        };
        let mut gates = gates.clone();
        gates.instances = b.instances();
        let target = b.target()?;
        let build = runner::build::BuildOptions::new(cache_dir).with_nvcc(nvcc.clone());
        let identity = match &target {
            runner::build::Target::Cuda(arch) => {
                // The gates compile cubins with nvcc and read their registers and spills;
                // without nvcc they are skipped (or served by a carried cache). The specs'
                // defines and flags when every spec has the same (the gates compile the file
                // once for all of them); else none: a file that needs them is not gated, and
                // the report says so.
                let mut gate_args = gate_flags.clone();
                gate_args.extend(common_spec_args(b));
                let program = nvcc.clone().unwrap_or_else(|| PathBuf::from("nvcc"));
                gates.compiler =
                    runner::build::nvcc_compiler(&program, arch, cache_dir, true, gate_args)
                        .map_err(|e| Error::Environment(e.to_string()))?;
                runner::build::cuda_identity(&build, arch)
            }
            runner::build::Target::Hip(arch) => {
                if explicit_arch.is_none() {
                    gates.compiler.arch = arch.clone();
                }
                gates.compiler.identity().ok()
            }
        };
        let mut extra = device_fingerprint(
            serde_json::json!(target),
            serde_json::json!(gates.compiler.key_words()),
            serde_json::json!(identity),
        );
        // The gates compile a template kernel's instance since they have instances: decisions
        // of a tune before (its variants `same-code` unmeasured) are not reused. Named only
        // when there are some, so that other tunes keep theirs.
        if !gates.instances.is_empty() {
            let named: Vec<[String; 2]> = gates
                .instances
                .iter()
                .map(|i| [i.source.display().to_string(), i.kernel.clone()])
                .collect();
            extra.insert("instances".into(), serde_json::json!(named));
        }
        Ok((gates, Some(extra)))
    }
}

/// What a bench lane's device adds to the settings fingerprint: its target, the gates'
/// compile, the compiler's identity and the runner's way of taking samples
/// ([`runner::session::SAMPLING`]): decisions measured with another of any of them are not
/// reused.
fn device_fingerprint(
    target: serde_json::Value,
    gates: serde_json::Value,
    compiler: serde_json::Value,
) -> serde_json::Map<String, serde_json::Value> {
    let mut extra = serde_json::Map::new();
    extra.insert("target".into(), target);
    extra.insert("gates".into(), gates);
    extra.insert("compiler".into(), compiler);
    extra.insert(
        "sampling".into(),
        serde_json::json!(runner::session::SAMPLING),
    );
    extra
}

/// The defines and flags every spec of `b` compiles with, when they all agree; else none.
fn common_spec_args(b: &BenchBackend) -> Vec<String> {
    let mut all = b.specs().map(runner::build::spec_args);
    let Some(first) = all.next() else {
        return Vec::new();
    };
    if all.all(|a| a == first) {
        first
    } else {
        Vec::new()
    }
}

/// The runner's options of a bench lane on device `device`.
pub fn bench_options(
    arch: &Option<String>,
    timeout_ms: u64,
    cache_dir: &Path,
    nvcc: &Option<PathBuf>,
    device: u32,
) -> runner::Options {
    runner::Options {
        backend: runner::Backend::Auto,
        // The device decides, unless an arch was asked for.
        arch: arch.clone(),
        device: i32::try_from(device).unwrap_or(i32::MAX),
        // Bounds the runtime's start and every launch (the time limit is per build or run).
        timeout: Duration::from_millis(timeout_ms).min(DEVICE_TIMEOUT),
        build: runner::build::BuildOptions::new(cache_dir).with_nvcc(nvcc.clone()),
    }
}

/// A built backend of any kind: what a lane measures with.
pub enum AnyBackend {
    Command(CommandBackend),
    Rocprofv3(RocprofBackend),
    Bench(BenchBackend),
    Replay(ReplayBackend),
}

/// What [`AnyBackend::prepare`] leaves, of the backend's kind.
pub enum AnyPrepared {
    Command(()),
    Rocprofv3(super::rocprof::Prepared),
    Bench(super::bench::Prepared),
    Replay(super::replay::Prepared),
}

fn mismatch() -> Error {
    Error::Environment("a prepared slot of another backend kind was passed to this lane".into())
}

macro_rules! each {
    ($self:expr, $b:ident => $e:expr) => {
        match $self {
            AnyBackend::Command($b) => $e,
            AnyBackend::Rocprofv3($b) => $e,
            AnyBackend::Bench($b) => $e,
            AnyBackend::Replay($b) => $e,
        }
    };
}

/// `prepare` of one kind, its answer wrapped.
macro_rules! prepare_as {
    ($b:expr, $slot:expr, $base:expr, $kind:ident) => {{
        let base = match $base {
            None => None,
            Some(AnyPrepared::$kind(p)) => Some(p),
            Some(_) => return Err(mismatch()),
        };
        Ok($b.prepare($slot, base)?.map(AnyPrepared::$kind))
    }};
}

impl Backend for AnyBackend {
    type Prepared = AnyPrepared;

    fn name(&self) -> &'static str {
        each!(self, b => b.name())
    }

    fn unit(&self) -> String {
        each!(self, b => b.unit())
    }

    fn preflight(&self) -> Result<(), Error> {
        each!(self, b => b.preflight())
    }

    fn prepare(
        &self,
        slot: &Slot<'_>,
        baseline: Option<&AnyPrepared>,
    ) -> Result<Result<AnyPrepared, Failure>, Error> {
        match self {
            AnyBackend::Command(b) => prepare_as!(b, slot, baseline, Command),
            AnyBackend::Rocprofv3(b) => prepare_as!(b, slot, baseline, Rocprofv3),
            AnyBackend::Bench(b) => prepare_as!(b, slot, baseline, Bench),
            AnyBackend::Replay(b) => prepare_as!(b, slot, baseline, Replay),
        }
    }

    fn sample(
        &self,
        slot: &Slot<'_>,
        prepared: &AnyPrepared,
    ) -> Result<Result<f64, Failure>, Error> {
        match (self, prepared) {
            (AnyBackend::Command(b), AnyPrepared::Command(p)) => b.sample(slot, p),
            (AnyBackend::Rocprofv3(b), AnyPrepared::Rocprofv3(p)) => b.sample(slot, p),
            (AnyBackend::Bench(b), AnyPrepared::Bench(p)) => b.sample(slot, p),
            (AnyBackend::Replay(b), AnyPrepared::Replay(p)) => b.sample(slot, p),
            _ => Err(mismatch()),
        }
    }

    fn ranks(&self) -> bool {
        each!(self, b => b.ranks())
    }

    fn kernels(&self, baseline: &AnyPrepared) -> Option<Vec<KernelShare>> {
        match (self, baseline) {
            (AnyBackend::Command(b), AnyPrepared::Command(p)) => b.kernels(p),
            (AnyBackend::Rocprofv3(b), AnyPrepared::Rocprofv3(p)) => b.kernels(p),
            (AnyBackend::Bench(b), AnyPrepared::Bench(p)) => b.kernels(p),
            (AnyBackend::Replay(b), AnyPrepared::Replay(p)) => b.kernels(p),
            _ => None,
        }
    }

    fn launches_per_sample(&self, baseline: &AnyPrepared) -> Option<u32> {
        match (self, baseline) {
            (AnyBackend::Bench(b), AnyPrepared::Bench(p)) => b.launches_per_sample(p),
            _ => None,
        }
    }

    fn objectives(&self) -> Vec<crate::objective::Objective> {
        match self {
            AnyBackend::Bench(b) => b.objectives(),
            _ => Vec::new(),
        }
    }

    fn overlaps(&self) -> bool {
        each!(self, b => b.overlaps())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_device_fingerprint_names_the_way_samples_are_taken() {
        let fp = |sampling: &str| {
            let mut m = device_fingerprint(
                serde_json::json!({"cuda": "sm_90"}),
                serde_json::json!(["nvcc", "-cubin"]),
                serde_json::json!("nvcc 13.0"),
            );
            assert_eq!(m["sampling"], serde_json::json!(runner::session::SAMPLING));
            m.insert("sampling".into(), serde_json::json!(sampling));
            serde_json::Value::Object(m).to_string()
        };
        // Another way of sampling gives other settings, hence other decision keys.
        assert_ne!(fp(runner::session::SAMPLING), fp("one launch per sample"));
        assert_eq!(fp(runner::session::SAMPLING), fp(runner::session::SAMPLING));
    }

    fn specs() -> Vec<BackendSpec> {
        vec![
            BackendSpec::Command {
                build: "make".into(),
                run: "./app {device}".into(),
                check: Some("true".into()),
                timeout_ms: 600_000,
                time_regex: Some("cost: ([0-9]+)".into()),
                regex_unit: "units".into(),
            },
            BackendSpec::Rocprofv3 {
                build: "make".into(),
                run: "./app".into(),
                check: None,
                timeout_ms: 1000,
                kernel_regex: Some("^k".into()),
                path_kernels: ["ns::k".to_string(), "other".to_string()].into(),
            },
            BackendSpec::Bench {
                specs: vec![
                    ("k.toml".into(), "/t/k.toml".into()),
                    ("other.toml".into(), "/t/other.toml".into()),
                ],
                root: "/t".into(),
                arch: Some("sm_90".into()),
                timeout_ms: 60_000,
                cache_dir: "/t/.hip-unroll/objects".into(),
                nvcc: Some("/opt/nvcc".into()),
                gate_flags: vec!["-DX".into()],
            },
            BackendSpec::Replay {
                snapshot: "/t/cap".into(),
                source: "scale.hip".into(),
                timeout_ms: 5000,
            },
        ]
    }

    #[test]
    fn only_replay_needs_a_process_per_lane() {
        let own: Vec<&str> = specs()
            .iter()
            .filter(|s| s.needs_own_process())
            .map(BackendSpec::name)
            .collect();
        assert_eq!(own, ["replay"]);
    }

    #[test]
    fn every_kind_round_trips_through_json() {
        let names: Vec<&str> = specs().iter().map(BackendSpec::name).collect();
        assert_eq!(names, ["command", "rocprofv3", "bench", "replay"]);
        for s in specs() {
            let line = serde_json::to_string(&s).unwrap();
            assert!(!line.contains('\n'), "{line}");
            assert!(
                line.contains(&format!("\"kind\":\"{}\"", s.name())),
                "{line}"
            );
            let back: BackendSpec = serde_json::from_str(&line).unwrap();
            assert_eq!(back, s);
        }
    }

    #[test]
    fn a_bad_regex_in_a_spec_is_one_line_not_a_panic() {
        let s = BackendSpec::Command {
            build: "true".into(),
            run: "true".into(),
            check: None,
            timeout_ms: 1000,
            time_regex: Some("(".into()),
            regex_unit: String::new(),
        };
        let gates = crate::executor::worker::CompileSpec {
            command: "true".into(),
            arch: "gfx90a".into(),
            cache_dir: "/nonexistent".into(),
            args: Vec::new(),
            timeout_ms: 1000,
            max_occupancy_loss: None,
        }
        .gates();
        let e = s.build(0, &gates).err().expect("refused").to_string();
        assert!(e.starts_with("the time regex `(` is invalid"), "{e}");
        assert!(!e.contains('\n'), "{e}");
    }

    #[test]
    fn bench_options_take_the_lane_device() {
        let o = bench_options(&None, 600_000, Path::new("/c"), &None, 3);
        assert_eq!(o.device, 3);
        assert_eq!(o.timeout, DEVICE_TIMEOUT);
    }
}
