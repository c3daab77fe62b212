//! Very long flat expressions (`x + x + x ...` over megabytes, as code generators write them):
//! the parts of them that the analysis cannot tell apart are left out of the parse, so that the
//! memory and time of a parse stay a small multiple of the input.
//!
//! tree-sitter keeps a node per token, about 100 bytes for each byte of such an expression (a
//! 10 MB one took 1.3 GB and 9 s to parse, 2 GB and 20 s to check). A *flat run* is a sequence
//! of at least [`MIN_OPERANDS`] operands (plain names and numbers: no call, subscript, member
//! access or template after them) joined by binary operators other than `<` and `>`. What the
//! IR takes from such a run is the set of names it reads and its operations with a number
//! (`ConstOp`): it calls nothing, writes nothing and declares nothing. So each
//! `operator operand` pair that repeats an earlier pair of the run (the same operator and the
//! same spelling) is left out of the parse through tree-sitter's included ranges, unless a
//! number is its operand or the next one's; the first and the last pair always stay. The
//! expression the grammar sees is still one valid chain, every position is the original's, and
//! the names, numbers and their neighbours are all there. Runs are looked for only in stretches
//! of at least `2 * MIN_OPERANDS` bytes without `;`, `{` or `}`, which one fast byte search
//! finds, so an ordinary file costs nothing more.

use std::collections::HashSet;
use std::ops::Range;

use crate::lex::{self, Kind};

/// A run shorter than this is parsed whole.
pub(crate) const MIN_OPERANDS: usize = 4096;

/// Binary operators a flat run may hold (`<` and `>` are left out: they may open templates).
const OPERATORS: &[&str] = &[
    "+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>", "&&", "||", "==", "!=", "<=", ">=",
];

/// After its last operand, these make the operand part of a larger expression (a call, a
/// subscript, a member, a template, an increment): the run ends before it.
const POSTFIX: &[&str] = &["(", "[", ".", "->", "::", "<", "++", "--", "{"];

/// The byte ranges of `src` to leave out of the parse, sorted and disjoint.
pub(crate) fn exclusions(src: &[u8]) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    if src.len() > u32::MAX as usize {
        return out;
    }
    for stretch in long_stretches(src, 2 * MIN_OPERANDS) {
        runs_in(src, stretch, &mut out);
    }
    out.sort_by_key(|r| r.start);
    out
}

/// The stretches of at least `min` bytes without `;`, `{` or `}`.
fn long_stretches(src: &[u8], min: usize) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0usize;
    for at in memchr::memchr3_iter(b';', b'{', b'}', src).chain(std::iter::once(src.len())) {
        if at - start >= min {
            out.push(start..at);
        }
        start = at + 1;
    }
    out
}

/// One `operator operand` pair of a run.
#[derive(Clone)]
struct Pair {
    /// Its position in the run (0: the pair after the first operand).
    k: usize,
    op: Range<usize>,
    arg: Range<usize>,
    /// Its operand is a number.
    num: bool,
    /// The first pair of the run with this operator and operand spelling.
    first: bool,
}

/// The run being read, one token at a time: nothing is kept per token but the distinct pairs
/// and the merged ranges to leave out (a few pairs wait for what follows them).
struct Run<'s> {
    src: &'s [u8],
    /// Pairs so far (the operands are one more).
    pairs: usize,
    /// Read the first operand, and no operator after the last operand yet.
    after_operand: bool,
    /// The operator read after the last operand, waiting for its operand.
    op: Option<Range<usize>>,
    /// The last two pairs, older first: `undecided[1]` may still be cut off by what follows
    /// its operand; `undecided[0]` waits for it.
    undecided: Vec<Pair>,
    seen: HashSet<(&'s [u8], &'s [u8])>,
    /// Ranges to leave out if the run turns out long enough, merged.
    out: Vec<Range<usize>>,
    /// `k` of the last pair left out (to merge the next one into its range).
    last_out: Option<usize>,
}

