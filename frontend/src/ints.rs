//! The one table of C/C++ integer type names (builtin and `<cstdint>`), shared by the
//! trip-count evaluator ([`crate::trip`]) and the manual unroller (`transforms`).
//!
//! Target model: LP64 (Linux hosts, AMDGPU and NVPTX), so `long` is 64 bits. Two decisions:
//! - plain `char` has implementation-defined signedness, so its sign is unknown here:
//!   [`IntType::from_text`] does not recognise it (no rewrite may rely on its limits), and its
//!   value range is the one both signednesses hold, `0..=127` ([`value_range`]);
//! - `volatile` does not change a type's range, but a volatile value may change behind the
//!   analysis' back: [`IntType::from_text`] refuses it, [`value_range`] ignores it (the caller
//!   that counts iterations refuses a volatile counter itself, [`crate::trip::trip_count_with`]).

/// An integer type of known signedness and width (LP64, as on Linux hosts and AMDGPU).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IntType {
    pub signed: bool,
    pub bits: u32,
}

/// What a type name says, qualifiers aside.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IntName {
    /// A type of known sign and width.
    Int(IntType),
    /// Plain `char`: 8 bits, signedness implementation-defined.
    Char,
}

/// A parsed integer type name: the type and whether it was `volatile`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Parsed {
    pub name: IntName,
    pub volatile: bool,
}

/// Reads an integer type as written (`unsigned int`, `long long int`, `std::size_t`,
/// `const volatile short`); `None` for anything else (`auto`, `float`, typedefs such as
/// `index_t`, template parameters), whose range is not known here. The one table.
pub fn parse(text: &str) -> Option<Parsed> {
    let mut volatile = false;
    let (mut signed, mut unsigned, mut longs, mut short, mut char, mut int) =
        (false, false, 0u8, false, false, false);
    let mut named: Option<&str> = None;
    let mut words = 0;
    for w in text.split_whitespace() {
        match w {
            "const" | "register" => continue,
            "volatile" => {
                volatile = true;
                continue;
            }
            _ => {}
        }
        words += 1;
        match w {
            "signed" if !signed && !unsigned => signed = true,
            "unsigned" if !signed && !unsigned => unsigned = true,
            "long" if longs < 2 => longs += 1,
            "short" if !short => short = true,
            "char" if !char => char = true,
            "int" if !int => int = true,
            _ if named.is_none() => named = Some(w.strip_prefix("std::").unwrap_or(w)),
            _ => return None,
        }
    }
    if words == 0 {
        return None;
    }
    let int_ty = |signed: bool, bits: u32| Some(IntName::Int(IntType { signed, bits }));
    let name = if let Some(n) = named {
        // A `<cstdint>` or HIP name stands alone.
        if words != 1 {
            return None;
        }
        match n {
            "int8_t" => int_ty(true, 8),
            "uint8_t" => int_ty(false, 8),
            "int16_t" => int_ty(true, 16),
            "uint16_t" => int_ty(false, 16),
            "int32_t" => int_ty(true, 32),
            "uint32_t" | "uint" => int_ty(false, 32),
            "int64_t" | "ptrdiff_t" | "ssize_t" | "intptr_t" => int_ty(true, 64),
            "uint64_t" | "size_t" | "uintptr_t" => int_ty(false, 64),
            _ => None,
        }?
    } else if char {
        if short || longs > 0 || int {
            return None;
        }
        match (signed, unsigned) {
            (true, _) => int_ty(true, 8)?,
            (_, true) => int_ty(false, 8)?,
            _ => IntName::Char,
        }
    } else {
        let bits = match (short, longs) {
            (true, 0) => 16,
            (false, 0) => 32,
            (false, _) => 64,
            (true, _) => return None,
        };
        int_ty(!unsigned, bits)?
    };
    Some(Parsed { name, volatile })
}

/// The values a variable of this type surely holds: the type's range, or for plain `char` the
/// range common to `signed char` and `unsigned char` (`0..=127`). `volatile` is ignored here.
pub fn value_range(text: &str) -> Option<(i128, i128)> {
    Some(match parse(text)?.name {
        IntName::Int(t) => (t.min(), t.max()),
        IntName::Char => (0, 127),
    })
}

impl IntType {
    /// A type whose limits a rewrite may rely on: known sign and width, not `volatile`.
    pub fn from_text(text: &str) -> Option<IntType> {
        match parse(text)? {
            Parsed {
                name: IntName::Int(t),
                volatile: false,
            } => Some(t),
            _ => None,
        }
    }

    pub fn max(self) -> i128 {
        if self.signed {
            (1i128 << (self.bits - 1)) - 1
        } else {
            (1i128 << self.bits) - 1
        }
    }

    pub fn min(self) -> i128 {
        if self.signed {
            -(1i128 << (self.bits - 1))
        } else {
            0
        }
    }

    /// Narrower than `int`: arithmetic on it is promoted, so substituted values need a cast.
    pub fn is_narrow(self) -> bool {
        self.bits < 32
    }

    /// A C++ literal of this type's promoted type holding `v` (which must be in range and not
    /// the type's minimum when negative).
    pub fn literal(self, v: i128) -> String {
        let suffix = match (self.signed, self.bits) {
            (false, 32) => "u",
            (false, 64) => "ull",
            (true, 64) => "ll",
            _ => "",
        };
        if v < 0 {
            format!("(-{}{suffix})", -v)
        } else {
            format!("{v}{suffix}")
        }
    }

    /// The type's limit as an `unsigned long long` literal (two's complement for negatives).
    pub fn ull_literal(v: i128) -> String {
        format!("{}ull", (v as i64) as u64)
    }
}
