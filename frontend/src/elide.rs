//! Text the grammar must not see: uses of specifier macros (`#define DINLINE __device__
//! __forceinline__`, `#define LB(n) __launch_bounds__(n)`) and CUDA's attribute macros
//! (`__align__(16)`, `__builtin_align__(32)`, `__attribute__((ext_vector_type(4)))`).
//!
//! tree-sitter-cuda cannot expand macros: `DINLINE opus::fp32_t f()` reads as a declaration of
//! type `DINLINE`, `struct __align__(16) S { ... }` as a function named `S`. The parse skips
//! these bytes instead (tree-sitter's included ranges: positions stay those of the original
//! text), and the lowering reads a function's qualifiers from the elided names in front of it.
//!
//! Only macros whose every definition in the file is made of declaration specifiers and
//! attributes are elided: such a macro holds no call, no barrier and no control flow, so nothing
//! a rule reads is lost. Everything here works on bytes (the lexer), never on the syntax tree.
//!
//! Before the parse, [`extend`] also finds from the tokens what the grammar would read as a
//! syntax error without the preprocessor, and elides it (see `scan`): identifiers defined
//! nowhere in the file in declaration-specifier position before a function declarator (unknown
//! specifier macros: `CUTLASS_DEVICE void f()`; the function is lowered as `__device__` and
//! carries them as `Function::unseen_specifiers`), macro calls at file scope written without
//! `;` (`INSTANTIATE(float)`: they would swallow the next definition), pragma macros right
//! before a loop (`UNROLL_8`, `CUTLASS_PRAGMA_UNROLL`, `__pragma(unroll)`: the loop's pragma),
//! and invocations of the file's function-defining macros, which [`Expansion`] describes for
//! the parse of their replacement list.

use std::collections::{HashMap, HashSet};
use std::ops::Range;

use crate::ir::{FunctionKind, MacroDef, PragmaSyntax, Span, UnrollHint};
use crate::lex::{self, Tok, Token};
use crate::scan::{self, Found, Shape};

/// Identifiers a specifier macro may expand to (besides other specifier macros).
const SPECIFIERS: &[&str] = &[
    "__device__",
    "__host__",
    "__global__",
    "__forceinline__",
    "__forceinline",
    "__noinline__",
    "__inline__",
    "__inline",
    "inline",
    "static",
    "constexpr",
    "__always_inline__",
    "__shared__",
    "extern",
];

/// The return types a specifier macro may end with (see [`SpecifierMacro::typed`]).
const RETURN_TYPES: &[&str] = &[
    "void", "int", "unsigned", "signed", "long", "short", "char", "bool", "float", "double",
];

/// True when the code token `k` starts a function's declarator: a name (not a keyword of
/// [`RETURN_TYPES`]) and its `(`.
fn before_declarator(toks: &[Token], code: &[usize], k: usize) -> bool {
    let tok = |k: usize| code.get(k).map(|&j| &toks[j].tok);
    matches!(tok(k), Some(Tok::Ident(n)) if !RETURN_TYPES.contains(&n.as_str()))
        && tok(k + 1) == Some(&Tok::Punct("("))
}

/// Identifiers a specifier macro may expand to when a parenthesised argument list follows.
const ATTRIBUTES: &[&str] = &[
    "__attribute__",
    "__launch_bounds__",
    "__declspec",
    "__align__",
    "__builtin_align__",
    "alignas",
];

/// One elided range: its bytes and start position, and the macro it uses (`None` for CUDA's
/// own attribute macros).
#[derive(Debug, Clone)]
pub(crate) struct Elided {
    pub(crate) span: Span,
    pub(crate) name: String,
    /// What the macro makes a function it qualifies (`__global__`, `__launch_bounds__`:
    /// a kernel; `__device__`: a device function), through other specifier macros.
    pub(crate) kind: Option<FunctionKind>,
    /// The macro expands to `static`.
    pub(crate) is_static: bool,
    /// The macro expands to `__shared__` (`#define ROCPRIM_SHARED_MEMORY __shared__`), and
    /// to `extern` (`#define DYNAMIC_SMEM extern __shared__`): what a declaration it stands
    /// in front of is.
    pub(crate) shared: bool,
    pub(crate) is_extern: bool,
    /// What the elided text is.
    pub(crate) role: Role,
    /// For an object-like macro written alone at namespace scope (`BEGIN_ROCPRIM_NAMESPACE`):
    /// the namespaces its definition opens or closes, where the file or the unit defines it.
    pub(crate) namespace: Option<NamespaceMacro>,
}

/// What an object-like macro whose replacement list only opens or only closes namespaces
/// does: `#define BEGIN_ROCPRIM_NAMESPACE namespace rocprim {` opens `rocprim`,
/// `#define END_ROCPRIM_NAMESPACE }` closes one scope. Other object-like macros in the list
/// are expanded first (TensorRT-LLM's `namespace tensorrt_llm { TRTLLM_ABI_NAMESPACE_BEGIN`).
/// The parse skips its uses; the lowering qualifies what lies between them as the expansion
/// would.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NamespaceMacro {
    /// The scopes opened, outermost first: a namespace's name (`a::b` for `namespace a::b
    /// {`), or `None` for an inline namespace, whose name qualified calls leave out.
    Open(Vec<Option<String>>),
    /// How many scopes it closes.
    Close(usize),
}

/// At most this many tokens of a namespace macro's expansion are read.
const MAX_NAMESPACE_TOKENS: usize = 64;

/// The namespace macros among `defs` (the `#define`s of the headers a file includes): each
/// object-like macro every definition of which opens the same namespaces, or closes the same
/// number of scopes (see [`NamespaceMacro`]). What [`crate::parse_in_unit`] takes.
pub fn namespace_macros(defs: &[MacroDef]) -> HashMap<String, NamespaceMacro> {
    namespace_macros_of(&lexed_defines(defs))
}

/// [`specifier_macros`] and [`namespace_macros`] of `defs`, each definition lexed once.
pub fn unit_macros(
    defs: &[MacroDef],
) -> (
    HashMap<String, SpecifierMacro>,
    HashMap<String, NamespaceMacro>,
) {
    let defines = lexed_defines(defs);
    (specifier_macros_of(&defines), namespace_macros_of(&defines))
}

/// `defs` as this module reads `#define`s: their replacement lists as tokens.
fn lexed_defines(defs: &[MacroDef]) -> Vec<Define> {
    defs.iter()
        .map(|m| Define {
            name: m.name.clone(),
            function_like: m.params.is_some(),
            params: m.params.clone().unwrap_or_default(),
            body: lex::tokenize_macro_body(&m.body),
        })
        .collect()
}

/// [`namespace_macros`] of lexed `#define`s.
fn namespace_macros_of(defines: &[Define]) -> HashMap<String, NamespaceMacro> {
    // Object-like macros with one meaning (every definition the same tokens).
    let mut bodies: HashMap<&str, Option<Vec<&Tok>>> = HashMap::new();
    for d in defines {
        let body = (!d.function_like).then(|| d.body.iter().map(|t| &t.tok).collect::<Vec<_>>());
        bodies
            .entry(d.name.as_str())
            .and_modify(|b| {
                if *b != body {
                    *b = None;
                }
            })
            .or_insert(body);
    }
    let mut out = HashMap::new();
    for (&name, body) in &bodies {
        let Some(body) = body else { continue };
        // Cheap filter: a namespace macro names `namespace`, or is made of `}` and names.
        let opens = body
            .iter()
            .any(|t| matches!(t, Tok::Ident(w) if w == "namespace"));
        let closes = body.iter().any(|t| **t == Tok::Punct("}"));
        if !opens && !closes {
            continue;
        }
        let mut expanded = Vec::new();
        if !expand_object_like(body, &bodies, 0, &mut expanded) {
            continue;
        }
        if let Some(effect) = namespace_effect(&expanded) {
            out.insert(name.to_string(), effect);
        }
    }
    out
}

