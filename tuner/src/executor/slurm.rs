//! Lanes as Slurm job steps: each lane is
//! `srun --ntasks=1 --gres=gpu:1 [--exclusive] --job-name=hip-unroll-lane-N ARGS... PROGRAM
//! tune-worker` (`--exclusive` inside an allocation only), speaking the [`super::worker`] protocol over the step's stdin and stdout (its
//! stderr is this process's). Inside an allocation (`salloc`, `sbatch`) the steps run in it;
//! outside one, each srun makes its own job. Slurm schedules, places and cancels: there is no
//! scheduler and no ssh here. A step that ends (`scancel`, a node failure, a time limit) is a
//! [`Message::Lost`] lane: the search measures its comparison in flight again elsewhere.

use super::worker::{Init, Out};
use super::{Executor, LaneInfo, Message};
use crate::error::Error;
use crate::lane::Task;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::sync::Mutex;
use std::time::Duration;

/// How lanes are started under Slurm.
#[derive(Debug, Clone)]
pub struct SlurmSettings {
    /// Lanes (job steps) to start.
    pub lanes: usize,
    /// Extra srun arguments (`--slurm-arg`, `[tune.slurm] args`), before the program.
    pub args: Vec<String>,
    /// The `hip-unroll` binary the steps run.
    pub program: PathBuf,
    /// `srun` [default: `srun` on PATH].
    pub srun: PathBuf,
    /// Whether this process runs inside an allocation (`SLURM_JOB_ID` is set).
    pub in_allocation: bool,
}

/// The srun command line of lane `i`.
pub fn command_line(s: &SlurmSettings, i: usize) -> Vec<String> {
    let mut v = vec![
        s.srun.display().to_string(),
        "--ntasks=1".into(),
        "--gres=gpu:1".into(),
    ];
    // Inside an allocation `--exclusive` gives the step resources of its own (steps share
    // none); outside one it would ask for a whole node per lane, so each srun's own job
    // takes just its task and GPU.
    if s.in_allocation {
        v.push("--exclusive".into());
    }
    v.push(format!("--job-name=hip-unroll-lane-{i}"));
    v.extend(s.args.iter().cloned());
    v.push(s.program.display().to_string());
    v.push("tune-worker".into());
    v
}

/// Lanes running as job steps.
pub struct Slurm {
    infos: Vec<LaneInfo>,
    stdins: Vec<Mutex<Option<ChildStdin>>>,
    children: Mutex<Vec<Child>>,
    events: Mutex<Receiver<(usize, Message)>>,
}

impl Slurm {
    /// Start every lane and wait until each has said it is ready (its tree checked, its
    /// backend preflighted). `init` gives lane `i` its [`Init`].
    pub fn start(s: &SlurmSettings, init: &dyn Fn(usize) -> Init) -> Result<Slurm, Error> {
        let (etx, erx) = channel::<(usize, Message)>();
        let (rtx, rrx) = channel::<(usize, Result<LaneInfo, String>)>();
        let mut children = Vec::new();
        let mut stdins = Vec::new();
        for i in 0..s.lanes {
            let argv = command_line(s, i);
            let mut child = Command::new(&argv[0])
                .args(&argv[1..])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::inherit())
                .spawn()
                .map_err(|e| {
                    Error::Environment(format!(
                        "cannot start {} (the slurm executor needs Slurm's srun): {e}",
                        argv[0]
                    ))
                })?;
            let mut stdin = child.stdin.take().expect("piped");
            let line = serde_json::to_string(&init(i)).expect("an init serializes");
            let _ = writeln!(stdin, "{line}");
            let _ = stdin.flush();
            let stdout = child.stdout.take().expect("piped");
            let (etx, rtx) = (etx.clone(), rtx.clone());
            std::thread::Builder::new()
                .name(format!("hip-unroll-step-{i}"))
                .spawn(move || {
                    let mut ready = false;
                    let mut why = "its job step ended".to_string();
                    for line in BufReader::new(stdout).lines() {
                        let Ok(line) = line else { break };
                        match serde_json::from_str::<Out>(&line) {
                            Ok(Out::Ready(info)) if !ready => {
                                ready = true;
                                let _ = rtx.send((i, Ok(info)));
                            }
                            Ok(Out::Failed(m)) => {
                                why = m;
                                break;
                            }
                            Ok(Out::Event(e)) if ready => {
                                if etx.send((i, Message::Event(e))).is_err() {
                                    return;
                                }
                            }
                            _ => {
                                why = format!("it said something else than the protocol: {line}");
                                break;
                            }
                        }
                    }
                    if ready {
                        let _ = etx.send((i, Message::Lost(why)));
                    } else {
                        let _ = rtx.send((i, Err(why)));
                    }
                })
                .map_err(|e| Error::Environment(format!("cannot start a thread: {e}")))?;
            children.push(child);
            stdins.push(Mutex::new(Some(stdin)));
        }
        drop(rtx);
        let mut infos: Vec<Option<LaneInfo>> = vec![None; s.lanes];
        let mut failed = Vec::new();
        for _ in 0..s.lanes {
            match rrx.recv() {
                Ok((i, Ok(info))) => infos[i] = Some(info),
                Ok((i, Err(why))) => failed.push(format!("lane {i}: {why}")),
                Err(_) => break,
            }
        }
        let ok = failed.is_empty() && infos.iter().all(Option::is_some);
        let slurm = Slurm {
            infos: infos.into_iter().flatten().collect(),
            stdins,
            children: Mutex::new(children),
            events: Mutex::new(erx),
        };
        if !ok {
            // Dropping `slurm` ends the steps that did start.
            drop(slurm);
            return Err(Error::Environment(format!(
                "the Slurm lanes did not start: {}",
                failed.join("; ")
            )));
        }
        Ok(slurm)
    }
}

impl Executor for Slurm {
    fn lanes(&self) -> &[LaneInfo] {
        &self.infos
    }

    fn send(&self, lane: usize, task: Task) -> bool {
        let mut s = self.stdins[lane].lock().unwrap_or_else(|p| p.into_inner());
        let Some(w) = s.as_mut() else {
            return false;
        };
        let line = serde_json::to_string(&task).expect("a task serializes");
        let ok = writeln!(w, "{line}").and_then(|_| w.flush()).is_ok();
        if !ok {
            s.take();
        }
        ok
    }

    fn recv(&self, wait: Duration) -> Option<(usize, Message)> {
        let r = self.events.lock().unwrap_or_else(|p| p.into_inner());
        r.recv_timeout(wait).ok()
    }

    fn halt(&self) {
        // End of input: each worker stops between two runs and its step ends.
        for s in &self.stdins {
            s.lock().unwrap_or_else(|p| p.into_inner()).take();
        }
    }
}

impl Drop for Slurm {
    fn drop(&mut self) {
        self.halt();
        let mut children = self.children.lock().unwrap_or_else(|p| p.into_inner());
        for c in children.iter_mut() {
            // A worker ends once its input is closed; a step that does not within the bound
            // is ended by srun on SIGTERM (it cancels the step).
            let deadline = std::time::Instant::now() + Duration::from_secs(30);
            loop {
                match c.try_wait() {
                    Ok(Some(_)) | Err(_) => break,
                    Ok(None) if std::time::Instant::now() >= deadline => {
                        let _ = rustix::process::kill_process(
                            rustix::process::Pid::from_child(c),
                            rustix::process::Signal::TERM,
                        );
                        let _ = c.wait();
                        break;
                    }
                    Ok(None) => std::thread::sleep(Duration::from_millis(50)),
                }
            }
        }
    }
}
