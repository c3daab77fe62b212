//! Which pointer parameters a kernel writes through, as the IR sees it: a store in its body
//! (`p[i] = v`, `*p += v`, `p->x++`, through a local pointer or reference derived from `p`:
//! `float* q = p + off; q[i] = v;`), an atomic or store intrinsic on it (`atomicAdd(&p[i], v)`,
//! `__stcs(p + i, v)`), or a call that passes it (or a pointer derived from it) to a parameter
//! that the callee writes through, transitively, in the translation unit (the file and its
//! headers). A pointer passed to a function or macro whose body hip-unroll does not see, or
//! into a macro that may store, is a *maybe*: `spec new` marks it an output to check.
//!
//! Every function of the unit is analysed once per round until nothing changes (a monotone
//! fixed point over the call graph, recursion included).

use frontend::{AddressKind, Function, MacroDef, SourceFile};
use std::collections::{BTreeSet, HashMap};

/// One function of the unit.
pub struct UnitFn<'a> {
    pub f: &'a Function,
    pub src: &'a [u8],
    /// Where the function is, for evidence in another file: the header's file name (empty for
    /// the main file).
    pub label: String,
}

/// Why a parameter counts as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Written {
    /// A store through it that the IR shows (the evidence: `line 25: partial[blockIdx.x]`).
    Yes(String),
    /// Passed where hip-unroll cannot see what happens to it (the evidence says where).
    Maybe(String),
}

impl Written {
    pub fn evidence(&self) -> &str {
        match self {
            Written::Yes(e) | Written::Maybe(e) => e,
        }
    }
    fn rank(w: &Option<Written>) -> u8 {
        match w {
            None => 0,
            Some(Written::Maybe(_)) => 1,
            Some(Written::Yes(_)) => 2,
        }
    }
}

/// What a parameter is, for the analysis.
#[derive(Debug, Clone, Default)]
struct ParamKind {
    name: String,
    /// A pointer (or array) parameter.
    pointer: bool,
    /// A reference to non-const memory (`float& out`).
    reference: bool,
    /// The pointee or referee is `const`.
    constant: bool,
}

fn param_kinds(f: &Function) -> Vec<ParamKind> {
    let types = f
        .signature
        .as_deref()
        .map(crate::ctype::split_signature)
        .unwrap_or_default();
    f.params
        .iter()
        .enumerate()
        .map(
            |(i, p)| match types.get(i).filter(|_| types.len() == f.params.len()) {
                Some(t) => {
                    let d = crate::ctype::declared(t);
                    ParamKind {
                        name: p.name.clone(),
                        pointer: d.pointers > 0,
                        reference: d.reference && d.pointers == 0 && !d.constant,
                        constant: d.constant,
                    }
                }
                None => ParamKind {
                    name: p.name.clone(),
                    pointer: p.is_pointer_or_ref,
                    reference: false,
                    constant: false,
                },
            },
        )
        .collect()
}

/// Whether a call to `callee` stores through its argument `arg`: atomics, store intrinsics and
/// copies through their first (or named) argument, and the math functions that return a second
/// result through a pointer (`sincosf(x, &s, &c)`, `frexp(x, &e)`, `modf(x, &i)`,
/// `remquo(x, y, &q)`), which hip-unroll otherwise knows as pure.
fn stores_through_arg(callee: &str, qualifier: Option<&str>, arg: usize) -> bool {
    if stores_through(callee, qualifier) == Some(arg) {
        return true;
    }
    let name = callee.strip_prefix("__builtin_").unwrap_or(callee);
    let name = name.strip_prefix("__").unwrap_or(name);
    match name {
        "sincos" | "sincosf" | "sincospi" | "sincospif" | "sincosl" => arg == 1 || arg == 2,
        "frexp" | "frexpf" | "frexpl" | "modf" | "modff" | "modfl" | "lgamma_r" | "lgammaf_r" => {
            arg == 1
        }
        "remquo" | "remquof" | "remquol" => arg == 2,
        _ => false,
    }
}

