//! Comparing an output buffer of a variant with the baseline's under the spec's tolerance, and
//! output checksums. Pure functions; [`check`] runs on every core, piece by piece
//! ([`crate::digest`]), with a result that does not depend on the number of threads.

use crate::digest::Digest;
use crate::elem::Elem;
use crate::spec::Tolerance;
use blake3::hazmat::HasherExt;
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

/// Bytes of a piece hashed and scanned together by [`check`] (a multiple of BLAKE3's chunk and
/// of every element size; small enough to stay in a core's cache between the two).
const STRETCH: usize = 256 * 1024;

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
            // Hashed and scanned in one pass, a stretch that stays in the cache at a time.
            let mut hasher = blake3::Hasher::new();
            if !whole {
                hasher.set_input_offset(r.start as u64);
            }
            let mut found = Scan::default();
            for (k, (a, b)) in a.chunks(STRETCH).zip(b.chunks(STRETCH)).enumerate() {
                hasher.update(b);
                found = found.then(k * STRETCH / elem.size(), scan(elem, tol, a, b));
            }
            let value = if whole {
                *hasher.finalize().as_bytes()
            } else {
                hasher.finalize_non_root()
            };
            (value, found)
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

/// The elements of two equally long buffers outside the tolerance: blocks of elements with no
/// branch per element where the tolerance is a formula ([`scan_blocks`]), one element at a time
/// for ulps ([`scan_as`]).
fn scan(elem: Elem, tol: &Tolerance, baseline: &[u8], variant: &[u8]) -> Scan {
    macro_rules! blocks {
        ($s:literal, $t:ty) => {
            scan_blocks::<$s>(tol, baseline, variant, |b| <$t>::from_le_bytes(b) as f64)
        };
    }
    match (elem, tol) {
        (_, Tolerance::Ulps { .. }) => match elem.size() {
            1 => scan_as::<1>(elem, tol, baseline, variant),
            2 => scan_as::<2>(elem, tol, baseline, variant),
            4 => scan_as::<4>(elem, tol, baseline, variant),
            _ => scan_as::<8>(elem, tol, baseline, variant),
        },
        (Elem::I8, _) => blocks!(1, i8),
        (Elem::U8, _) => blocks!(1, u8),
        (Elem::I16, _) => blocks!(2, i16),
        (Elem::U16, _) => blocks!(2, u16),
        (Elem::I32, _) => blocks!(4, i32),
        (Elem::U32, _) => blocks!(4, u32),
        (Elem::I64, _) => blocks!(8, i64),
        (Elem::U64, _) => blocks!(8, u64),
        (Elem::F32, _) => blocks!(4, f32),
        (Elem::F64, _) => blocks!(8, f64),
    }
}

/// Elements per block of [`scan_blocks`].
const BLOCK: usize = 16;

/// Whether one element is within an exact or a close tolerance (`close`: `atol`, `rtol`), and
/// its difference when both values are finite (else 0). Branch-free, so that a block of them
/// is vector code.
#[inline(always)]
fn within<const S: usize>(
    a: [u8; S],
    b: [u8; S],
    read: impl Fn([u8; S]) -> f64,
    close: bool,
    atol: f64,
    rtol: f64,
) -> (bool, f64) {
    let (x, y) = (read(a), read(b));
    let d = (x - y).abs();
    let finite = (x.abs() < f64::INFINITY) & (y.abs() < f64::INFINITY);
    let ok = (a == b) | (close & finite & (d <= atol + rtol * x.abs()));
    (ok, if finite { d } else { 0.0 })
}

/// [`scan`] for the exact and close tolerances, [`BLOCK`] elements at a time: a block whose
/// bytes are equal is skipped; the others are checked element by element without branches (the
/// largest difference kept per lane, so the lanes are independent), and the first failing
/// element is looked for only in the first failing block.
fn scan_blocks<const S: usize>(
    tol: &Tolerance,
    baseline: &[u8],
    variant: &[u8],
    read: impl Fn([u8; S]) -> f64 + Copy,
) -> Scan {
    let (close, atol, rtol) = match *tol {
        Tolerance::Close { atol, rtol } => (true, atol, rtol),
        _ => (false, 0.0, 0.0),
    };
    let element = |bytes: &[u8], j: usize| -> [u8; S] {
        bytes[j * S..(j + 1) * S].try_into().expect("S bytes")
    };
    let whole = baseline.len().min(variant.len()) / S / BLOCK * BLOCK;
    let mut out = Scan::default();
    let mut lanes = [0f64; BLOCK];
    let blocks = baseline[..whole * S]
        .chunks_exact(BLOCK * S)
        .zip(variant[..whole * S].chunks_exact(BLOCK * S));
    for (k, (a, b)) in blocks.enumerate() {
        if a == b {
            continue;
        }
        let mut bad = 0u32;
        for (j, lane) in lanes.iter_mut().enumerate() {
            let (ok, d) = within(element(a, j), element(b, j), read, close, atol, rtol);
            bad += u32::from(!ok);
            *lane = if d > *lane { d } else { *lane };
        }
        if bad > 0 {
            out.count += bad as usize;
            if out.first.is_none() {
                out.first = (0..BLOCK)
                    .find(|&j| !within(element(a, j), element(b, j), read, close, atol, rtol).0)
                    .map(|j| k * BLOCK + j);
            }
        }
    }
    out.max_abs = lanes.iter().fold(0f64, |m, &d| if d > m { d } else { m });
    let tail = scan_tail::<S>(tol, &baseline[whole * S..], &variant[whole * S..], read);
    out.then(whole, tail)
}

