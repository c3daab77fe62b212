//! Running the user's commands: `sh -c CMD` in a working copy, in its own process group, with
//! a timeout and a stop flag (Ctrl-C) that kill the whole group, its output captured, and its
//! wall time taken as close to the process as the OS allows (a waiting thread notes the instant
//! `wait` returns). With a records directory ([`run_recorded`]) each command leaves a record of
//! its process group for as long as it runs (see [`crate::orphans`]), and on Linux the direct
//! child is killed when the tuner dies (`PR_SET_PDEATHSIG`; its own children are not reached,
//! which is what the records are for).

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

/// Keep at most this much of each output stream (the tail).
pub const OUTPUT_CAP: usize = 8 << 20;

/// A finished command.
#[derive(Debug, Clone)]
pub struct Output {
    /// Exit code; `None` when a signal ended it.
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub wall: Duration,
}

impl Output {
    pub fn success(&self) -> bool {
        self.code == Some(0)
    }

    /// `exit 3` / `killed by a signal`.
    pub fn status_text(&self) -> String {
        match self.code {
            Some(c) => format!("exit {c}"),
            None => "killed by a signal".to_string(),
        }
    }

    /// The last non-empty line of stderr, else of stdout (for one-line messages).
    pub fn last_line(&self) -> String {
        last_nonempty_line(&self.stderr)
            .or_else(|| last_nonempty_line(&self.stdout))
            .unwrap_or_default()
    }

    /// The first line that looks like an error (`error:`), else the first non-empty line of stderr.
    pub fn first_error_line(&self) -> String {
        first_error_line(&self.stderr)
            .or_else(|| first_error_line(&self.stdout))
            .unwrap_or_default()
    }
}

pub fn last_nonempty_line(s: &str) -> Option<String> {
    s.lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(str::to_string)
}

/// The first line containing `error` (compilers' `file:line: error: ...`), else the first line.
pub fn first_error_line(s: &str) -> Option<String> {
    s.lines()
        .map(str::trim)
        .find(|l| l.contains("error"))
        .or_else(|| s.lines().map(str::trim).find(|l| !l.is_empty()))
        .map(str::to_string)
}

/// Why a command did not finish.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("cannot start `sh -c {command}`: {error}")]
    Spawn {
        command: String,
        error: std::io::Error,
    },
    #[error("`{command}` ran longer than {secs} s and was killed")]
    Timeout { command: String, secs: u64 },
    #[error("interrupted")]
    Interrupted,
    #[error("cannot record the command's process group in {path}: {error}")]
    Record { path: String, error: std::io::Error },
}

/// Substitute `{root}` (the user's tree) and `{copy}` (the working copy) in a command,
/// shell-quoted.
pub fn expand(command: &str, root: &Path, copy: &Path) -> String {
    let q = |p: &Path| {
        let s = p.to_string_lossy().into_owned();
        shlex::try_quote(&s)
            .map(|c| c.into_owned())
            .unwrap_or_else(|_| format!("'{}'", s.replace('\'', "'\\''")))
    };
    command
        .replace("{root}", &q(root))
        .replace("{copy}", &q(copy))
}

fn reader(mut r: impl Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        let mut chunk = [0u8; 64 * 1024];
        loop {
            match r.read(&mut chunk) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    buf.extend_from_slice(&chunk[..n]);
                    if buf.len() > 2 * OUTPUT_CAP {
                        buf.drain(..buf.len() - OUTPUT_CAP);
                    }
                }
            }
        }
        if buf.len() > OUTPUT_CAP {
            buf.drain(..buf.len() - OUTPUT_CAP);
        }
        String::from_utf8_lossy(&buf).into_owned()
    })
}

/// SIGKILL the process group `pid` leads (nothing for pid 0 or 1).
pub(crate) fn kill_group(pid: u32) {
    if let Some(pgid) = i32::try_from(pid)
        .ok()
        .filter(|&p| p > 1)
        .and_then(rustix::process::Pid::from_raw)
    {
        let _ = rustix::process::kill_process_group(pgid, rustix::process::Signal::KILL);
    }
}

/// In the forked child, before exec: die with the tuner (Linux), then record the group.
fn child_setup(parent: u32, record_fd: Option<std::os::fd::RawFd>) -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL))?;
        // The tuner may have died before the line above: then nobody would send the signal.
        if rustix::process::getppid().map(|p| p.as_raw_pid() as u32) != Some(parent) {
            return Err(rustix::io::Errno::SRCH.into());
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = parent;
    if let Some(fd) = record_fd {
        let pid = rustix::process::getpid().as_raw_pid() as u32;
        crate::orphans::write_pgid_line(fd, pid)?;
    }
    Ok(())
}

/// Run `sh -c command` in `cwd`. Stdin is empty. A set `stop` flag or the timeout kill the
/// command's process group.
pub fn run(
    command: &str,
    cwd: &Path,
    timeout: Duration,
    stop: &Arc<AtomicBool>,
) -> Result<Output, RunError> {
    run_recorded(command, cwd, timeout, stop, None)
}

