//! End-to-end tests of `tune`'s apply, the journaled transaction in `STATE/apply`: a kill at each
//! step followed by the next run (which rolls it back; `--resume` then finishes the run), an edit
//! saved between a file's check and its rename (kept, exit 3), an I/O error part-way (every file
//! restored, one line), the permissions policy (owner and mode kept, read-only and hard-linked
//! files refused) and `-o` refusals checked before the search starts.
//!
//! The tree is five one-loop kernels and a deterministic "benchmark" (`time.sh`): 100 ms, 10 ms
//! less for each `#pragma unroll 4` in the working copy, 0.5% jitter; so every variant is
//! accepted in a couple of seconds and the accepted set spans five files. The code-object gates
//! are skipped (the `[compile]` command is `false`): they are not what is tested here.

use serde_json::Value;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_hip-unroll");
const FILES: usize = 5;

const TIME_SH: &str = r#"n=$(cat *.cu | grep -c 'pragma unroll 4')
awk -v n="$n" -v s="$$" 'BEGIN { srand(s); printf "time: %.4f\n", (100 - 10 * n) * (1 + (rand() - 0.5) / 100) }'
"#;

fn kernel(i: usize) -> String {
    format!("__global__ void k{i}(float* a, int n) {{\n    for (int i = 0; i < n; ++i) {{\n        a[i] *= 2.0f;\n    }}\n}}\n")
}

/// The tree (under the target directory: `chattr` needs a file system with the flag) and a
/// state directory beside it.
struct Tree {
    _base: tempfile::TempDir,
    dir: PathBuf,
    state: PathBuf,
}

fn tree() -> Tree {
    let base = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let dir = base.path().join("repo");
    std::fs::create_dir(&dir).unwrap();
    for i in 0..FILES {
        std::fs::write(dir.join(format!("f{i}.cu")), kernel(i)).unwrap();
    }
    std::fs::write(dir.join("time.sh"), TIME_SH).unwrap();
    std::fs::write(
        dir.join("hip-unroll.toml"),
        "[compile]\ncommand = \"false {src} {out} {arch}\"\n",
    )
    .unwrap();
    let state = base.path().join("state");
    Tree {
        _base: base,
        dir,
        state,
    }
}

fn command(t: &Tree, extra: &[&str], points: &str) -> Command {
    let mut c = Command::new(BIN);
    c.args([
        "tune",
        "--build",
        "true",
        "--run",
        "sh time.sh",
        "--time-regex",
        "time: ([0-9.]+)",
        "--factors",
        "4",
        "--mode",
        "pragma",
        "--jobs",
        "1",
        "--state",
    ])
    .arg(&t.state)
    .args(extra)
    .current_dir(&t.dir)
    .env(fsio::testpoint::ENV, points);
    c
}

fn tune(t: &Tree, extra: &[&str], points: &str) -> Output {
    command(t, extra, points).output().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn report(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", String::from_utf8_lossy(&o.stdout), stderr(o)))
}

/// Each file: `Some(false)` original, `Some(true)` unrolled by tune, `None` anything else.
fn states(t: &Tree) -> Vec<Option<bool>> {
    (0..FILES)
        .map(|i| {
            let text = std::fs::read_to_string(t.dir.join(format!("f{i}.cu"))).unwrap();
            if text == kernel(i) {
                Some(false)
            } else if text.contains("#pragma unroll 4") && text.contains(&format!("void k{i}(")) {
                Some(true)
            } else {
                None
            }
        })
        .collect()
}

fn temps(t: &Tree) -> Vec<String> {
    std::fs::read_dir(&t.dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".hip-unroll-"))
        .collect()
}

fn names(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect()
}

fn all() -> Vec<String> {
    (0..FILES).map(|i| format!("f{i}.cu")).collect()
}

