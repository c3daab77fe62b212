//! Summaries of raw per-iteration times: median and spread (min, max, quartiles, median
//! absolute deviation), never the mean alone, computed by `samplestats` (the one home of these
//! figures). The raw samples are always kept beside them.

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
    /// Median absolute deviation from the median, unscaled (`samplestats::mad`).
    pub mad_ns: f64,
    /// `mad_ns / median_ns`.
    pub rel_mad: f64,
}

/// Summarise samples; `None` for none (the figures of `samplestats`, the one home).
pub fn summarize(samples: &[u64]) -> Option<Summary> {
    let v: Vec<f64> = samples.iter().map(|&x| x as f64).collect();
    let s = samplestats::summarize(&v)?;
    Some(Summary {
        n: s.n,
        median_ns: s.median,
        min_ns: *samples.iter().min()?,
        max_ns: *samples.iter().max()?,
        mean_ns: s.mean,
        q1_ns: s.q1,
        q3_ns: s.q3,
        mad_ns: s.mad,
        rel_mad: s.rel_mad,
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
