//! From the frontend IR to a [`LoopShape`]: proves (or refuses) every fact manual unrolling needs.
//!
//! The IR gives the loop's spans, its canonical header, identifier uses with their access,
//! jumps with their targets, declarations and macros. What the IR does not say directly
//! (unary `&`, member access, calls inside the bound, preprocessor lines in the body) is read
//! from the tokens of the loop's own text with [`crate::text::tokenize`].

use crate::refusal::{Part, Refusal};
use crate::shape::{Direction, IntType, LoopShape, StepShape};
use crate::text::{self, Tok, Token};
use frontend::tu::TranslationUnit;
use frontend::{
    Access, CmpOp, Expr, Function, JumpKind, JumpTarget, Loop, LoopKind, SourceFile, Span, Step,
};
use std::collections::HashSet;
use std::ops::Range;

/// HIP/CUDA built-in variables (the unsigned ones and the `int` `warpSize`): the one list is
/// `frontend::builtins`.
use frontend::builtins::{is_unsigned_variable, is_variable as is_builtin, WARP_SIZE_VARIABLE};

/// Side-effect-free functions a bound may call.
const PURE_CALLS: &[&str] = &[
    "min", "max", "umin", "umax", "llmin", "llmax", "ullmin", "ullmax", "abs", "sizeof", "alignof",
];

const TYPE_WORDS: &[&str] = &[
    "int",
    "unsigned",
    "signed",
    "long",
    "short",
    "char",
    "size_t",
    "ptrdiff_t",
    "int32_t",
    "uint32_t",
    "int64_t",
    "uint64_t",
    "int16_t",
    "uint16_t",
    "int8_t",
    "uint8_t",
    "uint",
    "std",
    "static_cast",
    "const",
    "true",
    "false",
    "nullptr",
];

const UNSIGNED_TYPE_WORDS: &[&str] = &[
    "unsigned", "size_t", "uint32_t", "uint64_t", "uint16_t", "uint8_t", "uint",
];

const ASSIGN_OPS: &[&str] = &[
    "=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>=", "++", "--",
];

fn span_range(s: Span) -> Range<usize> {
    s.start..s.end
}

fn inside(outer: &Range<usize>, s: Span) -> bool {
    outer.start <= s.start && s.end <= outer.end
}

