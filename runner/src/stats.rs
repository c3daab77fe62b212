//! Statistics of timing samples: median, quartiles, median absolute deviation, and a relative
//! spread. Pure functions over the raw samples (which are always kept and reported).

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
    /// Median absolute deviation from the median.
    pub mad: f64,
    /// `mad / median`: the spread as a fraction of the typical time.
    pub rel_spread: f64,
}

/// The `q`-quantile (0..=1) of sorted `v`, interpolating linearly between closest ranks.
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let pos = q.clamp(0.0, 1.0) * (sorted.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
}

/// Summarise samples; `None` for none.
pub fn summarize(samples: &[f64]) -> Option<Summary> {
    if samples.is_empty() {
        return None;
    }
    let mut s = samples.to_vec();
    s.sort_by(f64::total_cmp);
    let median = quantile(&s, 0.5);
    let mut dev: Vec<f64> = s.iter().map(|x| (x - median).abs()).collect();
    dev.sort_by(f64::total_cmp);
    let mad = quantile(&dev, 0.5);
    Some(Summary {
        n: s.len(),
        min: s[0],
        max: s[s.len() - 1],
        mean: s.iter().sum::<f64>() / s.len() as f64,
        median,
        q1: quantile(&s, 0.25),
        q3: quantile(&s, 0.75),
        mad,
        rel_spread: if median > 0.0 { mad / median } else { 0.0 },
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
