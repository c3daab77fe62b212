//! The summary `bench` reports of its timing samples: median, quartiles, median absolute
//! deviation (unscaled) and the relative spread `mad / median`, computed by `samplestats`.

use serde::Serialize;

/// A summary of per-launch times (milliseconds).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    pub n: usize,
    pub min: f64,
    pub max: f64,
    pub mean: f64,
    pub median: f64,
    /// First and third quartiles (linear interpolation, as numpy's default).
    pub q1: f64,
    pub q3: f64,
    /// Median absolute deviation from the median, unscaled (`samplestats::mad`; the tuner's
    /// `spread` is 1.4826 times this figure, of log times).
    pub mad: f64,
    /// `mad / median`: the relative MAD, as a fraction of the typical time.
    pub rel_spread: f64,
}

/// Summarise samples; `None` for none (the figures of `samplestats`, the one home).
pub fn summarize(samples: &[f64]) -> Option<Summary> {
    let s = samplestats::summarize(samples)?;
    Some(Summary {
        n: s.n,
        min: s.min,
        max: s.max,
        mean: s.mean,
        median: s.median,
        q1: s.q1,
        q3: s.q3,
        mad: s.mad,
        rel_spread: s.rel_mad,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_of_known_samples() {
        let s = summarize(&[5.0, 1.0, 4.0, 2.0, 3.0, 100.0]).unwrap();
        assert_eq!((s.n, s.min, s.max), (6, 1.0, 100.0));
        assert_eq!(s.median, 3.5);
        assert_eq!(s.q1, 2.25);
        assert_eq!(s.q3, 4.75);
        // |x - 3.5| = 2.5 1.5 0.5 0.5 1.5 96.5 -> median 1.5
        assert_eq!(s.mad, 1.5);
        assert!((s.rel_spread - 1.5 / 3.5).abs() < 1e-12);
        assert!((s.mean - 115.0 / 6.0).abs() < 1e-12);
        assert!(summarize(&[]).is_none());
        assert_eq!(summarize(&[2.0]).unwrap().mad, 0.0);
    }
}