/// `body` with the object-like macros of `bodies` it names replaced by their expansion
/// (eight levels at most, [`MAX_NAMESPACE_TOKENS`] tokens at most), into `out`; false when
/// either bound is passed.
fn expand_object_like<'t>(
    body: &[&'t Tok],
    bodies: &HashMap<&str, Option<Vec<&'t Tok>>>,
    depth: usize,
    out: &mut Vec<&'t Tok>,
) -> bool {
    if depth > 8 {
        return false;
    }
    for t in body {
        match t {
            Tok::Ident(w) if w != "namespace" && w != "inline" => match bodies.get(w.as_str()) {
                Some(Some(inner)) => {
                    if !expand_object_like(inner, bodies, depth + 1, out) {
                        return false;
                    }
                }
                _ => out.push(t),
            },
            _ => out.push(t),
        }
        if out.len() > MAX_NAMESPACE_TOKENS {
            return false;
        }
    }
    true
}

/// The [`NamespaceMacro`] an expanded replacement list is: `(inline)? namespace
/// NAME(::NAME)* {` repeated, or `}` repeated; `None` for anything else.
fn namespace_effect(toks: &[&Tok]) -> Option<NamespaceMacro> {
    if !toks.is_empty() && toks.iter().all(|t| **t == Tok::Punct("}")) {
        return Some(NamespaceMacro::Close(toks.len()));
    }
    let is = |t: Option<&&Tok>, w: &str| matches!(t, Some(Tok::Ident(x)) if x == w);
    let mut scopes = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        let inline = is(toks.get(i), "inline");
        if inline {
            i += 1;
        }
        if !is(toks.get(i), "namespace") {
            return None;
        }
        i += 1;
        let mut name = String::new();
        loop {
            match toks.get(i) {
                Some(Tok::Ident(w)) if w != "inline" && w != "namespace" => name.push_str(w),
                _ => return None,
            }
            i += 1;
            if toks.get(i) == Some(&&Tok::Punct("::")) {
                name.push_str("::");
                i += 1;
            } else {
                break;
            }
        }
        if toks.get(i) != Some(&&Tok::Punct("{")) {
            return None;
        }
        i += 1;
        scopes.push((!inline).then_some(name));
    }
    (!scopes.is_empty()).then_some(NamespaceMacro::Open(scopes))
}

/// What an elided range is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Role {
    /// A specifier macro of the file or the unit, or one of CUDA's attribute macros.
    #[default]
    Specifier,
    /// An identifier defined nowhere in declaration-specifier position (with its arguments).
    Unknown,
    /// A pragma macro before a loop: the hint it gives (`None`: not an unroll pragma), and
    /// whether nothing defines it.
    Pragma {
        hint: Option<(UnrollHint, PragmaSyntax)>,
        unknown: bool,
    },
    /// A macro call at file scope without `;`, or a function-defining macro's invocation
    /// (see [`Plan::expansions`]).
    Invocation,
    /// A template's requires-clause in front of a declaration (see `scan::Found::Clause`).
    Clause,
    /// The directive lines of a conditional group whose code leaves its braces unbalanced
    /// (see `unbalanced_conditionals`).
    Directive,
    /// A piece of a macro call whose arguments are statements (`NV_IF_TARGET(C, (a;))`: the
    /// name, the other arguments and the parentheses around each group; see
    /// `scan::Found::Statements`). `call` is the whole invocation's byte range.
    Arguments { call: (usize, usize) },
    /// A lambda's `__device__`/`__host__` (`[=] __device__ (int i) { ... }`, CUDA's extended
    /// lambdas), which the grammar cannot read there. The body's bytes still hold the word:
    /// a host function holding one is lowered (see `lower::holds_device_code`).
    Lambda,
}

impl Elided {
    /// A range of `role` that says nothing of qualifiers, storage or namespaces.
    fn new(span: Span, name: String, role: Role) -> Elided {
        Elided {
            span,
            name,
            kind: None,
            is_static: false,
            shared: false,
            is_extern: false,
            role,
            namespace: None,
        }
    }

    /// True for the names that qualify a function they stand in front of.
    pub(crate) fn is_specifier(&self) -> bool {
        matches!(self.role, Role::Specifier | Role::Unknown)
    }

    /// True for an unknown specifier.
    pub(crate) fn is_unknown(&self) -> bool {
        self.role == Role::Unknown
    }
}

/// An invocation of a function-like macro of the file whose replacement list defines a
/// `__global__`/`__device__` function (`#define DEFINE_KERNEL(name, T) __global__ void
/// name(T* p) { ... }` then `DEFINE_KERNEL(k, float)`), or its header only, the body following
/// the invocation (`DEFINE_KERNEL(k, float) { ... }`).
#[derive(Debug, Clone)]
pub(crate) struct Expansion {
    pub(crate) name: String,
    pub(crate) params: Vec<String>,
    /// The replacement list's bytes in the file.
    pub(crate) body: Range<usize>,
    pub(crate) invocation: Range<usize>,
    /// Each argument's bytes.
    pub(crate) args: Vec<Range<usize>>,
    /// The `{ ... }` after the invocation, for a macro that is a function header.
    pub(crate) block: Option<Range<usize>>,
    /// The namespaces around the invocation, outermost first.
    pub(crate) namespaces: Vec<String>,
}

/// What the parse must skip, in source order, non-overlapping.
#[derive(Debug, Default)]
pub(crate) struct Plan {
    pub(crate) elided: Vec<Elided>,
    /// The invocations of function-defining macros (elided as [`Role::Invocation`]).
    pub(crate) expansions: Vec<Expansion>,
    /// The file's tokens as [`plan`] read them, for [`extend`] (not read twice).
    lexed: Option<Box<Lexed>>,
    /// What lies between the braces of host functions' bodies (`scan`'s
    /// [`Found::HostBody`]), in source order: skipped by the parse as well, never lowered.
    pub(crate) host_bodies: Vec<Range<usize>>,
}

/// A file's tokens, its `#define`s, the indexes of the tokens outside directives, and the
/// specifier macros known (the file's and the outer ones).
#[derive(Debug)]
struct Lexed {
    toks: Vec<Token>,
    defines: Vec<Define>,
    code: Vec<usize>,
    macros: HashMap<String, SpecifierMacro>,
}

impl Lexed {
    fn new(src: &[u8], outer: &HashMap<String, SpecifierMacro>) -> Lexed {
        // What `bulk` leaves out of the parse (the repeats of a huge generated expression) is
        // not lexed either: the tokens are those the grammar sees, and their memory stays a
        // small multiple of the input.
        let skip = crate::bulk::exclusions(src);
        let mut toks = Vec::new();
        let mut start = 0usize;
        for r in skip.iter().chain(std::iter::once(&(src.len()..src.len()))) {
            if r.start > start {
                toks.extend(lex::tokenize(src, start..r.start));
            }
            start = start.max(r.end);
        }
        let (defines, code) = split_directives(src, &toks);
        let mut macros = specifier_macros_of(&defines);
        for (k, v) in outer {
            macros.entry(k.clone()).or_insert(*v);
        }
        Lexed {
            toks,
            defines,
            code,
            macros,
        }
    }
}

