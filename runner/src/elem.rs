//! Element and scalar types of a spec (`f32`, `i32`, ...): sizes, the C++ types they match in a
//! kernel's demangled signature, encoding of scalar values and generation of buffer contents
//! (on every core, in chunks that each start the generator where the sequence is there, so the
//! bytes are the same whatever the number of threads).

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// A scalar type a buffer element or a by-value argument may have.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Elem {
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    I64,
    U64,
    F32,
    F64,
}

impl Elem {
    pub const ALL: [Elem; 10] = [
        Elem::I8,
        Elem::U8,
        Elem::I16,
        Elem::U16,
        Elem::I32,
        Elem::U32,
        Elem::I64,
        Elem::U64,
        Elem::F32,
        Elem::F64,
    ];

    pub fn size(self) -> usize {
        match self {
            Elem::I8 | Elem::U8 => 1,
            Elem::I16 | Elem::U16 => 2,
            Elem::I32 | Elem::U32 | Elem::F32 => 4,
            Elem::I64 | Elem::U64 | Elem::F64 => 8,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Elem::I8 => "i8",
            Elem::U8 => "u8",
            Elem::I16 => "i16",
            Elem::U16 => "u16",
            Elem::I32 => "i32",
            Elem::U32 => "u32",
            Elem::I64 => "i64",
            Elem::U64 => "u64",
            Elem::F32 => "f32",
            Elem::F64 => "f64",
        }
    }

    pub fn is_float(self) -> bool {
        matches!(self, Elem::F32 | Elem::F64)
    }

    /// The spellings of this type in a demangled C++ signature (typedefs such as `int32_t` or
    /// `size_t` are already resolved there).
    pub fn cxx_names(self) -> &'static [&'static str] {
        match self {
            Elem::I8 => &["signed char", "char"],
            Elem::U8 => &["unsigned char", "char", "bool"],
            Elem::I16 => &["short"],
            Elem::U16 => &["unsigned short"],
            Elem::I32 => &["int"],
            Elem::U32 => &["unsigned int"],
            Elem::I64 => &["long", "long long"],
            Elem::U64 => &["unsigned long", "unsigned long long"],
            Elem::F32 => &["float"],
            Elem::F64 => &["double"],
        }
    }

    /// The spec type for a demangled C++ scalar type, when it is one hip-unroll knows.
    pub fn from_cxx(t: &str) -> Option<Elem> {
        let t = t.trim();
        Elem::ALL
            .into_iter()
            .find(|e| {
                e.cxx_names().first() == Some(&t)
                    || (t != "char" && t != "bool" && e.cxx_names().contains(&t))
            })
            .or(match t {
                "char" => Some(Elem::I8),
                "bool" => Some(Elem::U8),
                _ => None,
            })
    }

    /// The little-endian bytes of `v` as this type, or why it does not fit.
    pub fn encode(self, v: &Number) -> Result<Vec<u8>, String> {
        fn int<T: TryFrom<i128>>(v: &Number, name: &str) -> Result<T, String> {
            match *v {
                Number::Int(i) => {
                    T::try_from(i as i128).map_err(|_| format!("{i} does not fit in {name}"))
                }
                Number::Float(f) => Err(format!("{f} is not an integer ({name})")),
            }
        }
        let n = self.name();
        Ok(match self {
            Elem::I8 => int::<i8>(v, n)?.to_le_bytes().to_vec(),
            Elem::U8 => int::<u8>(v, n)?.to_le_bytes().to_vec(),
            Elem::I16 => int::<i16>(v, n)?.to_le_bytes().to_vec(),
            Elem::U16 => int::<u16>(v, n)?.to_le_bytes().to_vec(),
            Elem::I32 => int::<i32>(v, n)?.to_le_bytes().to_vec(),
            Elem::U32 => int::<u32>(v, n)?.to_le_bytes().to_vec(),
            Elem::I64 => int::<i64>(v, n)?.to_le_bytes().to_vec(),
            Elem::U64 => int::<u64>(v, n)?.to_le_bytes().to_vec(),
            Elem::F32 => (v.as_f64() as f32).to_le_bytes().to_vec(),
            Elem::F64 => v.as_f64().to_le_bytes().to_vec(),
        })
    }

    /// Element `i` of `bytes` as f64 (exact for every integer type up to 2^53).
    pub fn read_f64(self, bytes: &[u8], i: usize) -> f64 {
        let s = self.size();
        let b = &bytes[i * s..(i + 1) * s];
        match self {
            Elem::I8 => b[0] as i8 as f64,
            Elem::U8 => b[0] as f64,
            Elem::I16 => i16::from_le_bytes([b[0], b[1]]) as f64,
            Elem::U16 => u16::from_le_bytes([b[0], b[1]]) as f64,
            Elem::I32 => i32::from_le_bytes(b.try_into().expect("4 bytes")) as f64,
            Elem::U32 => u32::from_le_bytes(b.try_into().expect("4 bytes")) as f64,
            Elem::I64 => i64::from_le_bytes(b.try_into().expect("8 bytes")) as f64,
            Elem::U64 => u64::from_le_bytes(b.try_into().expect("8 bytes")) as f64,
            Elem::F32 => f32::from_le_bytes(b.try_into().expect("4 bytes")) as f64,
            Elem::F64 => f64::from_le_bytes(b.try_into().expect("8 bytes")),
        }
    }

    /// Element `i` of `bytes` as written in a report (`1.5`, `-3`, `NaN`).
    pub fn show(self, bytes: &[u8], i: usize) -> String {
        let s = self.size();
        let b = &bytes[i * s..(i + 1) * s];
        match self {
            Elem::I64 => i64::from_le_bytes(b.try_into().expect("8 bytes")).to_string(),
            Elem::U64 => u64::from_le_bytes(b.try_into().expect("8 bytes")).to_string(),
            Elem::F32 => format!("{:?}", f32::from_le_bytes(b.try_into().expect("4 bytes"))),
            Elem::F64 => format!("{:?}", f64::from_le_bytes(b.try_into().expect("8 bytes"))),
            _ => format!("{}", self.read_f64(bytes, i)),
        }
    }
}

