//! The per-kernel summary that the markdown and HTML reports share: the report's candidates
//! grouped by the function whose loops they are (the search's chains: loops are tuned per
//! function, greedy within it), which of them were measured, and the multi-spec judgements
//! (`specs`, each candidate's `judged_by`) read from the report's JSON shape.

use super::{Candidate, Report, Status};
use serde::Deserialize;

/// The candidates of one function, in report order.
#[derive(Debug, Clone, PartialEq)]
pub struct Group<'r> {
    /// The function's part of the loop ids (`ns::kern`, `over(float*, int)`).
    pub function: String,
    pub file: String,
    /// Indices into `Report::candidates`.
    pub candidates: Vec<usize>,
    /// Loops (loop id, line) in order of first appearance.
    pub loops: Vec<(&'r str, u32)>,
}

impl Group<'_> {
    /// The measured candidates of the group (see [`measured`]).
    pub fn measured<'a>(&'a self, r: &'a Report) -> impl Iterator<Item = usize> + 'a {
        self.candidates
            .iter()
            .copied()
            .filter(move |&i| measured(&r.candidates[i]))
    }
}

/// A measured candidate: one with a speedup (its own comparison, a decision the ledger kept, or
/// the decision of a variant with the same machine code). These are the marks of the forest
/// plots.
pub fn measured(c: &Candidate) -> bool {
    c.speedup.is_some_and(f64::is_finite)
}

/// The function part of a loop id (`FUNCTION:INDEX`, the frontend's loop identity: INDEX is
/// the digits after the last colon).
pub fn function_of(loop_id: &str) -> &str {
    match loop_id.rsplit_once(':') {
        Some((f, i)) if !f.is_empty() && !i.is_empty() && i.bytes().all(|b| b.is_ascii_digit()) => {
            f
        }
        _ => loop_id,
    }
}

/// The report's candidates grouped by (file, function), groups in order of first appearance.
pub fn groups(r: &Report) -> Vec<Group<'_>> {
    let mut out: Vec<Group<'_>> = Vec::new();
    for (i, c) in r.candidates.iter().enumerate() {
        let function = function_of(&c.loop_id);
        let g = match out
            .iter_mut()
            .position(|g| g.file == c.file && g.function == function)
        {
            Some(k) => &mut out[k],
            None => {
                out.push(Group {
                    function: function.to_string(),
                    file: c.file.clone(),
                    candidates: Vec::new(),
                    loops: Vec::new(),
                });
                out.last_mut().expect("just pushed")
            }
        };
        g.candidates.push(i);
        if !g.loops.iter().any(|(id, _)| *id == c.loop_id) {
            g.loops.push((&c.loop_id, c.line));
        }
    }
    out
}

/// A spec of a multi-spec run (`specs` in the JSON report).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct SpecRow {
    pub spec: String,
    pub kernel: String,
    pub status: String,
    #[serde(default)]
    pub reason: Option<String>,
    /// Its kernel's baseline and, where the confirmation measured it, its final figure.
    #[serde(default)]
    pub baseline: Option<SpecFigure>,
    #[serde(default, rename = "final")]
    pub final_: Option<SpecFigure>,
}

impl SpecRow {
    /// Its baseline and final figures as the reports show them (`40.0 us`, `32.0 us
    /// (1.250x)`), each empty where the report has none.
    pub fn figures(&self) -> (String, String) {
        let unit = self
            .baseline
            .as_ref()
            .and_then(|b| b.unit.as_deref())
            .unwrap_or("");
        let baseline = self
            .baseline
            .as_ref()
            .map(|b| format!("{} {unit}", super::fig(b.figure)))
            .unwrap_or_default();
        let final_ = self
            .final_
            .as_ref()
            .map(|f| {
                format!(
                    "{} {unit}{}",
                    super::fig(f.figure),
                    f.speedup.map(|x| format!(" ({x:.3}x)")).unwrap_or_default()
                )
            })
            .unwrap_or_default();
        (baseline, final_)
    }
}

/// A spec's figure in the JSON report: `figure` and `unit` (baseline), or `figure` and
/// `speedup` (final).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct SpecFigure {
    pub figure: f64,
    #[serde(default)]
    pub unit: Option<String>,
    #[serde(default)]
    pub speedup: Option<f64>,
}

