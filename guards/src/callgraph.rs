//! Reach through the translation unit: which `__device__` functions and macros of the file and
//! of the headers it includes (transitively, cycles included) do what a blocker looks for (a
//! barrier, an atomic, dynamic shared memory, a macro that leaves the code it expands into),
//! and which calls no visible body answers (`unresolved`).
//!
//! The model knows no rule: [`Reach::build`] is given, per blocker slot, the blocker's
//! [`Reaches`] (what a function body or a macro's replacement list does by itself, which calls
//! and inline assembly do it) and the graph carries it to every caller, in
//! O(functions + macros + edges) per blocker by a backwards breadth-first search from the
//! nodes that do it directly. Calls are resolved by `resolve` (the receiver's static type,
//! qualified names, constructors and destructors, `operator()` of functor temporaries and
//! variables; by name, to every candidate, only where the type is unknown), and also through
//! the callables of a function: local variables, parameters and assignments that hold a
//! function (`auto fp = &helper;`, `void (*fp)() = helper;`, `auto& r = helper;`) or a functor
//! (a variable of a class type with an `operator()`, or initialised from one).

use std::collections::{HashMap, HashSet, VecDeque};
use std::path::Path;

use frontend::tu::TranslationUnit;
use frontend::{Call, CallForm, Function, FunctionKind, MacroDef, SourceFile, Span, TypeDef};

use crate::resolve::{argument_type, type_leaf, ArgTypes, Argument, Index, Outcome, TypeRes};
use crate::util::display_callee;

/// The primitive site a function or macro reaches: `__syncthreads` at line 5 of file 0.
#[derive(Debug, Clone)]
pub struct Witness {
    pub what: String,
    pub span: Span,
    /// 0 for the analysed file, `k` for the unit's header `k - 1`.
    pub file: usize,
}

/// What a blocker finds by itself in a function body (or, given a span, in the part of it
/// inside that span: a lambda's body): what and where.
pub(crate) type InFunction = fn(&Unit<'_>, &Function, Option<Span>) -> Option<(String, Span)>;

/// What a blocker's detection finds by itself in one function body or one macro, for the
/// graph to carry to callers: the predicates each blocker supplies (the model knows no rule).
#[derive(Clone, Copy)]
pub(crate) struct Reaches {
    /// What a function's own body does (what and where), or `None` when the blocker does not
    /// travel through functions (a helper's `return` leaves only the helper).
    pub function: Option<InFunction>,
    /// What a macro's replacement list does by itself.
    pub macro_def: fn(&Unit<'_>, &MacroDef) -> Option<(String, Span)>,
    /// A call that does it by itself (a primitive: looked for in the bodies of lambdas a loop
    /// calls or passes on, never listed as `unresolved`, and not looked through by the other
    /// blockers).
    pub call: Option<fn(&Call) -> bool>,
    /// A name called in a macro's replacement list that does it by itself, beyond `call` (the
    /// lexer cannot tell `g.sync()` from `sync(g)` there): never listed as `unresolved`.
    pub macro_call: Option<fn(&str) -> bool>,
    /// What an inline-assembly template does, as a witness (looked for in lambda bodies).
    pub asm: Option<fn(&str) -> Option<String>>,
    /// A call that nothing visible answers but that does it by what it names (a block-wide
    /// collective of CUB, hipCUB or rocPRIM: `BlockReduce(temp).Sum(x)`, `block_reduce(v)`):
    /// it still is listed as `unresolved`.
    pub unseen: Option<fn(&Call) -> bool>,
}

/// The files of a translation unit: the analysed file first, then its headers in unit order.
pub(crate) struct Unit<'f> {
    pub files: Vec<&'f SourceFile>,
    /// `None` for the analysed file, the header's path otherwise.
    pub paths: Vec<Option<&'f Path>>,
}

impl<'f> Unit<'f> {
    pub fn new(main: &'f SourceFile, tu: &'f TranslationUnit) -> Unit<'f> {
        let mut files = vec![main];
        let mut paths = vec![None];
        for h in &tu.headers {
            files.push(h.file());
            paths.push(Some(h.path.as_path()));
        }
        Unit { files, paths }
    }

    /// Where a witness is, for a message: `line 5` in the analysed file, `path.cuh:5` in a
    /// header.
    pub fn at(&self, w: &Witness) -> String {
        match self.paths.get(w.file).copied().flatten() {
            Some(p) => format!("{}:{}", p.display(), w.span.line),
            None => format!("line {}", w.span.line),
        }
    }
}

/// A use of a macro in a function of the analysed file (of its own macros or a header's).
#[derive(Debug, Clone, Copy)]
pub(crate) struct MacroUse<'f> {
    pub name: &'f str,
    pub span: Span,
}

/// At most this many unresolved names are kept per function, macro and loop.
pub(crate) const MAX_UNRESOLVED: usize = 16;

pub(crate) struct Reach<'f> {
    pub unit: Unit<'f>,
    /// Function nodes `0..nf`: `(file, index)`; the analysed file's functions come first, so
    /// node `i` is its function `i`. Nodes `nf..nf + nm` are the macros, then come the
    /// lambdas (`lambdas`), then the specialisations (`specs`).
    fn_at: Vec<(usize, usize)>,
    /// Macro nodes: `(file, index)`.
    mac_at: Vec<(usize, usize)>,
    /// Lambda nodes, node `nf + nm + l`: the function node a lambda is written in and its
    /// body's span. A lambda's node is what calling it reaches: the calls, macros and inline
    /// assembly of its body. It is reached where a specialisation binds it (`each(F f)` called
    /// as `each([&](int i) { ... })` calls the lambda where `each` calls `f`).
    lambdas: Vec<(usize, Span)>,
    /// Specialisations of template functions, node `nf + nm + nl + s`: the function node and
    /// the template parameters a call binds (`apply(hs, s)` binds `F` of `apply(F f, ...)`).
    specs: Vec<(usize, Binding)>,
    /// Per specialisation: what each call of its function's body reaches under its binding.
    spec_resolved: Vec<Box<[Box<[usize]>]>>,
    /// The blockers' predicates, by slot.
    reaches: Vec<Reaches>,
    /// `reach[node * reaches.len() + slot]`: what node `node` reaches for that blocker.
    reach: Vec<Option<Witness>>,
    macro_by_name: HashMap<&'f str, Vec<usize>>,
    /// Per function node (`0..nf`), per call (index in `Function::calls`): the nodes
    /// (functions, lambdas or specialisations) it may reach. For a template function of the
    /// analysed file, what its specialisations' calls reach joins; and where every call of it
    /// in the unit binds its parameters (a template of a source file, not a kernel, never
    /// named as a value), only that: `f(x)` on a template parameter `F` then reaches what the
    /// calls bind `F` to, not every `operator()` of the unit.
    resolved: Vec<Vec<Box<[usize]>>>,
    /// Per function of the analysed file: its local callables (name -> function nodes).
    callables: Vec<HashMap<&'f str, Vec<usize>>>,
    /// Per function of the analysed file: the functions of the unit it names as values (not
    /// calls: `fp = helper`, `apply(helper)`), with the span of the name, in source order.
    values: Vec<Vec<(Span, usize)>>,
    /// Per function of the analysed file: its macro uses, in source order.
    uses: Vec<Vec<MacroUse<'f>>>,
    /// Per function of the analysed file: the indices (in `Function::calls`) of the calls that
    /// nothing visible answers (no function, callable, lambda or macro of the unit, not known).
    unresolved_calls: Vec<Vec<usize>>,
    /// Per function of the analysed file: the indices of the calls resolved by name.
    by_name: Vec<Vec<usize>>,
    /// Per node: calls no visible body answers, transitively.
    unresolved: Vec<Vec<String>>,
    /// Per node (functions, macros, specialisations): the nodes that call or use it.
    callers: Vec<Vec<usize>>,
    /// Per-unit facts a rule computes once (`dynamic_lds::holders`), filled on first use.
    pub memo: std::sync::OnceLock<Vec<(String, String, Witness)>>,
    /// `dynamic_lds::returns_dynamic` by `(node, depth)`: what a function returns is asked
    /// at every call of it in a return or an initialiser.
    pub returns_memo: std::sync::Mutex<HashMap<(usize, usize), Option<String>>>,
}