/// The elements after the last whole block, one at a time (exact and close tolerances).
fn scan_tail<const S: usize>(
    tol: &Tolerance,
    baseline: &[u8],
    variant: &[u8],
    read: impl Fn([u8; S]) -> f64 + Copy,
) -> Scan {
    let (close, atol, rtol) = match *tol {
        Tolerance::Close { atol, rtol } => (true, atol, rtol),
        _ => (false, 0.0, 0.0),
    };
    let mut out = Scan::default();
    let pairs = baseline.chunks_exact(S).zip(variant.chunks_exact(S));
    for (i, (a, b)) in pairs.enumerate() {
        let (ok, d) = within(
            a.try_into().expect("S bytes"),
            b.try_into().expect("S bytes"),
            read,
            close,
            atol,
            rtol,
        );
        out.max_abs = out.max_abs.max(d);
        if !ok {
            out.count += 1;
            out.first.get_or_insert(i);
        }
    }
    out
}

/// [`scan`] one element at a time (the ulps tolerance, and the reference of the tests).
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

    /// The block scan finds what the element-by-element scan finds, for every type and the
    /// exact and close tolerances, whatever the lengths (whole blocks and a tail), NaNs and
    /// infinities included.
    #[test]
    fn the_block_scan_is_the_element_scan() {
        use proptest::prelude::*;
        let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig::with_cases(200));
        let case = (
            0..Elem::ALL.len(),
            proptest::collection::vec(any::<u8>(), 0..600),
            proptest::collection::vec((0..600usize, any::<u8>()), 0..8),
            prop_oneof![Just(0.0), Just(1e-3), Just(1.0)],
        );
        runner
            .run(&case, |(e, a, edits, rtol)| {
                let elem = Elem::ALL[e];
                let n = a.len() / elem.size() * elem.size();
                let a = &a[..n];
                let mut b = a.to_vec();
                for (i, v) in edits {
                    if i < n {
                        b[i] = v;
                    }
                }
                for tol in [
                    Tolerance::Exact,
                    Tolerance::Close {
                        atol: rtol / 10.0,
                        rtol,
                    },
                ] {
                    let want = match elem.size() {
                        1 => scan_as::<1>(elem, &tol, a, &b),
                        2 => scan_as::<2>(elem, &tol, a, &b),
                        4 => scan_as::<4>(elem, &tol, a, &b),
                        _ => scan_as::<8>(elem, &tol, a, &b),
                    };
                    let got = scan(elem, &tol, a, &b);
                    prop_assert_eq!(got.first, want.first, "{} {}", elem, tol);
                    prop_assert_eq!(got.count, want.count, "{} {}", elem, tol);
                    prop_assert_eq!(
                        got.max_abs.to_bits(),
                        want.max_abs.to_bits(),
                        "{} {}",
                        elem,
                        tol
                    );
                }
                Ok(())
            })
            .unwrap();
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
        // Pieces of several stretches: hashed and scanned stretch by stretch.
        let big: Vec<u8> = (0..(3 << 20) / 4 + 5)
            .flat_map(|i| (i as f32 * 0.25).to_le_bytes())
            .collect();
        let mut other = big.clone();
        for at in [4 * 70_000, 4 * 300_000 + 1, big.len() - 2] {
            other[at] ^= 0x40;
        }
        let d = Digest::with_pieces(&big, 1 << 20, |_| None);
        let tol = Tolerance::Close {
            atol: 0.0,
            rtol: 1e-6,
        };
        let got = check(Elem::F32, &tol, &big, &d, &other);
        assert_eq!(got.mismatch, diff(Elem::F32, &tol, &big, &other));
        // In the second stretch of the first piece, in the second piece, at the very end.
        let m = got.mismatch.as_ref().unwrap();
        assert_eq!((m.index, m.count), (70_000, 3));
        assert_eq!(got.digest.hash(), blake3::hash(&other));
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
