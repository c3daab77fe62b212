//! Roofline: FLOPs and DRAM bytes from hardware counters, arithmetic intensity, achieved
//! GFLOP/s and GB/s, and the memory- or compute-bound verdict against per-GPU peaks; an SVG
//! plot.
//!
//! The FLOP and byte formulas are those of rocprof-compute's roofline
//! (`projects/rocprofiler-compute/src/utils/roofline_calc.py` in ROCm/rocm-systems,
//! commit 1b1610fc2b2a, function `calc_ai`):
//! - VALU FLOPs = 64 × (ADD + MUL + 2·FMA + TRANS) for each of `SQ_INSTS_VALU_*_F16/F32/F64`
//!   (64 lanes per wave instruction; an FMA is two operations);
//! - MFMA FLOPs = 512 × `SQ_INSTS_VALU_MFMA_MOPS_{F16,BF16,F32,F64}` (+`_F8` when present);
//! - HBM bytes, MI200 (gfx90a): `TCC_EA_RDREQ_32B`·32 + (`TCC_EA_RDREQ` − `TCC_EA_RDREQ_32B`)·64
//!   + `TCC_EA_WRREQ_64B`·64 + (`TCC_EA_WRREQ` − `TCC_EA_WRREQ_64B`)·32;
//! - HBM bytes, MI300 (gfx94x, `TCC_EA0_*` names): `TCC_BUBBLE`·128 + `TCC_EA0_RDREQ_32B`·32
//!   + (`TCC_EA0_RDREQ` − `TCC_BUBBLE` − `TCC_EA0_RDREQ_32B`)·64
//!   + (`TCC_EA0_WRREQ` − `TCC_EA0_WRREQ_64B`)·32 + `TCC_EA0_WRREQ_64B`·64.
//!
//! Counter values are the sum over instances (rocprofv3 sums them; rocprof-compute's `_sum`).

use crate::model::Profile;
use serde::Serialize;
use std::collections::BTreeMap;

/// Peak rates of one GPU (one agent as ROCm sees it: one GCD of an MI250X).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Peaks {
    pub gpu: &'static str,
    pub arch: &'static str,
    pub vector_fp64_gflops: f64,
    pub vector_fp32_gflops: f64,
    pub vector_fp16_gflops: f64,
    pub matrix_fp64_gflops: f64,
    pub matrix_fp32_gflops: f64,
    pub matrix_fp16_gflops: f64,
    pub hbm_gbps: f64,
}

/// AMD Instinct MI210 (gfx90a, 104 CUs at 1.7 GHz, HBM2e 1.6 TB/s). Source: AMD Instinct MI210
/// data sheet (peak FP64/FP32 vector 22.6 TF, FP64/FP32 matrix 45.3 TF, FP16 matrix 181 TF,
/// 1638.4 GB/s); packed FP16 vector is twice the FP32 vector rate (CDNA2 white paper). The
/// same per-die figures hold for one GCD of an MI250 (104 CUs per GCD).
pub const MI210: Peaks = Peaks {
    gpu: "mi210",
    arch: "gfx90a",
    vector_fp64_gflops: 22_600.0,
    vector_fp32_gflops: 22_600.0,
    vector_fp16_gflops: 45_300.0,
    matrix_fp64_gflops: 45_300.0,
    matrix_fp32_gflops: 45_300.0,
    matrix_fp16_gflops: 181_000.0,
    hbm_gbps: 1_638.4,
};

/// One GCD of an AMD Instinct MI250X (gfx90a, 110 CUs at 1.7 GHz): half of the MI250X data
/// sheet's OAM figures (FP64/FP32 vector 47.9 TF, FP64/FP32 matrix 95.7 TF, FP16 matrix 383 TF,
/// HBM2e 3.2768 TB/s), since each GCD is a separate ROCm agent.
pub const MI250X_GCD: Peaks = Peaks {
    gpu: "mi250x",
    arch: "gfx90a",
    vector_fp64_gflops: 23_950.0,
    vector_fp32_gflops: 23_950.0,
    vector_fp16_gflops: 47_900.0,
    matrix_fp64_gflops: 47_850.0,
    matrix_fp32_gflops: 47_850.0,
    matrix_fp16_gflops: 191_500.0,
    hbm_gbps: 1_638.4,
};

