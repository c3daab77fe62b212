//! The inline SVG plots of the HTML report: per kernel one figure with a row per measured
//! candidate (a forest plot of its speedup and interval, the paired ratios it was decided on as
//! a strip plot, and its figures and occupancy change as text), and the run's timing as a
//! stacked bar. Every mark carries a `<title>`; status is told by shape and text as well as
//! colour. Pure functions of the report's data, written through `maud` (which escapes every
//! value it splices; SVG elements are always written with a closing tag, since the HTML parser
//! does not read `<rect>` as self-closing inside `<svg>`).

use super::summary::{self, Group, Judgement, Specs};
use super::{Candidate, Report, Status, Timing};
use maud::{html, Markup};

/// The figure's width in SVG units (it scales to the page).
pub const WIDTH: f64 = 1180.0;
const LABEL_X: f64 = 10.0;
const FOREST_X: f64 = 215.0;
const FOREST_W: f64 = 330.0;
const STRIP_X: f64 = 580.0;
const STRIP_W: f64 = 250.0;
const TEXT_X: f64 = 860.0;
const HEAD_H: f64 = 44.0;
const ROW_H: f64 = 36.0;
const SUB_H: f64 = 24.0;
const AXIS_H: f64 = 40.0;

/// A coordinate as SVG text.
fn px(x: f64) -> String {
    format!("{x:.1}")
}

/// A linear scale from a value domain onto `[x0, x0 + w]`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scale {
    pub lo: f64,
    pub hi: f64,
    x0: f64,
    w: f64,
}

impl Scale {
    /// The domain covering `values` (finite, positive ones), padded, at least 0.02 wide.
    pub fn covering(values: impl IntoIterator<Item = f64>, x0: f64, w: f64) -> Scale {
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        for v in values.into_iter().filter(|v| v.is_finite() && *v > 0.0) {
            lo = lo.min(v);
            hi = hi.max(v);
        }
        if !lo.is_finite() {
            (lo, hi) = (1.0, 1.0);
        }
        if hi - lo < 0.02 {
            let mid = (lo + hi) / 2.0;
            (lo, hi) = (mid - 0.01, mid + 0.01);
        }
        let pad = (hi - lo) * 0.06;
        Scale {
            lo: lo - pad,
            hi: hi + pad,
            x0,
            w,
        }
    }

    pub fn x(&self, v: f64) -> f64 {
        self.x0 + (v.clamp(self.lo, self.hi) - self.lo) / (self.hi - self.lo) * self.w
    }

    /// Round tick values inside the domain (about five) and the decimals to print them with.
    pub fn ticks(&self) -> (Vec<f64>, usize) {
        let raw = (self.hi - self.lo) / 5.0;
        let mag = 10f64.powf(raw.log10().floor());
        let step = [1.0, 2.0, 2.5, 5.0, 10.0]
            .iter()
            .map(|m| m * mag)
            .find(|s| *s >= raw)
            .unwrap_or(10.0 * mag);
        let decimals = (-step.log10()).ceil().max(0.0) as usize
            + usize::from((step / 10f64.powf(step.log10().floor()) - 2.5).abs() < 1e-9);
        let mut out = Vec::new();
        let mut t = (self.lo / step).ceil() * step;
        while t <= self.hi + step * 1e-9 && out.len() < 50 {
            out.push(t);
            t += step;
        }
        (out, decimals)
    }
}

/// One row of the figure: a measured candidate, or one spec's judgement of the candidate above.
enum Row<'a> {
    Candidate(usize, &'a Candidate),
    Spec(&'a Judgement),
}

impl Row<'_> {
    fn height(&self) -> f64 {
        match self {
            Row::Candidate(..) => ROW_H,
            Row::Spec(_) => SUB_H,
        }
    }
}

/// `L12 pragma x4`.
fn short_label(c: &Candidate) -> String {
    format!("L{} {}", c.line, summary::variant(c))
}