/// Template parameters bound to classes of the unit, sorted by name.
pub(crate) type Binding = Vec<(String, TypeRes)>;

/// The class a functor's `operator()` belongs to (`ns::Op::operator()` -> `Op`).
fn functor_class(f: &Function) -> Option<&str> {
    if f.name != "operator()" {
        return None;
    }
    let q = f.qualified_name.strip_suffix("::operator()")?;
    Some(q.rsplit("::").next().unwrap_or(q))
}

/// The class named by a declaration's type (`const ns::Op&` -> `Op`, `Op<float>` -> `Op`).
pub(crate) fn type_base(t: &str) -> &str {
    let t = t.split('<').next().unwrap_or(t);
    let t = t
        .trim()
        .trim_end_matches(['&', '*', ' '])
        .trim_start_matches("const ")
        .trim_start_matches("struct ")
        .trim_start_matches("class ")
        .trim();
    t.rsplit("::").next().unwrap_or(t).trim()
}

/// At most this many specialisations per unit, and per function.
const MAX_SPECS: usize = 2048;
const MAX_SPECS_PER_FUNCTION: usize = 256;

/// What one function node's body calls, resolved (for a specialisation: under its binding).
struct Calls<'f> {
    /// Per call: the nodes it may reach.
    targets: Vec<Box<[usize]>>,
    callables: HashMap<&'f str, Vec<usize>>,
    values: Vec<(Span, usize)>,
    /// Indices of the calls nothing visible answers.
    unresolved: Vec<usize>,
    /// Indices of the calls resolved by name (their receiver's or qualifier's type unknown).
    by_name: Vec<usize>,
}

/// The specialisations made so far, and those still to resolve.
#[derive(Default)]
struct Specs {
    list: Vec<(usize, Binding)>,
    ids: HashMap<(usize, Binding), usize>,
    per_function: HashMap<usize, usize>,
    pending: Vec<usize>,
    /// Per function: the lambdas (indices) bound by calls that reached the generic function
    /// because a cap was reached; its calls of its parameters may call any of them.
    overflow: HashMap<usize, Vec<usize>>,
}

impl Specs {
    /// The node of function `j` under `binding` (`base` is the first specialisation's node
    /// id), made on first use; `j` itself when the caps are reached.
    fn node(&mut self, j: usize, binding: Binding, base: usize) -> usize {
        if let Some(&s) = self.ids.get(&(j, binding.clone())) {
            return base + s;
        }
        let count = self.per_function.entry(j).or_default();
        if self.list.len() >= MAX_SPECS || *count >= MAX_SPECS_PER_FUNCTION {
            let lambdas = self.overflow.entry(j).or_default();
            for (_, t) in &binding {
                if let TypeRes::Lambda(l) = t {
                    if !lambdas.contains(l) {
                        lambdas.push(*l);
                    }
                }
            }
            return j;
        }
        *count += 1;
        let s = self.list.len();
        self.list.push((j, binding.clone()));
        self.ids.insert((j, binding), s);
        self.pending.push(s);
        base + s
    }
}

/// The innermost class of `file` whose definition holds byte `at` (an include directive in a
/// class body), qualified.
fn class_around(file: &SourceFile, at: usize) -> Option<String> {
    file.types
        .iter()
        .filter(|t| t.kind == frontend::TypeKind::Class && t.span.start < at && at < t.span.end)
        .min_by_key(|t| t.span.end - t.span.start)
        .map(|t| t.qualified_name.clone())
}

/// True when the arguments of call `c` are written out: no name among them is a macro of the
/// unit or looks like one (capitals, `__VA_ARGS__`) without being a parameter, local or
/// template parameter of `f`; a macro may stand for several arguments or for none, so only
/// then is `c.arg_spans.len()` the number of arguments the call passes.
fn arguments_written(f: &Function, c: &Call, macros: &HashMap<&str, Vec<usize>>) -> bool {
    let local = |name: &str| {
        f.params.iter().any(|p| p.name == name)
            || f.decls.iter().any(|d| d.name == name)
            || f.template_params.iter().any(|t| t == name)
    };
    let macro_ =
        |name: &str| macros.contains_key(name) || (frontend::macro_like(name) && !local(name));
    let inside = |s: Span| c.args.start <= s.start && s.end <= c.args.end;
    !crate::util::within(&f.idents, |u| u.span.start, c.args)
        .iter()
        .any(|u| macro_(&u.name))
        && !f.macro_refs.iter().any(|m| inside(m.span))
        && !f
            .calls
            .iter()
            .any(|x| inside(x.span) && x.span != c.span && macro_(&x.callee))
}

