//! The `profile` report: one serialisable structure and one renderer per output format
//! (`table`, `json`, `csv`, `markdown`).

use crate::critical::CriticalPath;
use crate::model::{Profile, Source};
use crate::roofline::Roofline;
use crate::stats::KernelStats;
use serde::Serialize;

/// Everything `hip-unroll profile` reports. Its JSON form is the contract
/// `{"source", "kernels": [{"name","calls","total_ns","mean_ns","median_ns","min_ns","max_ns",
/// "stddev_ns","percent"}], ...}` with `critical_path` and `roofline` as extra keys.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub source: Source,
    pub format: String,
    pub inputs: Vec<String>,
    pub arch: Option<String>,
    pub product: Option<String>,
    pub dispatches: usize,
    pub gpu_busy_ns: u64,
    pub span_ns: u64,
    pub kernels: Vec<KernelStats>,
    pub critical_path: Option<CriticalPath>,
    pub roofline: Option<Roofline>,
    /// Why there is no roofline, when there is none.
    pub roofline_note: Option<String>,
}

impl Report {
    pub fn new(
        p: &Profile,
        kernels: Vec<KernelStats>,
        critical_path: Option<CriticalPath>,
        roofline: Option<Roofline>,
        roofline_note: Option<String>,
    ) -> Self {
        let (busy, span) = crate::stats::totals(p);
        Report {
            source: p.source,
            format: p.format.clone(),
            inputs: p.inputs.iter().map(|i| i.display().to_string()).collect(),
            arch: p.arch().map(str::to_string),
            product: p.product().map(str::to_string),
            dispatches: p.dispatches.len(),
            gpu_busy_ns: busy,
            span_ns: span,
            kernels,
            critical_path,
            roofline,
            roofline_note,
        }
    }
}

pub fn json(r: &Report) -> String {
    let mut s = serde_json::to_string_pretty(r).expect("report serialises");
    s.push('\n');
    s
}

fn opt(v: Option<f64>) -> String {
    v.map(|x| format!("{x:.1}")).unwrap_or_else(|| "-".into())
}

/// CSV: one row per kernel, the JSON contract's fields in order plus `runtime` and `rank`.
pub fn csv(r: &Report) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record([
        "name",
        "calls",
        "total_ns",
        "mean_ns",
        "median_ns",
        "min_ns",
        "max_ns",
        "stddev_ns",
        "percent",
        "runtime",
        "rank",
    ])
    .expect("writing CSV into memory");
    for k in &r.kernels {
        w.write_record([
            k.name.clone(),
            k.calls.to_string(),
            format!("{}", k.total_ns),
            format!("{:.3}", k.mean_ns),
            k.median_ns.map(|m| format!("{m}")).unwrap_or_default(),
            format!("{}", k.min_ns),
            format!("{}", k.max_ns),
            format!("{:.3}", k.stddev_ns),
            format!("{:.4}", k.percent),
            k.runtime.to_string(),
            k.rank.map(|r| r.to_string()).unwrap_or_default(),
        ])
        .expect("writing CSV into memory");
    }
    String::from_utf8(w.into_inner().expect("flushing CSV into memory"))
        .expect("CSV of UTF-8 strings")
}

fn rows(r: &Report) -> (Vec<&'static str>, Vec<Vec<String>>) {
    let head = vec![
        "#",
        "kernel",
        "calls",
        "total ns",
        "mean ns",
        "median ns",
        "min ns",
        "max ns",
        "stddev ns",
        "% GPU",
    ];
    let body = r
        .kernels
        .iter()
        .map(|k| {
            vec![
                k.rank.map(|r| r.to_string()).unwrap_or_else(|| "rt".into()),
                k.name.clone(),
                k.calls.to_string(),
                format!("{:.0}", k.total_ns),
                format!("{:.1}", k.mean_ns),
                opt(k.median_ns),
                format!("{:.0}", k.min_ns),
                format!("{:.0}", k.max_ns),
                format!("{:.1}", k.stddev_ns),
                format!("{:.2}", k.percent),
            ]
        })
        .collect();
    (head, body)
}

/// Kernel names longer than this are cut in the plain-text table and its sections.
const NAME_WIDTH: usize = 60;

/// `name` cut to [`NAME_WIDTH`] characters (`...` at the end) when it is longer.
fn shorten(name: &str) -> String {
    if name.chars().count() > NAME_WIDTH {
        name.chars()
            .take(NAME_WIDTH - 3)
            .chain("...".chars())
            .collect()
    } else {
        name.to_string()
    }
}