/// What a candidate's mark says when pointed at.
fn candidate_title(c: &Candidate) -> String {
    let mut t = format!(
        "{} (line {}), {}: {}, speedup {}",
        c.loop_id,
        c.line,
        summary::variant(c),
        summary::decision(c),
        summary::speedup(c)
    );
    let ev = summary::evidence(c);
    if !ev.is_empty() {
        t.push_str(&format!(" ({ev})"));
    }
    let occ = summary::occupancy(c);
    if !occ.is_empty() {
        t.push_str(&format!("; occupancy {occ}"));
    }
    t
}

/// The short occupancy change of the text column: `8→6 waves/SIMD, 56→76 VGPRs`.
fn occupancy_short(c: &Candidate) -> String {
    match &c.occupancy {
        Some(o) => {
            let unit = match o.unit {
                super::OccupancyUnit::WavesPerSimd => "waves/SIMD",
                super::OccupancyUnit::WarpsPerSm => "warps/SM",
            };
            let arrow = |a: u32, b: u32| {
                if a == b {
                    format!("{a}")
                } else {
                    format!("{a}→{b}")
                }
            };
            format!(
                "occupancy {} {unit}, {} {}",
                arrow(o.before, o.after),
                arrow(o.registers.before, o.registers.after),
                o.unit.registers()
            )
        }
        None => "occupancy: no prediction".into(),
    }
}

/// A vertical reference line across the rows, labelled above them.
fn reference(x: f64, top: f64, bottom: f64, dashed: bool, label: &str, title: &str) -> Markup {
    html! {
        g class=(if dashed { "ref ref-min" } else { "ref ref-one" }) {
            title { (title) }
            line x1=(px(x)) x2=(px(x)) y1=(px(top)) y2=(px(bottom))
                stroke-dasharray=[dashed.then_some("5 4")] {}
            // The minimum's label to the right of its line, 1's to the left: never on each other.
            @if dashed {
                text x=(px(x + 3.0)) y=(px(top - 4.0)) text-anchor="start" class="ref-label" { (label) }
            } @else {
                text x=(px(x - 3.0)) y=(px(top - 4.0)) text-anchor="end" class="ref-label" { (label) }
            }
        }
    }
}

/// Ticks and the axis title under a panel.
fn axis(s: &Scale, y: f64, title: &str) -> Markup {
    let (ticks, decimals) = s.ticks();
    html! {
        g class="axis" {
            line x1=(px(s.x0)) x2=(px(s.x0 + s.w)) y1=(px(y)) y2=(px(y)) {}
            @for t in &ticks {
                line x1=(px(s.x(*t))) x2=(px(s.x(*t))) y1=(px(y)) y2=(px(y + 4.0)) {}
                text x=(px(s.x(*t))) y=(px(y + 15.0)) text-anchor="middle" {
                    (format!("{t:.decimals$}"))
                }
            }
            text x=(px(s.x0 + s.w / 2.0)) y=(px(y + 31.0)) text-anchor="middle" class="axis-title" {
                (title)
            }
        }
    }
}

/// The marks of an interval with its point estimate at row centre `y`.
fn interval(
    s: &Scale,
    y: f64,
    speedup: f64,
    ci: Option<[f64; 2]>,
    kept: bool,
    small: bool,
) -> Markup {
    let (cap, r) = if small { (4.0, 3.5) } else { (6.0, 5.0) };
    let x = s.x(speedup);
    html! {
        @if let Some([lo, hi]) = ci.filter(|c| c[0].is_finite() && c[1].is_finite()) {
            line class="ci" x1=(px(s.x(lo))) x2=(px(s.x(hi))) y1=(px(y)) y2=(px(y)) {}
            line class="ci" x1=(px(s.x(lo))) x2=(px(s.x(lo))) y1=(px(y - cap)) y2=(px(y + cap)) {}
            line class="ci" x1=(px(s.x(hi))) x2=(px(s.x(hi))) y1=(px(y - cap)) y2=(px(y + cap)) {}
        }
        @if small {
            rect class="point spec-point" x=(px(x - r)) y=(px(y - r)) width=(px(2.0 * r)) height=(px(2.0 * r)) {}
        } @else if kept {
            path class="point kept" d=(format!("M{} {}L{} {}L{} {}L{} {}Z",
                px(x), px(y - r - 2.0), px(x + r + 2.0), px(y), px(x), px(y + r + 2.0), px(x - r - 2.0), px(y))) {}
        } @else {
            circle class="point" cx=(px(x)) cy=(px(y)) r=(px(r)) {}
        }
    }
}