impl<'f> Reach<'f> {
    /// The reach of `main`'s translation unit for the blockers whose predicates are
    /// `reaches` (slot = index).
    pub(crate) fn build(
        main: &'f SourceFile,
        tu: &'f TranslationUnit,
        reaches: &[Reaches],
    ) -> Self {
        let unit = Unit::new(main, tu);
        let nb = reaches.len();
        let known = |c: &Call| is_known_call(reaches, c);
        let multi = unit.files.len() > 1;
        let mut fn_at = Vec::new();
        let mut mac_at = Vec::new();
        for (k, file) in unit.files.iter().enumerate() {
            fn_at.extend((0..file.functions.len()).map(|i| (k, i)));
            mac_at.extend((0..file.macros.len()).map(|i| (k, i)));
        }
        let (nf, nm) = (fn_at.len(), mac_at.len());
        let func = |n: usize| -> &'f Function {
            let (k, i) = fn_at[n];
            &unit.files[k].functions[i]
        };
        let mac = |m: usize| -> &'f MacroDef {
            let (k, i) = mac_at[m];
            &unit.files[k].macros[i]
        };
        let types: Vec<&'f TypeDef> = unit.files.iter().flat_map(|f| f.types.iter()).collect();
        let mut index = Index::new((0..nf).map(func).collect(), &types);
        let lam0 = nf + nm;
        let lambdas: Vec<(usize, Span)> = index.lambdas().to_vec();
        let nl = lambdas.len();
        index.set_lambda_base(lam0);
        index.set_namespace_aliases(unit.files.iter().flat_map(|f| f.namespace_aliases.iter()));
        index.set_globals(unit.files.iter().flat_map(|f| f.global_types.iter()));
        let include_sites = std::iter::once((main, &tu.main_includes))
            .chain(tu.headers.iter().map(|h| (h.file(), &h.parsed.includes)));
        index.set_open_classes(include_sites.flat_map(|(file, includes)| {
            includes
                .iter()
                .filter_map(move |inc| class_around(file, inc.span.start))
        }));
        // The class each file of the unit is included into: a header whose include sits in a
        // class body (`struct group { #include "memory.cuh" };`), or is included by such a
        // header, innermost first. Its top-level functions are that class's members.
        let mut enclosing: Vec<Option<String>> = vec![None; unit.files.len()];
        for (h, header) in tu.headers.iter().enumerate() {
            let Some((parent, at)) = header.included_at else {
                continue;
            };
            // (The including file comes before: `enclosing[pk]` is known.)
            let pk = parent.map_or(0, |i| i + 1);
            let inner = class_around(unit.files[pk], at.start);
            enclosing[h + 1] = match (enclosing[pk].clone(), inner) {
                (Some(outer), Some(c)) => Some(format!("{outer}::{c}")),
                (outer, None) => outer,
                (None, c) => c,
            };
        }
        index.set_included_members(
            fn_at
                .iter()
                .enumerate()
                .filter_map(|(n, &(k, _))| enclosing[k].clone().map(|c| (n, c))),
        );
        let index = index;
        let mut functors: HashMap<&str, Vec<usize>> = HashMap::new();
        for n in 0..nf {
            if let Some(c) = functor_class(func(n)) {
                functors.entry(c).or_default().push(n);
            }
        }
        let mut macro_by_name: HashMap<&str, Vec<usize>> = HashMap::new();
        for m in 0..nm {
            macro_by_name
                .entry(mac(m).name.as_str())
                .or_default()
                .push(m);
        }
        // Names some declaration of the unit gives default arguments ([`Arity::accepts`]).
        let defaulted: HashSet<&str> = unit
            .files
            .iter()
            .flat_map(|f| f.defaulted_declarations.iter().map(String::as_str))
            .collect();
        let own_macros: Vec<HashSet<&str>> = unit
            .files
            .iter()
            .map(|f| f.macros.iter().map(|m| m.name.as_str()).collect())
            .collect();
        let base = lam0 + nl;

        // Per function node: the functions of the unit its body names as values (not calls:
        // `fp = helper`, `apply(helper)`, `&S::m`), with the span of the name; and every
        // function named as a value anywhere, file-scope initialisers included (`Op table[]
        // = {f, g};`), sorted.
        let values_of: Vec<Vec<(Span, usize)>> = (0..nf)
            .map(|n| {
                let f = func(n);
                let callee_at: HashSet<usize> =
                    f.calls.iter().map(|c| c.callee_span.start).collect();
                f.idents
                    .iter()
                    .filter(|u| {
                        u.access != frontend::Access::Decl && !callee_at.contains(&u.span.start)
                    })
                    .flat_map(|u| index.named(&u.name).iter().map(move |&j| (u.span, j)))
                    .collect()
            })
            .collect();
        let mut escaped_all: Vec<usize> = values_of
            .iter()
            .flat_map(|v| v.iter().map(|x| x.1))
            .chain(
                unit.files
                    .iter()
                    .flat_map(|f| f.globals.iter())
                    .flat_map(|g| g.init_idents.iter())
                    .flat_map(|name| index.named(name).iter().copied()),
            )
            .collect();
        escaped_all.sort_unstable();
        escaped_all.dedup();
        // File-scope variables of the unit: a call of one is a call of a pointer.
        let global_vars: HashSet<&str> = unit
            .files
            .iter()
            .flat_map(|f| {
                f.globals
                    .iter()
                    .map(|g| g.name.as_str())
                    .chain(f.file_variables.iter().map(String::as_str))
            })
            .collect();
        // A call that a local callable, or else any escaped function, may answer: unqualified
        // by name, of a variable, or of a pointer no name answers.
        let held_form = |c: &Call| {
            matches!(
                c.form,
                CallForm::Plain | CallForm::Variable | CallForm::Indirect
            ) && c.qualifier.is_none()
        };

        // Resolves the calls of function node `n` (under `binding`), making the
        // specialisations its calls bind.
        let resolve_calls = |n: usize, binding: &Binding, specs: &mut Specs| -> Calls<'f> {
            let f = func(n);
            let mut scope = index.scope_of(n);
            scope.bound = binding.clone();
            let mut callables = callables_of(f, &index, &functors);
            let lambda_vars: HashSet<&str> = f
                .decls
                .iter()
                .filter(|d| {
                    d.init
                        .is_some_and(|i| f.lambdas.iter().any(|l| i.contains(l)))
                })
                .map(|d| d.name.as_str())
                .collect();
            // Each call's targets by type and name (local callables are added below).
            let mut outcomes: Vec<(Vec<usize>, Outcome)> = f
                .calls
                .iter()
                .map(|c| {
                    let mut v = Vec::new();
                    let o = index.call(&scope, c, &mut v);
                    (v, o)
                })
                .collect();
            // Overloads: a call passing `n` arguments calls none of its name's functions whose
            // parameters cannot take `n`, so long as one of them can (a count that no
            // candidate takes is a count this parse got wrong), where the arguments are
            // written out (no macro among them that may stand for several or none).
            for (c, (v, _)) in f.calls.iter().zip(outcomes.iter_mut()) {
                if v.len() < 2
                    || c.arg_pack
                    || !matches!(c.form, CallForm::Plain | CallForm::Method)
                    || !arguments_written(f, c, &macro_by_name)
                {
                    continue;
                }
                let n = c.arg_spans.len();
                let named = |j: usize| j < nf && func(j).name == c.callee;
                let takes = |j: usize| {
                    func(j)
                        .arity
                        .is_none_or(|a| a.accepts(n, defaulted.contains(c.callee.as_str())))
                };
                if v.iter().any(|&j| named(j) && takes(j)) {
                    v.retain(|&j| !named(j) || takes(j));
                }
            }
            // An object passed where the callee takes a reference or pointer to its own class
            // is neither copied nor converted: its `Convert` reaches nothing.
            for ci in 0..f.calls.len() {
                if f.calls[ci].form == CallForm::Convert
                    && !outcomes[ci].0.is_empty()
                    && passed_by_reference(f, ci, &outcomes, |j| (j < nf).then(|| func(j)))
                {
                    outcomes[ci] = (Vec::new(), Outcome::NotACall);
                }
            }
            // Calls of a generic lambda's parameters: what the lambda's callers pass.
            let mut passed = lambda_param_targets(f, n, &index);
            // Functions named as values escape into pointers, references and arguments. A call
            // of a pointer that nothing else answers (a variable or parameter `fp()`, a global
            // `g_table[k]()`, `(o.*pm)()`) may reach any function named as a value anywhere in
            // the unit; a call of an unknown name (`ext(x)`, perhaps a pointer declared
            // elsewhere) those this function names.
            let values = values_of[n].clone();
            let mut local_escaped: Vec<usize> = values.iter().map(|v| v.1).collect();
            local_escaped.sort_unstable();
            local_escaped.dedup();
            // Calls of a pointer held by a data member (`ops.apply(x)`, `p->fn(x)`): any
            // function named as a value anywhere in the unit.
            let mut member_calls: HashMap<usize, Vec<usize>> = HashMap::new();
            if !escaped_all.is_empty() {
                for (ci, (c, (v, o))) in f.calls.iter().zip(&outcomes).enumerate() {
                    let answered = !v.is_empty()
                        || passed.contains_key(&ci)
                        || *o == Outcome::Resolved
                        || callables.contains_key(c.callee.as_str())
                        || macro_by_name.contains_key(c.callee.as_str())
                        || lambda_vars.contains(c.callee.as_str())
                        || known(c);
                    // (By name too: an unknown receiver may be an object holding a pointer
                    // as well as one with a method of that name.)
                    if matches!(*o, Outcome::Unresolved | Outcome::ByName)
                        && !known(c)
                        && index.held_by_member(&scope, c)
                    {
                        member_calls.insert(ci, escaped_all.clone());
                        continue;
                    }
                    if !held_form(c) || answered {
                        continue;
                    }
                    let pointer =
                        c.form != CallForm::Plain || global_vars.contains(c.callee.as_str());
                    let set = if pointer {
                        &escaped_all
                    } else {
                        &local_escaped
                    };
                    if !set.is_empty() {
                        callables.insert(c.callee.as_str(), set.clone());
                    }
                }
            }
            let mut targets = Vec::with_capacity(f.calls.len());
            let mut unresolved = Vec::new();
            let mut by_name = Vec::new();
            for (ci, c) in f.calls.iter().enumerate() {
                let (mut ts, outcome) = std::mem::take(&mut outcomes[ci]);
                if let Some(v) = passed.remove(&ci) {
                    ts.extend(v);
                }
                if let Some(v) = member_calls.remove(&ci) {
                    ts.extend(v);
                }
                if held_form(c) {
                    if let Some(v) = callables.get(c.callee.as_str()) {
                        ts.extend(v.iter().copied());
                    }
                }
                ts.sort_unstable();
                ts.dedup();
                let arg_types = ArgTypes::new(c.arg_spans.len());
                for t in ts.iter_mut() {
                    if let Some(b) = index.binding(&scope, n, c, *t, &arg_types) {
                        *t = specs.node(*t, b, base);
                    }
                }
                let resolved = !ts.is_empty()
                    || matches!(outcome, Outcome::Resolved | Outcome::NotACall)
                    || macro_by_name.contains_key(c.callee.as_str())
                    || (c.receiver.is_none() && lambda_vars.contains(c.callee.as_str()))
                    || known(c);
                if !resolved && f.kind != FunctionKind::Host {
                    unresolved.push(ci);
                }
                if outcome == Outcome::ByName && !ts.is_empty() {
                    by_name.push(ci);
                }
                targets.push(ts.into_boxed_slice());
            }
            Calls {
                targets,
                callables,
                values,
                unresolved,
                by_name,
            }
        };

        // Nodes: functions 0..nf, macros nf..nf+nm, lambdas, specialisations after. Reverse
        // edges: callee -> callers.
        let mut callers: Vec<Vec<usize>> = vec![Vec::new(); base];
        let mut direct: Vec<Option<Witness>> = vec![None; base * nb];
        let mut unresolved: Vec<Vec<String>> = vec![Vec::new(); base];
        let mut specs = Specs::default();
        let mut callables_main = Vec::new();
        let mut resolved_main: Vec<Vec<Box<[usize]>>> = vec![Vec::new(); nf];
        let mut values_main = Vec::new();
        let mut uses_main = Vec::new();
        let mut unresolved_calls_main = Vec::new();
        let mut by_name_main = Vec::new();
        let n_main = main.functions.len();
        // Per function node: the macro nodes its body uses.
        let mut fn_macros: Vec<Vec<usize>> = vec![Vec::new(); nf];
        // What function `f` of file `k` does by itself for a blocker, in all its body or in
        // `part` (a lambda's): the blocker's predicate, else an unresolved call that does it by
        // what it names.
        let does =
            |f: &Function, k: usize, part: Option<Span>, unresolved: &[usize], r: &Reaches| {
                if let Some((what, span)) = r.function.and_then(|d| d(&unit, f, part)) {
                    return Some(Witness {
                        what,
                        span,
                        file: k,
                    });
                }
                let unseen = r.unseen?;
                unresolved
                    .iter()
                    .map(|&ci| &f.calls[ci])
                    .find(|c| part.is_none_or(|p| p.contains(&c.span)) && unseen(c))
                    .map(|c| Witness {
                        what: display_callee(c),
                        span: c.span,
                        file: k,
                    })
            };
        // An edge between two host functions is not followed (host code runs no loop here).
        let host_edge = |f: &Function, j: usize, specs: &Specs| {
            let g = if j >= base { specs.list[j - base].0 } else { j };
            f.kind == FunctionKind::Host && g < nf && func(g).kind == FunctionKind::Host
        };
        // Only the nodes the analysed file's verdicts can depend on are resolved: what its
        // functions reach through calls, macros, lambdas and specialisations (forwards), and
        // the callers of its templates by name, with their callers while those are templates
        // too (their bindings make the specialisations whose calls a template's loops take,
        // and decide whether its generic body runs: `dead` below). A header function nothing
        // of the analysed file reaches or binds says nothing about its loops: resolving every
        // function of a unit made a file including a large header library pay for the whole
        // library (composable_kernel: `Reach::build` was 75% of `check`).
        let macro_fns: Vec<Vec<usize>> = (0..nm)
            .map(|m| {
                let md = mac(m);
                let mut v: Vec<usize> = md
                    .calls
                    .iter()
                    .chain(md.idents.iter())
                    .flat_map(|name| index.named(name).iter().copied())
                    .collect();
                v.sort_unstable();
                v.dedup();
                v
            })
            .collect();
        let macro_macros: Vec<Vec<usize>> = (0..nm)
            .map(|m| {
                let md = mac(m);
                md.calls
                    .iter()
                    .chain(md.idents.iter())
                    .flat_map(|name| macro_by_name.get(name.as_str()).into_iter().flatten())
                    .copied()
                    .filter(|&m2| m2 != m)
                    .collect()
            })
            .collect();
        let mut done = vec![false; nf];
        let mut macro_seen = vec![false; nm];
        let mut work: VecDeque<usize> = (0..n_main).collect();
        {
            let template = |g: usize| {
                let scope = index.scope_of(g);
                !(scope.params.is_empty() && scope.auto_params.is_empty())
            };
            let mut by_callee: HashMap<&str, Vec<usize>> = HashMap::new();
            let mut of_objects: Vec<usize> = Vec::new();
            for g in n_main..nf {
                let f = func(g);
                for c in &f.calls {
                    by_callee.entry(c.callee.as_str()).or_default().push(g);
                }
                if f.calls.iter().any(|c| {
                    matches!(
                        c.form,
                        CallForm::Variable | CallForm::Temporary | CallForm::Operator
                    )
                }) {
                    of_objects.push(g);
                }
            }
            let mut seeded = vec![false; nf];
            let mut names: Vec<&str> = (0..n_main)
                .filter(|&g| template(g))
                .map(|g| func(g).name.as_str())
                .collect();
            let mut asked: HashSet<&str> = HashSet::new();
            while let Some(name) = names.pop() {
                if !asked.insert(name) {
                    continue;
                }
                let objects = name.starts_with("operator");
                let found = by_callee
                    .get(name)
                    .into_iter()
                    .flatten()
                    .chain(of_objects.iter().filter(|_| objects));
                for &g in found {
                    if !seeded[g] {
                        seeded[g] = true;
                        work.push_back(g);
                        if template(g) {
                            names.push(func(g).name.as_str());
                        }
                    }
                }
            }
        }
        // A node reached: a function to resolve (a lambda's: its enclosing function), a
        // macro's named functions and macros; a specialisation is made pending by `specs.node`.
        let expand =
            |j: usize, work: &mut VecDeque<usize>, macro_seen: &mut Vec<bool>, done: &[bool]| {
                let mut stack = vec![j];
                while let Some(j) = stack.pop() {
                    if j < nf {
                        if !done[j] {
                            work.push_back(j);
                        }
                    } else if j < lam0 {
                        let m = j - nf;
                        if !macro_seen[m] {
                            macro_seen[m] = true;
                            stack.extend(macro_fns[m].iter().copied());
                            stack.extend(macro_macros[m].iter().map(|&m2| nf + m2));
                        }
                    } else if j < base {
                        let g = lambdas[j - lam0].0;
                        if !done[g] {
                            work.push_back(g);
                        }
                    }
                }
            };
        // Specialisations: the generic function's body under the binding (macro uses are the
        // generic function's: they do not depend on it).
        let mut spec_resolved: Vec<Box<[Box<[usize]>]>> = Vec::new();
        let mut spec_unresolved: Vec<Vec<usize>> = Vec::new();
        loop {
            if let Some(n) = work.pop_front() {
                if done[n] {
                    continue;
                }
                done[n] = true;
                let (k, _) = fn_at[n];
                let f = func(n);
                let calls = resolve_calls(n, &Vec::new(), &mut specs);
                for (slot, r) in reaches.iter().enumerate() {
                    direct[n * nb + slot] = does(f, k, None, &calls.unresolved, r);
                }
                let mut seen: HashSet<usize> = HashSet::new();
                for ts in &calls.targets {
                    for &j in ts.iter() {
                        if !host_edge(f, j, &specs) && seen.insert(j) {
                            link(&mut callers, j, n);
                        }
                    }
                }
                for &ci in &calls.unresolved {
                    push_capped(&mut unresolved[n], display_callee(&f.calls[ci]));
                }
                // Macro uses: the lowering's (this file's macros) and, in a unit, the names of
                // other files' macros among the identifiers and callees.
                let own = &own_macros[k];
                let mut uses: Vec<MacroUse> = f
                    .macro_refs
                    .iter()
                    .map(|r| MacroUse {
                        name: r.name.as_str(),
                        span: r.span,
                    })
                    .collect();
                if multi {
                    let foreign =
                        |name: &str| macro_by_name.contains_key(name) && !own.contains(name);
                    let idents = f.idents.iter().map(|u| (u.name.as_str(), u.span));
                    let calls = f
                        .calls
                        .iter()
                        .filter(|c| c.receiver.is_none() && c.qualifier.is_none())
                        .map(|c| (c.callee.as_str(), c.callee_span));
                    for (name, span) in idents.chain(calls) {
                        if foreign(name) {
                            uses.push(MacroUse { name, span });
                        }
                    }
                    uses.sort_by_key(|u| u.span.start);
                    uses.dedup_by_key(|u| u.span.start);
                } else if !uses.is_sorted_by_key(|u| u.span.start) {
                    uses.sort_by_key(|u| u.span.start);
                }
                let mut used = Vec::new();
                for u in &uses {
                    for &m in macro_by_name.get(u.name).into_iter().flatten() {
                        if seen.insert(nf + m) {
                            callers[nf + m].push(n);
                            used.push(nf + m);
                        }
                    }
                }
                fn_macros[n] = used;
                // The lambdas written in this function: what their bodies do and call.
                let own_lambdas =
                    lambdas.partition_point(|l| l.0 < n)..lambdas.partition_point(|l| l.0 <= n);
                for next in own_lambdas {
                    let span = lambdas[next].1;
                    let node = lam0 + next;
                    for (slot, r) in reaches.iter().enumerate() {
                        direct[node * nb + slot] = does(f, k, Some(span), &calls.unresolved, r);
                    }
                    let mut inner: HashSet<usize> = HashSet::new();
                    let lo = f.calls.partition_point(|c| c.span.start < span.start);
                    let hi = f.calls.partition_point(|c| c.span.start < span.end).max(lo);
                    for (c, ts) in f.calls[lo..hi].iter().zip(&calls.targets[lo..hi]) {
                        if !span.contains(&c.span) {
                            continue;
                        }
                        for &j in ts.iter() {
                            if !host_edge(f, j, &specs) && j != node && inner.insert(j) {
                                link(&mut callers, j, node);
                            }
                        }
                    }
                    for u in crate::util::within(&uses, |u| u.span.start, span)
                        .iter()
                        .filter(|u| span.contains(&u.span))
                    {
                        for &m in macro_by_name.get(u.name).into_iter().flatten() {
                            if inner.insert(nf + m) {
                                callers[nf + m].push(node);
                            }
                        }
                    }
                }
                for &j in &seen {
                    expand(j, &mut work, &mut macro_seen, &done);
                }
                resolved_main[n] = calls.targets;
                if n < n_main {
                    callables_main.push(calls.callables);
                    values_main.push(calls.values);
                    uses_main.push(uses);
                    unresolved_calls_main.push(calls.unresolved);
                    by_name_main.push(calls.by_name);
                }
                continue;
            }
            let Some(s) = specs.pending.pop() else {
                // Lambdas bound beyond the caps reach their generic functions (`overflow`):
                // their bodies are resolved too.
                let owners: Vec<usize> = specs
                    .overflow
                    .values()
                    .flatten()
                    .map(|&l| lambdas[l].0)
                    .filter(|&g| !done[g])
                    .collect();
                if owners.is_empty() {
                    break;
                }
                work.extend(owners);
                continue;
            };
            let node = base + s;
            let (n, binding) = specs.list[s].clone();
            if !done[n] {
                // Its generic function's own facts (what it does, its macro uses) first.
                specs.pending.push(s);
                work.push_back(n);
                continue;
            }
            let f = func(n);
            let grow = node + 1;
            if direct.len() < grow * nb {
                direct.resize(grow * nb, None);
            }
            if unresolved.len() < grow {
                unresolved.resize(grow, Vec::new());
            }
            if callers.len() < grow {
                callers.resize(grow, Vec::new());
            }
            for slot in 0..nb {
                direct[node * nb + slot] = direct[n * nb + slot].clone();
            }
            let calls = resolve_calls(n, &binding, &mut specs);
            let mut seen: HashSet<usize> = HashSet::new();
            for ts in &calls.targets {
                for &j in ts.iter() {
                    if seen.insert(j) {
                        link(&mut callers, j, node);
                    }
                }
            }
            for &ci in &calls.unresolved {
                push_capped(&mut unresolved[node], display_callee(&f.calls[ci]));
            }
            // The generic function's macro uses.
            for &m in &fn_macros[n] {
                if seen.insert(m) {
                    callers[m].push(node);
                }
            }
            if spec_resolved.len() <= s {
                spec_resolved.resize_with(s + 1, Default::default);
                spec_unresolved.resize_with(s + 1, Vec::new);
            }
            for &j in &seen {
                expand(j, &mut work, &mut macro_seen, &done);
            }
            spec_resolved[s] = calls.targets.into_boxed_slice();
            spec_unresolved[s] = calls.unresolved;
        }
        spec_resolved.resize_with(specs.list.len(), Default::default);
        spec_unresolved.resize_with(specs.list.len(), Vec::new);
        // The analysed file's template functions: their calls as their specialisations
        // resolve them too (a loop of `each(F f)` calls what `each`'s callers pass as `f`),
        // and only so where every call of the function binds it (see `narrowed`).
        // Lambdas bound by calls beyond the caps reach the generic function: any call of one
        // of its parameters may call them.
        let mut overflow: Vec<(usize, Vec<usize>)> = specs.overflow.drain().collect();
        overflow.sort_unstable();
        for (j, ls) in &overflow {
            for &l in ls {
                callers[lam0 + l].push(*j);
            }
        }
        // Explicitly instantiated templates: with arguments no call shows.
        let instantiated: HashSet<&str> = unit
            .files
            .iter()
            .flat_map(|f| f.instantiated.iter().map(String::as_str))
            .collect();
        let mut spec_of: HashMap<usize, Vec<usize>> = HashMap::new();
        for (s, (g, _)) in specs.list.iter().enumerate() {
            if *g < n_main {
                spec_of.entry(*g).or_default().push(s);
            }
        }
        for (j, _) in overflow.iter().filter(|(j, _)| *j < n_main) {
            spec_of.entry(*j).or_default();
        }
        // The analysed file's templates whose generic body never runs as such: in a closed
        // unit, a template (not a kernel, never named as a value, never explicitly
        // instantiated) runs only as the specialisations its calls make, so a call of it that
        // binds nothing counts only when its caller's body runs (a caller that is itself such
        // a template, or a lambda written in one, does not). The greatest fixpoint.
        let mut dead: Vec<bool> = (0..n_main)
            .map(|g| {
                let f = func(g);
                // (A function with parameters declared `auto` is a template too.)
                let scope = index.scope_of(g);
                tu.closed
                    && !(scope.params.is_empty() && scope.auto_params.is_empty())
                    && f.kind != FunctionKind::Kernel
                    && escaped_all.binary_search(&g).is_err()
                    && !instantiated.contains(f.name.as_str())
            })
            .collect();
        loop {
            let mut changed = false;
            for g in 0..n_main {
                if !dead[g] {
                    continue;
                }
                let live_caller = callers[g].iter().any(|&c| {
                    let enclosing = if c < nf {
                        Some(c)
                    } else if (lam0..base).contains(&c) {
                        Some(lambdas[c - lam0].0)
                    } else {
                        None
                    };
                    !enclosing.is_some_and(|e| e < n_main && dead[e])
                });
                if live_caller {
                    dead[g] = false;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        for (fi, ss) in &spec_of {
            let (fi, f) = (*fi, func(*fi));
            let spilled: Vec<usize> = overflow
                .iter()
                .find(|(j, _)| *j == fi)
                .map(|(_, ls)| ls.iter().map(|&l| lam0 + l).collect())
                .unwrap_or_default();
            let narrow = dead[fi];
            for (ci, slot) in resolved_main[fi].iter_mut().enumerate() {
                let mut v: Vec<usize> = if narrow { Vec::new() } else { slot.to_vec() };
                for &s in ss {
                    v.extend(spec_resolved[s].get(ci).into_iter().flat_map(|t| t.iter()));
                }
                let c = &f.calls[ci];
                let on_param = c.qualifier.is_none()
                    && f.params.iter().any(|p| {
                        p.name == c.callee || Some(p.name.as_str()) == c.receiver.as_deref()
                    });
                if on_param {
                    v.extend(spilled.iter().copied());
                }
                v.sort_unstable();
                v.dedup();
                *slot = v.into_boxed_slice();
            }
            if narrow {
                by_name_main[fi].clear();
                let mut u: Vec<usize> = ss
                    .iter()
                    .flat_map(|&s| spec_unresolved[s].iter().copied())
                    .collect();
                u.sort_unstable();
                u.dedup();
                unresolved_calls_main[fi] = u;
            }
        }
        let total = base + specs.list.len();
        callers.resize(total, Vec::new());
        direct.resize(total * nb, None);
        unresolved.resize(total, Vec::new());
        for (m, &(k, _)) in mac_at.iter().enumerate() {
            let node = nf + m;
            let md = mac(m);
            for (slot, r) in reaches.iter().enumerate() {
                if let Some(found) = (r.macro_def)(&unit, md) {
                    direct[node * nb + slot] = Some(Witness {
                        what: found.0,
                        span: found.1,
                        file: k,
                    });
                }
            }
            let mut seen: HashSet<usize> = HashSet::new();
            for name in md.calls.iter().chain(md.idents.iter()) {
                let mut any = false;
                for &m2 in macro_by_name.get(name.as_str()).into_iter().flatten() {
                    any = true;
                    if m2 != m && seen.insert(nf + m2) {
                        callers[nf + m2].push(node);
                    }
                }
                for &j in index.named(name) {
                    any = true;
                    if seen.insert(j) {
                        callers[j].push(node);
                    }
                }
                let is_call = md.calls.contains(name);
                let params = md.params.as_deref().unwrap_or_default();
                if is_call && !any && !params.contains(name) && !known_name(reaches, name) {
                    push_capped(&mut unresolved[node], name.clone());
                }
            }
        }

        // Backwards BFS per blocker from the direct sites.
        let is_macro = |n: usize| (nf..lam0).contains(&n);
        let mut reach = direct;
        for (slot, r) in reaches.iter().enumerate() {
            let through_functions = r.function.is_some();
            let mut queue: VecDeque<usize> = (0..total)
                .filter(|&n| reach[n * nb + slot].is_some())
                .collect();
            while let Some(n) = queue.pop_front() {
                let w = reach[n * nb + slot].clone();
                for &c in &callers[n] {
                    if (through_functions || is_macro(c)) && reach[c * nb + slot].is_none() {
                        reach[c * nb + slot] = w.clone();
                        queue.push_back(c);
                    }
                }
            }
        }
        // Unresolved names travel to callers too (each node keeps at most MAX_UNRESOLVED, so
        // this ends after O(MAX_UNRESOLVED * edges) steps).
        let mut queue: VecDeque<usize> =
            (0..total).filter(|&n| !unresolved[n].is_empty()).collect();
        while let Some(n) = queue.pop_front() {
            let names = unresolved[n].clone();
            for &c in &callers[n] {
                let before = unresolved[c].len();
                for x in &names {
                    push_capped(&mut unresolved[c], x.clone());
                }
                if unresolved[c].len() > before {
                    queue.push_back(c);
                }
            }
        }
        Reach {
            unit,
            reaches: reaches.to_vec(),
            fn_at,
            mac_at,
            lambdas,
            specs: specs.list,
            spec_resolved,
            reach,
            macro_by_name,
            resolved: resolved_main,
            callables: callables_main,
            values: values_main,
            uses: uses_main,
            unresolved_calls: unresolved_calls_main,
            by_name: by_name_main,
            unresolved,
            callers,
            memo: std::sync::OnceLock::new(),
            returns_memo: std::sync::Mutex::new(HashMap::new()),
        }
    }

    /// For every kernel of the analysed file: the functions of the unit it reaches through
    /// calls (itself first), as `(file, function index)` with file 0 the analysed one and `k`
    /// the unit's header `k - 1`. The edges are the blockers' (receiver types, functors,
    /// specialisations, macros a body uses, by name where the type is unknown): a superset of
    /// what runs, never less. A specialisation counts as its generic function.
    pub(crate) fn kernel_reach(&self) -> Vec<(usize, Vec<(usize, usize)>)> {
        let total = self.callers.len();
        let nf = self.fn_at.len();
        let base = self.spec_base();
        let mut callees: Vec<Vec<usize>> = vec![Vec::new(); total];
        for (callee, callers) in self.callers.iter().enumerate() {
            for &c in callers {
                callees[c].push(callee);
            }
        }
        let function_of = |n: usize| -> Option<usize> {
            if n < nf {
                Some(n)
            } else if n >= base {
                self.specs.get(n - base).map(|s| s.0)
            } else {
                None
            }
        };
        let main = self.unit.files[0];
        let mut out = Vec::new();
        for (i, f) in main.functions.iter().enumerate() {
            if f.kind != FunctionKind::Kernel {
                continue;
            }
            let mut seen = vec![false; total];
            let mut listed = vec![false; nf];
            let mut order = Vec::new();
            let mut queue: VecDeque<usize> = VecDeque::from([i]);
            seen[i] = true;
            while let Some(n) = queue.pop_front() {
                if let Some(g) = function_of(n) {
                    if !listed[g] {
                        listed[g] = true;
                        order.push(self.fn_at[g]);
                    }
                }
                for &m in &callees[n] {
                    if !seen[m] {
                        seen[m] = true;
                        queue.push_back(m);
                    }
                }
            }
            out.push((i, order));
        }
        out
    }

    /// The node of the first specialisation (functions, macros and lambdas come before).
    fn spec_base(&self) -> usize {
        self.fn_at.len() + self.mac_at.len() + self.lambdas.len()
    }

    /// The predicates of the blocker in `slot`.
    pub(crate) fn reaches(&self, slot: usize) -> &Reaches {
        &self.reaches[slot]
    }

    /// What function node `n` reaches for the blocker in `slot`.
    pub(crate) fn fn_witness(&self, n: usize, slot: usize) -> Option<&Witness> {
        self.reach[n * self.reaches.len() + slot].as_ref()
    }

    /// What macro node `m` reaches for the blocker in `slot`.
    pub(crate) fn macro_witness(&self, m: usize, slot: usize) -> Option<&Witness> {
        let node = self.fn_at.len() + m;
        self.reach[node * self.reaches.len() + slot].as_ref()
    }

    /// True when some blocker recognises `c` by itself (a barrier, an atomic: a primitive).
    pub(crate) fn is_primitive(&self, c: &Call) -> bool {
        self.reaches.iter().any(|r| r.call.is_some_and(|p| p(c)))
    }

    /// The function nodes a call of function `fi` of the analysed file may reach.
    pub(crate) fn call_targets(&self, fi: usize, c: &Call) -> impl Iterator<Item = usize> + '_ {
        self.node_call_targets(fi, c)
    }

    /// When call `c` of function `fi` of the analysed file was resolved by name (the type of
    /// its receiver or qualifier is unknown): the qualified names of its candidates, sorted.
    pub(crate) fn by_name_candidates(&self, fi: usize, c: &Call) -> Option<Vec<String>> {
        let f = &self.unit.files[0].functions[fi];
        let ci = call_index(f, c)?;
        self.by_name[fi].binary_search(&ci).ok()?;
        let mut names: Vec<String> = self
            .call_targets(fi, c)
            .map(|j| self.node_name(j))
            .collect();
        names.sort_unstable();
        names.dedup();
        Some(names)
    }

    /// The nodes a call of the function of node `n` may reach (for a specialisation, under
    /// its binding; for a lambda, as its function resolves it).
    pub(crate) fn node_call_targets(&self, n: usize, c: &Call) -> impl Iterator<Item = usize> + '_ {
        let (f, _) = self.body(n);
        let base = self.spec_base();
        let targets: &[usize] = match call_index(f, c) {
            Some(i) if n >= base => self.spec_resolved[n - base].get(i).map_or(&[], |v| &v[..]),
            Some(i) => {
                let g = self.function_node(n);
                self.resolved
                    .get(g)
                    .and_then(|r| r.get(i))
                    .map_or(&[], |v| &v[..])
            }
            None => &[],
        };
        targets.iter().copied()
    }

    /// The function node of node `n`: itself, a lambda's enclosing function, a
    /// specialisation's generic function (`n` must not be a macro node).
    fn function_node(&self, n: usize) -> usize {
        let nf = self.fn_at.len();
        let lam0 = nf + self.mac_at.len();
        let base = self.spec_base();
        if n >= base {
            self.specs[n - base].0
        } else if n >= lam0 {
            self.lambdas[n - lam0].0
        } else {
            n
        }
    }

    /// What node `n` (not a macro) is called in a message: a function's qualified name, or
    /// `lambda (line N)`.
    pub(crate) fn node_name(&self, n: usize) -> String {
        match self.body(n) {
            (_, Some(span)) => format!("lambda (line {})", span.line),
            (f, None) => f.qualified_name.clone(),
        }
    }

    /// The code of node `n` (not a macro): its function, and for a lambda the span of its body
    /// within it.
    pub(crate) fn body(&self, n: usize) -> (&'f Function, Option<Span>) {
        let lam0 = self.fn_at.len() + self.mac_at.len();
        let lambda = (lam0..self.spec_base())
            .contains(&n)
            .then(|| self.lambdas[n - lam0].1);
        let (k, i) = self.fn_at[self.function_node(n)];
        (&self.unit.files[k].functions[i], lambda)
    }

    /// The functions of the unit that function `fi` of the analysed file names as values
    /// inside `span` (an argument list).
    pub(crate) fn values_in(
        &self,
        fi: usize,
        span: Span,
    ) -> impl Iterator<Item = (Span, usize)> + '_ {
        let v = &self.values[fi];
        let lo = v.partition_point(|x| x.0.start < span.start);
        v[lo..]
            .iter()
            .take_while(move |x| x.0.start < span.end)
            .copied()
    }

    /// The local callables of function `fi` of the analysed file named `name`.
    pub(crate) fn callable(&self, fi: usize, name: &str) -> &[usize] {
        self.callables[fi].get(name).map_or(&[], |v| v.as_slice())
    }

    /// The macro nodes named `name`.
    pub(crate) fn macros_named(&self, name: &str) -> &[usize] {
        self.macro_by_name.get(name).map_or(&[], |v| v.as_slice())
    }

    /// The definition of macro node `m`.
    pub(crate) fn macro_def(&self, m: usize) -> &'f MacroDef {
        let (k, i) = self.mac_at[m];
        &self.unit.files[k].macros[i]
    }

    /// The file (0: the analysed one) macro node `m` is defined in.
    pub(crate) fn macro_file(&self, m: usize) -> usize {
        self.mac_at[m].0
    }

    /// The macro uses of function `fi` of the analysed file.
    pub(crate) fn uses(&self, fi: usize) -> &[MacroUse<'f>] {
        &self.uses[fi]
    }

    /// The indices of the calls of function `fi` of the analysed file that nothing visible
    /// answers.
    pub(crate) fn unresolved_calls(&self, fi: usize) -> &[usize] {
        &self.unresolved_calls[fi]
    }

    /// Unresolved calls reached through function node `n` / macro node `m`.
    pub(crate) fn unresolved_of_fn(&self, n: usize) -> &[String] {
        &self.unresolved[n]
    }
    pub(crate) fn unresolved_of_macro(&self, m: usize) -> &[String] {
        &self.unresolved[self.fn_at.len() + m]
    }

    /// Every identifier a macro expands to, through nested macros (bounded).
    pub(crate) fn macro_names(&self, m: usize) -> Vec<&'f str> {
        let mut out = Vec::new();
        let mut seen = HashSet::new();
        let mut stack = vec![m];
        while let Some(m) = stack.pop() {
            if !seen.insert(m) || seen.len() > 64 {
                continue;
            }
            let d = self.macro_def(m);
            for n in d.idents.iter().chain(d.calls.iter()) {
                out.push(n.as_str());
                stack.extend(self.macros_named(n).iter().copied());
            }
        }
        out
    }
}

