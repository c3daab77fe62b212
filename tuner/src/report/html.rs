//! `tune --format html`: the report as one self-contained page. Inline CSS and SVG only: no
//! script, no font, image or style sheet to fetch (the page's Content-Security-Policy forbids
//! every load, so a stray reference fails loudly in a browser instead of reaching the network),
//! every user string escaped by `maud`. Per kernel (the function whose loops were tuned): a
//! figure with the forest plot of every measured candidate's speedup and interval, the paired
//! ratios as a strip plot and the occupancy change ([`super::svg::kernel_figure`]), the specs
//! that judged each loop (multi-spec runs), and a table of every candidate with its decision and
//! reason; for the run: the verdict, the specs, the timing as a stacked bar, the unified diff of
//! the accepted edits, and the notes.

use super::summary::{self, Specs};
use super::{svg, Outcome, Report, Status};
use maud::{html, Markup, PreEscaped, DOCTYPE};

const STYLE: &str = r#"
:root { color-scheme: light; --ink: #1b1f24; --muted: #57606a; --rule: #d0d7de; --kept: #1a7f37; --kept-bg: #e6f4ea; --min: #9a4d00; }
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 1240px; padding: 24px 28px 48px; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", "Liberation Sans", sans-serif; color: var(--ink); background: #fff; }
h1 { font-size: 24px; margin: 0 0 6px; }
h2 { font-size: 19px; margin: 34px 0 8px; padding-top: 10px; border-top: 1px solid var(--rule); }
h2 .file { font-weight: normal; color: var(--muted); font-size: 15px; margin-left: 8px; }
code, pre, .mono { font-family: ui-monospace, "DejaVu Sans Mono", "Liberation Mono", monospace; font-size: 13px; }
.verdict { font-size: 18px; margin: 4px 0 10px; }
.verdict strong { color: var(--kept); }
.facts { display: grid; grid-template-columns: max-content 1fr; gap: 2px 14px; margin: 8px 0; }
.facts dt { color: var(--muted); }
.facts dd { margin: 0; }
nav ul { margin: 4px 0; padding-left: 20px; columns: 2; }
table { border-collapse: collapse; width: 100%; margin: 8px 0 4px; }
th, td { text-align: left; vertical-align: top; padding: 4px 8px; border-bottom: 1px solid var(--rule); }
th { font-weight: 600; background: #f6f8fa; }
td.nowrap { white-space: nowrap; }
h2 code { font-size: 18px; }
td.num { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
tr.accepted td { background: var(--kept-bg); }
tr.accepted td.decision { font-weight: 700; color: var(--kept); }
tr.spec td { color: var(--muted); font-size: 13px; border-bottom-style: dotted; }
td.reason { color: var(--muted); max-width: 420px; }
.judges { margin: 6px 0; padding-left: 20px; }
svg { display: block; width: 100%; height: auto; margin: 8px 0; font-family: system-ui, "DejaVu Sans", "Liberation Sans", sans-serif; }
svg text { font-size: 12px; fill: var(--ink); }
svg .panel-title { font-weight: 600; fill: var(--muted); }
svg .highlight { fill: var(--kept-bg); }
svg .row.accepted .label { font-weight: 700; }
svg .ci { stroke: var(--ink); stroke-width: 1.5; }
svg .point { fill: #fff; stroke: var(--ink); stroke-width: 1.5; }
svg .point.kept { fill: var(--kept); stroke: #0b4d1f; }
svg .spec-point { fill: #8c959f; stroke: var(--ink); stroke-width: 1; }
svg .spec-label, svg .spec-figures { fill: var(--muted); font-size: 11px; }
svg .ratio { fill: #3b6ea8; fill-opacity: 0.6; }
svg .ratio.replication { fill: #fff; fill-opacity: 1; stroke: #3b6ea8; stroke-width: 1.2; }
svg .ref line { stroke: #6e7781; stroke-width: 1.2; }
svg .ref-min line { stroke: var(--min); }
svg .ref-label { font-size: 11px; fill: var(--muted); }
svg .ref-min .ref-label { fill: var(--min); }
svg .axis line { stroke: #8c959f; }
svg .axis text { font-size: 11px; fill: var(--muted); }
svg .axis-title { font-style: italic; }
svg .figures .speedup { font-variant-numeric: tabular-nums; }
svg .decision.accepted { font-weight: 700; fill: var(--kept); }
svg .occupancy { font-size: 11px; fill: var(--muted); }
svg.timing .frame { fill: none; stroke: #57606a; }
svg.timing .segment rect { stroke: #fff; stroke-width: 1; }
svg.timing .segment text { font-size: 12px; fill: #1b1f24; }
.phase-measure rect { fill: #56b4e9; } .phase-compile rect { fill: #e69f00; } .phase-prepare rect { fill: #6cc3a0; }
.phase-gates rect { fill: #f0e442; } .phase-waiting rect { fill: #cc79a7; } .phase-other rect { fill: #bbbbbb; }
pre.diff { background: #f6f8fa; border: 1px solid var(--rule); padding: 10px 12px; overflow-x: auto; line-height: 1.35; }
pre.diff .add { background: #dafbe1; display: block; }
pre.diff .del { background: #ffebe9; display: block; }
pre.diff .hunk { color: #0550ae; display: block; }
pre.diff .file { font-weight: 700; display: block; }
.muted { color: var(--muted); }
ul.notes li { margin: 3px 0; }
footer { margin-top: 36px; color: var(--muted); font-size: 12px; }
"#;

/// `1.218x faster: 12.3 ms → 10.1 ms, confirmed [1.180, 1.250]`, or why nothing was measured.
fn verdict(r: &Report) -> Markup {
    let u = &r.baseline.unit;
    html! {
        p class="verdict" {
            @if r.specs.is_some() {
                @if r.applied.is_empty() { "Nothing applied (each spec's figures below)." } @else {
                    strong { (format!("{:.3}x", r.final_.speedup)) }
                    " faster, the geometric mean over the specs reaching an applied loop"
                    (super::confirmed(r.final_.ci))
                    " (each spec's figures below)."
                }
            } @else if r.final_.figure.is_nan() || r.baseline.figure.is_nan() {
                "Nothing measured"
                @if r.candidates.is_empty() { ": no loop to tune" }
                "."
            } @else {
                strong { (format!("{:.3}x", r.final_.speedup)) }
                (format!(" faster: {} {u} → {} {u}", super::fig(r.baseline.figure), super::fig(r.final_.figure)))
                (super::confirmed(r.final_.ci))
                "."
            }
        }
    }
}

fn outcome_words(r: &Report) -> &'static str {
    match (r.applied.is_empty(), r.extra.outcome) {
        (true, Outcome::Interrupted) => "interrupted: nothing applied",
        (true, _) => "nothing accepted",
        (false, Outcome::Applied) => "applied",
        (false, Outcome::DryRun) => "would apply (dry run): nothing written",
        (false, Outcome::Diff) => "diff printed, not applied",
        (false, Outcome::Edited) => "not applied: a file was edited meanwhile",
        (false, Outcome::Interrupted) => "not applied (interrupted)",
    }
}

fn facts(r: &Report) -> Markup {
    html! {
        dl class="facts" {
            dt { "backend" } dd { code { (r.extra.backend) } }
            dt { "baseline" }
            dd {
                @if r.baseline.figure.is_nan() { "not measured" } @else {
                    (format!("{} {} ({}", super::fig(r.baseline.figure), r.baseline.unit, r.baseline.runs_text()))
                    @if let Some((s, d)) = r.extra.noise {
                        (format!(", spread {:.1}%, smallest detectable speedup {:.1}%", s * 100.0, d * 100.0))
                    }
                    ")"
                }
            }
            @if let Some(m) = r.extra.min_speedup {
                dt { "decision rule" }
                dd {
                    (format!("accepted when at least {:.1}% faster", m * 100.0))
                    @if let Some(c) = r.extra.confidence { (format!(" at {:.0}% confidence", c * 100.0)) }
                }
            }
            dt { "candidates" } dd { (r.candidates.len()) @if !r.candidates.is_empty() { (format!(": {}", super::counts(r))) } }
            dt { "work" }
            dd {
                (format!("reused from the ledger: {}, code-object compiles: {}, builds: {}", r.extra.reused, r.extra.compiles, r.extra.builds))
            }
            dt { "outcome" } dd { (outcome_words(r)) }
            @if !r.applied.is_empty() {
                dt { "accepted" }
                dd {
                    @for (k, a) in r.applied.iter().enumerate() {
                        @if k > 0 { "; " }
                        code { (format!("{}:{}", a.file, a.line)) } " " code { (a.loop_id) } (format!(" {} {}", a.mode, super::factor_text(a.factor)))
                    }
                }
            }
            @if !r.written.is_empty() {
                dt { "written" } dd { @for (k, f) in r.written.iter().enumerate() { @if k > 0 { ", " } code { (f) } } }
            }
            @if !r.edited.is_empty() {
                dt { "edited meanwhile" } dd { "left as saved, nothing written: " @for (k, f) in r.edited.iter().enumerate() { @if k > 0 { ", " } code { (f) } } }
            }
        }
    }
}

fn specs_section(specs: &Specs) -> Markup {
    html! {
        @if !specs.specs.is_empty() {
            section id="specs" {
                h2 { "Specs" }
                table {
                    thead { tr { th { "spec" } th { "kernel" } th { "status" } th { "baseline" } th { "final" } th { "reason" } } }
                    tbody {
                        @for s in &specs.specs {
                            @let (baseline, final_) = s.figures();
                            tr class=(format!("spec-{}", s.status)) {
                                td { code { (s.spec) } } td { code { (s.kernel) } }
                                td { (s.status) }
                                td class="num" { (baseline) } td class="num" { (final_) }
                                td class="reason" { (s.reason.as_deref().unwrap_or("")) }
                            }
                        }
                    }
                }
            }
        }
    }
}

fn timing_section(r: &Report) -> Markup {
    let t = &r.timing;
    html! {
        section id="timing" {
            h2 { "Timing" }
            @if t.wall > 0.0 { (svg::timing_bar(t)) }
            p class="mono" { (t.line()) }
            p class="muted" {
                (format!("Work summed over threads and lanes: measure {:.2} s, compile {:.2} s, prepare {:.2} s, gates {:.2} s; {} compiles, {} builds, {} samples.",
                    t.work.measure, t.work.compile, t.work.prepare, t.work.gates, t.counts.compiles, t.counts.builds, t.counts.samples))
            }
        }
    }
}

/// A loop (id, line) and the specs (spec, kernel) that judged it.
type JudgedLoop<'a> = (&'a str, u32, Vec<(&'a str, &'a str)>);

fn kernel_section(r: &Report, g: &summary::Group<'_>, k: usize, specs: &Specs) -> Markup {
    let id = format!("kernel-{k}");
    let measured = g.measured(r).count();
    html! {
        section class="kernel" id=(id) {
            h2 { code { (g.function) } span class="file" { (g.file) } }
            p class="muted" {
                (format!("{} loop{}, {} candidate{}, {measured} measured.",
                    g.loops.len(), if g.loops.len() == 1 { "" } else { "s" },
                    g.candidates.len(), if g.candidates.len() == 1 { "" } else { "s" }))
                @for a in r.applied.iter().filter(|a| a.file == g.file && summary::function_of(&a.loop_id) == g.function) {
                    " Accepted: " code { (a.loop_id) } (format!(" (line {}) {} {}.", a.line, a.mode, super::factor_text(a.factor)))
                }
            }
            @if let Some(fig) = svg::kernel_figure(r, g, specs, r.extra.min_speedup, &id) {
                figure { (fig) }
            }
            @let judged: Vec<JudgedLoop<'_>> = g.loops.iter()
                .map(|(l, line)| (*l, *line, specs.of_loop(r, &g.file, l)))
                .filter(|(_, _, s)| !s.is_empty())
                .collect();
            @if !judged.is_empty() {
                ul class="judges" {
                    @for (l, line, s) in &judged {
                        li {
                            code { (l) } (format!(" (line {line}) judged by "))
                            @for (k, (spec, kernel)) in s.iter().enumerate() {
                                @if k > 0 { ", " }
                                code { (spec) } " (kernel " code { (kernel) } ")"
                            }
                        }
                    }
                }
            }
            table {
                thead {
                    tr {
                        th { "loop" } th { "line" } th { "variant" } th { "decision" } th { "speedup" }
                        th { "interval" } th { "p" } th { "pairs" } th { "occupancy" } th { "reason" }
                    }
                }
                tbody {
                    @for &i in &g.candidates {
                        @let c = &r.candidates[i];
                        tr class=(if c.status == Status::Accepted { "accepted" } else { "" }) {
                            td class="nowrap" { code { (c.loop_id) } }
                            td class="num" { (c.line) }
                            td class="nowrap" { (summary::variant(c)) }
                            td class="decision nowrap" { @if c.status == Status::Accepted { "✓ " } (summary::decision(c)) }
                            td class="num" { @if let Some(s) = c.speedup { (format!("{s:.3}x")) } }
                            td class="num" { @if let Some([lo, hi]) = c.ci { (format!("[{lo:.3}, {hi:.3}]")) } }
                            td class="num" { (super::p(c)) }
                            td class="num" { @if let Some(n) = c.runs { (n) } }
                            td { (summary::occupancy(c)) }
                            td class="reason" {
                                (c.reason.as_deref().unwrap_or(""))
                                @if let Some(t) = &c.same_code_as { @if c.reason.is_none() { (format!("same code as {t}")) } }
                            }
                        }
                        @for j in specs.of_candidate(i) {
                            tr class="spec" {
                                td colspan="3" { "↳ spec " code { (j.spec) } " (kernel " code { (j.kernel) } ")" }
                                td {}
                                td class="num" { (format!("{:.3}x", j.speedup)) }
                                td class="num" { (format!("[{:.3}, {:.3}]", j.interval[0], j.interval[1])) }
                                td {} td class="num" { (j.ratios.len()) } td {} td {}
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The lines of a unified diff, each marked by its kind (the `+`/`-` stays in the text).
fn diff_block(d: &str) -> Markup {
    html! {
        pre class="diff" {
            code {
                @for line in d.lines() {
                    @let class = if line.starts_with("+++") || line.starts_with("---") { "file" }
                        else if line.starts_with("@@") { "hunk" }
                        else if line.starts_with('+') { "add" }
                        else if line.starts_with('-') { "del" }
                        else { "ctx" };
                    span class=(class) { (line) } "\n"
                }
            }
        }
    }
}

/// `tune --format html`: one self-contained page (see the module documentation).
pub fn html(r: &Report) -> String {
    page(r, &Specs::of(r))
}

/// The page of `r` with the multi-spec judgements `specs`.
pub(super) fn page(r: &Report, specs: &Specs) -> String {
    let groups = summary::groups(r);
    let title = if r.final_.figure.is_nan() || r.applied.is_empty() {
        "hip-unroll tune report".to_string()
    } else {
        format!("hip-unroll tune report: {:.3}x", r.final_.speedup)
    };
    let markup = html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'";
                meta name="viewport" content="width=device-width, initial-scale=1";
                meta name="generator" content="hip-unroll tune";
                title { (title) }
                style { (PreEscaped(STYLE)) }
            }
            body {
                header {
                    h1 { "hip-unroll tune" }
                    (verdict(r))
                    (facts(r))
                }
                @if groups.len() > 1 {
                    nav {
                        strong { "Kernels" }
                        ul {
                            @for (k, g) in groups.iter().enumerate() {
                                li {
                                    a href=(format!("#kernel-{k}")) { code { (g.function) } }
                                    span class="muted" { (format!(" {} ({} measured)", g.file, g.measured(r).count())) }
                                }
                            }
                        }
                    }
                }
                (specs_section(specs))
                (timing_section(r))
                @for (k, g) in groups.iter().enumerate() {
                    (kernel_section(r, g, k, specs))
                }
                @if let Some(d) = r.extra.diff.as_deref().filter(|d| !d.is_empty()) {
                    section id="diff" {
                        h2 { "Accepted edits" }
                        p class="muted" { (outcome_words(r)) }
                        (diff_block(d))
                    }
                }
                @if !r.extra.notes.is_empty() {
                    section id="notes" {
                        h2 { "Notes" }
                        ul class="notes" { @for n in &r.extra.notes { li { (n) } } }
                    }
                }
                footer { (format!("hip-unroll tune report, version {}.", r.version)) }
            }
        }
    };
    markup.into_string()
}

#[cfg(test)]
mod tests {
    use super::super::summary::fixture;
    use super::*;

    #[test]
    fn a_multi_spec_report_shows_which_specs_judged_each_loop() {
        let h = page(&fixture::report(), &fixture::specs());
        // Two measured candidates, each with a forest row per spec that judged it.
        assert_eq!(h.matches(r#"data-mark="candidate""#).count(), 2);
        assert_eq!(h.matches(r#"data-mark="spec""#).count(), 4);
        assert_eq!(h.matches(r#"data-mark="spec-ratios""#).count(), 4);
        assert!(h.contains("spec bench/a.toml (kernel ka): speedup 1.110x [1.080, 1.140]"));
        // The loop's judges, and the failed spec with its reason.
        assert!(h.contains("<code>add_one:0</code> (line 7) judged by <code>bench/a.toml</code> (kernel <code>ka</code>), <code>bench/b.toml</code> (kernel <code>kb</code>)"), "{h}");
        assert!(h.contains("bench/c.toml:3: `n` is not a parameter of kc"));
        assert!(
            h.contains("(median of 10 runs, each the mean of 16 launches"),
            "{h}"
        );
        // Without the judgements the same report has no spec rows.
        let plain = page(&fixture::report(), &Specs::default());
        assert_eq!(plain.matches(r#"data-mark="spec""#).count(), 0);
        assert!(!plain.contains("judged by") && !plain.contains(r#"id="specs""#));
    }
}
