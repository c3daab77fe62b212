//! Running the user's commands: `sh -c CMD` in a working copy through `childproc` (its own
//! process group, a timeout and a stop flag (Ctrl-C) that kill the whole group, its output
//! captured, its wall time taken as close to the process as the OS allows). With a records
//! directory ([`run_recorded`]) each command leaves a record of its process group for as long
//! as it runs (see [`crate::orphans`]), and on Linux the direct child is killed when the tuner
//! dies (`PR_SET_PDEATHSIG`; its own children are not reached, which is what the records are
//! for).

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

pub use childproc::{first_error_line, last_nonempty_line, Output, OUTPUT_CAP};

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

/// [`expand`], and `{device}` (the lane's device id) too.
pub fn expand_device(command: &str, root: &Path, copy: &Path, device: &str) -> String {
    let q = shlex::try_quote(device)
        .map(|c| c.into_owned())
        .unwrap_or_else(|_| format!("'{}'", device.replace('\'', "'\\''")));
    expand(command, root, copy).replace("{device}", &q)
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
    run_with_env(command, cwd, timeout, stop, records, &[])
}

/// [`run_recorded`] with `env` set for the command (a lane's device variables).
pub fn run_with_env(
    command: &str,
    cwd: &Path,
    timeout: Duration,
    stop: &Arc<AtomicBool>,
    records: Option<&Path>,
    env: &[(String, String)],
) -> Result<Output, RunError> {
    if stop.load(std::sync::atomic::Ordering::SeqCst) {
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
    let mut job = childproc::Job::new("sh", timeout)
        .args(["-c", command])
        .cwd(Some(cwd))
        .stop(stop)
        .record_fd(record.as_ref().map(|r| r.raw_fd()));
    for (k, v) in env {
        job = job.env(k, v);
    }
    let result = job.run(|pid| {
        if let Some(r) = record.as_mut() {
            r.add_start(pid);
        }
    });
    // The group has been ended (childproc kills it once its leader is gone).
    drop(record);
    result.map_err(|e| match e {
        childproc::Error::Spawn { error, .. } => RunError::Spawn {
            command: command.to_string(),
            error,
        },
        childproc::Error::Timeout { limit } => RunError::Timeout {
            command: command.to_string(),
            secs: limit.as_secs(),
        },
        childproc::Error::Interrupted => RunError::Interrupted,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::Ordering;
    use std::time::Instant;

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