/// The index of `c` in `f.calls` (the calls are in source order of their start).
fn call_index(f: &Function, c: &Call) -> Option<usize> {
    let lo = f.calls.partition_point(|x| x.span.start < c.span.start);
    let found = f.calls[lo..]
        .iter()
        .take_while(|x| x.span.start == c.span.start)
        .position(|x| std::ptr::eq(x, c))
        .map(|k| lo + k);
    found.or_else(|| f.calls.iter().position(|x| std::ptr::eq(x, c)))
}

/// The calls of a lambda's own parameters inside its body (`op(i)` in
/// `auto apply = [&](auto op) { ... op(i); ... };`), each with what the calls of the variable
/// holding the lambda pass at that parameter's position (`apply([&](int i) { ... })`,
/// `apply(held)`, `apply(&helper)`): lambda and function nodes, by call index in `f.calls`.
fn lambda_param_targets(f: &Function, n: usize, index: &Index<'_>) -> HashMap<usize, Vec<usize>> {
    let mut out: HashMap<usize, Vec<usize>> = HashMap::new();
    if f.lambdas.is_empty() {
        return out;
    }
    // Indexed once (linear in the function: a generated body may hold thousands of lambdas).
    let declared: HashSet<usize> = f.decls.iter().map(|d| d.name_span.start).collect();
    // Lambda start -> the variables whose initialiser holds it (the lambdas are in source order).
    let mut holders_of: HashMap<usize, Vec<&str>> = HashMap::new();
    for d in &f.decls {
        let held = d.init.and_then(|i| {
            crate::util::within(&f.lambdas, |l| l.start, i)
                .iter()
                .find(|l| i.contains(l))
        });
        if let Some(l) = held {
            holders_of.entry(l.start).or_default().push(d.name.as_str());
        }
    }
    if holders_of.is_empty() {
        return out;
    }
    // Plain calls by callee name.
    let mut calls_of: HashMap<&str, Vec<usize>> = HashMap::new();
    for (ci, c) in f.calls.iter().enumerate() {
        if c.receiver.is_none() && c.qualifier.is_none() {
            calls_of.entry(c.callee.as_str()).or_default().push(ci);
        }
    }
    // What an argument passes, as `Index::binding` reads it: a lambda (written there or held
    // by a variable) or the functions it names.
    let passed = |arg: Span, at: usize| -> Vec<usize> {
        match argument_type(f, arg, at) {
            Some(Argument::Lambda(l)) => index.lambda_node(n, l.start).into_iter().collect(),
            Some(Argument::Function(name)) => index.free_functions(&name).collect(),
            Some(Argument::Type(_)) | None => Vec::new(),
        }
    };
    for l in &f.lambdas {
        let Some(holders) = holders_of.get(&l.start) else {
            continue;
        };
        // Its parameters: names declared inside it that no declaration statement declares.
        let params: Vec<&str> = crate::util::within(&f.idents, |u| u.span.start, *l)
            .iter()
            .filter(|u| u.access == frontend::Access::Decl && !declared.contains(&u.span.start))
            .map(|u| u.name.as_str())
            .collect();
        if params.is_empty() {
            continue;
        }
        let mut bound: HashMap<&str, Vec<usize>> = HashMap::new();
        for h in holders {
            for &ci in calls_of.get(h).into_iter().flatten() {
                let c = &f.calls[ci];
                for (p, a) in params.iter().zip(&c.arg_spans) {
                    let v = passed(*a, c.span.start);
                    bound.entry(p).or_default().extend(v);
                }
            }
        }
        if bound.is_empty() {
            continue;
        }
        let lo = f.calls.partition_point(|c| c.span.start < l.start);
        let hi = f.calls.partition_point(|c| c.span.start < l.end);
        for ci in lo..hi.max(lo) {
            let c = &f.calls[ci];
            let on_param = l.contains(&c.span)
                && c.receiver.is_none()
                && c.qualifier.is_none()
                && matches!(c.form, CallForm::Plain | CallForm::Variable);
            if let Some(v) = bound.get(c.callee.as_str()).filter(|_| on_param) {
                out.entry(ci).or_default().extend(v.iter().copied());
            }
        }
    }
    out
}

