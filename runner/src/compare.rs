//! Comparing an output buffer of a variant with the baseline's under the spec's tolerance, and
//! output checksums. Pure functions; [`check`] runs on every core, piece by piece
//! ([`crate::digest`]), with a result that does not depend on the number of threads.

use crate::digest::Digest;
use crate::elem::Elem;
use crate::spec::Tolerance;
use rayon::prelude::*;
use serde::Serialize;

/// The first element that differs, with the count of all that do.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Mismatch {
    pub index: usize,
    pub baseline: String,
    pub variant: String,
    /// Elements outside the tolerance.
    pub count: usize,
    /// The largest |variant - baseline| over finite pairs.
    pub max_abs_diff: f64,
}

/// blake3 of an output's bytes (hex).
pub fn checksum(bytes: &[u8]) -> String {
    blake3::hash(bytes).to_hex().to_string()
}

/// What a scan of some elements found: the first element outside the tolerance (an index into
/// the scanned range), how many are, and the largest finite difference.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Scan {
    first: Option<usize>,
    count: usize,
    max_abs: f64,
}

impl Scan {
    /// This scan followed by `next`, a scan of the `len` elements after `at`.
    fn then(self, at: usize, next: Scan) -> Scan {
        Scan {
            first: self.first.or(next.first.map(|i| at + i)),
            count: self.count + next.count,
            max_abs: self.max_abs.max(next.max_abs),
        }
    }
}

/// `None` when every element of `variant` is within `tol` of `baseline`; else the first
/// differing element. Buffers of different lengths differ at the first missing index.
pub fn diff(elem: Elem, tol: &Tolerance, baseline: &[u8], variant: &[u8]) -> Option<Mismatch> {
    let s = elem.size();
    let n = baseline.len().min(variant.len()) / s;
    let Scan {
        mut first,
        mut count,
        max_abs,
    } = scan(elem, tol, &baseline[..n * s], &variant[..n * s]);
    if baseline.len() != variant.len() {
        count += baseline.len().max(variant.len()) / s - n;
        first.get_or_insert(n);
    }
    first.map(|index| mismatch(elem, baseline, variant, index, count, max_abs))
}

/// The report of the first differing element.
fn mismatch(
    elem: Elem,
    baseline: &[u8],
    variant: &[u8],
    index: usize,
    count: usize,
    max_abs_diff: f64,
) -> Mismatch {
    let s = elem.size();
    Mismatch {
        index,
        baseline: if index < baseline.len() / s {
            elem.show(baseline, index)
        } else {
            "(missing)".into()
        },
        variant: if index < variant.len() / s {
            elem.show(variant, index)
        } else {
            "(missing)".into()
        },
        count,
        max_abs_diff,
    }
}

/// A variant's output checked against the baseline's: its digest and its first difference.
#[derive(Debug, Clone, PartialEq)]
pub struct Checked {
    pub digest: Digest,
    /// `None` when every element is within the tolerance.
    pub mismatch: Option<Mismatch>,
}

/// [`diff`] and the variant's [`Digest`] in one pass over the buffers, on every core, piece by
/// piece: a piece equal to the baseline's (compared as bytes) takes the baseline's piece value
/// unhashed and holds no difference; a piece that is not is hashed and scanned. Pieces are
/// merged in order, so the result is the same on one thread or many. `baseline_digest` must be
/// the digest of `baseline` ([`Digest::of`]); the buffers have the same length.
pub fn check(
    elem: Elem,
    tol: &Tolerance,
    baseline: &[u8],
    baseline_digest: &Digest,
    variant: &[u8],
) -> Checked {
    assert_eq!(baseline.len(), variant.len(), "outputs of one spec");
    let piece = baseline_digest.piece_len();
    let count = baseline_digest.pieces();
    let whole = count == 1;
    let parts: Vec<(blake3::hazmat::ChainingValue, Scan)> = (0..count)
        .into_par_iter()
        .map(|i| {
            let r = i * piece..((i + 1) * piece).min(variant.len());
            let (a, b) = (&baseline[r.clone()], &variant[r.clone()]);
            if a == b {
                let value = baseline_digest.piece(i).expect("a value per piece");
                return (value, Scan::default());
            }
            let value = crate::digest::piece_value(b, r.start, whole);
            (value, scan(elem, tol, a, b))
        })
        .collect();
    let s = elem.size();
    let mut found = Scan::default();
    let mut values = Vec::with_capacity(parts.len());
    for (i, (value, part)) in parts.into_iter().enumerate() {
        found = found.then(i * piece / s, part);
        values.push(value);
    }
    Checked {
        digest: Digest::from_pieces(variant.len() as u64, piece, values),
        mismatch: found
            .first
            .map(|index| mismatch(elem, baseline, variant, index, found.count, found.max_abs)),
    }
}