impl std::fmt::Display for Elem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A number from the spec: TOML integers stay exact.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Number {
    Int(i64),
    Float(f64),
}

impl Number {
    pub fn as_f64(&self) -> f64 {
        match *self {
            Number::Int(i) => i as f64,
            Number::Float(f) => f,
        }
    }
}

/// SplitMix64 (Steele, Lea and Flood): a fixed, tiny generator, so that `uniform` contents with
/// a given seed are the same bytes in every hip-unroll version and on every machine (a property
/// general-purpose RNG crates do not promise across releases).
#[derive(Debug, Clone)]
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    /// The increment of the state per output.
    const GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

    /// The generator seeded with `seed` after `n` outputs (its state is a counter: a jump is one
    /// multiplication).
    pub fn skipped(seed: u64, n: u64) -> SplitMix64 {
        SplitMix64(seed.wrapping_add(n.wrapping_mul(Self::GAMMA)))
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(Self::GAMMA);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1) with 53 random bits.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

/// How a buffer's contents are made.
#[derive(Debug, Clone, PartialEq)]
pub enum Fill {
    Zeros,
    Ones,
    /// 0, 1, 2, ... (wrapping for narrow integer types).
    Iota,
    /// Uniform in [low, high) (integers: [low, high] rounded down), from SplitMix64(seed).
    Uniform {
        low: f64,
        high: f64,
        seed: u64,
    },
}

/// `len` elements of `elem` made by `fill`, little-endian ([`generate_into`]).
pub fn generate(elem: Elem, len: usize, fill: &Fill) -> Vec<u8> {
    let mut out = vec![0u8; len * elem.size()];
    generate_into(elem, fill, &mut out);
    out
}

/// Elements per chunk of [`generate_into`]'s parallel work.
const CHUNK_ELEMENTS: usize = 1 << 16;

