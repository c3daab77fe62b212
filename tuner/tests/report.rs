//! Snapshots of the three report renderers on a report built from data (fixed figures, no
//! measurement), and the JSON contract's keys: version 1's, and the keys added since only where
//! they have something to say (occupancy, ratios, a tie's comparison, a full unroll, timing).

use tuner::report::{
    self, Applied, Baseline, Candidate, Counts, Extra, Final, Occupancy, OccupancyUnit, Ratios,
    Registers, Report, Status, Timing, VariantRef, Versus, Work, FULL,
};

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
        full: factor == Some(FULL),
        key: fig.map(|_| format!("key-{lp}-{line}")),
        ratios: fig.map(|f| Ratios {
            pairs: vec![f.0 * 0.99, f.0, f.0 * 1.01],
            replication: Vec::new(),
        }),
        occupancy: None,
        versus: None,
        same_code_as: None,
        judged_by: None,
    }
}

fn sample() -> Report {
    Report {
        version: 1,
        baseline: Baseline {
            figure: 12.3,
            unit: "ms".into(),
            runs: 20,
            launches_per_sample: None,
        },
        final_: Final {
            figure: 10.1,
            speedup: 1.218,
            ci: Some([1.18, 1.25]),
        },
        candidates: vec![
            Candidate {
                occupancy: Some(Occupancy {
                    kernel: "ns::kern".into(),
                    unit: OccupancyUnit::WavesPerSimd,
                    before: 8,
                    after: 6,
                    registers: Registers {
                        before: 56,
                        after: 76,
                    },
                }),
                ..cand(
                    "ns::kern:0",
                    12,
                    Some("pragma"),
                    Some(4),
                    Status::Accepted,
                    Some((1.21, [1.17, 1.24], 0.0001, 12)),
                    None,
                )
            },
            Candidate {
                versus: Some(Versus {
                    kept: VariantRef::new("pragma", 4),
                    ratio: 1.004,
                    ci: [0.98, 1.03],
                }),
                ..cand(
                    "ns::kern:0",
                    12,
                    Some("manual"),
                    Some(4),
                    Status::Rejected,
                    Some((1.215, [1.16, 1.26], 0.0009, 10)),
                    Some("tie: pragma x4 within noise of manual x4 (speedup ratio 1.004 [0.980, 1.030])"),
                )
            },
            cand(
                "ns::kern:0",
                12,
                Some("pragma"),
                Some(FULL),
                Status::Refused,
                None,
                Some("not-constant-trip: a full unroll (`#pragma unroll` with no count) needs a trip count known at compile time; this `for` loop's is not"),
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
            full: false,
        }],
        written: vec!["kernels/k.cu".into()],
        edited: vec![],
        timing: Timing {
            wall: 42.5,
            measure: 30.25,
            compile: 6.5,
            prepare: 4.0,
            gates: 0.25,
            waiting: 0.5,
            other: 1.0,
            work: Work {
                measure: 30.25,
                compile: 11.0,
                prepare: 7.5,
                gates: 0.5,
                samples: 28.75,
            },
            counts: Counts {
                compiles: 6,
                builds: 5,
                samples: 304,
            },
        },
        specs: None,
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
            min_speedup: Some(0.02),
            confidence: Some(0.99),
            diff: Some("--- a/kernels/k.cu\n+++ b/kernels/k.cu\n@@ -11,3 +11,4 @@\n __global__ void kern(float* p, int n) {\n+    #pragma unroll 4\n     for (int i = 0; i < n; ++i) {\n".into()),
        },
    }
}

