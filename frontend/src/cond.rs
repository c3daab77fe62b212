//! Preprocessor conditionals: the branches of a file's `#if`/`#ifdef`/`#ifndef`/`#elif`/`#else`
//! groups (read from the text: the grammar parses every branch), and which of them an AMD
//! (HIP-Clang) compile never sees, given the unit's command-line macros.
//!
//! A condition is evaluated with three values (true, false, unknown) over `defined NAME`,
//! `defined(NAME)`, names, integers, `!`, `&&`, `||`, comparisons and parentheses. A name is
//! known when the command line defines it (`-D`, its integer value; `-U`: undefined), or when it
//! is a platform macro: defined on an AMD compile ([`AMD_DEFINED`]: `__HIP_PLATFORM_AMD__`,
//! `__HIP__`, `USE_ROCM`, ...) or only on an NVIDIA one ([`NVIDIA_ONLY`]: `__CUDA_ARCH__`,
//! `__NVCC__`, `__CUDACC__`, `__HIP_PLATFORM_NVIDIA__`, ...). Every other name is unknown, and
//! a branch whose condition is unknown counts as compiled. A file's own `#define`s are not
//! evaluated (the guards see every branch).

use crate::ir::{CondBranch, SourceFile, Span};
use crate::lex::{self, Tok};
use crate::tu::{TranslationUnit, COMMAND_LINE};

/// Defined by an AMD compile (hipcc/HIP-Clang on ROCm; `USE_ROCM` by the build systems of the
/// code bases that use it: PyTorch, vLLM and their kernels).
pub const AMD_DEFINED: &[&str] = &[
    "__HIP_PLATFORM_AMD__",
    "__HIP_PLATFORM_HCC__",
    "__HIP_PLATFORM_AMDGCN__",
    "__HIP__",
    "__AMDGCN__",
    "USE_ROCM",
];

/// Defined only by an NVIDIA compile (nvcc, or HIP on NVIDIA): undefined on AMD.
pub const NVIDIA_ONLY: &[&str] = &[
    "__CUDA_ARCH__",
    "__CUDA_ARCH_LIST__",
    "__NVCC__",
    "__CUDACC__",
    "__CUDACC_RTC__",
    "__CUDACC_VER_MAJOR__",
    "__CUDACC_VER_MINOR__",
    "__HIP_PLATFORM_NVIDIA__",
    "__HIP_PLATFORM_NVCC__",
    "CUDART_VERSION",
    "__CUDA_API_VERSION",
];

/// The conditional branches of `src` (`inert`: its comments and literals, sorted), in order.
pub(crate) fn scan(src: &[u8], inert: &[Span]) -> Vec<CondBranch> {
    let mut out: Vec<CondBranch> = Vec::new();
    // Open groups: (index of the group's `#if`, index of the current branch).
    let mut open: Vec<(usize, usize)> = Vec::new();
    let mut line = 1u32;
    let mut counted = 0usize;
    for hash in memchr::memchr_iter(b'#', src) {
        let mut s = hash;
        while s > 0 && matches!(src[s - 1], b' ' | b'\t') {
            s -= 1;
        }
        if s > 0 && src[s - 1] != b'\n' {
            continue;
        }
        let i = inert.partition_point(|r| r.start <= hash);
        if i > 0 && hash < inert[i - 1].end {
            continue;
        }
        let mut j = hash + 1;
        while j < src.len() && matches!(src[j], b' ' | b'\t') {
            j += 1;
        }
        let name_start = j;
        while j < src.len() && src[j].is_ascii_alphabetic() {
            j += 1;
        }
        let name = &src[name_start..j];
        if !matches!(
            name,
            b"if" | b"ifdef" | b"ifndef" | b"elif" | b"elifdef" | b"elifndef" | b"else" | b"endif"
        ) {
            continue;
        }
        line += memchr::memchr_iter(b'\n', &src[counted..hash]).count() as u32;
        counted = hash;
        let end = crate::tu::logical_line_end(src, hash);
        // Close the current branch of the group at `#elif`, `#else`, `#endif`.
        if name != b"if" && name != b"ifdef" && name != b"ifndef" {
            let Some(&(_, current)) = open.last() else {
                continue; // an `#endif` without `#if`
            };
            out[current].span.end = hash;
            if name == b"endif" {
                open.pop();
                continue;
            }
        }
        let condition = condition_text(&src[j.min(end)..end]);
        let parent = match name {
            b"if" | b"ifdef" | b"ifndef" => open.last().map(|&(_, b)| b),
            _ => open.last().and_then(|&(_, b)| out[b].parent),
        };
        let index = out.len();
        let group = match name {
            b"if" | b"ifdef" | b"ifndef" => index,
            _ => open.last().map_or(index, |&(g, _)| g),
        };
        out.push(CondBranch {
            directive: String::from_utf8_lossy(name).into_owned(),
            condition,
            span: Span {
                start: hash,
                end: src.len(),
                line,
                column: (hash - s) as u32 + 1,
            },
            group,
            parent,
        });
        match name {
            b"if" | b"ifdef" | b"ifndef" => open.push((index, index)),
            _ => {
                if let Some(top) = open.last_mut() {
                    top.1 = index;
                }
            }
        }
    }
    out
}