/// Fill `out` (a whole number of `elem`s) as `fill` makes them, on every core: element `i` is
/// made from the generator after `i` outputs whatever thread makes it, so the bytes are those of
/// one sequential pass ([`element`]'s, one loop per type).
pub fn generate_into(elem: Elem, fill: &Fill, out: &mut [u8]) {
    let s = elem.size();
    assert_eq!(out.len() % s, 0, "a whole number of elements");
    let seed = match *fill {
        Fill::Zeros => {
            out.par_chunks_mut(CHUNK_ELEMENTS * s)
                .for_each(|c| c.fill(0));
            return;
        }
        Fill::Uniform { seed, .. } => seed,
        Fill::Ones | Fill::Iota => 0,
    };
    let float = |i: usize, r: &mut SplitMix64| -> f64 {
        match *fill {
            Fill::Zeros => 0.0,
            Fill::Ones => 1.0,
            Fill::Iota => i as f64,
            Fill::Uniform { low, high, .. } => low + (high - low) * r.next_f64(),
        }
    };
    // Truncated to the type: iota wraps in narrow types; the other fills are in range.
    let int = |i: usize, r: &mut SplitMix64| -> i128 {
        match *fill {
            Fill::Zeros => 0,
            Fill::Ones => 1,
            Fill::Iota => i as i128,
            Fill::Uniform { low, high, .. } => {
                ((low + (high - low + 1.0) * r.next_f64()).floor().min(high)) as i128
            }
        }
    };
    match elem {
        Elem::F32 => values::<4>(out, seed, |i, r| (float(i, r) as f32).to_le_bytes()),
        Elem::F64 => values::<8>(out, seed, |i, r| float(i, r).to_le_bytes()),
        Elem::I8 => values::<1>(out, seed, |i, r| (int(i, r) as i8).to_le_bytes()),
        Elem::U8 => values::<1>(out, seed, |i, r| (int(i, r) as u8).to_le_bytes()),
        Elem::I16 => values::<2>(out, seed, |i, r| (int(i, r) as i16).to_le_bytes()),
        Elem::U16 => values::<2>(out, seed, |i, r| (int(i, r) as u16).to_le_bytes()),
        Elem::I32 => values::<4>(out, seed, |i, r| (int(i, r) as i32).to_le_bytes()),
        Elem::U32 => values::<4>(out, seed, |i, r| (int(i, r) as u32).to_le_bytes()),
        Elem::I64 => values::<8>(out, seed, |i, r| (int(i, r) as i64).to_le_bytes()),
        Elem::U64 => values::<8>(out, seed, |i, r| (int(i, r) as u64).to_le_bytes()),
    }
}

/// Fill `out` with `value(i, rng)` for element `i` of `S` bytes, in parallel chunks, each
/// chunk's generator started after `i` outputs of SplitMix64(`seed`).
fn values<const S: usize>(
    out: &mut [u8],
    seed: u64,
    value: impl Fn(usize, &mut SplitMix64) -> [u8; S] + Sync,
) {
    out.par_chunks_mut(CHUNK_ELEMENTS * S)
        .enumerate()
        .for_each(|(c, chunk)| {
            let start = c * CHUNK_ELEMENTS;
            let mut rng = SplitMix64::skipped(seed, start as u64);
            for (k, e) in chunk.chunks_exact_mut(S).enumerate() {
                e.copy_from_slice(&value(start + k, &mut rng));
            }
        });
}

