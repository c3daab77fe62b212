//! `childproc` with real processes: output, status, time limit and stop flag kill the whole
//! group, and a `kill -9` of the parent takes the program's own children with it only with
//! `group_dies_with_parent` (the parent is this test binary re-run as a helper).

use childproc::{Error, Job};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

fn sh(script: &str, timeout: Duration) -> Job<'static> {
    Job::new("sh", timeout).args(["-c", script])
}

#[test]
fn captures_output_status_and_time() {
    for guard in [false, true] {
        let mut job = sh(
            "echo out; echo err >&2; sleep 0.2; exit 3",
            Duration::from_secs(10),
        );
        job.group_dies_with_parent = guard;
        let o = job.run(|_| {}).unwrap();
        assert_eq!(o.code, Some(3), "guard {guard}");
        assert_eq!(o.stdout, "out\n");
        assert_eq!(o.stderr, "err\n");
        assert!(o.wall >= Duration::from_millis(200), "{:?}", o.wall);
        assert_eq!(o.last_line(), "err");
    }
}

#[test]
fn environment_and_directory_are_the_jobs() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("f.txt"), "hello").unwrap();
    let o = sh("cat f.txt; echo \" $HU_X\"", Duration::from_secs(10))
        .cwd(Some(d.path()))
        .env("HU_X", "y")
        .group_dies_with_parent()
        .run(|_| {})
        .unwrap();
    assert_eq!(o.stdout, "hello y\n");
}

#[test]
fn a_missing_program_is_a_start_error_with_or_without_the_guard() {
    for guard in [false, true] {
        let mut job = Job::new("/nonexistent/hu-cc", Duration::from_secs(10));
        job.group_dies_with_parent = guard;
        let e = job.run(|_| {}).unwrap_err();
        assert!(
            matches!(&e, Error::Spawn { error, .. } if error.kind() == std::io::ErrorKind::NotFound),
            "{e:?}"
        );
    }
}

#[test]
fn timeout_kills_the_whole_group() {
    for guard in [false, true] {
        let t0 = Instant::now();
        // The grandchild holds stdout open: the group kill must end it too.
        let mut job = sh("sleep 30 & sleep 30", Duration::from_millis(300));
        job.group_dies_with_parent = guard;
        let e = job.run(|_| {}).unwrap_err();
        assert!(matches!(e, Error::Timeout { .. }), "{e}");
        assert_eq!(e.to_string(), "ran longer than 0.3 s and was killed");
        assert!(t0.elapsed() < Duration::from_secs(5));
    }
}

#[test]
fn stop_flag_interrupts() {
    static STOP: AtomicBool = AtomicBool::new(false);
    std::thread::spawn(|| {
        std::thread::sleep(Duration::from_millis(200));
        STOP.store(true, Ordering::SeqCst);
    });
    let t0 = Instant::now();
    let e = sh("sleep 30", Duration::from_secs(60))
        .stop(&STOP)
        .run(|_| {})
        .unwrap_err();
    assert!(matches!(e, Error::Interrupted));
    assert!(t0.elapsed() < Duration::from_secs(5));
}

#[test]
fn first_error_line_prefers_an_error() {
    let log = "In file included from k.cu:1:\nk.cu:3:5: error: use of undeclared identifier 'x'\n    x = 1;\n    ^\n1 error generated.\n";
    assert_eq!(
        childproc::first_error_line(log).as_deref(),
        Some("k.cu:3:5: error: use of undeclared identifier 'x'")
    );
    assert_eq!(
        childproc::first_error_line("\n  warn\n").as_deref(),
        Some("warn")
    );
    assert_eq!(childproc::first_error_line(""), None);
}

fn alive(pid: u32) -> bool {
    // A zombie is dead for this purpose.
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(s) => !s
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z'),
        Err(_) => false,
    }
}

fn wait_for(path: &Path) -> String {
    let t0 = Instant::now();
    loop {
        if let Ok(s) = std::fs::read_to_string(path) {
            if s.ends_with('\n') {
                return s;
            }
        }
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "{} never written",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `examples/hold_group`, built by `cargo test` beside the test binary.
fn helper() -> std::path::PathBuf {
    let exe = std::env::current_exe().unwrap();
    let p = exe
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("examples/hold_group");
    assert!(p.is_file(), "{} not built", p.display());
    p
}

fn kill_9_parent(guard: bool) -> (u32, bool) {
    let d = tempfile::tempdir().unwrap();
    let pidfile = d.path().join("pid");
    let mut helper = std::process::Command::new(helper())
        .arg(&pidfile)
        .arg(if guard { "guard" } else { "no-guard" })
        .spawn()
        .unwrap();
    let pid: u32 = wait_for(&pidfile).trim().parse().unwrap();
    assert!(alive(pid));
    helper.kill().unwrap(); // SIGKILL
    helper.wait().unwrap();
    let t0 = Instant::now();
    while alive(pid) && t0.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let survived = alive(pid);
    if survived {
        let _ = rustix::process::kill_process(
            rustix::process::Pid::from_raw(pid as i32).unwrap(),
            rustix::process::Signal::KILL,
        );
    }
    (pid, survived)
}

#[test]
fn parent_kill_9_takes_the_grandchildren_with_the_guard() {
    let (pid, survived) = kill_9_parent(true);
    assert!(
        !survived,
        "grandchild {pid} outlived a kill -9 of its parent"
    );
}

/// The control: the parent-death signal alone only reaches the direct child (this is what the
/// guard is for, and what shows the test above can fail).
#[test]
fn parent_kill_9_leaves_grandchildren_without_the_guard() {
    let (pid, survived) = kill_9_parent(false);
    assert!(
        survived,
        "grandchild {pid} died without the guard: the control proves nothing"
    );
}
