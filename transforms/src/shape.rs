//! The input model of manual unrolling: a canonical `for` loop reduced to byte ranges and facts.
//!
//! [`LoopShape`] is what [`crate::manual`] rewrites; [`crate::adapter`] builds it from the
//! frontend IR after proving every fact it records (invariance, no jumps out, known type...).

use std::ops::Range;

/// An integer type of known signedness and width (LP64, as on Linux hosts and AMDGPU).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IntType {
    pub signed: bool,
    pub bits: u32,
}

impl IntType {
    /// Recognise a type as written (`unsigned int`, `size_t`, `std::int64_t`, ...).
    pub fn from_text(text: &str) -> Option<IntType> {
        let words: Vec<&str> = text
            .split_whitespace()
            .filter(|w| !matches!(*w, "const" | "register"))
            .collect();
        let t = words.join(" ");
        let t = t.strip_prefix("std::").unwrap_or(&t);
        let (signed, bits) = match t {
            "int" | "signed" | "signed int" | "int32_t" => (true, 32),
            "unsigned" | "unsigned int" | "uint32_t" | "uint" => (false, 32),
            "long"
            | "long int"
            | "signed long"
            | "signed long int"
            | "long long"
            | "long long int"
            | "signed long long"
            | "signed long long int"
            | "int64_t"
            | "ptrdiff_t"
            | "intptr_t"
            | "ssize_t" => (true, 64),
            "unsigned long"
            | "unsigned long int"
            | "unsigned long long"
            | "unsigned long long int"
            | "uint64_t"
            | "size_t"
            | "uintptr_t" => (false, 64),
            "short" | "short int" | "signed short" | "signed short int" | "int16_t" => (true, 16),
            "unsigned short" | "unsigned short int" | "uint16_t" => (false, 16),
            "signed char" | "int8_t" => (true, 8),
            "unsigned char" | "uint8_t" => (false, 8),
            _ => return None,
        };
        Some(IntType { signed, bits })
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

/// Which way the induction variable moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Up,
    Down,
}

/// The step of a canonical loop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StepShape {
    /// A constant step of this magnitude (never 0) in `direction`.
    Const(u64),
    /// A loop-invariant, side-effect-free expression (byte range of its text) added (Up) or
    /// subtracted (Down) on each iteration.
    Expr(Range<usize>),
}

/// A canonical `for` loop, proven safe to replicate, as byte ranges into the source.
#[derive(Debug, Clone)]
pub struct LoopShape {
    /// Induction variable name.
    pub var: String,
    pub ty: IntType,
    /// The type as written (used in casts); `decltype(i)` when `generic`.
    pub ty_text: String,
    /// The type is a template parameter or a typedef we cannot see (`J`, `index_t`, `auto`):
    /// `ty` is then a placeholder, and limits and casts are written as C++ expressions on
    /// `decltype(i)`, behind a `static_assert` that it is an integer type of at most 64 bits.
    pub generic: bool,
    pub direction: Direction,
    pub step: StepShape,
    /// From the `for` keyword to the end of the loop statement: the bytes that are replaced.
    pub span: Range<usize>,
    /// Init clause without its `;` (`int i = 0`, `i = start`), if not empty.
    pub init: Option<Range<usize>>,
    /// Loop condition, without parentheses.
    pub cond: Range<usize>,
    /// Occurrences of the induction variable in the condition.
    pub cond_var: Vec<Range<usize>>,
    /// Update clause (`++i`, `i += stride`).
    pub update: Range<usize>,
    /// Offset just past the header's closing `)`.
    pub header_end: usize,
    pub body: Range<usize>,
    pub body_is_block: bool,
    /// Occurrences of the induction variable in the body (all reads; writes are refused).
    pub body_var: Vec<Range<usize>>,
    /// Offsets of the `continue` keywords in the body that continue this loop.
    pub continues: Vec<usize>,
    /// Byte ranges inside which line starts must not be re-indented (multi-line literals).
    pub keep_ranges: Vec<Range<usize>>,
    /// When the signedness of the comparison may differ from the induction variable's (a signed
    /// variable compared with an unsigned bound): the fast path then also checks the sign.
    pub cmp_may_be_unsigned: bool,
    /// Exact trip count when init, bound and step are constants and no wrap can happen.
    pub const_trip: Option<u128>,
    /// Leading whitespace of the loop's line, one indentation step, and the line ending.
    pub indent: Vec<u8>,
    pub indent_unit: Vec<u8>,
    pub newline: &'static str,
    /// Prefix for generated labels and temporaries, unique in the function.
    pub fresh: String,
}