/// Calls that store through one of their arguments: the callee and the argument's index.
fn stores_through(callee: &str, qualifier: Option<&str>) -> Option<usize> {
    const FIRST: &[&str] = &[
        "__stcs",
        "__stcg",
        "__stwt",
        "__stwb",
        "memcpy",
        "memset",
        "memmove",
        "__builtin_memcpy",
        "__builtin_memset",
        "__builtin_memmove",
        "__pipeline_memcpy_async",
        "unsafeAtomicAdd",
        "safeAtomicAdd",
    ];
    if FIRST.contains(&callee)
        || callee.starts_with("atomic")
        || callee.starts_with("__hip_atomic")
        || callee.starts_with("__atomic_")
        || callee.starts_with("__sync_fetch")
        || callee.starts_with("__sync_val")
        || callee.starts_with("__sync_bool")
        || callee.starts_with("__sync_lock")
    {
        return Some(0);
    }
    match (callee, qualifier) {
        ("__builtin_nontemporal_store", _) => Some(1),
        // `cg::memcpy_async(group, dst, src, bytes)`; libcu++'s `cuda::memcpy_async(dst, ...)`.
        ("memcpy_async", Some(q)) if q.contains("cg") || q.contains("cooperative_groups") => {
            Some(1)
        }
        ("memcpy_async", _) => Some(0),
        _ => None,
    }
}

/// The source text of a span, on one line and at most 48 characters.
fn excerpt(src: &[u8], s: frontend::Span) -> String {
    let t = String::from_utf8_lossy(&src[s.start.min(src.len())..s.end.min(src.len())]);
    let one: String = t.split_whitespace().collect::<Vec<_>>().join(" ");
    if one.chars().count() > 48 {
        format!("{}...", one.chars().take(45).collect::<String>())
    } else {
        one
    }
}

fn place(u: &UnitFn<'_>, line: u32) -> String {
    if u.label.is_empty() {
        format!("line {line}")
    } else {
        format!("{}:{line}", u.label)
    }
}

/// For every function of `fns`, for every parameter: whether it writes through it. `macros` are
/// the unit's `#define`s with where they are (as [`UnitFn::label`]).
pub fn analyse(fns: &[UnitFn<'_>], macros: &[(&MacroDef, String)]) -> Vec<Vec<Option<Written>>> {
    let kinds: Vec<Vec<ParamKind>> = fns.iter().map(|u| param_kinds(u.f)).collect();
    let mut by_name: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, u) in fns.iter().enumerate() {
        by_name.entry(u.f.name.as_str()).or_default().push(i);
    }
    let macro_map: HashMap<&str, (&MacroDef, &str)> = macros
        .iter()
        .filter(|(m, _)| m.params.is_some())
        .map(|(m, l)| (m.name.as_str(), (*m, l.as_str())))
        .collect();
    let cx = Cx {
        fns,
        kinds: &kinds,
        by_name: &by_name,
        macros: &macro_map,
    };
    let mut state: Vec<Vec<Option<Written>>> = kinds.iter().map(|k| vec![None; k.len()]).collect();
    // Each round can only raise a parameter (none -> maybe -> yes); the number of raises is
    // bounded by twice the parameters.
    for _ in 0..=2 * kinds.iter().map(Vec::len).sum::<usize>() + 1 {
        let mut changed = false;
        for i in 0..fns.len() {
            let new = cx.local(i, &state);
            for (j, w) in new.into_iter().enumerate() {
                if Written::rank(&w) > Written::rank(&state[i][j]) {
                    state[i][j] = w;
                    changed = true;
                }
            }
        }
        if !changed {
            break;
        }
    }
    state
}

struct Cx<'c, 'a> {
    fns: &'c [UnitFn<'a>],
    kinds: &'c [Vec<ParamKind>],
    by_name: &'c HashMap<&'a str, Vec<usize>>,
    macros: &'c HashMap<&'a str, (&'a MacroDef, &'a str)>,
}

type Aliases = HashMap<String, BTreeSet<usize>>;

