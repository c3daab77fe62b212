//! Token-level reading of declarations and statements that the grammar cannot parse without
//! the preprocessor (see `elide`): unknown specifier macros in front of a function
//! declarator (`CUTLASS_DEVICE void f()`), macro calls at file scope written without `;`
//! (`INSTANTIATE(float)` then `__global__ void k()`), invocations of the file's macros that
//! define functions (`DEFINE_KERNEL(k, float)`, `DEFINE_KERNEL(k, float) { ... }`), and pragma
//! macros before a loop (`UNROLL_8 for (...)`, `__pragma(unroll) for (...)`), and macro calls
//! whose arguments are statements (`NV_IF_TARGET(NV_IS_DEVICE, (__syncthreads();))`).
//!
//! One forward pass over the tokens outside directives, with a stack of scopes (namespace,
//! class, block) told apart by the tokens that open them; a declaration or statement is looked
//! at only where one starts. Bounded: a head is at most [`MAX_HEAD`] tokens.

use std::collections::{HashMap, HashSet};
use std::ops::Range;

use crate::ir::{PragmaSyntax, UnrollHint};
use crate::lex::{self, Tok, Token};
use crate::pragma::parse_pragma_text;

/// The most tokens a declaration head is read over before giving up on it.
const MAX_HEAD: usize = 64;

/// What a macro of the file is, for this pass.
#[derive(Debug, Clone)]
pub(crate) enum Shape {
    /// `_Pragma("...")` / `__pragma(...)`: the unroll hint it gives, if it is an unroll pragma;
    /// also an object-like macro that expands to nothing (no hint).
    Pragma(Option<(UnrollHint, PragmaSyntax)>),
    /// Function-like, and its replacement list defines a `__global__`/`__device__` function,
    /// body included: `params`, and the replacement list's bytes in the file.
    Definition {
        params: Vec<String>,
        body: Range<usize>,
    },
    /// Function-like, and its replacement list is a function header without a body (the body
    /// follows the invocation).
    Header {
        params: Vec<String>,
        body: Range<usize>,
    },
    /// Object-like, and its replacement list only opens or only closes namespaces
    /// (`namespace rocprim {`, `}`): see `elide::NamespaceMacro`. The file's or the unit's.
    Namespace,
    /// Anything else.
    Other,
}

/// What the pass found.
#[derive(Debug, Clone)]
pub(crate) enum Found {
    /// A template's requires-clause in front of a declaration (`template <class T> requires
    /// C<T>`), left out of the parse: the grammar reads one, but not with a directive between
    /// it and the declaration (CCCL's `#if _CCCL_HAS_CONCEPTS()` around it: the function and
    /// its kernel qualifier were lost), and it only says which instantiations exist.
    Clause { range: Range<usize> },
    /// An identifier defined nowhere (in the file or as an outer specifier macro) in
    /// declaration-specifier position, or such a name with its argument list.
    Unknown { range: Range<usize>, name: String },
    /// A pragma macro (or `__pragma(...)`) right before a loop; `unknown` when nothing defines
    /// it.
    Pragma {
        range: Range<usize>,
        name: String,
        hint: Option<(UnrollHint, PragmaSyntax)>,
        unknown: bool,
    },
    /// A macro call at file or namespace scope not followed by `;`, which the grammar would
    /// read as the start of the next declaration.
    Invocation { range: Range<usize>, name: String },
    /// The body of a function definition at namespace or class scope whose head names no
    /// GPU qualifier, no macro of the file or the unit and nothing unknown: host code, which
    /// the lowering never analyses. `body` is what lies between its braces, `head` the
    /// declaration before them. The parse skips `body` (the lowering checks afterwards that
    /// each such body is a host function's, else the file is parsed again without skipping).
    HostBody {
        head: Range<usize>,
        body: Range<usize>,
    },
    /// A macro call in a block whose arguments hold statements, each in its own parentheses
    /// (CCCL's `NV_IF_TARGET(NV_IS_DEVICE, (a; b;))`, `NV_IF_ELSE_TARGET(C, (x;), (y;))`,
    /// `NV_DISPATCH_TARGET(Q1, (x;), Q2, (y;))`). The grammar reads `(a; b;)` as a broken
    /// expression; the parse skips `pieces` instead (the name, the other arguments and the
    /// parentheses around each statement group), so that every group's statements are read in
    /// a row: what any target may run, for the guards. `call` is the whole invocation.
    Statements {
        pieces: Vec<Range<usize>>,
        name: String,
        call: Range<usize>,
    },
    /// An invocation of a macro of the file that defines a function (`range` is the
    /// invocation, and the block after it for a [`Shape::Header`]).
    Expansion {
        range: Range<usize>,
        name: String,
        invocation: Range<usize>,
        args: Vec<Range<usize>>,
        block: Option<Range<usize>>,
        namespaces: Vec<String>,
    },
}

/// Names that are followed by `(` without being a macro call.
const NOT_MACRO_CALLS: &[&str] = &[
    "__attribute__",
    "__declspec",
    "__launch_bounds__",
    "alignas",
    "__align__",
    "__builtin_align__",
    "decltype",
    "static_assert",
    "_Pragma",
    "__pragma",
    "sizeof",
    "alignof",
    "noexcept",
    "operator",
    "asm",
    "__asm__",
    "__asm",
];

/// Words that may follow a function declarator's parameter list (so `NAME(...) WORD` is a
/// declaration, not a macro call).
const POST_DECLARATOR: &[&str] = &[
    "const", "volatile", "noexcept", "override", "final", "throw", "try", "requires",
];

/// Declaration specifiers that name no type.
const SPECIFIERS: &[&str] = &[
    "static",
    "inline",
    "constexpr",
    "consteval",
    "constinit",
    "virtual",
    "explicit",
    "friend",
    "extern",
    "__device__",
    "__host__",
    "__global__",
    "__forceinline__",
    "__forceinline",
    "__noinline__",
    "__inline__",
    "__inline",
    "__always_inline__",
    "const",
    "volatile",
    "mutable",
    "thread_local",
    "register",
    "typename",
    "__restrict__",
    "__shared__",
    "__constant__",
    "__managed__",
];

/// Type keywords.
const PRIMITIVES: &[&str] = &[
    "void", "bool", "char", "char8_t", "char16_t", "char32_t", "wchar_t", "short", "int", "long",
    "float", "double", "signed", "unsigned", "auto", "__int128", "_Float16", "__fp16", "__bf16",
];

/// Statement keywords after which no declaration head is read.
const NOT_HEADS: &[&str] = &[
    "namespace",
    "using",
    "typedef",
    "static_assert",
    "enum",
    "return",
    "public",
    "private",
    "protected",
    "template",
    "case",
    "default",
    "goto",
    "break",
    "continue",
    "if",
    "else",
    "switch",
    "for",
    "while",
    "do",
    "asm",
    "__asm__",
    "__asm",
    "struct",
    "class",
    "union",
    "concept",
    "requires",
    "delete",
    "new",
    "throw",
    "co_return",
    "co_await",
    "co_yield",
    "sizeof",
];

#[derive(Debug, Clone)]
enum ScopeKind {
    Namespace(String),
    /// A class body, with the class's name (constructors are named after it).
    Class(String),
    Block,
}

struct Scope {
    kind: ScopeKind,
    paren: u32,
}

/// The pass's view of the tokens.
struct Cursor<'a> {
    src: &'a [u8],
    toks: &'a [Token],
    code: &'a [usize],
}

