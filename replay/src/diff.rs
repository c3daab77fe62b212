//! Comparing the memory a baseline and a variant left behind: region by region, byte-exact
//! unless the user typed a region as floating-point data (`BASE:f32`), in which case elements
//! are compared with `|a - b| <= atol + rtol * |a|` (numpy's `isclose`, `a` the baseline; NaN
//! equals NaN). Each differing region is named with the first offset that differs. Pure.

use serde::Serialize;
use std::str::FromStr;

/// An element type the user can give a region.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FloatType {
    F16,
    Bf16,
    F32,
    F64,
}

impl FloatType {
    pub fn size(self) -> usize {
        match self {
            FloatType::F16 | FloatType::Bf16 => 2,
            FloatType::F32 => 4,
            FloatType::F64 => 8,
        }
    }

    /// The element at the start of `b` (`b.len() == self.size()`), widened to f64.
    pub fn value(self, b: &[u8]) -> f64 {
        match self {
            FloatType::F16 => f16_to_f64(u16::from_le_bytes([b[0], b[1]])),
            FloatType::Bf16 => {
                f32::from_bits((u16::from_le_bytes([b[0], b[1]]) as u32) << 16) as f64
            }
            FloatType::F32 => f32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f64,
            FloatType::F64 => f64::from_le_bytes(b.try_into().expect("8 bytes")),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            FloatType::F16 => "f16",
            FloatType::Bf16 => "bf16",
            FloatType::F32 => "f32",
            FloatType::F64 => "f64",
        }
    }
}

impl FromStr for FloatType {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "f16" | "half" => Ok(FloatType::F16),
            "bf16" => Ok(FloatType::Bf16),
            "f32" | "float" => Ok(FloatType::F32),
            "f64" | "double" => Ok(FloatType::F64),
            _ => Err(format!("unknown element type `{s}` (f16, bf16, f32, f64)")),
        }
    }
}

/// IEEE 754 binary16 to f64 (exact).
fn f16_to_f64(h: u16) -> f64 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = ((h >> 10) & 0x1f) as i32;
    let frac = (h & 0x3ff) as f64;
    sign * match exp {
        0 => frac * 2f64.powi(-24),
        0x1f if frac == 0.0 => f64::INFINITY,
        0x1f => f64::NAN,
        e => (1.0 + frac / 1024.0) * 2f64.powi(e - 15),
    }
}

/// `--float-region BASE:TYPE`: a region (by its captured base address) holding floats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FloatRegion {
    pub base: u64,
    pub ty: FloatType,
}

impl FromStr for FloatRegion {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let (base, ty) = s
            .rsplit_once(':')
            .ok_or_else(|| format!("`{s}`: expected BASE:TYPE, e.g. 0x7f3a00000000:f32"))?;
        let base = parse_address(base).ok_or_else(|| {
            format!("`{base}`: not an address (hex with 0x, or decimal as in memory_regions.json)")
        })?;
        Ok(FloatRegion {
            base,
            ty: ty.parse()?,
        })
    }
}

/// `0x7f3a00000000` or `139887595667456`.
pub fn parse_address(s: &str) -> Option<u64> {
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

/// Tolerances for typed regions.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Tolerance {
    pub rtol: f64,
    pub atol: f64,
}

impl Tolerance {
    pub fn close(&self, a: f64, b: f64) -> bool {
        if a.is_nan() || b.is_nan() {
            return a.is_nan() && b.is_nan();
        }
        if a == b {
            return true;
        }
        (a - b).abs() <= self.atol + self.rtol * a.abs()
    }
}

/// How one region differs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RegionDiff {
    pub base: u64,
    pub size: u64,
    /// Byte offset (from the region's base) of the first difference.
    pub first_offset: u64,
    /// Differing bytes, or differing elements for a typed region.
    pub count: u64,
    /// `byte`, or the element type.
    pub unit: &'static str,
    /// The values at the first difference (hex bytes, or the numbers).
    pub a: String,
    pub b: String,
    /// Largest |a - b| over the typed region's elements (finite ones).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_abs_diff: Option<f64>,
}

impl std::fmt::Display for RegionDiff {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "region {:#x} ({} bytes): {} {}{} differ, first at offset {:#x} ({:#x}): {} vs {}",
            self.base,
            self.size,
            self.count,
            self.unit,
            if self.count == 1 { "" } else { "s" },
            self.first_offset,
            self.base.wrapping_add(self.first_offset),
            self.a,
            self.b
        )?;
        if let Some(m) = self.max_abs_diff {
            write!(f, ", max |diff| {m:e}")?;
        }
        Ok(())
    }
}

