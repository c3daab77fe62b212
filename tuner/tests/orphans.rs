//! A `tune` killed with SIGKILL while a command runs in a working copy: the command's
//! background process keeps writing there. The next start ([`tuner::orphans::reap`]) must kill
//! that process group before anything runs, and must leave alone an unrelated process whose id
//! a stale record names (a recycled pid).

#![cfg(target_os = "linux")]

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tuner::orphans;

const HELPER_ENV: &str = "TUNER_ORPHANS_HELPER_STATE";

/// The command of the killed tune: a background loop (a grandchild of the tuner) appending to
/// a file of the working copy, and a foreground command that outlives the test.
const COMMAND: &str = "(while :; do echo x >> out.txt; sleep 0.02; done) & sleep 300";

/// Run by the test below in a child process that it then kills with SIGKILL: the tuner's part
/// (a recorded command in slot 0 of the state directory named by the environment).
#[test]
#[ignore = "helper process of killed_tune_leaves_no_orphan_and_spares_a_recycled_pid"]
fn helper_tuner_running_a_command() {
    let Some(state) = std::env::var_os(HELPER_ENV) else {
        return;
    };
    let state = PathBuf::from(state);
    let tree = state.join("slots/0/tree");
    let stop = Arc::new(AtomicBool::new(false));
    let _ = tuner::shell::run_recorded(
        COMMAND,
        &tree,
        Duration::from_secs(600),
        &stop,
        Some(&orphans::records_dir(&state)),
    );
}

/// Live (not zombie) processes of group `pgid`.
fn members(pgid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let f: Vec<&str> = stat[stat.rfind(')').unwrap() + 1..]
            .split_whitespace()
            .collect();
        if f[2].parse::<u32>().unwrap() == pgid && !matches!(f[0], "Z" | "X") {
            out.push(pid);
        }
    }
    out
}

fn size(p: &Path) -> u64 {
    std::fs::metadata(p).map(|m| m.len()).unwrap_or(0)
}

fn wait_for(what: &str, mut f: impl FnMut() -> bool) {
    let t0 = Instant::now();
    while !f() {
        assert!(t0.elapsed() < Duration::from_secs(30), "timed out: {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Live processes whose working directory is under `dir` or that hold a file under it open.
fn users_of(dir: &Path) -> Vec<u32> {
    let dir = dir.canonicalize().unwrap();
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let state = stat[stat.rfind(')').unwrap() + 1..]
            .split_whitespace()
            .next();
        if matches!(state, Some("Z" | "X")) {
            continue;
        }
        let cwd = std::fs::read_link(format!("/proc/{pid}/cwd")).ok();
        let fds = std::fs::read_dir(format!("/proc/{pid}/fd"))
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|fd| std::fs::read_link(fd.path()).ok());
        if cwd.into_iter().chain(fds).any(|p| p.starts_with(&dir)) {
            out.push(pid);
        }
    }
    out
}

/// The group recorded by the helper's command (the only record with a `pgid` line).
fn recorded_pgid(records: &Path) -> Option<u32> {
    let entries = std::fs::read_dir(records).ok()?;
    for e in entries.flatten() {
        let text = std::fs::read_to_string(e.path()).unwrap_or_default();
        if let Some(v) = text.lines().find_map(|l| l.strip_prefix("pgid ")) {
            return v.parse().ok();
        }
    }
    None
}

#[test]
fn killed_tune_leaves_no_orphan_and_spares_a_recycled_pid() {
    let state = tempfile::tempdir().unwrap();
    let tree = state.path().join("slots/0/tree");
    std::fs::create_dir_all(&tree).unwrap();
    let records = orphans::records_dir(state.path());
    let out = tree.join("out.txt");

    // The tuner part, in a child process.
    let mut helper = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "helper_tuner_running_a_command",
            "--ignored",
            "--nocapture",
        ])
        .env(HELPER_ENV, state.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for("the command writes in the working copy", || size(&out) > 0);
    let pgid = recorded_pgid(&records).expect("a record of the running command's group");
    assert!(!members(pgid).is_empty());

    // kill -9 of the tuner: the background loop is orphaned and goes on writing.
    helper.kill().unwrap();
    helper.wait().unwrap();
    let n = size(&out);
    wait_for("the orphan writes on after the kill", || size(&out) > n);
    assert!(
        !members(pgid).is_empty(),
        "the orphan group is gone already"
    );

    // An unrelated program outside the state directory, its own group leader, named by a
    // stale record (its pid recycled): it must survive.
    let elsewhere = tempfile::tempdir().unwrap();
    let mut unrelated = Command::new("sleep")
        .arg("300")
        .current_dir(elsewhere.path())
        .process_group(0)
        .spawn()
        .unwrap();
    std::fs::write(
        records.join("group-recycled"),
        format!("pgid {}\nstart 1\n", unrelated.id()),
    )
    .unwrap();

    // The next start.
    let reaped = orphans::reap(
        &records,
        &state.path().join("slots"),
        Duration::from_secs(10),
    )
    .unwrap();
    assert_eq!(reaped.killed, vec![pgid]);
    assert_eq!(reaped.spared, vec![unrelated.id()]);
    // Gone when reap returns: nothing writes into the working copy any more.
    assert!(members(pgid).is_empty(), "{:?}", members(pgid));
    // And no live process can write there: none is in the group, and none holds the working
    // copy as its directory or the file open (checked in /proc, not by watching the file for a
    // while, which a slow writer passes by luck).
    assert_eq!(
        users_of(&tree),
        Vec::<u32>::new(),
        "the working copy is still in use"
    );
    assert!(
        unrelated.try_wait().unwrap().is_none(),
        "an unrelated process was killed"
    );
    assert_eq!(std::fs::read_dir(&records).unwrap().count(), 0);
    // A second start finds nothing to do.
    assert_eq!(
        orphans::reap(
            &records,
            &state.path().join("slots"),
            Duration::from_secs(1)
        )
        .unwrap(),
        orphans::Reaped::default()
    );
    unrelated.kill().unwrap();
    unrelated.wait().unwrap();
}

#[test]
fn a_finished_command_leaves_no_record() {
    let state = tempfile::tempdir().unwrap();
    let records = orphans::records_dir(state.path());
    let stop = Arc::new(AtomicBool::new(false));
    let o = tuner::shell::run_recorded(
        "ls running",
        state.path(),
        Duration::from_secs(30),
        &stop,
        Some(&records),
    )
    .unwrap();
    // While it ran, the command's record was there.
    assert!(o.stdout.starts_with("group-"), "{o:?}");
    assert_eq!(std::fs::read_dir(&records).unwrap().count(), 0);
}
