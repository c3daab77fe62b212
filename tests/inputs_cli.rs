//! Bounded reads of the user's files: sources, code objects, launch specs and profiler inputs are
//! read as regular files only, size-capped. `/dev/zero`, `/dev/urandom`, a character device made
//! with mknod and a FIFO give one line each and exit 2, at once (a FIFO never blocks, a device
//! never grows memory), and `check` still reports every other file.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_hip-unroll");

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Run with a deadline: a read that blocked on a FIFO, or read a device without end, fails here
/// instead of hanging.
fn run(args: &[&str]) -> Output {
    let mut c = Command::new(BIN)
        .args(args)
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while c.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = c.kill();
            panic!("{args:?} did not end");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    c.wait_with_output().unwrap()
}

fn errors(o: &Output) -> Vec<String> {
    String::from_utf8_lossy(&o.stderr)
        .lines()
        .map(String::from)
        .collect()
}

fn mknod(p: &Path, kind: libc::mode_t, dev: libc::dev_t) {
    let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
    // SAFETY: a valid C string.
    let r = unsafe { libc::mknod(c.as_ptr(), kind | 0o644, dev) };
    assert_eq!(
        r,
        0,
        "mknod {}: {} (run the tests as root, as CI does)",
        p.display(),
        std::io::Error::last_os_error()
    );
}

/// A FIFO and a character device (the `/dev/zero` numbers, 1:5) in a temporary directory.
fn specials() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let fifo = d.path().join("k.cu");
    mknod(&fifo, libc::S_IFIFO, 0);
    let zero = d.path().join("zero.cu");
    mknod(&zero, libc::S_IFCHR, libc::makedev(1, 5));
    (d, fifo, zero)
}

#[test]
fn check_refuses_devices_and_fifos_and_reports_every_other_file() {
    let (_d, fifo, zero) = specials();
    let clean = repo().join("testdata/cli/clean.cu");
    let o = run(&[
        "check",
        "--format",
        "json",
        clean.to_str().unwrap(),
        "/dev/zero",
        fifo.to_str().unwrap(),
        "/dev/urandom",
        zero.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let mut want = vec![
        "error: /dev/urandom: is a character device, not a regular file".to_string(),
        "error: /dev/zero: is a character device, not a regular file".to_string(),
        format!(
            "error: {}: is a FIFO (named pipe), not a regular file",
            fifo.display()
        ),
        format!(
            "error: {}: is a character device, not a regular file",
            zero.display()
        ),
    ];
    want.sort();
    let mut got = errors(&o);
    got.sort();
    assert_eq!(got, want);
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let files: Vec<&str> = r["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(files, [clean.to_str().unwrap()]);
}

#[test]
fn unroll_inspect_pressure_bench_and_profile_refuse_devices_and_fifos_in_one_line() {
    let (_d, fifo, _zero) = specials();
    let f = fifo.to_str().unwrap();
    let fifo_line = format!("error: {f}: is a FIFO (named pipe), not a regular file");
    let zero_line = "error: /dev/zero: is a character device, not a regular file".to_string();
    let cases: Vec<(Vec<&str>, Vec<String>)> = vec![
        (
            vec!["unroll", "/dev/zero", "--loop", "1", "--factor", "2"],
            vec![zero_line.clone()],
        ),
        (
            vec!["unroll", f, "--loop", "1", "--factor", "2"],
            vec![fifo_line.clone()],
        ),
        (
            vec!["inspect", "/dev/urandom", f],
            vec![
                "error: /dev/urandom: is a character device, not a regular file".into(),
                fifo_line.clone(),
            ],
        ),
        (vec!["pressure", f, "/dev/zero"], vec![fifo_line.clone()]),
        (vec!["bench", f], vec![fifo_line.clone()]),
        (vec!["profile", "--from", f], vec![fifo_line.clone()]),
    ];
    for (args, want) in cases {
        let o = run(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {:?}", errors(&o));
        assert_eq!(errors(&o), want, "{args:?}");
    }
}

/// A source larger than the cap (a sparse file: nothing is written to disk) is one clear line;
/// the other files are still checked.
#[test]
fn an_oversized_source_is_one_line() {
    let d = tempfile::tempdir().unwrap();
    let big = d.path().join("big.cu");
    let f = std::fs::File::create(&big).unwrap();
    f.set_len(fsio::SOURCE_CAP + 1).unwrap();
    let clean = repo().join("testdata/cli/clean.cu");
    let o = run(&[
        "check",
        "--format",
        "json",
        big.to_str().unwrap(),
        clean.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        errors(&o),
        [format!(
            "error: {}: too large for a source file ({} bytes; the limit is {})",
            big.display(),
            fsio::SOURCE_CAP + 1,
            fsio::SOURCE_CAP
        )]
    );
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r["files"].as_array().unwrap().len(), 1);
}
