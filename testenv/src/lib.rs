//! testenv: counted skips for tests whose environment does not fit (a dev-dependency only).
//!
//! A test that cannot run here calls [`lacks`] with the capability it needs, whether the
//! machine has it, and why not; when it is missing the call
//! - prints `SKIP <test>: <reason> (needs <capability>)` on stderr,
//! - appends that line to the file `$HIP_UNROLL_SKIP_LOG` when set (`.ci/run` prints and counts
//!   them), and
//! - **panics** when `$HIP_UNROLL_EXPECT` (a comma-separated list, `all` for every one) names the
//!   capability: the machine is said to have it, so the skip would hide a failure.
//!
//! It returns `true` when the test must stop (`if testenv::lacks(..) { return; }`), so an
//! early return is always counted and never silent.
//!
//! Capabilities in use: `no-gpu` (no GPU device node: the no-GPU error paths), `root` (may
//! create another user's file), `non-root` (file permissions apply), `setpriv` and `script`
//! (util-linux tools), `rocm6-headers` (`HIP_UNROLL_HSA_INCLUDE_CURRENT`), `chromium` (Debian's
//! headless browser, `/usr/bin/chromium`).
#![allow(clippy::print_stderr)]

use std::io::Write;

/// The environment variable naming the capabilities this machine is expected to have.
pub const EXPECT_VAR: &str = "HIP_UNROLL_EXPECT";
/// The environment variable naming the file skips are appended to.
pub const LOG_VAR: &str = "HIP_UNROLL_SKIP_LOG";

/// Whether `$HIP_UNROLL_EXPECT` names `capability` (or `all`).
pub fn expected(capability: &str) -> bool {
    std::env::var(EXPECT_VAR).is_ok_and(|v| {
        v.split(',')
            .map(str::trim)
            .any(|c| c == capability || c == "all")
    })
}

/// The running test's name (libtest names each test's thread after it).
fn test_name() -> String {
    std::thread::current()
        .name()
        .unwrap_or("unknown test")
        .to_string()
}

/// When `present` is false: a counted skip of the running test (see the crate documentation),
/// returning `true` (stop the test); a panic when `$HIP_UNROLL_EXPECT` names `capability`.
/// When `present` is true: `false` (run the test), nothing printed.
#[must_use = "stop the test (return) when it returns true"]
pub fn lacks(capability: &str, present: bool, reason: &str) -> bool {
    if present {
        return false;
    }
    let line = format!("SKIP {}: {reason} (needs {capability})", test_name());
    if expected(capability) {
        panic!("{line}, but {EXPECT_VAR} says this machine has {capability}");
    }
    eprintln!("{line}");
    if let Ok(path) = std::env::var(LOG_VAR) {
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
        {
            // One write per line: concurrent test processes append whole lines.
            let _ = f.write_all(format!("{line}\n").as_bytes());
        }
    }
    true
}

/// Whether this machine shows a GPU device node (AMD's `/dev/kfd`, NVIDIA's `/dev/nvidiactl`
/// or `/dev/nvidia0`), the no-GPU tests' `no-gpu` capability being its negation.
pub fn has_gpu_device() -> bool {
    ["/dev/kfd", "/dev/nvidiactl", "/dev/nvidia0"]
        .iter()
        .any(|d| std::path::Path::new(d).exists())
}

/// Whether `program` can be started (`program --help` or `--version` runs).
pub fn has_program(program: &str) -> bool {
    ["--version", "--help"].iter().any(|a| {
        std::process::Command::new(program)
            .arg(a)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok()
    })
}
