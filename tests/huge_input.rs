//! Memory of `check` on one huge expression (issue 26 item 5): 10 MB of `x + x + ...` or of
//! nested parentheses is checked in under 200 MB of resident memory (the child's peak, from
//! `wait4`), and what the analysis needs from the expression is still seen (a lane index `% 32`
//! in the middle of it, an atomic call between two runs). Its time is measured by
//! `bench/huge_expr.sh`, not here.

use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_hip-unroll");
const MB: usize = 1 << 20;
/// The bound: 20 times the input.
const MAX_RSS_BYTES: u64 = 200 * MB as u64;

/// `check --format json FILE` in `dir`: exit code, stdout, peak resident bytes. The child is
/// reaped by `wait4` (for its resource usage), which clippy does not see.
#[allow(clippy::zombie_processes)]
fn check_rss(dir: &Path, file: &str) -> (i32, serde_json::Value, u64) {
    let out = std::fs::File::create(dir.join("out.json")).unwrap();
    let child = Command::new(BIN)
        .args(["check", "--format", "json", "--threads", "1", file])
        .current_dir(dir)
        .stdout(Stdio::from(out))
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut status = 0;
    // SAFETY: plain wait4 on our own child; `usage` is written by the kernel.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as i32, "wait4");
    let status = std::process::ExitStatus::from_raw(status);
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("out.json")).unwrap())
            .unwrap_or_else(|e| panic!("{file}: {e} (status {status:?})"));
    // Linux reports ru_maxrss in KiB.
    let rss = usage.ru_maxrss as u64 * 1024;
    (status.code().expect("not killed"), json, rss)
}

fn kernel(expr: &str) -> String {
    format!(
        "__global__ void k(float* a, float x, int* c, int n) {{\n  for (int i = 0; i < n; ++i) {{\n    a[i] = {expr};\n  }}\n}}\n"
    )
}

/// `x + x + ...` of about `bytes` bytes.
fn sum(bytes: usize) -> String {
    let mut s = String::with_capacity(bytes + 8);
    s.push('x');
    while s.len() < bytes {
        s.push_str(" + x");
    }
    s
}

fn blockers(json: &serde_json::Value) -> Vec<String> {
    json["files"][0]["functions"][0]["loops"][0]["blockers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b.as_str().unwrap().to_string())
        .collect()
}

fn rules(json: &serde_json::Value) -> Vec<String> {
    json["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["rule"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_10_mb_sum_is_checked_in_bounded_memory_and_seen_whole() {
    let dir = tempfile::tempdir().unwrap();
    let half = sum(5 * MB);
    // A lane index in the middle and an atomic between the two halves: both must be seen.
    let expr = format!("{half} + threadIdx.x % 32 + atomicAdd(c, 1) + {half}");
    std::fs::write(dir.path().join("sum.cu"), kernel(&expr)).unwrap();
    let (code, json, rss) = check_rss(dir.path(), "sum.cu");
    assert_eq!(code, 1, "{json}");
    assert_eq!(json["files"][0]["parse_errors"], 0, "{json}");
    assert_eq!(blockers(&json), ["atomic"]);
    assert!(rules(&json).contains(&"wave-size".to_string()), "{json}");
    assert!(
        rss < MAX_RSS_BYTES,
        "peak RSS {} MB for a 10 MB expression (bound {} MB)",
        rss / MB as u64,
        MAX_RSS_BYTES / MB as u64
    );
}

#[test]
fn a_10_mb_nest_of_parentheses_is_checked_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let depth = 5 * MB;
    let expr = format!("{}x % 32{}", "(".repeat(depth), ")".repeat(depth));
    std::fs::write(dir.path().join("nest.cu"), kernel(&expr)).unwrap();
    let (code, json, rss) = check_rss(dir.path(), "nest.cu");
    assert_eq!(code, 0, "{json}");
    assert_eq!(json["files"][0]["parse_errors"], 0, "{json}");
    assert_eq!(blockers(&json), Vec::<String>::new());
    assert!(
        rss < MAX_RSS_BYTES,
        "peak RSS {} MB for 10 MB of parentheses (bound {} MB)",
        rss / MB as u64,
        MAX_RSS_BYTES / MB as u64
    );
}