fn union_of(map: &Aliases, names: &[String]) -> BTreeSet<usize> {
    names
        .iter()
        .filter_map(|n| map.get(n))
        .flatten()
        .copied()
        .collect()
}

fn add(map: &mut Aliases, name: &str, set: &BTreeSet<usize>) -> bool {
    if set.is_empty() {
        return false;
    }
    let e = map.entry(name.to_string()).or_default();
    let before = e.len();
    e.extend(set.iter().copied());
    e.len() != before
}

impl Cx<'_, '_> {
    /// One function's writes, with its callees' as `state` has them.
    fn local(&self, i: usize, state: &[Vec<Option<Written>>]) -> Vec<Option<Written>> {
        let u = &self.fns[i];
        let f = u.f;
        let params = &self.kinds[i];
        let mut out: Vec<Option<Written>> = vec![None; params.len()];
        let set = |out: &mut Vec<Option<Written>>, js: &BTreeSet<usize>, w: Written| {
            for &j in js {
                let cur = &mut out[j];
                if Written::rank(&Some(w.clone())) > Written::rank(cur) {
                    *cur = Some(w.clone());
                }
            }
        };
        // Local pointers and references into each parameter's memory.
        let mut ptrs: Aliases = HashMap::new();
        let mut refs: Aliases = HashMap::new();
        for (j, p) in params.iter().enumerate() {
            if p.pointer {
                ptrs.entry(p.name.clone()).or_default().insert(j);
            } else if p.reference {
                refs.entry(p.name.clone()).or_default().insert(j);
            }
        }
        for _ in 0..16 {
            let mut changed = false;
            for a in &f.address_uses {
                match &a.kind {
                    AddressKind::Init { decl, reference } => {
                        let Some(d) = f.decls.get(*decl) else {
                            continue;
                        };
                        if *reference {
                            let mut s = union_of(&refs, &a.bases);
                            if a.element {
                                s.extend(union_of(&ptrs, &a.bases));
                            }
                            changed |= add(&mut refs, &d.name, &s);
                        } else if !a.element {
                            let s = union_of(&ptrs, &a.bases);
                            changed |= add(&mut ptrs, &d.name, &s);
                        }
                    }
                    AddressKind::Assigned { target } if !a.element => {
                        let s = union_of(&ptrs, &a.bases);
                        changed |= add(&mut ptrs, target, &s);
                    }
                    _ => {}
                }
            }
            if !changed {
                break;
            }
        }
        let both = |bases: &[String]| {
            let mut s = union_of(&ptrs, bases);
            s.extend(union_of(&refs, bases));
            s
        };
        for a in &f.address_uses {
            match &a.kind {
                AddressKind::Store => {
                    let js = both(&a.bases);
                    let w = Written::Yes(format!(
                        "{}: `{}`",
                        place(u, a.span.line),
                        excerpt(u.src, a.span)
                    ));
                    set(&mut out, &js, w);
                }
                AddressKind::CallArg { call, arg } => {
                    let js = both(&a.bases);
                    if js.is_empty() {
                        continue;
                    }
                    let Some(c) = f.calls.get(*call) else {
                        continue;
                    };
                    if let Some(w) = self.call_writes(u, c, *arg, a.element, &js, params, state) {
                        set(&mut out, &js, w);
                    }
                }
                _ => {}
            }
        }
        // A function-like macro that names the memory itself rather than taking it as an
        // argument: `xv(j, i) = v` with `#define xv(j, i) x[(j) * s + (i)]`, or `PUT(i, v)`
        // with `#define PUT(i, v) out[i] = v`.
        for c in &f.calls {
            if c.receiver.is_some() || c.qualifier.is_some() {
                continue;
            }
            let target = assigned_after(u.src, c.span.end);
            let Some((m, _)) = self.macros.get(c.callee.as_str()) else {
                // Assigned to, yet no function or macro of the unit and nothing hip-unroll
                // knows: a macro in a header it did not find (`lu(1, i, j, k) = v`), which may
                // store through any writable pointer.
                let unseen = target
                    && !self.by_name.contains_key(c.callee.as_str())
                    && !frontend::known::is_known_function(&c.callee, None, false);
                if unseen {
                    let js: BTreeSet<usize> = params
                        .iter()
                        .enumerate()
                        .filter(|(_, p)| p.pointer && !p.constant)
                        .map(|(j, _)| j)
                        .collect();
                    let w = Written::Maybe(format!(
                        "{}: `{}` is assigned to, and `{}` is no function or macro hip-unroll \
                         sees (a header not found? `-I` adds a directory)",
                        place(u, c.span.line),
                        excerpt(u.src, c.span),
                        c.callee
                    ));
                    set(&mut out, &js, w);
                }
                continue;
            };
            for name in macro_free_stores(m, target) {
                let js = both(std::slice::from_ref(&name));
                if js.is_empty() {
                    continue;
                }
                let w = Written::Yes(format!(
                    "{}: `{}` (macro `{}` stores through `{name}`)",
                    place(u, c.span.line),
                    excerpt(u.src, c.span),
                    c.callee
                ));
                set(&mut out, &js, w);
            }
        }
        // A part of the body the grammar read as a function definition of its own (a loop
        // macro such as `CUDA_KERNEL_LOOP(i, n) { ... }`): the IR holds nothing of it, so any
        // writable pointer may be stored through there.
        let nested = self.fns.iter().find(|g| {
            !std::ptr::eq(g.f, f)
                && std::ptr::eq(g.src, u.src)
                && g.f.span.start >= f.body.start
                && g.f.span.end <= f.body.end
        });
        if let Some(g) = nested {
            let js: BTreeSet<usize> = params
                .iter()
                .enumerate()
                .filter(|(_, p)| p.pointer && !p.constant)
                .map(|(j, _)| j)
                .collect();
            let w = Written::Maybe(format!(
                "{}: `{}(...) {{ ... }}` in the body reads as a function definition (a loop \
                 macro?), which hip-unroll does not analyse",
                place(u, g.f.span.line),
                g.f.name
            ));
            set(&mut out, &js, w);
        }
        // A plain assignment to a reference writes the memory it refers to.
        for id in &f.idents {
            if id.access != frontend::Access::Write {
                continue;
            }
            if let Some(js) = refs.get(&id.name) {
                let w = Written::Yes(format!(
                    "{}: `{}` (a reference)",
                    place(u, id.span.line),
                    id.name
                ));
                let js = js.clone();
                set(&mut out, &js, w);
            }
        }
        out
    }

