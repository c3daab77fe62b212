//! Snapshots of the three report renderers on a report built from data (no timings), and
//! the JSON contract's keys.

use tuner::report::{self, Applied, Baseline, Candidate, Extra, Final, Report, Status};

fn cand(
    lp: &str,
    line: u32,
    mode: Option<&str>,
    factor: Option<u32>,
    status: Status,
    fig: Option<(f64, [f64; 2], f64, u32)>,
    reason: Option<&str>,
) -> Candidate {
    Candidate {
        file: "kernels/k.cu".into(),
        loop_id: lp.into(),
        line,
        mode: mode.map(String::from),
        factor,
        status,
        speedup: fig.map(|f| f.0),
        ci: fig.map(|f| f.1),
        p_value: fig.map(|f| f.2),
        runs: fig.map(|f| f.3),
        reason: reason.map(String::from),
        device: fig.map(|_| tuner::lane::Device {
            model: "AMD gfx90a".into(),
            id: Some("1".into()),
            host: "node7".into(),
        }),
    }
}

fn sample() -> Report {
    Report {
        version: 1,
        baseline: Baseline {
            figure: 12.3,
            unit: "ms".into(),
            runs: 20,
        },
        final_: Final {
            figure: 10.1,
            speedup: 1.218,
            ci: Some([1.18, 1.25]),
        },
        candidates: vec![
            cand(
                "ns::kern:0",
                12,
                Some("pragma"),
                Some(4),
                Status::Accepted,
                Some((1.21, [1.17, 1.24], 0.0001, 12)),
                None,
            ),
            cand(
                "ns::kern:0",
                12,
                Some("manual"),
                Some(4),
                Status::Rejected,
                Some((1.1, [1.05, 1.16], 0.0009, 10)),
                Some("superseded: pragma x4 (1.210x) of this loop was faster"),
            ),
            cand(
                "ns::kern:1",
                20,
                Some("pragma"),
                Some(8),
                Status::Rejected,
                Some((0.998, [0.971, 1.02], 0.61, 20)),
                Some("futile: the interval [0.971, 1.020] rules out a 2.0% speedup"),
            ),
            cand(
                "ns::kern:1",
                20,
                Some("manual"),
                Some(8),
                Status::Gated,
                None,
                Some("vgpr-pressure: kern on gfx90a: spills 12 VGPRs (baseline 0)"),
            ),
            cand(
                "red:0",
                31,
                Some("manual"),
                Some(2),
                Status::CheckFailed,
                None,
                Some("--check exit 1"),
            ),
            cand(
                "red:0",
                31,
                Some("pragma"),
                Some(2),
                Status::BuildFailed,
                None,
                Some("--build exit 2: k.cu:31: error: expected ';'"),
            ),
            cand(
                "while_k:0",
                40,
                Some("manual"),
                Some(2),
                Status::Refused,
                None,
                Some("not-a-for-loop: manual unrolling handles `for` loops only"),
            ),
            cand(
                "tile:0",
                50,
                None,
                None,
                Status::Blocked,
                None,
                Some("blocked by barrier"),
            ),
            cand(
                "cold:0",
                60,
                None,
                None,
                Status::NotRun,
                None,
                Some("kernel cold never ran in the baseline"),
            ),
        ],
        applied: vec![Applied {
            file: "kernels/k.cu".into(),
            loop_id: "ns::kern:0".into(),
            line: 12,
            mode: "pragma".into(),
            factor: 4,
        }],
        written: vec!["kernels/k.cu".into()],
        edited: vec![],
        extra: Extra {
            backend: "command".into(),
            noise: Some((0.031, 0.052)),
            compiles: 6,
            builds: 5,
            reused: 1,
            outcome: tuner::report::Outcome::Applied,
            notes: vec![
                "code-object gates skipped for gen/x.cu: x.cu:1: error: unknown type name 'foo'"
                    .into(),
            ],
        },
    }
}

#[test]
fn json_snapshot() {
    insta::assert_snapshot!(report::json(&sample()));
}

#[test]
fn human_snapshot() {
    insta::assert_snapshot!(report::human(&sample()));
}

#[test]
fn markdown_snapshot() {
    insta::assert_snapshot!(report::markdown(&sample()));
}

#[test]
fn json_has_exactly_the_contract_keys() {
    let v: serde_json::Value = serde_json::from_str(&report::json(&sample())).unwrap();
    let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "applied",
            "baseline",
            "candidates",
            "edited",
            "final",
            "version",
            "written"
        ]
    );
    let c: Vec<&String> = v["candidates"][0].as_object().unwrap().keys().collect();
    assert_eq!(
        c,
        [
            "ci", "device", "factor", "file", "line", "loop", "mode", "p_value", "reason", "runs",
            "speedup", "status"
        ]
    );
    let d: Vec<&String> = v["candidates"][0]["device"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(d, ["host", "id", "model"]);
    let statuses: Vec<&str> = v["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["status"].as_str().unwrap())
        .collect();
    assert_eq!(
        statuses,
        [
            "accepted",
            "rejected",
            "rejected",
            "gated",
            "check-failed",
            "build-failed",
            "refused",
            "blocked",
            "not-run"
        ]
    );
}

#[test]
fn a_second_run_that_compiled_nothing_says_so() {
    let mut r = sample();
    r.extra.compiles = 0;
    r.extra.builds = 0;
    r.extra.reused = 0;
    assert!(report::human(&r).contains("nothing compiled or built"));
}