/// The local callables of `f`: parameters, variables and assignments holding a function of the
/// unit (named as a value in the initialiser: `&helper`, `helper`, not called) or a functor (its
/// type, or a class its initialiser names or constructs, has an `operator()`), name -> function
/// nodes.
fn callables_of<'f>(
    f: &'f Function,
    index: &Index<'_>,
    functors: &HashMap<&'f str, Vec<usize>>,
) -> HashMap<&'f str, Vec<usize>> {
    let mut out: HashMap<&str, Vec<usize>> = HashMap::new();
    let mut add = |name: &'f str, nodes: &[usize]| {
        if !nodes.is_empty() {
            let v = out.entry(name).or_default();
            for &n in nodes {
                if !v.contains(&n) {
                    v.push(n);
                }
            }
        }
    };
    let callee_at: HashSet<usize> = f.calls.iter().map(|c| c.callee_span.start).collect();
    // The names of `span` used as values (a function named, not called), and the callees
    // (a functor constructed: `Op()`, `Op{}` is an identifier use).
    let named_in = |span: Span| -> Vec<usize> {
        let mut v = Vec::new();
        for u in crate::util::within(&f.idents, |u| u.span.start, span) {
            if !callee_at.contains(&u.span.start) {
                v.extend(index.named(&u.name));
            }
            v.extend(functors.get(u.name.as_str()).into_iter().flatten());
        }
        for c in crate::util::within(&f.calls, |c| c.span.start, span) {
            v.extend(functors.get(c.callee.as_str()).into_iter().flatten());
        }
        v
    };
    let of_type =
        |t: &str| -> Vec<usize> { functors.get(type_base(t)).cloned().unwrap_or_default() };
    for p in &f.params {
        add(p.name.as_str(), &of_type(&p.type_text));
    }
    for d in &f.decls {
        let mut nodes = of_type(&d.type_text);
        if let Some(init) = d.init {
            nodes.extend(named_in(init));
        }
        add(d.name.as_str(), &nodes);
    }
    for a in &f.assigns {
        add(a.target.as_str(), &named_in(a.span));
    }
    out
}

