//! The `command` backend: the figure is the wall time of `--run` (in ms), or the number that the
//! first capture group of `--time-regex` finds in its stdout or stderr (lower is better).
//! Preparing a slot runs `--build`, then `--run` (must exit 0, and print a match of the regex),
//! then `--check` (must exit 0).

use super::{Backend, Failure, Slot};
use crate::error::Error;
use crate::shell::{self, RunError};
use regex::Regex;
use std::time::Duration;

/// The commands and how the figure is read.
#[derive(Debug, Clone)]
pub struct Commands {
    pub build: String,
    pub run: String,
    pub check: Option<String>,
    /// Time limit of each command.
    pub timeout: Duration,
}

#[derive(Debug, Clone)]
pub struct CommandBackend {
    pub commands: Commands,
    pub time_regex: Option<Regex>,
    /// Unit shown for regex figures (wall time is always `ms`).
    pub regex_unit: String,
}

/// The end of a command's output, for messages: its last non-empty line.
fn tail(o: &shell::Output) -> String {
    let l = o.last_line();
    if l.is_empty() {
        o.status_text()
    } else {
        format!("{}: {l}", o.status_text())
    }
}

pub(crate) fn run_cmd(
    cmd: &str,
    slot: &Slot<'_>,
    timeout: Duration,
) -> Result<Result<shell::Output, String>, Error> {
    let expanded = shell::expand_device(cmd, slot.user_root, slot.root, slot.device.shown());
    match shell::run_with_env(
        &expanded,
        slot.root,
        timeout,
        slot.stop,
        slot.records,
        &slot.device.env,
    ) {
        Ok(o) => Ok(Ok(o)),
        Err(RunError::Interrupted) => Err(Error::Interrupted),
        Err(e @ RunError::Timeout { .. }) => Ok(Err(e.to_string())),
        Err(e @ RunError::Spawn { .. }) => Err(Error::Environment(e.to_string())),
        Err(RunError::Record { path, error }) => {
            Err(if error.kind() == std::io::ErrorKind::StorageFull {
                Error::DiskFull { path }
            } else {
                Error::StateDir {
                    path,
                    reason: crate::error::io_reason(&error),
                }
            })
        }
    }
}

/// Build and check a slot: shared by the backends that run the user's commands.
pub(crate) fn build_and_check(
    c: &Commands,
    slot: &Slot<'_>,
    run_once: impl FnOnce() -> Result<Result<(), Failure>, Error>,
) -> Result<Result<(), Failure>, Error> {
    match run_cmd(&c.build, slot, c.timeout)? {
        Err(why) => return Ok(Err(Failure::Build(why))),
        Ok(o) if !o.success() => return Ok(Err(Failure::Build(format!("build {}", tail(&o))))),
        Ok(_) => {}
    }
    if let Err(f) = run_once()? {
        return Ok(Err(f));
    }
    if let Some(check) = &c.check {
        match run_cmd(check, slot, c.timeout)? {
            Err(why) => return Ok(Err(Failure::Check(why))),
            Ok(o) if !o.success() => return Ok(Err(Failure::Check(format!("check {}", tail(&o))))),
            Ok(_) => {}
        }
    }
    Ok(Ok(()))
}

impl CommandBackend {
    /// The figure of one finished run.
    fn figure(&self, o: &shell::Output) -> Result<f64, Failure> {
        match &self.time_regex {
            None => Ok(o.wall.as_secs_f64() * 1000.0),
            Some(re) => {
                let found = re
                    .captures(&o.stdout)
                    .or_else(|| re.captures(&o.stderr))
                    .and_then(|c| c.get(1).or_else(|| c.get(0)))
                    .map(|m| m.as_str().to_string());
                let Some(text) = found else {
                    return Err(Failure::Check(format!(
                        "the time regex `{}` matched nothing in the output of the run",
                        re.as_str()
                    )));
                };
                match text.trim().parse::<f64>() {
                    Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
                    _ => Err(Failure::Check(format!(
                        "the time regex captured `{text}`, not a positive number"
                    ))),
                }
            }
        }
    }

    fn run_once(&self, slot: &Slot<'_>) -> Result<Result<f64, Failure>, Error> {
        let c = &self.commands;
        match run_cmd(&c.run, slot, c.timeout)? {
            Err(why) => Ok(Err(Failure::Check(why))),
            Ok(o) if !o.success() => Ok(Err(Failure::Check(format!("run {}", tail(&o))))),
            Ok(o) => Ok(self.figure(&o)),
        }
    }
}

impl Backend for CommandBackend {
    type Prepared = ();

    fn name(&self) -> &'static str {
        "command"
    }

    fn unit(&self) -> String {
        if self.time_regex.is_some() {
            self.regex_unit.clone()
        } else {
            "ms".into()
        }
    }

    fn preflight(&self) -> Result<(), Error> {
        crate::limits::check_timeout(self.commands.timeout)
    }

    fn prepare(
        &self,
        slot: &Slot<'_>,
        _baseline: Option<&()>,
    ) -> Result<Result<(), Failure>, Error> {
        build_and_check(&self.commands, slot, || {
            Ok(self.run_once(slot)?.map(|_| ()))
        })
    }

    fn sample(&self, slot: &Slot<'_>, _prepared: &()) -> Result<Result<f64, Failure>, Error> {
        self.run_once(slot)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::LaneDevice;
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;

    /// A lane's command sees only its device: the variables are set and `{device}` expands.
    #[test]
    fn a_lanes_commands_get_its_device() {
        let d = tempfile::tempdir().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let lane = LaneDevice::local("1");
        let slot = Slot {
            index: 0,
            root: d.path(),
            user_root: d.path(),
            stop: &stop,
            records: None,
            device: &lane,
            spec: None,
        };
        let o = run_cmd(
            "echo \"$HIP_VISIBLE_DEVICES $CUDA_VISIBLE_DEVICES {device}\"",
            &slot,
            Duration::from_secs(10),
        )
        .unwrap()
        .unwrap();
        assert_eq!(o.stdout.trim(), "1 1 1");
        let default = LaneDevice::DEFAULT;
        let slot = Slot {
            device: &default,
            ..slot
        };
        let o = run_cmd("echo \"{device}\"", &slot, Duration::from_secs(10))
            .unwrap()
            .unwrap();
        assert_eq!(o.stdout.trim(), "0");
    }
}
