//! Per-kernel statistics: calls, total, mean, median, min, max, standard deviation and share
//! of GPU time.
//!
//! The standard deviation is the **sample** standard deviation (divisor n-1, 0 for one call),
//! the same as rocprofv3's `StdDev` column: `statistics::get_variance()` in
//! rocprofiler-sdk `source/lib/output/statistics.hpp` divides by `m_cnt - 1`. The median of an
//! even number of calls is the mean of the two middle durations. `percent` is the kernel's
//! share of the summed duration of all kernel dispatches, runtime kernels included (as
//! rocprofv3's `Percentage`).

use crate::model::Profile;
use serde::Serialize;

/// Statistics of one kernel.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KernelStats {
    pub name: String,
    pub calls: u64,
    pub total_ns: f64,
    pub mean_ns: f64,
    /// `None` when only precomputed stats (rocprofv3 kernel_stats.csv) were available.
    pub median_ns: Option<f64>,
    pub min_ns: f64,
    pub max_ns: f64,
    pub stddev_ns: f64,
    pub percent: f64,
    /// `__amd_rocclr_*` runtime kernel: listed after the user kernels, never ranked.
    pub runtime: bool,
    /// 1 = most total time among user kernels; `None` for runtime kernels.
    pub rank: Option<u32>,
}

/// Summarise a profile: one entry per kernel, user kernels by descending total time (ties by
/// name), then runtime kernels.
pub fn summarize(p: &Profile) -> Vec<KernelStats> {
    let mut out = if p.dispatches.is_empty() {
        from_precomputed(p)
    } else {
        from_dispatches(p)
    };
    out.sort_by(|a, b| {
        a.runtime
            .cmp(&b.runtime)
            .then(b.total_ns.total_cmp(&a.total_ns))
            .then(a.name.cmp(&b.name))
    });
    let mut rank = 0;
    for s in &mut out {
        if !s.runtime {
            rank += 1;
            s.rank = Some(rank);
        }
    }
    out
}

fn from_dispatches(p: &Profile) -> Vec<KernelStats> {
    let mut durs: Vec<Vec<u64>> = vec![Vec::new(); p.kernels.len()];
    for d in &p.dispatches {
        durs[d.kernel as usize].push(d.duration_ns());
    }
    let grand: f64 = durs.iter().flatten().map(|&d| d as f64).sum();
    let mut out = Vec::new();
    for (k, mut v) in durs.into_iter().enumerate() {
        if v.is_empty() {
            continue;
        }
        v.sort_unstable();
        let n = v.len();
        let total: f64 = v.iter().map(|&d| d as f64).sum();
        let mean = total / n as f64;
        let sorted: Vec<f64> = v.iter().map(|&d| d as f64).collect();
        let median = samplestats::median_sorted(&sorted);
        // Two-pass sample variance (numerically safer than rocprofv3's sum of squares; same value).
        let var = if n < 2 {
            0.0
        } else {
            v.iter().map(|&d| (d as f64 - mean).powi(2)).sum::<f64>() / (n - 1) as f64
        };
        out.push(KernelStats {
            name: p.kernels[k].name.clone(),
            calls: n as u64,
            total_ns: total,
            mean_ns: mean,
            median_ns: Some(median),
            min_ns: v[0] as f64,
            max_ns: v[n - 1] as f64,
            stddev_ns: var.sqrt(),
            percent: if grand > 0.0 {
                total / grand * 100.0
            } else {
                0.0
            },
            runtime: p.kernels[k].runtime,
            rank: None,
        });
    }
    out
}

fn from_precomputed(p: &Profile) -> Vec<KernelStats> {
    // Several stats files (processes) may name the same kernel: merge them exactly
    // (count, sum and sum of squares recovered from mean and sample variance).
    let mut merged: Vec<(String, u64, f64, f64, f64, f64)> = Vec::new(); // name, n, sum, sumsq, min, max
    for s in &p.precomputed {
        let n = s.calls as f64;
        let sumsq = if s.calls >= 2 {
            s.stddev_ns.powi(2) * (n - 1.0) + s.total_ns * s.total_ns / n
        } else {
            s.total_ns * s.total_ns
        };
        match merged.iter_mut().find(|m| m.0 == s.name) {
            Some(m) => {
                m.1 += s.calls;
                m.2 += s.total_ns;
                m.3 += sumsq;
                m.4 = m.4.min(s.min_ns);
                m.5 = m.5.max(s.max_ns);
            }
            None => merged.push((
                s.name.clone(),
                s.calls,
                s.total_ns,
                sumsq,
                s.min_ns,
                s.max_ns,
            )),
        }
    }
    let grand: f64 = merged.iter().map(|m| m.2).sum();
    merged
        .into_iter()
        .map(|(name, n, sum, sumsq, min, max)| {
            let nf = n as f64;
            let var = if n < 2 {
                0.0
            } else {
                ((sumsq - sum * sum / nf) / (nf - 1.0)).abs()
            };
            KernelStats {
                runtime: crate::names::is_runtime_kernel(&name),
                name,
                calls: n,
                total_ns: sum,
                mean_ns: if n > 0 { sum / nf } else { 0.0 },
                median_ns: None,
                min_ns: min,
                max_ns: max,
                stddev_ns: var.sqrt(),
                percent: if grand > 0.0 {
                    sum / grand * 100.0
                } else {
                    0.0
                },
                rank: None,
            }
        })
        .collect()
}

/// Total GPU busy time (sum of dispatch durations) and the wall span first start -> last end.
pub fn totals(p: &Profile) -> (u64, u64) {
    let busy = p
        .dispatches
        .iter()
        .fold(0u64, |t, d| t.saturating_add(d.duration_ns()));
    let span = match (
        p.dispatches.iter().map(|d| d.start_ns).min(),
        p.dispatches.iter().map(|d| d.end_ns).max(),
    ) {
        (Some(a), Some(b)) => b.saturating_sub(a),
        _ => 0,
    };
    (busy, span)
}