/// The multi-spec fields (the contract with the HTML renderer): top-level `specs` (each with
/// its own baseline and final figures when it has them), per candidate `judged_by`, exactly
/// these keys.
#[test]
fn specs_and_judged_by_have_exactly_the_contract_keys() {
    use tuner::report::{JudgedBy, SpecOutcome, SpecStatus};
    let mut r = sample();
    r.specs = Some(vec![
        SpecStatus {
            spec: "bench/a.toml".into(),
            kernel: "a".into(),
            status: SpecOutcome::Ok,
            reason: None,
            baseline: Some(report::Baseline {
                figure: 40.0,
                unit: "us".into(),
                runs: 20,
                launches_per_sample: None,
            }),
            final_: Some(report::Final {
                figure: 32.0,
                speedup: 1.25,
                ci: Some([1.2, 1.3]),
            }),
        },
        SpecStatus {
            spec: "bench/c.toml".into(),
            kernel: "c".into(),
            status: SpecOutcome::Failed,
            reason: Some("its baseline it does not build: k.cu:3: error".into()),
            baseline: None,
            final_: None,
        },
    ]);
    r.candidates[0].judged_by = Some(vec![JudgedBy {
        spec: "bench/a.toml".into(),
        kernel: "a".into(),
        speedup: 1.25,
        interval: [1.2, 1.3],
        ratios: vec![1.24, 1.26],
    }]);
    let v: serde_json::Value = serde_json::from_str(&report::json(&r)).unwrap();
    assert_eq!(
        v["specs"],
        serde_json::json!([
            {"spec": "bench/a.toml", "kernel": "a", "status": "ok",
             "baseline": {"figure": 40.0, "unit": "us", "runs": 20},
             "final": {"figure": 32.0, "speedup": 1.25, "ci": [1.2, 1.3]}},
            {"spec": "bench/c.toml", "kernel": "c", "status": "failed", "reason": "its baseline it does not build: k.cu:3: error"}
        ])
    );
    assert_eq!(
        v["candidates"][0]["judged_by"],
        serde_json::json!([{"spec": "bench/a.toml", "kernel": "a", "speedup": 1.25, "interval": [1.2, 1.3], "ratios": [1.24, 1.26]}])
    );
    assert!(v["candidates"][1].get("judged_by").is_none());
}