impl Plan {
    /// The plan without its expansions (what the lowering reads: the elided ranges).
    pub(crate) fn clone_ranges(&self) -> Plan {
        Plan {
            elided: self.elided.clone(),
            expansions: Vec::new(),
            lexed: None,
            host_bodies: self.host_bodies.clone(),
        }
    }

    /// What the parse skips: the elided ranges and the host bodies, sorted, overlaps joined.
    pub(crate) fn skipped(&self) -> Vec<Range<usize>> {
        let mut all: Vec<Range<usize>> = self
            .elided
            .iter()
            .map(|e| e.span.start..e.span.end)
            .chain(self.host_bodies.iter().cloned())
            .filter(|r| r.end > r.start)
            .collect();
        all.sort_by_key(|r| (r.start, r.end));
        let mut out: Vec<Range<usize>> = Vec::with_capacity(all.len());
        for r in all {
            match out.last_mut() {
                Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
                _ => out.push(r),
            }
        }
        out
    }

    /// The included ranges for tree-sitter: the complement of [`Plan::skipped`] (empty when
    /// nothing is skipped: the whole text).
    pub(crate) fn included_ranges(&self, src: &[u8]) -> Vec<tree_sitter::Range> {
        let skipped = self.skipped();
        if skipped.is_empty() {
            return Vec::new();
        }
        let mut pos = Positions::new(src);
        let mut out = Vec::with_capacity(skipped.len() + 1);
        let mut start = 0usize;
        for e in &skipped {
            if e.start > start {
                out.push(tree_sitter::Range {
                    start_byte: start,
                    end_byte: e.start,
                    start_point: pos.point(start),
                    end_point: pos.point(e.start),
                });
            }
            start = e.end;
        }
        out.push(tree_sitter::Range {
            start_byte: start,
            end_byte: src.len().max(start),
            start_point: pos.point(start),
            end_point: pos.point(src.len().max(start)),
        });
        out
    }

    /// The elided names that lie inside `lo..hi`.
    pub(crate) fn within(&self, lo: usize, hi: usize) -> &[Elided] {
        let a = self.elided.partition_point(|e| e.span.start < lo);
        let b = self.elided.partition_point(|e| e.span.end <= hi);
        &self.elided[a..b.max(a)]
    }

    /// For a statement that starts at `start` and that the parse ends at `end` inside a
    /// statement macro's call begun in it (`for (...) NV_IF_TARGET(C, (a; b;))`, read as
    /// `for (...) a;`): where the outermost such call ends.
    pub(crate) fn statement_macro_end(&self, start: usize, end: usize) -> Option<usize> {
        let at = self.elided.partition_point(|e| e.span.start < end);
        let mut out = None;
        // The pieces after `end` up to the one of a call that began before `start` (or 64).
        for e in self.elided[at..].iter().take(64) {
            let Role::Arguments { call } = e.role else {
                continue;
            };
            if call.0 < start {
                break;
            }
            if call.0 < end && end < call.1 {
                out = Some(call.1.max(out.unwrap_or(0)));
            }
        }
        out
    }

    /// Every statement macro call (see `scan::Found::Statements`), in source order.
    pub(crate) fn statement_macros(&self) -> Vec<crate::ir::StatementMacro> {
        self.elided
            .iter()
            .filter_map(|e| match e.role {
                Role::Arguments { call } if e.span.start == call.0 => {
                    Some(crate::ir::StatementMacro {
                        name: e.name.clone(),
                        span: Span {
                            end: call.1,
                            ..e.span
                        },
                    })
                }
                _ => None,
            })
            .collect()
    }

    /// The pragma macro elided right before the loop keyword at `kw` (only blanks and comments
    /// between), if any.
    pub(crate) fn pragma_before(&self, src: &[u8], kw: usize) -> Option<&Elided> {
        let at = self.elided.partition_point(|e| e.span.end <= kw);
        let e = self.elided[..at].last()?;
        if !matches!(e.role, Role::Pragma { .. }) {
            return None;
        }
        let gap = src.get(e.span.end..kw)?;
        let toks = lex::tokenize(gap, 0..gap.len());
        toks.is_empty().then_some(e)
    }
}

/// Row/column of increasing byte offsets, computed in one forward pass.
pub(crate) struct Positions<'s> {
    src: &'s [u8],
    at: usize,
    row: usize,
    line_start: usize,
}

impl<'s> Positions<'s> {
    pub(crate) fn new(src: &'s [u8]) -> Self {
        Positions {
            src,
            at: 0,
            row: 0,
            line_start: 0,
        }
    }

    /// The span of `range`, with the line and column of its start.
    fn span(&mut self, range: Range<usize>) -> Span {
        let p = self.point(range.start);
        Span {
            start: range.start,
            end: range.end,
            line: p.row as u32 + 1,
            column: p.column as u32 + 1,
        }
    }

    pub(crate) fn point(&mut self, offset: usize) -> tree_sitter::Point {
        let offset = offset.min(self.src.len());
        if offset < self.at {
            // Not increasing: start over (never happens with sorted ranges).
            *self = Positions::new(self.src);
        }
        for i in memchr::memchr_iter(b'\n', &self.src[self.at..offset]) {
            self.row += 1;
            self.line_start = self.at + i + 1;
        }
        self.at = offset;
        tree_sitter::Point {
            row: self.row,
            column: offset - self.line_start,
        }
    }
}

/// A `#define`: its name, whether it takes parameters (and which) and its replacement tokens.
#[derive(Debug)]
struct Define {
    name: String,
    function_like: bool,
    params: Vec<String>,
    body: Vec<Token>,
}

/// The ranges of `src` to elide. `outer` names specifier macros defined outside this text (a
/// header of the same translation unit); they are elided like the file's own.
pub(crate) fn plan(src: &[u8], outer: &HashMap<String, SpecifierMacro>) -> Plan {
    let builtin = [&b"__align__"[..], b"__builtin_align__", b"ext_vector_type"]
        .iter()
        .any(|n| memchr::memmem::find(src, n).is_some());
    let lambdas = may_qualify_lambda(src);
    if !builtin && !lambdas && outer.is_empty() && !may_define(src) {
        return Plan::default();
    }
    let lexed = Lexed::new(src, outer);
    let Lexed {
        toks, code, macros, ..
    } = &lexed;
    if !builtin && !lambdas && macros.is_empty() {
        return Plan {
            lexed: Some(Box::new(lexed)),
            ..Plan::default()
        };
    }
    let mut elided = Vec::new();
    let mut pos = Positions::new(src);
    let mut i = 0;
    while i < code.len() {
        let t = &toks[code[i]];
        let Tok::Ident(name) = &t.tok else {
            i += 1;
            continue;
        };
        if lambdas && matches!(name.as_str(), "__device__" | "__host__") {
            if let Some(end) = lambda_qualifiers(toks, code, i) {
                let range = t.range.start..toks[code[end - 1]].range.end;
                elided.push(Elided::new(pos.span(range), name.clone(), Role::Lambda));
                i = end;
                continue;
            }
        }
        let next_is_paren = code
            .get(i + 1)
            .is_some_and(|&j| toks[j].tok == Tok::Punct("("));
        let (elide, m) = match macros.get(name) {
            Some(m) if !m.function_like => (true, *m),
            Some(m) => (next_is_paren, *m),
            None => {
                let builtin_attr = match name.as_str() {
                    "__align__" | "__builtin_align__" => next_is_paren,
                    "__attribute__" => {
                        next_is_paren && {
                            let end = closing(toks, code, i + 1);
                            code[i + 1..end.min(code.len())].iter().any(|&j| {
                                matches!(&toks[j].tok, Tok::Ident(n)
                                    if n == "ext_vector_type" || n == "__ext_vector_type__")
                            })
                        }
                    }
                    _ => false,
                };
                let m = SpecifierMacro {
                    function_like: true,
                    is_static: false,
                    kind: None,
                    shared: false,
                    is_extern: false,
                    typed: false,
                };
                (builtin_attr, m)
            }
        };
        if !elide {
            i += 1;
            continue;
        }
        let last = if next_is_paren && (macros.get(name).is_none_or(|m| m.function_like)) {
            closing(toks, code, i + 1)
        } else {
            i
        };
        let Some(&last_tok) = code.get(last) else {
            break; // an unclosed argument list: leave the rest to the grammar
        };
        if m.typed && !before_declarator(toks, code, last + 1) {
            i += 1;
            continue;
        }
        let range: Range<usize> = t.range.start..toks[last_tok].range.end;
        elided.push(Elided {
            kind: m.kind,
            is_static: m.is_static,
            shared: m.shared,
            is_extern: m.is_extern,
            ..Elided::new(pos.span(range), name.clone(), Role::Specifier)
        });
        i = last + 1;
    }
    Plan {
        elided,
        expansions: Vec::new(),
        lexed: Some(Box::new(lexed)),
        host_bodies: Vec::new(),
    }
}