fn wait_stopped(pid: u32) {
    let stat = format!("/proc/{pid}/stat");
    for _ in 0..12000 {
        let s = std::fs::read_to_string(&stat).unwrap_or_default();
        if s.rsplit(')')
            .next()
            .is_some_and(|r| r.trim_start().starts_with('T'))
        {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    panic!("tune never stopped at its test point");
}

#[test]
fn an_uninterrupted_tune_writes_the_whole_set_and_says_so() {
    let t = tree();
    let o = tune(&t, &["--format", "json"], "");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r = report(&o);
    assert_eq!(names(&r["written"]), all());
    assert!(names(&r["edited"]).is_empty());
    assert_eq!(states(&t), vec![Some(true); FILES]);
    assert!(temps(&t).is_empty());
    assert!(!t.state.join("apply").exists());
}

/// A kill at each step of the apply's journal: the next run (here `--dry-run`, which writes
/// nothing itself) rolls the set back to the original files and removes every temporary file;
/// after the kill that follows the journal's removal, every file is updated and nothing is left
/// to recover.
#[test]
fn a_kill_at_each_step_of_the_apply_is_rolled_back_by_the_next_run() {
    for (step, n, finished) in [
        ("blobs", 1, false),
        ("journaled", 1, false),
        ("temp", 2, false),
        ("before-rename", 1, false),
        ("renamed", 3, false),
        ("renamed-all", 1, false),
        // The journal is held until the run is recorded finished in the ledger.
        ("done", 1, false),
        ("released", 1, true),
    ] {
        let t = tree();
        let spec = format!("tuner.apply.{step}=kill@{n}");
        let o = tune(&t, &[], &spec);
        assert_eq!(
            o.status.signal(),
            Some(libc::SIGKILL),
            "{spec}: {}",
            stderr(&o)
        );
        let o = tune(&t, &["--dry-run"], "");
        assert_eq!(o.status.code(), Some(0), "{spec}: {}", stderr(&o));
        let text = String::from_utf8_lossy(&o.stdout);
        assert_eq!(states(&t), vec![Some(finished); FILES], "{spec}: {text}");
        assert!(temps(&t).is_empty(), "{spec}: {:?}", temps(&t));
        assert!(!t.state.join("apply").exists(), "{spec}");
        let rolled_back = matches!(
            step,
            "journaled" | "temp" | "before-rename" | "renamed" | "renamed-all" | "done"
        );
        assert_eq!(
            text.contains("an apply interrupted by a kill was rolled back"),
            rolled_back,
            "{spec}: {text}"
        );
    }
}

/// After a kill half-way through the renames, `--resume` rolls back, continues the killed run
/// with every decision from the ledger, and writes the whole set.
#[test]
fn resume_after_a_kill_in_the_apply_writes_the_whole_set() {
    let t = tree();
    let o = tune(&t, &[], "tuner.apply.renamed=kill@3");
    assert_eq!(o.status.signal(), Some(libc::SIGKILL), "{}", stderr(&o));
    assert_eq!(
        states(&t),
        [true, true, true, false, false].map(Some).to_vec(),
        "three files renamed before the kill"
    );
    assert_eq!(
        temps(&t).len(),
        2,
        "the two temporary files not renamed yet"
    );
    let o = tune(&t, &["--resume"], "");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("an apply interrupted by a kill was rolled back: 3 file(s) restored, 2 untouched, 2 temporary file(s) removed"),
        "{text}"
    );
    assert!(
        text.contains("5 decisions reused from the ledger"),
        "{text}"
    );
    assert!(
        text.contains("written: f0.cu, f1.cu, f2.cu, f3.cu, f4.cu"),
        "{text}"
    );
    assert_eq!(states(&t), vec![Some(true); FILES]);
    assert!(temps(&t).is_empty());
}

/// A kill after the last rename, before the run is recorded finished: the next `--resume`
/// still finds the run (the set is rolled back, then written again) and ends as an uninterrupted
/// run; a kill once the run is recorded finished keeps the written set (completed, not rolled
/// back) and the ledger has the report. (Before the journal was held, the first left the tree
/// updated and the run unfinished: `--resume` said it held no interrupted run.)
#[test]
fn a_kill_between_the_last_rename_and_the_runs_end_still_resumes() {
    let t = tree();
    let o = tune(&t, &[], "tuner.apply.done=kill@1");
    assert_eq!(o.status.signal(), Some(libc::SIGKILL), "{}", stderr(&o));
    assert_eq!(states(&t), vec![Some(true); FILES]);
    let o = tune(&t, &["--resume", "--format", "json"], "");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r = report(&o);
    assert_eq!(names(&r["written"]), all(), "{r}");
    assert_eq!(states(&t), vec![Some(true); FILES]);
    assert!(temps(&t).is_empty());
    assert!(!t.state.join("apply").exists());

    let t = tree();
    let o = tune(&t, &[], "tuner.apply.release=kill@1");
    assert_eq!(o.status.signal(), Some(libc::SIGKILL), "{}", stderr(&o));
    assert!(t.state.join("apply/journal.json").exists());
    let o = tune(&t, &["--dry-run"], "");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("was completed: 5 file(s) kept updated"),
        "{text}"
    );
    assert_eq!(states(&t), vec![Some(true); FILES]);
    assert!(temps(&t).is_empty());
    assert!(!t.state.join("apply").exists());
}

