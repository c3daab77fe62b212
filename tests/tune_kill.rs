//! `hip-unroll tune` killed (SIGKILL, through `fsio::testpoint`) at named points of every phase,
//! then resumed: the decisions must be those of an uninterrupted run, no decision may be
//! recorded for a variant that was not built and measured, and the state directory must stay
//! usable. Also symbolic links inside the tree, a full disk under the state directory (a real
//! small tmpfs, in a private mount namespace), and an unknown status in the ledger.
//!
//! The tree is tiny and its figure deterministic: `build.sh` concatenates the kernels into
//! `app.src`, and `run.sh` prints a cost that follows from the pragmas `app.src` holds, so that
//! decisions can be compared exactly. The code-object gates are off (`[compile] command` fails,
//! so they are `skipped`): these tests are about the search's state, not the compiler.

use rusqlite::Connection;
use serde_json::Value;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

const BIN: &str = env!("CARGO_BIN_EXE_hip-unroll");

#[path = "support/tiny_tree.rs"]
mod tiny_tree;
use tiny_tree::tiny;

fn args(state: &Path) -> Vec<String> {
    tiny_tree::tune_args(state)
}

fn tune(dir: &Path, args: &[String], testpoint: Option<&str>) -> Output {
    let mut c = Command::new(BIN);
    c.args(args).current_dir(dir);
    match testpoint {
        Some(t) => c.env("HIP_UNROLL_TESTPOINT", t),
        None => c.env_remove("HIP_UNROLL_TESTPOINT"),
    };
    c.output().expect("run hip-unroll")
}

fn killed(o: &Output) -> bool {
    o.status.signal() == Some(9)
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A reason without the gates' `skipped` note, which names temporary files.
fn without_gates_note(reason: &str) -> Option<String> {
    let kept = reason
        .split("code-object gates skipped")
        .next()
        .unwrap_or_default()
        .trim_end_matches("; ");
    (!kept.is_empty()).then(|| kept.to_string())
}

/// A decision as stored, every field that a decision is made of.
type Row = (
    String,
    String,
    Option<f64>,
    Option<f64>,
    Option<i64>,
    Option<String>,
);

fn decisions(state: &Path) -> Vec<Row> {
    let db = Connection::open(state.join("ledger.db")).unwrap();
    let mut st = db
        .prepare("SELECT key, status, speedup, p_value, runs, reason FROM decisions ORDER BY key")
        .unwrap();
    st.query_map([], |r| {
        Ok((
            r.get(0)?,
            r.get(1)?,
            r.get(2)?,
            r.get(3)?,
            r.get(4)?,
            r.get::<_, Option<String>>(5)?
                .and_then(|w| without_gates_note(&w)),
        ))
    })
    .unwrap()
    .map(|r| r.unwrap())
    .collect()
}

/// The report's candidates, without the run-specific `reused` figures.
fn outcome(report: &Value) -> Vec<String> {
    report["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            format!(
                "{} {} x{} {} {} {}",
                c["loop"],
                c["mode"],
                c["factor"],
                c["status"],
                c["speedup"],
                c["reason"]
                    .as_str()
                    .and_then(without_gates_note)
                    .unwrap_or_default()
            )
        })
        .collect()
}

struct Reference {
    decisions: Vec<Row>,
    outcome: Vec<String>,
    files: Vec<(String, Vec<u8>)>,
}

fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = ["a.cu", "b.cu", "c.cu", "src/a.cu"]
        .iter()
        .filter_map(|f| std::fs::read(dir.join(f)).ok().map(|b| (f.to_string(), b)))
        .collect();
    v.sort();
    v
}

/// One uninterrupted run of the tiny tree: what every killed and resumed run must end with.
fn reference() -> &'static Reference {
    static R: OnceLock<Reference> = OnceLock::new();
    R.get_or_init(|| {
        let dir = tiny(false);
        let state = tempfile::tempdir().unwrap();
        let o = tune(dir.path(), &args(state.path()), None);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let r: Value = serde_json::from_slice(&o.stdout).unwrap();
        Reference {
            decisions: decisions(state.path()),
            outcome: outcome(&r),
            files: files(dir.path()),
        }
    })
}

