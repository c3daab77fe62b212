//! Reach through the translation unit: which `__device__` functions and macros of the file and
//! of the headers it includes (transitively, cycles included) do what a blocker looks for (a
//! barrier, an atomic, dynamic shared memory, a macro that leaves the code it expands into),
//! and which calls no visible body answers (`unresolved`).
//!
//! The model knows no rule: [`Reach::build`] is given, per blocker slot, the blocker's
//! [`Reaches`] (what a function body or a macro's replacement list does by itself, which calls
//! and inline assembly do it) and the graph carries it to every caller, in
//! O(functions + macros + edges) per blocker by a backwards breadth-first search from the
//! nodes that do it directly. Calls are resolved by name (overloads and same-named members
//! merged, conservative), and also through the callables of a function: local variables,
//! parameters and assignments that hold a function (`auto fp = &helper;`, `void (*fp)() =
//! helper;`, `auto& r = helper;`) or a functor (a variable of a class type with an
//! `operator()`, or initialised from one).

use std::collections::{HashMap, HashSet, VecDeque};
use std::path::Path;

use frontend::tu::TranslationUnit;
use frontend::{Call, Function, FunctionKind, MacroDef, SourceFile, Span};

use crate::util::display_callee;

/// The primitive site a function or macro reaches: `__syncthreads` at line 5 of file 0.
#[derive(Debug, Clone)]
pub struct Witness {
    pub what: String,
    pub span: Span,
    /// 0 for the analysed file, `k` for the unit's header `k - 1`.
    pub file: usize,
}

/// What a blocker finds by itself in a function body: what and where.
pub(crate) type InFunction = fn(&Unit<'_>, &Function) -> Option<(String, Span)>;

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
    /// Function nodes: `(file, index)`; the analysed file's functions come first, so node `i`
    /// is its function `i`.
    fn_at: Vec<(usize, usize)>,
    /// Macro nodes: `(file, index)`.
    mac_at: Vec<(usize, usize)>,
    /// The blockers' predicates, by slot.
    reaches: Vec<Reaches>,
    /// `funcs[node * reaches.len() + slot]`: what function `node` reaches for that blocker.
    funcs: Vec<Option<Witness>>,
    /// The same for macro nodes.
    macros: Vec<Option<Witness>>,
    func_by_name: HashMap<&'f str, Vec<usize>>,
    macro_by_name: HashMap<&'f str, Vec<usize>>,
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
    /// Per function node, then per macro node: calls no visible body answers, transitively.
    unresolved_fn: Vec<Vec<String>>,
    unresolved_mac: Vec<Vec<String>>,
    /// Per function node: the function nodes that call it (the edges the reach follows
    /// backwards; macros left out).
    fn_callers: Vec<Vec<usize>>,
}

/// The class a functor's `operator()` belongs to (`ns::Op::operator()` -> `Op`).
fn functor_class(f: &Function) -> Option<&str> {
    if f.name != "operator()" {
        return None;
    }
    let q = f.qualified_name.strip_suffix("::operator()")?;
    Some(q.rsplit("::").next().unwrap_or(q))
}

