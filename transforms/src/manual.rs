//! Manual unrolling: replicate the body of a canonical `for` loop N times, then a remainder loop.
//!
//! The rewrite of `for (T i = a; i < n; i += s) BODY` by 4 (constant step) is
//!
//! ```text
//! {
//!     T i = a;
//!     for (; i <= TMAX - 3*s && (i + 3*s) < n; i += 4*s) {
//!         BODY[i]  BODY[i + s]  BODY[i + 2*s]  BODY[i + 3*s]    (each copy in its own block)
//!     }
//!     for (; i < n; i += s) BODY                                  (the original loop)
//! }
//! ```
//!
//! Soundness argument. The remainder loop is the original loop, so running it from any state
//! the original reaches is always correct. The main loop's guard only needs to imply that the
//! original would run the next N iterations with exactly the values `i + k*s` (k < N): the first
//! test proves that `i + (N-1)*s` does not overflow or wrap in T (so every `i + k*s` is exact),
//! and the condition then holds at the last value, hence at every earlier one, because `i + k*s`
//! grows monotonically and the comparison converts T to the comparison type monotonically
//! (when a signed T may be compared as unsigned, the guard also requires that no value crosses
//! zero). The guard evaluates the condition only on values the original itself computes, and
//! the condition is side-effect free and loop-invariant apart from `i` (proven by the adapter).
//! After the main loop, `i` holds the value the original would hold after the same number of
//! iterations, so the remainder loop finishes the job and leaves `i` at the original's final
//! value (for a variable declared outside the loop).
//!
//! For a non-constant step the copies are not substituted: each copy is followed by the
//! original update statement (`i += stride;`). The step is evaluated once into an
//! `unsigned long long`, and the guard checks `i +- (N-1)*step` exactly in `long long` (for
//! variables of up to 32 bits, after requiring step < 2^32) or as an unsigned room-left
//! comparison (64-bit variables), so that a step of any sign or size is either proven safe or
//! sends execution to the remainder loop.
//!
//! A `continue` of the loop in copy k (k < N-1) becomes `goto <label_k>` to a label just after
//! that copy; `continue` in the last copy keeps its meaning (it reaches the main loop's update).

use crate::shape::{Direction, IntType, LoopShape, StepShape};
use std::ops::Range;

/// The replacement text for `shape.span`, unrolled by `factor` (>= 2).
pub fn expand(src: &[u8], s: &LoopShape, factor: u32) -> Vec<u8> {
    let g = Gen {
        src,
        s,
        n: factor as u128,
    };
    match (&s.step, s.const_trip) {
        (StepShape::Const(_), Some(t)) if t % g.n == 0 => g.divisible(),
        (StepShape::Const(a), _) => g.general(Some(*a as u128)),
        (StepShape::Expr(_), _) => g.general(None),
    }
}

/// Does the guard's limit stay representable for `factor` (`TMAX - (N-1)*step` >= TMIN)? For a
/// type-generic variable (`generic`), `(N-1)*step` must not exceed 2^63-1, the largest limit
/// the generic guard may use, else the guard's arithmetic wraps for a 64-bit unsigned type.
pub fn fits(ty: IntType, generic: bool, step: u64, factor: u32) -> bool {
    let reach = (factor as i128 - 1) * step as i128;
    if generic {
        reach <= i64::MAX as i128
    } else {
        reach <= ty.max() - ty.min()
    }
}

struct Gen<'a> {
    src: &'a [u8],
    s: &'a LoopShape,
    n: u128,
}

