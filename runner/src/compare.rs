//! Comparing an output buffer of a variant with the baseline's under the spec's tolerance, and
//! output checksums. Pure functions.

use crate::elem::Elem;
use crate::spec::Tolerance;
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

/// `None` when every element of `variant` is within `tol` of `baseline`; else the first
/// differing element. Buffers of different lengths differ at the first missing index.
pub fn diff(elem: Elem, tol: &Tolerance, baseline: &[u8], variant: &[u8]) -> Option<Mismatch> {
    let s = elem.size();
    let n = baseline.len().min(variant.len()) / s;
    let mut first: Option<usize> = None;
    let mut count = 0usize;
    let mut max_abs = 0f64;
    for i in 0..n {
        let (a, b) = (&baseline[i * s..(i + 1) * s], &variant[i * s..(i + 1) * s]);
        if a == b {
            continue;
        }
        let (x, y) = (elem.read_f64(baseline, i), elem.read_f64(variant, i));
        if x.is_finite() && y.is_finite() {
            max_abs = max_abs.max((x - y).abs());
        }
        let ok = match *tol {
            Tolerance::Exact => false,
            Tolerance::Close { atol, rtol } => {
                x.is_finite() && y.is_finite() && (x - y).abs() <= atol + rtol * x.abs()
            }
            Tolerance::Ulps { ulps } => ulp_distance(elem, a, b).is_some_and(|d| d <= ulps),
        };
        if !ok {
            count += 1;
            first.get_or_insert(i);
        }
    }
    if baseline.len() != variant.len() {
        count += baseline.len().max(variant.len()) / s - n;
        first.get_or_insert(n);
    }
    first.map(|index| Mismatch {
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
        max_abs_diff: max_abs,
    })
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
