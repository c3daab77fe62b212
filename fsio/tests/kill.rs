//! The test points fire for real: a child armed to kill itself at its second hit dies by
//! SIGKILL there (and not before); one armed to stop is seen stopped, then continues.
#![allow(clippy::print_stdout, clippy::print_stderr, clippy::exit)]

use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};

fn child(spec: &str, hits: u32) -> Command {
    let mut c = Command::new(std::env::current_exe().unwrap());
    c.args([
        "--exact",
        "child_body",
        "--ignored",
        "--nocapture",
        "--test-threads=1",
    ])
    .env("FSIO_CHILD_HITS", hits.to_string())
    .env(fsio::testpoint::ENV, spec);
    c
}

/// Not a test of its own: the body the other tests run in a child process (ignored, so the
/// suite never runs it directly).
#[test]
#[ignore = "the child process of the other tests"]
fn child_body() {
    let n: u32 = std::env::var("FSIO_CHILD_HITS").unwrap().parse().unwrap();
    for i in 1..=n {
        eprintln!("before {i}");
        fsio::testpoint::hit("p");
        eprintln!("after {i}");
    }
}

#[test]
fn kill_fires_on_the_nth_hit() {
    let out = child("p=kill@2", 3).output().unwrap();
    assert_eq!(out.status.signal(), Some(libc::SIGKILL), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("after 1"), "{err}");
    assert!(err.contains("before 2"), "{err}");
    assert!(!err.contains("after 2"), "{err}");
}

#[test]
fn unarmed_points_do_nothing() {
    let out = child("other=kill", 3).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("after 3"));
}

#[test]
fn stop_waits_for_sigcont() {
    let c = child("p=stop@1", 1).stderr(Stdio::piped()).spawn().unwrap();
    let pid = c.id() as i32;
    // Wait until the child is stopped (state T in /proc), then let it go on.
    let stat = format!("/proc/{pid}/stat");
    let mut stopped = false;
    for _ in 0..2000 {
        let s = std::fs::read_to_string(&stat).unwrap_or_default();
        if s.rsplit(')')
            .next()
            .is_some_and(|r| r.trim_start().starts_with('T'))
        {
            stopped = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert!(stopped, "the child never stopped at the test point");
    unsafe { libc::kill(pid, libc::SIGCONT) };
    let out = c.wait_with_output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("testpoint p stop") && err.contains("after 1"),
        "{err}"
    );
}