/// AMD Instinct MI300X (gfx942, 304 CUs at 2.1 GHz, HBM3 5.3 TB/s). Source: AMD Instinct MI300X
/// data sheet (FP64 vector 81.7 TF, FP32 vector 163.4 TF, FP64/FP32 matrix 163.4 TF, FP16
/// matrix 1307.4 TF dense, 5.3 TB/s).
pub const MI300X: Peaks = Peaks {
    gpu: "mi300x",
    arch: "gfx942",
    vector_fp64_gflops: 81_700.0,
    vector_fp32_gflops: 163_400.0,
    vector_fp16_gflops: 163_400.0,
    matrix_fp64_gflops: 163_400.0,
    matrix_fp32_gflops: 163_400.0,
    matrix_fp16_gflops: 1_307_400.0,
    hbm_gbps: 5_300.0,
};

pub const ALL: [&Peaks; 3] = [&MI210, &MI250X_GCD, &MI300X];

/// Peaks by name (`mi210`, `mi250x`, `mi300x`).
pub fn peaks_named(name: &str) -> Option<&'static Peaks> {
    ALL.into_iter().find(|p| p.gpu.eq_ignore_ascii_case(name))
}

/// Peaks for the profiled GPU: by product name when known, else by gfx target (gfx90a ->
/// MI210 figures, which are also one MI250 GCD's; gfx942 -> MI300X). `None` for other GPUs
/// (e.g. MI300A, whose CU count differs).
pub fn peaks_for(arch: Option<&str>, product: Option<&str>) -> Option<&'static Peaks> {
    let prod = product.unwrap_or("").to_ascii_uppercase();
    if prod.contains("MI250X") {
        return Some(&MI250X_GCD);
    }
    if prod.contains("MI210") || prod.contains("MI250") {
        return Some(&MI210);
    }
    if prod.contains("MI300X") {
        return Some(&MI300X);
    }
    if prod.contains("MI300A") || prod.contains("MI325") {
        return None;
    }
    match arch? {
        "gfx90a" => Some(&MI210),
        "gfx942" => Some(&MI300X),
        _ => None,
    }
}

/// FLOPs of one dispatch by kind; `None` when no FLOP counter was collected.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Flops {
    pub valu_f16: f64,
    pub valu_f32: f64,
    pub valu_f64: f64,
    pub mfma_f16: f64,
    pub mfma_f32: f64,
    pub mfma_f64: f64,
    pub mfma_f8: f64,
}

impl Flops {
    pub fn total(&self) -> f64 {
        self.valu_f16
            + self.valu_f32
            + self.valu_f64
            + self.mfma_f16
            + self.mfma_f32
            + self.mfma_f64
            + self.mfma_f8
    }
    fn add(&mut self, o: &Flops) {
        self.valu_f16 += o.valu_f16;
        self.valu_f32 += o.valu_f32;
        self.valu_f64 += o.valu_f64;
        self.mfma_f16 += o.mfma_f16;
        self.mfma_f32 += o.mfma_f32;
        self.mfma_f64 += o.mfma_f64;
        self.mfma_f8 += o.mfma_f8;
    }
}

fn c(m: &BTreeMap<String, f64>, n: &str) -> f64 {
    m.get(n).copied().unwrap_or(0.0)
}

