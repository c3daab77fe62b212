//! The counted skip: printed, recorded, and failing where the capability is expected. Each case
//! runs this test binary again as a child with the environment it needs.

use std::process::Command;

/// The child side: skips for want of `cap-x` (run by the tests below with `--ignored`).
#[test]
#[ignore = "the child of the tests below, which run it with --ignored"]
fn child_skips() {
    if testenv::lacks("cap-x", false, "cap-x is not here") {
        return;
    }
    unreachable!("lacks returned false for a missing capability");
}

fn child(expect: Option<&str>, log: &std::path::Path) -> std::process::Output {
    let mut c = Command::new(std::env::current_exe().unwrap());
    c.args(["--exact", "child_skips", "--ignored", "--nocapture"])
        .env("HIP_UNROLL_SKIP_LOG", log)
        .env_remove("HIP_UNROLL_EXPECT");
    if let Some(e) = expect {
        c.env("HIP_UNROLL_EXPECT", e);
    }
    c.output().unwrap()
}

#[test]
fn a_skip_is_printed_and_recorded() {
    let t = tempfile::tempdir().unwrap();
    let log = t.path().join("skips");
    let o = child(Some("other,cap-y"), &log);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("SKIP child_skips: cap-x is not here (needs cap-x)"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(&log).unwrap(),
        "SKIP child_skips: cap-x is not here (needs cap-x)\n"
    );
}

#[test]
fn a_skip_of_an_expected_capability_fails() {
    let t = tempfile::tempdir().unwrap();
    let log = t.path().join("skips");
    for expect in ["cap-x", "a, cap-x", "all"] {
        let o = child(Some(expect), &log);
        let out =
            String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{expect}: {out}");
        assert!(
            out.contains("HIP_UNROLL_EXPECT says this machine has cap-x"),
            "{out}"
        );
    }
    assert!(!log.exists(), "a failing skip is no skip");
}

#[test]
fn present_capabilities_run() {
    assert!(!testenv::lacks("cap-z", true, "never printed"));
}
