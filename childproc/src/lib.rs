//! Child processes that cannot outlive hip-unroll: each runs in its own process group, gets a
//! signal when the thread that started it dies (`PR_SET_PDEATHSIG`, Linux), is killed with its
//! whole group at a time limit or when a stop flag is set (Ctrl-C), and has its output captured
//! (the tail, capped) and its wall time taken as close to the process as the OS allows (a
//! waiting thread notes the instant `wait` returns).
//!
//! The parent-death signal only reaches the direct child. With [`Job::group_dies_with_parent`]
//! the program runs under a tiny `sh` that receives SIGTERM when hip-unroll dies and then
//! SIGKILLs its whole group, so that what the program started (hipcc's `sh` and `clang`) dies
//! too, even after a `kill -9` of hip-unroll. Without it, the caller keeps records of the groups
//! it starts ([`Job::record_fd`]) for the next run to end (the tuner's `orphans`).
//!
//! Used by `codeobj::compile` (compilers) and the tuner's `shell` (the user's commands).

use std::ffi::{OsStr, OsString};
use std::io::Read;
use std::os::fd::RawFd;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Keep at most this much of each output stream (the tail).
pub const OUTPUT_CAP: usize = 8 << 20;

/// The script of the guard `sh` ([`Job::group_dies_with_parent`]): the program runs in the
/// background so that `wait` can be interrupted by the trapped SIGTERM; the trap is in place
/// before the program starts.
const GUARD: &str = "trap 'kill -9 0' TERM; \"$@\" & wait $!";

/// One process to run.
#[derive(Debug, Clone)]
pub struct Job<'a> {
    pub program: OsString,
    pub args: Vec<OsString>,
    /// `None`: the current directory.
    pub cwd: Option<PathBuf>,
    /// Variables set for the child (on top of the inherited environment).
    pub env: Vec<(OsString, OsString)>,
    pub timeout: Duration,
    /// When set (Ctrl-C), the group is killed and the run is [`Error::Interrupted`].
    pub stop: Option<&'a AtomicBool>,
    /// A descriptor the child writes `pgid <n>\n` to before it execs (no allocation, so no
    /// kill of the parent can leave a started group unrecorded).
    pub record_fd: Option<RawFd>,
    /// Kill the whole group, not only the direct child, when the parent dies.
    pub group_dies_with_parent: bool,
}

impl<'a> Job<'a> {
    pub fn new(program: impl Into<OsString>, timeout: Duration) -> Job<'a> {
        Job {
            program: program.into(),
            args: Vec::new(),
            cwd: None,
            env: Vec::new(),
            timeout,
            stop: None,
            record_fd: None,
            group_dies_with_parent: false,
        }
    }

    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.args
            .extend(args.into_iter().map(|a| a.as_ref().to_os_string()));
        self
    }

    pub fn cwd(mut self, dir: Option<&Path>) -> Self {
        self.cwd = dir.map(Path::to_path_buf);
        self
    }

    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }

    pub fn stop(mut self, stop: &'a AtomicBool) -> Self {
        self.stop = Some(stop);
        self
    }

    pub fn record_fd(mut self, fd: Option<RawFd>) -> Self {
        self.record_fd = fd;
        self
    }

    pub fn group_dies_with_parent(mut self) -> Self {
        self.group_dies_with_parent = true;
        self
    }

    /// Run to the end, the time limit or the stop flag. `on_start` gets the group's id (the
    /// direct child's pid) as soon as it runs.
    pub fn run(&self, on_start: impl FnOnce(u32)) -> Result<Output, Error> {
        run(self, on_start)
    }
}

/// A finished process.
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

    /// The first line that looks like an error, else the first non-empty line of stderr, else
    /// the same of stdout.
    pub fn first_error_line(&self) -> String {
        first_error_line(&self.stderr)
            .or_else(|| first_error_line(&self.stdout))
            .unwrap_or_default()
    }
}

/// Why a process did not finish.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot start {program}: {error}")]
    Spawn {
        program: String,
        error: std::io::Error,
    },
    #[error("ran longer than {} s and was killed", secs(*.limit))]
    Timeout { limit: Duration },
    #[error("interrupted")]
    Interrupted,
}

/// Seconds, as few digits as needed (`600`, `0.5`).
pub fn secs(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{}", d.as_secs())
    } else {
        format!("{s:.3}")
            .trim_end_matches('0')
            .trim_end_matches('.')
            .to_string()
    }
}

pub fn last_nonempty_line(s: &str) -> Option<String> {
    s.lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(str::to_string)
}

/// The first line with an `error` (compilers' `file:line:col: error: ...`, `clang: error:`,
/// `fatal error:`), else the first non-empty line.
pub fn first_error_line(s: &str) -> Option<String> {
    s.lines()
        .map(str::trim)
        .find(|l| l.contains("error"))
        .or_else(|| s.lines().map(str::trim).find(|l| !l.is_empty()))
        .map(str::to_string)
}

/// SIGKILL the process group `pid` leads (nothing for pid 0 or 1).
pub fn kill_group(pid: u32) {
    if let Some(pgid) = i32::try_from(pid)
        .ok()
        .filter(|&p| p > 1)
        .and_then(rustix::process::Pid::from_raw)
    {
        let _ = rustix::process::kill_process_group(pgid, rustix::process::Signal::KILL);
    }
}

