//! `-o` (and `profile`'s `--trace-json`), the same policy for every command that writes a file:
//! a new path or a regular file; a FIFO, a character device (made with mknod in a temporary
//! directory, never a /dev node), a symbolic link, a read-only file and a hard-linked file are
//! refused with one line and left as they were (a FIFO never blocks); another user's file keeps
//! its owner and mode (as root); `-` is stdout. `tune -o` is tested in `tune_apply.rs`.

use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_hip-unroll");
const KERNEL: &str =
    "__global__ void k(float* a, int n) {\n    for (int i = 0; i < n; ++i) {\n        a[i] = 1.0f;\n    }\n}\n";
const NOBODY: u32 = 65534;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A command that writes one output file, given as its last argument.
struct Writer {
    name: &'static str,
    args: Vec<String>,
    /// What the written output starts with.
    starts: &'static str,
    /// Creates the output's directory (profile: `-o DIR` need not exist yet).
    makes_dirs: bool,
}

fn writers(dir: &Path) -> Vec<Writer> {
    let k = dir.join("k.cu");
    std::fs::write(&k, KERNEL).unwrap();
    let s = |p: &Path| p.to_str().unwrap().to_string();
    vec![
        Writer {
            name: "check",
            args: vec![
                "check".into(),
                "--format".into(),
                "json".into(),
                s(&repo().join("testdata/cli/clean.cu")),
                "-o".into(),
            ],
            starts: "{",
            makes_dirs: false,
        },
        Writer {
            name: "unroll",
            args: vec![
                "unroll".into(),
                s(&k),
                "--loop".into(),
                "2".into(),
                "--factor".into(),
                "2".into(),
                "-o".into(),
            ],
            starts: "__global__",
            makes_dirs: false,
        },
        Writer {
            name: "profile",
            args: vec![
                "profile".into(),
                "--format".into(),
                "json".into(),
                "--from".into(),
                s(&repo().join("testdata/profiler/rocprofv3-1.0")),
                "--trace-json".into(),
            ],
            starts: "{",
            makes_dirs: true,
        },
    ]
}

/// Run with a deadline: a command that blocked on a FIFO would fail here instead of hanging.
fn run(args: &[String], out: &Path) -> Output {
    let mut c = Command::new(BIN)
        .args(args)
        .arg(out)
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    while c.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = c.kill();
            panic!("{args:?} -o {} did not end", out.display());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    c.wait_with_output().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
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

fn refused(w: &Writer, out: &Path, why: &str) {
    let o = run(&w.args, out);
    let e = stderr(&o);
    assert_eq!(
        o.status.code(),
        Some(2),
        "{} -> {}: {e}",
        w.name,
        out.display()
    );
    assert!(
        e.contains(why) && e.lines().count() == 1,
        "{} -> {}: {e}",
        w.name,
        out.display()
    );
}

#[test]
fn outputs_refuse_fifos_devices_links_read_only_and_hard_linked_files() {
    assert_eq!(
        rustix::process::geteuid().as_raw(),
        0,
        "mknod of a character device and chown need root: run the tests as root (CI does)"
    );
    let d = tempfile::tempdir().unwrap();
    let fifo = d.path().join("out.fifo");
    mknod(&fifo, libc::S_IFIFO, 0);
    let dev = d.path().join("out.dev");
    mknod(&dev, libc::S_IFCHR, libc::makedev(1, 3));
    let target = d.path().join("target.txt");
    std::fs::write(&target, "keep\n").unwrap();
    let link = d.path().join("out.link");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let ro = d.path().join("read-only.txt");
    std::fs::write(&ro, "keep\n").unwrap();
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o444)).unwrap();
    let hard = d.path().join("hard.txt");
    std::fs::hard_link(&target, &hard).unwrap();
    for w in writers(d.path()) {
        refused(&w, &fifo, "is a FIFO (named pipe), not a regular file");
        refused(&w, &dev, "is a character device, not a regular file");
        refused(&w, &link, "it is a symbolic link (name the file itself)");
        refused(&w, &ro, "the file is read-only for you (mode 0444)");
        refused(&w, &hard, "it has 2 hard links");
        if !w.makes_dirs {
            refused(
                &w,
                &d.path().join("no/such/dir/out"),
                "no such file or directory",
            );
        }
    }
    let m = std::fs::symlink_metadata(&fifo).unwrap();
    assert!(m.file_type().is_fifo());
    assert!(std::fs::symlink_metadata(&dev)
        .unwrap()
        .file_type()
        .is_char_device());
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep\n");
    assert_eq!(std::fs::read_to_string(&ro).unwrap(), "keep\n");
    let temps: Vec<_> = std::fs::read_dir(d.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".hip-unroll-"))
        .collect();
    assert!(temps.is_empty(), "{temps:?}");
}