/// The dots of a strip of paired ratios at row centre `y` (height `h`): deterministic jitter.
fn strip(s: &Scale, y: f64, h: f64, pairs: &[f64], replication: &[f64], what: &str) -> Markup {
    let jitter = |i: usize| ((i * 37 % 11) as f64 - 5.0) / 5.0 * (h * 0.28);
    html! {
        @for (i, v) in pairs.iter().enumerate().filter(|(_, v)| v.is_finite()) {
            circle class="ratio" cx=(px(s.x(*v))) cy=(px(y + jitter(i))) r="2.6" {
                title { (format!("{what}: pair {}: {v:.4}", i + 1)) }
            }
        }
        @for (i, v) in replication.iter().enumerate().filter(|(_, v)| v.is_finite()) {
            circle class="ratio replication" cx=(px(s.x(*v))) cy=(px(y + jitter(i + pairs.len()))) r="2.6" {
                title { (format!("{what}: replication pair {}: {v:.4}", i + 1)) }
            }
        }
    }
}

/// The figure of one kernel's measured candidates (none: no figure). `min_speedup` is the
/// decision rule's minimum as a fraction.
pub fn kernel_figure(
    r: &Report,
    g: &Group<'_>,
    specs: &Specs,
    min_speedup: Option<f64>,
    id: &str,
) -> Option<Markup> {
    let mut rows: Vec<Row<'_>> = Vec::new();
    for i in g.measured(r) {
        rows.push(Row::Candidate(i, &r.candidates[i]));
        rows.extend(specs.of_candidate(i).iter().map(Row::Spec));
    }
    if rows.is_empty() {
        return None;
    }
    let min_line = min_speedup
        .filter(|m| m.is_finite() && *m > 0.0)
        .map(|m| 1.0 + m);
    let mut forest_values = vec![1.0];
    let mut strip_values = vec![1.0];
    forest_values.extend(min_line);
    strip_values.extend(min_line);
    for row in &rows {
        match row {
            Row::Candidate(_, c) => {
                forest_values.extend(c.speedup);
                forest_values.extend(c.ci.into_iter().flatten());
                if let Some(ra) = &c.ratios {
                    strip_values.extend(ra.pairs.iter().chain(&ra.replication));
                }
            }
            Row::Spec(j) => {
                forest_values.push(j.speedup);
                forest_values.extend(j.interval);
                strip_values.extend(&j.ratios);
            }
        }
    }
    let fs = Scale::covering(forest_values, FOREST_X, FOREST_W);
    let ss = Scale::covering(strip_values, STRIP_X, STRIP_W);
    let body: f64 = rows.iter().map(Row::height).sum();
    let height = HEAD_H + body + AXIS_H + 8.0;
    let (top, bottom) = (HEAD_H, HEAD_H + body);
    let n = rows
        .iter()
        .filter(|r| matches!(r, Row::Candidate(..)))
        .count();
    let title_id = format!("{id}-title");
    let desc_id = format!("{id}-desc");
    let mut y = HEAD_H;
    let placed: Vec<(f64, &Row<'_>)> = rows
        .iter()
        .map(|row| {
            let at = y;
            y += row.height();
            (at, row)
        })
        .collect();
    Some(html! {
        svg class="forest" role="img" viewBox=(format!("0 0 {WIDTH} {}", px(height)))
            aria-labelledby=(format!("{title_id} {desc_id}")) {
            title id=(title_id) {
                (format!("{}: speedup of {n} measured candidate{} with {} intervals, and their paired ratios",
                    g.function, if n == 1 { "" } else { "s" }, confidence_words(r)))
            }
            desc id=(desc_id) {
                "Left: each candidate's median speedup (baseline time / variant time) with its interval; the accepted one is a filled diamond on a shaded row. The solid line is 1 (no change)"
                @if let Some(m) = min_line { (format!(", the dashed line the minimum speedup accepted ({m:.3})")) }
                ". Middle: the per-pair ratios each decision was made from (filled: decision pairs, hollow: replication). Right: the figures, the decision and the predicted occupancy change."
            }
            text class="panel-title" x=(px(LABEL_X)) y="14" { "candidate" }
            text class="panel-title" x=(px(FOREST_X)) y="14" { "speedup [interval]" }
            text class="panel-title" x=(px(STRIP_X)) y="14" { "paired ratios (baseline / variant)" }
            text class="panel-title" x=(px(TEXT_X)) y="14" { "figures, decision, occupancy" }
            @for (at, row) in &placed {
                @match row {
                    Row::Candidate(i, c) => {
                        @let kept = c.status == Status::Accepted;
                        @let mid = at + ROW_H / 2.0;
                        g class=(if kept { "row accepted" } else { "row" }) data-candidate=(i) {
                            @if kept {
                                rect class="highlight" x="0" y=(px(*at + 1.0)) width=(px(WIDTH)) height=(px(ROW_H - 2.0)) {}
                            }
                            text class="label" x=(px(LABEL_X)) y=(px(mid + 4.0)) {
                                (short_label(c))
                                @if kept { " ✓" }
                            }
                            g class="mark" data-mark="candidate" data-status=(c.status.as_str()) {
                                title { (candidate_title(c)) }
                                (interval(&fs, mid, c.speedup.unwrap_or(f64::NAN), c.ci, kept, false))
                            }
                            @if let Some(ra) = &c.ratios {
                                g class="strip" data-mark="ratios" {
                                    title { (format!("paired ratios of {} {}: {} pairs{}", c.loop_id, summary::variant(c), ra.pairs.len(),
                                        if ra.replication.is_empty() { String::new() } else { format!(", {} replication pairs", ra.replication.len()) })) }
                                    (strip(&ss, mid, ROW_H, &ra.pairs, &ra.replication, &format!("{} {}", c.loop_id, summary::variant(c))))
                                }
                            }
                            text class="figures" x=(px(TEXT_X)) y=(px(mid - 3.0)) {
                                tspan class="speedup" { (summary::speedup(c)) }
                                "  "
                                tspan class=(format!("decision {}", summary::decision(c).replace(' ', "-"))) { (summary::decision(c)) }
                            }
                            text class="occupancy" x=(px(TEXT_X)) y=(px(mid + 12.0)) { (occupancy_short(c)) }
                        }
                    }
                    Row::Spec(j) => {
                        @let mid = at + SUB_H / 2.0;
                        g class="row spec" {
                            text class="label spec-label" x=(px(LABEL_X + 12.0)) y=(px(mid + 4.0)) {
                                "↳ " (j.spec)
                            }
                            g class="mark" data-mark="spec" {
                                title { (format!("spec {} (kernel {}): speedup {:.3}x [{:.3}, {:.3}]", j.spec, j.kernel, j.speedup, j.interval[0], j.interval[1])) }
                                (interval(&fs, mid, j.speedup, Some(j.interval), false, true))
                            }
                            g class="strip" data-mark="spec-ratios" {
                                title { (format!("paired ratios of spec {}: {} pairs", j.spec, j.ratios.len())) }
                                (strip(&ss, mid, SUB_H, &j.ratios, &[], &format!("spec {}", j.spec)))
                            }
                            text class="figures spec-figures" x=(px(TEXT_X)) y=(px(mid + 4.0)) {
                                (format!("{:.3}x [{:.3}, {:.3}] · kernel {}", j.speedup, j.interval[0], j.interval[1], j.kernel))
                            }
                        }
                    }
                }
            }
            (reference(fs.x(1.0), top, bottom, false, "1", "speedup 1: no change"))
            @if let Some(m) = min_line {
                (reference(fs.x(m), top, bottom, true, &format!("min {m:.3}"), &format!("the minimum speedup accepted: {m:.3}")))
            }
            (reference(ss.x(1.0), top, bottom, false, "1", "ratio 1: no change"))
            @if let Some(m) = min_line {
                (reference(ss.x(m), top, bottom, true, &format!("min {m:.3}"), &format!("the minimum speedup accepted: {m:.3}")))
            }
            (axis(&fs, bottom + 4.0, "speedup (baseline / variant; > 1 is faster)"))
            (axis(&ss, bottom + 4.0, "ratio per interleaved pair"))
        }
    })
}

fn confidence_words(r: &Report) -> String {
    match r.extra.confidence {
        Some(c) => format!("{:.0}%", c * 100.0),
        None => "confidence".into(),
    }
}

/// The phases of the wall time, in the order of the bar (and its legend).
pub fn phases(t: &Timing) -> [(&'static str, f64, &'static str); 6] {
    [
        ("measure", t.measure, "taking samples"),
        ("compile", t.compile, "code-object compiles of the gates"),
        (
            "prepare",
            t.prepare,
            "syncing working copies, builds, the first run and check",
        ),
        ("gates", t.gates, "judging the compiles"),
        (
            "waiting",
            t.waiting,
            "a lane holding a task, none of the above",
        ),
        ("other", t.other, "the coordinator alone"),
    ]
}

/// The run's wall time as one stacked bar, a segment per phase, with its legend.
pub fn timing_bar(t: &Timing) -> Markup {
    let (x0, w, bar_h) = (10.0, WIDTH - 20.0, 30.0);
    let total = if t.wall > 0.0 && t.wall.is_finite() {
        t.wall
    } else {
        0.0
    };
    let mut x = x0;
    let segments: Vec<(f64, f64, &str, f64, &str)> = phases(t)
        .into_iter()
        .map(|(name, v, what)| {
            let width = if total > 0.0 {
                (v.max(0.0) / total * w).min(x0 + w - x)
            } else {
                0.0
            };
            let at = x;
            x += width;
            (at, width, name, v, what)
        })
        .collect();
    let pct = |v: f64| {
        if total > 0.0 {
            v / total * 100.0
        } else {
            0.0
        }
    };
    html! {
        svg class="timing" role="img" viewBox=(format!("0 0 {WIDTH} 88")) aria-labelledby="timing-title" {
            title id="timing-title" { (format!("Where the {:.2} s of wall time went, by phase", t.wall)) }
            @for (at, width, name, v, what) in &segments {
                @if *width > 0.0 {
                    g class=(format!("segment phase-{name}")) data-mark="phase" {
                        title { (format!("{name}: {v:.2} s of {:.2} s wall ({:.1}%): {what}", t.wall, pct(*v))) }
                        rect x=(px(*at)) y="6" width=(px(*width)) height=(px(bar_h)) {}
                        @if *width > 64.0 {
                            text x=(px(at + 6.0)) y="26" { (name) }
                        }
                    }
                }
            }
            rect class="frame" x=(px(x0)) y="6" width=(px(w)) height=(px(bar_h)) {}
            @for (k, (_, _, name, v, _)) in segments.iter().enumerate() {
                @let lx = x0 + k as f64 * (w / 6.0);
                g class=(format!("legend phase-{name}")) {
                    rect x=(px(lx)) y="52" width="12" height="12" {}
                    text x=(px(lx + 17.0)) y="62" { (format!("{name} {v:.2} s ({:.1}%)", pct(*v))) }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scale_covers_its_values_with_round_ticks() {
        let s = Scale::covering([0.97, 1.0, 1.21, 1.24, f64::NAN, -1.0], 0.0, 100.0);
        assert!(s.lo < 0.97 && s.hi > 1.24, "{s:?}");
        assert!((s.x(s.lo) - 0.0).abs() < 1e-9 && (s.x(s.hi) - 100.0).abs() < 1e-9);
        let (ticks, decimals) = s.ticks();
        assert_eq!(decimals, 1);
        let shown: Vec<String> = ticks.iter().map(|t| format!("{t:.1}")).collect();
        assert_eq!(shown, ["1.0", "1.1", "1.2"]);
        // A step of 2.5 units of its magnitude gets one more decimal.
        let fine = Scale::covering([1.0, 1.1], 0.0, 100.0);
        assert_eq!(fine.ticks().1, 3, "{:?}", fine.ticks());
        // A single value still has a domain.
        let one = Scale::covering([1.0], 0.0, 10.0);
        assert!(one.hi > one.lo);
        // Values out of the domain are drawn at its edge.
        assert_eq!(one.x(100.0), 10.0);
    }
}