    /// What passing argument `arg` (into parameters `js` of the caller) to the call `c` does.
    #[allow(clippy::too_many_arguments)]
    fn call_writes(
        &self,
        u: &UnitFn<'_>,
        c: &frontend::Call,
        arg: usize,
        element: bool,
        js: &BTreeSet<usize>,
        params: &[ParamKind],
        state: &[Vec<Option<Written>>],
    ) -> Option<Written> {
        let at = place(u, c.span.line);
        if stores_through_arg(&c.callee, c.qualifier.as_deref(), arg) && !element {
            return Some(Written::Yes(format!("{at}: `{}`", excerpt(u.src, c.span))));
        }
        if let Some(cands) = self.by_name.get(c.callee.as_str()) {
            let by_arity: Vec<usize> = cands
                .iter()
                .copied()
                .filter(|&g| self.kinds[g].len() == c.arg_spans.len())
                .collect();
            let cands = if by_arity.is_empty() {
                cands.clone()
            } else {
                by_arity
            };
            let mut best: Option<Written> = None;
            for g in cands {
                let Some(gp) = self.kinds[g].get(arg) else {
                    continue;
                };
                let fits = if element {
                    gp.reference
                } else {
                    gp.pointer || gp.reference
                };
                if !fits {
                    continue;
                }
                let Some(w) = &state[g][arg] else { continue };
                let callee = &self.fns[g];
                let via = format!(
                    "{at}: passed to `{}` as `{}`, which it writes ({})",
                    c.callee,
                    gp.name,
                    w.evidence()
                );
                let w = match w {
                    Written::Yes(_) => Written::Yes(via),
                    Written::Maybe(_) => Written::Maybe(via),
                };
                let _ = callee;
                if Written::rank(&Some(w.clone())) > Written::rank(&best) {
                    best = Some(w);
                }
            }
            return best;
        }
        if let Some((m, label)) = self.macros.get(c.callee.as_str()) {
            return macro_writes(m, arg).map(|yes| {
                let where_ = if label.is_empty() {
                    format!("line {}", m.span.line)
                } else {
                    format!("{label}:{}", m.span.line)
                };
                let e = format!("{at}: passed to macro `{}` ({where_})", c.callee);
                if yes {
                    Written::Yes(e)
                } else {
                    Written::Maybe(e)
                }
            });
        }
        let known = frontend::known::is_known_function(
            &c.callee,
            c.qualifier.as_deref(),
            c.receiver.is_some(),
        );
        // A non-const pointer handed to a function whose body is not in the unit.
        let writable = js.iter().any(|&j| params[j].pointer && !params[j].constant);
        if !known && !element && writable {
            return Some(Written::Maybe(format!(
                "{at}: passed to `{}`, whose body hip-unroll does not see",
                c.callee
            )));
        }
        None
    }
}