/// A directive's condition: continuation lines joined, comments removed, trimmed.
fn condition_text(bytes: &[u8]) -> String {
    let joined = crate::macros::join_continuations(bytes);
    let toks = lex::tokenize(joined.as_bytes(), 0..joined.len());
    let mut out = String::new();
    for t in &toks {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(&joined[t.range.clone()]);
    }
    out
}

/// Three-valued truth of a condition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tri {
    True,
    False,
    Unknown,
}

/// An integer value in a condition, or unknown.
type Val = Option<i128>;

fn tri(v: Val) -> Tri {
    match v {
        Some(0) => Tri::False,
        Some(_) => Tri::True,
        None => Tri::Unknown,
    }
}

/// What the unit says of macro names: the command line's definitions (name -> value, `None`
/// when it is not an integer) and undefinitions, over the platform tables.
struct Known<'a> {
    tu: &'a TranslationUnit,
    file: &'a SourceFile,
}

impl Known<'_> {
    /// `Some(true)` defined, `Some(false)` undefined, `None` unknown.
    fn defined(&self, name: &str) -> Option<bool> {
        if self.tu.undefined.iter().any(|n| n == name) {
            return Some(false);
        }
        if self.command_line(name).is_some() {
            return Some(true);
        }
        // A platform name the unit `#define`s itself (a compatibility header's
        // `#define CUDART_VERSION ...`): what it is there depends on branches not evaluated.
        let own = |f: &SourceFile| f.macros.iter().any(|m| m.name == name);
        if own(self.file)
            || self
                .tu
                .headers
                .iter()
                .any(|h| h.path.as_os_str() != COMMAND_LINE && own(h.file()))
        {
            return None;
        }
        if AMD_DEFINED.contains(&name) {
            return Some(true);
        }
        if NVIDIA_ONLY.contains(&name) {
            return Some(false);
        }
        None
    }

    /// The value of `name` in a condition.
    fn value(&self, name: &str) -> Val {
        if let Some(body) = self.command_line(name) {
            return frontend_int(body);
        }
        match self.defined(name) {
            // An undefined name is 0 in `#if`; a platform macro defined by the compiler is 1.
            Some(false) => Some(0),
            Some(true) => Some(1),
            None => None,
        }
    }

    fn command_line(&self, name: &str) -> Option<&str> {
        let h = self.tu.headers.first()?;
        if h.path.as_os_str() != COMMAND_LINE {
            return None;
        }
        h.file()
            .macros
            .iter()
            .rev()
            .find(|m| m.name == name && m.params.is_none())
            .map(|m| m.body.as_str())
    }
}

fn frontend_int(body: &str) -> Val {
    lex::parse_int_literal(body.trim())
}

/// A small recursive-descent evaluator over a condition's tokens (depth-limited: a condition
/// nested deeper than 64 levels is unknown).
struct Eval<'a> {
    toks: &'a [Tok],
    at: usize,
    known: &'a Known<'a>,
    depth: usize,
}