impl<'s> Run<'s> {
    fn new(src: &'s [u8]) -> Self {
        Run {
            src,
            pairs: 0,
            after_operand: false,
            op: None,
            undecided: Vec::new(),
            seen: HashSet::new(),
            out: Vec::new(),
            last_out: None,
        }
    }

    /// Nothing read yet.
    fn is_empty(&self) -> bool {
        !self.after_operand && self.op.is_none() && self.pairs == 0
    }

    /// Feed one token; `false` when it does not continue the run (the caller finishes it).
    fn feed(&mut self, kind: Kind, range: Range<usize>) -> bool {
        let operand = matches!(kind, Kind::Ident | Kind::Num);
        let operator = matches!(kind, Kind::Punct(p) if OPERATORS.contains(&p));
        match (self.after_operand, self.op.is_some()) {
            // The first operand.
            (false, false) if operand => {
                self.after_operand = true;
                true
            }
            // An operator after an operand: the pair of that operand stays in the run.
            (true, _) if operator => {
                self.confirm_last();
                self.after_operand = false;
                self.op = Some(range);
                true
            }
            // The operand of the waiting operator.
            (false, true) if operand => {
                let op = self.op.take().expect("an operator waits");
                let key = (&self.src[op.clone()], &self.src[range.clone()]);
                let first = self.seen.insert(key);
                self.undecided.push(Pair {
                    k: self.pairs,
                    op,
                    arg: range,
                    num: kind == Kind::Num,
                    first,
                });
                self.pairs += 1;
                self.after_operand = true;
                true
            }
            _ => false,
        }
    }

    /// The last pair's operand is followed by an operator: the pair before it is decided.
    fn confirm_last(&mut self) {
        if self.undecided.len() == 2 {
            let a = self.undecided.remove(0);
            let next_num = self.undecided[0].num;
            self.decide(a, next_num, false);
        }
    }

    /// Leave out `p` unless it must stay.
    fn decide(&mut self, p: Pair, next_num: bool, last: bool) {
        if p.first || p.k == 0 || last || p.num || next_num {
            return;
        }
        match (self.last_out, self.out.last_mut()) {
            (Some(k), Some(r)) if k + 1 == p.k => r.end = p.arg.end,
            _ => self.out.push(p.op.start..p.arg.end),
        }
        self.last_out = Some(p.k);
    }

    /// End the run before `next` (`None`: the end of the text); its ranges go to `out` when it
    /// has at least [`MIN_OPERANDS`] operands.
    fn finish(mut self, next: Option<Kind>, out: &mut Vec<Range<usize>>) {
        // An operand followed by `(`, `[`, ... is not plain: its pair leaves the run.
        if self.op.is_none()
            && matches!(next, Some(Kind::Punct(p)) if POSTFIX.contains(&p))
            && self.undecided.pop().is_some()
        {
            self.pairs -= 1;
        }
        let mut rest = std::mem::take(&mut self.undecided);
        if let Some(last) = rest.pop() {
            if let Some(a) = rest.pop() {
                self.decide(a, last.num, false);
            }
            self.decide(last, false, true);
        }
        if self.pairs + 1 >= MIN_OPERANDS {
            out.append(&mut self.out);
        }
    }
}

/// The flat runs and the nested parentheses of `src[stretch]`: what to leave out appended to
/// `out`.
fn runs_in(src: &[u8], stretch: Range<usize>, out: &mut Vec<Range<usize>>) {
    let mut run = Run::new(src);
    let mut parens = Parens::default();
    lex::scan(src, stretch, |kind, range| {
        parens.feed(kind, &range, out);
        if run.feed(kind, range.clone()) {
            return;
        }
        if run.is_empty() {
            return;
        }
        std::mem::replace(&mut run, Run::new(src)).finish(Some(kind), out);
        // A token that ends one run may start the next.
        run.feed(kind, range);
    });
    run.finish(None, out);
    parens.finish(out);
}