/// Whether the source after `end` (an expression's end) assigns to the expression: `=` (not
/// `==`), a compound assignment, `++` or `--`.
fn assigned_after(src: &[u8], end: usize) -> bool {
    let rest = &src[end.min(src.len())..];
    let rest = &rest[rest
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(rest.len())..];
    let ops: [&[u8]; 12] = [
        b"+=", b"-=", b"*=", b"/=", b"%=", b"&=", b"|=", b"^=", b"<<=", b">>=", b"++", b"--",
    ];
    (rest.first() == Some(&b'=') && rest.get(1) != Some(&b'='))
        || ops.iter().any(|op| rest.starts_with(op))
}

/// The names that are not parameters of the function-like macro `m` and whose memory its
/// replacement stores to: `N[...] = v`, `*N = v`, `N->f = v` inside it, or, when the
/// invocation is itself assigned to (`target`), the base of a replacement that is one lvalue
/// (`N[...]`, `*N`, `N->f`, parenthesised or not).
fn macro_free_stores(m: &MacroDef, target: bool) -> Vec<String> {
    use frontend::lex::{tokenize_macro_body, Tok};
    let params: Vec<&str> = m
        .params
        .as_ref()
        .map(|ps| ps.iter().map(|p| p.trim()).collect())
        .unwrap_or_default();
    let toks = tokenize_macro_body(&m.body);
    let tok = |i: usize| toks.get(i).map(|t| &t.tok);
    // The end of the lvalue that starts with the name at `i` (`N`, `N[..][..]`, `N->f`,
    // `N.f`), and whether it goes through the memory (an index, `->`, or a `*` before it).
    let lvalue_end = |i: usize| {
        let mut j = i + 1;
        let mut through = matches!(tok(i.wrapping_sub(1)), Some(Tok::Punct("*")));
        loop {
            match tok(j) {
                Some(Tok::Punct("[")) => {
                    j = after_brackets(&toks, j);
                    through = true;
                }
                Some(Tok::Punct("->")) => {
                    j += 2;
                    through = true;
                }
                Some(Tok::Punct(".")) => j += 2,
                _ => break,
            }
        }
        (j, through)
    };
    let mut out: Vec<String> = Vec::new();
    let mut push = |n: &str| {
        if !out.iter().any(|o| o == n) {
            out.push(n.to_string());
        }
    };
    for i in 0..toks.len() {
        let Some(Tok::Ident(name)) = tok(i) else {
            continue;
        };
        let member = matches!(tok(i.wrapping_sub(1)), Some(Tok::Punct("." | "->" | "::")));
        if member || params.contains(&name.as_str()) || matches!(tok(i + 1), Some(Tok::Punct("(")))
        {
            continue;
        }
        let (end, through) = lvalue_end(i);
        if through && is_assign_tok(tok(end)) {
            push(name);
        }
    }
    if target {
        // The whole replacement (parentheses and a leading `*` aside) is one lvalue of a name.
        let mut a = 0;
        let mut b = toks.len();
        while a < b
            && matches!(tok(a), Some(Tok::Punct("(")))
            && matches!(tok(b - 1), Some(Tok::Punct(")")))
        {
            a += 1;
            b -= 1;
        }
        let star = usize::from(matches!(tok(a), Some(Tok::Punct("*"))));
        if let Some(Tok::Ident(name)) = tok(a + star) {
            if !params.contains(&name.as_str()) {
                let (end, through) = lvalue_end(a + star);
                if end == b && (through || star == 1) {
                    push(name);
                }
            }
        }
    }
    out
}

