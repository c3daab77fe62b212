//! `bench`'s report as data (the JSON contract of `bench --format json`) and its renderers:
//! the human text of a measurement, of a variant that is the baseline's code, and of
//! `--compile-only`'s builds.

use crate::build::{Built, Target};
use crate::compare::OutputDiff;
use crate::device::DeviceInfo;
use crate::measure::Measured;
use crate::session::Session;
use crate::stats::Summary;
use serde::Serialize;
use std::fmt::Write;

#[derive(Debug, Serialize)]
pub struct KernelReport<'a> {
    pub role: &'static str,
    pub source: String,
    pub symbol: &'a str,
    pub demangled: Option<&'a str>,
    pub object: String,
    pub cached: bool,
    pub precompiled: bool,
    /// `nvcc (PATH)` or `clang++-19 ...` for NVIDIA targets.
    pub compiler: Option<String>,
    pub samples_ms: Vec<f64>,
    /// `null` when nothing was timed (the variant is the same code).
    pub summary: Option<Summary>,
    pub outputs: Vec<OutputSum<'a>>,
}

#[derive(Debug, Serialize)]
pub struct OutputSum<'a> {
    pub name: &'a str,
    pub blake3: &'a str,
}

#[derive(Debug, Serialize)]
pub struct Report<'a> {
    pub spec: String,
    pub device: &'a DeviceInfo,
    pub target: &'a Target,
    pub iterations: u64,
    pub warmup: u64,
    /// Launches timed back to back as one sample (each sample is their mean).
    pub launches_per_sample: u32,
    /// Why a short kernel is timed launch by launch (its time depends on its outputs' state).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub launches_per_sample_note: Option<&'a str>,
    pub kernels: Vec<KernelReport<'a>>,
    /// Variant median / baseline median (with a variant).
    pub ratio: Option<f64>,
    /// Outputs of the variant outside their tolerance (with a variant; empty: they agree).
    pub differences: Option<&'a [OutputDiff]>,
    /// With a variant: whether it compiles to the baseline's code (PTX without its comments,
    /// or the code object's bytes); then nothing is timed unless asked.
    pub same_code: Option<bool>,
}

fn kernel<'a>(role: &'static str, b: &'a Built) -> KernelReport<'a> {
    KernelReport {
        role,
        source: b.source.display().to_string(),
        symbol: &b.signature.symbol,
        demangled: b.signature.demangled.as_deref(),
        object: b.object.display().to_string(),
        cached: b.cached,
        precompiled: b.precompiled,
        compiler: b.compiler.as_ref().map(|c| c.to_string()),
        samples_ms: Vec::new(),
        summary: None,
        outputs: Vec::new(),
    }
}

impl<'a> Report<'a> {
    /// The report of a measurement of the session's kernels (baseline first).
    pub fn measured(
        spec: String,
        session: &'a Session,
        m: &'a Measured,
        iterations: u64,
        warmup: u64,
        same_code: Option<bool>,
    ) -> Report<'a> {
        let two = m.samples.len() == 2;
        let kernels = session
            .kernels
            .iter()
            .zip(&m.samples)
            .zip(&m.summaries)
            .enumerate()
            .map(|(i, ((k, s), sum))| KernelReport {
                samples_ms: s.clone(),
                summary: Some(sum.clone()),
                outputs: k
                    .outputs
                    .iter()
                    .map(|o| OutputSum {
                        name: &o.name,
                        blake3: &o.checksum,
                    })
                    .collect(),
                ..kernel(if two && i == 1 { "variant" } else { "baseline" }, &k.built)
            })
            .collect();
        Report {
            spec,
            device: session.device(),
            target: &session.target,
            iterations,
            warmup,
            launches_per_sample: session.launches_per_sample(),
            launches_per_sample_note: session.batch_note(),
            kernels,
            ratio: m.ratio,
            differences: m.differences.as_deref(),
            same_code,
        }
    }

    /// The report of a variant that compiles to the baseline's code: nothing timed.
    pub fn same_code(spec: String, session: &'a Session, variant: &'a Built) -> Report<'a> {
        Report {
            spec,
            device: session.device(),
            target: &session.target,
            iterations: 0,
            warmup: 0,
            launches_per_sample: session.launches_per_sample(),
            launches_per_sample_note: session.batch_note(),
            kernels: vec![
                kernel("baseline", &session.kernels[0].built),
                kernel("variant", variant),
            ],
            ratio: None,
            differences: None,
            same_code: Some(true),
        }
    }
}