/// The [`Shape`] of a `#define` (`macros`: the specifier macros known, which may give a device
/// qualifier).
fn shape_of(src: &[u8], d: &Define, macros: &HashMap<String, SpecifierMacro>) -> Shape {
    let device = |w: &str| {
        matches!(w, "__global__" | "__device__" | "__launch_bounds__")
            || macros.get(w).is_some_and(|m| m.kind.is_some())
    };
    let params = d.function_like.then_some(d.params.as_slice());
    scan::shape(src, params, &d.body, device)
}

/// `base` (the plan of [`plan`] for the same `src` and `outer`) with what `scan` finds beside:
/// unknown specifiers, pragma macros before loops, macro calls at file scope without `;`, and
/// the invocations of the file's function-defining macros. A range that overlaps one of
/// `base` is left out.
pub(crate) fn extend(
    src: &[u8],
    outer: &HashMap<String, SpecifierMacro>,
    outer_namespaces: &HashMap<String, NamespaceMacro>,
    base: &Plan,
) -> Plan {
    let fresh;
    let lexed = match &base.lexed {
        Some(l) => l.as_ref(),
        None => {
            fresh = Lexed::new(src, outer);
            &fresh
        }
    };
    let Lexed {
        toks,
        defines,
        code,
        macros,
    } = lexed;
    let defined: HashSet<&str> = defines
        .iter()
        .map(|d| d.name.as_str())
        .chain(outer.keys().map(|k| k.as_str()))
        .collect();
    let spec: HashSet<&str> = macros.keys().map(|k| k.as_str()).collect();
    // The last definition of a name wins, but an empty one never replaces a pragma
    // (`_Pragma("unroll")` under `__CUDA_ARCH__`, nothing for the host: the device's).
    let mut shapes: HashMap<&str, Shape> = HashMap::new();
    let own_namespaces = namespace_macros_of(defines);
    let defined_here: HashSet<&str> = defines.iter().map(|d| d.name.as_str()).collect();
    for d in defines {
        let shape = if own_namespaces.contains_key(&d.name) {
            Shape::Namespace
        } else {
            shape_of(src, d, macros)
        };
        let empty = !d.function_like && d.body.is_empty();
        if empty && matches!(shapes.get(d.name.as_str()), Some(Shape::Pragma(Some(_)))) {
            continue;
        }
        shapes.insert(d.name.as_str(), shape);
    }
    for name in outer_namespaces.keys() {
        if !defined_here.contains(name.as_str()) {
            shapes.insert(name.as_str(), Shape::Namespace);
        }
    }
    // Tokens inside ranges `base` already elides are not looked at again.
    let mut skip = base
        .elided
        .iter()
        .map(|e| e.span.start..e.span.end)
        .peekable();
    let code: Vec<usize> = code
        .iter()
        .copied()
        .filter(|&j| {
            let at = toks[j].range.start;
            while skip.peek().is_some_and(|r| r.end <= at) {
                skip.next();
            }
            skip.peek().is_none_or(|r| r.start > at)
        })
        .collect();
    // Macros that may make device code: specifier macros, and macros whose replacement list
    // names a GPU qualifier or such a macro (through a few levels).
    let mut gpu: HashSet<&str> = spec.clone();
    for _ in 0..8 {
        let before = gpu.len();
        for d in defines {
            if !gpu.contains(d.name.as_str())
                && d.body.iter().any(|t| {
                    matches!(&t.tok, Tok::Ident(w)
                        if scan::GPU_WORDS.contains(&w.as_str()) || gpu.contains(w.as_str()))
                })
            {
                gpu.insert(d.name.as_str());
            }
        }
        if gpu.len() == before {
            break;
        }
    }
    let found = scan::scan(src, toks, &code, &defined, &spec, &shapes, &gpu);
    let mut pos = Positions::new(src);
    let mut extra: Vec<Elided> = Vec::new();
    let mut expansions = Vec::new();
    let mut host: Vec<(Range<usize>, Range<usize>)> = Vec::new();
    for f in found {
        let (range, name, role) = match f {
            Found::HostBody { head, body } => {
                host.push((head, body));
                continue;
            }
            Found::Unknown { range, name } => (range, name, Role::Unknown),
            Found::Clause { range } => (range, "requires".to_string(), Role::Clause),
            Found::Pragma {
                range,
                name,
                hint,
                unknown,
            } => (range, name, Role::Pragma { hint, unknown }),
            Found::Invocation { range, name } => (range, name, Role::Invocation),
            Found::Statements { pieces, name, call } => {
                let role = Role::Arguments {
                    call: (call.start, call.end),
                };
                for piece in pieces {
                    extra.push(Elided::new(unpositioned(piece), name.clone(), role));
                }
                continue;
            }
            Found::Expansion {
                range,
                name,
                invocation,
                args,
                block,
                namespaces,
            } => {
                let (params, body) = match shapes.get(name.as_str()) {
                    Some(Shape::Definition { params, body } | Shape::Header { params, body }) => {
                        (params.clone(), body.clone())
                    }
                    _ => continue,
                };
                expansions.push(Expansion {
                    name: name.clone(),
                    params,
                    body,
                    invocation,
                    args,
                    block,
                    namespaces,
                });
                (range, name, Role::Invocation)
            }
        };
        // A macro call's namespaces: the file's own definition first, then the unit's.
        let namespace = match role {
            Role::Invocation if defined_here.contains(name.as_str()) => {
                own_namespaces.get(&name).cloned()
            }
            Role::Invocation => outer_namespaces.get(&name).cloned(),
            _ => None,
        };
        extra.push(Elided {
            namespace,
            ..Elided::new(unpositioned(range), name, role)
        });
    }
    for range in unbalanced_conditionals(src, toks) {
        extra.push(Elided::new(
            unpositioned(range),
            "#if".to_string(),
            Role::Directive,
        ));
    }
    let mut elided: Vec<Elided> = base.elided.clone();
    elided.extend(extra);
    elided.sort_by_key(|e| (e.span.start, e.span.end));
    // Non-overlapping: a range that starts inside the previous one is dropped.
    let mut kept: Vec<Elided> = Vec::with_capacity(elided.len());
    for e in elided {
        if kept.last().is_some_and(|k| e.span.start < k.span.end) {
            continue;
        }
        kept.push(e);
    }
    for e in &mut kept {
        let p = pos.point(e.span.start);
        e.span.line = p.row as u32 + 1;
        e.span.column = p.column as u32 + 1;
    }
    // A head holding an elided name (a specifier macro, an unknown one) is no plain host
    // function's: its body is parsed.
    let host_bodies = host
        .into_iter()
        .filter(|(head, _)| {
            let i = kept.partition_point(|e| e.span.end <= head.start);
            kept.get(i).is_none_or(|e| e.span.start >= head.end)
        })
        .map(|(_, body)| body)
        .collect();
    Plan {
        elided: kept,
        expansions,
        lexed: None,
        host_bodies,
    }
}