/// Element `i` of a fill into `out` (its `elem.size()` bytes); `rng` is the generator after `i`
/// outputs (for `uniform`): the definition [`generate_into`] follows, one element at a time.
#[cfg(test)]
fn element(elem: Elem, fill: &Fill, i: usize, rng: Option<&mut SplitMix64>, out: &mut [u8]) {
    if elem.is_float() {
        let v = match fill {
            Fill::Zeros => 0.0,
            Fill::Ones => 1.0,
            Fill::Iota => i as f64,
            Fill::Uniform { low, high, .. } => low + (high - low) * rng.expect("seeded").next_f64(),
        };
        match elem {
            Elem::F32 => out.copy_from_slice(&(v as f32).to_le_bytes()),
            _ => out.copy_from_slice(&v.to_le_bytes()),
        }
    } else {
        let v: i128 = match fill {
            Fill::Zeros => 0,
            Fill::Ones => 1,
            Fill::Iota => i as i128,
            Fill::Uniform { low, high, .. } => {
                let u = rng.expect("seeded").next_f64();
                ((low + (high - low + 1.0) * u).floor().min(*high)) as i128
            }
        };
        // Truncation: iota wraps in narrow types; the other fills are in range.
        out.copy_from_slice(&(v as u128).to_le_bytes()[..elem.size()]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fills() {
        assert_eq!(
            generate(Elem::I32, 3, &Fill::Iota),
            [0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0]
        );
        assert_eq!(generate(Elem::F32, 1, &Fill::Ones), 1.0f32.to_le_bytes());
        assert_eq!(generate(Elem::U8, 300, &Fill::Iota)[257], 1);
        let u = Fill::Uniform {
            low: -1.0,
            high: 1.0,
            seed: 7,
        };
        let a = generate(Elem::F64, 1000, &u);
        assert_eq!(a, generate(Elem::F64, 1000, &u), "same seed, same bytes");
        assert_ne!(
            a,
            generate(
                Elem::F64,
                1000,
                &Fill::Uniform {
                    low: -1.0,
                    high: 1.0,
                    seed: 8
                }
            )
        );
        let vals: Vec<f64> = (0..1000).map(|i| Elem::F64.read_f64(&a, i)).collect();
        assert!(vals.iter().all(|v| (-1.0..1.0).contains(v)));
        assert!(vals.iter().any(|v| *v < -0.9) && vals.iter().any(|v| *v > 0.9));
        let dice = generate(
            Elem::I32,
            600,
            &Fill::Uniform {
                low: 1.0,
                high: 6.0,
                seed: 1,
            },
        );
        let d: Vec<f64> = (0..600).map(|i| Elem::I32.read_f64(&dice, i)).collect();
        for face in 1..=6 {
            assert!(d.contains(&(face as f64)), "{face} missing");
        }
        assert!(d.iter().all(|v| (1.0..=6.0).contains(v)));
    }

    /// The sequential generation of every earlier version: one generator, element after
    /// element.
    fn sequential(elem: Elem, len: usize, fill: &Fill) -> Vec<u8> {
        let mut out = vec![0u8; len * elem.size()];
        let mut rng = match fill {
            Fill::Uniform { seed, .. } => Some(SplitMix64(*seed)),
            _ => None,
        };
        for (i, e) in out.chunks_exact_mut(elem.size()).enumerate() {
            element(elem, fill, i, rng.as_mut(), e);
        }
        out
    }

    /// One thread or four, the bytes are those of one sequential pass (over several chunks, the
    /// last one short), for every type and fill.
    #[test]
    fn generation_does_not_depend_on_the_thread_count() {
        let len = 3 * CHUNK_ELEMENTS + 123;
        let fills = [
            Fill::Zeros,
            Fill::Ones,
            Fill::Iota,
            Fill::Uniform {
                low: -2.0,
                high: 3.0,
                seed: 11,
            },
        ];
        let on = |threads: usize, elem: Elem, fill: &Fill| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(|| generate(elem, len, fill))
        };
        for elem in Elem::ALL {
            for fill in &fills {
                let want = sequential(elem, len, fill);
                assert_eq!(on(1, elem, fill), want, "{elem} {fill:?}");
                assert_eq!(on(4, elem, fill), want, "{elem} {fill:?}");
            }
        }
        assert_eq!(SplitMix64::skipped(5, 3).next_u64(), {
            let mut r = SplitMix64(5);
            r.next_u64();
            r.next_u64();
            r.next_u64();
            r.next_u64()
        });
    }

    /// The first outputs of SplitMix64 seeded with 0 (the published reference values).
    #[test]
    fn splitmix_reference() {
        let mut r = SplitMix64(0);
        assert_eq!(r.next_u64(), 0xe220_a839_7b1d_cdaf);
        assert_eq!(r.next_u64(), 0x6e78_9e6a_a1b9_65f4);
    }

    #[test]
    fn encode_checks_range() {
        assert_eq!(
            Elem::I32.encode(&Number::Int(-2)).unwrap(),
            (-2i32).to_le_bytes()
        );
        assert!(Elem::U8
            .encode(&Number::Int(256))
            .unwrap_err()
            .contains("does not fit in u8"));
        assert!(Elem::I32
            .encode(&Number::Float(1.5))
            .unwrap_err()
            .contains("not an integer"));
        assert_eq!(
            Elem::F32.encode(&Number::Int(3)).unwrap(),
            3.0f32.to_le_bytes()
        );
        assert_eq!(Elem::from_cxx("unsigned int"), Some(Elem::U32));
        assert_eq!(Elem::from_cxx("long long"), Some(Elem::I64));
        assert_eq!(Elem::from_cxx("char"), Some(Elem::I8));
        assert_eq!(Elem::from_cxx("float4"), None);
    }
}