#[test]
fn outputs_keep_owner_and_mode_and_write_new_files_and_stdout() {
    assert_eq!(
        rustix::process::geteuid().as_raw(),
        0,
        "chown to nobody needs root: run the tests as root (CI does)"
    );
    let d = tempfile::tempdir().unwrap();
    for w in writers(d.path()) {
        let theirs = d.path().join(format!("{}-theirs.out", w.name));
        std::fs::write(&theirs, "old\n").unwrap();
        std::os::unix::fs::chown(&theirs, Some(NOBODY), Some(NOBODY)).unwrap();
        std::fs::set_permissions(&theirs, std::fs::Permissions::from_mode(0o640)).unwrap();
        let o = run(&w.args, &theirs);
        assert_eq!(o.status.code(), Some(0), "{}: {}", w.name, stderr(&o));
        let m = std::fs::metadata(&theirs).unwrap();
        assert_eq!(
            (m.uid(), m.gid(), m.mode() & 0o777),
            (NOBODY, NOBODY, 0o640),
            "{}",
            w.name
        );
        assert!(std::fs::read_to_string(&theirs)
            .unwrap()
            .starts_with(w.starts));

        let new = d.path().join(format!("{}-new.out", w.name));
        let o = run(&w.args, &new);
        assert_eq!(o.status.code(), Some(0), "{}: {}", w.name, stderr(&o));
        assert_eq!(std::fs::metadata(&new).unwrap().mode() & 0o777, 0o644);

        let o = run(&w.args, Path::new("-"));
        assert_eq!(o.status.code(), Some(0), "{}: {}", w.name, stderr(&o));
        assert!(
            String::from_utf8_lossy(&o.stdout).contains(w.starts),
            "{}",
            w.name
        );
        assert!(!d.path().join("-").exists());
    }
}

/// A small tmpfs mounted for one test, unmounted when dropped.
struct SmallFs {
    dir: tempfile::TempDir,
}

impl SmallFs {
    fn mount(size: &str) -> SmallFs {
        let dir = tempfile::tempdir().unwrap();
        let o = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .output();
        match o {
            Ok(o) if o.status.success() => SmallFs { dir },
            other => panic!(
                "cannot mount a tmpfs ({other:?}): this test needs root with mount rights (CI runs as root)"
            ),
        }
    }
}

impl Drop for SmallFs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).status();
    }
}

/// An output on a full file system: one line that says `disk full`, and the old report kept.
#[test]
fn an_output_on_a_full_disk_says_disk_full() {
    let fs = SmallFs::mount("64k");
    let out = fs.dir.path().join("report.json");
    std::fs::write(&out, "old\n").unwrap();
    // Fill what is left.
    let filler = std::fs::File::create(fs.dir.path().join("filler")).unwrap();
    let mut w = std::io::BufWriter::new(filler);
    let chunk = vec![0u8; 4096];
    while std::io::Write::write_all(&mut w, &chunk)
        .and_then(|_| std::io::Write::flush(&mut w))
        .is_ok()
    {}
    drop(w);
    let o = run(
        &[
            "check".into(),
            "--format".into(),
            "json".into(),
            repo().join("testdata/check").to_str().unwrap().into(),
            "-o".into(),
        ],
        &out,
    );
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert_eq!(
        e.lines().last().unwrap_or(""),
        format!("error: cannot write {}: disk full", out.display())
    );
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "old\n");
    let temps: Vec<_> = std::fs::read_dir(fs.dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".hip-unroll-"))
        .collect();
    assert!(temps.is_empty(), "{temps:?}");
}

fn temps_in(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".hip-unroll-"))
        .collect()
}

/// `-o`, `unroll --in-place` and `check --fix` killed (SIGKILL, test point) between writing their
/// temporary file and renaming it: the temporary file is left beside the target, and the next
/// write in that directory removes it (its writer is gone); a temporary file of a live writer
/// stays.
#[test]
fn a_temporary_file_left_by_a_kill_is_removed_by_the_next_write() {
    use std::os::unix::process::ExitStatusExt;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let k = d.join("k.cu");
    let fixable = repo().join("testdata/fix/wave-size/reduction.cu");
    let s = |p: &Path| p.to_str().unwrap().to_string();
    let unroll = |extra: &[&str]| {
        let mut v: Vec<String> = vec!["unroll".into(), s(&k)];
        v.extend(["--loop", "2", "--factor", "2"].map(String::from));
        v.extend(extra.iter().map(|x| x.to_string()));
        v
    };
    let cases: Vec<(&str, Vec<String>, &str)> = vec![
        (
            "-o",
            unroll(&["-o", &s(&d.join("out.cu"))]),
            "fsio.output.before-rename",
        ),
        (
            "--in-place",
            unroll(&["--in-place"]),
            "unroll.in-place.before-rename",
        ),
        (
            "check --fix",
            vec!["check".into(), "--unsafe-fixes".into(), s(&d.join("r.cu"))],
            "check.fix.before-rename",
        ),
    ];
    // A live writer's temporary file (this test's own process id): never removed.
    let live = d.join(format!(".hip-unroll-w{}-AAAAAA", std::process::id()));
    std::fs::write(&live, "x").unwrap();
    for (name, args, point) in cases {
        std::fs::write(&k, KERNEL).unwrap();
        std::fs::copy(&fixable, d.join("r.cu")).unwrap();
        let o = Command::new(BIN)
            .args(&args)
            .env("HIP_UNROLL_TESTPOINT", format!("{point}=kill"))
            .output()
            .unwrap();
        assert_eq!(
            o.status.signal(),
            Some(libc::SIGKILL),
            "{name}: {}",
            stderr(&o)
        );
        assert_eq!(temps_in(d).len(), 2, "{name}: {:?}", temps_in(d));
        let o = Command::new(BIN).args(&args).output().unwrap();
        assert!(
            matches!(o.status.code(), Some(0) | Some(1)),
            "{name}: {}",
            stderr(&o)
        );
        assert_eq!(
            temps_in(d),
            vec![live.file_name().unwrap().to_string_lossy().into_owned()],
            "{name}: the killed write's temporary file is left"
        );
    }
}
