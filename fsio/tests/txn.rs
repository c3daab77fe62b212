//! The journaled set, for real: a child process applies a set of files and is killed (SIGKILL)
//! at every step of the journal, or stopped between a file's check and its rename while the test
//! edits that file or makes it immutable; then a recovery runs. Every file must end original or
//! (only after a finished apply) fully updated, no edit may be lost, and no temporary file stays.
#![allow(clippy::print_stdout, clippy::print_stderr, clippy::exit)]

use fsio::txn::{Applied, Change, Journal};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const FILES: usize = 5;
const POINT: &str = "test.apply";

fn old_text(i: usize) -> String {
    format!("__global__ void k{i}() {{}}\n")
}

fn new_text(i: usize) -> String {
    format!("__global__ void k{i}() {{ /* unrolled */ }}\n")
}

/// A fresh tree of FILES files, with a journal directory beside it (under the target
/// directory: `chattr` needs a file system that has the flag).
fn tree() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let base = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let src = base.path().join("src");
    std::fs::create_dir(&src).unwrap();
    for i in 0..FILES {
        std::fs::write(src.join(format!("f{i}.cu")), old_text(i)).unwrap();
    }
    let journal = base.path().join("state/apply");
    (base, src, journal)
}

fn changes(src: &Path) -> Vec<Change> {
    (0..FILES)
        .map(|i| Change {
            path: src.join(format!("f{i}.cu")),
            old: fsio::digest(old_text(i).as_bytes()),
            new: new_text(i).into_bytes(),
        })
        .collect()
}

/// The child: apply (or, with `FSIO_TXN_RECOVER`, recover) and print the outcome.
#[test]
#[ignore = "the child process of the other tests"]
fn child_body() {
    let src = PathBuf::from(std::env::var("FSIO_TXN_SRC").unwrap());
    let j = Journal::new(std::env::var("FSIO_TXN_JOURNAL").unwrap(), POINT);
    if std::env::var("FSIO_TXN_RECOVER").is_ok() {
        println!("RESULT {:?}", j.recover());
        return;
    }
    match j.apply(&changes(&src)) {
        Ok(a) => println!("RESULT {a:?}"),
        Err(e) => println!("ERROR {e}"),
    }
}

fn child(src: &Path, journal: &Path, points: &str, recover: bool) -> Command {
    let mut c = Command::new(std::env::current_exe().unwrap());
    c.args([
        "--exact",
        "child_body",
        "--ignored",
        "--nocapture",
        "--test-threads=1",
    ])
    .env("FSIO_TXN_SRC", src)
    .env("FSIO_TXN_JOURNAL", journal)
    .env(fsio::testpoint::ENV, points);
    if recover {
        c.env("FSIO_TXN_RECOVER", "1");
    }
    c
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Each file's content: `Some(false)` original, `Some(true)` updated, `None` anything else.
fn states(src: &Path) -> Vec<Option<bool>> {
    (0..FILES)
        .map(|i| {
            let t = std::fs::read_to_string(src.join(format!("f{i}.cu"))).unwrap();
            if t == old_text(i) {
                Some(false)
            } else if t == new_text(i) {
                Some(true)
            } else {
                None
            }
        })
        .collect()
}

fn temps(src: &Path) -> Vec<String> {
    std::fs::read_dir(src)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(fsio::TEMP_PREFIX))
        .collect()
}