/// The critical-path and roofline sections. Plain text cuts long (template) names as the
/// table does; Markdown keeps them whole, as its table does.
fn extras(r: &Report, out: &mut String, md: bool) {
    let b = if md { "**" } else { "" };
    let name = |n: &str| if md { n.to_string() } else { shorten(n) };
    if let Some(cp) = &r.critical_path {
        out.push_str(&format!(
            "\n{b}Critical path{b}: {} ns of {} ns span ({} dispatches on it; {} program-order and {} cross-stream edges)\n",
            cp.length_ns,
            cp.span_ns,
            cp.path.len(),
            cp.program_order_edges,
            cp.cross_lane_edges
        ));
        if md {
            out.push('\n');
        }
        for k in cp.kernels.iter().filter(|k| !k.runtime).take(10) {
            out.push_str(&format!(
                "{}{:>6.2}% on path, slack {} ns  {}\n",
                if md { "- " } else { "  " },
                k.share,
                k.slack_ns,
                name(&k.name)
            ));
        }
    }
    if let Some(rl) = &r.roofline {
        out.push_str(&format!(
            "\n{b}Roofline{b} ({}, HBM {} GB/s)\n",
            rl.peaks.gpu, rl.peaks.hbm_gbps
        ));
        if md {
            out.push('\n');
        }
        for k in &rl.kernels {
            out.push_str(&format!(
                "{}{}: AI {:.3} FLOP/B, {:.1} GFLOP/s, {:.1} GB/s, {}-bound ({}; {:.1}% of roof)\n",
                if md { "- " } else { "  " },
                name(&k.name),
                k.arithmetic_intensity,
                k.gflops,
                k.gbps,
                k.bound,
                k.ceiling,
                k.percent_of_roof
            ));
        }
    } else if let Some(n) = &r.roofline_note {
        out.push_str(&format!("\nRoofline: {n}\n"));
    }
}

/// `SOURCE (format), N dispatches, GPU busy T ns, span S ns`: the line above every table.
fn headline(r: &Report, source: &str) -> String {
    format!(
        "{source} ({}), {} dispatches, GPU busy {} ns, span {} ns",
        r.format, r.dispatches, r.gpu_busy_ns, r.span_ns
    )
}

/// Plain-text table for terminals.
pub fn table(r: &Report) -> String {
    let (head, body) = rows(r);
    let mut width: Vec<usize> = head.iter().map(|h| h.len()).collect();
    for row in &body {
        for (i, c) in row.iter().enumerate() {
            width[i] = width[i].max(c.chars().count().min(if i == 1 { NAME_WIDTH } else { 100 }));
        }
    }
    let arch = r
        .arch
        .as_ref()
        .map(|a| format!(", {a}"))
        .unwrap_or_default();
    let mut out = format!("source: {}{arch}\n\n", headline(r, r.source.as_str()));
    let line = |cells: Vec<String>| -> String {
        cells
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let c: String = if i == 1 { shorten(c) } else { c.clone() };
                if i == 1 {
                    format!("{:<w$}", c, w = width[i])
                } else {
                    format!("{:>w$}", c, w = width[i])
                }
            })
            .collect::<Vec<_>>()
            .join("  ")
            .trim_end()
            .to_string()
    };
    out.push_str(&line(head.iter().map(|s| s.to_string()).collect()));
    out.push('\n');
    for row in body {
        out.push_str(&line(row));
        out.push('\n');
    }
    extras(r, &mut out, false);
    out
}

/// GitHub-flavoured Markdown.
pub fn markdown(r: &Report) -> String {
    let (head, body) = rows(r);
    let mut out = format!(
        "Source: {}\n\n",
        headline(r, &format!("`{}`", r.source.as_str()))
    );
    out.push_str(&format!("| {} |\n", head.join(" | ")));
    out.push_str(&format!(
        "|{}\n",
        head.iter()
            .enumerate()
            .map(|(i, _)| if i == 1 { "---|" } else { "---:|" })
            .collect::<String>()
    ));
    for row in body {
        let cells: Vec<String> = row
            .into_iter()
            .enumerate()
            .map(|(i, c)| {
                if i == 1 {
                    format!("`{}`", c.replace('|', "\\|").replace('`', "'"))
                } else {
                    c
                }
            })
            .collect();
        out.push_str(&format!("| {} |\n", cells.join(" | ")));
    }
    extras(r, &mut out, true);
    out
}