/// What is known of a specifier macro.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpecifierMacro {
    /// Takes arguments: only `NAME(...)` is a use.
    pub function_like: bool,
    /// Expands to `static`.
    pub is_static: bool,
    /// The kind of function it qualifies (`None`: it says nothing of host or device).
    pub kind: Option<FunctionKind>,
    /// Expands to `__shared__`: a declaration it stands in front of is shared memory.
    pub shared: bool,
    /// Expands to `extern`.
    pub is_extern: bool,
    /// Ends with the function's return type (rocBLAS's `#define ROCBLAS_KERNEL(lb_) static
    /// __global__ __launch_bounds__((lb_)) void`, then `ROCBLAS_KERNEL(NB) name(...)`): a use
    /// is one only right before a function's name and its `(`.
    pub typed: bool,
}

/// The specifier macros among `defs` (the `#define`s of the headers a file includes, say):
/// what [`crate::parse_with`] takes to skip their uses in the file.
pub fn specifier_macros(defs: &[MacroDef]) -> HashMap<String, SpecifierMacro> {
    specifier_macros_of(&lexed_defines(defs))
}

/// A cheap filter: is a `__device__` or `__host__` of the text right after a `]` (blanks
/// between), as a lambda's are?
fn may_qualify_lambda(src: &[u8]) -> bool {
    [&b"__device__"[..], b"__host__"].iter().any(|w| {
        memchr::memmem::find_iter(src, w).any(|at| {
            src[..at]
                .iter()
                .rev()
                .find(|b| !b.is_ascii_whitespace())
                .is_some_and(|&b| b == b']')
        })
    })
}

/// At `code[i]`, a `__device__`/`__host__` right after a lambda's capture list: the index
/// after the run of such words when a lambda's parameters, `mutable` or body follow, and the
/// `]` before closes a capture list (not an attribute's `]]`).
fn lambda_qualifiers(toks: &[Token], code: &[usize], i: usize) -> Option<usize> {
    let tok = |k: usize| code.get(k).map(|&j| &toks[j].tok);
    if i == 0 || tok(i - 1) != Some(&Tok::Punct("]")) {
        return None;
    }
    // The `[` that the `]` closes.
    let mut depth = 0usize;
    let mut open = None;
    for k in (0..i).rev() {
        match tok(k) {
            Some(Tok::Punct("]")) => depth += 1,
            Some(Tok::Punct("[")) => {
                depth -= 1;
                if depth == 0 {
                    open = Some(k);
                    break;
                }
            }
            Some(Tok::Punct(";" | "{" | "}")) => return None,
            _ => {}
        }
        if i - k > 256 {
            return None;
        }
    }
    let open = open?;
    if open > 0 && tok(open - 1) == Some(&Tok::Punct("[")) {
        return None; // `[[attribute]]`
    }
    let mut end = i;
    while matches!(tok(end), Some(Tok::Ident(w)) if w == "__device__" || w == "__host__") {
        end += 1;
    }
    match tok(end) {
        Some(Tok::Punct("(" | "{")) => Some(end),
        Some(Tok::Ident(w)) if w == "mutable" => Some(end),
        _ => None,
    }
}

/// A cheap filter: does the text hold a `#` followed (after blanks) by `define`?
fn may_define(src: &[u8]) -> bool {
    memchr::memchr_iter(b'#', src).any(|i| {
        let rest = &src[i + 1..];
        let skip = rest
            .iter()
            .take_while(|&&b| b == b' ' || b == b'\t')
            .count();
        rest[skip..].starts_with(b"define")
    })
}

/// Index of the token (in `code`) that closes the parenthesis opened at `code[open]`, or
/// `code.len()` when it is never closed.
fn closing(toks: &[Token], code: &[usize], open: usize) -> usize {
    let mut depth = 0usize;
    for (k, &j) in code.iter().enumerate().skip(open) {
        match toks[j].tok {
            Tok::Punct("(") => depth += 1,
            Tok::Punct(")") => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return k;
                }
            }
            _ => {}
        }
    }
    code.len()
}

/// Splits the tokens into `#define`s and the indexes of the tokens outside any directive.
fn split_directives(src: &[u8], toks: &[Token]) -> (Vec<Define>, Vec<usize>) {
    let mut defines = Vec::new();
    let mut code = Vec::with_capacity(toks.len());
    let mut i = 0;
    while i < toks.len() {
        let Tok::Directive(d) = &toks[i].tok else {
            code.push(i);
            i += 1;
            continue;
        };
        let j = directive_end(src, toks, i);
        if d == "define" && i + 1 < j {
            if let Tok::Ident(name) = &toks[i + 1].tok {
                let function_like = toks.get(i + 2).filter(|_| i + 2 < j).is_some_and(|t| {
                    t.tok == Tok::Punct("(") && t.range.start == toks[i + 1].range.end
                });
                let mut b = i + 2;
                let mut params = Vec::new();
                if function_like {
                    while b < j && toks[b].tok != Tok::Punct(")") {
                        match &toks[b].tok {
                            Tok::Ident(p) => params.push(p.clone()),
                            Tok::Punct("...") => params.push("__VA_ARGS__".into()),
                            _ => {}
                        }
                        b += 1;
                    }
                    b += 1;
                }
                defines.push(Define {
                    name: name.clone(),
                    function_like,
                    params,
                    body: toks[b.min(j)..j].to_vec(),
                });
            }
        }
        i = j;
    }
    (defines, code)
}

/// The span of `range` before its line and column are known (`extend` sets them once its
/// ranges are sorted).
fn unpositioned(range: Range<usize>) -> Span {
    Span {
        start: range.start,
        end: range.end,
        ..Span::default()
    }
}

/// One branch of a conditional group, as [`unbalanced_conditionals`] reads it.
struct Arm {
    /// The directive line.
    line: Range<usize>,
    /// The directive's token.
    at: usize,
    /// The token after the directive line.
    first: usize,
    /// `{` less `}` in the branch.
    balance: i64,
    /// `(` less `)` in the branch.
    parens: i64,
    /// The group's `#if` stands in an expression: inside parentheses, or right after `=`
    /// or `return`.
    in_expression: bool,
}