/// The class named by a declaration's type (`const ns::Op&` -> `Op`, `Op<float>` -> `Op`).
fn type_base(t: &str) -> &str {
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
        let mut func_by_name: HashMap<&str, Vec<usize>> = HashMap::new();
        let mut functors: HashMap<&str, Vec<usize>> = HashMap::new();
        for n in 0..nf {
            let f = func(n);
            func_by_name.entry(f.name.as_str()).or_default().push(n);
            if let Some(c) = functor_class(f) {
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
        let own_macros: Vec<HashSet<&str>> = unit
            .files
            .iter()
            .map(|f| f.macros.iter().map(|m| m.name.as_str()).collect())
            .collect();

        // Nodes: functions 0..nf, macros nf..nf+nm. Reverse edges: callee -> callers.
        let mut callers: Vec<Vec<usize>> = vec![Vec::new(); nf + nm];
        let mut direct: Vec<Option<Witness>> = vec![None; (nf + nm) * nb];
        let mut unresolved: Vec<Vec<String>> = vec![Vec::new(); nf + nm];
        let mut callables_main = Vec::new();
        let mut values_main = Vec::new();
        let mut uses_main = Vec::new();
        let mut unresolved_calls_main = Vec::new();
        let n_main = main.functions.len();
        for n in 0..nf {
            let (k, _) = fn_at[n];
            let f = func(n);
            for (slot, r) in reaches.iter().enumerate() {
                if let Some(found) = r.function.and_then(|d| d(&unit, f)) {
                    direct[n * nb + slot] = Some(Witness {
                        what: found.0,
                        span: found.1,
                        file: k,
                    });
                }
            }
            let mut callables = callables_of(f, &func_by_name, &functors);
            let lambda_vars: HashSet<&str> = f
                .decls
                .iter()
                .filter(|d| {
                    d.init
                        .is_some_and(|i| f.lambdas.iter().any(|l| i.contains(l)))
                })
                .map(|d| d.name.as_str())
                .collect();
            // Functions named as values escape into pointers, references and arguments: a
            // call that nothing else answers (`fp()`, `(*table[k])()`) may reach any of them.
            let callee_at: HashSet<usize> = f.calls.iter().map(|c| c.callee_span.start).collect();
            let values: Vec<(Span, usize)> = f
                .idents
                .iter()
                .filter(|u| {
                    u.access != frontend::Access::Decl && !callee_at.contains(&u.span.start)
                })
                .flat_map(|u| {
                    func_by_name
                        .get(u.name.as_str())
                        .into_iter()
                        .flatten()
                        .map(move |&j| (u.span, j))
                })
                .collect();
            if !values.is_empty() {
                let mut escaped: Vec<usize> = values.iter().map(|v| v.1).collect();
                escaped.sort_unstable();
                escaped.dedup();
                for c in &f.calls {
                    let plain = c.receiver.is_none() && c.qualifier.is_none();
                    let answered = func_by_name.contains_key(c.callee.as_str())
                        || callables.contains_key(c.callee.as_str())
                        || macro_by_name.contains_key(c.callee.as_str())
                        || lambda_vars.contains(c.callee.as_str())
                        || known(c);
                    if plain && !answered {
                        callables.insert(c.callee.as_str(), escaped.clone());
                    }
                }
            }
            let mut seen: HashSet<usize> = HashSet::new();
            let mut unresolved_calls = Vec::new();
            for (ci, c) in f.calls.iter().enumerate() {
                let mut any = false;
                for j in targets(&func_by_name, &callables, func, c) {
                    any = true;
                    let gpu_edge =
                        f.kind != FunctionKind::Host || func(j).kind != FunctionKind::Host;
                    if gpu_edge && seen.insert(j) {
                        callers[j].push(n);
                    }
                }
                let resolved = any
                    || macro_by_name.contains_key(c.callee.as_str())
                    || (c.receiver.is_none() && lambda_vars.contains(c.callee.as_str()))
                    || known(c);
                if !resolved && f.kind != FunctionKind::Host {
                    push_capped(&mut unresolved[n], display_callee(c));
                    unresolved_calls.push(ci);
                }
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
                let foreign = |name: &str| macro_by_name.contains_key(name) && !own.contains(name);
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
            }
            for u in &uses {
                for &m in macro_by_name.get(u.name).into_iter().flatten() {
                    if seen.insert(nf + m) {
                        callers[nf + m].push(n);
                    }
                }
            }
            if n < n_main {
                callables_main.push(callables);
                values_main.push(values);
                uses_main.push(uses);
                unresolved_calls_main.push(unresolved_calls);
            }
        }
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
                for &j in func_by_name.get(name.as_str()).into_iter().flatten() {
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
        let mut reach = direct;
        for (slot, r) in reaches.iter().enumerate() {
            let through_functions = r.function.is_some();
            let mut queue: VecDeque<usize> = (0..nf + nm)
                .filter(|&n| reach[n * nb + slot].is_some())
                .collect();
            while let Some(n) = queue.pop_front() {
                let w = reach[n * nb + slot].clone();
                for &c in &callers[n] {
                    if (through_functions || c >= nf) && reach[c * nb + slot].is_none() {
                        reach[c * nb + slot] = w.clone();
                        queue.push_back(c);
                    }
                }
            }
        }
        // Unresolved names travel to callers too (each node keeps at most MAX_UNRESOLVED, so
        // this ends after O(MAX_UNRESOLVED * edges) steps).
        let mut queue: VecDeque<usize> = (0..nf + nm)
            .filter(|&n| !unresolved[n].is_empty())
            .collect();
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
        let macros = reach.split_off(nf * nb);
        let unresolved_mac = unresolved.split_off(nf);
        // Function -> function edges, also through a macro a function uses that names or
        // calls another function (callers of a macro node are its users).
        let mut fn_callers: Vec<Vec<usize>> = vec![Vec::new(); nf];
        for (callee, list) in callers.iter().enumerate().take(nf) {
            let mut seen: HashSet<usize> = HashSet::new();
            let mut stack: Vec<usize> = list.clone();
            while let Some(c) = stack.pop() {
                if !seen.insert(c) {
                    continue;
                }
                if c < nf {
                    fn_callers[callee].push(c);
                } else {
                    stack.extend(callers[c].iter().copied());
                }
            }
        }
        Reach {
            unit,
            reaches: reaches.to_vec(),
            fn_at,
            mac_at,
            funcs: reach,
            macros,
            func_by_name,
            macro_by_name,
            callables: callables_main,
            values: values_main,
            uses: uses_main,
            unresolved_calls: unresolved_calls_main,
            unresolved_fn: unresolved,
            unresolved_mac,
            fn_callers,
        }
    }

    /// For every kernel of the analysed file: the functions of the unit it reaches through
    /// calls (itself first), as `(file, function index)` with file 0 the analysed one and `k`
    /// the unit's header `k - 1`. Calls resolve as for the blockers (by name, overloads merged,
    /// callables followed): a superset of what runs, never less.
    pub(crate) fn kernel_reach(&self) -> Vec<(usize, Vec<(usize, usize)>)> {
        let nf = self.fn_at.len();
        let mut callees: Vec<Vec<usize>> = vec![Vec::new(); nf];
        for (callee, callers) in self.fn_callers.iter().enumerate() {
            for &c in callers {
                callees[c].push(callee);
            }
        }
        let main = self.unit.files[0];
        let mut out = Vec::new();
        for (i, f) in main.functions.iter().enumerate() {
            if f.kind != FunctionKind::Kernel {
                continue;
            }
            let mut seen = vec![false; nf];
            let mut order = Vec::new();
            let mut queue: VecDeque<usize> = VecDeque::from([i]);
            seen[i] = true;
            while let Some(n) = queue.pop_front() {
                order.push(self.fn_at[n]);
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

    /// The predicates of the blocker in `slot`.
    pub(crate) fn reaches(&self, slot: usize) -> &Reaches {
        &self.reaches[slot]
    }

    /// What function node `n` reaches for the blocker in `slot`.
    pub(crate) fn fn_witness(&self, n: usize, slot: usize) -> Option<&Witness> {
        self.funcs[n * self.reaches.len() + slot].as_ref()
    }

    /// What macro node `m` reaches for the blocker in `slot`.
    pub(crate) fn macro_witness(&self, m: usize, slot: usize) -> Option<&Witness> {
        self.macros[m * self.reaches.len() + slot].as_ref()
    }

    /// True when some blocker recognises `c` by itself (a barrier, an atomic: a primitive).
    pub(crate) fn is_primitive(&self, c: &Call) -> bool {
        self.reaches.iter().any(|r| r.call.is_some_and(|p| p(c)))
    }

    /// The function nodes a call of function `fi` of the analysed file may reach.
    pub(crate) fn call_targets<'a>(
        &'a self,
        fi: usize,
        c: &'a Call,
    ) -> impl Iterator<Item = usize> + use<'a, 'f> {
        let func = move |n: usize| -> &'f Function {
            let (k, i) = self.fn_at[n];
            &self.unit.files[k].functions[i]
        };
        targets(&self.func_by_name, &self.callables[fi], func, c)
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
        &self.unresolved_fn[n]
    }
    pub(crate) fn unresolved_of_macro(&self, m: usize) -> &[String] {
        &self.unresolved_mac[m]
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

/// The function nodes a call may reach: by name (any function for a free or qualified call,
/// only member functions for a method call), and for a plain call of a local callable, what
/// it holds.
fn targets<'a, 'f: 'a>(
    by_name: &'a HashMap<&'f str, Vec<usize>>,
    callables: &'a HashMap<&'f str, Vec<usize>>,
    func: impl Fn(usize) -> &'f Function + 'a,
    c: &'a Call,
) -> impl Iterator<Item = usize> + 'a {
    let method = c.receiver.is_some();
    let by_callee = by_name
        .get(c.callee.as_str())
        .into_iter()
        .flatten()
        .copied()
        .filter(move |&j| !method || func(j).qualified_name.contains("::"));
    let held = (!method && c.qualifier.is_none())
        .then(|| callables.get(c.callee.as_str()))
        .flatten()
        .into_iter()
        .flatten()
        .copied();
    by_callee.chain(held)
}

/// The local callables of `f`: parameters, variables and assignments holding a function of the
/// unit (named as a value in the initialiser: `&helper`, `helper`, not called) or a functor (its
/// type, or a class its initialiser names or constructs, has an `operator()`), name -> function
/// nodes.
fn callables_of<'f>(
    f: &'f Function,
    by_name: &HashMap<&'f str, Vec<usize>>,
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
                v.extend(by_name.get(u.name.as_str()).into_iter().flatten());
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
fn is_known_call(reaches: &[Reaches], c: &Call) -> bool {
    reaches.iter().any(|r| r.call.is_some_and(|p| p(c)))
        || frontend::known::is_known_function(
            &c.callee,
            c.qualifier.as_deref(),
            c.receiver.is_some(),
        )
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
    };
    is_known_call(reaches, &c)
        || reaches
            .iter()
            .any(|r| r.macro_call.is_some_and(|p| p(name)))
}

fn push_capped(v: &mut Vec<String>, x: String) {
    if v.len() < MAX_UNRESOLVED && !v.contains(&x) {
        v.push(x);
    }
}
