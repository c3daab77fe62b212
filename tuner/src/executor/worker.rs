//! The worker side of a process lane: `hip-unroll tune-worker` runs [`serve`] in a Slurm job
//! step, or as a process of its own on this machine ([`super::slurm::Launcher`]).
//!
//! Protocol (JSON lines; one object per line):
//! - stdin, first line: an [`Init`] (the tree, where the working copies live, the plan, the
//!   gates' compiler, the backend's [`BackendSpec`]: any of the four kinds); then one [`crate::lane::Task`] per line. End of input: the
//!   worker stops (at once, between two runs, when a task is still going).
//! - stdout, first line: [`Out::Ready`] with the [`LaneInfo`] (the step's device: the id Slurm
//!   gave it in `CUDA_VISIBLE_DEVICES`, its model, the node), or [`Out::Failed`] with one line;
//!   then one [`Out::Event`] per [`crate::lane::Event`], in order.
//! - The worker never writes the ledger: it builds and measures in its own working copies and
//!   reports; the coordinator records.

use super::LaneInfo;
use crate::backend::spec::AnyBackend;
pub use crate::backend::spec::BackendSpec;
use crate::backend::{Backend, LaneDevice};
use crate::error::Error;
use crate::gates::Gates;
use crate::lane::{Device, Event, Lane, LaneContext, Task};
use crate::stats::Plan;
use crate::workcopy::Tree;
use serde::{Deserialize, Serialize};
use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What a worker needs to build and measure: everything a decision depends on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Init {
    /// The lane's number (for its working copies and test points).
    pub lane: usize,
    /// The user's tree, as the coordinator scanned it (its content hash must match).
    pub root: PathBuf,
    pub tree_hash: String,
    /// Left out of the scan.
    pub state_dir: PathBuf,
    /// Where the worker keeps its working copies (on the node).
    pub slots_dir: PathBuf,
    /// Where commands record their process groups.
    pub records_dir: Option<PathBuf>,
    pub plan: Plan,
    pub jobs: usize,
    pub compile: CompileSpec,
    pub backend: BackendSpec,
    /// The lane's device as the coordinator knows it (a `--devices` id on this machine);
    /// `None` in a Slurm step: the GPU Slurm gave it.
    #[serde(default)]
    pub device: Option<Device>,
}

/// The code-object gates' compiler.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompileSpec {
    pub command: String,
    pub arch: String,
    pub cache_dir: PathBuf,
    pub args: Vec<String>,
    pub timeout_ms: u64,
    /// `[vgpr-pressure] max-occupancy-loss`: `None` measures an occupancy loss, `Some` vetoes
    /// one beyond it (see [`Gates::max_occupancy_loss`]).
    #[serde(default)]
    pub max_occupancy_loss: Option<u32>,
}

impl CompileSpec {
    /// The spec of `gates`.
    pub fn of(gates: &Gates) -> CompileSpec {
        let c = &gates.compiler;
        CompileSpec {
            command: c.command.clone(),
            arch: c.arch.clone(),
            cache_dir: c.cache_dir.clone(),
            args: c.args.clone(),
            timeout_ms: c.timeout.as_millis() as u64,
            max_occupancy_loss: gates.max_occupancy_loss,
        }
    }

    pub fn gates(&self) -> Gates {
        let mut compiler = codeobj::compile::Compiler::new(
            self.command.clone(),
            self.arch.clone(),
            self.cache_dir.clone(),
        )
        .with_timeout(Duration::from_millis(self.timeout_ms));
        compiler.args = self.args.clone();
        Gates {
            compiler,
            max_occupancy_loss: self.max_occupancy_loss,
            instances: Vec::new(),
        }
    }
}

/// What a worker writes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Out {
    Ready(LaneInfo),
    Failed(String),
    Event(Event),
}

/// The device of this job step: the GPU Slurm gave it (`CUDA_VISIBLE_DEVICES`,
/// `SLURM_STEP_GPUS`), on this node.
fn step_device() -> Device {
    let id = [
        "CUDA_VISIBLE_DEVICES",
        "SLURM_STEP_GPUS",
        "HIP_VISIBLE_DEVICES",
    ]
    .iter()
    .find_map(|v| std::env::var(v).ok().filter(|s| !s.is_empty()));
    // Inside the step only its GPUs are visible: the first is the one the lane measures on.
    let mut d = Device::probe(None);
    d.id = id;
    d
}

