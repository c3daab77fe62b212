//! samplestats: the one home of the figures that summarise timing samples (`bench`, `replay`,
//! the tuner). Pure functions over raw samples; callers keep the samples beside them.
//!
//! The figures, each named for what it is:
//! - [`median`]: the middle value, the mean of the two middle values for an even count;
//! - [`quantile`]: linear interpolation between order statistics (R's type 7, numpy's default);
//! - [`mad`]: the median absolute deviation from the median, **unscaled** (what `bench`'s and
//!   `replay`'s reports call `mad`; divided by the median it is their relative spread);
//! - [`mad_sigma`]: `1.4826 * mad`, the MAD scaled to estimate a normal standard deviation
//!   (what the tuner calls `spread`, taken over `ln(sample)`, so it reads as a fraction).
//!
//! `mad` and `mad_sigma` differ by the factor 1.4826: a `bench` relative MAD of 2% and a tune
//! spread of 3% describe the same noise.

/// The factor that makes the MAD of normally distributed values estimate their standard
/// deviation (`1 / Φ⁻¹(3/4)`).
pub const MAD_TO_SIGMA: f64 = 1.4826;

/// The `q`-quantile (clamped to 0..=1) of `sorted` (ascending), interpolating linearly between
/// closest ranks (R's type 7); `NaN` for no values.
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let pos = q.clamp(0.0, 1.0) * (sorted.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
}

/// The median of `sorted` (ascending): the middle value, or the mean of the two middle values;
/// `NaN` for no values.
pub fn median_sorted(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    match n {
        0 => f64::NAN,
        _ if n % 2 == 1 => sorted[n / 2],
        _ => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}

/// The median of `v` (any order); `NaN` for no values.
pub fn median(v: &[f64]) -> f64 {
    median_sorted(&sorted(v))
}

/// The median absolute deviation from the median, unscaled; `NaN` for no values.
pub fn mad(v: &[f64]) -> f64 {
    let m = median(v);
    let dev: Vec<f64> = v.iter().map(|x| (x - m).abs()).collect();
    median(&dev)
}

/// [`mad`] scaled by [`MAD_TO_SIGMA`]: a robust estimate of a standard deviation.
pub fn mad_sigma(v: &[f64]) -> f64 {
    MAD_TO_SIGMA * mad(v)
}

fn sorted(v: &[f64]) -> Vec<f64> {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    s
}

/// The summary of a set of samples, in their unit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    pub n: usize,
    pub min: f64,
    pub max: f64,
    pub mean: f64,
    pub median: f64,
    /// First and third quartiles ([`quantile`]).
    pub q1: f64,
    pub q3: f64,
    /// [`mad`], unscaled.
    pub mad: f64,
    /// `mad / median` (0 when the median is not positive).
    pub rel_mad: f64,
}

/// Summarise samples; `None` for none.
pub fn summarize(samples: &[f64]) -> Option<Summary> {
    if samples.is_empty() {
        return None;
    }
    let s = sorted(samples);
    let median = median_sorted(&s);
    let mad = mad(&s);
    Some(Summary {
        n: s.len(),
        min: s[0],
        max: s[s.len() - 1],
        mean: s.iter().sum::<f64>() / s.len() as f64,
        median,
        q1: quantile(&s, 0.25),
        q3: quantile(&s, 0.75),
        mad,
        rel_mad: if median > 0.0 { mad / median } else { 0.0 },
    })
}

/// Whether A (the baseline) runs first in round `round` of the comparison named `key`: rounds
/// go in blocks of two of opposite orders (A B then B A, or B A then A B), the order of each
/// block drawn from a hash of the key and the block, so a comparison is always measured in the
/// same order and no period of the machine lines up with the roles. The one order generator of
/// `bench`, `replay` and the tuner.
pub fn a_first(key: &str, round: usize) -> bool {
    let block = round / 2;
    let mut h = blake3::Hasher::new();
    h.update(b"hip-unroll order v1\0");
    h.update(key.as_bytes());
    h.update(&(block as u64).to_le_bytes());
    let first = h.finalize().as_bytes()[0] & 1 == 1;
    first == round.is_multiple_of(2)
}

/// The two runs of round `round` as indices, A being 0 and B 1 ([`a_first`]).
pub fn round_order(key: &str, round: usize) -> [usize; 2] {
    if a_first(key, round) {
        [0, 1]
    } else {
        [1, 0]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_of_known_samples() {
        let s = summarize(&[5.0, 1.0, 4.0, 2.0, 3.0, 100.0]).unwrap();
        assert_eq!((s.n, s.min, s.max), (6, 1.0, 100.0));
        assert_eq!(s.median, 3.5);
        assert_eq!((s.q1, s.q3), (2.25, 4.75));
        // |x - 3.5| = 2.5 1.5 0.5 0.5 1.5 96.5 -> median 1.5: the outlier does not move it.
        assert_eq!(s.mad, 1.5);
        assert!((s.rel_mad - 1.5 / 3.5).abs() < 1e-12);
        assert!((s.mean - 115.0 / 6.0).abs() < 1e-12);
        assert!((mad_sigma(&[5.0, 1.0, 4.0, 2.0, 3.0, 100.0]) - 1.4826 * 1.5).abs() < 1e-12);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(median(&[10.0, 12.0, 11.0, 100.0, 13.0]), 12.0);
        assert_eq!(mad(&[7.0]), 0.0);
        assert!(summarize(&[]).is_none());
        assert!(median(&[]).is_nan() && mad(&[]).is_nan() && quantile(&[], 0.5).is_nan());
        // Quantiles clamp and interpolate.
        let v = [1.0, 2.0, 3.0, 4.0];
        assert_eq!((quantile(&v, -1.0), quantile(&v, 2.0)), (1.0, 4.0));
        assert_eq!(quantile(&v, 1.0 / 3.0), 2.0);
    }

    /// Every block of two rounds holds both orders; the blocks' orders are not all alike; the
    /// order is a function of the key and the round only.
    #[test]
    fn order_blocks() {
        for key in ["k", "bench ns::k<4>", "replay"] {
            let orders: Vec<[usize; 2]> = (0..64).map(|r| round_order(key, r)).collect();
            for b in orders.chunks(2) {
                assert_ne!(b[0], b[1], "{key}");
            }
            let firsts: std::collections::HashSet<[usize; 2]> =
                orders.iter().step_by(2).copied().collect();
            assert_eq!(firsts.len(), 2, "{key}: every block in the same order");
            assert_eq!(
                orders,
                (0..64).map(|r| round_order(key, r)).collect::<Vec<_>>()
            );
        }
    }
}
