//! Named test points: places in the code where a test can make the process kill itself
//! (`SIGKILL`, exactly as `kill -9` would) or stop itself (`SIGSTOP`, so that the test can change
//! a file at a precise moment and then let it go on with `SIGCONT`).
//!
//! They are driven by one environment variable, read once:
//! `HIP_UNROLL_TESTPOINT=NAME=ACTION[@N][,NAME=ACTION[@N]]...`, where ACTION is `kill` or
//! `stop` and `@N` picks the N-th time (from 1) the point is reached (default: the first).
//! Before stopping, the process writes `testpoint NAME stop` and a newline to stderr, so a test
//! can wait for that line (or for the process state `T`) before acting. With the variable unset
//! a test point costs one relaxed atomic load.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

/// The variable that arms test points.
pub const ENV: &str = "HIP_UNROLL_TESTPOINT";

/// What an armed point does when it fires.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// `SIGKILL` to the process itself: no destructor, no flush, as `kill -9`.
    Kill,
    /// `SIGSTOP` to the process itself, after a line on stderr; it goes on at `SIGCONT`.
    Stop,
}

struct Armed {
    action: Action,
    nth: u64,
    hits: AtomicU64,
}

fn parse(spec: &str) -> HashMap<String, Armed> {
    let mut out = HashMap::new();
    for item in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let Some((name, rest)) = item.split_once('=') else {
            continue;
        };
        let (action, nth) = match rest.split_once('@') {
            Some((a, n)) => (a, n.parse().unwrap_or(1)),
            None => (rest, 1),
        };
        let action = match action {
            "kill" => Action::Kill,
            "stop" => Action::Stop,
            _ => continue,
        };
        out.insert(
            name.to_string(),
            Armed {
                action,
                nth: nth.max(1),
                hits: AtomicU64::new(0),
            },
        );
    }
    out
}

fn armed() -> Option<&'static HashMap<String, Armed>> {
    static ARMED: OnceLock<Option<HashMap<String, Armed>>> = OnceLock::new();
    ARMED
        .get_or_init(|| {
            std::env::var(ENV)
                .ok()
                .map(|s| parse(&s))
                .filter(|m| !m.is_empty())
        })
        .as_ref()
}

/// The test point `name`: nothing unless [`ENV`] arms it, else its action on its N-th hit.
pub fn hit(name: &str) {
    let Some(points) = armed() else {
        return;
    };
    let Some(p) = points.get(name) else {
        return;
    };
    let n = p.hits.fetch_add(1, Ordering::Relaxed) + 1;
    if n != p.nth {
        return;
    }
    fire(name, p.action);
}

fn fire(name: &str, action: Action) {
    // One writer at a time, so the line a test waits for is never interleaved.
    static LINE: Mutex<()> = Mutex::new(());
    match action {
        Action::Kill => {
            // SAFETY: raising a signal on our own process has no memory-safety preconditions.
            unsafe {
                libc::raise(libc::SIGKILL);
            }
        }
        Action::Stop => {
            let _g = LINE.lock().unwrap_or_else(|e| e.into_inner());
            let line = format!("testpoint {name} stop\n");
            // SAFETY: write(2) on fd 2 of a buffer we own.
            unsafe {
                libc::write(2, line.as_ptr().cast(), line.len());
                libc::raise(libc::SIGSTOP);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_actions_and_counts() {
        let m = parse("apply.rename=kill@3, check.fix.before-rename=stop,bad,x=nope");
        assert_eq!(m.len(), 2);
        assert_eq!(m["apply.rename"].action, Action::Kill);
        assert_eq!(m["apply.rename"].nth, 3);
        assert_eq!(m["check.fix.before-rename"].action, Action::Stop);
        assert_eq!(m["check.fix.before-rename"].nth, 1);
    }
}