#[test]
fn the_reference_run_decides_as_the_figures_say() {
    let r = reference();
    // Greedy per kernel: each kernel's loop is measured against the original (2000), and the
    // accepted variants of both kernels are combined for the confirmation.
    let want = [
        "\"fast:0\" \"pragma\" x2 \"rejected\" 1.1111111111111112 superseded: pragma x4 (1.333x) of this loop was significantly faster (speedup ratio 1.200 [1.200, 1.200])",
        "\"fast:0\" \"pragma\" x4 \"accepted\" 1.3333333333333333 ",
        "\"more:0\" \"pragma\" x2 \"rejected\" 1.0526315789473684 superseded: pragma x4 (1.176x) of this loop was significantly faster (speedup ratio 1.118 [1.118, 1.118])",
        "\"more:0\" \"pragma\" x4 \"accepted\" 1.1764705882352942 ",
        "\"flat:0\" \"pragma\" x2 \"rejected\" 1.0 futile: the interval [1.000, 1.000] rules out a 2.0% speedup",
        "\"flat:0\" \"pragma\" x4 \"rejected\" 1.0 futile: the interval [1.000, 1.000] rules out a 2.0% speedup",
    ];
    assert_eq!(r.outcome, want);
    // 6 variants and the confirmation (2000 against 1200).
    assert_eq!(r.decisions.len(), 7);
    assert!(r
        .decisions
        .iter()
        .any(|d| d.5.as_deref() == Some("confirmation") && d.2 == Some(2000.0 / 1200.0)));
    for (f, b) in &r.files[..2] {
        assert!(
            String::from_utf8_lossy(b).contains("#pragma unroll 4"),
            "{f}"
        );
    }
}

/// Run with `testpoint` armed until it no longer fires (`--resume` after each kill), then
/// check the end state against the reference. Returns how many kills there were.
fn kill_and_resume(testpoint: &str, nths: impl Iterator<Item = usize>) -> usize {
    let reference = reference();
    let mut kills = 0;
    for nth in nths {
        let dir = tiny(false);
        let state = tempfile::tempdir().unwrap();
        let spec = format!("{testpoint}=kill@{nth}");
        let o = tune(dir.path(), &args(state.path()), Some(&spec));
        if !killed(&o) {
            assert_eq!(o.status.code(), Some(0), "{spec}: {}", stderr(&o));
            break;
        }
        kills += 1;
        let mut resume = args(state.path());
        resume.push("--resume".into());
        let o = tune(dir.path(), &resume, None);
        let o = if o.status.code() == Some(2) && stderr(&o).contains("holds no interrupted run") {
            // Killed before the run was recorded: a plain run starts it.
            tune(dir.path(), &args(state.path()), None)
        } else {
            o
        };
        assert_eq!(o.status.code(), Some(0), "{spec}: {}", stderr(&o));
        let r: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(
            decisions(state.path()),
            reference.decisions,
            "{spec}: the decisions differ from an uninterrupted run's"
        );
        assert_eq!(outcome(&r), reference.outcome, "{spec}");
        assert_eq!(files(dir.path()), reference.files, "{spec}");
        never_decided_unmeasured(state.path(), &spec);
        no_temp_files(dir.path(), state.path(), &spec);
    }
    kills
}

/// Every accepted or rejected decision has its samples, and its variant was built.
fn never_decided_unmeasured(state: &Path, spec: &str) {
    let db = Connection::open(state.join("ledger.db")).unwrap();
    let bad: Vec<(String, String, i64, i64)> = db
        .prepare(
            "SELECT d.key, d.status, d.runs,
                    (SELECT count(*) FROM samples s WHERE s.comparison = d.key) AS n
             FROM decisions d WHERE d.status IN ('accepted', 'rejected')
               AND (n < 2 * d.runs OR (d.reason IS NOT 'confirmation' AND NOT EXISTS
                    (SELECT 1 FROM builds b WHERE b.state = d.variant_state AND b.outcome = 'ok')))",
        )
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .map(|r| r.unwrap())
        .collect();
    assert!(
        bad.is_empty(),
        "{spec}: decided without measurement: {bad:?}"
    );
}

fn no_temp_files(dir: &Path, state: &Path, spec: &str) {
    for d in [dir, state] {
        for e in walk(d) {
            let name = e.file_name().unwrap().to_string_lossy().into_owned();
            assert!(
                !name.starts_with(".hip-unroll-") && !name.ends_with(".new"),
                "{spec}: temporary file left: {}",
                e.display()
            );
        }
    }
}