/// Compare one region's bytes after two runs; `None` when they agree.
pub fn diff_region(
    base: u64,
    a: &[u8],
    b: &[u8],
    ty: Option<FloatType>,
    tol: Tolerance,
) -> Option<RegionDiff> {
    let size = a.len().max(b.len()) as u64;
    if a == b {
        return None;
    }
    if a.len() != b.len() {
        let n = a.len().min(b.len());
        return Some(RegionDiff {
            base,
            size,
            first_offset: n as u64,
            count: (a.len() as i64 - b.len() as i64).unsigned_abs(),
            unit: "byte",
            a: format!("{} bytes", a.len()),
            b: format!("{} bytes", b.len()),
            max_abs_diff: None,
        });
    }
    match ty {
        None => diff_bytes(base, a, b),
        Some(t) => diff_floats(base, a, b, t, tol),
    }
}

fn diff_bytes(base: u64, a: &[u8], b: &[u8]) -> Option<RegionDiff> {
    let mut first = None;
    let mut count = 0u64;
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        if x != y {
            count += 1;
            first.get_or_insert(i);
        }
    }
    let i = first?;
    let end = (i + 8).min(a.len());
    Some(RegionDiff {
        base,
        size: a.len() as u64,
        first_offset: i as u64,
        count,
        unit: "byte",
        a: hex(&a[i..end]),
        b: hex(&b[i..end]),
        max_abs_diff: None,
    })
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn diff_floats(base: u64, a: &[u8], b: &[u8], t: FloatType, tol: Tolerance) -> Option<RegionDiff> {
    let n = t.size();
    let mut first: Option<(usize, f64, f64)> = None;
    let mut count = 0u64;
    let mut max = 0f64;
    let whole = a.len() / n * n;
    for i in (0..whole).step_by(n) {
        let (x, y) = (t.value(&a[i..i + n]), t.value(&b[i..i + n]));
        if !tol.close(x, y) {
            count += 1;
            first.get_or_insert((i, x, y));
            let d = (x - y).abs();
            if d.is_finite() {
                max = max.max(d);
            }
        }
    }
    // A tail shorter than one element is compared byte for byte.
    if let Some(tail) = diff_bytes(base, &a[whole..], &b[whole..]) {
        count += tail.count;
        if first.is_none() {
            return Some(RegionDiff {
                first_offset: whole as u64 + tail.first_offset,
                size: a.len() as u64,
                ..tail
            });
        }
    }
    let (i, x, y) = first?;
    Some(RegionDiff {
        base,
        size: a.len() as u64,
        first_offset: i as u64,
        count,
        unit: t.name(),
        a: format!("{x:e}"),
        b: format!("{y:e}"),
        max_abs_diff: Some(max),
    })
}

/// The outcome of comparing a baseline's outputs with a variant's.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct Comparison {
    pub regions: usize,
    /// Regions that some run changed (the kernel's outputs).
    pub written: usize,
    /// Baseline vs variant.
    pub differences: Vec<RegionDiff>,
    /// Baseline vs baseline: regions whose result changes from run to run (atomics, races).
    pub unstable: Vec<RegionDiff>,
    pub tolerance: Tolerance,
}

impl Comparison {
    pub fn identical(&self) -> bool {
        self.differences.is_empty() && self.unstable.is_empty()
    }
}

/// The bytes of one region before and after the runs `--compare` makes.
pub struct RegionRuns<'a> {
    pub base: u64,
    pub initial: &'a [u8],
    pub baseline: &'a [u8],
    /// A second baseline run, to tell a nondeterministic kernel from a wrong variant.
    pub baseline_again: Option<&'a [u8]>,
    pub variant: &'a [u8],
}