/// An assignment operator: `=`, a compound assignment, `++` or `--`.
fn is_assign_tok(t: Option<&frontend::lex::Tok>) -> bool {
    use frontend::lex::Tok;
    matches!(
        t,
        Some(Tok::Punct(
            "=" | "+="
                | "-="
                | "*="
                | "/="
                | "%="
                | "&="
                | "|="
                | "^="
                | "<<="
                | ">>="
                | "++"
                | "--"
        ))
    )
}

/// The index after the `[...]` (nested brackets included) that opens at `toks[j]`.
fn after_brackets(toks: &[frontend::lex::Token], mut j: usize) -> usize {
    use frontend::lex::Tok;
    let mut depth = 0;
    while let Some(t) = toks.get(j).map(|t| &t.tok) {
        match t {
            Tok::Punct("[") => depth += 1,
            Tok::Punct("]") => {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            }
            _ => {}
        }
        j += 1;
    }
    j + 1
}

/// Whether a function-like macro stores through its parameter `arg`: `Some(true)` when its
/// replacement assigns through it (`P[i] = v`, `*P += v`, `P->x++`) or hands it to an atomic
/// or store intrinsic, `Some(false)` (maybe) when the parameter reaches a call hip-unroll does
/// not know, `None` otherwise.
fn macro_writes(m: &MacroDef, arg: usize) -> Option<bool> {
    use frontend::lex::{tokenize_macro_body, Tok};
    let name = m.params.as_ref()?.get(arg)?.trim().to_string();
    let toks = tokenize_macro_body(&m.body);
    let tok = |i: usize| toks.get(i).map(|t| &t.tok);
    let mut uses = false;
    for i in 0..toks.len() {
        if !matches!(tok(i), Some(Tok::Ident(s)) if *s == name) {
            continue;
        }
        uses = true;
        // `*P =`, `++*P`
        let deref = matches!(tok(i.wrapping_sub(1)), Some(Tok::Punct("*")));
        // Skip `[...]`, `->f`, `.f` after the name, then look for an assignment.
        let mut j = i + 1;
        let mut through = deref;
        loop {
            match tok(j) {
                Some(Tok::Punct("[")) => {
                    j = after_brackets(&toks, j);
                    through = true;
                }
                Some(Tok::Punct("->")) | Some(Tok::Punct(".")) => {
                    j += 2;
                    through = true;
                }
                Some(Tok::Punct(")")) => j += 1,
                _ => break,
            }
        }
        if through && is_assign_tok(tok(j)) {
            return Some(true);
        }
        // An atomic or store intrinsic whose first argument starts with `P` or `&P`.
        let mut k = i;
        while k > 0 && matches!(tok(k - 1), Some(Tok::Punct("&" | "(" | "*"))) {
            k -= 1;
            if matches!(tok(k), Some(Tok::Punct("("))) {
                if let Some(Tok::Ident(callee)) = tok(k.wrapping_sub(1)) {
                    if stores_through(callee, None) == Some(0) {
                        return Some(true);
                    }
                }
                break;
            }
        }
    }
    // The parameter reaches a call hip-unroll does not know: it may store through it.
    let unknown_call = toks.windows(2).any(|w| match (&w[0].tok, &w[1].tok) {
        (Tok::Ident(callee), Tok::Punct("(")) => {
            !matches!(
                callee.as_str(),
                "sizeof" | "alignof" | "decltype" | "if" | "while" | "for" | "switch" | "return"
            ) && !m
                .params
                .as_ref()
                .is_some_and(|ps| ps.iter().any(|p| p.trim() == callee))
                && !frontend::known::is_known_function(callee, None, false)
        }
        _ => false,
    });
    (uses && unknown_call).then_some(false)
}

