//! Commands that outlived a killed `tune`. Each command the `shell` module starts gets a record
//! file under the state directory (`STATE/running/group-*`), written by the child itself before
//! it execs (so no kill of the tuner can leave an unrecorded group) and removed when the
//! command has ended. A `kill -9` of `tune` leaves the records of the commands that were
//! running; the next `tune` on that state directory calls [`reap`] once it holds the state
//! directory's lock, before it touches a working copy: every recorded process group that still
//! has live processes and is provably the recorded one (its leader is alive with the recorded
//! start time, or one of its processes runs inside the working copies) is killed with SIGKILL,
//! and `reap` waits (bounded) until the group has no live process left. A group that does not
//! pass that test (a recycled id of an unrelated program) is never signalled.
//!
//! A record holds `pgid <n>` (written by the child) and `start <ticks>` (the leader's start
//! time from `/proc/<n>/stat`, added by the parent once the command has started). The group
//! checks read `/proc` and are Linux-only; elsewhere [`reap`] only removes the records.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The directory of the records under a state directory.
pub fn records_dir(state_dir: &Path) -> PathBuf {
    state_dir.join("running")
}

/// Why the state directory could not be cleared of an earlier run's commands.
#[derive(Debug, thiserror::Error)]
pub enum ReapError {
    #[error("cannot read the records of running commands in {path}: {error}")]
    Records { path: String, error: std::io::Error },
    #[error("commands left running by an earlier, killed hip-unroll tune (process groups {pgids}) are still running {secs} s after SIGKILL; end them before tuning again")]
    StillRunning { pgids: String, secs: u64 },
}

/// The record of one command, removed when dropped (the command has ended).
#[derive(Debug)]
pub struct Record {
    file: tempfile::NamedTempFile,
}

impl Record {
    /// Create an empty record in `dir` (created if missing).
    pub fn create(dir: &Path) -> std::io::Result<Record> {
        std::fs::create_dir_all(dir)?;
        let file = tempfile::Builder::new().prefix("group-").tempfile_in(dir)?;
        Ok(Record { file })
    }

    pub fn path(&self) -> &Path {
        self.file.path()
    }

    /// The raw descriptor the child writes its `pgid` line to (before exec).
    pub(crate) fn raw_fd(&self) -> std::os::fd::RawFd {
        use std::os::fd::AsRawFd;
        self.file.as_file().as_raw_fd()
    }

    /// Add the leader's start time (after the child has written its line and exec'd).
    pub(crate) fn add_start(&mut self, pid: u32) {
        if let Some(start) = start_time(pid) {
            let f = self.file.as_file_mut();
            let _ = f.write_all(format!("start {start}\n").as_bytes());
        }
    }
}

/// A parsed record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Parsed {
    pgid: u32,
    start: Option<u64>,
}

fn parse(text: &str) -> Option<Parsed> {
    let mut pgid = None;
    let mut start = None;
    for line in text.lines() {
        match line.split_once(' ') {
            Some(("pgid", v)) => pgid = v.trim().parse::<u32>().ok(),
            Some(("start", v)) => start = v.trim().parse::<u64>().ok(),
            _ => {}
        }
    }
    pgid.filter(|&p| p > 1).map(|pgid| Parsed { pgid, start })
}

/// What [`reap`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reaped {
    /// Process groups that were killed (and are gone).
    pub killed: Vec<u32>,
    /// Recorded groups that still exist but are not ours (left alone).
    pub spared: Vec<u32>,
}

/// Kill the process groups recorded in `records` (see [`records_dir`]) that are still running
/// and provably belong to the commands of an earlier `tune` on this state directory (the
/// leader is alive with the recorded start time, or a process of the group has its working
/// directory under `inside`, the working copies), wait up to `wait` until they are gone, and
/// remove the records. Call it only while holding the state directory's lock.
pub fn reap(records: &Path, inside: &Path, wait: Duration) -> Result<Reaped, ReapError> {
    let rerr = |error| ReapError::Records {
        path: records.display().to_string(),
        error,
    };
    let entries = match std::fs::read_dir(records) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Reaped::default()),
        Err(e) => return Err(rerr(e)),
    };
    let mut found = Vec::new();
    for e in entries {
        let e = e.map_err(rerr)?;
        let path = e.path();
        let parsed = std::fs::read_to_string(&path).ok().and_then(|t| parse(&t));
        found.push((path, parsed));
    }
    found.sort_by(|a, b| a.0.cmp(&b.0));
    let mut out = Reaped::default();
    let mut kill = Vec::new();
    for (path, parsed) in &found {
        if let Some(p) = parsed {
            match sys::classify(*p, inside) {
                sys::Group::Gone => {}
                sys::Group::Ours => kill.push((path.clone(), p.pgid)),
                sys::Group::Foreign => out.spared.push(p.pgid),
            }
        }
    }
    if !kill.is_empty() {
        let pgids: Vec<u32> = kill.iter().map(|k| k.1).collect();
        let left = sys::kill_and_wait(&pgids, wait);
        if !left.is_empty() {
            let shown: Vec<String> = left.iter().map(u32::to_string).collect();
            return Err(ReapError::StillRunning {
                pgids: shown.join(", "),
                secs: wait.as_secs(),
            });
        }
        out.killed = pgids;
    }
    // Every group recorded is now gone or not ours: the records are done with.
    for (path, _) in &found {
        match std::fs::remove_file(path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(rerr(e)),
        }
    }
    Ok(out)
}