/// Compare every region; typed regions use `tol`.
pub fn compare(runs: &[RegionRuns<'_>], types: &[FloatRegion], tol: Tolerance) -> Comparison {
    let mut c = Comparison {
        regions: runs.len(),
        tolerance: tol,
        ..Default::default()
    };
    for r in runs {
        let ty = types.iter().find(|t| t.base == r.base).map(|t| t.ty);
        let written = r.baseline != r.initial
            || r.variant != r.initial
            || r.baseline_again.is_some_and(|b| b != r.initial);
        if !written {
            continue;
        }
        c.written += 1;
        if let Some(again) = r.baseline_again {
            if let Some(d) = diff_region(r.base, r.baseline, again, ty, tol) {
                c.unstable.push(d);
            }
        }
        if let Some(d) = diff_region(r.base, r.baseline, r.variant, ty, tol) {
            c.differences.push(d);
        }
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f32s(v: &[f32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    #[test]
    fn exact_bytes_name_the_first_offset() {
        let a = vec![0u8; 64];
        let mut b = a.clone();
        b[17] = 1;
        b[40] = 2;
        let d = diff_region(0x1000, &a, &b, None, Tolerance::default()).unwrap();
        assert_eq!((d.first_offset, d.count, d.unit), (17, 2, "byte"));
        assert_eq!(d.a, "0000000000000000");
        assert_eq!(d.b, "0100000000000000");
        assert!(
            d.to_string().contains("first at offset 0x11 (0x1011)"),
            "{d}"
        );
        assert!(diff_region(0, &a, &a, None, Tolerance::default()).is_none());
    }

    #[test]
    fn floats_within_tolerance_agree() {
        let a = f32s(&[1.0, 2.0, 3.0, f32::NAN]);
        let b = f32s(&[1.0, 2.000_001, 3.0, f32::NAN]);
        let exact = diff_region(0, &a, &b, None, Tolerance::default()).unwrap();
        assert_eq!(exact.first_offset, 4);
        let tol = Tolerance {
            rtol: 1e-5,
            atol: 0.0,
        };
        assert!(diff_region(0, &a, &b, Some(FloatType::F32), tol).is_none());
        let c = f32s(&[1.0, 2.5, 3.0, 0.0]);
        let d = diff_region(0, &a, &c, Some(FloatType::F32), tol).unwrap();
        assert_eq!((d.first_offset, d.count, d.unit), (4, 2, "f32"));
        assert_eq!(d.max_abs_diff, Some(0.5));
        assert_eq!((d.a.as_str(), d.b.as_str()), ("2e0", "2.5e0"));
    }

    #[test]
    fn half_precision_values() {
        assert_eq!(f16_to_f64(0x3c00), 1.0);
        assert_eq!(f16_to_f64(0xc000), -2.0);
        assert_eq!(f16_to_f64(0x7bff), 65504.0);
        assert_eq!(f16_to_f64(0x0001), 2f64.powi(-24));
        assert!(f16_to_f64(0x7e00).is_nan());
        assert_eq!(f16_to_f64(0xfc00), f64::NEG_INFINITY);
        assert_eq!(FloatType::Bf16.value(&[0x80, 0x3f]), 1.0);
    }

    #[test]
    fn float_region_argument() {
        assert_eq!(
            "0x7f3a00000000:f32".parse::<FloatRegion>(),
            Ok(FloatRegion {
                base: 0x7f3a_0000_0000,
                ty: FloatType::F32
            })
        );
        assert_eq!(
            "4096:f64".parse::<FloatRegion>().unwrap().ty,
            FloatType::F64
        );
        assert!("0x10:f128".parse::<FloatRegion>().is_err());
        assert!("zz:f32".parse::<FloatRegion>().is_err());
        assert!("0x10".parse::<FloatRegion>().is_err());
    }

    #[test]
    fn compare_skips_untouched_regions_and_flags_unstable_ones() {
        let init = vec![0u8; 16];
        let out = vec![1u8; 16];
        let mut wrong = out.clone();
        wrong[3] = 9;
        let runs = [
            // Read-only input: untouched by everyone.
            RegionRuns {
                base: 0x1000,
                initial: &init,
                baseline: &init,
                baseline_again: Some(&init),
                variant: &init,
            },
            // Output, the variant gets it wrong.
            RegionRuns {
                base: 0x2000,
                initial: &init,
                baseline: &out,
                baseline_again: Some(&out),
                variant: &wrong,
            },
            // Output that differs between two baseline runs.
            RegionRuns {
                base: 0x3000,
                initial: &init,
                baseline: &out,
                baseline_again: Some(&wrong),
                variant: &out,
            },
        ];
        let c = compare(&runs, &[], Tolerance::default());
        assert_eq!((c.regions, c.written), (3, 2));
        assert_eq!(c.differences.len(), 1);
        assert_eq!(
            (c.differences[0].base, c.differences[0].first_offset),
            (0x2000, 3)
        );
        assert_eq!(c.unstable.len(), 1);
        assert_eq!(c.unstable[0].base, 0x3000);
        assert!(!c.identical());
    }
}