fn write_line(out: &Mutex<Box<dyn Write + Send>>, o: &Out) {
    let line = serde_json::to_string(o).unwrap_or_default();
    let mut w = out.lock().unwrap_or_else(|p| p.into_inner());
    let _ = writeln!(w, "{line}");
    let _ = w.flush();
}

/// How a worker ended.
#[derive(Debug)]
pub enum Served {
    /// Its input ended.
    Done,
    /// It could not start (its tree, its backend's preconditions): the one line went to the
    /// coordinator as [`Out::Failed`], which says it; the worker only exits non-zero.
    Refused(Error),
}

/// Serve one lane: read the [`Init`] and the tasks from `input`, write the events to `output`.
/// Returns when the input ends; `Err` when there is no valid init line (nothing was written).
pub fn serve(input: impl BufRead + Send, output: Box<dyn Write + Send>) -> Result<Served, Error> {
    let out = Mutex::new(output);
    let mut lines = input.lines();
    let first = match lines.next() {
        Some(Ok(l)) => l,
        _ => return Err(Error::Usage("tune-worker: no init line on stdin".into())),
    };
    let init: Init = serde_json::from_str(&first)
        .map_err(|e| Error::Usage(format!("tune-worker: bad init line: {e}")))?;
    let ready = (|| -> Result<(Tree, AnyBackend, Gates, String), Error> {
        let tree = Tree::scan(&init.root, std::slice::from_ref(&init.state_dir))?;
        if tree.hash != init.tree_hash {
            return Err(Error::Environment(format!(
                "the tree at {} on this node is not the coordinator's (content hash {} != {})",
                init.root.display(),
                &tree.hash[..12.min(tree.hash.len())],
                &init.tree_hash[..12.min(init.tree_hash.len())]
            )));
        }
        // The step (or the process, its device variables set) sees only its own GPU: device 0.
        let gates = init.compile.gates();
        let backend = init.backend.build(0, &gates)?;
        backend.preflight()?;
        // A bench kernel is judged for this device's target: what it adds to the settings'
        // fingerprint goes back with the lane.
        let (gates, extra) = init.backend.device_gates(&backend, &gates)?;
        let fingerprint = extra
            .map(|m| serde_json::Value::Object(m).to_string())
            .unwrap_or_default();
        Ok((tree, backend, gates, fingerprint))
    })();
    let (tree, backend, gates, fingerprint) = match ready {
        Ok(x) => x,
        Err(e) => {
            write_line(&out, &Out::Failed(e.to_string()));
            return Ok(Served::Refused(e));
        }
    };
    let device = init.device.clone().unwrap_or_else(step_device);
    write_line(
        &out,
        &Out::Ready(LaneInfo {
            device: device.clone(),
            backend: backend.name().to_string(),
            unit: backend.unit(),
            ranks: backend.ranks(),
            overlap: backend.overlaps(),
            fingerprint,
        }),
    );
    let halt = Arc::new(AtomicBool::new(false));
    let cx = LaneContext {
        tree: &tree,
        slots_dir: init.slots_dir.clone(),
        records: init.records_dir.clone(),
        halt: halt.clone(),
        plan: init.plan,
        jobs: init.jobs,
        gates,
        // Slurm (or the coordinator) set the process's device variables; `{device}` is its id.
        device: LaneDevice {
            id: device.id.clone(),
            env: Vec::new(),
        },
        overlap: backend.overlaps(),
    };
    let point = format!("tuner.worker.lane-{}.sample", init.lane);
    let (tx, rx) = std::sync::mpsc::channel::<Task>();
    std::thread::scope(|s| {
        let halt_in = halt.clone();
        s.spawn(move || {
            for line in lines {
                let Ok(line) = line else { break };
                match serde_json::from_str::<Task>(&line) {
                    Ok(t) => {
                        if tx.send(t).is_err() {
                            break;
                        }
                    }
                    Err(_) => break,
                }
            }
            // The coordinator is done with this lane (or gone): stop.
            halt_in.store(true, Ordering::SeqCst);
        });
        let lane = Lane::new(&backend, cx);
        let emit = |e: Event| {
            let sample = matches!(e, Event::Sample { .. });
            write_line(&out, &Out::Event(e));
            if sample {
                fsio::testpoint::hit(&point);
            }
        };
        lane.run(rx, &emit);
    });
    Ok(Served::Done)
}