/// A call known by name (`frontend::known`: the HIP/CUDA device API and the C/C++ library) or
/// recognised by a blocker (barriers, atomics): never listed as `unresolved`.
/// Whether call `ci` of `f` (a [`CallForm::Convert`] of an object) is an argument of an
/// earlier call of `f` whose every target (`outcomes`; `function` gives a target's function,
/// `None` for a lambda or macro) takes a reference or pointer to the object's own class there.
fn passed_by_reference<'f>(
    f: &Function,
    ci: usize,
    outcomes: &[(Vec<usize>, Outcome)],
    function: impl Fn(usize) -> Option<&'f Function>,
) -> bool {
    let c = &f.calls[ci];
    let Some(own) = c.receiver_type.as_deref().map(type_leaf) else {
        return false;
    };
    let Some((cj, pos)) = f.calls[..ci].iter().enumerate().rev().find_map(|(j, e)| {
        e.arg_spans
            .iter()
            .position(|a| *a == c.span)
            .map(|pos| (j, pos))
    }) else {
        return false;
    };
    let targets = &outcomes[cj].0;
    !targets.is_empty()
        && targets.iter().all(|&j| {
            function(j)
                .and_then(|g| g.params.get(pos))
                .is_some_and(|p| {
                    p.is_pointer_or_ref
                        && frontend::types::normal_type(&p.type_text)
                            .is_some_and(|t| type_leaf(&t) == own)
                })
        })
}