fn line_of(src: &[u8], pos: usize) -> u32 {
    src[..pos.min(src.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count() as u32
        + 1
}

/// Is the token at `i` a unary operator (no operand before it)?
fn is_unary(toks: &[Token], i: usize) -> bool {
    match i.checked_sub(1).map(|p| &toks[p].tok) {
        None => true,
        Some(Tok::Ident(w)) => matches!(w.as_str(), "return" | "case" | "sizeof"),
        Some(Tok::Num(_) | Tok::Str) => false,
        Some(Tok::Punct(")" | "]")) => false,
        Some(_) => true,
    }
}

struct Ctx<'a> {
    src: &'a [u8],
    file: &'a SourceFile,
    /// The file's translation unit: its headers' macros, functions, declarations and tokens
    /// count as the file's own, and what it could not find makes unseen names suspect.
    tu: &'a TranslationUnit,
    func: &'a Function,
    var: &'a str,
    body: Range<usize>,
    /// Tokens of the whole function definition.
    func_toks: Vec<Token>,
    /// Tokens of the whole file (for declarations of the functions the body calls).
    file_toks: Vec<Token>,
    /// The names this file declares outside function bodies (see
    /// [`frontend::tu::declared_names`]).
    declared: HashSet<String>,
}

/// The tokens of the file and of every header of its unit, each with its bytes.
fn unit_tokens<'c>(cx: &'c Ctx<'_>) -> impl Iterator<Item = (&'c [u8], &'c [Token])> + 'c {
    std::iter::once((cx.src, cx.file_toks.as_slice()))
        .chain(cx.tu.headers.iter().map(|h| (h.bytes(), h.parsed.tokens())))
}

impl Ctx<'_> {
    fn line(&self, pos: usize) -> u32 {
        line_of(self.src, pos)
    }

    /// Declared type text of `name` (a local declared before `before`, or a parameter).
    fn type_of(&self, name: &str, before: usize) -> Option<&str> {
        self.func
            .decls
            .iter()
            .rfind(|d| d.name == name && d.span.start < before)
            .map(|d| d.type_text.as_str())
            .or_else(|| {
                self.func
                    .params
                    .iter()
                    .find(|p| p.name == name)
                    .map(|p| p.type_text.as_str())
            })
    }

    fn is_local_or_param(&self, name: &str) -> bool {
        self.func.decls.iter().any(|d| d.name == name)
            || self.func.params.iter().any(|p| p.name == name)
    }

    /// The tokens of the loop body.
    fn body_toks(&self) -> Vec<&Token> {
        self.func_toks
            .iter()
            .filter(|t| self.body.start <= t.range.start && t.range.end <= self.body.end)
            .collect()
    }

    /// `name` passed, inside the loop body, as a whole argument to a function of this file
    /// whose parameter at that position is a non-const reference (the IR does not mark such
    /// uses as writes). Returns the offset of the use.
    fn passed_by_reference(&self, name: &str) -> Option<usize> {
        let t = self.body_toks();
        for i in 1..t.len().saturating_sub(1) {
            if !matches!(&t[i].tok, Tok::Ident(w) if w == name)
                || !matches!(t[i - 1].tok, Tok::Punct("(" | ","))
                || !matches!(t[i + 1].tok, Tok::Punct(")" | ","))
            {
                continue;
            }
            // Walk back to the unclosed `(`, counting the commas before the argument.
            let (mut depth, mut pos, mut j) = (0i32, 0usize, i);
            let open = loop {
                if j == 0 {
                    break None;
                }
                j -= 1;
                match t[j].tok {
                    Tok::Punct(")" | "]" | "}") => depth += 1,
                    Tok::Punct("(" | "[" | "{") if depth > 0 => depth -= 1,
                    Tok::Punct("(") => break Some(j),
                    Tok::Punct("[" | "{") => break None,
                    Tok::Punct(",") if depth == 0 => pos += 1,
                    _ => {}
                }
            };
            let Some(open) = open else { continue };
            let Some(Tok::Ident(callee)) = open.checked_sub(1).map(|k| &t[k].tok) else {
                continue;
            };
            if self.param_may_be_mutable_ref(callee, pos) {
                return Some(t[i].range.start);
            }
        }
        None
    }

    /// Does a function `callee` declared or defined in this file or one of its headers, or a
    /// lambda stored in a variable (or `swap`, which takes its arguments by reference), have a non-const reference
    /// parameter at position `pos`? A callable variable of unknown signature may.
    fn param_may_be_mutable_ref(&self, callee: &str, pos: usize) -> bool {
        if callee == "swap" {
            return true;
        }
        let mut lambda = false;
        for (src, t) in unit_tokens(self) {
            for k in 1..t.len().saturating_sub(1) {
                // A declarator `TYPE callee(`: the name follows a type word, `*` or `&`.
                let declarator = match &t[k - 1].tok {
                    Tok::Ident(w) => !matches!(
                        w.as_str(),
                        "return" | "case" | "else" | "do" | "new" | "delete" | "throw" | "sizeof"
                    ),
                    Tok::Punct(p) => matches!(*p, "*" | "&" | "&&"),
                    _ => false,
                };
                if !matches!(&t[k].tok, Tok::Ident(w) if w == callee) {
                    continue;
                }
                // `TYPE callee(...)`, or a lambda `callee = [...](...)`: the parameter list's `(`.
                let open = if declarator && t[k + 1].tok == Tok::Punct("(") {
                    k + 1
                } else if t[k + 1].tok == Tok::Punct("=")
                    && t.get(k + 2).is_some_and(|x| x.tok == Tok::Punct("["))
                {
                    let Some(close) = (k + 2..t.len()).find(|&j| t[j].tok == Tok::Punct("]"))
                    else {
                        continue;
                    };
                    if t.get(close + 1).is_none_or(|x| x.tok != Tok::Punct("(")) {
                        continue;
                    }
                    lambda = true;
                    close + 1
                } else {
                    continue;
                };
                // The parameter at `pos`: tokens between the commas at depth 1.
                let (mut depth, mut n, mut from) = (0i32, 0usize, None);
                for (j, x) in t.iter().enumerate().skip(open) {
                    match x.tok {
                        Tok::Punct("(" | "[" | "{" | "<") => {
                            depth += 1;
                            if depth == 1 && n == pos {
                                from = Some(j + 1);
                            }
                        }
                        Tok::Punct(")" | "]" | "}" | ">") => depth -= 1,
                        Tok::Punct(",") if depth == 1 => {
                            n += 1;
                            if n == pos {
                                from = Some(j + 1);
                            }
                        }
                        _ => {}
                    }
                    let end_of_param =
                        depth == 0 || (depth == 1 && x.tok == Tok::Punct(",") && n == pos + 1);
                    if end_of_param {
                        if let Some(f) = from.filter(|&f| f < j) {
                            let text =
                                String::from_utf8_lossy(&src[t[f].range.start..t[j - 1].range.end]);
                            if is_mutable_ref(&text) {
                                return true;
                            }
                        }
                        break;
                    }
                }
            }
        }
        // A callable local or parameter (functor, function pointer) of unknown signature may
        // take its arguments by reference.
        !lambda && self.is_local_or_param(callee)
    }

    /// A macro used in the loop body that writes `name`: its text assigns, increments or takes
    /// the address of `name`, or of a parameter whose argument names `name`. Returns the offset
    /// of the use.
    fn macro_writes(&self, name: &str) -> Option<usize> {
        let t = self.body_toks();
        for (i, tok) in t.iter().enumerate() {
            let Tok::Ident(w) = &tok.tok else { continue };
            let Some(m) = self.macro_def(w) else { continue };
            let written = macro_written_names(&m.body);
            let is_param = |x: &str| {
                m.params
                    .as_ref()
                    .is_some_and(|ps| ps.iter().any(|p| p == x))
            };
            if self.macro_text_writes(m, name, 0) {
                return Some(tok.range.start);
            }
            if !written.iter().any(|v| is_param(v))
                || t.get(i + 1).is_none_or(|x| x.tok != Tok::Punct("("))
            {
                continue;
            }
            let mut depth = 0i32;
            for x in &t[i + 1..] {
                match &x.tok {
                    Tok::Punct("(") => depth += 1,
                    Tok::Punct(")") => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    Tok::Ident(v) if v == name => return Some(tok.range.start),
                    _ => {}
                }
            }
        }
        None
    }

    /// Does the text of macro `m`, or of a macro it uses, write `name` (not one of its
    /// parameters)?
    fn macro_text_writes(&self, m: &frontend::MacroDef, name: &str, depth: u32) -> bool {
        let is_param = |x: &str| {
            m.params
                .as_ref()
                .is_some_and(|ps| ps.iter().any(|p| p == x))
        };
        if macro_written_names(&m.body)
            .iter()
            .any(|v| v == name && !is_param(v))
        {
            return true;
        }
        depth < 8
            && text::tokenize(m.body.as_bytes(), 0..m.body.len())
                .iter()
                .any(|x| match &x.tok {
                    Tok::Ident(w) if *w != m.name && !is_param(w) => self
                        .macro_def(w)
                        .is_some_and(|inner| self.macro_text_writes(inner, name, depth + 1)),
                    _ => false,
                })
    }

    /// Why macro `m` (used in the body), or a macro it uses, cannot be copied: it jumps,
    /// differs between copies, or reads the induction variable (not as one of its parameters,
    /// which the copies substitute).
    fn macro_in_body_problem(&self, m: &frontend::MacroDef, depth: u32) -> Option<String> {
        let is_param = |x: &str| {
            m.params
                .as_ref()
                .is_some_and(|ps| ps.iter().any(|p| p == x))
        };
        for mt in text::tokenize(m.body.as_bytes(), 0..m.body.len()) {
            let Tok::Ident(x) = &mt.tok else { continue };
            if matches!(
                x.as_str(),
                "break" | "continue" | "return" | "goto" | "__LINE__" | "__COUNTER__"
            ) {
                return Some(format!("contains `{x}`"));
            }
            if is_param(x) {
                continue;
            }
            if x == self.var {
                return Some(format!("refers to the induction variable `{}`", self.var));
            }
            if depth < 8 && *x != m.name {
                if let Some(why) = self
                    .macro_def(x)
                    .and_then(|inner| self.macro_in_body_problem(inner, depth + 1))
                {
                    return Some(format!("uses macro `{x}`, which {why}"));
                }
            }
        }
        None
    }

    /// `&name` (unary), `name` bound to a reference declaration or captured by a `[&]` lambda
    /// outside the body, or `name` itself a local reference, anywhere in the function.
    fn address_taken(&self, name: &str) -> Option<usize> {
        let t = &self.func_toks;
        for i in 0..t.len() {
            if t[i].tok == Tok::Punct("&") && is_unary(t, i) {
                // `&name`, `&name[3]` and `&(name)` all take an address of (part of) name.
                let mut j = i + 1;
                while j < t.len() && t[j].tok == Tok::Punct("(") {
                    j += 1;
                }
                if matches!(&t.get(j).map(|x| &x.tok), Some(Tok::Ident(w)) if w == name) {
                    return Some(t[i].range.start);
                }
            }
        }
        for d in &self.func.decls {
            let head = String::from_utf8_lossy(
                &self.src[d.span.start..d.name_span.start.max(d.span.start)],
            );
            if d.is_pointer_or_ref && head.contains('&') && d.init_idents.iter().any(|n| n == name)
            {
                return Some(d.span.start);
            }
        }
        for d in &self.func.decls {
            let head = &self.src[d.span.start..d.name_span.start.max(d.span.start)];
            if d.name == name && head.contains(&b'&') {
                return Some(d.span.start);
            }
        }
        // A lambda outside the body with a by-reference default capture that names `name`
        // (`[&name]` is a unary `&` above; lambdas inside the body are checked by the caller).
        for l in self
            .func
            .lambdas
            .iter()
            .filter(|l| !inside(&self.body, **l))
        {
            let toks: Vec<&Token> = t
                .iter()
                .filter(|x| l.start <= x.range.start && x.range.end <= l.end)
                .collect();
            let captures_by_ref = toks
                .iter()
                .skip(1)
                .take_while(|x| x.tok != Tok::Punct("]"))
                .any(|x| x.tok == Tok::Punct("&"));
            if captures_by_ref
                && toks
                    .iter()
                    .any(|x| matches!(&x.tok, Tok::Ident(w) if w == name))
            {
                return Some(l.start);
            }
        }
        for p in &self.func.params {
            let text =
                String::from_utf8_lossy(&self.src[p.span.start..p.span.end.min(self.src.len())]);
            if p.name == name && text.contains('&') {
                return Some(p.span.start);
            }
        }
        None
    }

    /// Names in the function's signature and template header (template parameters and the
    /// like): constants for the loop.
    fn in_signature(&self, name: &str) -> bool {
        let sig = self.func.span.start..self.func.body.start;
        self.func_toks.iter().any(|t| {
            inside(
                &sig,
                Span {
                    start: t.range.start,
                    end: t.range.end,
                    ..Default::default()
                },
            ) && matches!(&t.tok, Tok::Ident(w) if w == name)
        }) && !self.func.params.iter().any(|p| p.name == name)
    }

    /// A variable declared at the global scope of this file or one of its headers that a
    /// kernel may write (not `const`,
    /// `constexpr` or `__constant__`), read from the tokens: the IR lists only initialized
    /// globals.
    fn mutable_global(&self, name: &str) -> bool {
        let files = std::iter::once(self.file).chain(self.tu.headers.iter().map(|h| h.file()));
        unit_tokens(self).zip(files).any(|((_, t), file)| {
        let in_function = |pos: usize| {
            file.functions
                .iter()
                .any(|f| f.span.start <= pos && pos < f.span.end)
        };
        (1..t.len().saturating_sub(1)).any(|k| {
            let declarator = matches!(&t[k].tok, Tok::Ident(w) if w == name)
                && matches!(t[k - 1].tok, Tok::Ident(_) | Tok::Punct("*" | "&"))
                && matches!(t[k + 1].tok, Tok::Punct(";" | "=" | "[" | "," | "{"))
                && !in_function(t[k].range.start);
            declarator
                && !t[..k]
                    .iter()
                    .rev()
                    .take_while(|x| {
                        !matches!(x.tok, Tok::Punct(";" | "{" | "}") | Tok::Directive(_))
                    })
                    .any(|x| {
                        matches!(&x.tok, Tok::Ident(w) if matches!(w.as_str(), "const" | "constexpr" | "__constant__"))
                    })
        })
        })
    }

    /// The definition of macro `name`: this file's last one, else the unit's headers'.
    fn macro_def(&self, name: &str) -> Option<&frontend::MacroDef> {
        self.file
            .macros
            .iter()
            .rev()
            .find(|m| m.name == name)
            .or_else(|| self.tu.macro_def(name))
    }

    /// Where an unseen name may come from, for the refusal's message.
    fn unseen_why(&self) -> &'static str {
        if self.tu.has_missing() {
            "an include that was not found"
        } else {
            "a system header or the compiler's command line"
        }
    }

    /// True when `name` is defined or declared somewhere the tool can see: a macro of the unit,
    /// a local or parameter, a name of the function's signature or template header, a name the
    /// file or a header declares outside function bodies (variables, types, enumerators,
    /// template parameters, prototypes), a function of the unit, a HIP/CUDA built-in, or a
    /// constant of the system headers known by name (`FLT_MAX`).
    fn visible(&self, name: &str) -> bool {
        self.macro_def(name).is_some()
            || self.is_local_or_param(name)
            || self.in_signature(name)
            || self.declared.contains(name)
            || self.file.functions.iter().any(|f| f.name == name)
            || self.tu.declares(name)
            || is_builtin(name)
            || TYPE_WORDS.contains(&name)
            || name.starts_with("__")
            || frontend::known::is_system_constant(name)
    }

    /// Prove that the bound or step expression in `range` is loop-invariant and free of side
    /// effects; returns the variables it reads (locals and parameters).
    fn invariant(&self, part: Part, range: Range<usize>) -> Result<Vec<String>, Refusal> {
        let toks = text::tokenize(self.src, range);
        let mut vars = Vec::new();
        for (i, t) in toks.iter().enumerate() {
            let prev = i.checked_sub(1).map(|p| &toks[p].tok);
            let next = toks.get(i + 1).map(|x| &x.tok);
            match &t.tok {
                Tok::Punct("[") => {
                    return Err(Refusal::ReadsMemory {
                        part,
                        what: "[]".into(),
                    })
                }
                Tok::Punct("->") => {
                    return Err(Refusal::ReadsMemory {
                        part,
                        what: "->".into(),
                    })
                }
                Tok::Punct(p) if ASSIGN_OPS.contains(p) => {
                    return Err(Refusal::SideEffects {
                        part,
                        op: p.to_string(),
                    })
                }
                Tok::Punct(p @ ("*" | "&")) if is_unary(&toks, i) => {
                    return Err(Refusal::ReadsMemory {
                        part,
                        what: format!("unary {p}"),
                    });
                }
                Tok::Punct(".") => {
                    let ok = matches!(prev, Some(Tok::Ident(w)) if is_builtin(w));
                    if !ok {
                        // `warp.size()`: a member function, whatever `warp` is.
                        if let (Some(Tok::Ident(obj)), Some(Tok::Ident(m)), Some(Tok::Punct("("))) =
                            (prev, next, toks.get(i + 2).map(|x| &x.tok))
                        {
                            return Err(Refusal::CallsFunction {
                                part,
                                callee: format!("{obj}.{m}"),
                            });
                        }
                        return Err(Refusal::ReadsMemory {
                            part,
                            what: "member access".into(),
                        });
                    }
                }
                Tok::Str => {
                    return Err(Refusal::ReadsMemory {
                        part,
                        what: "string literal".into(),
                    })
                }
                Tok::Ident(w) => {
                    if matches!(prev, Some(Tok::Punct("." | "->"))) {
                        continue;
                    }
                    if matches!(prev, Some(Tok::Punct("::"))) {
                        // A qualified name: a namespace constant, or a call.
                        if next == Some(&Tok::Punct("(")) && !PURE_CALLS.contains(&w.as_str()) {
                            return Err(Refusal::CallsFunction {
                                part,
                                callee: w.clone(),
                            });
                        }
                        continue;
                    }
                    if w == self.var {
                        return Err(Refusal::ReadsInductionVariable { part });
                    }
                    if matches!(next, Some(Tok::Punct("." | "->"))) && !is_builtin(w) {
                        continue; // the member access is the reason, reported at its `.`/`->`
                    }
                    if TYPE_WORDS.contains(&w.as_str()) || is_builtin(w) {
                        continue;
                    }
                    if next == Some(&Tok::Punct("(")) {
                        if PURE_CALLS.contains(&w.as_str()) {
                            continue;
                        }
                        if let Some(m) = self.macro_def(w) {
                            self.macro_reads(part, m, &mut vars, 0)?;
                            continue;
                        }
                        return Err(Refusal::CallsFunction {
                            part,
                            callee: w.clone(),
                        });
                    }
                    if next == Some(&Tok::Punct("::")) {
                        continue;
                    }
                    if let Some(m) = self.macro_def(w) {
                        self.macro_reads(part, m, &mut vars, 0)?;
                        continue;
                    }
                    self.plain_name(part, w, &mut vars)?;
                }
                _ => {}
            }
        }
        vars.sort();
        vars.dedup();
        for v in &vars {
            if v == self.var {
                return Err(Refusal::ReadsInductionVariable { part });
            }
            if let Some(u) =
                self.func.idents.iter().find(|u| {
                    u.name == *v && u.access == Access::Write && inside(&self.body, u.span)
                })
            {
                return Err(Refusal::WritesInvariant {
                    part,
                    name: v.clone(),
                    line: u.span.line,
                });
            }
            if let Some(pos) = self.passed_by_reference(v).or_else(|| self.macro_writes(v)) {
                return Err(Refusal::WritesInvariant {
                    part,
                    name: v.clone(),
                    line: self.line(pos),
                });
            }
            if let Some(pos) = self.address_taken(v) {
                return Err(Refusal::InvariantAddressTaken {
                    part,
                    name: v.clone(),
                    line: self.line(pos),
                });
            }
        }
        Ok(vars)
    }

    /// A name of the bound or step that is no macro, call or type word: a local or parameter
    /// (added to `vars`), a template parameter, or a constant-looking name that is no writable
    /// global of this file.
    fn plain_name(&self, part: Part, w: &str, vars: &mut Vec<String>) -> Result<(), Refusal> {
        if self.is_local_or_param(w) {
            vars.push(w.to_string());
            return Ok(());
        }
        // A constant-looking name nothing visible defines is refused later, by
        // `visible_names` (step 7a), with its line.
        if self.in_signature(w) || (looks_constant(w) && !self.mutable_global(w)) {
            return Ok(());
        }
        Err(Refusal::ReadsNonLocal {
            part,
            name: w.to_string(),
        })
    }

    /// A macro used by the bound or step: no calls, memory reads or assignments in its text;
    /// the names it reads (other than its parameters), and the macros it uses, are checked as if
    /// written in place.
    fn macro_reads(
        &self,
        part: Part,
        m: &frontend::MacroDef,
        vars: &mut Vec<String>,
        depth: u32,
    ) -> Result<(), Refusal> {
        if let Some(c) = m.calls.iter().find(|c| !PURE_CALLS.contains(&c.as_str())) {
            return Err(Refusal::CallsFunction {
                part,
                callee: c.clone(),
            });
        }
        if m.body.contains('[') || m.body.contains("->") || m.body.contains('=') {
            return Err(Refusal::ReadsMemory {
                part,
                what: format!("macro {}", m.name),
            });
        }
        let is_param = |x: &str| {
            m.params
                .as_ref()
                .is_some_and(|ps| ps.iter().any(|p| p == x))
        };
        for x in m.idents.iter().filter(|x| !is_param(x)) {
            if x == self.var {
                return Err(Refusal::ReadsInductionVariable { part });
            }
            if let Some(inner) = self.macro_def(x) {
                // Nested macros are read as well (a self-referential one stops expanding).
                if depth < 8 && inner.name != m.name {
                    self.macro_reads(part, inner, vars, depth + 1)?;
                }
                continue;
            }
            if TYPE_WORDS.contains(&x.as_str()) || is_builtin(x) || PURE_CALLS.contains(&x.as_str())
            {
                continue;
            }
            self.plain_name(part, x, vars)?;
        }
        Ok(())
    }

    /// May the comparison in the condition be done in an unsigned type? True unless every
    /// operand of the bound is known to be signed.
    fn bound_may_be_unsigned(&self, range: Range<usize>) -> bool {
        let toks = text::tokenize(self.src, range.clone());
        for (i, t) in toks.iter().enumerate() {
            let prev = i.checked_sub(1).map(|p| &toks[p].tok);
            match &t.tok {
                Tok::Num(n) => {
                    let lower = n.to_ascii_lowercase();
                    if lower.contains('u')
                        || lower.starts_with("0x")
                        || lower.starts_with("0b")
                        || (lower.starts_with('0') && lower.len() > 1)
                    {
                        return true;
                    }
                }
                Tok::Ident(w) => {
                    if matches!(prev, Some(Tok::Punct("." | "->" | "::"))) {
                        continue;
                    }
                    if is_unsigned_variable(w) || UNSIGNED_TYPE_WORDS.contains(&w.as_str()) {
                        return true;
                    }
                    if w == "sizeof" || w == "alignof" {
                        return true;
                    }
                    if TYPE_WORDS.contains(&w.as_str())
                        || w == WARP_SIZE_VARIABLE
                        || PURE_CALLS.contains(&w.as_str())
                    {
                        continue;
                    }
                    match self.type_of(w, range.start).and_then(IntType::from_text) {
                        Some(t) if t.signed => {}
                        _ => {
                            // A macro whose body is a plain decimal literal is a signed int.
                            let signed_macro = self.macro_literal(w).is_some();
                            if !signed_macro {
                                return true;
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        false
    }

    /// The value of an object-like macro whose body is a plain decimal literal (optionally
    /// parenthesized): a signed `int`/`long` constant.
    fn macro_literal(&self, name: &str) -> Option<i64> {
        let m = self.macro_def(name).filter(|m| m.params.is_none())?;
        m.body
            .trim()
            .trim_start_matches('(')
            .trim_end_matches(')')
            .trim()
            .parse::<i64>()
            .ok()
    }

    /// Value of a constant expression (integer literals, `-`, `+`, `*`, object-like macros
    /// holding a literal); `None` when not constant or written with an unsigned suffix.
    fn const_value(&self, e: &Expr) -> Option<i128> {
        match e {
            Expr::Int { value, span } => {
                let t =
                    String::from_utf8_lossy(&self.src[span.start..span.end]).to_ascii_lowercase();
                if t.contains('u') {
                    None
                } else {
                    Some(*value)
                }
            }
            Expr::Unary { op, operand, .. } if op == "-" => self.const_value(operand).map(|v| -v),
            Expr::Unary { op, operand, .. } if op == "+" => self.const_value(operand),
            Expr::Binary { op, lhs, rhs, .. } => {
                let (a, b) = (self.const_value(lhs)?, self.const_value(rhs)?);
                match op.as_str() {
                    "+" => a.checked_add(b),
                    "-" => a.checked_sub(b),
                    "*" => a.checked_mul(b),
                    _ => None,
                }
            }
            Expr::Ident { name, .. } => self.macro_literal(name).map(i128::from),
            _ => None,
        }
    }
}

/// A parameter or declaration text with a non-const reference (`int& i`, `T &x`, `T&& x`).
fn is_mutable_ref(text: &str) -> bool {
    let t = text.trim_start();
    // `T&& x` counts: a forwarding reference binds an lvalue argument as `T&`.
    t.contains('&') && !t.starts_with("const ") && !t.contains(" const&") && !t.contains(" const &")
}

/// Names a macro body writes: followed (past closing parentheses) by an assignment, `++` or
/// `--`, or preceded (past opening parentheses) by `++`, `--` or a unary `&`.
fn macro_written_names(body: &str) -> Vec<String> {
    let t = text::tokenize(body.as_bytes(), 0..body.len());
    let mut out = Vec::new();
    for (i, x) in t.iter().enumerate() {
        let Tok::Ident(w) = &x.tok else { continue };
        let after = t[i + 1..].iter().find(|y| y.tok != Tok::Punct(")"));
        let before = t[..i].iter().rposition(|y| y.tok != Tok::Punct("("));
        let assigned =
            after.is_some_and(|y| matches!(y.tok, Tok::Punct(p) if ASSIGN_OPS.contains(&p)));
        let pre = before.is_some_and(|b| {
            matches!(t[b].tok, Tok::Punct("++" | "--"))
                || (t[b].tok == Tok::Punct("&") && is_unary(&t, b))
        });
        if assigned || pre {
            out.push(w.clone());
        }
    }
    out
}

/// A single (possibly qualified) type name that is not a known non-integer type: a template
/// parameter or typedef that may be an integer (`J`, `index_t`, `rocsparse_int`), or `auto`.
fn is_generic_type_name(t: &str) -> bool {
    let t = t.trim();
    let plain = !t.is_empty()
        && t.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
        && !t.starts_with(|c: char| c.is_ascii_digit());
    let non_integer = [
        "float",
        "double",
        "half",
        "__half",
        "bool",
        "char",
        "void",
        "__hip_bfloat16",
        "hip_bfloat16",
        "bfloat16",
        "float2",
        "float4",
        "double2",
        "int2",
        "int4",
        "uint2",
        "uint4",
        "dim3",
        "?",
    ];
    plain && !non_integer.contains(&t.trim_start_matches("std::"))
}

/// `ALL_CAPS` names and `kName` constants: macros or constants from headers and templates.
fn looks_constant(w: &str) -> bool {
    let k =
        w.len() > 1 && w.starts_with('k') && w[1..].starts_with(|c: char| c.is_ascii_uppercase());
    frontend::spelt_as_macro(w) || k
}

/// Trip count of `for (i = a; i CMP b; i += s)` when a, b, s are constants and every value the
/// loop computes stays inside `ty` (so no wrap can make it run differently): the workspace's one
/// evaluator, [`frontend::trip::count`], with `ty`'s range.
fn constant_trip(ty: IntType, a: i128, b: i128, s: i128, cmp: CmpOp) -> Option<u128> {
    frontend::trip::count(a, b, s, cmp, Some((ty.min(), ty.max()))).map(u128::from)
}

fn cmp_text(c: CmpOp) -> &'static str {
    match c {
        CmpOp::Lt => "<",
        CmpOp::Le => "<=",
        CmpOp::Gt => ">",
        CmpOp::Ge => ">=",
        CmpOp::Ne => "!=",
    }
}

/// A canonical header, from the IR's `ForHeader`.
struct Hdr<'a> {
    var: String,
    var_type: Option<String>,
    cmp: CmpOp,
    bound: Range<usize>,
    step: HStep,
    init_value: Option<&'a Expr>,
    bound_expr: Option<&'a Expr>,
}

enum HStep {
    Const(i64),
    Add(Range<usize>),
    Sub(Range<usize>),
}

/// Build the [`LoopShape`] of `lp` (a loop of `func`), or say why it cannot be unrolled by hand.
///
/// The steps run in a fixed order (the first refusal wins, so the order is part of the
/// behaviour): the header, the step, the induction variable's type, the bound, the induction
/// variable inside the body, jumps and declarations, token-level facts of the body, the
/// condition, and finally the layout of the rewrite.
pub fn from_ir(
    src: &[u8],
    file: &SourceFile,
    func: &Function,
    lp: &Loop,
) -> Result<LoopShape, Refusal> {
    from_ir_in(src, file, &TranslationUnit::empty(), func, lp)
}

/// [`from_ir`] in the file's translation unit: the macros, functions and declarations of its
/// headers are seen as the file's own.
pub fn from_ir_in(
    src: &[u8],
    file: &SourceFile,
    tu: &TranslationUnit,
    func: &Function,
    lp: &Loop,
) -> Result<LoopShape, Refusal> {
    let Header {
        h,
        cond: cond_r,
        update,
    } = header(src, file, lp)?;
    let var = h.var.as_str();
    let body = span_range(lp.body);
    let func_toks = text::tokenize(src, span_range(func.span));
    let file_toks = text::tokenize(src, 0..src.len());
    let declared = frontend::tu::declared_names(src, &file_toks, file);
    let cx = Ctx {
        src,
        file,
        tu,
        func,
        var,
        body: body.clone(),
        func_toks,
        file_toks,
        declared,
    };
    let (direction, step) = cx.step_shape(&h)?;
    let Induction {
        ty,
        generic,
        ty_text,
    } = cx.induction_type(&h, lp, &step)?;
    // The bound: invariant, side-effect free, not reading the induction variable.
    let bound = h.bound.clone();
    cx.invariant(Part::Bound, bound.clone())?;
    let span = span_range(lp.span);
    cx.induction_variable_untouched(&span, h.var_type.is_some())?;
    let continues = cx.jumps_and_declarations(lp)?;
    let step_range = match &h.step {
        HStep::Add(e) | HStep::Sub(e) => Some(e.clone()),
        HStep::Const(_) => None,
    };
    cx.visible_names(bound.clone(), step_range)?;
    let body_var = cx.body_tokens()?;
    let cond_var = cx.cond_var(cond_r.clone())?;
    let (init, header_end) = cx.header_layout(lp)?;

    let const_trip = match (
        &step,
        h.init_value.and_then(|e| cx.const_value(e)),
        h.bound_expr.and_then(|e| cx.const_value(e)),
    ) {
        (StepShape::Const(a), Some(a0), Some(b)) => {
            let s = if direction == Direction::Up {
                *a as i128
            } else {
                -(*a as i128)
            };
            constant_trip(ty, a0, b, s, h.cmp)
        }
        _ => None,
    };
    let cmp_may_be_unsigned = ty.signed && cx.bound_may_be_unsigned(bound);

    let keep_ranges = file
        .inert
        .iter()
        .filter(|s| inside(&body, **s) && src.get(s.start).is_some_and(|&b| b != b'/'))
        .map(|s| span_range(*s))
        .collect();
    let indent = text::indent_of(src, lp.keyword.start).to_vec();
    let indent_unit = text::indent_unit(src, body.clone(), &indent);

    Ok(LoopShape {
        var: var.into(),
        ty,
        ty_text,
        generic,
        direction,
        step,
        span,
        init,
        cond: cond_r,
        cond_var,
        update,
        header_end,
        body,
        body_is_block: lp.body_is_block,
        body_var,
        continues,
        keep_ranges,
        cmp_may_be_unsigned,
        const_trip,
        indent,
        indent_unit,
        newline: if file.crlf { "\r\n" } else { "\n" },
        fresh: cx.fresh_name(lp),
    })
}

/// A canonical header and the ranges of its condition and update.
struct Header<'a> {
    h: Hdr<'a>,
    cond: Range<usize>,
    update: Range<usize>,
}

/// The induction variable's type: as recognised, whether it is generic (a template parameter,
/// typedef or `auto`, handled with 64-bit signed limits), and as written in the rewrite.
struct Induction {
    ty: IntType,
    generic: bool,
    ty_text: String,
}

/// Step 1: a `for` loop free of parse errors, with no top-level comma in its header, and a
/// canonical header (the IR's, `frontend`'s one reading of a `for` header).
fn header<'a>(src: &[u8], file: &SourceFile, lp: &'a Loop) -> Result<Header<'a>, Refusal> {
    if lp.kind != LoopKind::For {
        let kind = match lp.kind {
            LoopKind::While => "while",
            LoopKind::Do => "do",
            LoopKind::RangeFor => "range-for",
            LoopKind::For => "for",
        };
        return Err(Refusal::NotAForLoop { kind: kind.into() });
    }
    let span = span_range(lp.span);
    if file
        .parse_errors
        .iter()
        .any(|e| e.span.start < span.end && span.start < e.span.end.max(e.span.start + 1))
    {
        return Err(Refusal::ParseErrorsInLoop);
    }
    for r in [lp.init, lp.condition, lp.update].into_iter().flatten() {
        if text::has_top_level_comma(src, span_range(r)) {
            return Err(Refusal::CommaInHeader);
        }
    }
    let (Some(cond), Some(update)) = (lp.condition, lp.update) else {
        return Err(Refusal::NonCanonicalHeader);
    };
    let h = match &lp.header {
        Some(h) => Hdr {
            var: h.var.clone(),
            var_type: h.var_type.clone(),
            cmp: h.cmp,
            bound: span_range(h.bound.span()),
            step: match &h.step {
                Step::Const(c) => HStep::Const(*c),
                Step::Add(e) => HStep::Add(span_range(e.span())),
                Step::Sub(e) => HStep::Sub(span_range(e.span())),
            },
            init_value: h.init_value.as_ref(),
            bound_expr: Some(&h.bound),
        },
        None => return Err(Refusal::NonCanonicalHeader),
    };
    Ok(Header {
        h,
        cond: span_range(cond),
        update: span_range(update),
    })
}