/// A baseline whose runs are batches of launches (the `bench` backend on a short kernel) says
/// so in every form; one whose runs are single runs says nothing of it (the snapshots).
#[test]
fn a_batched_baseline_says_how_many_launches_a_run_is() {
    let mut r = sample();
    r.baseline.launches_per_sample = Some(8);
    let said = "median of 20 runs, each the mean of 8 launches";
    assert!(report::human(&r).contains(said), "{}", report::human(&r));
    assert!(
        report::markdown(&r).contains(said),
        "{}",
        report::markdown(&r)
    );
    let v: serde_json::Value = serde_json::from_str(&report::json(&r)).unwrap();
    assert_eq!(v["baseline"]["launches_per_sample"], 8);
    let v: serde_json::Value = serde_json::from_str(&report::json(&sample())).unwrap();
    assert!(v["baseline"].get("launches_per_sample").is_none());
    r.baseline.launches_per_sample = Some(1);
    assert!(!report::human(&r).contains("each the mean"));
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
            "timing",
            "version",
            "written"
        ]
    );
    let keys_of =
        |c: &serde_json::Value| -> Vec<String> { c.as_object().unwrap().keys().cloned().collect() };
    // Version 1's keys, and what a measured candidate adds.
    assert_eq!(
        keys_of(&v["candidates"][0]),
        [
            "ci",
            "device",
            "factor",
            "file",
            "key",
            "line",
            "loop",
            "mode",
            "occupancy",
            "p_value",
            "ratios",
            "reason",
            "runs",
            "speedup",
            "status"
        ]
    );
    assert_eq!(
        v["candidates"][0]["occupancy"],
        serde_json::json!({"kernel": "ns::kern", "unit": "waves-per-simd", "before": 8, "after": 6, "registers": {"before": 56, "after": 76}})
    );
    assert_eq!(
        v["candidates"][1]["versus"],
        serde_json::json!({"kept": {"mode": "pragma", "factor": 4}, "ratio": 1.004, "ci": [0.98, 1.03]})
    );
    // A full unroll: factor null, `full` true.
    assert!(v["candidates"][2]["factor"].is_null());
    assert_eq!(v["candidates"][2]["full"], true);
    // A candidate with nothing new to say has exactly version 1's keys.
    let blocked = v["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["status"] == "blocked")
        .unwrap();
    assert_eq!(
        keys_of(blocked),
        [
            "ci", "factor", "file", "line", "loop", "mode", "p_value", "reason", "runs", "speedup",
            "status"
        ]
    );
    let d: Vec<&String> = v["candidates"][0]["device"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(d, ["host", "id", "model"]);
    let t: Vec<String> = keys_of(&v["timing"]);
    assert_eq!(
        t,
        ["compile", "counts", "gates", "measure", "other", "prepare", "waiting", "wall", "work"]
    );
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
            "refused",
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

/// The human and markdown reports end with the timing line.
#[test]
fn the_human_and_markdown_reports_end_with_the_timing_line() {
    let r = sample();
    let line = "timing: 42.50 s wall = measure 30.25 + compile 6.50 + prepare 4.00 + gates 0.25 + waiting 0.50 + other 1.00 (samples' own time 28.75 s, 304 samples)";
    assert_eq!(report::human(&r).lines().last(), Some(line));
    assert_eq!(report::markdown(&r).lines().last(), Some(line));
}

#[test]
fn a_second_run_that_compiled_nothing_says_so() {
    let mut r = sample();
    r.extra.compiles = 0;
    r.extra.builds = 0;
    r.extra.reused = 0;
    assert!(report::human(&r).contains("nothing compiled or built"));
}

/// The HTML page, one tag per line (maud writes it on one line).
#[test]
fn html_snapshot() {
    insta::assert_snapshot!(report::html(&sample()).replace("><", ">\n<"));
}

/// The forest plot has one mark per measured candidate (those with a speedup), the strip plot
/// their pairs, the accepted one highlighted, the minimum and 1 drawn, the occupancy change
/// beside the speedup, the timing's six phases, the diff's lines.
#[test]
fn html_plots_every_measured_candidate() {
    let r = sample();
    let h = report::html(&r);
    let measured = r.candidates.iter().filter(|c| c.speedup.is_some()).count();
    assert_eq!(measured, 3);
    assert_eq!(h.matches(r#"data-mark="candidate""#).count(), measured);
    assert_eq!(h.matches(r#"data-mark="ratios""#).count(), measured);
    let pairs: usize = r
        .candidates
        .iter()
        .filter_map(|c| c.ratios.as_ref())
        .map(|ra| ra.pairs.len())
        .sum();
    assert_eq!(h.matches(r#"<circle class="ratio""#).count(), pairs);
    assert_eq!(h.matches(r#"class="point kept""#).count(), 1);
    assert_eq!(h.matches(r#"<rect class="highlight""#).count(), 1);
    assert!(h.contains(">min 1.020</text>"), "the minimum speedup line");
    assert!(h.contains("the minimum speedup accepted: 1.020"));
    assert!(h.contains("speedup 1: no change"));
    assert!(h.contains("occupancy 8→6 waves/SIMD, 56→76 VGPRs"));
    assert_eq!(h.matches(r#"data-mark="phase""#).count(), 6);
    assert!(h.contains("measure: 30.25 s of 42.50 s wall (71.2%)"));
    assert!(h.contains(r#"<span class="add">+    #pragma unroll 4</span>"#));
    assert!(h.contains(r#"<span class="file">--- a/kernels/k.cu</span>"#));
    // Every mark has a title.
    let marks = h.matches("data-mark=").count();
    let titled = regex::Regex::new(r#"data-mark="[a-z-]+"[^>]*><title>"#)
        .unwrap()
        .find_iter(&h)
        .count();
    assert_eq!(marks, titled);
    // A report with nothing measured draws no forest plot.
    let mut none = sample();
    for c in &mut none.candidates {
        c.speedup = None;
    }
    assert!(!report::html(&none).contains("<svg class=\"forest\""));
}

/// Nothing to fetch and nothing to run: no script, no external reference, every link within
/// the page, and a policy that forbids every load.
#[test]
fn html_is_self_contained() {
    let h = report::html(&sample());
    assert!(h.starts_with("<!DOCTYPE html>"));
    for bad in [
        "<script", " src=", "url(", "@import", "http://", "https://", "<link", "<img", "<iframe",
        "<object", "<embed",
    ] {
        assert!(!h.contains(bad), "{bad}");
    }
    // No event handler attribute.
    assert!(!regex::Regex::new(r"<[^>]*\son[a-z]+=")
        .unwrap()
        .is_match(&h));
    for href in regex::Regex::new(r#"href="([^"]*)""#)
        .unwrap()
        .captures_iter(&h)
    {
        assert!(href[1].starts_with('#'), "{}", &href[1]);
    }
    assert!(h.contains(r#"content="default-src 'none'; style-src 'unsafe-inline'""#));
}

/// Every string that comes from the user's tree or commands is escaped.
#[test]
fn html_escapes_every_user_string() {
    let evil = r#"<script>alert("x")</script>&"#;
    let escaped = "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;";
    let mut r = sample();
    for c in &mut r.candidates {
        c.file = format!("{evil}.cu");
        c.loop_id = format!("{evil}{}", c.loop_id);
        c.reason = Some(evil.into());
        if let Some(o) = &mut c.occupancy {
            o.kernel = evil.into();
        }
    }
    r.applied[0].file = evil.into();
    r.applied[0].loop_id = evil.into();
    r.written = vec![evil.into()];
    r.edited = vec![evil.into()];
    r.baseline.unit = evil.into();
    r.extra.backend = evil.into();
    r.extra.notes = vec![evil.into()];
    r.extra.diff = Some(format!("+{evil}\n"));
    let h = report::html(&r);
    assert!(!h.contains("<script"), "an unescaped string");
    assert!(h.matches(escaped).count() >= 10, "{h}");
}