/// FLOPs from counters (rocprof-compute's formula), or `None` without any FLOP counter.
pub fn flops(m: &BTreeMap<String, f64>) -> Option<Flops> {
    if !m.keys().any(|k| {
        k.starts_with("SQ_INSTS_VALU_")
            && (k.contains("_F16")
                || k.contains("_F32")
                || k.contains("_F64")
                || k.contains("MFMA_MOPS"))
    }) {
        return None;
    }
    let valu = |t: &str| {
        64.0 * (c(m, &format!("SQ_INSTS_VALU_ADD_{t}"))
            + c(m, &format!("SQ_INSTS_VALU_MUL_{t}"))
            + 2.0 * c(m, &format!("SQ_INSTS_VALU_FMA_{t}"))
            + c(m, &format!("SQ_INSTS_VALU_TRANS_{t}")))
    };
    let mfma = |t: &str| 512.0 * c(m, &format!("SQ_INSTS_VALU_MFMA_MOPS_{t}"));
    Some(Flops {
        valu_f16: valu("F16"),
        valu_f32: valu("F32"),
        valu_f64: valu("F64"),
        mfma_f16: mfma("F16") + mfma("BF16"),
        mfma_f32: mfma("F32"),
        mfma_f64: mfma("F64"),
        mfma_f8: mfma("F8"),
    })
}

/// HBM (DRAM) bytes from TCC EA counters, or `None` without them. The gfx94x formula is used
/// when the `TCC_EA0_*` names are present, the MI200 one for `TCC_EA_*`.
pub fn hbm_bytes(m: &BTreeMap<String, f64>) -> Option<f64> {
    if m.contains_key("TCC_EA0_RDREQ") || m.contains_key("TCC_EA0_WRREQ") {
        let bubble = c(m, "TCC_BUBBLE");
        let rd32 = c(m, "TCC_EA0_RDREQ_32B");
        let wr64 = c(m, "TCC_EA0_WRREQ_64B");
        return Some(
            bubble * 128.0
                + rd32 * 32.0
                + (c(m, "TCC_EA0_RDREQ") - bubble - rd32) * 64.0
                + (c(m, "TCC_EA0_WRREQ") - wr64) * 32.0
                + wr64 * 64.0,
        );
    }
    if m.contains_key("TCC_EA_RDREQ") || m.contains_key("TCC_EA_WRREQ") {
        let rd32 = c(m, "TCC_EA_RDREQ_32B");
        let wr64 = c(m, "TCC_EA_WRREQ_64B");
        return Some(
            rd32 * 32.0
                + (c(m, "TCC_EA_RDREQ") - rd32) * 64.0
                + wr64 * 64.0
                + (c(m, "TCC_EA_WRREQ") - wr64) * 32.0,
        );
    }
    None
}

/// One kernel on the roofline (all its dispatches with counters together).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KernelPoint {
    pub name: String,
    pub calls: u64,
    pub flops: f64,
    pub hbm_bytes: f64,
    pub time_ns: u64,
    /// FLOP per HBM byte.
    pub arithmetic_intensity: f64,
    pub gflops: f64,
    pub gbps: f64,
    /// Which compute ceiling applies: the kind with the most FLOPs (`vector-fp32`, `matrix-fp16`...).
    pub ceiling: &'static str,
    pub ceiling_gflops: f64,
    /// Ridge point of that ceiling: ceiling / HBM bandwidth.
    pub ridge_ai: f64,
    /// `memory` when AI < ridge, else `compute`.
    pub bound: &'static str,
    /// Achieved GFLOP/s as a percentage of min(ceiling, AI × bandwidth).
    pub percent_of_roof: f64,
    pub runtime: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Roofline {
    pub peaks: Peaks,
    pub kernels: Vec<KernelPoint>,
}

fn ceiling(f: &Flops, p: &Peaks) -> (&'static str, f64) {
    let kinds = [
        (f.valu_f64, "vector-fp64", p.vector_fp64_gflops),
        (f.valu_f32, "vector-fp32", p.vector_fp32_gflops),
        (f.valu_f16, "vector-fp16", p.vector_fp16_gflops),
        (f.mfma_f64, "matrix-fp64", p.matrix_fp64_gflops),
        (f.mfma_f32, "matrix-fp32", p.matrix_fp32_gflops),
        (f.mfma_f16 + f.mfma_f8, "matrix-fp16", p.matrix_fp16_gflops),
    ];
    let best = kinds
        .iter()
        .fold(kinds[1], |b, k| if k.0 > b.0 { *k } else { b });
    (best.1, best.2)
}