fn origin(precompiled: bool, cached: bool) -> &'static str {
    if precompiled {
        "precompiled"
    } else if cached {
        "cached"
    } else {
        "compiled"
    }
}

/// The human text of a report. `same_code_note` is the end of the line that says the variant
/// is the baseline's code (the binary names its own option there).
pub fn human(r: &Report, same_code_note: &str) -> String {
    let mut out = String::new();
    let d = r.device;
    let _ = writeln!(
        out,
        "device   {} ({} #{}, {})",
        d.name,
        d.api,
        d.ordinal,
        d.arch.as_deref().unwrap_or("?")
    );
    let timed = match r.launches_per_sample {
        1 => "timed launches".to_string(),
        n => format!("timed samples (each the mean of {n} back-to-back launches)"),
    };
    let _ = writeln!(
        out,
        "target   {:?}; {} {timed} after {} warm-up, per kernel",
        r.target, r.iterations, r.warmup
    );
    if let Some(note) = r.launches_per_sample_note {
        let _ = writeln!(out, "         {note}");
    }
    for k in &r.kernels {
        let _ = writeln!(
            out,
            "{:<8} {} ({}{})",
            k.role,
            k.source,
            origin(k.precompiled, k.cached),
            k.compiler
                .as_deref()
                .map(|c| format!(" by {c}"))
                .unwrap_or_default()
        );
        let _ = writeln!(out, "         kernel {}", k.demangled.unwrap_or(k.symbol));
        let Some(s) = &k.summary else {
            continue;
        };
        let _ = writeln!(
            out,
            "         median {:.4} ms  q1 {:.4}  q3 {:.4}  MAD {:.4} ({:.2}%)  min {:.4}  max {:.4}  n {}",
            s.median, s.q1, s.q3, s.mad, s.rel_spread * 100.0, s.min, s.max, s.n
        );
        let shown: Vec<String> = k.samples_ms.iter().map(|x| format!("{x:.4}")).collect();
        let _ = writeln!(out, "         samples (ms) {}", shown.join(" "));
        for o in &k.outputs {
            let _ = writeln!(out, "         output {} blake3 {}", o.name, o.blake3);
        }
    }
    if r.same_code == Some(true) {
        let what = match r.target {
            Target::Cuda(_) => "PTX",
            Target::Hip(_) => "code object",
        };
        let _ = writeln!(
            out,
            "same     the variant compiles to the same {what} as the baseline: {same_code_note}"
        );
    }
    if let Some(ratio) = r.ratio {
        let _ = writeln!(out, "ratio    variant / baseline median = {ratio:.4}");
    }
    match r.differences {
        Some([]) => {
            let _ = writeln!(out, "outputs  agree within the spec's tolerances");
        }
        Some(diffs) => {
            for d in diffs {
                let _ = writeln!(out, "DIFFERS  {d} (max |diff| {:e})", d.first.max_abs_diff);
            }
        }
        None => {}
    }
    out
}

/// The human text of compiled kernels. With `pairs`, baseline and variant alternate per target
/// and a variant that is the baseline's code gets `same_code_note` on a line of its own.
pub fn built_human(built: &[Built], pairs: bool, same_code_note: &str) -> String {
    let mut out = String::new();
    for (i, b) in built.iter().enumerate() {
        let _ = writeln!(
            out,
            "{} for {:?} ({}{}): {}",
            b.source.display(),
            b.target,
            origin(b.precompiled, b.cached),
            b.compiler
                .as_ref()
                .map(|c| format!(" by {c}"))
                .unwrap_or_default(),
            b.object.display()
        );
        if pairs && i % 2 == 1 && b.same_code(&built[i - 1]) {
            let _ = writeln!(out, "  {same_code_note}");
        }
        let sig = &b.signature;
        let _ = writeln!(
            out,
            "  kernel {} ({})",
            sig.demangled.as_deref().unwrap_or(&sig.symbol),
            sig.symbol
        );
        for (i, p) in sig.params.iter().enumerate() {
            let _ = writeln!(
                out,
                "  param {} {}{} size {} offset {}",
                i + 1,
                p.cxx_type.as_deref().unwrap_or("?"),
                p.name
                    .as_deref()
                    .map(|n| format!(" {n}"))
                    .unwrap_or_default(),
                p.size,
                p.offset
            );
        }
    }
    out
}