/// What the parse leaves out of the conditional group `g`, closed by the `#endif` line
/// `endif` at token `at` (see [`unbalanced_conditionals`]): its directive lines (read as if
/// the condition held), or its first directive line and everything from the second branch to
/// the `#endif` (read as its first branch), or nothing.
fn left_out(g: &[Arm], endif: &Range<usize>, toks: &[Token], at: usize) -> Vec<Range<usize>> {
    let first = &g[0];
    if g.len() == 1 {
        // `#if A` / `if (c) { ... } else` / `#endif` / `{ ... }` (NCCL's): the `else` needs
        // what follows the group.
        let dangling = at > 0 && matches!(&toks[at - 1].tok, Tok::Ident(w) if w == "else");
        let read = first.balance != 0 || dangling || (first.in_expression && first.parens == 0);
        return if read {
            vec![first.line.clone(), endif.clone()]
        } else {
            Vec::new()
        };
    }
    // Every branch after the first: its tokens, up to the next directive of the group.
    let others = |ok: fn(&[Token], usize, usize) -> bool| {
        (1..g.len()).all(|k| ok(toks, g[k].first, g.get(k + 1).map_or(at, |b| b.at)))
    };
    let heads =
        first.balance != 0 && g.iter().all(|b| b.balance == first.balance) && others(head_only);
    // Inside an expression (`(x ? 0 :` / `#endif` / `lane)`): the others only when they call
    // nothing.
    let expression = first.in_expression
        && g.iter().all(|b| b.balance == 0 && b.parens == 0)
        && others(calls_nothing);
    if heads || expression {
        vec![first.line.clone(), g[1].line.start..endif.end]
    } else {
        Vec::new()
    }
}

/// The directive lines of the conditional groups (`#if`/`#ifdef`/`#ifndef` ... `#endif`, no
/// `#elif` or `#else`) whose code opens more braces than it closes, or fewer: rocBLAS's
/// `#if DEVICE_GRID_YZ_16BIT` / `for (...) {` / `#endif` ... `#if DEVICE_GRID_YZ_16BIT` / `}` /
/// `#endif`. The grammar reads each group as a unit, so an unbalanced one breaks the parse of
/// everything around it (the whole file in rocBLAS's kernels). Left out of the parse, the code
/// between them is read as if the condition held. So is a group whose code ends with an
/// `else` that the statement after the group completes.
///
/// A group with alternatives each of which opens (or closes) the same number of braces, every
/// one after the first only a statement's head (`#if SPEC_DEC` / `if (r >= n) {` / `#else` /
/// `if (m >= rows) {` / `#endif`: FlashInfer's, RCCL's `if constexpr (...) {` under
/// `__cpp_if_constexpr`; see [`head_only`]), is read as its first branch: the other branches
/// and the directives are left out. Nothing that runs is hidden: those heads call nothing and
/// jump nowhere.
///
/// A group in an expression, inside parentheses or right after `=` or `return` (`(x ? 0 :` /
/// `#endif` / `lane)`, `f(a,` / `#if V` / `b,` / `#else` / `false,` / `#endif` / `c)`, `n =` /
/// `#if A` / `t ? 256 :` / `#endif` / `16;`: NCCL's kernels) whose branches balance their braces
/// and parentheses is read as its first branch too, the others left out when they call
/// nothing ([`calls_nothing`]); a group without alternatives loses only its directives.
fn unbalanced_conditionals(src: &[u8], toks: &[Token]) -> Vec<Range<usize>> {
    let mut depth = 0i64;
    let mut after_assign = false;
    let mut out = Vec::new();
    if !toks
        .iter()
        .any(|t| matches!(&t.tok, Tok::Directive(d) if d == "endif"))
    {
        return out;
    }
    let mut open: Vec<Vec<Arm>> = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        let Tok::Directive(d) = &toks[i].tok else {
            let (delta, paren) = match toks[i].tok {
                Tok::Punct("{") => (1, 0),
                Tok::Punct("}") => (-1, 0),
                Tok::Punct("(") => (0, 1),
                Tok::Punct(")") => (0, -1),
                _ => (0, 0),
            };
            depth += paren;
            after_assign = match &toks[i].tok {
                Tok::Punct(p) => *p == "=",
                Tok::Ident(w) => w == "return",
                _ => false,
            };
            if delta != 0 || paren != 0 {
                for g in &mut open {
                    if let Some(b) = g.last_mut() {
                        b.balance += delta;
                        b.parens += paren;
                    }
                }
            }
            i += 1;
            continue;
        };
        let j = directive_end(src, toks, i);
        let line = toks[i].range.start..toks[j - 1].range.end;
        match d.as_str() {
            "if" | "ifdef" | "ifndef" => open.push(vec![Arm {
                line,
                at: i,
                first: j,
                balance: 0,
                parens: 0,
                in_expression: depth > 0 || after_assign,
            }]),
            "elif" | "elifdef" | "elifndef" | "else" => {
                if let Some(g) = open.last_mut() {
                    g.push(Arm {
                        line,
                        at: i,
                        first: j,
                        balance: 0,
                        parens: 0,
                        in_expression: false,
                    });
                }
            }
            "endif" => {
                if let Some(g) = open.pop() {
                    out.extend(left_out(&g, &line, toks, i));
                    // The enclosing group counts only the branch read (the first).
                    if let Some(outer) = open.last_mut().and_then(|o| o.last_mut()) {
                        let all: i64 = g.iter().map(|b| b.balance).sum();
                        outer.balance += g[0].balance - all;
                    }
                }
            }
            _ => {}
        }
        i = j;
    }
    out.sort_by_key(|r| r.start);
    out
}

/// Names written before `(` that call nothing: operators and casts.
const CALL_LIKE_OPERATORS: &[&str] = &[
    "sizeof",
    "alignof",
    "decltype",
    "static_cast",
    "reinterpret_cast",
    "const_cast",
    "noexcept",
];

/// True when `toks[k]` is a name followed by `(` that calls something: none of
/// [`CALL_LIKE_OPERATORS`] and none of `heads`.
fn is_call(toks: &[Token], k: usize, heads: &[&str]) -> bool {
    matches!(&toks[k].tok, Tok::Ident(w)
        if !CALL_LIKE_OPERATORS.contains(&w.as_str()) && !heads.contains(&w.as_str()))
        && matches!(toks.get(k + 1).map(|n| &n.tok), Some(Tok::Punct("(")))
}

/// True when `toks[from..to]` holds no directive and no call ([`is_call`]).
fn calls_nothing(toks: &[Token], from: usize, to: usize) -> bool {
    let toks = &toks[from.min(toks.len())..to.min(toks.len())];
    (0..toks.len()).all(|k| !matches!(toks[k].tok, Tok::Directive(_)) && !is_call(toks, k, &[]))
}

/// True when `toks[from..to]` is at most a statement's head that calls nothing and jumps
/// nowhere: `if (a && b) {`, `} else if constexpr (N > 4) {`, `for (int i = 0; i < n; ++i) {`:
/// no `;` outside parentheses, no directive, no `return`/`break`/`continue`/`goto`/`throw`/
/// `asm`, no call but a keyword's.
fn head_only(toks: &[Token], from: usize, to: usize) -> bool {
    const HEADS: &[&str] = &["if", "for", "while", "switch", "constexpr"];
    const JUMPS: &[&str] = &[
        "return",
        "break",
        "continue",
        "goto",
        "throw",
        "asm",
        "__asm__",
        "__asm",
        "co_return",
    ];
    let toks = &toks[from.min(toks.len())..to.min(toks.len())];
    let mut depth = 0i64;
    for (k, t) in toks.iter().enumerate() {
        match &t.tok {
            Tok::Directive(_) => return false,
            Tok::Punct("(") => depth += 1,
            Tok::Punct(")") => depth -= 1,
            Tok::Punct(";") if depth <= 0 => return false,
            Tok::Ident(w) if JUMPS.contains(&w.as_str()) => return false,
            _ if is_call(toks, k, HEADS) => return false,
            _ => {}
        }
    }
    true
}