impl Cursor<'_> {
    fn tok(&self, i: usize) -> Option<&Tok> {
        self.code.get(i).map(|&j| &self.toks[j].tok)
    }

    fn ident(&self, i: usize) -> Option<&str> {
        match self.tok(i) {
            Some(Tok::Ident(w)) => Some(w.as_str()),
            _ => None,
        }
    }

    fn is(&self, i: usize, p: &str) -> bool {
        matches!(self.tok(i), Some(Tok::Punct(x)) if *x == p)
    }

    fn range(&self, i: usize) -> Range<usize> {
        self.toks[self.code[i]].range.clone()
    }

    fn span(&self, a: usize, b: usize) -> Range<usize> {
        self.range(a).start..self.range(b).end
    }

    /// The index of the token closing the group opened at `open` (`(`, `[`, `{`, `<`), or
    /// `None` when it is never closed. Angle brackets count only themselves and stop at `;`,
    /// `{` and `}` (a comparison is not a template argument list).
    fn closing(&self, open: usize) -> Option<usize> {
        let (o, c) = match self.tok(open)? {
            Tok::Punct("(") => ("(", ")"),
            Tok::Punct("[") => ("[", "]"),
            Tok::Punct("{") => ("{", "}"),
            Tok::Punct("<") => ("<", ">"),
            _ => return None,
        };
        let mut depth = 0usize;
        for k in open..self.code.len() {
            match self.tok(k)? {
                Tok::Punct(p) if *p == o => depth += 1,
                Tok::Punct(p) if *p == c => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        return Some(k);
                    }
                }
                Tok::Punct(">>") if o == "<" => {
                    depth = depth.saturating_sub(2);
                    if depth == 0 {
                        return Some(k);
                    }
                }
                Tok::Punct(";" | "{" | "}") if o == "<" => return None,
                _ => {}
            }
        }
        None
    }

    /// The byte ranges of the top-level comma-separated items between `open` and `close`.
    fn args(&self, open: usize, close: usize) -> Vec<Range<usize>> {
        self.arg_tokens(open, close, true)
            .into_iter()
            .map(|(a, b)| self.range(a).start..self.range(b - 1).end)
            .collect()
    }

    /// The token ranges (`start..end`) of the non-empty top-level comma-separated items between
    /// `open` and `close`; `angles`: `<`/`>` group as brackets do (template arguments).
    fn arg_tokens(&self, open: usize, close: usize, angles: bool) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        let mut depth = 0usize;
        let mut first = open + 1;
        for k in open + 1..=close {
            match self.tok(k) {
                Some(Tok::Punct("(" | "[" | "{")) => depth += 1,
                Some(Tok::Punct("<")) if angles => depth += 1,
                Some(Tok::Punct(")" | "]" | "}")) if k != close => depth = depth.saturating_sub(1),
                Some(Tok::Punct(">")) if angles && k != close => depth = depth.saturating_sub(1),
                _ => {}
            }
            if k == close || (depth == 0 && self.is(k, ",")) {
                if first < k {
                    out.push((first, k));
                }
                first = k + 1;
            }
        }
        out
    }
}