/// [`run`], and with `records` a record of the command's process group in that directory,
/// written by the child before it execs and removed once the group has been ended (see
/// [`crate::orphans`]).
pub fn run_recorded(
    command: &str,
    cwd: &Path,
    timeout: Duration,
    stop: &Arc<AtomicBool>,
    records: Option<&Path>,
) -> Result<Output, RunError> {
    use std::os::unix::process::CommandExt;
    if stop.load(Ordering::SeqCst) {
        return Err(RunError::Interrupted);
    }
    let mut record = records
        .map(|dir| {
            crate::orphans::Record::create(dir).map_err(|error| RunError::Record {
                path: dir.display().to_string(),
                error,
            })
        })
        .transpose()?;
    let record_fd = record.as_ref().map(|r| r.raw_fd());
    let parent = std::process::id();
    let t0 = Instant::now();
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(command)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    // SAFETY: the hook runs in the forked child before exec and only makes system calls
    // (prctl, getppid, getpid, write) on stack data: no allocation, no lock.
    unsafe {
        cmd.pre_exec(move || child_setup(parent, record_fd));
    }
    let mut child = cmd.spawn().map_err(|error| RunError::Spawn {
        command: command.to_string(),
        error,
    })?;
    let pid = child.id();
    if let Some(r) = record.as_mut() {
        r.add_start(pid);
    }
    let out = reader(child.stdout.take().expect("piped"));
    let err = reader(child.stderr.take().expect("piped"));
    let (tx, rx) = mpsc::channel();
    let waiter = std::thread::spawn(move || {
        let status = child.wait();
        let wall = t0.elapsed();
        let _ = tx.send(());
        (status, wall)
    });
    let mut killed: Option<RunError> = None;
    loop {
        match rx.recv_timeout(Duration::from_millis(25)) {
            Ok(()) | Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if killed.is_some() {
                    continue;
                }
                if stop.load(Ordering::SeqCst) {
                    kill_group(pid);
                    killed = Some(RunError::Interrupted);
                } else if t0.elapsed() >= timeout {
                    kill_group(pid);
                    killed = Some(RunError::Timeout {
                        command: command.to_string(),
                        secs: timeout.as_secs(),
                    });
                }
            }
        }
    }
    let (status, wall) = waiter.join().expect("waiter thread");
    // A group member that outlives `sh` would keep the pipes open: end the group first.
    kill_group(pid);
    drop(record);
    let stdout = out.join().unwrap_or_default();
    let stderr = err.join().unwrap_or_default();
    if let Some(e) = killed {
        return Err(e);
    }
    let status = status.map_err(|error| RunError::Spawn {
        command: command.to_string(),
        error,
    })?;
    Ok(Output {
        code: status.code(),
        stdout,
        stderr,
        wall,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_stop() -> Arc<AtomicBool> {
        Arc::new(AtomicBool::new(false))
    }

    #[test]
    fn captures_output_status_and_time() {
        let d = tempfile::tempdir().unwrap();
        let o = run(
            "echo out; echo err >&2; sleep 0.2; exit 3",
            d.path(),
            Duration::from_secs(10),
            &no_stop(),
        )
        .unwrap();
        assert_eq!(o.code, Some(3));
        assert_eq!(o.stdout, "out\n");
        assert_eq!(o.stderr, "err\n");
        assert!(o.wall >= Duration::from_millis(200), "{:?}", o.wall);
        assert!(o.wall < Duration::from_secs(5));
        assert_eq!(o.last_line(), "err");
    }

    #[test]
    fn runs_in_the_given_directory() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("f.txt"), "hello").unwrap();
        let o = run("cat f.txt", d.path(), Duration::from_secs(10), &no_stop()).unwrap();
        assert_eq!(o.stdout, "hello");
    }

    #[test]
    fn timeout_kills_the_whole_group() {
        let d = tempfile::tempdir().unwrap();
        let t0 = Instant::now();
        // The grandchild holds stdout open: the group kill must end it too.
        let e = run(
            "sleep 30 & sleep 30",
            d.path(),
            Duration::from_millis(300),
            &no_stop(),
        )
        .unwrap_err();
        assert!(matches!(e, RunError::Timeout { .. }), "{e}");
        assert!(t0.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn stop_flag_interrupts() {
        let d = tempfile::tempdir().unwrap();
        let stop = no_stop();
        let s2 = stop.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(200));
            s2.store(true, Ordering::SeqCst);
        });
        let t0 = Instant::now();
        let e = run("sleep 30", d.path(), Duration::from_secs(60), &stop).unwrap_err();
        assert!(matches!(e, RunError::Interrupted));
        assert!(t0.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn placeholders_are_shell_quoted() {
        let c = expand(
            "cp {root}/a {copy}/b",
            Path::new("/tmp/my dir"),
            Path::new("/x/it's"),
        );
        assert_eq!(c, "cp '/tmp/my dir'/a \"/x/it's\"/b");
        let d = tempfile::tempdir().unwrap();
        let sub = d.path().join("a b;echo pwned");
        std::fs::create_dir(&sub).unwrap();
        let o = run(
            &expand("ls {root}", &sub, d.path()),
            d.path(),
            Duration::from_secs(10),
            &no_stop(),
        )
        .unwrap();
        assert!(o.success(), "{o:?}");
        assert!(!o.stdout.contains("pwned"));
    }
}
