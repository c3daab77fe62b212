//! Reach through the same file: which `__device__` functions and macros (transitively, cycles
//! included) execute a barrier, an atomic or touch dynamic shared memory, and which macros leave
//! the code they expand into. Computed once per file in O(functions + macros + edges) by a
//! backwards breadth-first search from the nodes that do it directly.

use std::collections::{HashMap, HashSet, VecDeque};

use frontend::{FunctionKind, SourceFile, Span};

use crate::rules::{atomic, barrier, dynamic_lds, early_exit};

/// The primitive site a function or macro reaches: `__syncthreads` at line 5.
#[derive(Debug, Clone)]
pub struct Witness {
    pub what: String,
    pub span: Span,
}

/// The functions of the file a call may reach, by name: any function for a free or qualified
/// call (`helper(x)`, `Gemm::Run(x)`), only member functions for a method call (`tile.load()`).
/// Overloads and same-named members are merged (conservative).
pub(crate) fn call_targets<'a>(
    file: &'a SourceFile,
    by_name: &'a HashMap<&str, Vec<usize>>,
    c: &frontend::Call,
) -> impl Iterator<Item = usize> + 'a {
    let method = c.receiver.is_some();
    by_name
        .get(c.callee.as_str())
        .into_iter()
        .flatten()
        .copied()
        .filter(move |&j| !method || file.functions[j].qualified_name.contains("::"))
}

pub(crate) const R_BARRIER: usize = 0;
pub(crate) const R_ATOMIC: usize = 1;
pub(crate) const R_DLDS: usize = 2;
const N_RULES: usize = 3;

pub(crate) struct Reach<'f> {
    /// `funcs[i][rule]`: what function `i` reaches.
    pub funcs: Vec<[Option<Witness>; N_RULES]>,
    pub macros: Vec<[Option<Witness>; N_RULES]>,
    /// A macro that (through other macros too) returns/gotos (`Leaves`) or breaks.
    pub macro_exit: Vec<Option<(early_exit::MacroExit, Witness)>>,
    pub func_by_name: HashMap<&'f str, Vec<usize>>,
    pub macro_by_name: HashMap<&'f str, usize>,
    /// Per function: the names denoting dynamic shared memory in it.
    pub dynamic: Vec<HashMap<String, String>>,
}

