//! The input model of manual unrolling: a canonical `for` loop reduced to byte ranges and facts.
//!
//! [`LoopShape`] is what [`crate::manual`] rewrites; [`crate::adapter`] builds it from the
//! frontend IR after proving every fact it records (invariance, no jumps out, known type...).

use std::ops::Range;

/// The integer type table lives in `frontend::ints` (one table for the workspace).
pub use frontend::ints::IntType;

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
