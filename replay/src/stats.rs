//! Summaries of raw per-iteration times: median and spread (min, max, quartiles, median
//! absolute deviation), never the mean alone. The raw samples are always kept beside them.
//! Kept small and local: the tuner's statistics (issue 11) had not landed when this was written.

use serde::Serialize;

/// Summary of nanosecond samples.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    pub n: usize,
    pub median_ns: f64,
    pub min_ns: u64,
    pub max_ns: u64,
    pub mean_ns: f64,
    /// First and third quartiles (linear interpolation between order statistics).
    pub q1_ns: f64,
    pub q3_ns: f64,
    /// Median absolute deviation from the median (unscaled).
    pub mad_ns: f64,
    /// `mad_ns / median_ns`.
    pub rel_mad: f64,
}

/// The `q`-quantile (0..=1) of sorted samples, interpolating linearly (R's type 7).
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    assert!(!sorted.is_empty());
    let h = (sorted.len() - 1) as f64 * q.clamp(0.0, 1.0);
    let lo = h.floor() as usize;
    let hi = h.ceil() as usize;
    sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo])
}

/// Summarise samples; `None` for none.
pub fn summarize(samples: &[u64]) -> Option<Summary> {
    if samples.is_empty() {
        return None;
    }
    let mut v: Vec<f64> = samples.iter().map(|&x| x as f64).collect();
    v.sort_by(f64::total_cmp);
    let median = quantile(&v, 0.5);
    let mut dev: Vec<f64> = v.iter().map(|x| (x - median).abs()).collect();
    dev.sort_by(f64::total_cmp);
    let mad = quantile(&dev, 0.5);
    Some(Summary {
        n: v.len(),
        median_ns: median,
        min_ns: *samples.iter().min().expect("non-empty"),
        max_ns: *samples.iter().max().expect("non-empty"),
        mean_ns: v.iter().sum::<f64>() / v.len() as f64,
        q1_ns: quantile(&v, 0.25),
        q3_ns: quantile(&v, 0.75),
        mad_ns: mad,
        rel_mad: if median > 0.0 { mad / median } else { 0.0 },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_and_spread() {
        let s = summarize(&[10, 12, 11, 100, 13]).unwrap();
        assert_eq!(s.n, 5);
        assert_eq!(s.median_ns, 12.0);
        assert_eq!((s.min_ns, s.max_ns), (10, 100));
        assert_eq!((s.q1_ns, s.q3_ns), (11.0, 13.0));
        // |deviations| = 2, 0, 1, 88, 1 -> median 1: the outlier does not move it.
        assert_eq!(s.mad_ns, 1.0);
        assert!((s.rel_mad - 1.0 / 12.0).abs() < 1e-12);
        assert_eq!(s.mean_ns, 29.2);
        let even = summarize(&[4, 1, 3, 2]).unwrap();
        assert_eq!(even.median_ns, 2.5);
        assert_eq!(summarize(&[]), None);
        assert_eq!(summarize(&[7]).unwrap().mad_ns, 0.0);
    }
}