/// The index after the tokens of the directive whose `#` is `toks[i]`: up to the first newline
/// that no `\` continues.
fn directive_end(src: &[u8], toks: &[Token], i: usize) -> usize {
    let mut j = i + 1;
    while j < toks.len() && !line_break_between(src, toks[j - 1].range.end, toks[j].range.start) {
        j += 1;
    }
    j
}

/// True when `src[a..b]` holds a newline that no `\` continues.
fn line_break_between(src: &[u8], a: usize, b: usize) -> bool {
    let gap = &src[a.min(src.len())..b.min(src.len())];
    memchr::memchr_iter(b'\n', gap).any(|k| {
        let before = &gap[..k];
        let before = before.strip_suffix(b"\r").unwrap_or(before);
        !before.ends_with(b"\\")
    })
}

/// The macros every definition of which (in `defines`) is only declaration specifiers,
/// attributes and other such macros (a fixpoint: `#define A B` then `#define B __device__`).
fn specifier_macros_of(defines: &[Define]) -> HashMap<String, SpecifierMacro> {
    let mut by_name: HashMap<&str, Vec<&Define>> = HashMap::new();
    for d in defines {
        by_name.entry(d.name.as_str()).or_default().push(d);
    }
    let mut known: HashMap<String, SpecifierMacro> = HashMap::new();
    let mut rejected: HashSet<&str> = HashSet::new();
    loop {
        let mut changed = false;
        for (&name, defs) in &by_name {
            if known.contains_key(name) || rejected.contains(name) {
                continue;
            }
            // Some(what it expands to); None: not a specifier macro.
            let mut verdict = Some(Expands::default());
            let mut pending = false;
            for d in defs {
                match specifier_body(&d.body, &known, &by_name) {
                    Body::Specifiers(e) => {
                        verdict = verdict.map(|v| Expands {
                            is_static: v.is_static || e.is_static,
                            kind: stronger(v.kind, e.kind),
                            shared: v.shared || e.shared,
                            is_extern: v.is_extern || e.is_extern,
                            typed: v.typed || e.typed,
                        });
                    }
                    Body::Pending => pending = true,
                    Body::Other => verdict = None,
                }
            }
            // Function-like and object-like definitions of one name: not a specifier macro.
            let shapes: HashSet<bool> = defs.iter().map(|d| d.function_like).collect();
            if verdict.is_none() || shapes.len() > 1 {
                rejected.insert(name);
                changed = true;
            } else if let (false, Some(e)) = (pending, verdict) {
                known.insert(
                    name.to_string(),
                    SpecifierMacro {
                        function_like: defs[0].function_like,
                        is_static: e.is_static,
                        kind: e.kind,
                        shared: e.shared,
                        is_extern: e.is_extern,
                        typed: e.typed,
                    },
                );
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    known
}

/// Kernel over device over nothing.
fn stronger(a: Option<FunctionKind>, b: Option<FunctionKind>) -> Option<FunctionKind> {
    match (a, b) {
        (Some(FunctionKind::Kernel), _) | (_, Some(FunctionKind::Kernel)) => {
            Some(FunctionKind::Kernel)
        }
        (Some(FunctionKind::Device), _) | (_, Some(FunctionKind::Device)) => {
            Some(FunctionKind::Device)
        }
        _ => None,
    }
}

enum Body {
    Specifiers(Expands),
    /// Uses a macro not yet classified.
    Pending,
    Other,
}

/// What a specifier macro's replacement list holds.
#[derive(Debug, Clone, Copy, Default)]
struct Expands {
    is_static: bool,
    kind: Option<FunctionKind>,
    shared: bool,
    is_extern: bool,
    typed: bool,
}

fn specifier_body(
    body: &[Token],
    known: &HashMap<String, SpecifierMacro>,
    defined: &HashMap<&str, Vec<&Define>>,
) -> Body {
    let mut e = Expands::default();
    let mut pending = false;
    let mut i = 0;
    while i < body.len() {
        match &body[i].tok {
            Tok::Ident(n) if SPECIFIERS.contains(&n.as_str()) => {
                e.is_static |= n == "static";
                e.shared |= n == "__shared__";
                e.is_extern |= n == "extern";
                match n.as_str() {
                    "__global__" => e.kind = stronger(e.kind, Some(FunctionKind::Kernel)),
                    "__device__" => e.kind = stronger(e.kind, Some(FunctionKind::Device)),
                    _ => {}
                }
                i += 1;
            }
            Tok::Ident(n) if ATTRIBUTES.contains(&n.as_str()) => {
                if body.get(i + 1).map(|t| &t.tok) != Some(&Tok::Punct("(")) {
                    return Body::Other;
                }
                if n == "__launch_bounds__" {
                    e.kind = stronger(e.kind, Some(FunctionKind::Kernel));
                }
                i = skip_group(body, i + 1, "(", ")");
            }
            // The function's return type, last, after a GPU qualifier (`static __global__
            // __launch_bounds__((lb_)) void`).
            Tok::Ident(_)
                if e.kind.is_some()
                    && body[i..].iter().all(
                        |t| matches!(&t.tok, Tok::Ident(n) if RETURN_TYPES.contains(&n.as_str())),
                    ) =>
            {
                e.typed = true;
                break;
            }
            Tok::Ident(n) => match known.get(n.as_str()) {
                Some(m) => {
                    e.is_static |= m.is_static;
                    e.kind = stronger(e.kind, m.kind);
                    e.shared |= m.shared;
                    e.is_extern |= m.is_extern;
                    e.typed |= m.typed;
                    i += 1;
                    if m.function_like {
                        if body.get(i).map(|t| &t.tok) != Some(&Tok::Punct("(")) {
                            return Body::Other;
                        }
                        i = skip_group(body, i, "(", ")");
                    }
                }
                None if defined.contains_key(n.as_str()) => {
                    pending = true;
                    i += 1;
                    if body.get(i).map(|t| &t.tok) == Some(&Tok::Punct("(")) {
                        i = skip_group(body, i, "(", ")");
                    }
                }
                None => return Body::Other,
            },
            Tok::Punct("[") if body.get(i + 1).map(|t| &t.tok) == Some(&Tok::Punct("[")) => {
                i = skip_group(body, i, "[", "]");
            }
            _ => return Body::Other,
        }
    }
    if pending {
        Body::Pending
    } else {
        Body::Specifiers(e)
    }
}

/// The index just past the group opened by `body[open]` (`open_p`), or `body.len()`.
fn skip_group(body: &[Token], open: usize, open_p: &'static str, close_p: &'static str) -> usize {
    let mut depth = 0usize;
    for (k, t) in body.iter().enumerate().skip(open) {
        if t.tok == Tok::Punct(open_p) {
            depth += 1;
        } else if t.tok == Tok::Punct(close_p) {
            depth = depth.saturating_sub(1);
            if depth == 0 {
                return k + 1;
            }
        }
    }
    body.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(src: &str) -> Vec<(String, String)> {
        plan(src.as_bytes(), &HashMap::new())
            .elided
            .into_iter()
            .map(|e| (e.name, src[e.span.start..e.span.end].to_string()))
            .collect()
    }

    #[test]
    fn specifier_macros_and_cuda_attributes_are_elided() {
        let src = "#define DINLINE __device__ __forceinline__\n\
                   #define LB(n) __launch_bounds__(n)\n\
                   #define HD HOSTDEV\n#define HOSTDEV __host__ __device__\n\
                   DINLINE float& f();\nHD int g();\n__global__ void LB(256) k();\n\
                   struct __align__(16) S {};\n\
                   using v4 = __attribute__((ext_vector_type(4))) float;\n\
                   int x = DINLINE_NOT; // DINLINE in a comment\n";
        assert_eq!(
            names(src),
            [
                ("DINLINE", "DINLINE"),
                ("HD", "HD"),
                ("LB", "LB(256)"),
                ("__align__", "__align__(16)"),
                ("__attribute__", "__attribute__((ext_vector_type(4)))"),
            ]
            .map(|(a, b)| (a.to_string(), b.to_string()))
        );
    }

    /// One name defined in several branches, MSVC's `__forceinline` in one of them (NCCL's
    /// `NCCL_HOST_DEVICE_INLINE`): a specifier macro, the strongest kind of its branches.
    #[test]
    fn a_specifier_macro_of_several_branches_is_one() {
        let src = "#if CUDACC\n#define HDI __host__ __device__ __forceinline__\n\
                   #elif WIN\n#define HDI __forceinline\n\
                   #else\n#define HDI inline __attribute__((always_inline))\n#endif\n\
                   template <typename X> HDI constexpr X up(X x) { return x; }\n";
        assert_eq!(names(src), [("HDI".to_string(), "HDI".to_string())]);
    }

    /// The directive lines of groups whose code leaves braces open (or closes more than it
    /// opens) and that have no alternative branch; of a group whose alternatives each open as
    /// many, the directives and every branch after the first, when those are heads only.
    /// The text of each range [`unbalanced_conditionals`] leaves out of `src`.
    fn unbalanced(src: &str) -> Vec<&str> {
        let toks = lex::tokenize(src.as_bytes(), 0..src.len());
        unbalanced_conditionals(src.as_bytes(), &toks)
            .into_iter()
            .map(|r| &src[r])
            .collect()
    }

    #[test]
    fn unbalanced_conditional_groups() {
        let src = "void f() {\n#if A\n for (;;) {\n#endif\n x();\n#if A\n }\n#endif\n\
                   #if B\n { y(); }\n#endif\n#if C\n if (p) {\n#else\n if (q) {\n#endif\n }\n\
                   #if D\n if (p) {\n#elif E\n for (int i = 0; i < n; ++i) {\n#else\n while (q) {\n#endif\n }\n}\n";
        let lines = unbalanced(src);
        assert_eq!(
            lines,
            [
                "#if A",
                "#endif",
                "#if A",
                "#endif",
                "#if C",
                "#else\n if (q) {\n#endif",
                "#if D",
                "#elif E\n for (int i = 0; i < n; ++i) {\n#else\n while (q) {\n#endif"
            ]
        );
        // Inside parentheses: the first branch when the others call nothing; a dangling `else`.
        let src = "void f() {\n g(a,\n#if V\n b,\n#else\n false,\n#endif\n c);\n\
                   h((\n#if W\n t ? 0 :\n#endif\n lane));\n\
                   g(a,\n#if V\n b,\n#else\n k(1),\n#endif\n c);\n\
                   #if X\n if (t) { y(); } else\n#endif\n { z(); }\n\
                   n =\n#if A\n t ? 256 :\n#endif\n 16;\n}\n";
        let lines = unbalanced(src);
        assert_eq!(
            lines,
            [
                "#if V",
                "#else\n false,\n#endif",
                "#if W",
                "#endif",
                "#if X",
                "#endif",
                "#if A",
                "#endif"
            ]
        );
        // An alternative that calls, jumps or ends a statement is left alone; so are
        // alternatives that open different numbers of braces.
        for other in [
            "if (ok(q)) {",
            "if (q) { return;",
            "x = 1; if (q) {",
            "if (q) { {",
            "if (q) {\n#if F\n {\n#endif",
        ] {
            let src = format!("void f() {{\n#if C\n if (p) {{\n#else\n {other}\n#endif\n }}\n}}\n");
            let toks = lex::tokenize(src.as_bytes(), 0..src.len());
            let lines: Vec<&str> = unbalanced_conditionals(src.as_bytes(), &toks)
                .into_iter()
                .map(|r| &src[r])
                .collect();
            assert!(!lines.contains(&"#if C"), "{other}: {lines:?}");
        }
    }

    #[test]
    fn macros_with_anything_else_are_kept() {
        // A call, a type, a barrier in one branch of `#if`: not specifier macros.
        let src = "#define SYNC __syncthreads()\n#define DEV __device__ float4\n\
                   #if A\n#define Q __device__\n#else\n#define Q __syncthreads();\n#endif\n\
                   DEV f() { SYNC; } Q int g();\n\
                   __attribute__((aligned(16))) int h;\n";
        assert!(names(src).is_empty(), "{:?}", names(src));
    }

    /// A specifier macro that ends with a built-in return type (rocBLAS's `ROCBLAS_KERNEL`)
    /// is one only right before a function's name and `(`: not before a variable's.
    #[test]
    fn a_typed_specifier_macro_is_elided_before_a_declarator_only() {
        let src = "#define KERNEL(lb) static __global__ __launch_bounds__((lb)) void\n\
                   #define DEV_INT __device__ int\n\
                   template <int NB> KERNEL(NB) k(int n) {}\nDEV_INT x = 0;\nDEV_INT g() { return 1; }\n";
        assert_eq!(
            names(src),
            [("KERNEL", "KERNEL(NB)"), ("DEV_INT", "DEV_INT")]
                .map(|(a, b)| (a.to_string(), b.to_string()))
        );
    }

    /// A macro that is `__shared__` (rocPRIM's `ROCPRIM_SHARED_MEMORY`), or `extern
    /// __shared__`, is elided like a specifier, and says what it makes the declaration after
    /// it (the lowering reads it: the grammar could not read `extern SMEM float s[];`).
    #[test]
    fn shared_memory_macros_are_elided_and_say_so() {
        let src = "#define SHARED __shared__\n#define DYN extern __shared__\n\
                   SHARED float s[4]; DYN float d[];\n";
        let p = plan(src.as_bytes(), &HashMap::new());
        let got: Vec<(&str, bool, bool)> = p
            .elided
            .iter()
            .map(|e| (e.name.as_str(), e.shared, e.is_extern))
            .collect();
        assert_eq!(got, [("SHARED", true, false), ("DYN", true, true)]);
    }

    #[test]
    fn function_like_macros_need_their_arguments() {
        let src = "#define LB(n) __launch_bounds__(n)\nint LB = 3; LB (128) void k();\n";
        assert_eq!(names(src), [("LB".to_string(), "LB (128)".to_string())]);
    }

    #[test]
    fn included_ranges_skip_exactly_the_elided_bytes() {
        let src = "#define D __device__\nD int f();\n";
        let p = plan(src.as_bytes(), &HashMap::new());
        let r = p.included_ranges(src.as_bytes());
        assert_eq!(r.len(), 2);
        assert_eq!(
            &src[r[0].start_byte..r[0].end_byte],
            "#define D __device__\n"
        );
        assert_eq!(r[1].start_point, tree_sitter::Point { row: 1, column: 1 });
        assert_eq!(r[1].end_byte, src.len());
    }
}