/// A chain of perfectly nested parentheses (`((((x))))`: each `(` right after the one outside
/// it, each `)` right after the one inside it), outermost first.
#[derive(Clone, Copy)]
struct Chain {
    len: usize,
    /// Token index and byte offset of the outermost `(`, and byte offset of its `)`.
    open_idx: u32,
    open: u32,
    close: u32,
    /// Byte offsets of the `(` and `)` one level inside the outermost (the chain's second).
    second: (u32, u32),
    /// Byte offsets of the `(` and `)` one level outside the innermost.
    next_to_inner: (u32, u32),
    /// Token index of the `)` of the outermost.
    close_idx: u32,
}

/// Nested parentheses of one stretch: a chain of at least [`MIN_OPERANDS`] levels keeps its
/// outermost and innermost pair; the levels between, which tell the analysis nothing, are left
/// out (`((((x))))` is parsed as `((x))`).
#[derive(Default)]
struct Parens {
    /// The open `(`: token index and byte offset (4 bytes each: sources are far below 4 GiB).
    open: Vec<(u32, u32)>,
    /// The chain closed by the token before this one, when that token was a `)`.
    last: Option<Chain>,
    /// Tokens seen.
    idx: u32,
}

impl Parens {
    fn feed(&mut self, kind: Kind, range: &Range<usize>, out: &mut Vec<Range<usize>>) {
        let idx = self.idx;
        self.idx += 1;
        let at = range.start as u32;
        match kind {
            Kind::Punct("(") => {
                self.end_chain(out);
                self.open.push((idx, at));
            }
            Kind::Punct(")") => {
                let Some((open_idx, open)) = self.open.pop() else {
                    self.end_chain(out);
                    return;
                };
                let me = Chain {
                    len: 1,
                    open_idx,
                    open,
                    close: at,
                    second: (open, at),
                    next_to_inner: (open, at),
                    close_idx: idx,
                };
                self.last = Some(match self.last.take() {
                    // The `)` right before closed the pair right inside this one.
                    Some(inner) if inner.close_idx + 1 == idx && inner.open_idx == open_idx + 1 => {
                        Chain {
                            len: inner.len + 1,
                            second: (inner.open, inner.close),
                            next_to_inner: if inner.len == 1 {
                                (open, at)
                            } else {
                                inner.next_to_inner
                            },
                            ..me
                        }
                    }
                    other => {
                        if let Some(c) = other {
                            Parens::left_out(c, out);
                        }
                        me
                    }
                });
            }
            _ => self.end_chain(out),
        }
    }

    fn end_chain(&mut self, out: &mut Vec<Range<usize>>) {
        if let Some(c) = self.last.take() {
            Parens::left_out(c, out);
        }
    }

    /// The levels between the outermost and the innermost of a long chain.
    fn left_out(c: Chain, out: &mut Vec<Range<usize>>) {
        if c.len < MIN_OPERANDS {
            return;
        }
        let (second_open, second_close) = (c.second.0 as usize, c.second.1 as usize);
        let (inner_open, inner_close) = (c.next_to_inner.0 as usize, c.next_to_inner.1 as usize);
        // `(` tokens are one byte each.
        out.push(second_open..inner_open + 1);
        out.push(inner_close..second_close + 1);
    }

    fn finish(mut self, out: &mut Vec<Range<usize>>) {
        self.end_chain(out);
    }
}