/// The roofline of every kernel whose dispatches carry both FLOP and HBM counters.
pub fn roofline(p: &Profile, peaks: &Peaks) -> Roofline {
    let mut acc: BTreeMap<u32, (u64, Flops, f64, u64)> = BTreeMap::new();
    for d in &p.dispatches {
        let Some(m) = d.counters.as_deref() else {
            continue;
        };
        let (Some(f), Some(b)) = (flops(m), hbm_bytes(m)) else {
            continue;
        };
        let e = acc.entry(d.kernel).or_default();
        e.0 += 1;
        e.1.add(&f);
        e.2 += b;
        e.3 += d.duration_ns();
    }
    let mut kernels: Vec<KernelPoint> = acc
        .into_iter()
        .map(|(k, (calls, f, bytes, t))| {
            let fl = f.total();
            let ai = if bytes > 0.0 {
                fl / bytes
            } else {
                f64::INFINITY
            };
            let secs = t as f64 * 1e-9;
            let gflops = if secs > 0.0 { fl / secs / 1e9 } else { 0.0 };
            let gbps = if secs > 0.0 { bytes / secs / 1e9 } else { 0.0 };
            let (name, ceil) = ceiling(&f, peaks);
            let ridge = ceil / peaks.hbm_gbps;
            let roof = ceil.min(ai * peaks.hbm_gbps);
            KernelPoint {
                name: p.kernels[k as usize].name.clone(),
                calls,
                flops: fl,
                hbm_bytes: bytes,
                time_ns: t,
                arithmetic_intensity: ai,
                gflops,
                gbps,
                ceiling: name,
                ceiling_gflops: ceil,
                ridge_ai: ridge,
                bound: if ai < ridge { "memory" } else { "compute" },
                percent_of_roof: if roof > 0.0 {
                    gflops / roof * 100.0
                } else {
                    0.0
                },
                runtime: p.kernels[k as usize].runtime,
            }
        })
        .collect();
    kernels.sort_by(|a, b| {
        a.runtime
            .cmp(&b.runtime)
            .then(b.time_ns.cmp(&a.time_ns))
            .then(a.name.cmp(&b.name))
    });
    Roofline {
        peaks: peaks.clone(),
        kernels,
    }
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&apos;")
}

