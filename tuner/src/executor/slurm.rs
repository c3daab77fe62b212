//! Lanes as `hip-unroll tune-worker` processes ([`Workers`]), each speaking the
//! [`super::worker`] protocol over its stdin and stdout (its stderr is this process's), started
//! by a [`Launcher`]:
//! - [`Launcher::Srun`]: Slurm job steps, each
//!   `srun --ntasks=1 --gres=gpu:1 [--exclusive] --job-name=hip-unroll-lane-N ARGS... PROGRAM
//!   tune-worker` (`--exclusive` inside an allocation only). Inside an allocation (`salloc`,
//!   `sbatch`) the steps run in it; outside one, each srun makes its own job. Slurm schedules,
//!   places and cancels: there is no scheduler and no ssh here.
//! - [`Launcher::Direct`]: `PROGRAM tune-worker` on this machine, one per `--devices` id, with
//!   that id in `HIP_VISIBLE_DEVICES`, `CUDA_VISIBLE_DEVICES` and `ROCR_VISIBLE_DEVICES` (the
//!   HSA runtime's), for backends that need a process per device
//!   ([`crate::backend::spec::BackendSpec::needs_own_process`]: replay reserves the captured
//!   addresses in its process). Like a step, the process sees only its GPU: device 0.
//!
//! A worker that ends (`scancel`, a node failure, a time limit, a killed process) is a
//! [`Message::Lost`] lane: the search measures its comparison in flight again elsewhere.

use super::worker::{Init, Out};
use super::{Executor, LaneInfo, Message};
use crate::error::Error;
use crate::lane::{Device, Task};
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

/// How lanes are started as processes on this machine.
#[derive(Debug, Clone)]
pub struct DirectSettings {
    /// The `hip-unroll` binary each lane runs.
    pub program: PathBuf,
    /// One lane per device (each with an id).
    pub devices: Vec<Device>,
}

/// How the worker processes are started.
#[derive(Debug, Clone)]
pub enum Launcher {
    /// Slurm job steps.
    Srun(SlurmSettings),
    /// Processes on this machine, one per device.
    Direct(DirectSettings),
}

impl Launcher {
    /// How many lanes it starts.
    pub fn lanes(&self) -> usize {
        match self {
            Launcher::Srun(s) => s.lanes,
            Launcher::Direct(d) => d.devices.len(),
        }
    }

    /// The command line of lane `i`.
    pub fn command_line(&self, i: usize) -> Vec<String> {
        match self {
            Launcher::Srun(s) => command_line(s, i),
            Launcher::Direct(d) => vec![d.program.display().to_string(), "tune-worker".into()],
        }
    }

    /// The variables lane `i`'s process gets on top of this one's.
    pub fn env(&self, i: usize) -> Vec<(&'static str, String)> {
        match self {
            // Slurm sets the step's device variables.
            Launcher::Srun(_) => Vec::new(),
            Launcher::Direct(d) => {
                let id = d.devices[i].id.clone().unwrap_or_else(|| "0".into());
                [
                    "HIP_VISIBLE_DEVICES",
                    "CUDA_VISIBLE_DEVICES",
                    "ROCR_VISIBLE_DEVICES",
                ]
                .into_iter()
                .map(|k| (k, id.clone()))
                .collect()
            }
        }
    }

    /// What a lane is, in messages.
    fn what(&self) -> &'static str {
        match self {
            Launcher::Srun(_) => "job step",
            Launcher::Direct(_) => "worker process",
        }
    }
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

/// Lanes running as worker processes (job steps, or processes on this machine).
pub struct Workers {
    infos: Vec<LaneInfo>,
    stdins: Vec<Mutex<Option<ChildStdin>>>,
    children: Mutex<Vec<Child>>,
    events: Mutex<Receiver<(usize, Message)>>,
}