impl Eval<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.at)
    }

    fn punct(&mut self, p: &str) -> bool {
        if matches!(self.peek(), Some(Tok::Punct(q)) if *q == p) {
            self.at += 1;
            return true;
        }
        false
    }

    fn or(&mut self) -> Val {
        let mut v = self.and();
        while self.punct("||") {
            let r = self.and();
            v = match (tri(v), tri(r)) {
                (Tri::True, _) | (_, Tri::True) => Some(1),
                (Tri::False, Tri::False) => Some(0),
                _ => None,
            };
        }
        v
    }

    fn and(&mut self) -> Val {
        let mut v = self.cmp();
        while self.punct("&&") {
            let r = self.cmp();
            v = match (tri(v), tri(r)) {
                (Tri::False, _) | (_, Tri::False) => Some(0),
                (Tri::True, Tri::True) => Some(1),
                _ => None,
            };
        }
        v
    }

    fn cmp(&mut self) -> Val {
        let mut v = self.unary();
        while let Some(Tok::Punct(op @ ("==" | "!=" | "<" | ">" | "<=" | ">="))) = self.peek() {
            let op = *op;
            self.at += 1;
            let r = self.unary();
            v = match (v, r) {
                (Some(a), Some(b)) => Some(i128::from(match op {
                    "==" => a == b,
                    "!=" => a != b,
                    "<" => a < b,
                    ">" => a > b,
                    "<=" => a <= b,
                    _ => a >= b,
                })),
                _ => None,
            };
        }
        v
    }

    fn unary(&mut self) -> Val {
        self.depth += 1;
        let v = if self.depth > 64 {
            self.at = self.toks.len();
            None
        } else if self.punct("!") {
            match tri(self.unary()) {
                Tri::True => Some(0),
                Tri::False => Some(1),
                Tri::Unknown => None,
            }
        } else if self.punct("(") {
            let v = self.or();
            if !self.punct(")") {
                self.at = self.toks.len();
                return None;
            }
            v
        } else {
            self.primary()
        };
        self.depth -= 1;
        v
    }

    fn primary(&mut self) -> Val {
        let t = self.peek().cloned()?;
        self.at += 1;
        match t {
            Tok::Num(n) => lex::parse_int_literal(&n),
            Tok::Ident(w) if w == "defined" => {
                let paren = self.punct("(");
                let name = match self.peek() {
                    Some(Tok::Ident(n)) => n.clone(),
                    _ => return None,
                };
                self.at += 1;
                if paren && !self.punct(")") {
                    return None;
                }
                self.known.defined(&name).map(i128::from)
            }
            Tok::Ident(w) => {
                // A function-like macro call (`__has_include(...)`, `CHECK(x)`): unknown.
                if self.punct("(") {
                    let mut depth = 1;
                    while depth > 0 && self.at < self.toks.len() {
                        match &self.toks[self.at] {
                            Tok::Punct("(") => depth += 1,
                            Tok::Punct(")") => depth -= 1,
                            _ => {}
                        }
                        self.at += 1;
                    }
                    return None;
                }
                self.known.value(&w)
            }
            _ => None,
        }
    }
}

/// The truth of one branch's own condition.
fn condition(b: &CondBranch, known: &Known<'_>) -> Tri {
    let name_of = |c: &str| c.split_whitespace().next().unwrap_or("").to_string();
    let defined = |c: &str| match known.defined(&name_of(c)) {
        Some(true) => Tri::True,
        Some(false) => Tri::False,
        None => Tri::Unknown,
    };
    let not = |t: Tri| match t {
        Tri::True => Tri::False,
        Tri::False => Tri::True,
        Tri::Unknown => Tri::Unknown,
    };
    match b.directive.as_str() {
        "else" => Tri::True,
        "ifdef" | "elifdef" => defined(&b.condition),
        "ifndef" | "elifndef" => not(defined(&b.condition)),
        _ => {
            let toks: Vec<Tok> = lex::tokenize(b.condition.as_bytes(), 0..b.condition.len())
                .into_iter()
                .map(|t| t.tok)
                .collect();
            let mut e = Eval {
                toks: &toks,
                at: 0,
                known,
                depth: 0,
            };
            let v = e.or();
            if e.at != toks.len() {
                return Tri::Unknown;
            }
            tri(v)
        }
    }
}