/// One spec's judgement of a candidate (`judged_by` in the JSON report).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Judgement {
    pub spec: String,
    pub kernel: String,
    pub speedup: f64,
    pub interval: [f64; 2],
    #[serde(default)]
    pub ratios: Vec<f64>,
}

/// The multi-spec part of a report: empty for a run without specs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Specs {
    pub specs: Vec<SpecRow>,
    /// Per candidate (by index), the specs that judged it.
    pub judged_by: Vec<Vec<Judgement>>,
}

impl Specs {
    /// The multi-spec fields of `r` as its JSON carries them (absent fields: empty).
    pub fn of(r: &Report) -> Specs {
        serde_json::to_value(r)
            .map(|v| Specs::from_json(&v))
            .unwrap_or_default()
    }

    /// The multi-spec fields of a report's JSON value: top-level `specs` and each candidate's
    /// `judged_by`. An absent field is empty; so is one of another shape (these renderers
    /// show what they can read and nothing else).
    pub fn from_json(v: &serde_json::Value) -> Specs {
        let specs = v
            .get("specs")
            .and_then(|s| Vec::<SpecRow>::deserialize(s).ok())
            .unwrap_or_default();
        let judged_by = v
            .get("candidates")
            .and_then(serde_json::Value::as_array)
            .map(|cs| {
                cs.iter()
                    .map(|c| {
                        c.get("judged_by")
                            .and_then(|j| Vec::<Judgement>::deserialize(j).ok())
                            .unwrap_or_default()
                    })
                    .collect()
            })
            .unwrap_or_default();
        Specs { specs, judged_by }
    }

    /// The judgements of candidate `i`.
    pub fn of_candidate(&self, i: usize) -> &[Judgement] {
        self.judged_by.get(i).map_or(&[], Vec::as_slice)
    }

    /// The specs (spec, kernel) that judged loop `loop_id` of `file`, each once, in order.
    pub fn of_loop<'a>(&'a self, r: &Report, file: &str, loop_id: &str) -> Vec<(&'a str, &'a str)> {
        let mut out: Vec<(&str, &str)> = Vec::new();
        for (i, c) in r.candidates.iter().enumerate() {
            if c.file != file || c.loop_id != loop_id {
                continue;
            }
            for j in self.of_candidate(i) {
                if !out.contains(&(j.spec.as_str(), j.kernel.as_str())) {
                    out.push((&j.spec, &j.kernel));
                }
            }
        }
        out
    }
}

/// How a candidate's decision is shown in a word: its status, or `tie`/`superseded` for an
/// accepted variant that lost to the one kept, `same code` for a twin.
pub fn decision(c: &Candidate) -> String {
    match (&c.versus, c.status) {
        (Some(v), Status::Rejected) if v.ci[0] > 1.0 => "superseded".into(),
        (Some(_), Status::Rejected) => "tie".into(),
        (_, s) => s.as_str().into(),
    }
}

/// The candidate's variant (`pragma x4`), `-` for a whole loop.
pub fn variant(c: &Candidate) -> String {
    super::variant(c)
}

/// `1.210x [1.170, 1.240]`, or `1.210x` without an interval; empty when not measured.
pub fn speedup(c: &Candidate) -> String {
    super::speed(c)
}

/// The occupancy change (`8 -> 6 waves per SIMD (56 -> 76 VGPRs)`), or `unchanged (8 waves per
/// SIMD, 56 VGPRs)` where the prediction exists and nothing moves; empty without one.
pub fn occupancy(c: &Candidate) -> String {
    match &c.occupancy {
        Some(o) if o.before != o.after || o.registers.before != o.registers.after => o.shown(),
        Some(o) => format!(
            "unchanged ({} {}, {} {})",
            o.before,
            o.unit.as_str(),
            o.registers.before,
            o.unit.registers()
        ),
        None => String::new(),
    }
}