impl Workers {
    /// Start every lane and wait until each has said it is ready (its tree checked, its
    /// backend preflighted). `init` gives lane `i` its [`Init`].
    pub fn start(launcher: &Launcher, init: &dyn Fn(usize) -> Init) -> Result<Workers, Error> {
        let (etx, erx) = channel::<(usize, Message)>();
        let (rtx, rrx) = channel::<(usize, Result<LaneInfo, String>)>();
        let mut children = Vec::new();
        let mut stdins = Vec::new();
        let lanes = launcher.lanes();
        let what = launcher.what();
        for i in 0..lanes {
            let argv = launcher.command_line(i);
            let mut child = Command::new(&argv[0])
                .args(&argv[1..])
                .envs(launcher.env(i))
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::inherit())
                .spawn()
                .map_err(|e| {
                    Error::Environment(match launcher {
                        Launcher::Srun(_) => format!(
                            "cannot start {} (the slurm executor needs Slurm's srun): {e}",
                            argv[0]
                        ),
                        Launcher::Direct(_) => format!("cannot start {}: {e}", argv[0]),
                    })
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
                    let mut why = format!("its {what} ended");
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
                                if etx
                                    .send((i, Message::Event(e, std::time::Instant::now())))
                                    .is_err()
                                {
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
        let mut infos: Vec<Option<LaneInfo>> = vec![None; lanes];
        let mut failed = Vec::new();
        for _ in 0..lanes {
            match rrx.recv() {
                Ok((i, Ok(info))) => infos[i] = Some(info),
                Ok((i, Err(why))) => failed.push(format!("lane {i}: {why}")),
                Err(_) => break,
            }
        }
        let ok = failed.is_empty() && infos.iter().all(Option::is_some);
        let workers = Workers {
            infos: infos.into_iter().flatten().collect(),
            stdins,
            children: Mutex::new(children),
            events: Mutex::new(erx),
        };
        if !ok {
            // Dropping `workers` ends the lanes that did start.
            drop(workers);
            return Err(Error::Environment(format!(
                "the {} lanes did not start: {}",
                match launcher {
                    Launcher::Srun(_) => "Slurm",
                    Launcher::Direct(_) => "worker process",
                },
                failed.join("; ")
            )));
        }
        Ok(workers)
    }
}

impl Executor for Workers {
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

impl Drop for Workers {
    fn drop(&mut self) {
        self.halt();
        let mut children = self.children.lock().unwrap_or_else(|p| p.into_inner());
        for c in children.iter_mut() {
            // A worker ends once its input is closed; one that does not within the bound gets
            // SIGTERM (srun then cancels its step).
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

#[cfg(test)]
mod tests {
    use super::*;

    fn device(id: &str) -> Device {
        Device {
            model: "AMD gfx90a".into(),
            id: Some(id.into()),
            host: "h".into(),
        }
    }

    #[test]
    fn a_direct_lane_runs_the_worker_itself_with_its_device_variables() {
        let l = Launcher::Direct(DirectSettings {
            program: "/bin/hip-unroll".into(),
            devices: vec![device("2"), device("5")],
        });
        assert_eq!(l.lanes(), 2);
        assert_eq!(l.command_line(1), ["/bin/hip-unroll", "tune-worker"]);
        assert_eq!(
            l.env(1),
            [
                ("HIP_VISIBLE_DEVICES", "5".to_string()),
                ("CUDA_VISIBLE_DEVICES", "5".to_string()),
                ("ROCR_VISIBLE_DEVICES", "5".to_string()),
            ]
        );
    }

    #[test]
    fn a_slurm_lane_is_an_srun_step_and_slurm_sets_its_device() {
        let l = Launcher::Srun(SlurmSettings {
            lanes: 3,
            args: vec!["--qos=high".into()],
            program: "/bin/hip-unroll".into(),
            srun: "srun".into(),
            in_allocation: true,
        });
        assert_eq!(l.lanes(), 3);
        assert_eq!(
            l.command_line(2),
            [
                "srun",
                "--ntasks=1",
                "--gres=gpu:1",
                "--exclusive",
                "--job-name=hip-unroll-lane-2",
                "--qos=high",
                "/bin/hip-unroll",
                "tune-worker"
            ]
        );
        assert!(l.env(0).is_empty());
    }
}