/// tree-sitter's included ranges for `src` without the byte ranges `skip` (sorted; they may
/// touch or overlap).
pub(crate) fn included(src: &[u8], skip: &[Range<usize>]) -> Vec<tree_sitter::Range> {
    let mut kept: Vec<Range<usize>> = Vec::with_capacity(skip.len() + 1);
    let mut start = 0usize;
    for s in skip {
        if s.start > start {
            kept.push(start..s.start);
        }
        start = start.max(s.end);
    }
    kept.push(start..src.len().max(start));
    // Rows and columns in one forward pass.
    let (mut at, mut row, mut line_start) = (0usize, 0usize, 0usize);
    let mut point = |to: usize| {
        for nl in memchr::memchr_iter(b'\n', &src[at.min(src.len())..to.min(src.len())]) {
            row += 1;
            line_start = at + nl + 1;
        }
        at = at.max(to);
        tree_sitter::Point {
            row,
            column: to - line_start,
        }
    };
    kept.into_iter()
        .map(|r| {
            let start_point = point(r.start);
            let end_point = point(r.end);
            tree_sitter::Range {
                start_byte: r.start,
                end_byte: r.end,
                start_point,
                end_point,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chain(ops: &[&str], n: usize) -> String {
        let mut s = String::from("x");
        for i in 0..n {
            s.push_str(&format!(" {} x", ops[i % ops.len()]));
        }
        s
    }

    /// What the parse sees: `src` without the left-out bytes.
    fn seen(src: &str) -> String {
        let ex = exclusions(src.as_bytes());
        let mut out = String::new();
        let mut at = 0;
        for r in ex {
            out.push_str(&src[at..r.start]);
            at = r.end;
        }
        out.push_str(&src[at..]);
        out
    }

    #[test]
    fn short_runs_and_ordinary_code_are_parsed_whole() {
        let src = format!("a[i] = {};\n", chain(&["+"], MIN_OPERANDS - 2));
        assert!(exclusions(src.as_bytes()).is_empty());
        let src = "__global__ void k(float* a) { for (int i = 0; i < 8; ++i) a[i] += 1; }\n";
        assert!(exclusions(src.as_bytes()).is_empty());
    }

    #[test]
    fn a_long_run_keeps_each_pair_once_and_its_numbers() {
        let body = format!(
            "{} + tid % 32 + {} - 7",
            chain(&["+", "*"], 5000),
            chain(&["+"], 5000)
        );
        let src = format!("a[i] = {body};\n");
        let got = seen(&src);
        let words = got.split_whitespace().collect::<Vec<_>>().join(" ");
        assert_eq!(words, "a[i] = x + x * x + tid % 32 + x - 7;");
    }

    #[test]
    fn an_operand_that_is_called_or_indexed_ends_the_run() {
        let src = format!(
            "a[i] = {} + f(x) + {}[3];\n",
            chain(&["+"], 5000),
            chain(&["+"], 5000)
        );
        let got = seen(&src);
        let words = got.split_whitespace().collect::<Vec<_>>().join(" ");
        assert_eq!(words, "a[i] = x + x + x + f(x) + x + x + x + x[3];");
    }

    #[test]
    fn nested_parentheses_keep_their_outermost_and_innermost_levels() {
        let d = MIN_OPERANDS + 10;
        let src = format!(
            "a[i] = f({}x{}) + {}(y + 1) * 2{};\n",
            "(".repeat(d),
            ")".repeat(d),
            "(".repeat(d),
            ")".repeat(d)
        );
        // The call's own parentheses are the outermost level of the first chain.
        assert_eq!(seen(&src), "a[i] = f((x)) + (((y + 1) * 2));\n");
        // A chain whose levels are not all bare parentheses stops where they stop.
        let src = format!("a[i] = {}x{} + z);\n", "(".repeat(d), ")".repeat(d - 1));
        assert_eq!(seen(&src), "a[i] = (((x)) + z);\n");
    }

    #[test]
    fn included_ranges_have_rows_and_columns() {
        let src = b"ab\ncd\nef";
        let r = included(src, &[1..4, 6..7]);
        let got: Vec<_> = r
            .iter()
            .map(|r| {
                (
                    r.start_byte,
                    r.end_byte,
                    r.start_point.row,
                    r.start_point.column,
                    r.end_point.row,
                    r.end_point.column,
                )
            })
            .collect();
        assert_eq!(
            got,
            [(0, 1, 0, 0, 0, 1), (4, 6, 1, 1, 2, 0), (7, 8, 2, 1, 2, 2)]
        );
    }
}