impl<'f> Reach<'f> {
    pub(crate) fn build(file: &'f SourceFile) -> Self {
        let nf = file.functions.len();
        let nm = file.macros.len();
        let mut func_by_name: HashMap<&str, Vec<usize>> = HashMap::new();
        for (i, f) in file.functions.iter().enumerate() {
            func_by_name.entry(f.name.as_str()).or_default().push(i);
        }
        let macro_by_name: HashMap<&str, usize> = file
            .macros
            .iter()
            .enumerate()
            .map(|(i, m)| (m.name.as_str(), i))
            .collect();
        let dynamic: Vec<HashMap<String, String>> = file
            .functions
            .iter()
            .map(|f| dynamic_lds::dynamic_names(file, f))
            .collect();
        let file_dynamic: HashSet<&str> = file
            .shared
            .iter()
            .filter(|s| s.kind != frontend::SharedKind::Static)
            .map(|s| s.name.as_str())
            .collect();

        // Nodes: functions 0..nf, macros nf..nf+nm. Reverse edges: callee -> callers.
        let mut callers: Vec<Vec<usize>> = vec![Vec::new(); nf + nm];
        let mut direct: Vec<[Option<Witness>; N_RULES]> = vec![Default::default(); nf + nm];
        for (i, f) in file.functions.iter().enumerate() {
            let mut seen: HashSet<usize> = HashSet::new();
            for c in &f.calls {
                if direct[i][R_BARRIER].is_none() && barrier::is_barrier_call(c) {
                    direct[i][R_BARRIER] = Some(Witness {
                        what: c.callee.clone(),
                        span: c.span,
                    });
                }
                if direct[i][R_ATOMIC].is_none() && atomic::is_atomic_call(c) {
                    direct[i][R_ATOMIC] = Some(Witness {
                        what: c.callee.clone(),
                        span: c.span,
                    });
                }
                for j in call_targets(file, &func_by_name, c) {
                    let gpu_edge = f.kind != FunctionKind::Host
                        || file.functions[j].kind != FunctionKind::Host;
                    if gpu_edge && seen.insert(j) {
                        callers[j].push(i);
                    }
                }
            }
            if direct[i][R_BARRIER].is_none() {
                direct[i][R_BARRIER] = f.asm.iter().find_map(|a| {
                    barrier::asm_barrier(&a.template).map(|w| Witness {
                        what: format!("asm(\"{w}\")"),
                        span: a.span,
                    })
                });
            }
            for r in &f.macro_refs {
                if let Some(&m) = macro_by_name.get(r.name.as_str()) {
                    if seen.insert(nf + m) {
                        callers[nf + m].push(i);
                    }
                }
            }
            if !dynamic[i].is_empty() {
                if let Some((u, root)) = f
                    .idents
                    .iter()
                    .find_map(|u| dynamic[i].get(&u.name).map(|r| (u, r)))
                {
                    direct[i][R_DLDS] = Some(Witness {
                        what: root.clone(),
                        span: u.span,
                    });
                }
            }
        }
        for (mi, m) in file.macros.iter().enumerate() {
            let node = nf + mi;
            let mut seen: HashSet<usize> = HashSet::new();
            if let Some(w) = m.asm.as_deref().and_then(barrier::asm_barrier) {
                direct[node][R_BARRIER] = Some(Witness {
                    what: format!("asm(\"{w}\")"),
                    span: m.span,
                });
            }
            for name in m.calls.iter().chain(m.idents.iter()) {
                let w = || {
                    Some(Witness {
                        what: name.clone(),
                        span: m.span,
                    })
                };
                if direct[node][R_BARRIER].is_none()
                    && (barrier::is_barrier_name(name)
                        || (m.calls.contains(name) && barrier::is_barrier_macro_call(name)))
                {
                    direct[node][R_BARRIER] = w();
                }
                if direct[node][R_ATOMIC].is_none() && atomic::is_atomic_name(name) {
                    direct[node][R_ATOMIC] = w();
                }
                if direct[node][R_DLDS].is_none() && file_dynamic.contains(name.as_str()) {
                    direct[node][R_DLDS] = w();
                }
                if let Some(&m2) = macro_by_name.get(name.as_str()) {
                    if m2 != mi && seen.insert(nf + m2) {
                        callers[nf + m2].push(node);
                    }
                }
                if let Some(js) = func_by_name.get(name.as_str()) {
                    for &j in js {
                        if seen.insert(j) {
                            callers[j].push(node);
                        }
                    }
                }
            }
        }

        // Backwards BFS per rule from the direct sites.
        let mut reach = direct.clone();
        #[allow(clippy::needless_range_loop)] // `rule` indexes the inner arrays of `reach`
        for rule in 0..N_RULES {
            let mut queue: VecDeque<usize> =
                (0..nf + nm).filter(|&n| reach[n][rule].is_some()).collect();
            while let Some(n) = queue.pop_front() {
                let w = reach[n][rule].clone();
                for &c in &callers[n] {
                    if reach[c][rule].is_none() {
                        reach[c][rule] = w.clone();
                        queue.push_back(c);
                    }
                }
            }
        }
        // Macro exits propagate only from macro to macro (a helper's `return` stays in it).
        let mut macro_exit: Vec<Option<(early_exit::MacroExit, Witness)>> = file
            .macros
            .iter()
            .map(|m| {
                early_exit::macro_exit(m).map(|e| {
                    (
                        e,
                        Witness {
                            what: m.name.clone(),
                            span: m.span,
                        },
                    )
                })
            })
            .collect();
        let mut queue: VecDeque<usize> = (0..nm).filter(|&m| macro_exit[m].is_some()).collect();
        while let Some(m) = queue.pop_front() {
            let e = macro_exit[m].clone();
            for &c in &callers[nf + m] {
                if c >= nf && macro_exit[c - nf].is_none() {
                    macro_exit[c - nf] = e.clone();
                    queue.push_back(c - nf);
                }
            }
        }
        let macros = reach.split_off(nf);
        Reach {
            funcs: reach,
            macros,
            macro_exit,
            func_by_name,
            macro_by_name,
            dynamic,
        }
    }

    /// Every identifier a macro expands to, through nested macros (bounded).
    pub(crate) fn macro_names(&self, file: &'f SourceFile, m: usize) -> Vec<&'f str> {
        let mut out = Vec::new();
        let mut seen = HashSet::new();
        let mut stack = vec![m];
        while let Some(m) = stack.pop() {
            if !seen.insert(m) || seen.len() > 64 {
                continue;
            }
            for n in file.macros[m]
                .idents
                .iter()
                .chain(file.macros[m].calls.iter())
            {
                out.push(n.as_str());
                if let Some(&m2) = self.macro_by_name.get(n.as_str()) {
                    stack.push(m2);
                }
            }
        }
        out
    }
}