/// The elements of two equally long buffers outside the tolerance.
fn scan(elem: Elem, tol: &Tolerance, baseline: &[u8], variant: &[u8]) -> Scan {
    match elem.size() {
        1 => scan_as::<1>(elem, tol, baseline, variant),
        2 => scan_as::<2>(elem, tol, baseline, variant),
        4 => scan_as::<4>(elem, tol, baseline, variant),
        _ => scan_as::<8>(elem, tol, baseline, variant),
    }
}

/// [`scan`] for elements of `S` bytes (equal elements are one fixed-size comparison).
fn scan_as<const S: usize>(elem: Elem, tol: &Tolerance, baseline: &[u8], variant: &[u8]) -> Scan {
    let mut first: Option<usize> = None;
    let mut count = 0usize;
    let mut max_abs = 0f64;
    let pairs = baseline.chunks_exact(S).zip(variant.chunks_exact(S));
    for (i, (a, b)) in pairs.enumerate() {
        let (a, b): ([u8; S], [u8; S]) = (
            a.try_into().expect("S bytes"),
            b.try_into().expect("S bytes"),
        );
        if a == b {
            continue;
        }
        let (x, y) = (elem.read_f64(&a, 0), elem.read_f64(&b, 0));
        if x.is_finite() && y.is_finite() {
            max_abs = max_abs.max((x - y).abs());
        }
        let ok = match *tol {
            Tolerance::Exact => false,
            Tolerance::Close { atol, rtol } => {
                x.is_finite() && y.is_finite() && (x - y).abs() <= atol + rtol * x.abs()
            }
            Tolerance::Ulps { ulps } => ulp_distance(elem, &a, &b).is_some_and(|d| d <= ulps),
        };
        if !ok {
            count += 1;
            first.get_or_insert(i);
        }
    }
    Scan {
        first,
        count,
        max_abs,
    }
}

/// Representable values between two elements (floats: on the ordered integer line, so -0 and
/// +0 are 0 apart; NaN is never close); integers: their difference.
pub fn ulp_distance(elem: Elem, a: &[u8], b: &[u8]) -> Option<u64> {
    fn ordered64(bits: u64) -> i128 {
        if bits >> 63 == 1 {
            -((bits & !(1 << 63)) as i128)
        } else {
            bits as i128
        }
    }
    match elem {
        Elem::F32 => {
            let (x, y) = (
                f32::from_le_bytes(a.try_into().ok()?),
                f32::from_le_bytes(b.try_into().ok()?),
            );
            if x.is_nan() || y.is_nan() {
                return None;
            }
            let o = |v: f32| {
                ordered64(
                    ((v.to_bits() as u64 & 0x8000_0000) << 32) | (v.to_bits() as u64 & 0x7fff_ffff),
                )
            };
            Some((o(x) - o(y)).unsigned_abs() as u64)
        }
        Elem::F64 => {
            let (x, y) = (
                f64::from_le_bytes(a.try_into().ok()?),
                f64::from_le_bytes(b.try_into().ok()?),
            );
            if x.is_nan() || y.is_nan() {
                return None;
            }
            Some(
                (ordered64(x.to_bits()) - ordered64(y.to_bits()))
                    .unsigned_abs()
                    .min(u64::MAX as u128) as u64,
            )
        }
        _ => {
            let full = |v: &[u8], signed: bool| -> i128 {
                let mut w = [if signed && v[v.len() - 1] & 0x80 != 0 {
                    0xff
                } else {
                    0
                }; 16];
                w[..v.len()].copy_from_slice(v);
                i128::from_le_bytes(w)
            };
            let signed = matches!(elem, Elem::I8 | Elem::I16 | Elem::I32 | Elem::I64);
            Some(
                (full(a, signed) - full(b, signed))
                    .unsigned_abs()
                    .min(u64::MAX as u128) as u64,
            )
        }
    }
}

/// An output of a variant outside the tolerance of the baseline's.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OutputDiff {
    pub name: String,
    pub tolerance: Tolerance,
    #[serde(flatten)]
    pub first: Mismatch,
}