/// What the decision rests on: `p 1.0e-4, 12 pairs` (with the replication's pairs), or `same
/// code as pragma x4`.
pub fn evidence(c: &Candidate) -> String {
    let mut parts = Vec::new();
    if let Some(twin) = &c.same_code_as {
        parts.push(format!("same code as {twin}"));
    }
    if let Some(p) = c.p_value {
        parts.push(format!("p {p:.1e}"));
    }
    if let Some(n) = c.runs {
        parts.push(format!("{n} pairs"));
    }
    if let Some(r) = &c.ratios {
        if !r.replication.is_empty() {
            parts.push(format!("{} replication pairs", r.replication.len()));
        }
    }
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_function_of_a_loop_id_is_what_comes_before_its_index() {
        assert_eq!(function_of("ns::kern:0"), "ns::kern");
        assert_eq!(function_of("over(float*, int):12"), "over(float*, int)");
        assert_eq!(function_of("k(float*)#2:1"), "k(float*)#2");
        assert_eq!(function_of("S<T>::m:3"), "S<T>::m");
        // Not an id: kept whole.
        assert_eq!(function_of("ns::kern"), "ns::kern");
        assert_eq!(function_of(":3"), ":3");
    }

    #[test]
    fn specs_are_read_from_the_json_shape_and_absent_ones_are_empty() {
        let v = serde_json::json!({
            "specs": [
                {"spec": "bench/a.toml", "kernel": "a", "status": "ok"},
                {"spec": "bench/b.toml", "kernel": "b", "status": "failed", "reason": "does not build"}
            ],
            "candidates": [
                {"judged_by": [{"spec": "bench/a.toml", "kernel": "a", "speedup": 1.1, "interval": [1.05, 1.15], "ratios": [1.1, 1.09]}]},
                {}
            ]
        });
        let s = Specs::from_json(&v);
        assert_eq!(s.specs.len(), 2);
        assert_eq!(s.specs[1].reason.as_deref(), Some("does not build"));
        assert_eq!(s.of_candidate(0).len(), 1);
        assert_eq!(s.of_candidate(0)[0].interval, [1.05, 1.15]);
        assert!(s.of_candidate(1).is_empty());
        assert!(s.of_candidate(7).is_empty());
        assert_eq!(Specs::from_json(&serde_json::json!({})), Specs::default());
    }
}

/// A small multi-spec report for the renderers' tests: a helper loop shared by two kernels,
/// two measured variants each judged by two specs, one failed spec.
#[cfg(test)]
pub(super) mod fixture {
    use super::super::{Baseline, Candidate, Extra, Final, Ratios, Report, Status, Timing};
    use super::Specs;

    pub fn report() -> Report {
        let measured = |mode: &str, status, speedup: f64, reason: Option<&str>| {
            let mut c = Candidate::new(
                "lib/helpers.cuh",
                "add_one:0",
                7,
                Some((mode, 4)),
                status,
                reason.map(String::from),
            );
            c.speedup = Some(speedup);
            c.ci = Some([speedup - 0.02, speedup + 0.02]);
            c.p_value = Some(0.001);
            c.runs = Some(3);
            c.ratios = Some(Ratios {
                pairs: vec![speedup - 0.01, speedup, speedup + 0.01],
                replication: Vec::new(),
            });
            c
        };
        Report {
            version: 1,
            baseline: Baseline {
                figure: 10.0,
                unit: "us".into(),
                runs: 10,
                launches_per_sample: Some(16),
            },
            final_: Final {
                figure: 9.0,
                speedup: 1.11,
                ci: Some([1.09, 1.13]),
            },
            candidates: vec![
                measured("pragma", Status::Accepted, 1.11, None),
                measured("manual", Status::Rejected, 1.0, Some("futile")),
            ],
            applied: Vec::new(),
            written: Vec::new(),
            edited: Vec::new(),
            timing: Timing::default(),
            specs: None,
            extra: Extra {
                backend: "bench".into(),
                min_speedup: Some(0.02),
                ..Extra::default()
            },
        }
    }

    pub fn specs() -> Specs {
        let judged = |s: f64| {
            serde_json::json!([
                {"spec": "bench/a.toml", "kernel": "ka", "speedup": s, "interval": [s - 0.03, s + 0.03], "ratios": [s, s]},
                {"spec": "bench/b.toml", "kernel": "kb", "speedup": s + 0.01, "interval": [s - 0.02, s + 0.04], "ratios": [s, s + 0.02]}
            ])
        };
        Specs::from_json(&serde_json::json!({
            "specs": [
                {"spec": "bench/a.toml", "kernel": "ka", "status": "ok"},
                {"spec": "bench/b.toml", "kernel": "kb", "status": "ok"},
                {"spec": "bench/c.toml", "kernel": "kc", "status": "failed", "reason": "bench/c.toml:3: `n` is not a parameter of kc"}
            ],
            "candidates": [{"judged_by": judged(1.11)}, {"judged_by": judged(1.0)}]
        }))
    }
}