/// An edit saved while tune waits between the third file's check and its rename is kept; the
/// two files written before it get their old content back; exit 3 with the report.
#[test]
fn an_edit_during_the_apply_is_kept_and_exits_3() {
    let t = tree();
    let c = command(
        &t,
        &["--format", "json"],
        "tuner.apply.before-rename=stop@3",
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    wait_stopped(c.id());
    let f2 = t.dir.join("f2.cu");
    let mut text = std::fs::read_to_string(&f2).unwrap();
    text.push_str("// USER EDIT\n");
    std::fs::write(&f2, &text).unwrap();
    // SAFETY: a signal to our own child.
    unsafe { libc::kill(c.id() as i32, libc::SIGCONT) };
    let o = c.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let r = report(&o);
    assert_eq!(names(&r["edited"]), ["f2.cu"]);
    assert!(names(&r["written"]).is_empty());
    assert_eq!(std::fs::read_to_string(&f2).unwrap(), text);
    assert_eq!(
        states(&t),
        vec![Some(false), Some(false), None, Some(false), Some(false)]
    );
    assert!(temps(&t).is_empty(), "{:?}", temps(&t));
    assert!(!t.state.join("apply").exists());
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

/// An I/O error part-way (the third file made immutable while tune waits before its rename):
/// exit 2 with one line that says what happened, and every file as it was.
#[test]
fn an_io_error_part_way_through_the_apply_restores_every_file() {
    let t = tree();
    let c = command(&t, &[], "tuner.apply.before-rename=stop@3")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_stopped(c.id());
    let f2 = t.dir.join("f2.cu");
    chattr("+i", &f2);
    // SAFETY: a signal to our own child.
    unsafe { libc::kill(c.id() as i32, libc::SIGCONT) };
    let o = c.wait_with_output().unwrap();
    chattr("-i", &f2);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    let e: Vec<&str> = e.lines().filter(|l| !l.starts_with("testpoint ")).collect();
    assert_eq!(
        e.join("\n"),
        format!(
            "error: cannot write {}: operation not permitted; the 2 file(s) written before it were restored: all 5 files are as they were",
            std::fs::canonicalize(&f2).unwrap().display()
        )
    );
    assert_eq!(states(&t), vec![Some(false); FILES]);
    assert!(temps(&t).is_empty(), "{:?}", temps(&t));
    // The run stays resumable: once the file is writable again, `--resume` applies the set.
    let o = tune(&t, &["--resume"], "");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("5 decisions reused from the ledger"),
        "{text}"
    );
    assert_eq!(states(&t), vec![Some(true); FILES]);
}

const NOBODY: u32 = 65534;

fn needs_root() {
    assert_eq!(
        rustix::process::geteuid().as_raw(),
        0,
        "this test gives a file to another user: run it as root (CI does)"
    );
}

/// The same policy as `unroll --in-place` and `check --fix`: another user's file keeps its owner
/// and mode; a read-only file or a hard-linked one refuses the whole set (nothing written).
#[test]
fn apply_keeps_owners_and_refuses_read_only_and_hard_linked_files() {
    needs_root();
    let t = tree();
    let f1 = t.dir.join("f1.cu");
    std::os::unix::fs::chown(&f1, Some(NOBODY), Some(NOBODY)).unwrap();
    std::fs::set_permissions(&f1, std::fs::Permissions::from_mode(0o640)).unwrap();
    let o = tune(&t, &[], "");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(states(&t), vec![Some(true); FILES]);
    let m = std::fs::metadata(&f1).unwrap();
    assert_eq!(
        (m.uid(), m.gid(), m.mode() & 0o777),
        (NOBODY, NOBODY, 0o640)
    );

    let t = tree();
    let f3 = t.dir.join("f3.cu");
    std::fs::set_permissions(&f3, std::fs::Permissions::from_mode(0o444)).unwrap();
    let o = tune(&t, &[], "");
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(
        e.contains("f3.cu: the file is read-only for you (mode 0444); it is left as it was"),
        "{e}"
    );
    assert_eq!(e.lines().count(), 1, "{e}");
    assert_eq!(states(&t), vec![Some(false); FILES]);

    let t = tree();
    std::fs::hard_link(t.dir.join("f4.cu"), t.dir.join("f4.other-name")).unwrap();
    let o = tune(&t, &[], "");
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(e.contains("f4.cu: it has 2 hard links"), "{e}");
    assert_eq!(states(&t), vec![Some(false); FILES]);
    assert!(temps(&t).is_empty());
}

/// `-o` is checked before the search: a FIFO, a character device (made with mknod here) and a
/// symbolic link are refused at once, with nothing measured and the target as it was; `-o -` is
/// stdout.
#[test]
fn tune_output_is_checked_before_the_search() {
    let t = tree();
    let fifo = t.dir.join("report.fifo");
    let dev = t.dir.join("report.dev");
    let link = t.dir.join("report.link");
    let target = t.dir.join("report.txt");
    std::fs::write(&target, "keep\n").unwrap();
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let made = |p: &Path, kind: libc::mode_t, dev: libc::dev_t| {
        let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
        // SAFETY: a valid C string.
        let r = unsafe { libc::mknod(c.as_ptr(), kind | 0o644, dev) };
        assert_eq!(
            r,
            0,
            "mknod {}: {}",
            p.display(),
            std::io::Error::last_os_error()
        );
    };
    made(&fifo, libc::S_IFIFO, 0);
    needs_root();
    made(&dev, libc::S_IFCHR, libc::makedev(1, 3));
    for (out, why) in [
        (&fifo, "is a FIFO (named pipe), not a regular file"),
        (&dev, "is a character device, not a regular file"),
        (&link, "it is a symbolic link"),
    ] {
        let o = tune(&t, &["-o", out.to_str().unwrap()], "");
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{e}");
        assert!(e.contains(why) && e.lines().count() == 1, "{e}");
        assert!(!t.state.exists(), "nothing ran: {e}");
    }
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep\n");
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::symlink_metadata(&dev)
        .unwrap()
        .file_type()
        .is_char_device());
    let o = tune(&t, &["--dry-run", "--format", "json", "-o", "-"], "");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(report(&o)["version"], 1);
}