/// A log-log SVG roofline plot: the HBM slope, the vector FP64/FP32 and matrix FP16 ceilings,
/// and one point per kernel.
pub fn svg(r: &Roofline) -> String {
    let (w, h, ml, mr, mt, mb) = (900.0, 600.0, 80.0, 30.0, 40.0, 60.0);
    let (x0, x1) = (0.01f64, 10_000.0f64); // FLOP/byte
    let top = r.peaks.matrix_fp16_gflops.max(r.peaks.vector_fp32_gflops) * 3.0;
    let (y0, y1) = (1.0f64, top);
    let px = |ai: f64| {
        ml + (ai.clamp(x0, x1).log10() - x0.log10()) / (x1.log10() - x0.log10()) * (w - ml - mr)
    };
    let py = |g: f64| {
        h - mb - (g.clamp(y0, y1).log10() - y0.log10()) / (y1.log10() - y0.log10()) * (h - mt - mb)
    };
    let mut s = String::new();
    s.push_str(&format!("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" font-family=\"sans-serif\" font-size=\"12\">\n"));
    s.push_str(&format!(
        "<title>Roofline ({} {})</title>\n",
        esc(r.peaks.gpu),
        esc(r.peaks.arch)
    ));
    s.push_str("<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n");
    s.push_str(&format!(
        "<rect x=\"{ml}\" y=\"{mt}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"black\"/>\n",
        w - ml - mr,
        h - mt - mb
    ));
    // Decade grid and labels.
    let mut e = x0.log10() as i32;
    while (e as f64) <= x1.log10() {
        let x = px(10f64.powi(e));
        s.push_str(&format!("<line x1=\"{x:.1}\" y1=\"{mt}\" x2=\"{x:.1}\" y2=\"{}\" stroke=\"#ddd\"/><text x=\"{x:.1}\" y=\"{}\" text-anchor=\"middle\">1e{e}</text>\n", h - mb, h - mb + 18.0));
        e += 1;
    }
    let mut e = 0;
    while 10f64.powi(e) <= y1 {
        let y = py(10f64.powi(e));
        s.push_str(&format!("<line x1=\"{ml}\" y1=\"{y:.1}\" x2=\"{}\" y2=\"{y:.1}\" stroke=\"#ddd\"/><text x=\"{}\" y=\"{y:.1}\" text-anchor=\"end\">1e{e}</text>\n", w - mr, ml - 6.0));
        e += 1;
    }
    s.push_str(&format!("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">Arithmetic intensity (FLOP/byte, HBM)</text>\n", (ml + w - mr) / 2.0, h - 15.0));
    s.push_str(&format!("<text x=\"20\" y=\"{}\" text-anchor=\"middle\" transform=\"rotate(-90 20 {})\">GFLOP/s</text>\n", (mt + h - mb) / 2.0, (mt + h - mb) / 2.0));
    s.push_str(&format!(
        "<text x=\"{ml}\" y=\"25\">Roofline: {} ({}), HBM {} GB/s</text>\n",
        esc(r.peaks.gpu),
        esc(r.peaks.arch),
        r.peaks.hbm_gbps
    ));
    for (label, ceil, color) in [
        ("vector FP64", r.peaks.vector_fp64_gflops, "#1f77b4"),
        ("vector FP32", r.peaks.vector_fp32_gflops, "#2ca02c"),
        ("matrix FP16", r.peaks.matrix_fp16_gflops, "#d62728"),
    ] {
        let ridge = ceil / r.peaks.hbm_gbps;
        let start = x0.max(y0 / r.peaks.hbm_gbps);
        s.push_str(&format!(
            "<polyline fill=\"none\" stroke=\"{color}\" stroke-width=\"2\" points=\"{:.1},{:.1} {:.1},{:.1} {:.1},{:.1}\"/>\n",
            px(start), py(start * r.peaks.hbm_gbps), px(ridge), py(ceil), px(x1), py(ceil)
        ));
        s.push_str(&format!("<text x=\"{:.1}\" y=\"{:.1}\" fill=\"{color}\" text-anchor=\"end\">{label} {:.0} GFLOP/s</text>\n", w - mr - 4.0, py(ceil) - 4.0, ceil));
    }
    for (i, k) in r.kernels.iter().enumerate() {
        let (x, y) = (px(k.arithmetic_intensity), py(k.gflops.max(y0)));
        let color = if k.bound == "memory" {
            "#ff7f0e"
        } else {
            "#9467bd"
        };
        s.push_str(&format!(
            "<circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"5\" fill=\"{color}\"><title>{} : AI {:.3} FLOP/B, {:.1} GFLOP/s, {:.1} GB/s, {}-bound</title></circle>\n",
            esc(&k.name), k.arithmetic_intensity, k.gflops, k.gbps, k.bound
        ));
        let short: String = k.name.chars().take(40).collect();
        s.push_str(&format!(
            "<text x=\"{:.1}\" y=\"{:.1}\">{}. {}</text>\n",
            x + 7.0,
            y - 7.0 + (i % 3) as f64 * 12.0,
            i + 1,
            esc(&short)
        ));
    }
    s.push_str("</svg>\n");
    s
}