impl std::fmt::Display for OutputDiff {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "`{}`[{}] = {} (baseline {}), {} element(s) outside {}",
            self.name,
            self.first.index,
            self.first.variant,
            self.first.baseline,
            self.first.count,
            self.tolerance
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f32s(v: &[f32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    #[test]
    fn exact_names_the_first_difference() {
        let a = f32s(&[1.0, 2.0, 3.0, 4.0]);
        let b = f32s(&[1.0, 2.5, 3.0, 5.0]);
        let m = diff(Elem::F32, &Tolerance::Exact, &a, &b).unwrap();
        assert_eq!(
            (m.index, m.baseline.as_str(), m.variant.as_str(), m.count),
            (1, "2.0", "2.5", 2)
        );
        assert_eq!(m.max_abs_diff, 1.0);
        assert!(diff(Elem::F32, &Tolerance::Exact, &a, &a).is_none());
        // NaN with the same bits is equal; different NaNs are not.
        let nan = f32s(&[f32::NAN]);
        assert!(diff(Elem::F32, &Tolerance::Exact, &nan, &nan).is_none());
    }

    #[test]
    fn close_is_numpy_allclose_on_the_baseline() {
        let tol = Tolerance::Close {
            atol: 1e-6,
            rtol: 1e-3,
        };
        let a = f32s(&[1000.0, 0.0, 1.0]);
        assert!(diff(Elem::F32, &tol, &a, &f32s(&[1000.9, 0.0000009, 1.0])).is_none());
        let m = diff(Elem::F32, &tol, &a, &f32s(&[1001.2, 0.0, 1.0])).unwrap();
        assert_eq!(m.index, 0);
        assert!(diff(Elem::F32, &tol, &f32s(&[f32::NAN]), &f32s(&[1.0])).is_some());
    }

    #[test]
    fn ulps() {
        let one = 1.0f32;
        let next = f32::from_bits(one.to_bits() + 3);
        assert_eq!(
            ulp_distance(Elem::F32, &one.to_le_bytes(), &next.to_le_bytes()),
            Some(3)
        );
        assert_eq!(
            ulp_distance(Elem::F32, &0.0f32.to_le_bytes(), &(-0.0f32).to_le_bytes()),
            Some(0)
        );
        let tiny = f32::from_bits(1);
        assert_eq!(
            ulp_distance(Elem::F32, &tiny.to_le_bytes(), &(-tiny).to_le_bytes()),
            Some(2)
        );
        assert_eq!(
            ulp_distance(
                Elem::F64,
                &1.0f64.to_le_bytes(),
                &f64::from_bits(1.0f64.to_bits() + 1).to_le_bytes()
            ),
            Some(1)
        );
        assert_eq!(
            ulp_distance(Elem::I32, &(-2i32).to_le_bytes(), &3i32.to_le_bytes()),
            Some(5)
        );
        let t = Tolerance::Ulps { ulps: 3 };
        assert!(diff(Elem::F32, &t, &f32s(&[one]), &f32s(&[next])).is_none());
        assert!(diff(
            Elem::F32,
            &t,
            &f32s(&[one]),
            &f32s(&[f32::from_bits(one.to_bits() + 4)])
        )
        .is_some());
    }

    /// [`check`] finds what [`diff`] finds and the digest `blake3::hash` gives, on one thread or
    /// four, whichever pieces differ.
    #[test]
    fn the_parallel_check_is_the_sequential_diff() {
        use proptest::prelude::*;
        let tol = Tolerance::Close {
            atol: 1e-6,
            rtol: 1e-4,
        };
        let base: Vec<f32> = (0..20_000).map(|i| (i as f32).sin() * 100.0).collect();
        let a = f32s(&base);
        let da = Digest::with_pieces(&a, 4096, |_| None);
        let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig::with_cases(64));
        let edits = proptest::collection::vec((0..base.len(), -3i32..4), 0..12);
        runner
            .run(&edits, |edits| {
                let mut v = base.clone();
                for (i, ulps) in &edits {
                    v[*i] = f32::from_bits((v[*i].to_bits() as i32 + ulps * 700) as u32);
                }
                let b = f32s(&v);
                let want = diff(Elem::F32, &tol, &a, &b);
                for threads in [1, 4] {
                    let got = rayon::ThreadPoolBuilder::new()
                        .num_threads(threads)
                        .build()
                        .unwrap()
                        .install(|| check(Elem::F32, &tol, &a, &da, &b));
                    prop_assert_eq!(&got.mismatch, &want);
                    prop_assert_eq!(got.digest.hash(), blake3::hash(&b));
                }
                Ok(())
            })
            .unwrap();
        // Exact and ulps tolerances, integers.
        let ints: Vec<u8> = (0..9000i64).flat_map(|i| (i * 7).to_le_bytes()).collect();
        let mut other = ints.clone();
        other[8 * 4321] ^= 2;
        other[8 * 8000 + 1] ^= 1;
        let d = Digest::with_pieces(&ints, 1024, |_| None);
        for t in [Tolerance::Exact, Tolerance::Ulps { ulps: 1 }] {
            let got = check(Elem::I64, &t, &ints, &d, &other);
            assert_eq!(got.mismatch, diff(Elem::I64, &t, &ints, &other), "{t}");
            assert_eq!(got.mismatch.as_ref().unwrap().index, 4321);
        }
        let same = check(Elem::I64, &Tolerance::Exact, &ints, &d, &ints);
        assert_eq!((same.mismatch, same.digest), (None, d));
    }

    #[test]
    fn lengths_and_checksums() {
        let m = diff(Elem::I32, &Tolerance::Exact, &[0; 8], &[0; 4]).unwrap();
        assert_eq!((m.index, m.variant.as_str(), m.count), (1, "(missing)", 1));
        assert_eq!(
            checksum(b""),
            "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262"
        );
    }
}