fn wait_stopped(pid: u32) {
    let stat = format!("/proc/{pid}/stat");
    for _ in 0..6000 {
        let s = std::fs::read_to_string(&stat).unwrap_or_default();
        if s.rsplit(')')
            .next()
            .is_some_and(|r| r.trim_start().starts_with('T'))
        {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    panic!("the child never stopped at its test point");
}

#[test]
fn an_uninterrupted_apply_writes_every_file_and_leaves_nothing() {
    let (_b, src, journal) = tree();
    let j = Journal::new(&journal, POINT);
    let a = j.apply(&changes(&src)).unwrap();
    assert_eq!(a.written.len(), FILES);
    assert!(a.edited.is_empty());
    assert_eq!(states(&src), vec![Some(true); FILES]);
    assert!(temps(&src).is_empty());
    assert!(!journal.exists());
    assert_eq!(j.recover().unwrap(), None);
}

/// A kill at every step of the journal: the next run's recovery leaves every file original
/// (or, for a kill after the journal was removed, every file updated), and no temporary file.
#[test]
fn a_kill_at_any_step_is_rolled_back_by_the_next_run() {
    let steps = [
        ("blobs", 1, false),
        ("journaled", 1, false),
        ("temp", 1, false),
        ("temp", 3, false),
        ("temp", 5, false),
        ("before-rename", 1, false),
        ("before-rename", 3, false),
        ("renamed", 1, false),
        ("renamed", 4, false),
        ("renamed", 5, false),
        ("renamed-all", 1, false),
        ("done", 1, true),
    ];
    for (step, n, finished) in steps {
        let spec = format!("{POINT}.{step}=kill@{n}");
        let (_b, src, journal) = tree();
        let o = child(&src, &journal, &spec, false).output().unwrap();
        assert_eq!(o.status.signal(), Some(libc::SIGKILL), "{spec}: {o:?}");
        let r = child(&src, &journal, "", true).output().unwrap();
        assert!(r.status.success(), "{spec}: {r:?}");
        let want = vec![Some(finished); FILES];
        assert_eq!(states(&src), want, "{spec}: {}", stdout(&r));
        assert!(temps(&src).is_empty(), "{spec}: {:?}", temps(&src));
        assert!(!journal.exists(), "{spec}: the journal stays");
    }
}

/// A kill during the roll-back itself (in a recovery) is finished by the next recovery.
#[test]
fn a_kill_during_the_rollback_is_finished_by_the_next_run() {
    for second in [
        "rolled-back@2",
        "rollback.before-rename@1",
        "rollback.before-rename@3",
    ] {
        let (_b, src, journal) = tree();
        let o = child(&src, &journal, &format!("{POINT}.renamed=kill@4"), false)
            .output()
            .unwrap();
        assert_eq!(o.status.signal(), Some(libc::SIGKILL), "{o:?}");
        assert_eq!(
            states(&src).iter().filter(|s| **s == Some(true)).count(),
            4,
            "four files written before the kill"
        );
        let (name, n) = second.split_once('@').unwrap();
        let r = child(&src, &journal, &format!("{POINT}.{name}=kill@{n}"), true)
            .output()
            .unwrap();
        assert_eq!(r.status.signal(), Some(libc::SIGKILL), "{second}: {r:?}");
        assert!(journal.join("journal.json").exists(), "{second}");
        let r = child(&src, &journal, "", true).output().unwrap();
        assert!(r.status.success(), "{second}: {r:?}");
        assert_eq!(
            states(&src),
            vec![Some(false); FILES],
            "{second}: {}",
            stdout(&r)
        );
        assert!(temps(&src).is_empty(), "{second}");
        assert!(!journal.exists(), "{second}");
    }
}

/// An edit saved between a file's check and its rename (the child stopped right there) is kept;
/// the files written before it get their old content back, and the apply says which file.
#[test]
fn an_edit_between_check_and_rename_is_kept_and_the_set_rolled_back() {
    let (_b, src, journal) = tree();
    let c = child(
        &src,
        &journal,
        &format!("{POINT}.before-rename=stop@3"),
        false,
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    wait_stopped(c.id());
    let edited = src.join("f2.cu");
    let mut text = std::fs::read_to_string(&edited).unwrap();
    text.push_str("// USER EDIT\n");
    std::fs::write(&edited, &text).unwrap();
    // SAFETY: a signal to our own child.
    unsafe { libc::kill(c.id() as i32, libc::SIGCONT) };
    let o = c.wait_with_output().unwrap();
    assert!(o.status.success(), "{o:?}");
    let out = stdout(&o);
    let want = Applied {
        written: vec![],
        edited: vec![edited.clone()],
        restored: vec![src.join("f0.cu"), src.join("f1.cu")],
    };
    assert!(out.contains(&format!("RESULT {want:?}")), "{out}");
    assert_eq!(std::fs::read_to_string(&edited).unwrap(), text);
    let s = states(&src);
    assert_eq!(
        s,
        vec![Some(false), Some(false), None, Some(false), Some(false)]
    );
    assert!(temps(&src).is_empty(), "{:?}", temps(&src));
    assert!(!journal.exists());
}

/// An edit saved before the apply starts: nothing is written at all.
#[test]
fn an_edit_before_the_apply_writes_nothing() {
    let (_b, src, journal) = tree();
    std::fs::write(src.join("f4.cu"), "edited\n").unwrap();
    let a = Journal::new(&journal, POINT).apply(&changes(&src)).unwrap();
    assert_eq!(a.edited, vec![src.join("f4.cu")]);
    assert!(a.written.is_empty());
    assert_eq!(&states(&src)[..4], &[Some(false); 4]);
    assert!(temps(&src).is_empty());
    assert!(!journal.exists());
}

fn chattr(flag: &str, p: &Path) {
    let o = Command::new("chattr").arg(flag).arg(p).output();
    match o {
        Ok(o) if o.status.success() => {}
        other => panic!(
            "`chattr {flag}` failed on {} ({other:?}): this test needs root and a file system with the immutable flag (ext4, xfs, btrfs)",
            p.display()
        ),
    }
}

/// An I/O error part-way (the third file made immutable while the child waits before its
/// rename): the two files already written are restored, and the one-line error says so.
#[test]
fn an_io_error_part_way_leaves_every_file_as_it_was() {
    let (_b, src, journal) = tree();
    let c = child(
        &src,
        &journal,
        &format!("{POINT}.before-rename=stop@3"),
        false,
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    wait_stopped(c.id());
    let locked = src.join("f2.cu");
    chattr("+i", &locked);
    // SAFETY: a signal to our own child.
    unsafe { libc::kill(c.id() as i32, libc::SIGCONT) };
    let o = c.wait_with_output().unwrap();
    chattr("-i", &locked);
    let out = stdout(&o);
    // The test harness may print its own words before the child's on that line.
    let line = out
        .lines()
        .find_map(|l| l.find("ERROR ").map(|i| &l[i..]))
        .unwrap_or("");
    assert_eq!(
        line,
        format!(
            "ERROR cannot write {}: operation not permitted; the 2 file(s) written before it were restored: all 5 files are as they were",
            locked.display()
        ),
        "{out}"
    );
    assert_eq!(states(&src), vec![Some(false); FILES]);
    assert!(temps(&src).is_empty(), "{:?}", temps(&src));
    assert!(!journal.exists());
}

/// Checks before anything is written: a read-only file, a hard link, a second name of one file.
#[test]
fn refusals_write_nothing() {
    use std::os::unix::fs::PermissionsExt;
    let (_b, src, journal) = tree();
    let j = Journal::new(&journal, POINT);
    let f3 = src.join("f3.cu");
    std::fs::set_permissions(&f3, std::fs::Permissions::from_mode(0o444)).unwrap();
    let e = j.apply(&changes(&src)).unwrap_err();
    assert!(matches!(e, fsio::Error::ReadOnly { .. }), "{e}");
    std::fs::set_permissions(&f3, std::fs::Permissions::from_mode(0o644)).unwrap();
    let link = src.join("other-name.cu");
    std::fs::hard_link(&f3, &link).unwrap();
    let e = j.apply(&changes(&src)).unwrap_err();
    assert!(matches!(e, fsio::Error::HardLinks { links: 2, .. }), "{e}");
    std::fs::remove_file(&link).unwrap();
    let mut twice = changes(&src);
    std::os::unix::fs::symlink("f1.cu", src.join("alias.cu")).unwrap();
    twice.push(Change {
        path: src.join("alias.cu"),
        ..twice[1].clone()
    });
    let e = j.apply(&twice).unwrap_err();
    assert!(matches!(e, fsio::Error::SameFile { .. }), "{e}");
    assert_eq!(states(&src), vec![Some(false); FILES]);
    assert!(temps(&src).is_empty());
    assert!(!journal.exists());
}