/// Write `pgid <pid>\n` to `fd` without allocating: called in the forked child before exec
/// ([`Job::record_fd`]).
pub fn write_pgid_line(fd: RawFd, pid: u32) -> std::io::Result<()> {
    let mut buf = [0u8; 32];
    let head = b"pgid ";
    buf[..head.len()].copy_from_slice(head);
    let mut digits = [0u8; 10];
    let mut n = pid;
    let mut len = 0;
    loop {
        digits[len] = b'0' + (n % 10) as u8;
        len += 1;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    let mut at = head.len();
    for i in (0..len).rev() {
        buf[at] = digits[i];
        at += 1;
    }
    buf[at] = b'\n';
    at += 1;
    // SAFETY: `fd` is a descriptor the parent keeps open for the child's lifetime.
    let file = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
    let mut written = 0;
    while written < at {
        written += rustix::io::write(file, &buf[written..at])?;
    }
    Ok(())
}

/// In the forked child, before exec: get `signal` when the parent thread dies (Linux), then
/// record the group.
fn child_setup(
    parent: u32,
    signal: rustix::process::Signal,
    record_fd: Option<RawFd>,
) -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        rustix::process::set_parent_process_death_signal(Some(signal))?;
        // The parent may have died before the line above: then nobody would send the signal.
        if rustix::process::getppid().map(|p| p.as_raw_pid() as u32) != Some(parent) {
            return Err(rustix::io::Errno::SRCH.into());
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (parent, signal);
    if let Some(fd) = record_fd {
        let pid = rustix::process::getpid().as_raw_pid() as u32;
        write_pgid_line(fd, pid)?;
    }
    Ok(())
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

/// The file `program` runs: itself when it names a path, else the first match on `PATH`.
pub fn resolve_program(program: &OsStr) -> Option<PathBuf> {
    let p = Path::new(program);
    if p.components().count() > 1 || program.as_encoded_bytes().contains(&b'/') {
        return p.is_file().then(|| p.to_path_buf());
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

fn run(job: &Job, on_start: impl FnOnce(u32)) -> Result<Output, Error> {
    use std::os::unix::process::CommandExt;
    let program = job.program.to_string_lossy().into_owned();
    if job.stop.is_some_and(|s| s.load(Ordering::SeqCst)) {
        return Err(Error::Interrupted);
    }
    let (mut cmd, signal) = if job.group_dies_with_parent {
        // Under `sh`, a missing program would be `exit 127`: say so as a start error instead.
        if resolve_program(&job.program).is_none() {
            return Err(Error::Spawn {
                program,
                error: std::io::Error::new(std::io::ErrorKind::NotFound, "not found"),
            });
        }
        let mut c = Command::new("sh");
        c.arg("-c")
            .arg(GUARD)
            .arg("sh")
            .arg(&job.program)
            .args(&job.args);
        (c, rustix::process::Signal::TERM)
    } else {
        let mut c = Command::new(&job.program);
        c.args(&job.args);
        (c, rustix::process::Signal::KILL)
    };
    if let Some(dir) = &job.cwd {
        cmd.current_dir(dir);
    }
    for (k, v) in &job.env {
        cmd.env(k, v);
    }
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let parent = std::process::id();
    let record_fd = job.record_fd;
    // SAFETY: the hook runs in the forked child before exec and only makes system calls
    // (prctl, getppid, getpid, write) on stack data: no allocation, no lock.
    unsafe {
        cmd.pre_exec(move || child_setup(parent, signal, record_fd));
    }
    let t0 = Instant::now();
    let mut child = cmd.spawn().map_err(|error| Error::Spawn {
        program: program.clone(),
        error,
    })?;
    let pid = child.id();
    on_start(pid);
    let out = reader(child.stdout.take().expect("piped"));
    let err = reader(child.stderr.take().expect("piped"));
    let (tx, rx) = mpsc::channel();
    let waiter = std::thread::spawn(move || {
        let status = child.wait();
        let wall = t0.elapsed();
        let _ = tx.send(());
        (status, wall)
    });
    let mut killed: Option<Error> = None;
    loop {
        match rx.recv_timeout(Duration::from_millis(25)) {
            Ok(()) | Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if killed.is_some() {
                    continue;
                }
                if job.stop.is_some_and(|s| s.load(Ordering::SeqCst)) {
                    kill_group(pid);
                    killed = Some(Error::Interrupted);
                } else if t0.elapsed() >= job.timeout {
                    kill_group(pid);
                    killed = Some(Error::Timeout { limit: job.timeout });
                }
            }
        }
    }
    let (status, wall) = waiter.join().expect("waiter thread");
    // A group member that outlives the leader would keep the pipes open: end the group first.
    kill_group(pid);
    let stdout = out.join().unwrap_or_default();
    let stderr = err.join().unwrap_or_default();
    if let Some(e) = killed {
        return Err(e);
    }
    let status = status.map_err(|error| Error::Spawn { program, error })?;
    Ok(Output {
        code: status.code(),
        stdout,
        stderr,
        wall,
    })
}