/// The byte ranges of `file` that a compile for AMD with the unit's command-line macros never
/// sees: each branch known not taken (its condition false, or an earlier branch of its group
/// known taken), with everything nested in it. Sorted, not overlapping.
pub fn inactive(file: &SourceFile, tu: &TranslationUnit) -> Vec<Span> {
    let known = Known { tu, file };
    let n = file.conditionals.len();
    // Whether each branch is taken: true, false or unknown.
    let mut taken = vec![Tri::Unknown; n];
    for i in 0..n {
        let b = &file.conditionals[i];
        // The earlier branches of the group.
        let earlier = (b.group..i).filter(|&k| file.conditionals[k].group == b.group);
        let mut any_true = false;
        let mut all_false = true;
        for k in earlier {
            match taken[k] {
                Tri::True => any_true = true,
                Tri::False => {}
                Tri::Unknown => all_false = false,
            }
        }
        taken[i] = if any_true {
            Tri::False
        } else {
            match (condition(b, &known), all_false) {
                (Tri::False, _) => Tri::False,
                (Tri::True, true) => Tri::True,
                _ => Tri::Unknown,
            }
        };
    }
    let mut out: Vec<Span> = Vec::new();
    for (i, b) in file.conditionals.iter().enumerate() {
        if taken[i] != Tri::False {
            continue;
        }
        // Nested in a range already out: covered.
        if out.last().is_some_and(|o| b.span.start < o.end) {
            continue;
        }
        out.push(b.span);
    }
    out
}

/// True when `pos` lies in one of `ranges` (sorted, not overlapping).
pub fn within(ranges: &[Span], pos: usize) -> bool {
    let i = ranges.partition_point(|r| r.start <= pos);
    i > 0 && pos < ranges[i - 1].end
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit_with(defs: &[&str], undefs: &[&str]) -> TranslationUnit {
        let mut d = crate::tu::Defines::default();
        for x in defs {
            d.define(x).unwrap();
        }
        for x in undefs {
            d.undefine(x).unwrap();
        }
        let inc = crate::tu::Includes::default().with_defines(&d);
        inc.resolve(std::path::Path::new("x.cu"), b"", &SourceFile::default())
    }

    /// The text of `src` left after the inactive ranges are cut out, one word per line.
    fn active(src: &str, tu: &TranslationUnit) -> Vec<String> {
        let file = crate::parse(src.as_bytes());
        let out = inactive(&file, tu);
        src.lines()
            .scan(0usize, |at, l| {
                let start = *at;
                *at += l.len() + 1;
                Some((start, l))
            })
            .filter(|(start, l)| !within(&out, *start) && !l.starts_with('#'))
            .map(|(_, l)| l.trim().to_string())
            .collect()
    }

    #[test]
    fn platform_branches() {
        let src = "#ifdef __HIP_PLATFORM_AMD__\namd1\n#else\ncuda1\n#endif\n#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700\ncuda2\n#elif !defined(USE_ROCM)\ncuda3\n#else\namd2\n#endif\n#ifndef __HIPCC__\nmaybe1\n#else\nmaybe2\n#endif\n#if FOO\nmaybe3\n#if __NVCC__\ncuda4\n#endif\n#endif\n#if 0\nnever\n#elif 1 /* c */\nalways\n#endif\n";
        let tu = TranslationUnit::default();
        assert_eq!(
            active(src, &tu),
            ["amd1", "amd2", "maybe1", "maybe2", "maybe3", "always"]
        );
        // `-D FOO=0 -U __HIP_PLATFORM_AMD__`: the command line decides.
        let tu = unit_with(&["FOO=0"], &["__HIP_PLATFORM_AMD__"]);
        assert_eq!(
            active(src, &tu),
            ["cuda1", "amd2", "maybe1", "maybe2", "always"]
        );
    }

    /// A platform name the file defines itself is unknown: its branches are compiled.
    #[test]
    fn a_platform_name_defined_in_the_unit_is_unknown() {
        let src = "#ifndef CUDART_VERSION\n#define CUDART_VERSION 12000\n#endif\n#if CUDART_VERSION >= 11000\nnew_api\n#endif\n";
        assert_eq!(active(src, &TranslationUnit::default()), ["new_api"]);
    }

    #[test]
    fn branches_are_grouped_and_nested() {
        let src = "#if A\na\n#  if B\nb\n#  endif\n#elif C\nc\n#else\nd\n#endif\n";
        let file = crate::parse(src.as_bytes());
        let c = &file.conditionals;
        let got: Vec<(&str, &str, usize, Option<usize>)> = c
            .iter()
            .map(|b| {
                (
                    b.directive.as_str(),
                    b.condition.as_str(),
                    b.group,
                    b.parent,
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("if", "A", 0, None),
                ("if", "B", 1, Some(0)),
                ("elif", "C", 0, None),
                ("else", "", 0, None)
            ]
        );
        assert_eq!(&src[c[1].span.start..c[1].span.end], "#  if B\nb\n");
        assert_eq!(&src[c[3].span.start..c[3].span.end], "#else\nd\n");
    }
}