/// Reads the tokens `toks` of `src` (`code`: the indexes of those outside directives).
/// `defined` names every macro the file defines and every outer specifier macro; `shapes` says
/// what the file's own macros are; `spec` names the specifier macros (elided elsewhere).
/// `gpu` names the macros that may make device code (specifier macros, macros whose
/// replacement list names a GPU qualifier or such a macro): a body that uses one is no host
/// body.
pub(crate) fn scan(
    src: &[u8],
    toks: &[Token],
    code: &[usize],
    defined: &HashSet<&str>,
    spec: &HashSet<&str>,
    shapes: &HashMap<&str, Shape>,
    gpu: &HashSet<&str>,
) -> Vec<Found> {
    let cur = Cursor { src, toks, code };
    let mut out = Vec::new();
    let mut scopes = vec![Scope {
        kind: ScopeKind::Namespace(String::new()),
        paren: 0,
    }];
    let mut at_start = true;
    let mut stmt_start = 0usize;
    // The `)` closing an `if`/`for`/`while`/`switch` head in a block: a statement starts
    // after it (`for (...) UNROLL_4 for (...)`).
    let mut head_close: Option<usize> = None;
    // Where the pass goes on after a statement macro's group closes (see `statement_macro`):
    // the `)` of a group -> the first token of the next group, or the token after the call.
    let mut resume: HashMap<usize, usize> = HashMap::new();
    let mut i = 0usize;
    while i < code.len() {
        if let Some(n) = resume.remove(&i) {
            i = n;
            at_start = true;
            continue;
        }
        let top = scopes.last().map_or(0, |s| s.paren);
        if at_start && top == 0 {
            let kind = scopes.last().map(|s| s.kind.clone());
            let next = match kind {
                Some(ScopeKind::Block) => pragma(&cur, i, defined, shapes, &mut out)
                    .or_else(|| statement_macro(&cur, i, &mut out, &mut resume)),
                Some(ref k) => {
                    let namespaces: Vec<String> = scopes
                        .iter()
                        .filter_map(|s| match &s.kind {
                            ScopeKind::Namespace(n) if !n.is_empty() => Some(n.clone()),
                            _ => None,
                        })
                        .collect();
                    head(&cur, i, k, &namespaces, defined, spec, shapes, &mut out)
                }
                None => None,
            };
            if let Some(n) = next {
                if n > i {
                    i = n;
                    stmt_start = n;
                    continue;
                }
            }
            stmt_start = i;
        }
        at_start = false;
        let in_block = matches!(scopes.last().map(|s| &s.kind), Some(ScopeKind::Block));
        match cur.tok(i) {
            Some(Tok::Punct("(")) => {
                if let Some(s) = scopes.last_mut() {
                    s.paren += 1;
                }
            }
            Some(Tok::Punct(")")) => {
                if let Some(s) = scopes.last_mut() {
                    s.paren = s.paren.saturating_sub(1);
                }
                if head_close == Some(i) {
                    head_close = None;
                    at_start = true;
                }
            }
            Some(Tok::Punct(";")) if top == 0 => at_start = true,
            Some(Tok::Punct(":"))
                if top == 0
                    && i > 0
                    && matches!(cur.ident(i - 1), Some("public" | "private" | "protected")) =>
            {
                at_start = true;
            }
            // `case X:`, `default:`, `label:` in a block: a statement follows.
            Some(Tok::Punct(":"))
                if top == 0
                    && in_block
                    && (cur.ident(stmt_start) == Some("case")
                        || (i == stmt_start + 1 && cur.ident(stmt_start).is_some())) =>
            {
                at_start = true;
            }
            Some(Tok::Ident(w)) if top == 0 && in_block => match w.as_str() {
                "if" | "for" | "while" | "switch" if cur.is(i + 1, "(") => {
                    head_close = cur.closing(i + 1);
                }
                // `if NCCL_IF_CONSTEXPR (c) {`: a name between `if` and its condition is a
                // macro (`constexpr` or nothing); the parse skips it.
                "if" if cur.is(i + 2, "(")
                    && matches!(cur.ident(i + 1), Some(m) if m != "constexpr" && m != "consteval") =>
                {
                    if let Some(m) = cur.ident(i + 1) {
                        out.push(Found::Invocation {
                            range: cur.range(i + 1),
                            name: m.to_string(),
                        });
                    }
                    head_close = cur.closing(i + 2);
                }
                "else" | "do" => at_start = true,
                _ => {}
            },
            Some(Tok::Punct("{")) => {
                let kind = if top > 0 {
                    ScopeKind::Block
                } else {
                    brace_kind(&cur, stmt_start, i, in_block)
                };
                if top == 0 && !in_block && matches!(kind, ScopeKind::Block) {
                    if let Some(found) = host_body(&cur, stmt_start, i, defined, spec, gpu) {
                        out.push(found);
                    }
                }
                scopes.push(Scope { kind, paren: 0 });
                at_start = true;
            }
            Some(Tok::Punct("}")) => {
                if scopes.len() > 1 {
                    scopes.pop();
                }
                at_start = true;
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// Identifiers that make a function GPU code, or may.
pub(crate) const GPU_WORDS: &[&str] = &[
    "__device__",
    "__global__",
    "__host__",
    "__launch_bounds__",
    "__shared__",
    "__constant__",
];

/// Names before `(` that are no function's.
const NOT_FUNCTION_NAMES: &[&str] = &[
    "if", "while", "for", "switch", "catch", "return", "throw", "case", "new", "delete",
];

/// The `{` at `open`, at namespace or class scope, opening the statement that began at
/// `start`: a host function's body ([`Found::HostBody`]) when the head is `... NAME(...)`
/// followed only by `const`, `volatile`, `&`, `&&`, `override`, `final` (no constructor
/// initialisers, no trailing return type, no `noexcept(...)`), names no GPU qualifier, no
/// macro of the file or the unit (`defined`, `spec`), has no `=` outside parentheses, and
/// the body holds no `#` (a directive could unbalance its braces) and no device code: no GPU
/// qualifier or macro that may make one (`gpu`: a `[] __device__ (...)` lambda, a local class
/// with device members), no lambda qualified by an unknown name (`[] DEVICE_FN (...)`).
fn host_body(
    cur: &Cursor<'_>,
    start: usize,
    open: usize,
    defined: &HashSet<&str>,
    spec: &HashSet<&str>,
    gpu: &HashSet<&str>,
) -> Option<Found> {
    let mut k = open.checked_sub(1)?;
    while k > start
        && (matches!(
            cur.ident(k),
            Some("const" | "volatile" | "override" | "final")
        ) || cur.is(k, "&")
            || cur.is(k, "&&"))
    {
        k -= 1;
    }
    if k <= start || !cur.is(k, ")") {
        return None;
    }
    let mut depth = 0usize;
    let mut p = k;
    loop {
        if cur.is(p, ")") {
            depth += 1;
        } else if cur.is(p, "(") {
            depth -= 1;
            if depth == 0 {
                break;
            }
        }
        if p == start {
            return None;
        }
        p -= 1;
    }
    let name_at = p.checked_sub(1).filter(|&n| n >= start)?;
    let name = cur.ident(name_at)?;
    if NOT_FUNCTION_NAMES.contains(&name) || NOT_MACRO_CALLS.contains(&name) {
        return None;
    }
    let mut from = start;
    while cur.ident(from) == Some("template") && cur.is(from + 1, "<") {
        from = cur.closing(from + 1).filter(|&c| c < name_at)? + 1;
    }
    // A string in the parameters: a macro call (`TEST_CASE("name") { ... }`).
    if (p..k).any(|j| matches!(cur.tok(j), Some(Tok::Str))) {
        return None;
    }
    // The declaration specifiers name one type at most: `MACRO void f()`, `OPUS_D
    // opus::index_t f()` and `DS_D_INLINE T g()` name two, of which one is a macro.
    let mut decl = name_at;
    while decl > from + 1 && cur.is(decl - 1, "::") {
        let mut q = decl - 2;
        if cur.is(q, ">") || cur.is(q, ">>") {
            let mut depth = 0i32;
            loop {
                match cur.tok(q)? {
                    Tok::Punct(">") => depth += 1,
                    Tok::Punct(">>") => depth += 2,
                    Tok::Punct("<") => depth -= 1,
                    _ => {}
                }
                if depth <= 0 || q <= from {
                    break;
                }
                q -= 1;
            }
            q = q.checked_sub(1)?;
        }
        if cur.ident(q).is_none() || q < from {
            break;
        }
        decl = q;
    }
    if type_units(cur, from, decl)? > 1 {
        return None;
    }
    let mut paren = 0usize;
    for j in from..=k {
        match cur.tok(j)? {
            Tok::Ident(w) => {
                let w = w.as_str();
                if GPU_WORDS.contains(&w) || defined.contains(w) || spec.contains(w) {
                    return None;
                }
            }
            Tok::Punct("(") => paren += 1,
            Tok::Punct(")") => paren = paren.saturating_sub(1),
            Tok::Punct("=" | ":" | "{" | "}" | ";" | "[" | "]") if paren == 0 => return None,
            _ => {}
        }
    }
    let close = cur.closing(open)?;
    for j in open + 1..close {
        match cur.tok(j)? {
            Tok::Ident(w) if GPU_WORDS.contains(&w.as_str()) || gpu.contains(w.as_str()) => {
                return None
            }
            // `] NAME`: a lambda's introducer then a qualifier (`delete[] p` aside).
            Tok::Punct("]")
                if matches!(cur.tok(j + 1), Some(Tok::Ident(w))
                    if !matches!(w.as_str(), "mutable" | "constexpr" | "consteval" | "noexcept"))
                    && !(cur.is(j - 1, "[")
                        && cur.ident(j.saturating_sub(2)) == Some("delete")) =>
            {
                return None
            }
            _ => {}
        }
    }
    let body = cur.range(open).end..cur.range(close).start;
    if memchr::memchr(b'#', &cur.src[body.clone()]).is_some() {
        return None;
    }
    // The head from the end of what precedes it: specifier macros elided before the first
    // token this pass sees (`ROCPRIM_DEVICE unsigned f()`) are in it.
    let head_start = start.checked_sub(1).map_or(0, |b| cur.range(b).end);
    Some(Found::HostBody {
        head: head_start..cur.range(open).start,
        body,
    })
}

/// How many types the declaration specifiers `from..end` name (type keywords together are
/// one, a qualified or templated name is one; specifiers, `*`, `&` and strings none); `None`
/// when they hold anything else.
fn type_units(cur: &Cursor<'_>, from: usize, end: usize) -> Option<usize> {
    let mut units = 0usize;
    let mut in_primitive = false;
    let mut j = from;
    while j < end {
        match cur.tok(j)? {
            Tok::Ident(w) if SPECIFIERS.contains(&w.as_str()) => in_primitive = false,
            Tok::Ident(w) if matches!(w.as_str(), "struct" | "class" | "union" | "enum") => {
                in_primitive = false
            }
            Tok::Ident(w) if PRIMITIVES.contains(&w.as_str()) => {
                if !in_primitive {
                    units += 1;
                }
                in_primitive = true;
            }
            Tok::Ident(_) | Tok::Punct("::") => {
                in_primitive = false;
                units += 1;
                // The rest of a qualified or templated name.
                // `q` is the last token of it read.
                let mut q = j;
                loop {
                    let closed = cur.is(q, ">") || cur.is(q, ">>");
                    let name_follows = cur.is(q, "::") && cur.ident(q + 1).is_some();
                    let colons_follow = (cur.ident(q).is_some() || closed) && cur.is(q + 1, "::");
                    if name_follows || colons_follow {
                        q += 1;
                    } else if cur.ident(q).is_some() && cur.is(q + 1, "<") {
                        q = cur.closing(q + 1)?;
                    } else {
                        break;
                    }
                    if q + 1 >= end {
                        break;
                    }
                }
                j = q;
            }
            Tok::Punct("*" | "&" | "&&") | Tok::Str => in_primitive = false,
            _ => return None,
        }
        j += 1;
    }
    Some(units)
}

/// What the `{` at `open` opens, from the statement that began at `start`.
fn brace_kind(cur: &Cursor<'_>, start: usize, open: usize, in_block: bool) -> ScopeKind {
    let mut k = start;
    // Template headers.
    while cur.ident(k) == Some("template") && cur.is(k + 1, "<") {
        match cur.closing(k + 1) {
            Some(c) if c < open => k = c + 1,
            _ => break,
        }
    }
    match cur.ident(k) {
        Some("namespace") if !in_block => {
            let mut name = String::new();
            for j in k + 1..open {
                match cur.tok(j) {
                    Some(Tok::Ident(w)) => name.push_str(w),
                    Some(Tok::Punct("::")) => name.push_str("::"),
                    _ => {}
                }
            }
            if name.is_empty() {
                name = "(anonymous namespace)".into();
            }
            return ScopeKind::Namespace(name);
        }
        // `extern "C" { ... }`, not `extern "C" void f() { ... }`.
        Some("extern")
            if !in_block && matches!(cur.tok(k + 1), Some(Tok::Str)) && open == k + 2 =>
        {
            return ScopeKind::Namespace(String::new());
        }
        Some("enum") => return ScopeKind::Block,
        _ => {}
    }
    let mut angle = 0i32;
    let mut class_name = None;
    let mut is_class = false;
    let mut skip_to = k;
    for j in k..open {
        if j < skip_to {
            continue;
        }
        match cur.tok(j) {
            // Between `struct` and the class's name, `NAME(...)` is an alignment or an
            // attribute (`struct alignas(16) S {`, `struct MY_ALIGN(16) S {`), not a
            // function's parameters: tiny-cuda-nn's `struct alignas(16) mma_frag` lost its
            // members.
            Some(Tok::Punct("("))
                if angle == 0
                    && j >= 2
                    && cur.ident(j - 1).is_some()
                    && matches!(cur.ident(j - 2), Some("struct" | "class" | "union")) =>
            {
                match cur.closing(j) {
                    Some(c) if c < open => {
                        class_name = None;
                        skip_to = c + 1;
                    }
                    _ => return ScopeKind::Block,
                }
            }
            Some(Tok::Punct("(")) if angle == 0 => return ScopeKind::Block,
            Some(Tok::Punct("=")) if angle == 0 => return ScopeKind::Block,
            Some(Tok::Punct("<")) => angle += 1,
            Some(Tok::Punct(">")) => angle -= 1,
            Some(Tok::Punct(">>")) => angle -= 2,
            Some(Tok::Punct(":")) if angle == 0 => break, // base clause
            Some(Tok::Ident(w)) if angle == 0 => {
                if matches!(w.as_str(), "struct" | "class" | "union") {
                    is_class = true;
                } else if is_class && !NOT_MACRO_CALLS.contains(&w.as_str()) {
                    class_name = Some(w.clone());
                }
            }
            _ => {}
        }
    }
    if is_class {
        ScopeKind::Class(class_name.unwrap_or_default())
    } else {
        ScopeKind::Block
    }
}

/// A unit of a declaration head.
#[derive(Debug)]
enum Unit {
    /// A declaration specifier that names no type (`static`, `__device__`).
    Specifier,
    /// A type keyword, `decltype(...)` or an elaborated type (`struct S`).
    Type,
    /// A plain identifier (token index).
    Word(usize),
    /// A qualified name or a name with template arguments: a type.
    Named,
    /// `NAME(...)`: first and last token.
    Call(usize, usize),
}

/// At the start of a declaration in a namespace or class (`i`): a macro invocation to elide or
/// expand, or the unknown specifiers of a function declaration. Returns where to go on (past
/// an elided invocation), or `None`.
#[allow(clippy::too_many_arguments)]
fn head(
    cur: &Cursor<'_>,
    i: usize,
    scope: &ScopeKind,
    namespaces: &[String],
    defined: &HashSet<&str>,
    spec: &HashSet<&str>,
    shapes: &HashMap<&str, Shape>,
    out: &mut Vec<Found>,
) -> Option<usize> {
    let mut j = i;
    loop {
        if cur.ident(j) == Some("template") && cur.is(j + 1, "<") {
            j = cur.closing(j + 1)? + 1;
        } else if cur.is(j, "[") && cur.is(j + 1, "[") {
            // An attribute in front: `[[nodiscard]] _CCCL_DEVICE T f(...)`.
            j = cur.closing(j)? + 1;
        } else if j > i && cur.ident(j) == Some("requires") {
            // A template's requires-clause: `template <class T> requires C<T> && (N > 0)`.
            let end = requires_clause_end(cur, j + 1)?;
            out.push(Found::Clause {
                range: cur.span(j, end - 1),
            });
            j = end;
        } else {
            break;
        }
    }
    let first = cur.ident(j)?;
    // `struct MY_ALIGN(16) S {`: a macro call between the keyword and the class's name (an
    // alignment or an attribute), which the grammar cannot read.
    if matches!(first, "struct" | "class" | "union") {
        if let Some(w) = cur.ident(j + 1).filter(|w| !NOT_MACRO_CALLS.contains(w)) {
            if cur.is(j + 2, "(") {
                if let Some(close) = cur.closing(j + 2).filter(|&c| cur.ident(c + 1).is_some()) {
                    out.push(Found::Invocation {
                        range: cur.span(j + 1, close),
                        name: w.to_string(),
                    });
                }
            }
        }
    }
    if NOT_HEADS.contains(&first) {
        return None;
    }
    let in_namespace = matches!(scope, ScopeKind::Namespace(_));
    if in_namespace && j == i {
        if let Some(end) = bare_macros(cur, j, defined, spec, shapes) {
            for k in j..end {
                if let Some(name) = cur.ident(k) {
                    out.push(Found::Invocation {
                        range: cur.span(k, k),
                        name: name.to_string(),
                    });
                }
            }
            return Some(end);
        }
    }
    if in_namespace && j == i && cur.is(j + 1, "(") && !NOT_MACRO_CALLS.contains(&first) {
        if let Some(close) = cur.closing(j + 1) {
            let expansion = |block: Option<Range<usize>>, end: usize| Found::Expansion {
                range: cur.span(j, end),
                name: first.to_string(),
                invocation: cur.span(j, close),
                args: cur.args(j + 1, close),
                block,
                namespaces: namespaces.to_vec(),
            };
            match shapes.get(first) {
                Some(Shape::Definition { .. }) => {
                    out.push(expansion(None, close));
                    return Some(close + 1);
                }
                Some(Shape::Header { .. }) if cur.is(close + 1, "{") => {
                    let end = cur.closing(close + 1)?;
                    out.push(expansion(Some(cur.span(close + 1, end)), end));
                    return Some(end + 1);
                }
                _ => {}
            }
            let starts_declaration = match cur.tok(close + 1) {
                None => true,
                Some(Tok::Punct("}")) => true,
                Some(Tok::Punct("[")) => cur.is(close + 2, "["),
                Some(Tok::Ident(w)) => !POST_DECLARATOR.contains(&w.as_str()),
                _ => false,
            };
            // (A specifier macro's use is elided by the first pass, arguments included.) A
            // macro of the file is a call (`INSTANTIATE(float)`); a name defined nowhere may
            // as well be a specifier of the declaration that follows (`KERNEL_LB(256) void
            // k()`): unknown, it qualifies it.
            if starts_declaration && !spec.contains(first) {
                let range = cur.span(j, close);
                let name = first.to_string();
                out.push(if defined.contains(first) {
                    Found::Invocation { range, name }
                } else {
                    Found::Unknown { range, name }
                });
                return Some(close + 1);
            }
        }
    }
    // The declaration's specifiers, up to the declarator's name and its `(`.
    let mut units: Vec<Unit> = Vec::new();
    let mut k = j;
    let mut ctor_like = false;
    let mut name_at = None;
    while k < cur.code.len() && k - j < MAX_HEAD {
        match cur.tok(k)? {
            Tok::Ident(w) if w == "operator" => {
                ctor_like = is_conversion(cur, k); // no return type
                name_at = Some(k);
                break;
            }
            Tok::Punct("~") if cur.ident(k + 1).is_some() && cur.is(k + 2, "(") => {
                ctor_like = true;
                name_at = Some(k + 1);
                break;
            }
            Tok::Punct("*" | "&" | "&&") | Tok::Str => k += 1,
            Tok::Punct("[") if cur.is(k + 1, "[") => k = cur.closing(k)? + 1,
            Tok::Punct("::") => {
                // `::ns::T`: a qualified type.
                k = qualified_end(cur, k + 1);
                units.push(Unit::Named);
            }
            Tok::Ident(w) => {
                let w = w.as_str();
                if cur.is(k + 1, "(") {
                    let close = cur.closing(k + 1)?;
                    if NOT_MACRO_CALLS.contains(&w) || spec.contains(w) {
                        if w == "decltype" {
                            units.push(Unit::Type);
                        } else {
                            units.push(Unit::Specifier);
                        }
                        k = close + 1;
                        continue;
                    }
                    // `MACRO(args) void f(...)`: a function-like specifier; else the name.
                    let continues = matches!(cur.tok(close + 1), Some(Tok::Ident(x))
                        if !POST_DECLARATOR.contains(&x.as_str()));
                    if continues {
                        units.push(Unit::Call(k, close));
                        k = close + 1;
                        continue;
                    }
                    name_at = Some(k);
                    break;
                }
                if cur.is(k + 1, "::") || cur.is(k + 1, "<") {
                    let end = qualified_end(cur, k);
                    if cur.is(end, "(") && end > k {
                        // The declarator: `S::m(`, `f<T>(`; `S::S(` and `S::~S(` are an
                        // out-of-line constructor and destructor.
                        let leaf_at = end - 1;
                        let leaf = cur.ident(leaf_at);
                        let dtor = leaf_at > 0 && cur.is(leaf_at - 1, "~");
                        let ctor = leaf.is_some() && (k..leaf_at).any(|x| cur.ident(x) == leaf);
                        ctor_like |= dtor || ctor;
                        name_at = Some(leaf_at);
                        break;
                    }
                    if cur.is(end, "::") && cur.ident(end + 1) == Some("operator") {
                        ctor_like = is_conversion(cur, end + 1);
                        name_at = Some(end + 1);
                        break;
                    }
                    units.push(Unit::Named);
                    k = end;
                    continue;
                }
                if SPECIFIERS.contains(&w) || spec.contains(w) {
                    units.push(Unit::Specifier);
                } else if PRIMITIVES.contains(&w) {
                    units.push(Unit::Type);
                } else if matches!(w, "struct" | "class" | "union" | "enum") {
                    units.push(Unit::Type);
                    k = qualified_end(cur, k + 1);
                    continue;
                } else {
                    units.push(Unit::Word(k));
                }
                k += 1;
            }
            _ => return None,
        }
    }
    let name_at = name_at?;
    if cur.is(name_at + 1, "(") {
        if let Some(close) = cur.closing(name_at + 1) {
            parameter_unknowns(cur, name_at + 1, close, defined, spec, out);
        }
    }
    if let ScopeKind::Class(c) = scope {
        ctor_like |= !c.is_empty() && cur.ident(name_at) == Some(c.as_str());
    }
    let type_seen = units.iter().any(|u| matches!(u, Unit::Type | Unit::Named));
    // Without a type keyword the last plain word is the return type (`Foo f()`), unless the
    // function has none (constructors, destructors, conversion operators).
    let return_type = if type_seen || ctor_like {
        None
    } else {
        units.iter().rposition(|u| matches!(u, Unit::Word(_)))
    };
    for (n, u) in units.iter().enumerate() {
        if Some(n) == return_type {
            continue;
        }
        let (a, b) = match *u {
            Unit::Word(a) => (a, a),
            Unit::Call(a, b) => (a, b),
            _ => continue,
        };
        let Some(name) = cur.ident(a) else { continue };
        if defined.contains(name) {
            continue;
        }
        out.push(Found::Unknown {
            range: cur.span(a, b),
            name: name.to_string(),
        });
    }
    None
}

/// At most this many object-like macros in a row are read as [`bare_macros`].
const MAX_BARE: usize = 4;

/// Words that open a declaration no type or specifier can stand in front of: a name right
/// before one is no part of it.
const OPENS_DECLARATION: &[&str] = &["namespace", "template", "using", "typedef", "static_assert"];

/// At the start of a declaration in a namespace (`i`): object-like macros written alone, in
/// front of something no declaration specifier can precede: `BEGIN_ROCPRIM_NAMESPACE` (which
/// expands to `namespace rocprim {`) before `namespace detail {` or `template<...>`, before a
/// class or enum definition (`CUB_NAMESPACE_BEGIN struct S {`, `... enum E {`), before a `}` or at the end of the
/// file (`END_ROCPRIM_NAMESPACE`). The grammar reads `NAME namespace detail { ... }` as a
/// function named `namespace` whose body is never lowered: every function in it was lost.
/// Each name is a macro of the file or the unit (`defined`) or spelt as one, and no specifier
/// macro (`spec`, elided elsewhere). A namespace macro ([`Shape::Namespace`]) is one whatever
/// follows (`END_LIB_NAMESPACE __global__ void k()`). Returns the index after the last name.
fn bare_macros(
    cur: &Cursor<'_>,
    i: usize,
    defined: &HashSet<&str>,
    spec: &HashSet<&str>,
    shapes: &HashMap<&str, Shape>,
) -> Option<usize> {
    if let Some(w) = cur.ident(i) {
        if matches!(shapes.get(w), Some(Shape::Namespace)) && !cur.is(i + 1, "(") {
            return Some(i + 1);
        }
    }
    let mut k = i;
    while k - i < MAX_BARE {
        match cur.ident(k) {
            Some(w)
                if !spec.contains(w)
                    && (crate::macro_like(w) || defined.contains(w))
                    && !cur.is(k + 1, "(")
                    && !cur.is(k + 1, "::")
                    && !cur.is(k + 1, "<") =>
            {
                k += 1;
            }
            _ => break,
        }
        let opens = match cur.tok(k) {
            None | Some(Tok::Punct("}")) => true,
            Some(Tok::Ident(w)) if OPENS_DECLARATION.contains(&w.as_str()) => true,
            Some(Tok::Ident(w)) if matches!(w.as_str(), "struct" | "class" | "union") => {
                class_definition(cur, k)
            }
            // `CUB_NAMESPACE_BEGIN enum BlockHistogramMemoryPreference {`.
            Some(Tok::Ident(w)) if w == "enum" => {
                let n = k + 1 + usize::from(matches!(cur.ident(k + 1), Some("class" | "struct")));
                cur.ident(n).is_some() && (cur.is(n + 1, "{") || cur.is(n + 1, ":"))
            }
            _ => false,
        };
        if opens {
            return Some(k);
        }
    }
    None
}

/// True when the `struct`/`class`/`union` at `k` begins a class definition: its (qualified)
/// name, then `{`, `:` or `final`.
fn class_definition(cur: &Cursor<'_>, k: usize) -> bool {
    let mut n = k + 1;
    // Attributes and alignment: `struct __align__(16) S {`, `struct alignas(8) S {`.
    while let Some(w) = cur.ident(n) {
        if cur.is(n + 1, "(") && NOT_MACRO_CALLS.contains(&w) {
            match cur.closing(n + 1) {
                Some(c) => n = c + 1,
                None => return false,
            }
        } else {
            break;
        }
    }
    if cur.ident(n).is_none() {
        return false;
    }
    let end = qualified_end(cur, n);
    cur.is(end, "{") || cur.is(end, ":") || cur.ident(end) == Some("final")
}

/// True when the `operator` at `k` names a conversion operator (`operator T*`, `operator
/// const T&`), which has no return type, rather than an operator symbol (`operator=`,
/// `operator()`, `operator new`).
fn is_conversion(cur: &Cursor<'_>, k: usize) -> bool {
    matches!(cur.ident(k + 1), Some(w) if !matches!(w, "new" | "delete" | "co_await"))
}

/// Unknown qualifier macros in the parameters between `open` and `close` (`real* RESTRICT
/// a`, `MY_CONST float b`): in a parameter whose last word is its name, a plain word of its
/// type beyond the type itself (the first plain word when no type keyword is written).
fn parameter_unknowns(
    cur: &Cursor<'_>,
    open: usize,
    close: usize,
    defined: &HashSet<&str>,
    spec: &HashSet<&str>,
    out: &mut Vec<Found>,
) {
    let mut k = open + 1;
    while k < close {
        // One parameter: up to the next top-level `,` or the `)`.
        let mut end = k;
        let mut depth = 0usize;
        while end < close {
            match cur.tok(end) {
                Some(Tok::Punct("(" | "[" | "<" | "{")) => depth += 1,
                Some(Tok::Punct(")" | "]" | ">" | "}")) => depth = depth.saturating_sub(1),
                Some(Tok::Punct(",")) if depth == 0 => break,
                Some(Tok::Punct("=")) if depth == 0 => break, // a default value follows
                _ => {}
            }
            end += 1;
        }
        let mut words = Vec::new();
        let mut typed = false;
        let mut plain = true;
        let mut j = k;
        while j < end {
            match cur.tok(j) {
                Some(Tok::Ident(w)) if cur.is(j + 1, "::") || cur.is(j + 1, "<") => {
                    typed = true;
                    j = qualified_end(cur, j);
                    continue;
                }
                Some(Tok::Ident(w)) => {
                    let w = w.as_str();
                    if matches!(w, "struct" | "class" | "union" | "enum" | "typename") {
                        // The name after it is the type.
                        typed = true;
                        j = qualified_end(cur, j + 1);
                        continue;
                    } else if PRIMITIVES.contains(&w) {
                        typed = true;
                    } else if !SPECIFIERS.contains(&w) && !spec.contains(w) {
                        words.push(j);
                    }
                }
                Some(Tok::Punct("*" | "&" | "&&")) => {}
                _ => plain = false, // arrays, function pointers, packs: left alone
            }
            j += 1;
        }
        // The last word is the parameter's name; before it, the type (unless a keyword or a
        // qualified name typed it) and then the unknown qualifiers.
        if plain && words.len() >= 2 {
            let first = usize::from(!typed);
            for &w in &words[first..words.len() - 1] {
                let Some(name) = cur.ident(w) else { continue };
                if !defined.contains(name) {
                    out.push(Found::Unknown {
                        range: cur.range(w),
                        name: name.to_string(),
                    });
                }
            }
        }
        k = end + 1;
        // Skip a default value.
        if cur.is(end, "=") {
            let mut depth = 0usize;
            while k < close {
                match cur.tok(k) {
                    Some(Tok::Punct("(" | "[" | "<" | "{")) => depth += 1,
                    Some(Tok::Punct(")" | "]" | ">" | "}")) => depth = depth.saturating_sub(1),
                    Some(Tok::Punct(",")) if depth == 0 => break,
                    _ => {}
                }
                k += 1;
            }
            k += 1;
        }
    }
}

/// The index just past a qualified name starting at `k` (`a::b<T>::c`), template argument
/// lists included.
fn qualified_end(cur: &Cursor<'_>, k: usize) -> usize {
    let mut k = k;
    for _ in 0..MAX_HEAD {
        if cur.ident(k).is_none() {
            return k;
        }
        k += 1;
        if cur.is(k, "<") {
            match cur.closing(k) {
                Some(c) => k = c + 1,
                None => return k,
            }
        }
        if cur.is(k, "::") && cur.ident(k + 1).is_some_and(|w| w != "operator") {
            k += 1;
        } else if cur.is(k, "::") && cur.is(k + 1, "~") && cur.ident(k + 2).is_some() {
            k += 2;
        } else {
            return k;
        }
    }
    k
}

/// The end of a requires-clause's constraint whose first token is `k`: primaries (a
/// parenthesised expression, a concept or trait with its arguments, `true`) joined by `&&`
/// and `||`.
fn requires_clause_end(cur: &Cursor<'_>, k: usize) -> Option<usize> {
    let mut k = k;
    for _ in 0..MAX_HEAD {
        if cur.is(k, "(") {
            k = cur.closing(k)? + 1;
        } else if cur.ident(k).is_some() || cur.is(k, "::") {
            let from = if cur.is(k, "::") { k + 1 } else { k };
            k = qualified_end(cur, from);
        } else {
            return None;
        }
        if !(cur.is(k, "&&") || cur.is(k, "||")) {
            return Some(k);
        }
        k += 1;
    }
    None
}

/// At the start of a statement in a block (`i`): a pragma macro (or `__pragma(...)`) right
/// before a loop. Returns where the loop starts.
fn pragma(
    cur: &Cursor<'_>,
    i: usize,
    defined: &HashSet<&str>,
    shapes: &HashMap<&str, Shape>,
    out: &mut Vec<Found>,
) -> Option<usize> {
    let name = cur.ident(i)?;
    if NOT_HEADS.contains(&name)
        || SPECIFIERS.contains(&name)
        || PRIMITIVES.contains(&name)
        || name == "_Pragma"
    {
        return None;
    }
    let end = if cur.is(i + 1, "(") {
        cur.closing(i + 1)?
    } else {
        i
    };
    // Statements among the arguments (`NV_IF_TARGET(C, (x;))` before a loop): no pragma.
    if (i + 1..end).any(|k| cur.is(k, ";") || cur.is(k, "{")) {
        return None;
    }
    let before_loop = matches!(cur.ident(end + 1), Some("for" | "while" | "do"));
    // Two pragma macros in a row: the second is read next.
    let before_pragma = !before_loop
        && matches!(cur.ident(end + 1), Some(w) if !NOT_HEADS.contains(&w))
        && matches!(cur.ident(end + 2), Some("for" | "while" | "do"));
    if !before_loop && !before_pragma {
        return None;
    }
    let range = cur.span(i, end);
    if name == "__pragma" && end > i {
        let inner = cur.range(i + 1).end..cur.range(end).start;
        let text = String::from_utf8_lossy(&cur.src[inner]).into_owned();
        out.push(Found::Pragma {
            range,
            name: name.into(),
            hint: parse_pragma_text(&text, |_| None),
            unknown: false,
        });
        return Some(end + 1);
    }
    match shapes.get(name) {
        Some(Shape::Pragma(h)) => out.push(Found::Pragma {
            range,
            name: name.into(),
            hint: *h,
            unknown: false,
        }),
        Some(_) => return None,
        None if defined.contains(name) => return None,
        None => {
            let upper = name.to_ascii_uppercase();
            let hint = if upper.contains("NO_UNROLL") || upper.contains("NOUNROLL") {
                UnrollHint::NoUnroll
            } else {
                UnrollHint::Unroll(None)
            };
            out.push(Found::Pragma {
                range,
                name: name.into(),
                hint: Some((hint, PragmaSyntax::Unroll)),
                unknown: true,
            });
        }
    }
    Some(end + 1)
}

/// At the start of a statement in a block (`i`): a macro call with statement groups among its
/// arguments ([`Found::Statements`]): `NAME(` then arguments, at least one of them `( ... ; )`
/// (statements in parentheses: a top-level `;` inside or a loop, `if` or `switch` first, the
/// last token `;` or `}`), any other
/// parenthesised argument empty or ending the same way (`({ ... })` is a block). Such an
/// argument cannot be an expression, so no function call looks like this. Returns where the
/// pass goes on (the first group's first token), and tells `resume` where to go after each
/// group.
fn statement_macro(
    cur: &Cursor<'_>,
    i: usize,
    out: &mut Vec<Found>,
    resume: &mut HashMap<usize, usize>,
) -> Option<usize> {
    let name = cur.ident(i)?;
    if NOT_HEADS.contains(&name)
        || SPECIFIERS.contains(&name)
        || PRIMITIVES.contains(&name)
        || NOT_MACRO_CALLS.contains(&name)
        || !cur.is(i + 1, "(")
    {
        return None;
    }
    let close = cur.closing(i + 1)?;
    let depth_change = |k: usize| match cur.tok(k) {
        Some(Tok::Punct("(" | "[" | "{")) => 1,
        Some(Tok::Punct(")" | "]" | "}")) => -1,
        _ => 0,
    };
    let mut groups: Vec<(usize, usize)> = Vec::new();
    let mut statements = false;
    for (start, end) in cur.arg_tokens(i + 1, close, false) {
        if cur.is(start, "(") && cur.closing(start) == Some(end - 1) {
            let (open, shut) = (start, end - 1);
            if shut > open + 1 {
                if !matches!(cur.tok(shut - 1), Some(Tok::Punct(";" | "}"))) {
                    return None;
                }
                statements |= matches!(
                    cur.ident(open + 1),
                    Some("for" | "while" | "do" | "if" | "switch" | "try")
                );
                let mut d = 0i32;
                for k in open + 1..shut {
                    d += depth_change(k);
                    statements |= d == 0 && cur.is(k, ";");
                }
            }
            groups.push((open, shut));
        }
    }
    if !statements {
        return None;
    }
    let mut pieces = Vec::with_capacity(groups.len() + 1);
    let mut from = i;
    for (g, &(open, shut)) in groups.iter().enumerate() {
        pieces.push(cur.span(from, open));
        from = shut;
        resume.insert(shut, groups.get(g + 1).map_or(close + 1, |next| next.0 + 1));
    }
    pieces.push(cur.span(from, close));
    out.push(Found::Statements {
        pieces,
        name: name.to_string(),
        call: cur.span(i, close),
    });
    Some(groups[0].0 + 1)
}

/// The [`Shape`] of a macro with these parameters (`None`: object-like) and replacement
/// tokens (of `src`, a whole-file tokenization); `device` tells a device qualifier (a
/// specifier macro that gives one included).
pub(crate) fn shape(
    src: &[u8],
    params: Option<&[String]>,
    body: &[Token],
    device: impl Fn(&str) -> bool,
) -> Shape {
    let Some(first) = body.first() else {
        // An object-like macro that expands to nothing (`#define TCNN_PRAGMA_UNROLL` in the
        // host branch of `#if defined(__CUDA_ARCH__)`): before a loop, a pragma that says
        // nothing.
        return match params {
            None => Shape::Pragma(None),
            Some(_) => Shape::Other,
        };
    };
    if let Tok::Ident(w) = &first.tok {
        if (w == "_Pragma" || w == "__pragma")
            && body.get(1).map(|t| &t.tok) == Some(&Tok::Punct("("))
        {
            let text = if w == "_Pragma" {
                body.iter()
                    .find_map(|t| lex::literal_contents(src, t))
                    .map(|(_, r)| String::from_utf8_lossy(&src[r]).replace("\\\"", "\""))
            } else {
                let last = body.len() - 1;
                (last > 1).then(|| {
                    String::from_utf8_lossy(&src[body[1].range.end..body[last].range.start])
                        .into_owned()
                })
            };
            return Shape::Pragma(text.and_then(|t| parse_pragma_text(&t, |_| None)));
        }
    }
    let Some(params) = params else {
        return Shape::Other;
    };
    let qualified = body
        .iter()
        .any(|t| matches!(&t.tok, Tok::Ident(w) if device(w)));
    let Some(paren) = body.iter().position(|t| t.tok == Tok::Punct("(")) else {
        return Shape::Other;
    };
    if !qualified || paren == 0 {
        return Shape::Other;
    }
    let range = first.range.start..body[body.len() - 1].range.end;
    let brace = body.iter().position(|t| t.tok == Tok::Punct("{"));
    let last = &body[body.len() - 1].tok;
    match brace {
        Some(b) if b > paren && *last == Tok::Punct("}") => Shape::Definition {
            params: params.to_vec(),
            body: range,
        },
        None if matches!(last, Tok::Punct(")"))
            || matches!(last, Tok::Ident(w) if w == "const") =>
        {
            Shape::Header {
                params: params.to_vec(),
                body: range,
            }
        }
        _ => Shape::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(src: &str) -> Vec<String> {
        let toks = lex::tokenize(src.as_bytes(), 0..src.len());
        let code: Vec<usize> = (0..toks.len()).collect();
        let out = scan(
            src.as_bytes(),
            &toks,
            &code,
            &HashSet::new(),
            &HashSet::new(),
            &HashMap::new(),
            &HashSet::new(),
        );
        out.iter()
            .filter_map(|f| match f {
                Found::Unknown { name, .. } => Some(format!("unknown {name}")),
                Found::Pragma { name, .. } => Some(format!("pragma {name}")),
                Found::Invocation { name, .. } => Some(format!("invocation {name}")),
                Found::Expansion { name, .. } => Some(format!("expansion {name}")),
                Found::Clause { .. } => Some("clause".to_string()),
                Found::Statements { name, .. } => Some(format!("statements {name}")),
                Found::HostBody { .. } => None,
            })
            .collect()
    }

    /// The host bodies `scan` finds in `src` (`defined`: the macros it knows), as text.
    fn host(src: &str, defined: &[&str]) -> Vec<String> {
        let toks = lex::tokenize(src.as_bytes(), 0..src.len());
        let code: Vec<usize> = (0..toks.len()).collect();
        let defined: HashSet<&str> = defined.iter().copied().collect();
        let gpu: HashSet<&str> = ["DEV_LAMBDA"].into_iter().collect();
        scan(
            src.as_bytes(),
            &toks,
            &code,
            &defined,
            &HashSet::new(),
            &HashMap::new(),
            &gpu,
        )
        .into_iter()
        .filter_map(|f| match f {
            Found::HostBody { body, .. } => Some(src[body].trim().to_string()),
            _ => None,
        })
        .collect()
    }

    #[test]
    fn host_bodies() {
        // Plain host functions, members, templates, `extern "C"`, in namespaces.
        assert_eq!(
            host(
                "int main(int argc, char** argv) { return run(argc); }\n\
                 namespace a { static void f(float* p) const & { p[0] = 1; } }\n\
                 struct S { void m() { x++; } int x; };\n\
                 template <class T, int N = 4> T g(T v) { return v * N; }\n\
                 extern \"C\" void c() { z(); }",
                &[]
            ),
            [
                "return run(argc);",
                "p[0] = 1;",
                "x++;",
                "return v * N;",
                "z();"
            ]
        );
        // Qualified declarators, qualified and templated return types.
        assert_eq!(
            host(
                "const std::vector<int>& a::S<T>::m() { return v; }\n\
                 unsigned long long ns::f(int x) { return x; }\n\
                 static inline ::ns::T<int, 2>* g() { return nullptr; }",
                &[]
            ),
            ["return v;", "return x;", "return nullptr;"]
        );
        // GPU code, macros, initialisers, lambdas, constructors with initialisers, trailing
        // return types, noexcept(...), operators, directives in the body: not host bodies.
        for src in [
            "__global__ void k(float* p) { p[0] = 1; }",
            "__host__ __device__ float f(float x) { return x; }",
            "__launch_bounds__(256) void k() { }",
            "template <class T> __device__ T g(T v) { return v; }",
            "DEV float f(float x) { return x; }",
            "float DEV f(float x) { return x; }",
            "auto f = [](int x) { return x; };",
            "S::S(int v) : x(v) { y(); }",
            "auto f() -> int { return 1; }",
            "void f() noexcept(true) { g(); }",
            "bool operator()(int a) const { return a; }",
            "void f() {\n#if X\n  g();\n#endif\n}",
            "int x[] = { 1, 2 };",
            "struct T { int a; };",
            "[[nodiscard]] int f() { return 1; }",
            "if (x) { y(); }",
            "TEST_CASE(\"Unit_x\") { run(); }",
            "DEVICE_FUNCTION void ldg(int* p) { p[0] = 1; }",
            "OPUS_D opus::index_t calc(int a) const { return a; }",
            "template <class T> DS_D_INLINE T g(T v) { return v; }",
            "int main() { auto f = [] __device__ (float x) { return x; }; k<<<1, 1>>>(f); }",
            "int main() { auto f = [] __host__ __device__ (float x) { return x; }; }",
            "int main() { auto f = [=] DEVICE_FN (float x) { return x; }; }",
            "int main() { auto f = [] DEV_LAMBDA (float x) { return x; }; }",
            "void f() { struct L { __device__ void g() {} }; }",
        ] {
            assert!(host(src, &["DEV"]).is_empty(), "{src}");
        }
        // A function inside a function body is not looked for (a block, not a declaration).
        assert_eq!(host("void f() { { g(); } }", &[]), ["{ g(); }"]);
        // Host lambdas, `delete[]`, subscripts.
        assert_eq!(
            host(
                "void f(int* p) { auto g = [&](int i) mutable { return p[i] + 1; }; delete[] p; }",
                &[]
            ),
            ["auto g = [&](int i) mutable { return p[i] + 1; }; delete[] p;"]
        );
    }

    /// Object-like macros written alone at namespace scope before what no specifier can
    /// precede (`BEGIN_ROCPRIM_NAMESPACE namespace detail {`) are macro uses, skipped; a name
    /// before a function or a class used as a type stays an unknown specifier or nothing.
    #[test]
    fn bare_macros_before_declarations() {
        assert_eq!(
            found(
                "BEGIN_NS
namespace detail {
__device__ void f() {}
}
END_NS
"
            ),
            ["invocation BEGIN_NS", "invocation END_NS"]
        );
        assert_eq!(
            found(
                "BEGIN_NS
template <class T> __device__ void f(T) {}
END_NS"
            ),
            ["invocation BEGIN_NS", "invocation END_NS"]
        );
        assert_eq!(
            found("LIB_EXPORT CUB_BEGIN using T = int; typedef int U; static_assert(1, \"\");"),
            ["invocation LIB_EXPORT", "invocation CUB_BEGIN"]
        );
        assert_eq!(
            found("CUB_NAMESPACE_BEGIN\nenum E { A, B };\nNS_BEGIN enum class F : int { C };"),
            ["invocation CUB_NAMESPACE_BEGIN", "invocation NS_BEGIN"]
        );
        // An enum's declaration is no definition; a variable of an enum type is one.
        assert!(found("LIB_EXPORT enum E;\nLIB_EXPORT enum E e;").is_empty());
        assert_eq!(
            found("CUB_NAMESPACE_BEGIN\nstruct __align__(16) S : B { };\nCUB_NAMESPACE_END\n"),
            [
                "invocation CUB_NAMESPACE_BEGIN",
                "invocation CUB_NAMESPACE_END"
            ]
        );
        // A specifier of a function returning a class type, a lower-case name, `inline
        // namespace`, a qualified type, a call: not bare macros.
        assert_eq!(
            found("EXPORTED struct S* f() { return 0; }"),
            ["unknown EXPORTED"]
        );
        assert!(found("begin_ns namespace d {}\ninline namespace v1 {}\n").is_empty());
        assert!(found("extern template struct S<int>;").is_empty());
        assert_eq!(
            found("struct MY_ALIGN(16) S { int x; };\ntemplate <int N> class alignas(8) T {};"),
            ["invocation MY_ALIGN"]
        );
        assert!(found("struct S f(int x) { return S{}; }").is_empty());
        assert!(found("ns::T\ntemplate <class U> void g();").is_empty());
    }

    #[test]
    fn unknown_specifiers() {
        assert_eq!(
            found("CUTLASS_DEVICE void f(float* p, int n) {\n}\n"),
            ["unknown CUTLASS_DEVICE"]
        );
        assert_eq!(
            found("template <class T> DS_D_INLINE T g(T v) { return v; }"),
            ["unknown DS_D_INLINE"]
        );
        assert_eq!(
            found("template <class T>\n[[nodiscard]] _CCCL_DEVICE _CCCL_FORCEINLINE T g(T v) { return v; }"),
            ["unknown _CCCL_DEVICE", "unknown _CCCL_FORCEINLINE"]
        );
        assert_eq!(
            found("[[nodiscard]] [[maybe_unused]] CUTLASS_DEVICE float h() { return 0; }"),
            ["unknown CUTLASS_DEVICE"]
        );
        assert_eq!(
            found("template <class T>\n  requires ns::is_foo<T> && (sizeof(T) > 2)\nMY_DEV T g(T v) { return v; }"),
            ["clause", "unknown MY_DEV"]
        );
        assert_eq!(
            found("struct M { CUTLASS_DEVICE M(int x) {} CUTLASS_DEVICE ~M() {} };"),
            ["unknown CUTLASS_DEVICE", "unknown CUTLASS_DEVICE"]
        );
        assert!(found("Foo f(int x); ns::T g(); const Foo& h() { return x; }").is_empty());
        assert!(found(
            "struct S { __host__ __device__ S& operator=(const S& t) { return *this; }\n\
             __device__ bool operator==(const S& t) const; };"
        )
        .is_empty());
        assert_eq!(
            found("struct S { CUTLASS_DEVICE operator float*() { return 0; } };"),
            ["unknown CUTLASS_DEVICE"]
        );
        assert_eq!(
            found("void a() {\n  UNROLL_8\n  for (;;) {}\n}"),
            ["pragma UNROLL_8"]
        );
        assert_eq!(
            found("INSTANTIATE(float)\n__global__ void k() {}"),
            ["unknown INSTANTIATE"]
        );
        assert_eq!(
            found("__global__ void k(real* RESTRICT a, MY_CONST float b, const int* __restrict__ c, T d, ns::V<int> e) {}"),
            ["unknown RESTRICT", "unknown MY_CONST"]
        );
        assert!(found("void f(Foo, Bar*, unsigned long n, int (*cb)(int)) {}").is_empty());
        assert!(found("__global__ void k(struct Cx *a, typename T::v b, enum E e) {}").is_empty());
    }

    /// The pieces a statement macro's call leaves out of the parse, as text.
    fn pieces(src: &str) -> Vec<Vec<String>> {
        let toks = lex::tokenize(src.as_bytes(), 0..src.len());
        let code: Vec<usize> = (0..toks.len()).collect();
        let set = HashSet::new();
        scan(
            src.as_bytes(),
            &toks,
            &code,
            &set,
            &set,
            &HashMap::new(),
            &set,
        )
        .into_iter()
        .filter_map(|f| match f {
            Found::Statements { pieces, .. } => {
                Some(pieces.into_iter().map(|r| src[r].to_string()).collect())
            }
            _ => None,
        })
        .collect()
    }

    #[test]
    fn statement_macros() {
        let body = |s: &str| format!("__device__ void f(int* p) {{\n{s}\n}}");
        assert_eq!(
            pieces(&body(
                "NV_IF_TARGET(NV_IS_DEVICE, (p[0] = 1; __syncthreads();))"
            )),
            [vec!["NV_IF_TARGET(NV_IS_DEVICE, (", "))"]]
        );
        assert_eq!(
            pieces(&body(
                "NV_IF_ELSE_TARGET(NV_PROVIDES_SM_70, (a();), ({ b(); }));"
            )),
            [vec!["NV_IF_ELSE_TARGET(NV_PROVIDES_SM_70, (", "), (", "))"]]
        );
        assert_eq!(
            pieces(&body(
                "NV_DISPATCH_TARGET(NV_IS_HOST, (a();), NV_IS_DEVICE, ())"
            )),
            [vec![
                "NV_DISPATCH_TARGET(NV_IS_HOST, (",
                "), NV_IS_DEVICE, (",
                "))"
            ]]
        );
        // A group whose first statement is a loop; the calls inside groups are found too.
        assert_eq!(
            found(&body("M((for (;;) { N(C, (x;)) }))")),
            ["statements M", "statements N"]
        );
        // `if MACRO (c)`: the macro (`constexpr` or nothing) is skipped; `if constexpr` is C++.
        assert_eq!(
            found(&body(
                "if NCCL_IF_CONSTEXPR (x > 1) { a(); }\nif constexpr (x) {}"
            )),
            ["invocation NCCL_IF_CONSTEXPR"]
        );
        // In a braceless loop, and before a loop (no pragma macro).
        assert_eq!(
            found(&body("for (;;) M(C, (x; y;))\nM(C, (z;))\nfor (;;) {}")),
            ["statements M", "statements M"]
        );
        // Not statements: calls, statement expressions alone, a `for` header's parentheses, a
        // group that does not end a statement.
        for s in [
            "f((a), b);",
            "g(({ int y = 1; y; }));",
            "MY_FOR((int i = 0; i < n; ++i), x);",
            "h((a; b), c);",
            "asm volatile(\"bar.sync 0;\");",
            "return (x);",
        ] {
            assert!(found(&body(s)).is_empty(), "{s}");
        }
    }
}