fn walk(d: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir(d) else {
        return out;
    };
    for e in rd.flatten() {
        let p = e.path();
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn a_kill_inside_a_working_copy_sync_never_leaves_a_trusted_stale_manifest() {
    // A file written, the manifest not yet saved: the first copies of the slots (7 files each,
    // hits 1-21), then `more`'s variants written over the copy that held the baseline and
    // over the other one (hits 22-25, two threads), the restores.
    let kills = kill_and_resume(
        "tuner.workcopy.sync.file-written",
        [5, 15].into_iter().chain(20..=30),
    );
    assert!(kills >= 8, "only {kills} kills");
    let kills = kill_and_resume("tuner.workcopy.sync.manifest-first", [4, 5, 6].into_iter());
    assert_eq!(kills, 3);
}

#[test]
fn kills_while_measuring_and_deciding_resume_to_the_same_decisions() {
    // The first decision, a loop's last, the confirmation.
    assert_eq!(
        kill_and_resume("tuner.search.decided", [1, 4, 7].into_iter()),
        3
    );
    // The A/A repeats, the first comparison's first pair, the confirmation.
    let kills = kill_and_resume("tuner.search.sample", [7, 21, 150].into_iter());
    assert_eq!(kills, 3);
    assert_eq!(kill_and_resume("tuner.search.prepared", [2].into_iter()), 1);
    assert_eq!(
        kill_and_resume("tuner.search.discovered", [1].into_iter()),
        1
    );
}

#[test]
fn a_kill_while_the_first_ledger_is_created_leaves_no_ledger_and_the_next_run_works() {
    let dir = tiny(false);
    let state = tempfile::tempdir().unwrap();
    let o = tune(
        dir.path(),
        &args(state.path()),
        Some("tuner.ledger.create.before-rename=kill"),
    );
    assert!(killed(&o), "{}", stderr(&o));
    assert!(!state.path().join("ledger.db").exists());
    let o = tune(dir.path(), &args(state.path()), None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(decisions(state.path()), reference().decisions);
    no_temp_files(dir.path(), state.path(), "create");
    // A ledger left without its schema by an older hip-unroll (created in place, killed): an
    // empty database in WAL mode is replaced, not refused as corrupt.
    let state = tempfile::tempdir().unwrap();
    let c = Connection::open(state.path().join("ledger.db")).unwrap();
    c.pragma_update(None, "journal_mode", "WAL").unwrap();
    drop(c);
    assert!(
        std::fs::metadata(state.path().join("ledger.db"))
            .unwrap()
            .len()
            > 0
    );
    let o = tune(dir.path(), &args(state.path()), None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn symbolic_links_in_the_tree_stay_links_in_the_working_copies() {
    let dir = tiny(true);
    let state = tempfile::tempdir().unwrap();
    let o = tune(dir.path(), &args(state.path()), None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    // The build reads the link: it sees the variant written to the link's target.
    let out = outcome(&r);
    assert!(
        out.iter()
            .any(|c| c.starts_with("\"fast:0\" \"pragma\" x4 \"accepted\" 1.3333")),
        "{out:#?}"
    );
    // (Greedy per kernel: `fast`'s loop is measured against the original, 2000 against 1500.)
    assert!(
        r["applied"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a["file"] == "src/a.cu" && a["loop"] == "fast:0"),
        "{}",
        r["applied"]
    );
    // The user's links are still links; the target got the edit.
    let p = dir.path();
    assert!(std::fs::symlink_metadata(p.join("a.cu"))
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(std::fs::read_to_string(p.join("a.cu"))
        .unwrap()
        .contains("#pragma unroll 4"));
    for slot in ["0", "1", "2"] {
        let t = state.path().join("slots").join(slot).join("tree");
        assert_eq!(
            std::fs::read_link(t.join("a.cu")).unwrap(),
            Path::new("src/a.cu")
        );
        assert_eq!(std::fs::read_link(t.join("inc")).unwrap(), Path::new("src"));
    }
}

#[test]
fn an_unknown_status_in_the_ledger_is_an_error_not_a_rejection() {
    let dir = tiny(false);
    let state = tempfile::tempdir().unwrap();
    let o = tune(dir.path(), &args(state.path()), None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let db = Connection::open(state.path().join("ledger.db")).unwrap();
    let n = db
        .execute(
            "UPDATE decisions SET status = 'maybe' WHERE key = (SELECT key FROM decisions
             WHERE status = 'accepted' AND reason IS NOT 'confirmation' LIMIT 1)",
            [],
        )
        .unwrap();
    assert_eq!(n, 1);
    drop(db);
    // Against the original tree again (the accepted edit was applied: restore it).
    std::fs::write(dir.path().join("a.cu"), tiny_tree::A).unwrap();
    std::fs::write(dir.path().join("b.cu"), tiny_tree::B).unwrap();
    let o = tune(dir.path(), &args(state.path()), None);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert_eq!(e.trim_end().lines().count(), 1, "{e}");
    assert!(e.contains("unknown status 'maybe'"), "{e}");
}

/// Run `script` (sh) in a private mount namespace with a tmpfs of `size` mounted at `$1`.
fn in_tmpfs(mount: &Path, size: &str, script: &str) -> Output {
    let o = Command::new("unshare")
        .args(["-rm", "sh", "-c"])
        .arg(format!(
            "mount -t tmpfs -o size={size} tmpfs \"$1\" || exit 99\n{script}"
        ))
        .arg("sh")
        .arg(mount)
        .output()
        .expect("unshare (util-linux) runs");
    assert_ne!(
        o.status.code(),
        Some(99),
        "this test needs a private mount namespace (unshare -rm) to mount a small tmpfs: {}",
        stderr(&o)
    );
    o
}

#[test]
fn a_full_state_disk_says_disk_full_and_resume_continues_once_there_is_space() {
    let dir = tiny(false);
    let outside = tempfile::tempdir().unwrap();
    let mnt = outside.path().join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    let logs = outside.path().join("logs");
    std::fs::create_dir(&logs).unwrap();
    let q = |s: &[String]| shlex::try_join(s.iter().map(String::as_str)).unwrap();
    let state = mnt.join("state");
    let a = q(&args(&state));
    let mut r = args(&state);
    r.push("--resume".into());
    let resume = q(&r);
    // 1. a run killed at its third decision; 2. the disk filled up; --resume fails on it;
    // 3. a first run in an empty state directory of a full disk; 4. space freed: --resume goes on.
    let script = format!(
        "cd {dir}
export HIP_UNROLL_TESTPOINT=tuner.search.decided=kill@3
{bin} {a} > {logs}/1.out 2> {logs}/1.err; echo $? > {logs}/1.rc
unset HIP_UNROLL_TESTPOINT
dd if=/dev/zero of=\"$1/filler\" bs=64k 2>/dev/null
{bin} {resume} > {logs}/2.out 2> {logs}/2.err; echo $? > {logs}/2.rc
mkdir \"$1/empty\"
{bin} {fresh} > {logs}/3.out 2> {logs}/3.err; echo $? > {logs}/3.rc
ls -a \"$1/empty\" > {logs}/3.ls
rm \"$1/filler\"
{bin} {resume} > {logs}/4.out 2> {logs}/4.err; echo $? > {logs}/4.rc
cp {db} {logs}/ledger.db
",
        dir = shlex::try_quote(dir.path().to_str().unwrap()).unwrap(),
        bin = BIN,
        logs = logs.display(),
        fresh = q(&args(&mnt.join("empty"))),
        db = state.join("ledger.db").display(),
    );
    let o = in_tmpfs(&mnt, "8m", &script);
    assert!(o.status.success(), "{}", stderr(&o));
    let read = |f: &str| std::fs::read_to_string(logs.join(f)).unwrap_or_default();
    assert_eq!(read("1.rc").trim(), "137", "{}", read("1.err"));
    for step in ["2", "3"] {
        assert_eq!(
            read(&format!("{step}.rc")).trim(),
            "2",
            "{}",
            read(&format!("{step}.err"))
        );
        let e = read(&format!("{step}.err"));
        assert_eq!(e.trim_end().lines().count(), 1, "{e}");
        assert!(e.contains("disk full"), "step {step}: {e}");
        assert!(!e.contains("corrupt"), "step {step}: {e}");
    }
    assert_eq!(
        read("3.ls")
            .split_whitespace()
            .filter(|n| n.contains("ledger"))
            .count(),
        0,
        "{}",
        read("3.ls")
    );
    assert_eq!(read("4.rc").trim(), "0", "{}", read("4.err"));
    assert_eq!(decisions(&logs), reference().decisions);
}