fn is_known_call(reaches: &[Reaches], c: &Call) -> bool {
    reaches.iter().any(|r| r.call.is_some_and(|p| p(c)))
        // A one-letter callee is known as a template parameter's functional cast (`T(0)`),
        // never as a variable or parameter of the caller: `f(p)` for `fp f` is a call of a
        // pointer, which may reach every escaped function (it was a candidate calling
        // `sync_all` through a table while the same loop with `fn(p)` was blocked).
        || (!(c.form == CallForm::Variable && c.callee.len() < 2)
            && frontend::known::is_known_function(
                &c.callee,
                c.qualifier.as_deref(),
                c.receiver.is_some(),
            ))
}

/// A name called in a macro body that is known (see [`is_known_call`]), or that a blocker
/// recognises in a macro body.
fn known_name(reaches: &[Reaches], name: &str) -> bool {
    let c = Call {
        callee: name.to_string(),
        receiver: None,
        qualifier: None,
        span: Span::default(),
        callee_span: Span::default(),
        args: Span::default(),
        arg_spans: Vec::new(),
        arg_ints: Vec::new(),
        form: CallForm::Plain,
        receiver_span: None,
        receiver_type: None,
        template_args: None,
        arg_pack: false,
    };
    is_known_call(reaches, &c)
        || reaches
            .iter()
            .any(|r| r.macro_call.is_some_and(|p| p(name)))
}

/// Records that node `from` calls or uses node `to`.
fn link(callers: &mut Vec<Vec<usize>>, to: usize, from: usize) {
    if callers.len() <= to {
        callers.resize(to + 1, Vec::new());
    }
    callers[to].push(from);
}

fn push_capped(v: &mut Vec<String>, x: String) {
    if v.len() < MAX_UNRESOLVED && !v.contains(&x) {
        v.push(x);
    }
}