/// The unit's functions in the order [`analyse`] takes them: the main file's, then each
/// header's, with their labels.
pub fn unit_functions<'a>(
    main: (&'a SourceFile, &'a [u8]),
    headers: &'a [frontend::tu::Header],
) -> (Vec<UnitFn<'a>>, Vec<(&'a MacroDef, String)>) {
    let mut fns: Vec<UnitFn<'a>> = main
        .0
        .functions
        .iter()
        .map(|f| UnitFn {
            f,
            src: main.1,
            label: String::new(),
        })
        .collect();
    let mut macros: Vec<(&MacroDef, String)> =
        main.0.macros.iter().map(|m| (m, String::new())).collect();
    for h in headers {
        let label = h
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| h.path.display().to_string());
        for f in &h.file().functions {
            fns.push(UnitFn {
                f,
                src: h.bytes(),
                label: label.clone(),
            });
        }
        for m in &h.file().macros {
            macros.push((m, label.clone()));
        }
    }
    (fns, macros)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn writes_of(src: &str, kernel: &str) -> Vec<(String, Option<Written>)> {
        let file = frontend::parse(src.as_bytes());
        let (fns, macros) = unit_functions((&file, src.as_bytes()), &[]);
        let all = analyse(&fns, &macros);
        let i = fns.iter().position(|u| u.f.name == kernel).unwrap();
        fns[i]
            .f
            .params
            .iter()
            .map(|p| p.name.clone())
            .zip(all[i].clone())
            .collect()
    }

    fn yes(v: &[(String, Option<Written>)]) -> Vec<&str> {
        v.iter()
            .filter(|(_, w)| matches!(w, Some(Written::Yes(_))))
            .map(|(n, _)| n.as_str())
            .collect()
    }

    fn maybe(v: &[(String, Option<Written>)]) -> Vec<&str> {
        v.iter()
            .filter(|(_, w)| matches!(w, Some(Written::Maybe(_))))
            .map(|(n, _)| n.as_str())
            .collect()
    }

    #[test]
    fn direct_derived_helper_atomic_macro_and_unknown() {
        let src = r#"
#define STORE(P, I, V) (P)[I] = (V)
#define READ(P, I) (P)[I]
__device__ void put(float* dst, float v) { *dst = v; }
__device__ void relay(float* d, float v) { put(d + 1, v); }
__device__ void twice(float& r) { r *= 2.0f; }
__device__ float get(const float* s) { return s[0]; }
extern __device__ void opaque(float* p);
__global__ void k(float* a, float* b, float* c, int* hist, float* e, float* f, float* g,
                  float* h, const float* in, float* never, float* m, float* o) {
    int i = threadIdx.x;
    a[i] = in[i];
    float* q = b + 4 * i;
    q[1] += 1.0f;
    relay(c, get(in));
    atomicAdd(&hist[i], 1);
    float& r = e[i];
    r = 0.0f;
    twice(f[i]);
    STORE(g, i, 1.0f);
    opaque(h);
    float x = READ(never, i) + never[i];
    __stcs(m + i, x);
    float* w;
    w = o;
    w[i] = x;
}
"#;
        let w = writes_of(src, "k");
        assert_eq!(yes(&w), ["a", "b", "c", "hist", "e", "f", "g", "m", "o"]);
        assert_eq!(maybe(&w), ["h"]);
        let c = w.iter().find(|(n, _)| n == "c").unwrap().1.clone().unwrap();
        assert!(
            c.evidence().contains("passed to `relay` as `d`")
                && c.evidence().contains("passed to `put` as `dst`"),
            "{c:?}"
        );
    }

    #[test]
    fn macros_that_name_the_memory_and_math_with_result_pointers() {
        // As in HPCTrainingExamples' GhostExchange (`xv(j, i) = v`) and hip-tests' deviceLib
        // (`sincospif(a[i], b + i, c + i)`).
        let src = r#"
#define xv(j, i) x[(j) * stride + (i)]
#define yv(j, i) (y[(j) * stride + (i)])
#define PUT(i, v) out[i] = (v)
#define GET(i) src[i]
__global__ void k(double* x, double* y, double* out, const double* src, double* rd,
                  float* a, float* sn, float* cs, int* ex, float* fr, float* s2, int stride) {
    int i = threadIdx.x;
    xv(1, i) = 0.0;
    yv(0, i) += 1.0;
    PUT(i, GET(i) + xv(0, i) + rd[i]);
    sincospif(a[i], sn + i, &cs[i]);
    fr[i] = frexpf(a[i], &ex[i]);
    s2[i] = sinf(a[i]);
}
"#;
        let w = writes_of(src, "k");
        assert_eq!(yes(&w), ["x", "y", "out", "sn", "cs", "ex", "fr", "s2"]);
        assert!(maybe(&w).is_empty(), "{w:?}");
        let x = w.iter().find(|(n, _)| n == "x").unwrap().1.clone().unwrap();
        assert!(
            x.evidence().contains("macro `xv` stores through `x`"),
            "{x:?}"
        );
        // A macro the unit does not define, assigned to (its header was not found): every
        // writable pointer may be its memory.
        let src = r#"
__global__ void k(const float* in, float* a_lu, float* tmp, int n) {
    int i = threadIdx.x;
    lu(1, i) = in[i] + sqrtf(in[i]);
}
"#;
        let w = writes_of(src, "k");
        assert!(yes(&w).is_empty(), "{w:?}");
        assert_eq!(maybe(&w), ["a_lu", "tmp"]);
        // A loop macro the grammar reads as a nested function definition: its body is not in
        // the IR, so the writable pointers are maybes (a store, once the frontend reads it).
        let src = r#"
#define CUDA_KERNEL_LOOP(i, n) for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += blockDim.x * gridDim.x)
__global__ void k(const int n, const float* data_col, float* grad_im) {
  CUDA_KERNEL_LOOP(index, n)
  {
    atomicAdd(grad_im + 2 * index, data_col[index]);
  }
}
"#;
        let w = writes_of(src, "k");
        let written: Vec<&str> = [yes(&w), maybe(&w)].concat();
        assert_eq!(written, ["grad_im"], "{w:?}");
        // A macro read on the right of `==` is no store.
        let src = r#"
#define xv(i) x[i]
__global__ void k(float* x, int* flag) { if (xv(0) == 1.0f) flag[0] = 1; }
"#;
        assert_eq!(yes(&writes_of(src, "k")), ["flag"]);
    }

    #[test]
    fn values_are_not_pointers_and_recursion_ends() {
        let src = r#"
__device__ float lerp(float a, float b, float t) { return a + t * (b - a); }
__device__ void rec(float* p, int n) { if (n > 0) rec(p, n - 1); }
__device__ void rec2(float* p, int n) { if (n > 0) { rec2(p, n - 1); } else { p[0] = 1.0f; } }
__global__ void k(float* m, float* p, float* s, const float* y, const int* rows) {
    float v = lerp(m[0], m[1], 0.5f);
    rec(p, 3);
    rec2(s, 3);
    float* row = s + rows[0];
    (void)v; (void)row; (void)y;
}
"#;
        let w = writes_of(src, "k");
        assert_eq!(yes(&w), ["s"]);
        assert!(maybe(&w).is_empty(), "{w:?}");
    }
}