/// The start time (clock ticks after boot) of process `pid`, from `/proc/<pid>/stat`.
fn start_time(pid: u32) -> Option<u64> {
    sys::stat(pid).map(|s| s.start)
}

#[cfg(target_os = "linux")]
mod sys {
    use super::Parsed;
    use std::path::Path;
    use std::time::{Duration, Instant};

    /// The fields of `/proc/<pid>/stat` used here.
    pub struct Stat {
        pub state: char,
        pub pgrp: u32,
        pub start: u64,
    }

    pub fn stat(pid: u32) -> Option<Stat> {
        let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // `pid (comm) state ppid pgrp ...`: comm may hold spaces and parentheses.
        let rest = &text[text.rfind(')')? + 1..];
        let f: Vec<&str> = rest.split_whitespace().collect();
        // After comm: state(0) ppid(1) pgrp(2) ... starttime(19).
        Some(Stat {
            state: f.first()?.chars().next()?,
            pgrp: f.get(2)?.parse().ok()?,
            start: f.get(19)?.parse().ok()?,
        })
    }

    /// Live (not zombie) processes of group `pgid`.
    fn members(pgid: u32) -> Vec<u32> {
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
            .filter(|&pid| {
                stat(pid).is_some_and(|s| s.pgrp == pgid && !matches!(s.state, 'Z' | 'X'))
            })
            .collect()
    }

    fn cwd_inside(pid: u32, inside: &Path) -> bool {
        std::fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|cwd| cwd.starts_with(inside))
    }

    pub enum Group {
        /// No live process left.
        Gone,
        /// Still running and the recorded one.
        Ours,
        /// Live processes under that id that cannot be shown to be ours.
        Foreign,
    }

    pub fn classify(p: Parsed, inside: &Path) -> Group {
        let members = members(p.pgid);
        if members.is_empty() {
            return Group::Gone;
        }
        let inside = std::fs::canonicalize(inside).unwrap_or_else(|_| inside.to_path_buf());
        // While a group has a process, the kernel does not hand its id out again: a leader
        // alive with the recorded start time is the recorded process.
        let leader_matches = p.start.is_some_and(|start| {
            stat(p.pgid).is_some_and(|s| s.pgrp == p.pgid && s.start == start)
        });
        if leader_matches || members.iter().any(|&m| cwd_inside(m, &inside)) {
            Group::Ours
        } else {
            Group::Foreign
        }
    }

    /// SIGKILL each group (again while it lives) until none has a live process or `wait`
    /// has passed; the groups still alive then.
    pub fn kill_and_wait(pgids: &[u32], wait: Duration) -> Vec<u32> {
        let t0 = Instant::now();
        loop {
            let left: Vec<u32> = pgids
                .iter()
                .copied()
                .filter(|&g| !members(g).is_empty())
                .collect();
            if left.is_empty() || t0.elapsed() >= wait {
                return left;
            }
            for &g in &left {
                childproc::kill_group(g);
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod sys {
    use super::Parsed;
    use std::path::Path;
    use std::time::Duration;

    pub struct Stat {
        pub start: u64,
    }

    pub fn stat(_pid: u32) -> Option<Stat> {
        None
    }

    pub enum Group {
        Gone,
        #[allow(dead_code)]
        Ours,
        #[allow(dead_code)]
        Foreign,
    }

    /// Without `/proc` a group cannot be shown to be ours: nothing is killed.
    pub fn classify(_p: Parsed, _inside: &Path) -> Group {
        Group::Gone
    }

    pub fn kill_and_wait(_pgids: &[u32], _wait: Duration) -> Vec<u32> {
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_parse_and_the_child_line_is_exact() {
        assert_eq!(
            parse("pgid 1234\nstart 99\n"),
            Some(Parsed {
                pgid: 1234,
                start: Some(99)
            })
        );
        assert_eq!(
            parse("pgid 7\n"),
            Some(Parsed {
                pgid: 7,
                start: None
            })
        );
        assert_eq!(parse(""), None);
        assert_eq!(parse("pgid 1\n"), None);
        assert_eq!(parse("pgid x\n"), None);
        let d = tempfile::tempdir().unwrap();
        let r = Record::create(d.path()).unwrap();
        childproc::write_pgid_line(r.raw_fd(), 4_294_967_295).unwrap();
        childproc::write_pgid_line(r.raw_fd(), 0).unwrap();
        assert_eq!(
            std::fs::read_to_string(r.path()).unwrap(),
            "pgid 4294967295\npgid 0\n"
        );
        let p = r.path().to_path_buf();
        drop(r);
        assert!(!p.exists(), "a record outlives its command");
    }
}