impl Ctx<'_> {
    /// Step 2: the direction and step, agreeing with the comparison (`!=` is refused); a
    /// non-constant step must be invariant.
    fn step_shape(&self, h: &Hdr<'_>) -> Result<(Direction, StepShape), Refusal> {
        if h.cmp == CmpOp::Ne {
            return Err(Refusal::UnsupportedComparison { op: "!=".into() });
        }
        let up_cmp = matches!(h.cmp, CmpOp::Lt | CmpOp::Le);
        match &h.step {
            HStep::Const(0) => Err(Refusal::ZeroStep),
            HStep::Const(c) => {
                let dir = if *c > 0 {
                    Direction::Up
                } else {
                    Direction::Down
                };
                if up_cmp != (dir == Direction::Up) {
                    return Err(Refusal::DirectionMismatch {
                        step_dir: if dir == Direction::Up { "up" } else { "down" },
                        cmp: cmp_text(h.cmp).into(),
                    });
                }
                Ok((dir, StepShape::Const(c.unsigned_abs())))
            }
            HStep::Add(e) | HStep::Sub(e) => {
                let dir = if matches!(h.step, HStep::Add(_)) {
                    Direction::Up
                } else {
                    Direction::Down
                };
                if up_cmp != (dir == Direction::Up) {
                    return Err(Refusal::UnknownStepSign {
                        step: String::from_utf8_lossy(&self.src[e.clone()]).into_owned(),
                        cmp: cmp_text(h.cmp).into(),
                    });
                }
                self.invariant(Part::Step, e.clone())?;
                Ok((dir, StepShape::Expr(e.clone())))
            }
        }
    }

    /// Step 3: the induction variable's integer type (declared in the init clause, or before
    /// the loop), wide enough for two steps.
    fn induction_type(
        &self,
        h: &Hdr<'_>,
        lp: &Loop,
        step: &StepShape,
    ) -> Result<Induction, Refusal> {
        let var = self.var;
        let ty_text = match &h.var_type {
            Some(t) => t.clone(),
            None => self
                .type_of(var, lp.span.start)
                .map(str::to_string)
                .unwrap_or_else(|| "?".into()),
        };
        let (ty, generic) = match IntType::from_text(&ty_text) {
            Some(t) => (t, false),
            // A template parameter, a typedef from a header or `auto`: handled with type-generic
            // limits, asserted to be an integer at compile time.
            None if is_generic_type_name(&ty_text) => (
                IntType {
                    signed: true,
                    bits: 64,
                },
                true,
            ),
            None => {
                return Err(Refusal::UnknownInductionType {
                    var: var.into(),
                    ty: ty_text.clone(),
                })
            }
        };
        let ty_text = if generic {
            format!("decltype({var})")
        } else {
            ty_text
        };
        if let StepShape::Const(a) = *step {
            if !crate::manual::fits(ty, generic, a, 2) {
                return Err(Refusal::FactorTooLarge {
                    factor: 2,
                    ty: ty_text,
                    step: a,
                });
            }
        }
        Ok(Induction {
            ty,
            generic,
            ty_text,
        })
    }

    /// Step 5: inside the body the induction variable is read only, never shadowed, never
    /// passed by reference or written by a macro, and its address is not taken in its scope
    /// (the loop when it is declared in the init clause, else the function).
    fn induction_variable_untouched(
        &self,
        span: &Range<usize>,
        declared_in_init: bool,
    ) -> Result<(), Refusal> {
        let (var, body, func) = (self.var, &self.body, self.func);
        for u in func
            .idents
            .iter()
            .filter(|u| u.name == var && inside(body, u.span))
        {
            match u.access {
                Access::Decl => {
                    return Err(Refusal::ShadowsInductionVariable {
                        var: var.into(),
                        line: u.span.line,
                    })
                }
                Access::Write => {
                    let t = &self.func_toks;
                    let amp = t
                        .iter()
                        .position(|x| x.range.start == u.span.start)
                        .is_some_and(|i| {
                            i > 0 && t[i - 1].tok == Tok::Punct("&") && is_unary(t, i - 1)
                        });
                    return Err(if amp {
                        Refusal::InductionVariableAddressTaken {
                            var: var.into(),
                            line: u.span.line,
                        }
                    } else {
                        Refusal::WritesInductionVariable {
                            var: var.into(),
                            line: u.span.line,
                        }
                    });
                }
                Access::Read => {}
            }
        }
        if let Some(d) = func
            .decls
            .iter()
            .find(|d| d.name == var && inside(body, d.span))
        {
            return Err(Refusal::ShadowsInductionVariable {
                var: var.into(),
                line: d.span.line,
            });
        }
        let scope = if declared_in_init {
            span.clone()
        } else {
            span_range(func.span)
        };
        if let Some(pos) = self
            .passed_by_reference(var)
            .or_else(|| self.macro_writes(var))
        {
            return Err(Refusal::WritesInductionVariable {
                var: var.into(),
                line: self.line(pos),
            });
        }
        if let Some(pos) = self.address_taken(var) {
            if scope.contains(&pos) {
                return Err(Refusal::InductionVariableAddressTaken {
                    var: var.into(),
                    line: self.line(pos),
                });
            }
        }
        Ok(())
    }

    /// Step 6: no jump leaves the loop but `continue` (whose offsets are returned, sorted), no
    /// label, `__shared__` or `static` declaration in the body.
    fn jumps_and_declarations(&self, lp: &Loop) -> Result<Vec<usize>, Refusal> {
        let (src, body, func) = (self.src, &self.body, self.func);
        let mut continues = Vec::new();
        for j in func.jumps.iter().filter(|j| inside(body, j.span)) {
            match (&j.kind, &j.target) {
                (JumpKind::Continue, JumpTarget::Loop(t)) if *t == lp.index => {
                    let at = j.span.start;
                    if !src[at..].starts_with(b"continue") {
                        return Err(Refusal::NonCanonicalHeader);
                    }
                    continues.push(at);
                }
                (JumpKind::Break, JumpTarget::Loop(t)) if *t == lp.index => {
                    return Err(Refusal::BreakLeavesLoop { line: j.span.line });
                }
                (JumpKind::Return, JumpTarget::Function) => {
                    return Err(Refusal::ReturnInBody { line: j.span.line })
                }
                (JumpKind::Goto, _) => return Err(Refusal::GotoInBody { line: j.span.line }),
                _ => {}
            }
        }
        continues.sort();
        if let Some(l) = func.labels.iter().find(|l| inside(body, l.span)) {
            return Err(Refusal::LabelInBody {
                name: l.name.clone(),
                line: l.span.line,
            });
        }
        if let Some(s) = func.shared.iter().find(|s| inside(body, s.span)) {
            return Err(Refusal::SharedDeclInBody { line: s.span.line });
        }
        if let Some(d) = func
            .decls
            .iter()
            .find(|d| inside(body, d.span) && src[d.span.start..d.span.end].starts_with(b"static"))
        {
            return Err(Refusal::StaticLocalInBody { line: d.span.line });
        }
        Ok(continues)
    }

    /// Step 7a: nothing the tool cannot see is assumed harmless. Every macro-looking
    /// (`ALL_CAPS`) name of the body, the bound and the step is defined somewhere visible (the
    /// file, its headers, the function's locals and signature, HIP/CUDA built-ins, system
    /// constants known by name); and when an include of the unit was not found, so is every
    /// function the body calls by a plain name (it may be a macro of that header). Names after
    /// `.`, `->` or `::` and before `::` are members and scopes, not macros.
    fn visible_names(
        &self,
        bound: Range<usize>,
        step: Option<Range<usize>>,
    ) -> Result<(), Refusal> {
        const KEYWORDS: &[&str] = &[
            "if",
            "for",
            "while",
            "do",
            "switch",
            "return",
            "sizeof",
            "alignof",
            "alignas",
            "decltype",
            "noexcept",
            "catch",
            "typeid",
            "static_assert",
            "new",
            "delete",
            "throw",
            "case",
            "defined",
            "asm",
            "volatile",
            "static_cast",
            "reinterpret_cast",
            "const_cast",
            "dynamic_cast",
            "template",
            "typename",
            "operator",
        ];
        // The function's own unknown specifier macros (`CUTLASS_DEVICE void f()`): defined
        // nowhere visible, they may expand to anything.
        if let Some(name) = self
            .func
            .unseen_specifiers
            .iter()
            .find(|n| self.macro_def(n).is_none())
        {
            return Err(Refusal::UnseenMacro {
                name: name.clone(),
                line: self.func.span.line,
                why: self.unseen_why(),
            });
        }
        let missing = self.tu.has_missing();
        for range in std::iter::once(self.body.clone())
            .chain(std::iter::once(bound))
            .chain(step)
        {
            let toks = text::tokenize(self.src, range);
            let mut directive_end = 0;
            for (i, t) in toks.iter().enumerate() {
                if let Tok::Directive(_) = t.tok {
                    directive_end = frontend::tu::logical_line_end(self.src, t.range.start);
                    continue;
                }
                if t.range.start < directive_end {
                    continue;
                }
                let Tok::Ident(w) = &t.tok else { continue };
                let prev = i.checked_sub(1).map(|p| &toks[p].tok);
                let next = toks.get(i + 1).map(|x| &x.tok);
                if w == self.var
                    || matches!(prev, Some(Tok::Punct("." | "->" | "::")))
                    || next == Some(&Tok::Punct("::"))
                {
                    continue;
                }
                // Spelt as a macro, a name nothing visible defines is taken for an unseen macro.
                let unseen = if frontend::spelt_as_macro(w) {
                    !self.visible(w)
                } else {
                    missing
                        && next == Some(&Tok::Punct("("))
                        && !KEYWORDS.contains(&w.as_str())
                        && !frontend::known::is_known_function(w, None, false)
                        && !self.visible(w)
                };
                if unseen {
                    return Err(Refusal::UnseenMacro {
                        name: w.clone(),
                        line: self.line(t.range.start),
                        why: self.unseen_why(),
                    });
                }
            }
        }
        Ok(())
    }

    /// Step 7: token-level facts of the body (no preprocessor line but `#pragma`, no
    /// `__shared__`, `__LINE__`/`__COUNTER__` or problematic macro, no lambda capturing the
    /// induction variable); returns the ranges where the body reads the induction variable.
    fn body_tokens(&self) -> Result<Vec<Range<usize>>, Refusal> {
        let var = self.var;
        let body_toks = text::tokenize(self.src, self.body.clone());
        let mut body_var = Vec::new();
        for (i, t) in body_toks.iter().enumerate() {
            let prev = i.checked_sub(1).map(|p| &body_toks[p].tok);
            match &t.tok {
                Tok::Directive(d) if d != "pragma" => {
                    return Err(Refusal::PreprocessorInBody {
                        directive: d.clone(),
                        line: self.line(t.range.start),
                    });
                }
                Tok::Ident(w) if w == "__shared__" => {
                    return Err(Refusal::SharedDeclInBody {
                        line: self.line(t.range.start),
                    })
                }
                Tok::Ident(w) if w == "__LINE__" || w == "__COUNTER__" => {
                    return Err(Refusal::MacroInBody {
                        name: w.clone(),
                        why: "differs between copies".into(),
                    });
                }
                Tok::Ident(w)
                    if w == var && !matches!(prev, Some(Tok::Punct("." | "->" | "::"))) =>
                {
                    body_var.push(t.range.clone());
                }
                Tok::Ident(w) if w == var => {}
                Tok::Ident(w) => {
                    if let Some(why) = self
                        .macro_def(w)
                        .and_then(|m| self.macro_in_body_problem(m, 0))
                    {
                        return Err(Refusal::MacroInBody {
                            name: w.clone(),
                            why,
                        });
                    }
                }
                _ => {}
            }
        }
        for l in self.func.lambdas.iter().filter(|l| inside(&self.body, **l)) {
            if body_var
                .iter()
                .any(|r| l.start <= r.start && r.end <= l.end)
            {
                return Err(Refusal::LambdaInBody { line: l.line });
            }
        }
        Ok(body_var)
    }

    /// Step 8: the condition reads the induction variable exactly once; its range.
    fn cond_var(&self, cond: Range<usize>) -> Result<Vec<Range<usize>>, Refusal> {
        let cond_var: Vec<Range<usize>> = text::tokenize(self.src, cond)
            .into_iter()
            .filter(|t| matches!(&t.tok, Tok::Ident(w) if w == self.var))
            .map(|t| t.range)
            .collect();
        if cond_var.len() != 1 {
            return Err(Refusal::ReadsInductionVariable { part: Part::Bound });
        }
        Ok(cond_var)
    }

    /// Step 9: the init clause without its `;` (when not empty) and the end of the header's
    /// closing parenthesis.
    fn header_layout(&self, lp: &Loop) -> Result<(Option<Range<usize>>, usize), Refusal> {
        let src = self.src;
        let init = lp.init.map(span_range).map(|r| {
            let mut e = r.end;
            while e > r.start && (src[e - 1] == b';' || src[e - 1].is_ascii_whitespace()) {
                e -= 1;
            }
            r.start..e
        });
        let init = init.filter(|r| !r.is_empty());
        let head_toks = text::tokenize(src, lp.span.start..self.body.start);
        match head_toks.last() {
            Some(t) if t.tok == Tok::Punct(")") => Ok((init, t.range.end)),
            _ => Err(Refusal::NonCanonicalHeader),
        }
    }

    /// A name for the rewrite's temporaries that no identifier of the function starts with.
    fn fresh_name(&self, lp: &Loop) -> String {
        let mut fresh = format!("hu_unroll_{}", lp.keyword.line);
        while self
            .func_toks
            .iter()
            .any(|t| matches!(&t.tok, Tok::Ident(w) if w.starts_with(&fresh)))
        {
            fresh.push('_');
        }
        fresh
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constant_trip_counts() {
        let int = IntType {
            signed: true,
            bits: 32,
        };
        assert_eq!(constant_trip(int, 0, 10, 3, CmpOp::Lt), Some(4));
        assert_eq!(constant_trip(int, 0, 9, 3, CmpOp::Le), Some(4));
        assert_eq!(constant_trip(int, 10, 0, -1, CmpOp::Gt), Some(10));
        assert_eq!(constant_trip(int, 10, 0, -1, CmpOp::Ge), Some(11));
        assert_eq!(constant_trip(int, 5, 0, 1, CmpOp::Lt), Some(0));
        let u8t = IntType {
            signed: false,
            bits: 8,
        };
        // 0, 2, ..., 254, then 256 wraps to 0: not a constant trip count.
        assert_eq!(constant_trip(u8t, 0, 255, 2, CmpOp::Lt), None);
    }

    #[test]
    fn constant_names() {
        assert!(looks_constant("BLOCK_SIZE"));
        assert!(looks_constant("kTile"));
        assert!(!looks_constant("n"));
        assert!(!looks_constant("keep"));
    }
}