impl Gen<'_> {
    fn text(&self, r: &Range<usize>) -> String {
        String::from_utf8_lossy(&self.src[r.clone()]).into_owned()
    }

    fn nl(&self) -> &str {
        self.s.newline
    }

    /// Indentation at `depth` steps inside the loop's own line.
    fn ind(&self, depth: usize) -> Vec<u8> {
        let mut v = self.s.indent.clone();
        for _ in 0..depth {
            v.extend_from_slice(&self.s.indent_unit);
        }
        v
    }

    fn unit(&self, depth: usize) -> Vec<u8> {
        self.s.indent_unit.repeat(depth)
    }

    /// `+` for an ascending loop, `-` for a descending one.
    fn op(&self) -> char {
        match self.s.direction {
            Direction::Up => '+',
            Direction::Down => '-',
        }
    }

    /// A constant offset of the induction variable: a plain literal while it fits an `int`,
    /// else a literal of the variable's type.
    fn offset_literal(&self, off: u128) -> String {
        if off <= i32::MAX as u128 {
            off.to_string()
        } else {
            self.s.ty.literal(off as i128)
        }
    }

    /// The value of the induction variable in copy `k` (substitution form), or `None` for the
    /// variable itself.
    fn value(&self, a: u128, k: u128) -> Option<String> {
        if k == 0 {
            return None;
        }
        let lit = self.offset_literal(a * k);
        let op = self.op();
        let v = &self.s.var;
        Some(if self.s.ty.is_narrow() || self.s.generic {
            format!("(({})({v} {op} {lit}))", self.s.ty_text)
        } else {
            format!("({v} {op} {lit})")
        })
    }

    /// `decltype(i)`'s largest value that is certainly representable (2^(w-1)-1: the maximum
    /// of a signed type, below the maximum of an unsigned one), as a C++ expression.
    fn generic_max(&self) -> String {
        let t = &self.s.ty_text;
        format!("(((({t})1 << (sizeof({t}) * 8 - 2)) - 1) * 2 + 1)")
    }

    /// Its smallest certainly representable value: -(2^(w-1)-1) if signed, 0 if unsigned.
    fn generic_min(&self) -> String {
        let t = &self.s.ty_text;
        format!("(({t})-1 < ({t})0 ? -{} : ({t})0)", self.generic_max())
    }

    fn label(&self, k: u128) -> String {
        format!("{}_next{k}", self.s.fresh)
    }

    /// Render `src[range]` with the induction variable replaced by `value`, `continue` replaced
    /// by a jump to `label`, and `prefix` added after every newline (except inside literals).
    fn render(
        &self,
        range: Range<usize>,
        value: Option<&str>,
        label: Option<&str>,
        prefix: &[u8],
    ) -> Vec<u8> {
        let mut reps: Vec<(Range<usize>, String)> = Vec::new();
        if let Some(v) = value {
            for r in self.s.body_var.iter().chain(&self.s.cond_var) {
                if range.start <= r.start && r.end <= range.end {
                    reps.push((r.clone(), v.to_string()));
                }
            }
        }
        if let Some(l) = label {
            for &c in &self.s.continues {
                if range.start <= c && c + 8 <= range.end {
                    reps.push((c..c + 8, format!("goto {l}")));
                }
            }
        }
        reps.sort_by_key(|(r, _)| r.start);
        let keep = |pos: usize| {
            self.s
                .keep_ranges
                .iter()
                .any(|k| k.start < pos && pos < k.end)
        };
        let mut out = Vec::with_capacity(range.len() + 64);
        let mut i = range.start;
        let mut next = reps.iter().peekable();
        while i < range.end {
            if let Some((r, t)) = next.peek() {
                if r.start == i {
                    out.extend_from_slice(t.as_bytes());
                    i = r.end;
                    next.next();
                    continue;
                }
            }
            let b = self.src[i];
            out.push(b);
            i += 1;
            if b == b'\n' && i < range.end && !keep(i) && !matches!(self.src[i], b'\n' | b'\r') {
                out.extend_from_slice(prefix);
            }
        }
        out
    }

    /// One copy of the body as a block statement, to be placed at `depth`.
    fn copy(&self, k: u128, value: Option<&str>, depth: usize) -> Vec<u8> {
        let label = if k + 1 < self.n && !self.s.continues.is_empty() {
            Some(self.label(k))
        } else {
            None
        };
        let body = self.render(
            self.s.body.clone(),
            value,
            label.as_deref(),
            &self.unit(depth),
        );
        let mut out = Vec::new();
        if self.s.body_is_block {
            out.extend_from_slice(&body);
        } else {
            out.extend_from_slice(b"{ ");
            out.extend_from_slice(&body);
            out.extend_from_slice(b" }");
        }
        if let Some(l) = label {
            out.extend_from_slice(self.nl().as_bytes());
            out.extend_from_slice(&self.ind(depth));
            out.extend_from_slice(format!("{l}: ;").as_bytes());
        }
        out
    }

    fn main_update(&self, a: u128) -> String {
        format!(
            "{} {}= {}",
            self.s.var,
            self.op(),
            self.offset_literal(a * self.n)
        )
    }

    /// Constant trip count divisible by N: one loop, no remainder, the original condition.
    fn divisible(&self) -> Vec<u8> {
        let StepShape::Const(a) = self.s.step else {
            unreachable!()
        };
        let a = a as u128;
        let mut out = Vec::new();
        let init = self
            .s
            .init
            .as_ref()
            .map(|r| self.text(r))
            .unwrap_or_default();
        out.extend_from_slice(
            format!(
                "for ({init}; {}; {}) {{{}",
                self.text(&self.s.cond),
                self.main_update(a),
                self.nl()
            )
            .as_bytes(),
        );
        for k in 0..self.n {
            out.extend_from_slice(&self.ind(1));
            out.extend_from_slice(&self.copy(k, self.value(a, k).as_deref(), 1));
            out.extend_from_slice(self.nl().as_bytes());
        }
        out.extend_from_slice(&self.ind(0));
        out.push(b'}');
        out
    }

    /// `cond` with the induction variable replaced by `value`.
    fn cond_at(&self, value: &str) -> String {
        String::from_utf8_lossy(&self.render(self.s.cond.clone(), Some(value), None, b""))
            .into_owned()
    }

    fn general(&self, step: Option<u128>) -> Vec<u8> {
        let s = self.s;
        let v = &s.var;
        let f = self.n - 1;
        let nl = self.nl();
        let mut lines: Vec<(usize, Vec<u8>)> = Vec::new();
        if let Some(r) = &s.init {
            lines.push((1, format!("{};", self.text(r)).into_bytes()));
        }
        if s.generic {
            let t = &s.ty_text;
            lines.push((
                1,
                format!(
                    "static_assert(({t})1 / 2 == 0 && sizeof({t}) <= 8, \"hip-unroll: `{v}` must be an integer of at most 64 bits\");"
                )
                .into_bytes(),
            ));
        }
        let (guard, last, update) = match step {
            Some(a) => {
                let reach = (f * a) as i128;
                let noovf = match (s.direction, s.generic) {
                    (Direction::Up, false) => {
                        format!("{v} <= {}", s.ty.literal(s.ty.max() - reach))
                    }
                    (Direction::Down, false) => {
                        format!("{v} >= {}", s.ty.literal(s.ty.min() + reach))
                    }
                    (Direction::Up, true) => format!("{v} <= {} - {reach}", self.generic_max()),
                    (Direction::Down, true) => format!("{v} >= {} + {reach}", self.generic_min()),
                };
                (
                    noovf,
                    self.value(a, f).unwrap_or_else(|| v.clone()),
                    self.main_update(a),
                )
            }
            None => {
                let StepShape::Expr(r) = &s.step else {
                    unreachable!()
                };
                let st = format!("{}_step", s.fresh);
                lines.push((
                    1,
                    format!(
                        "const unsigned long long {st} = (unsigned long long)({});",
                        self.text(r)
                    )
                    .into_bytes(),
                ));
                let op = self.op();
                let reach = if f == 1 {
                    st.clone()
                } else {
                    format!("{f}ull * {st}")
                };
                let (noovf, last) = if s.generic {
                    // Unknown width (at most 64 bits, asserted): as the 64-bit case, with the
                    // conservative limits, first checking `i` lies within them.
                    let vi = format!("(unsigned long long)({v})");
                    let (max, min) = (self.generic_max(), self.generic_min());
                    let (inside, room) = match s.direction {
                        Direction::Up => (
                            format!("{v} <= {max}"),
                            format!("(unsigned long long)({max}) - {vi}"),
                        ),
                        Direction::Down => (
                            format!("{v} >= {min}"),
                            format!("{vi} - (unsigned long long)({min})"),
                        ),
                    };
                    let noovf = if f == 1 {
                        format!("{inside} && {st} <= {room}")
                    } else {
                        format!("{inside} && {st} <= ({room}) / {f}ull")
                    };
                    (noovf, format!("(({})({vi} {op} {reach}))", s.ty_text))
                } else if s.ty.bits <= 32 {
                    // 32-bit (or narrower) variable: a step below 2^32 keeps `i +- (N-1)*step`
                    // exact in `long long`; no division needed.
                    let wide = format!("(long long)({v}) {op} (long long)({reach})");
                    let limit = match s.direction {
                        Direction::Up => format!("{wide} <= {}ll", s.ty.max()),
                        Direction::Down => format!("{wide} >= {}ll", s.ty.min()),
                    };
                    (
                        format!("{st} <= 4294967295ull && {limit}"),
                        format!("(({})({wide}))", s.ty_text),
                    )
                } else {
                    // 64-bit variable: the room left before the limit, as an unsigned
                    // difference (exact even for negative values), divided by N-1.
                    let vi = format!("(unsigned long long)({v})");
                    let room = match s.direction {
                        Direction::Up => format!("{} - {vi}", IntType::ull_literal(s.ty.max())),
                        Direction::Down if s.ty.min() == 0 => vi.clone(),
                        Direction::Down => format!("{vi} - {}", IntType::ull_literal(s.ty.min())),
                    };
                    let noovf = if f == 1 {
                        format!("{st} <= {room}")
                    } else {
                        format!("{st} <= ({room}) / {f}ull")
                    };
                    (noovf, format!("(({})({vi} {op} {reach}))", s.ty_text))
                };
                (noovf, last, self.text(&s.update))
            }
        };
        let mut guard = vec![guard];
        if s.ty.signed && s.cmp_may_be_unsigned {
            guard.push(match s.direction {
                Direction::Up => format!("({v} >= 0 || {last} < 0)"),
                Direction::Down => format!("({last} >= 0 || {v} < 0)"),
            });
        }
        guard.push(self.cond_at(&last));
        lines.push((
            1,
            format!("for (; {}; {update}) {{", guard.join(" && ")).into_bytes(),
        ));
        for k in 0..self.n {
            let value = step.and_then(|a| self.value(a, k));
            lines.push((2, self.copy(k, value.as_deref(), 2)));
            if step.is_none() && k + 1 < self.n {
                lines.push((2, format!("{};", self.text(&s.update)).into_bytes()));
            }
        }
        lines.push((1, b"}".to_vec()));
        let mut rem =
            format!("for (; {}; {})", self.text(&s.cond), self.text(&s.update)).into_bytes();
        rem.extend_from_slice(&self.render(s.header_end..s.span.end, None, None, &self.unit(1)));
        lines.push((1, rem));

        let mut out = Vec::new();
        out.push(b'{');
        out.extend_from_slice(nl.as_bytes());
        for (depth, l) in lines {
            out.extend_from_slice(&self.ind(depth));
            out.extend_from_slice(&l);
            out.extend_from_slice(nl.as_bytes());
        }
        out.extend_from_slice(&self.ind(0));
        out.push(b'}');
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn find(src: &str, pat: &str) -> Range<usize> {
        let p = src.find(pat).unwrap();
        p..p + pat.len()
    }

    fn all(src: &str, pat: &str, within: Range<usize>) -> Vec<Range<usize>> {
        src.match_indices(pat)
            .map(|(p, _)| p..p + pat.len())
            .filter(|r| within.start <= r.start && r.end <= within.end)
            .collect()
    }

    /// `for (int i = 0; i < n; ++i) { a[i] += 1; }`, shaped by hand.
    fn simple(src: &str) -> LoopShape {
        let body = find(src, "{ a[i] += 1; }");
        let cond = find(src, "i < n");
        LoopShape {
            var: "i".into(),
            ty: IntType {
                signed: true,
                bits: 32,
            },
            ty_text: "int".into(),
            generic: false,
            direction: Direction::Up,
            step: StepShape::Const(1),
            span: src.find("for").unwrap()..src.rfind('}').unwrap() + 1,
            init: Some(find(src, "int i = 0")),
            cond: cond.clone(),
            cond_var: std::iter::once(cond.start..cond.start + 1).collect(),
            update: find(src, "++i"),
            header_end: src.find(") {").unwrap() + 1,
            body: body.clone(),
            body_is_block: true,
            body_var: all(src, "i]", body)
                .into_iter()
                .map(|r| r.start..r.start + 1)
                .collect(),
            continues: vec![],
            keep_ranges: vec![],
            cmp_may_be_unsigned: false,
            const_trip: None,
            indent: b"  ".to_vec(),
            indent_unit: b"  ".to_vec(),
            newline: "\n",
            fresh: "hu_unroll_1".into(),
        }
    }

    #[test]
    fn general_form_by_two() {
        let src = "  for (int i = 0; i < n; ++i) { a[i] += 1; }";
        let s = simple(src);
        let out = String::from_utf8(expand(src.as_bytes(), &s, 2)).unwrap();
        assert_eq!(
            out,
            "{\n    int i = 0;\n    for (; i <= 2147483646 && (i + 1) < n; i += 2) {\n      { a[i] += 1; }\n      { a[(i + 1)] += 1; }\n    }\n    for (; i < n; ++i) { a[i] += 1; }\n  }"
        );
    }

    #[test]
    fn divisible_constant_trip_count_has_no_remainder() {
        let src = "  for (int i = 0; i < n; ++i) { a[i] += 1; }";
        let mut s = simple(src);
        s.const_trip = Some(4);
        let out = String::from_utf8(expand(src.as_bytes(), &s, 2)).unwrap();
        assert_eq!(
            out,
            "for (int i = 0; i < n; i += 2) {\n    { a[i] += 1; }\n    { a[(i + 1)] += 1; }\n  }"
        );
    }

    #[test]
    fn guard_literals_per_type() {
        let src = "  for (int i = 0; i < n; ++i) { a[i] += 1; }";
        let mut s = simple(src);
        s.ty = IntType {
            signed: false,
            bits: 64,
        };
        s.direction = Direction::Down;
        s.step = StepShape::Const(3);
        let out = String::from_utf8(expand(src.as_bytes(), &s, 4)).unwrap();
        assert!(out.contains("i >= 9ull && (i - 9) < n; i -= 12"), "{out}");
    }

    #[test]
    fn fits_checks_the_type_range() {
        assert!(fits(
            IntType {
                signed: true,
                bits: 8
            },
            false,
            5,
            8
        ));
        assert!(!fits(
            IntType {
                signed: true,
                bits: 8
            },
            false,
            100,
            8
        ));
        let generic = IntType {
            signed: true,
            bits: 64,
        };
        assert!(fits(generic, true, 1 << 62, 2));
        assert!(!fits(generic, true, 1 << 62, 4));
        assert!(fits(generic, false, 1 << 62, 4));
    }
}
