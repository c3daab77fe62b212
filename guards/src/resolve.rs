//! Names and types of a translation unit: which functions a call may reach, by the receiver's
//! static type where the unit shows it (a variable's or parameter's declared type, `auto x =
//! T(...)`, a data member's type, `this`, an alias), by qualified name in namespaces and
//! classes (`lib::copy` never reaches `mine::copy`), through base classes; by name, to every
//! candidate, only where the type is unknown (a template parameter, a class no visible text
//! defines, a receiver expression that is not a name). Indexed once per unit: a lookup is a
//! hash probe per enclosing scope, never a scan of the unit.

/// The index's maps and memos: keyed by names and type texts, looked up millions of times on a
/// header-only template library (SipHash was a tenth of a check there).
type HashMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;

use frontend::identity::qualified_segments as split_segments;
use frontend::types::is_builtin_type;
use frontend::{Call, CallForm, Function, TypeDef, TypeKind};

/// How deep aliases, bases and members are followed.
const MAX_DEPTH: usize = 8;

/// How many types one resolution may visit (aliases, their template arguments, bases) before
/// it answers "unknown" (which resolves a call by name, to every candidate: conservative). A
/// header-only template library (ThunderKittens: aliases of class templates whose arguments
/// are aliases of class templates) made the walk exponential in [`MAX_DEPTH`]: minutes for
/// one file.
const TYPE_STEPS: u32 = 4096;

/// Resolved types: (text, scope) -> result, by hash. The same alias of a class template with
/// the same arguments is met again and again (in one walk and across the unit's calls); each
/// is resolved once.
type TypeMemo = HashMap<u64, Vec<(String, TypeScope, TypeRes)>>;

/// The parts of a [`Scope`] that a type's resolution reads: where names are looked up, the
/// template parameters and what a call binds them to. Not the function's locals or class: a
/// type written the same way in two functions of one namespace is one memo entry, and a key
/// is cheap to hash.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct TypeScope {
    scopes: Vec<String>,
    params: Vec<String>,
    bound: Vec<(String, TypeRes)>,
}

impl TypeScope {
    fn of(s: &Scope) -> Self {
        TypeScope {
            scopes: s.scopes.clone(),
            params: s.params.clone(),
            bound: s.bound.clone(),
        }
    }

    fn is(&self, s: &Scope) -> bool {
        self.scopes == s.scopes && self.params == s.params && self.bound == s.bound
    }
}

thread_local! {
    /// The resolutions of types running on this thread (nested), the types the outermost one
    /// has visited (see [`TYPE_STEPS`]), and how many times a walk was cut short (by
    /// [`MAX_DEPTH`] or [`TYPE_STEPS`]) on this thread.
    static TYPE_WALK: std::cell::Cell<(u32, u32, u64)> = const { std::cell::Cell::new((0, 0, 0)) };
    /// The results of the outermost walk that a cut may have changed: they depend on where the
    /// walk met them, so they serve that walk only ([`Index::exact_types`] keeps the others).
    static WALK_MEMO: std::cell::RefCell<TypeMemo> = std::cell::RefCell::new(HashMap::default());
}

#[cfg(test)]
thread_local! {
    /// Every step of every walk on this thread (what a test reads).
    static TYPE_STEPS_SEEN: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
    /// Every [`Index::parts_walk`] on this thread.
    static PARTS_WALKS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
    /// Every class a walk up the bases ([`Bases`]) visited on this thread.
    static BASE_VISITS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
    /// Every candidate's class name read for [`Index::specialise`] on this thread.
    static CLASS_NAME_READS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// One step of a type resolution: false when the resolution it belongs to is over budget.
/// Ends with the returned guard. The outermost step starts a new walk (budget and memo).
fn type_step() -> (bool, TypeWalk) {
    TYPE_WALK.with(|w| {
        let (nested, steps, cuts) = w.get();
        let steps = if nested == 0 {
            WALK_MEMO.with(|m| m.borrow_mut().clear());
            1
        } else {
            steps + 1
        };
        w.set((nested + 1, steps, cuts));
        #[cfg(test)]
        TYPE_STEPS_SEEN.with(|n| n.set(n.get() + 1));
        (steps <= TYPE_STEPS, TypeWalk)
    })
}

/// A walk cut short here: what contains this step is not exact.
fn type_cut() {
    TYPE_WALK.with(|w| {
        let (nested, steps, cuts) = w.get();
        w.set((nested, steps, cuts + 1));
    });
}

fn type_cuts() -> u64 {
    TYPE_WALK.with(|w| w.get().2)
}

fn memo_hash(text: &str, scope: &Scope) -> u64 {
    use std::hash::{BuildHasher, Hash, Hasher};
    let mut h = foldhash::fast::FixedState::default().build_hasher();
    text.hash(&mut h);
    scope.scopes.hash(&mut h);
    scope.params.hash(&mut h);
    scope.bound.hash(&mut h);
    h.finish()
}

fn memo_get(memo: &TypeMemo, h: u64, text: &str, scope: &Scope) -> Option<TypeRes> {
    memo.get(&h)?
        .iter()
        .find(|(t, s, _)| t == text && s.is(scope))
        .map(|(_, _, r)| r.clone())
}

/// Leaves one step of a type resolution.
struct TypeWalk;

impl Drop for TypeWalk {
    fn drop(&mut self) {
        TYPE_WALK.with(|w| {
            let (nested, steps, cuts) = w.get();
            w.set((nested.saturating_sub(1), steps, cuts));
        });
    }
}

/// `(anonymous namespace)::` left out, no leading `::`, template arguments left out: the key of
/// a qualified name in the index.
pub(crate) fn norm(q: &str) -> String {
    let q = q.trim().trim_start_matches("::");
    if !q.contains(['<', '(', ' ']) && !q.contains("::::") {
        return q.to_string();
    }
    let stripped = strip_args(q);
    stripped
        .split("::")
        .filter(|s| !s.is_empty() && !s.starts_with("(anonymous"))
        .collect::<Vec<_>>()
        .join("::")
}

/// A name that by convention names a type (`value_type`, `type`, `index_t`): a call of it is
/// a cast or a construction.
fn type_like(name: &str) -> bool {
    name == "type" || name.ends_with("_type") || name.ends_with("_t")
}

/// `ns::T<a, b<c>>::U<d>` -> `ns::T::U`.
/// The unqualified name of a type as written, template arguments left out (`ns::Snap<T>` ->
/// `Snap`).
pub(crate) fn type_leaf(t: &str) -> String {
    let t = strip_args(&norm(t));
    t.rsplit("::").next().unwrap_or("").to_string()
}

fn strip_args(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut depth = 0usize;
    for ch in s.chars() {
        match ch {
            '<' => depth += 1,
            '>' if depth > 0 => depth -= 1,
            _ if depth == 0 => out.push(ch),
            _ => {}
        }
    }
    out
}

/// The top-level arguments of the last template argument list of `t` (`ns::T<A, B<C>>` ->
/// `A`, `B<C>`; none without one).
pub(crate) fn template_args(t: &str) -> Vec<String> {
    let Some(open) = t.find('<') else {
        return Vec::new();
    };
    let inner = t[open + 1..].trim_end();
    let inner = inner.strip_suffix('>').unwrap_or(inner);
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut cur = String::new();
    for ch in inner.chars() {
        match ch {
            '<' | '(' => {
                depth += 1;
                cur.push(ch);
            }
            '>' | ')' => {
                depth = depth.saturating_sub(1);
                cur.push(ch);
            }
            ',' if depth == 0 => out.push(std::mem::take(&mut cur).trim().to_string()),
            _ => cur.push(ch),
        }
    }
    if !cur.trim().is_empty() {
        out.push(cur.trim().to_string());
    }
    out
}

/// A template argument that names one type or one value whatever the unit's typedefs are:
/// its canonical spelling (`unsigned` -> `unsigned int`, `4u` -> `4`); `None` for a typedef, a
/// parameter, an expression (`int32_t`, `T`, `N * 2`).
fn exact_arg(a: &str) -> Option<String> {
    let words: Vec<&str> = a.split_whitespace().collect();
    const KEYWORDS: &[&str] = &[
        "signed", "unsigned", "long", "short", "char", "int", "float", "double", "bool",
    ];
    if words.is_empty() {
        return None;
    }
    if words.iter().all(|w| KEYWORDS.contains(w)) {
        let has = |w: &str| words.contains(&w);
        let longs = words.iter().filter(|w| **w == "long").count();
        let canon = if has("float") && words.len() == 1 {
            "float".to_string()
        } else if has("double") {
            if longs == 1 && words.len() == 2 {
                "long double".to_string()
            } else if words.len() == 1 {
                "double".to_string()
            } else {
                return None;
            }
        } else if has("bool") && words.len() == 1 {
            "bool".to_string()
        } else if has("char") {
            // `char`, `signed char` and `unsigned char` are three types.
            match (has("signed"), has("unsigned"), words.len()) {
                (false, false, 1) => "char".to_string(),
                (true, false, 2) => "signed char".to_string(),
                (false, true, 2) => "unsigned char".to_string(),
                _ => return None,
            }
        } else {
            let sign = if has("unsigned") { "unsigned " } else { "" };
            let size = match (has("short"), longs) {
                (true, 0) => "short",
                (false, 0) => "int",
                (false, 1) => "long",
                (false, 2) => "long long",
                _ => return None,
            };
            format!("{sign}{size}")
        };
        return Some(canon);
    }
    match a.trim() {
        "true" => return Some("1".into()),
        "false" => return Some("0".into()),
        _ => {}
    }
    frontend::lex::parse_int_literal(a.trim()).map(|v| v.to_string())
}

/// What a type as written denotes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum TypeRes {
    /// Classes of the unit (qualified, normalised): one, or every class of that name a `using
    /// namespace` could make it.
    Classes(Vec<String>),
    /// A template parameter of the function or its class.
    Param(String),
    /// A type that is no class (`int`, `float4`, an enum).
    NotClass,
    /// A lambda's closure type, bound to a template parameter by a call that passes a lambda:
    /// its `operator()` is the lambda's body, which the caller's own reach holds (a lambda
    /// written in the loop is in the loop; one held by a variable is looked into where it is
    /// passed). The index is the lambda's in [`Index::lambdas`]: calling it reaches its node.
    Lambda(usize),
    /// Functions of the unit named as a value (`each(&helper)`, `each(helper)`), bound to a
    /// template parameter: calling it calls one of them (function nodes).
    Functions(Vec<usize>),
    /// Nothing visible says.
    Unknown,
}

/// The outcome of resolving one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Outcome {
    /// The call's targets are known (possibly none: an implicit constructor).
    #[default]
    Resolved,
    /// The type is unknown: every function of that name (members for a method) is a target.
    ByName,
    /// A callee no visible body answers (`lib::copy` with no `lib::copy` defined, a method the
    /// receiver's class only declares).
    Unresolved,
    /// Not a call of a function: a cast (`float(x)`, `uint32_t(x)`, `static_cast<T>(x)`), a
    /// type, a call through a variable of unknown type.
    NotACall,
}

/// Where a function's body looks names up.
#[derive(Debug, Clone, Default)]
pub(crate) struct Scope {
    /// Enclosing scopes, innermost first, the global one (`""`) last.
    pub scopes: Vec<String>,
    /// Its class (normalised), if it is a member.
    pub class: Option<String>,
    /// Template parameters of the function and of its class.
    pub params: Vec<String>,
    /// Those of `params` a call binds to classes (a specialisation's view).
    pub bound: Vec<(String, TypeRes)>,
    /// Its class with the template arguments as written, where they are written: a member
    /// of a specialisation (`Traits<float>::Reducer`). Its unqualified calls of members are
    /// calls of that specialisation's members.
    pub written_class: Option<String>,
    /// The names of its parameters and locals (anywhere in it): they hide file-scope
    /// variables.
    pub locals: Vec<String>,
    /// Its parameters declared `auto` (an abbreviated template): each a template parameter.
    pub auto_params: Vec<String>,
}

impl Scope {
    /// What the call binds the parameter `name` to, as a `kind` (`auto@`, `ptr@`) binding.
    fn bound_as(&self, kind: &str, name: &str) -> Option<TypeRes> {
        self.bound
            .iter()
            .find(|(p, _)| p.strip_prefix(kind) == Some(name))
            .map(|(_, t)| t.clone())
    }
}

/// The unit's functions and types, indexed.
pub(crate) struct Index<'f> {
    funcs: Vec<&'f Function>,
    by_name: HashMap<&'f str, Vec<usize>>,
    by_qname: HashMap<String, Vec<usize>>,
    /// Per function node: its class (normalised), if it is a member.
    member_of: Vec<Option<String>>,
    types: HashMap<String, Vec<&'f TypeDef>>,
    type_by_name: HashMap<&'f str, Vec<String>>,
    methods: HashMap<(String, &'f str), Vec<usize>>,
    /// Every lambda of the unit: the function node it is written in and its span.
    lambdas: Vec<(usize, frontend::Span)>,
    /// `(function node, span start)` -> index in `lambdas`.
    lambda_ids: HashMap<(usize, usize), usize>,
    /// The graph node of lambda 0 (the others follow).
    lambda_base: usize,
    /// Class -> the classes that name it as a base (directly).
    derived: HashMap<String, Vec<String>>,
    /// Namespace alias -> the namespace (normalised): `namespace L = lib;`.
    ns_aliases: HashMap<String, String>,
    /// The names of every class's data members.
    field_names: std::collections::HashSet<&'f str>,
    /// File-scope variables of the unit: name -> (type as written, pointer or reference); a
    /// name declared twice with different types is left out.
    globals: HashMap<&'f str, Option<(&'f str, bool)>>,
    /// Types resolved without a cut (by depth or budget): what they denote whatever walk meets
    /// them, so every walk of the unit reuses them. A hit saves a walk steps and depth, so
    /// where a later walk is cut can depend on the walks before it: an index serves one
    /// unit's analysis on one thread, in the unit's order (the same every run; the
    /// determinism tests run it with 1 and N threads).
    exact_types: std::sync::Mutex<TypeMemo>,
    /// [`Index::parts`] by `(class, members, depth)`: what a class object is made of, resolved
    /// once per unit (the first time it is asked, in the unit's order). A library's small
    /// class (`vector_type`, `Sequence`) is declared as a local object in hundreds of loops,
    /// and each declaration asks for its constructors and destructors; its fields' types were
    /// walked again every time (composable_kernel: 490 times one class, 3 ms each).
    parts_memo: std::sync::Mutex<HashMap<PartsKey, Parts>>,
    /// Functions (qualified, normalised) whose bodies declare types (`using T = ...;`): the
    /// innermost scope of their own lookups.
    local_types: std::collections::HashSet<String>,
    /// Classes (qualified, normalised) whose body holds an `#include`: the included header's
    /// functions are their members, which the header's own parse names as free functions
    /// (ThunderKittens' `struct group { struct tma { struct cluster { #include ... } } }`).
    open_classes: std::collections::HashSet<String>,
    /// Function nodes defined at the top level of a header that the unit includes inside a
    /// class body, with that class (qualified, normalised): members of it, which the header's
    /// own parse names as free functions ([`Index::set_included_members`]).
    included_in: HashMap<usize, String>,
    /// Per function node: the class part of its (specialised) qualified name as
    /// [`Index::specialise`] compares it, read the first time a call asks (CUTLASS's units
    /// hold thousands of members of one name, `operator()`, `get`: each call re-read every
    /// candidate's name and template arguments, 57% of a check with its include directories).
    class_names: Vec<std::sync::OnceLock<Option<Vec<NamePart>>>>,
    /// Per function node: what [`Index::binding`] binds each parameter to, read the first time
    /// a call reaches it.
    param_kinds: Vec<std::sync::OnceLock<Vec<ParamKind>>>,
}

/// One name of a qualified name (`Tile<4, float>` of `ns::Tile<4, float>::f`) as
/// [`Index::specialise`] compares it: without its template arguments, and each argument's
/// exact spelling and integer type (see [`ArgKey`]).
#[derive(Debug)]
struct NamePart {
    bare: String,
    args: Vec<ArgKey>,
}

impl NamePart {
    fn of(seg: &str) -> NamePart {
        NamePart {
            bare: strip_args(seg).trim().to_string(),
            args: template_args(seg).iter().map(|a| ArgKey::of(a)).collect(),
        }
    }
}

/// A template argument as [`Index::specialise`] compares it, read once: its [`exact_arg`]
/// spelling and its integer type.
#[derive(Debug)]
struct ArgKey {
    exact: Option<String>,
    int: Option<frontend::ints::IntName>,
}

impl ArgKey {
    fn of(a: &str) -> ArgKey {
        ArgKey {
            exact: exact_arg(a),
            int: frontend::ints::parse(a).map(|p| p.name),
        }
    }

    /// True when the two arguments certainly differ: two distinct built-in types or values
    /// ([`exact_arg`]), or two integer types of different range (`int32_t` is not `long
    /// long`).
    fn differs(&self, other: &ArgKey) -> bool {
        if let (Some(x), Some(y)) = (&self.exact, &other.exact) {
            return x != y;
        }
        match (&self.int, &other.int) {
            (Some(x), Some(y)) => x != y,
            _ => false,
        }
    }

    /// Both name the same type or value whatever the unit's typedefs are.
    fn same_exactly(&self, other: &ArgKey) -> bool {
        self.exact.is_some() && self.exact == other.exact
    }
}

/// [`Index::parts`]' arguments: class, its parameters' binding, members, depth.
type PartsKey = (String, Vec<(String, TypeRes)>, bool, usize);

/// What a class object is made of: classes, each with its parameters' binding.
type Parts = Vec<(String, Vec<(String, TypeRes)>)>;

/// The classes one walk up a class's bases has visited, each with the shallowest depth it was
/// visited at. A hierarchy where a class is reached along several paths (a recursive template
/// `V<N> : V<N / 2>` whose bases resolve to every definition of the template, rocWMMA's 41
/// specialisations of `amdgcn_mfma`) was walked once per path: exponential in the depth, 17 s
/// for one header. A class is walked again only from a shallower depth (where the depth bound
/// lets the walk go further); what it holds was found the first time.
#[derive(Default)]
struct Bases(HashMap<String, usize>);

impl Bases {
    /// True when `class` is to be walked at `depth`: never visited, or only deeper.
    fn first_visit(&mut self, class: &str, depth: usize) -> bool {
        #[cfg(test)]
        BASE_VISITS.with(|n| n.set(n.get() + 1));
        match self.0.get_mut(class) {
            Some(d) if *d <= depth => false,
            Some(d) => {
                *d = depth;
                true
            }
            None => {
                self.0.insert(class.to_string(), depth);
                true
            }
        }
    }
}

/// Casts written like calls.
const CASTS: &[&str] = &[
    "static_cast",
    "reinterpret_cast",
    "const_cast",
    "dynamic_cast",
    "bit_cast",
    "__builtin_bit_cast",
];

/// Operators written like calls (`noexcept(f(x))`, in CCCL's tests `static_assert(noexcept(m(i)))`,
/// was listed as an unresolved callee): no function is called by their name.
const OPERATORS: &[&str] = &["noexcept", "typeid", "sizeof", "alignof", "decltype"];

impl<'f> Index<'f> {
    /// The index of `funcs` (function node `n` is `funcs[n]`) and `types` (every type of the
    /// unit, with the scopes of its file).
    pub(crate) fn new(funcs: Vec<&'f Function>, types: &[&'f TypeDef]) -> Self {
        let mut ix = Index {
            by_name: HashMap::default(),
            by_qname: HashMap::default(),
            member_of: Vec::with_capacity(funcs.len()),
            types: HashMap::default(),
            type_by_name: HashMap::default(),
            methods: HashMap::default(),
            lambdas: Vec::new(),
            lambda_ids: HashMap::default(),
            lambda_base: 0,
            derived: HashMap::default(),
            ns_aliases: HashMap::default(),
            globals: HashMap::default(),
            exact_types: std::sync::Mutex::new(HashMap::default()),
            parts_memo: std::sync::Mutex::new(HashMap::default()),
            local_types: Default::default(),
            open_classes: Default::default(),
            included_in: HashMap::default(),
            field_names: types
                .iter()
                .flat_map(|t| t.fields.iter().map(|f| f.name.as_str()))
                .collect(),
            class_names: (0..funcs.len()).map(|_| Default::default()).collect(),
            param_kinds: (0..funcs.len()).map(|_| Default::default()).collect(),
            funcs,
        };
        for t in types {
            let q = norm(&t.qualified_name);
            let defs = ix.types.entry(q.clone()).or_default();
            if defs.is_empty() {
                ix.type_by_name.entry(t.name.as_str()).or_default().push(q);
            }
            defs.push(t);
        }
        for (n, f) in ix.funcs.iter().enumerate() {
            ix.by_name.entry(f.name.as_str()).or_default().push(n);
            let q = norm(&f.qualified_name);
            let class = match &f.class_name {
                Some(c) => Some(norm(c)),
                None => q
                    .rsplit_once("::")
                    .map(|(p, _)| p.to_string())
                    .filter(|p| ix.is_class(p)),
            };
            if let Some(c) = &class {
                ix.methods
                    .entry((c.clone(), f.name.as_str()))
                    .or_default()
                    .push(n);
            }
            ix.member_of.push(class);
            ix.by_qname.entry(q).or_default().push(n);
            for l in &f.lambdas {
                ix.lambda_ids.insert((n, l.start), ix.lambdas.len());
                ix.lambdas.push((n, *l));
            }
        }
        let mut derived: HashMap<String, Vec<String>> = HashMap::default();
        let mut classes: Vec<&String> = ix.types.keys().collect();
        classes.sort_unstable();
        for q in classes {
            for def in &ix.types[q] {
                if def.kind != TypeKind::Class || def.bases.is_empty() {
                    continue;
                }
                let s = ix.scope_of_type(q, def);
                for b in &def.bases {
                    if let TypeRes::Classes(cs) = ix.resolve_type_at(b, &s, 1) {
                        for c in cs.into_iter().filter(|c| c != q) {
                            let v = derived.entry(c).or_default();
                            if !v.contains(q) {
                                v.push(q.clone());
                            }
                        }
                    }
                }
            }
        }
        ix.derived = derived;
        let local_types: std::collections::HashSet<String> = ix
            .types
            .keys()
            .filter_map(|q| q.rsplit_once("::").map(|(p, _)| p))
            .filter(|p| ix.by_qname.contains_key(*p))
            .map(str::to_string)
            .collect();
        ix.local_types = local_types;
        ix
    }

    /// The classes derived from `class`, transitively (bounded), in a stable order.
    fn derived_from(&self, class: &str) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let mut stack: Vec<&str> = vec![class];
        while let Some(c) = stack.pop() {
            for d in self.derived.get(c).into_iter().flatten() {
                if out.len() < 256 && d != class && !out.contains(d) {
                    out.push(d.clone());
                    stack.push(d);
                }
            }
        }
        out
    }

    /// Every lambda of the unit: the function node it is written in and its span, in node
    /// order (lambda `l` is graph node `lambda_base + l`).
    pub(crate) fn lambdas(&self) -> &[(usize, frontend::Span)] {
        &self.lambdas
    }

    /// The graph node of the lambda written at `start` in function node `n`.
    pub(crate) fn lambda_node(&self, n: usize, start: usize) -> Option<usize> {
        self.lambda_ids
            .get(&(n, start))
            .map(|l| self.lambda_base + l)
    }

    /// Where the graph numbers its lambda nodes: lambda `l` is node `base + l`.
    pub(crate) fn set_lambda_base(&mut self, base: usize) {
        self.lambda_base = base;
    }

    fn is_class(&self, q: &str) -> bool {
        self.types
            .get(q)
            .is_some_and(|d| d.iter().any(|t| t.kind == TypeKind::Class))
    }

    /// Function nodes named `name` (any scope).
    pub(crate) fn named(&self, name: &str) -> &[usize] {
        self.by_name.get(name).map_or(&[], |v| v.as_slice())
    }

    /// Function nodes named `name` that are no member functions (any namespace).
    pub(crate) fn free_functions<'a>(&'a self, name: &str) -> impl Iterator<Item = usize> + 'a {
        self.named(name)
            .iter()
            .copied()
            .filter(|&j| !self.is_member(j))
    }

    /// True for a member function.
    pub(crate) fn is_member(&self, n: usize) -> bool {
        self.member_of[n].is_some()
    }

    /// Where function node `n` looks names up.
    pub(crate) fn scope_of(&self, n: usize) -> Scope {
        let f = self.funcs[n];
        let written = norm(&f.qualified_name);
        let q = match self.included_in.get(&n) {
            Some(c) => format!("{c}::{written}"),
            None => written.clone(),
        };
        let prefix = q.rsplit_once("::").map_or("", |(p, _)| p);
        let mut scopes = Vec::new();
        if self.local_types.contains(&written) {
            scopes.push(written.clone());
        }
        let mut p = prefix;
        loop {
            scopes.push(p.to_string());
            match p.rsplit_once("::") {
                Some((a, _)) => p = a,
                None if !p.is_empty() => p = "",
                None => break,
            }
        }
        let class = self.member_of[n].clone();
        let mut params = f.template_params.clone();
        if let Some(c) = &class {
            for t in self.types.get(c).into_iter().flatten() {
                params.extend(t.template_params.iter().cloned());
            }
        }
        let written_class = f
            .specialised_name
            .as_deref()
            .and_then(|w| split_segments(w).split_last().map(|(_, c)| c.join("::")));
        let locals = f
            .params
            .iter()
            .map(|p| p.name.clone())
            .chain(f.decls.iter().map(|d| d.name.clone()))
            .collect();
        let auto_params = f
            .params
            .iter()
            .filter(|p| is_auto(&p.type_text))
            .map(|p| p.name.clone())
            .collect();
        Scope {
            scopes,
            class,
            params,
            bound: Vec::new(),
            written_class,
            locals,
            auto_params,
        }
    }

    /// The scopes of a type's own definition (for its bases, members and aliased text).
    fn scope_of_type(&self, q: &str, t: &TypeDef) -> Scope {
        let mut scopes = Vec::new();
        if t.kind == TypeKind::Class {
            scopes.push(q.to_string());
        }
        let mut p = q.rsplit_once("::").map_or("", |(a, _)| a);
        loop {
            scopes.push(p.to_string());
            match p.rsplit_once("::") {
                Some((a, _)) => p = a,
                None if !p.is_empty() => p = "",
                None => break,
            }
        }
        Scope {
            scopes,
            class: (t.kind == TypeKind::Class).then(|| q.to_string()),
            params: t.template_params.clone(),
            bound: Vec::new(),
            written_class: None,
            locals: Vec::new(),
            auto_params: Vec::new(),
        }
    }

    /// The qualified names a (possibly qualified) type name denotes from `scope`: the first
    /// enclosing scope where it is defined, else every type whose qualified name ends with it.
    fn lookup_type(&self, name: &str, scope: &Scope) -> Vec<String> {
        let leaf = name.rsplit("::").next().unwrap_or(name);
        if !self.type_by_name.contains_key(leaf) {
            return Vec::new(); // no type of the unit has that name
        }
        for s in &scope.scopes {
            let key = if s.is_empty() {
                name.to_string()
            } else {
                format!("{s}::{name}")
            };
            if self.types.contains_key(&key) {
                return vec![key];
            }
        }
        let suffix = format!("::{name}");
        let mut out: Vec<String> = self
            .type_by_name
            .get(leaf)
            .into_iter()
            .flatten()
            .filter(|q| q.ends_with(&suffix) || *q == name)
            .filter(|q| self.member_visible(q, name, scope))
            .cloned()
            .collect();
        out.sort();
        out
    }

    /// Whether a type name (`T`, `tma::cluster`) found nowhere in `scope`'s enclosing scopes
    /// may denote the type `q` whose qualified name ends with it: one in a namespace (a
    /// `using namespace` can make it visible), or a member of a class that one of those
    /// scopes derives from. A member of an unrelated class never: ThunderKittens' functions
    /// declare `using T = typename RV::dtype;` in their bodies, and a lookup of that `T`
    /// walked every class's member `T` (112 million steps, most of its check); its
    /// `tma::cluster::wait(...)` named the namespace `kittens::tma::cluster`, not the struct
    /// `kittens::group::tma::cluster`, and the barrier it waits on was missed.
    fn member_visible(&self, q: &str, name: &str, scope: &Scope) -> bool {
        let Some(container) = q
            .strip_suffix(name)
            .and_then(|p| p.strip_suffix("::"))
            .filter(|p| !p.is_empty())
        else {
            return true;
        };
        if !self.is_class(container) {
            return true;
        }
        let derived = self.derived_from(container);
        scope.scopes.iter().any(|s| derived.contains(s))
    }

    /// What the type written `text` denotes from `scope`.
    pub(crate) fn resolve_type(&self, text: &str, scope: &Scope) -> TypeRes {
        self.resolve_type_at(text, scope, 0)
    }

    /// Makes function nodes members of the class whose body includes their header
    /// (`struct group { #include "memory.cuh" };`: `memory.cuh`'s `load` is `group::load`):
    /// found as the class's methods, by the qualified name, and looking names up from the
    /// class (its members first, its template parameters, its enclosing namespaces). Only a
    /// function the header defines at its top level (a plain name, no class of its own).
    pub(crate) fn set_included_members(
        &mut self,
        members: impl IntoIterator<Item = (usize, String)>,
    ) {
        for (n, class) in members {
            let f = self.funcs[n];
            let c = norm(&class);
            // (A method's qualified name holds its class: `S::m`.)
            if f.qualified_name.contains("::") || !self.is_class(&c) {
                continue;
            }
            self.methods
                .entry((c.clone(), f.name.as_str()))
                .or_default()
                .push(n);
            self.by_qname
                .entry(format!("{c}::{}", f.name))
                .or_default()
                .push(n);
            self.member_of[n] = Some(c.clone());
            self.included_in.insert(n, c);
        }
    }

    /// Records the classes whose bodies include a header (see [`Index::open_classes`]).
    pub(crate) fn set_open_classes(&mut self, classes: impl IntoIterator<Item = String>) {
        self.open_classes
            .extend(classes.into_iter().map(|c| norm(&c)));
    }

    /// Records the unit's file-scope variables (`(name, type, pointer)`, every file's).
    pub(crate) fn set_globals(
        &mut self,
        globals: impl IntoIterator<Item = &'f (String, String, bool)>,
    ) {
        for (name, ty, ptr) in globals {
            let v = Some((ty.as_str(), *ptr));
            match self.globals.get(name.as_str()) {
                None => {
                    self.globals.insert(name.as_str(), v);
                }
                Some(old) if *old != v => {
                    self.globals.insert(name.as_str(), None);
                }
                Some(_) => {}
            }
        }
    }

    /// The class type of file-scope variable `name` seen from `scope` (not when a local or
    /// parameter of the caller has that name, or the variable is a pointer or reference).
    fn global_type(&self, name: &str, scope: &Scope) -> Option<TypeRes> {
        if scope.locals.iter().any(|l| l == name) {
            return None;
        }
        let (ty, ptr) = (*self.globals.get(name)?)?;
        if ptr {
            return None;
        }
        match self.resolve_written(ty, scope) {
            t @ TypeRes::Classes(_) => Some(t),
            _ => None,
        }
    }

    /// Records the unit's namespace aliases (`(alias, namespace)` pairs, every file's); the
    /// first definition of an alias wins.
    pub(crate) fn set_namespace_aliases<'a>(
        &mut self,
        aliases: impl IntoIterator<Item = &'a (String, String)>,
    ) {
        for (a, t) in aliases {
            let t = norm(t);
            if !t.is_empty() && *a != t {
                self.ns_aliases.entry(a.clone()).or_insert(t);
            }
        }
    }

    /// `q` (normalised) with a leading namespace alias replaced by its namespace (`L::f` ->
    /// `lib::f`), aliases of aliases too.
    fn unalias(&self, q: &str) -> String {
        let mut q = q.to_string();
        if self.ns_aliases.is_empty() {
            return q;
        }
        for _ in 0..8 {
            let (head, rest) = match q.split_once("::") {
                Some((h, r)) => (h, Some(r)),
                None => (q.as_str(), None),
            };
            let Some(t) = self.ns_aliases.get(head) else {
                break;
            };
            q = match rest {
                Some(r) => format!("{t}::{r}"),
                None => t.clone(),
            };
        }
        q
    }

    fn resolve_type_at(&self, text: &str, scope: &Scope, depth: usize) -> TypeRes {
        let (within, _walk) = type_step();
        if depth > MAX_DEPTH || !within {
            type_cut();
            return TypeRes::Unknown;
        }
        let h = memo_hash(text, scope);
        let exact = self.exact_types.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(r) = memo_get(&exact, h, text, scope) {
            return r;
        }
        drop(exact);
        if let Some(r) = WALK_MEMO.with(|m| memo_get(&m.borrow(), h, text, scope)) {
            type_cut();
            return r;
        }
        let cuts = type_cuts();
        let r = self.resolve_type_walk(text, scope, depth);
        let entry = (text.to_string(), TypeScope::of(scope), r.clone());
        if type_cuts() == cuts {
            let mut exact = self.exact_types.lock().unwrap_or_else(|p| p.into_inner());
            exact.entry(h).or_default().push(entry);
        } else {
            WALK_MEMO.with(|m| m.borrow_mut().entry(h).or_default().push(entry));
        }
        r
    }

    fn resolve_type_walk(&self, text: &str, scope: &Scope, depth: usize) -> TypeRes {
        let simple = !text.is_empty()
            && text
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b':');
        let base = if simple {
            if matches!(text, "auto" | "decltype") {
                return TypeRes::Unknown;
            }
            norm(text)
        } else {
            let Some(t) = frontend::types::normal_type(text) else {
                return TypeRes::Unknown;
            };
            norm(&t)
        };
        if base.is_empty() {
            return TypeRes::Unknown;
        }
        let base = if base.contains("::") {
            self.unalias(&base)
        } else {
            base
        };
        if !base.contains("::") && scope.params.contains(&base) {
            if let Some((_, t)) = scope.bound.iter().find(|(p, _)| *p == base) {
                return t.clone();
            }
            return TypeRes::Param(base);
        }
        // `T::type`, `typename T::value_type`: a member of a parameter.
        if let Some((head, _)) = base.split_once("::") {
            if scope.params.iter().any(|p| p == head) {
                return TypeRes::Unknown;
            }
        }
        let mut found = self.lookup_type(&base, scope);
        if found.is_empty() {
            // `warpgroup::tma::cluster` with `using warpgroup = group<4>;`: a member of the
            // class its head denotes (the shortest head that is a class: `lib::warpgroup` in
            // `lib::warpgroup::sync`).
            let seps: Vec<usize> = base.match_indices("::").map(|(i, _)| i).collect();
            for i in seps {
                let (head, rest) = (&base[..i], &base[i + 2..]);
                if head.is_empty() {
                    continue;
                }
                if let TypeRes::Classes(cs) = self.resolve_type_at(head, scope, depth + 1) {
                    for c in cs {
                        let key = format!("{c}::{rest}");
                        if self.types.contains_key(&key) && !found.contains(&key) {
                            found.push(key);
                        }
                    }
                    break;
                }
            }
        }
        if found.is_empty() {
            if is_builtin_type(&base) || base.split_whitespace().count() > 1 {
                return TypeRes::NotClass;
            }
            return TypeRes::Unknown;
        }
        let mut classes = Vec::new();
        let mut unknown = false;
        let mut not_class = false;
        for q in found {
            for def in self.types.get(&q).into_iter().flatten() {
                match def.kind {
                    TypeKind::Class => {
                        if !classes.contains(&q) {
                            classes.push(q.clone());
                        }
                    }
                    TypeKind::Enum => not_class = true,
                    TypeKind::Alias => {
                        let mut s = self.scope_of_type(&q, def);
                        self.bind_written_class(text, &q, scope, depth, &mut s);
                        // `using Welford = Welford<T, N>;` in a class: the right side names
                        // the enclosing scope's `Welford`, not the alias itself.
                        if let (Some((holder, own)), Some(a)) =
                            (q.rsplit_once("::"), def.aliased.as_deref())
                        {
                            let head = a.trim_start_matches("typename ").trim_start();
                            let head = head
                                .split(|ch: char| !(ch.is_alphanumeric() || ch == '_'))
                                .next()
                                .unwrap_or_default();
                            if head == own {
                                s.scopes.retain(|x| x != holder);
                            }
                        }
                        match def
                            .aliased
                            .as_deref()
                            .map(|a| self.resolve_type_at(a, &s, depth + 1))
                        {
                            Some(TypeRes::Classes(cs)) => {
                                for c in cs {
                                    if !classes.contains(&c) {
                                        classes.push(c);
                                    }
                                }
                            }
                            Some(TypeRes::NotClass) => not_class = true,
                            _ => unknown = true,
                        }
                    }
                }
            }
        }
        if !classes.is_empty() {
            classes.sort();
            TypeRes::Classes(classes)
        } else if unknown {
            TypeRes::Unknown
        } else if not_class {
            TypeRes::NotClass
        } else {
            TypeRes::Unknown
        }
    }

    /// For a member alias of a class template written with arguments (`Ident<SyncOp>::type`,
    /// `typename Traits<float>::acc_t`): the class's template parameters bound, in `s` (the
    /// alias's scope), to what the arguments denote from `scope`.
    fn bind_written_class(&self, text: &str, q: &str, scope: &Scope, depth: usize, s: &mut Scope) {
        let Some((class_q, _)) = q.rsplit_once("::") else {
            return;
        };
        let segs = split_segments(text);
        let Some(class_seg) = segs.len().checked_sub(2).map(|i| segs[i]) else {
            return;
        };
        for (p, r) in self.bind_arguments(class_q, class_seg, true, scope, depth) {
            s.params.push(p.clone());
            s.bound.push((p, r));
        }
    }

    /// The template parameters of class template `class` paired with what the arguments
    /// written in `seg` (`Box<Sync, 4>`) denote from `scope`, in order; with `exact`, only for
    /// a definition with as many parameters as arguments (else the leading parameters).
    fn bind_arguments(
        &self,
        class: &str,
        seg: &str,
        exact: bool,
        scope: &Scope,
        depth: usize,
    ) -> Vec<(String, TypeRes)> {
        let args = template_args(seg);
        if args.is_empty() {
            return Vec::new();
        }
        let fits = |n: usize| {
            if exact {
                n == args.len()
            } else {
                n >= args.len()
            }
        };
        let Some(def) = self.types.get(class).and_then(|d| {
            d.iter()
                .find(|d| d.kind == TypeKind::Class && fits(d.template_params.len()))
        }) else {
            return Vec::new();
        };
        def.template_params
            .iter()
            .zip(&args)
            .map(|(p, a)| (p.clone(), self.resolve_type_at(a, scope, depth + 1)))
            .collect()
    }

    /// The member functions named `name` of class `class` or of its bases (nearest first), and
    /// whether every base is visible (`false`: an unknown base may hold it).
    pub(crate) fn methods(&self, class: &str, name: &str) -> (Vec<usize>, bool) {
        let mut out = Vec::new();
        let complete = self.methods_at(class, name, 0, &mut Bases::default(), &mut out);
        (out, complete)
    }

    fn methods_at(
        &self,
        class: &str,
        name: &str,
        depth: usize,
        seen: &mut Bases,
        out: &mut Vec<usize>,
    ) -> bool {
        if depth > MAX_DEPTH {
            return false;
        }
        if let Some(v) = self.methods.get(&(class.to_string(), name)) {
            out.extend(v.iter().copied());
            return true;
        }
        if !seen.first_visit(class, depth) {
            return true; // what it holds is already in `out`
        }
        let mut complete = true;
        for def in self.types.get(class).into_iter().flatten() {
            if def.kind != TypeKind::Class || def.bases.is_empty() {
                continue;
            }
            let s = self.scope_of_type(class, def);
            for b in &def.bases {
                match self.resolve_type_at(b, &s, depth + 1) {
                    TypeRes::Classes(cs) => {
                        for c in cs {
                            if c != class {
                                complete &= self.methods_at(&c, name, depth + 1, seen, out);
                            }
                        }
                    }
                    _ => complete = false,
                }
            }
        }
        complete
    }

    /// The declared type of data member `name` of `class` (or of a base), with the scope to
    /// read it in.
    fn field_type(&self, class: &str, name: &str, depth: usize) -> Option<(String, Scope)> {
        self.field_type_at(class, name, depth, &mut Bases::default())
    }

    fn field_type_at(
        &self,
        class: &str,
        name: &str,
        depth: usize,
        seen: &mut Bases,
    ) -> Option<(String, Scope)> {
        if depth > MAX_DEPTH || !seen.first_visit(class, depth) {
            return None;
        }
        for def in self.types.get(class).into_iter().flatten() {
            if def.kind != TypeKind::Class {
                continue;
            }
            if let Some(f) = def.fields.iter().find(|f| f.name == name) {
                return Some((f.type_text.clone(), self.scope_of_type(class, def)));
            }
            if def.bases.is_empty() {
                continue;
            }
            let s = self.scope_of_type(class, def);
            for b in &def.bases {
                if let TypeRes::Classes(cs) = self.resolve_type_at(b, &s, depth + 1) {
                    for c in cs {
                        if let Some(x) = self.field_type_at(&c, name, depth + 1, seen) {
                            return Some(x);
                        }
                    }
                }
            }
        }
        None
    }

    /// The constructors (or, with `dtor`, destructors) a `class` object runs: its own, its
    /// bases' and its class-typed data members' (bounded).
    fn lifetime(&self, class: &str, dtor: bool, depth: usize, out: &mut Vec<usize>) {
        self.lifetime_of(class, &[], dtor, depth, out);
    }

    /// [`Index::lifetime`] of an object of class template `class` whose parameters are
    /// `bound` (`Box<Sync>`: `T` bound to `Sync`; a data member `T v;` is a `Sync`).
    fn lifetime_of(
        &self,
        class: &str,
        bound: &[(String, TypeRes)],
        dtor: bool,
        depth: usize,
        out: &mut Vec<usize>,
    ) {
        if depth > 2 {
            return;
        }
        let leaf = class.rsplit("::").next().unwrap_or(class);
        let name = if dtor {
            format!("~{leaf}")
        } else {
            leaf.to_string()
        };
        if let Some(v) = self.methods.get(&(class.to_string(), name.as_str())) {
            out.extend(v.iter().copied());
        }
        for (c, b) in self.parts(class, bound, true, depth) {
            self.lifetime_of(&c, &b, dtor, depth + 1, out);
        }
    }

    /// The classes a `class` object is made of: its bases and, with `members`, the classes of
    /// its data members held by value (each resolved where the class is defined, its template
    /// parameters `bound`), each with its own template parameters bound to the arguments
    /// written (`Box<Sync> s;`); never itself.
    fn parts(
        &self,
        class: &str,
        bound: &[(String, TypeRes)],
        members: bool,
        depth: usize,
    ) -> Parts {
        let key = (class.to_string(), bound.to_vec(), members, depth);
        let memo = self.parts_memo.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(v) = memo.get(&key) {
            return v.clone();
        }
        drop(memo);
        let out = self.parts_walk(class, bound, members, depth);
        let mut memo = self.parts_memo.lock().unwrap_or_else(|p| p.into_inner());
        memo.entry(key).or_insert_with(|| out.clone());
        out
    }

    fn parts_walk(
        &self,
        class: &str,
        bound: &[(String, TypeRes)],
        members: bool,
        depth: usize,
    ) -> Parts {
        #[cfg(test)]
        PARTS_WALKS.with(|n| n.set(n.get() + 1));
        let mut out = Vec::new();
        for def in self.types.get(class).into_iter().flatten() {
            if def.kind != TypeKind::Class {
                continue;
            }
            let mut s = self.scope_of_type(class, def);
            s.bound = bound.to_vec();
            let fields = def
                .fields
                .iter()
                .filter(|f| members && !f.is_pointer_or_ref)
                .map(|f| &f.type_text);
            for t in def.bases.iter().chain(fields) {
                if let TypeRes::Classes(cs) = self.resolve_type_at(t, &s, depth + 1) {
                    for c in cs.into_iter().filter(|c| c != class) {
                        let b = self.written_binding(t, &c, &s, depth + 1);
                        out.push((c, b));
                    }
                }
            }
        }
        out
    }

    /// What the template arguments written in `written` (`lib::Box<Sync, 4>`) bind the
    /// parameters of class template `class` to, seen from `scope`: the arguments that denote
    /// classes (what constructors and destructors of members of those types need).
    fn written_binding(
        &self,
        written: &str,
        class: &str,
        scope: &Scope,
        depth: usize,
    ) -> Vec<(String, TypeRes)> {
        let Some(last) = frontend::types::normal_type(written)
            .map(|t| split_segments(&t).last().map(|l| l.to_string()))
            .unwrap_or_default()
        else {
            return Vec::new();
        };
        self.bind_arguments(class, &last, false, scope, depth)
            .into_iter()
            .filter(|(_, r)| matches!(r, TypeRes::Classes(_)))
            .collect()
    }

    /// The copy and move constructors of `class` (a constructor taking one object of the
    /// class: `G(const G&)`, `G(G&&)`), and those of its bases and data members (an implicit
    /// copy copies them): what passing or initialising from an object by value may run.
    fn copies(&self, class: &str, depth: usize, out: &mut Vec<usize>) {
        if depth > 2 {
            return;
        }
        let leaf = class.rsplit("::").next().unwrap_or(class);
        for &j in self
            .methods
            .get(&(class.to_string(), leaf))
            .into_iter()
            .flatten()
        {
            let one_of_its_own = match &self.funcs[j].params[..] {
                [p] => frontend::types::normal_type(&p.type_text)
                    .is_some_and(|t| type_leaf(&t) == leaf),
                _ => false,
            };
            if one_of_its_own {
                out.push(j);
            }
        }
        for (c, _) in self.parts(class, &[], true, depth) {
            self.copies(&c, depth + 1, out);
        }
    }

    /// The conversion operators of `class` (`operator T*`), its bases' included.
    fn conversions(&self, class: &str, out: &mut Vec<usize>) {
        self.conversions_at(class, 0, &mut Bases::default(), out);
    }

    fn conversions_at(&self, class: &str, depth: usize, seen: &mut Bases, out: &mut Vec<usize>) {
        if depth > MAX_DEPTH || !seen.first_visit(class, depth) {
            return;
        }
        for def in self.types.get(class).into_iter().flatten() {
            for m in def.methods.iter().filter(|m| m.starts_with("operator ")) {
                if let Some(v) = self.methods.get(&(class.to_string(), m.as_str())) {
                    out.extend(v.iter().copied());
                }
            }
        }
        for (c, _) in self.parts(class, &[], false, depth) {
            self.conversions_at(&c, depth + 1, seen, out);
        }
    }

    /// A receiver's type as the lowering wrote it: a type, or the result of the unit's
    /// functions of that name (`auto w = make_warp();` records `make_warp`): the classes they
    /// return when every one returns a class of the unit, else unknown.
    fn resolve_written(&self, t: &str, scope: &Scope) -> TypeRes {
        let r = self.resolve_type(t, scope);
        if r != TypeRes::Unknown {
            return r;
        }
        let bare = strip_args(t);
        let (qualifier, leaf) = match bare.rsplit_once("::") {
            Some((q, l)) => (Some(q.trim_start_matches("::")), l),
            None => (None, bare.as_str()),
        };
        let mut classes = Vec::new();
        let mut any = false;
        for j in self.free_functions(leaf) {
            let f = self.funcs[j];
            if let Some(q) = qualifier {
                let fq = norm(&f.qualified_name);
                if !fq.ends_with(&format!("{q}::{leaf}")) {
                    continue;
                }
            }
            any = true;
            let Some(rt) = f.return_type.as_deref() else {
                return TypeRes::Unknown;
            };
            match self.resolve_type(rt, &self.scope_of(j)) {
                TypeRes::Classes(cs) => classes.extend(cs),
                _ => return TypeRes::Unknown,
            }
        }
        if !any {
            return TypeRes::Unknown;
        }
        classes.sort();
        classes.dedup();
        TypeRes::Classes(classes)
    }

    /// The static type of a call's receiver, from function node `n`'s view: what the lowering
    /// wrote (`Call::receiver_type`), else a data member of its class (`red.f()`,
    /// `this->red.f()`).
    fn receiver(&self, scope: &Scope, c: &Call) -> TypeRes {
        if let Some(t) = &c.receiver_type {
            return self.resolve_written(t, scope);
        }
        let Some(r) = c.receiver.as_deref() else {
            return TypeRes::Unknown;
        };
        let r = r.trim();
        let member = r
            .strip_prefix("this->")
            .or_else(|| r.strip_prefix("(*this)."))
            .unwrap_or(r);
        let plain = !member.is_empty()
            && member
                .chars()
                .all(|ch| ch.is_ascii_alphanumeric() || ch == '_');
        let field = match (&scope.class, plain) {
            (Some(class), true) => self.field_type(class, member, 0).map(|(t, s)| {
                let mut s = s;
                s.params.extend(scope.params.iter().cloned());
                s.bound.extend(scope.bound.iter().cloned());
                self.resolve_type(&t, &s)
            }),
            _ => None,
        };
        // A file-scope object (`g_red.reduce(x)`), unless a member hides it.
        let on_this = member.len() != r.len();
        field
            .or_else(|| {
                (plain && !on_this)
                    .then(|| self.global_type(member, scope))
                    .flatten()
            })
            .unwrap_or(TypeRes::Unknown)
    }

    /// A call of data member `name` of `class` (seen from `scope`) that holds a callable: its
    /// type's `operator()` (a functor class, a bound template parameter, a lambda, functions);
    /// `None` when `class` has no such member or its type is not known here.
    fn field_call(
        &self,
        scope: &Scope,
        class: &str,
        name: &str,
        out: &mut Vec<usize>,
    ) -> Option<Outcome> {
        let (t, mut s) = self.field_type(class, name, 0)?;
        s.params.extend(scope.params.iter().cloned());
        s.bound.extend(scope.bound.iter().cloned());
        match self.resolve_type(&t, &s) {
            t @ (TypeRes::Classes(_)
            | TypeRes::Param(_)
            | TypeRes::Lambda(_)
            | TypeRes::Functions(_)) => Some(match self.call_on(&t, "operator()", out) {
                // A variable is never listed as unresolved.
                Outcome::Unresolved => Outcome::NotACall,
                o => o,
            }),
            TypeRes::NotClass | TypeRes::Unknown => None,
        }
    }

    /// True when method call `c` names a data member rather than a method: of its receiver's
    /// class (or a base) where the type is known, of any class of the unit where it is not
    /// (`ops.apply(x)` for `struct Ops { op_t apply; }`). What [`Index::call`] left unresolved
    /// there is a call of a pointer the member holds.
    pub(crate) fn held_by_member(&self, scope: &Scope, c: &Call) -> bool {
        if c.form != CallForm::Method || !self.field_names.contains(c.callee.as_str()) {
            return false;
        }
        match self.receiver(scope, c) {
            TypeRes::Classes(cs) => cs
                .iter()
                .any(|class| self.field_type(class, &c.callee, 0).is_some()),
            TypeRes::Unknown | TypeRes::Param(_) => true,
            _ => false,
        }
    }

    /// The methods named `name` of the classes of `t`, or by name when `t` is not known.
    fn call_on(&self, t: &TypeRes, name: &str, out: &mut Vec<usize>) -> Outcome {
        match t {
            TypeRes::Classes(cs) => {
                let mut complete = true;
                for c in cs {
                    let (v, comp) = self.methods(c, name);
                    out.extend(v);
                    complete &= comp;
                    // Through a pointer or reference the object may be of a derived class
                    // that overrides it (a `virtual` method): its overriders too.
                    for d in self.derived_from(c) {
                        out.extend(self.methods.get(&(d, name)).into_iter().flatten().copied());
                    }
                }
                out.sort_unstable();
                out.dedup();
                if !out.is_empty() {
                    Outcome::Resolved
                } else if cs.iter().any(|c| self.open_classes.contains(c)) {
                    // A member from the header its body includes: every function of that
                    // name (the header's parse names them as free functions).
                    out.extend(self.named(name).iter().copied());
                    if out.is_empty() {
                        Outcome::Unresolved
                    } else {
                        Outcome::ByName
                    }
                } else if complete {
                    Outcome::Unresolved
                } else {
                    self.members_named(name, out)
                }
            }
            TypeRes::NotClass => Outcome::Unresolved,
            TypeRes::Lambda(l) if name == "operator()" => {
                out.push(self.lambda_base + l);
                Outcome::Resolved
            }
            TypeRes::Lambda(_) => Outcome::Resolved,
            TypeRes::Functions(v) => {
                if name == "operator()" {
                    out.extend(v.iter().copied());
                }
                Outcome::Resolved
            }
            TypeRes::Param(_) | TypeRes::Unknown => self.members_named(name, out),
        }
    }

    /// Every member function named `name` (a method call whose receiver's type is unknown).
    fn members_named(&self, name: &str, out: &mut Vec<usize>) -> Outcome {
        let before = out.len();
        out.extend(
            self.named(name)
                .iter()
                .copied()
                .filter(|&j| self.is_member(j)),
        );
        if out.len() > before {
            Outcome::ByName
        } else {
            Outcome::Unresolved
        }
    }

    /// The function nodes call `c` of a function whose scope is `scope` may reach (local
    /// callables aside: the caller looks them up first), and how they were found. Where the
    /// call names its class with template arguments (`Traits<float>::Reducer r; r.run(x)`,
    /// `Box<int>::get()`, an unqualified call in a member of a specialisation), the members of
    /// the specialisations it cannot be are left out (see [`Index::specialise`]).
    pub(crate) fn call(&self, scope: &Scope, c: &Call, out: &mut Vec<usize>) -> Outcome {
        let from = out.len();
        let o = self.call_unspecialised(scope, c, out);
        let on_this = || {
            c.receiver
                .as_deref()
                .is_none_or(|r| matches!(r.trim(), "this" | "(*this)"))
        };
        let written = match c.form {
            CallForm::Plain => c.qualifier.as_deref().or(scope.written_class.as_deref()),
            CallForm::Method if c.receiver_type.is_none() && on_this() => {
                scope.written_class.as_deref()
            }
            CallForm::Indirect => None,
            _ => c.receiver_type.as_deref(),
        };
        if let Some(w) = written.and_then(|w| self.with_arguments(w, scope)) {
            self.specialise(&w, out, from);
        }
        o
    }

    /// The class written `w` with its template arguments: `w` itself when it has some, else
    /// what the alias it names stands for (`using R = Traits<float>::Reducer;`, aliases of
    /// aliases), where that has some; `None` otherwise.
    fn with_arguments(&self, w: &str, scope: &Scope) -> Option<String> {
        let mut w = w.trim().to_string();
        let mut inner: Option<Scope> = None;
        for _ in 0..MAX_DEPTH {
            if w.contains('<') {
                return Some(w);
            }
            let found = self.lookup_type(&norm(&w), inner.as_ref().unwrap_or(scope));
            let [q] = found.as_slice() else {
                return None;
            };
            let [def] = self.types.get(q)?.as_slice() else {
                return None;
            };
            if def.kind != TypeKind::Alias {
                return None;
            }
            inner = Some(self.scope_of_type(q, def));
            w = def.aliased.clone()?;
        }
        None
    }

    /// Leaves out of `out[from..]` the members of specialisations that the class written `w`
    /// (`ns::Traits<float>::Reducer`) cannot be: the classes named alike, right to left, whose
    /// template arguments differ from `w`'s in a place where both are certain (built-in types,
    /// integer literals: `Traits<int>` is not `Traits<float>`; `Traits<real_t>` may be), and,
    /// where an explicit specialisation's arguments are exactly `w`'s, every other member of
    /// that template (the primary's, a partial specialisation's). Nothing is left out when it
    /// would leave none, or when a class of that name derives from its own template (its
    /// members may be inherited from another specialisation).
    fn specialise(&self, w: &str, out: &mut Vec<usize>, from: usize) {
        if out.len() <= from + 1 {
            return;
        }
        let wsegs: Vec<NamePart> = split_segments(w).iter().map(|s| NamePart::of(s)).collect();
        for seg in &wsegs {
            let self_derived = self.type_by_name.get(seg.bare.as_str()).is_some_and(|qs| {
                qs.iter().any(|q| {
                    self.types[q]
                        .iter()
                        .any(|d| d.bases.iter().any(|b| type_leaf(b) == d.name))
                })
            });
            if self_derived {
                return;
            }
        }
        // Per candidate: `None` when it cannot be a member of `w`; else, for each of `w`'s
        // names right to left that its own names match, whether the arguments there are
        // exactly `w`'s (a lambda node matches none: kept).
        let places = |n: usize| -> Option<Vec<bool>> {
            let Some(f) = self.funcs.get(n) else {
                return Some(Vec::new());
            };
            let class = self.class_names[n]
                .get_or_init(|| {
                    #[cfg(test)]
                    CLASS_NAME_READS.with(|n| n.set(n.get() + 1));
                    let q = f.specialised_name.as_deref().unwrap_or(&f.qualified_name);
                    let csegs = split_segments(q);
                    let (_, class) = csegs.split_last()?;
                    Some(class.iter().map(|c| NamePart::of(c)).collect())
                })
                .as_ref()?;
            let mut v = Vec::new();
            for (ws, cs) in wsegs.iter().rev().zip(class.iter().rev()) {
                if ws.bare != cs.bare {
                    break;
                }
                let (wa, ca) = (&ws.args, &cs.args);
                if wa.len() == ca.len() && wa.iter().zip(ca).any(|(a, b)| a.differs(b)) {
                    return None; // cannot be this class
                }
                let exact = !wa.is_empty()
                    && wa.len() == ca.len()
                    && wa.iter().zip(ca).all(|(a, b)| a.same_exactly(b));
                v.push(exact);
            }
            Some(v)
        };
        let seen: Vec<Option<Vec<bool>>> = out[from..].iter().map(|&n| places(n)).collect();
        let mut keep: Vec<bool> = seen.iter().map(Option::is_some).collect();
        for k in 0..wsegs.len() {
            let exact_at = |p: &Option<Vec<bool>>| p.as_ref().and_then(|v| v.get(k).copied());
            if seen.iter().any(|p| exact_at(p) == Some(true)) {
                for (i, p) in seen.iter().enumerate() {
                    if exact_at(p) == Some(false) {
                        keep[i] = false;
                    }
                }
            }
        }
        if !keep.iter().any(|&k| k) {
            return;
        }
        let mut i = 0;
        out.retain(|_| {
            let pos = i;
            i += 1;
            pos < from || keep[pos - from]
        });
    }

    fn call_unspecialised(&self, scope: &Scope, c: &Call, out: &mut Vec<usize>) -> Outcome {
        match c.form {
            CallForm::Construct | CallForm::Destroy => {
                let ty = c.receiver_type.as_deref().unwrap_or(&c.callee);
                if let TypeRes::Classes(cs) = self.resolve_type(ty, scope) {
                    for class in cs {
                        let bound = self.written_binding(ty, &class, scope, 0);
                        self.lifetime_of(&class, &bound, c.form == CallForm::Destroy, 0, out);
                    }
                }
                // Never unresolved: most local objects have implicit constructors.
                Outcome::Resolved
            }
            CallForm::Temporary => {
                let t = c
                    .receiver_type
                    .as_deref()
                    .map_or(TypeRes::Unknown, |t| self.resolve_type(t, scope));
                self.call_on(&t, "operator()", out)
            }
            CallForm::Variable => {
                // A pointer parameter of a plain function, bound by the call to the function
                // passed (`apply(local_plain, s)` for `apply(void (*f)(float*), ...)`).
                let pointer = scope.bound_as("ptr@", &c.callee);
                // A parameter declared `auto` (an abbreviated template): what the call binds,
                // else a template parameter no call binds.
                let auto = || {
                    scope.bound_as("auto@", &c.callee).or_else(|| {
                        scope
                            .auto_params
                            .contains(&c.callee)
                            .then(|| TypeRes::Param(format!("auto@{}", c.callee)))
                    })
                };
                let t = pointer.or_else(auto).unwrap_or_else(|| {
                    c.receiver_type
                        .as_deref()
                        .map_or(TypeRes::Unknown, |t| self.resolve_written(t, scope))
                });
                match t {
                    // A variable is never listed as unresolved: its class's `operator()` is
                    // what is called.
                    TypeRes::Classes(_)
                    | TypeRes::Param(_)
                    | TypeRes::Lambda(_)
                    | TypeRes::Functions(_) => match self.call_on(&t, "operator()", out) {
                        Outcome::Unresolved => Outcome::NotACall,
                        o => o,
                    },
                    // A function pointer, a lambda, or a variable shadowing a function's
                    // name (`float max = max(a, b)`): the caller's callables, else the name.
                    _ => match self.plain(scope, c, out) {
                        Outcome::Unresolved => Outcome::NotACall,
                        o => o,
                    },
                }
            }
            CallForm::Method => {
                let t = self.receiver(scope, c);
                let o = self.call_on(&t, &c.callee, out);
                if o != Outcome::Unresolved {
                    return o;
                }
                // A data member holding a callable: `p.op(x)`, `this->op(x)`.
                let on_this = c
                    .receiver
                    .as_deref()
                    .is_some_and(|r| matches!(r.trim(), "this" | "(*this)"));
                let unknown = matches!(t, TypeRes::Unknown | TypeRes::Param(_));
                let classes: Vec<String> = match t {
                    TypeRes::Classes(cs) => cs,
                    _ if on_this => scope.class.clone().into_iter().collect(),
                    _ => Vec::new(),
                };
                let mut found = None;
                for class in &classes {
                    if let Some(o) = self.field_call(scope, class, &c.callee, out) {
                        found = Some(o);
                    }
                }
                // A data member (of some class of the unit) of an object whose type is not
                // known here (`p.op(x)` for `P p` bound to `Params<SyncOp>` by a host launch):
                // it may hold any functor, by name.
                if found.is_none()
                    && unknown
                    && !on_this
                    && self.field_names.contains(c.callee.as_str())
                {
                    found = Some(self.members_named("operator()", out));
                }
                found.unwrap_or(Outcome::Unresolved)
            }
            CallForm::Range => self.range(scope, c, out),
            CallForm::Convert | CallForm::Operator => self.operator(scope, c, out),
            CallForm::Plain => self.plain(scope, c, out),
            // What it may call is every escaped function (the call graph adds them).
            CallForm::Indirect => Outcome::Unresolved,
        }
    }

    /// An operator applied to a class-typed local ([`CallForm::Operator`]): the class's
    /// operator (its bases' too) or a free operator of the unit that takes the class; when
    /// there is neither and the operator is no assignment, the built-in one applies to what a
    /// conversion operator makes of the object (`c + 1.f`). A conversion
    /// ([`CallForm::Convert`]): the class's conversion operators. Never by name, never
    /// unresolved (most operators are built in, most classes convert nothing).
    fn operator(&self, scope: &Scope, c: &Call, out: &mut Vec<usize>) -> Outcome {
        let classes = match c
            .receiver_type
            .as_deref()
            .map(|t| self.resolve_written(t, scope))
        {
            Some(TypeRes::Classes(cs)) => cs,
            _ => Vec::new(),
        };
        let op = c.callee.as_str();
        let assigns = (op.ends_with('=')
            && !matches!(
                op,
                "operator==" | "operator!=" | "operator<=" | "operator>="
            ))
            || matches!(op, "operator++" | "operator--");
        for class in &classes {
            if c.form == CallForm::Convert {
                self.conversions(class, out);
                self.copies(class, 0, out);
                continue;
            }
            let before = out.len();
            out.extend(self.methods(class, op).0);
            let leaf = class.rsplit("::").next().unwrap_or(class);
            out.extend(self.free_functions(op).filter(|&j| {
                self.funcs[j].params.iter().any(|p| {
                    frontend::types::normal_type(&p.type_text).is_some_and(|t| {
                        let t = norm(&t);
                        t.rsplit("::").next() == Some(leaf)
                    })
                })
            }));
            if out.len() == before && !assigns {
                self.conversions(class, out);
            }
        }
        out.sort_unstable();
        out.dedup();
        if out.is_empty() {
            Outcome::NotACall
        } else {
            Outcome::Resolved
        }
    }

    /// A range-for's calls on its range ([`CallForm::Range`]): the range type's `begin` and
    /// `end`, and on the class each `begin` returns (the iterator) its `++`, `*`, `->`, `!=`,
    /// `==`, constructors and destructor; by name (`begin`/`end` of every class) when the
    /// range's type is not known; none for an array.
    fn range(&self, scope: &Scope, c: &Call, out: &mut Vec<usize>) -> Outcome {
        let t = self.receiver(scope, c);
        if t == TypeRes::NotClass {
            return Outcome::NotACall;
        }
        let mut begins = Vec::new();
        let found = self.call_on(&t, "begin", &mut begins);
        let _ = self.call_on(&t, "end", out);
        for &j in &begins {
            let Some(rt) = self.funcs[j].return_type.as_deref() else {
                continue;
            };
            let mut s = self.scope_of(j);
            s.bound.extend(scope.bound.iter().cloned());
            if let TypeRes::Classes(cs) = self.resolve_type(rt, &s) {
                for class in cs {
                    for op in [
                        "operator++",
                        "operator*",
                        "operator->",
                        "operator!=",
                        "operator==",
                    ] {
                        out.extend(self.methods(&class, op).0);
                    }
                    self.lifetime(&class, false, 0, out);
                    self.lifetime(&class, true, 0, out);
                }
            }
        }
        out.extend(begins);
        out.sort_unstable();
        out.dedup();
        match found {
            Outcome::Unresolved if !out.is_empty() => Outcome::Resolved,
            o => o,
        }
    }

    /// The template parameters of function node `j` that call `c` (in `caller`, whose scope
    /// is `scope`) binds to classes of the unit: explicit template arguments (`f<Op>(...)`),
    /// deduced from an argument that is a variable of a known type (`apply(hs, s)` for
    /// `apply(F f, ...)`), and a class template's parameters from the receiver's or the
    /// qualifier's template arguments (`Block<Warp> b; b.run()`, `S<Warp>::f()`). `None`
    /// when it binds none.
    pub(crate) fn binding(
        &self,
        scope: &Scope,
        caller: usize,
        c: &Call,
        j: usize,
        arg_types: &ArgTypes,
    ) -> Option<Vec<(String, TypeRes)>> {
        let g = self.funcs.get(j)?;
        let caller_fn = self.funcs[caller];
        let argument = |i: usize| -> Option<&Argument> {
            arg_types
                .0
                .get(i)?
                .get_or_init(|| argument_type(caller_fn, c.arg_spans[i], c.span.start))
                .as_ref()
        };
        let class_params: &[String] = match &self.member_of[j] {
            Some(cl) => self
                .types
                .get(cl)
                .and_then(|d| d.iter().find(|t| !t.template_params.is_empty()))
                .map_or(&[], |t| t.template_params.as_slice()),
            None => &[],
        };
        let mut out: Vec<(String, TypeRes)> = Vec::new();
        let mut bind = |p: &str, t: TypeRes| {
            let bindable = matches!(
                t,
                TypeRes::Classes(_) | TypeRes::Lambda(_) | TypeRes::Functions(_)
            );
            if bindable && !out.iter().any(|(q, _)| q == p) {
                out.push((p.to_string(), t));
            }
        };
        if let Some(args) = c.template_args.as_deref() {
            for (p, a) in g.template_params.iter().zip(template_args(args)) {
                match self.resolve_type(&a, scope) {
                    // A function as a non-type argument (`run<step>()`, `run<&step>()`).
                    TypeRes::Unknown | TypeRes::NotClass => {
                        let name = a.trim().trim_start_matches('&').trim();
                        let leaf = name.rsplit("::").next().unwrap_or(name);
                        let v: Vec<usize> = self.named(leaf).to_vec();
                        if !v.is_empty() && !name.contains(['<', '(', ' ']) {
                            bind(p, TypeRes::Functions(v));
                        }
                    }
                    t => bind(p, t),
                }
            }
        }
        // The functions of the unit a function argument names (`step`, `&step`).
        let functions = |name: &str| {
            let v: Vec<usize> = self.free_functions(name).collect();
            (!v.is_empty()).then_some(TypeRes::Functions(v))
        };
        let kinds = self.param_kinds[j].get_or_init(|| param_kinds(g));
        for (i, kind) in kinds.iter().enumerate().take(c.arg_spans.len()) {
            let pt = match kind {
                ParamKind::Bound(pt) => pt,
                ParamKind::Pointer(name) => {
                    if let Some(Argument::Function(f)) = argument(i) {
                        if let Some(t) = functions(f) {
                            bind(name, t);
                        }
                    }
                    continue;
                }
                ParamKind::Neither => continue,
            };
            match argument(i) {
                Some(Argument::Type(t)) => bind(pt, self.resolve_type(t, scope)),
                Some(Argument::Lambda(l)) => {
                    if let Some(&id) = self.lambda_ids.get(&(caller, l.start)) {
                        bind(pt, TypeRes::Lambda(id));
                    }
                }
                Some(Argument::Function(name)) => {
                    if let Some(t) = functions(name) {
                        bind(pt, t);
                    }
                }
                None => {}
            }
        }
        if !class_params.is_empty() {
            let written = match c.form {
                CallForm::Method => c.receiver_type.clone().or_else(|| {
                    let r = c.receiver.as_deref()?.trim();
                    let member = r.strip_prefix("this->").unwrap_or(r);
                    let class = scope.class.as_deref()?;
                    self.field_type(class, member, 0).map(|x| x.0)
                }),
                CallForm::Plain => c.qualifier.clone(),
                _ => c.receiver_type.clone(),
            };
            if let Some(w) = written {
                for (p, a) in class_params.iter().zip(template_args(&w)) {
                    bind(p, self.resolve_type(&a, scope));
                }
            }
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        (!out.is_empty()).then_some(out)
    }

    fn plain(&self, scope: &Scope, c: &Call, out: &mut Vec<usize>) -> Outcome {
        let name = c.callee.as_str();
        if CASTS.contains(&name) || OPERATORS.contains(&name) {
            return Outcome::NotACall;
        }
        if let Some(q) = c.qualifier.as_deref() {
            // `S<T>::f()`, `T::template f<N>()`, `Alias::f()`: a static member; else a
            // namespace function.
            match self.resolve_type(q, scope) {
                t @ TypeRes::Classes(_) => return self.call_on(&t, name, out),
                // `T::value_type(x)`, `T::index_t(i)`: a member type named as one, a cast.
                TypeRes::Param(_) if type_like(name) => return Outcome::NotACall,
                TypeRes::Param(_) => return self.members_named(name, out),
                _ => {}
            }
            let q = self.unalias(&norm(q));
            let key = |s: &str| {
                if s.is_empty() {
                    format!("{q}::{name}")
                } else {
                    format!("{s}::{q}::{name}")
                }
            };
            let global = c
                .qualifier
                .as_deref()
                .is_some_and(|x| x.trim().starts_with("::"));
            let scopes: &[String] = if global { &[] } else { &scope.scopes };
            for s in scopes.iter().map(String::as_str).chain(std::iter::once("")) {
                if let Some(v) = self.by_qname.get(&key(s)) {
                    out.extend(v.iter().copied());
                    return Outcome::Resolved;
                }
            }
            // Through a `using namespace`: any namespace path that ends with it.
            let suffix = format!("::{q}::{name}");
            out.extend(self.named(name).iter().copied().filter(|&j| {
                let fq = norm(&self.funcs[j].qualified_name);
                fq.ends_with(&suffix)
            }));
            if out.is_empty() {
                // A namespace's object (`ns::g_op(x)`): its class's `operator()`.
                if let Some(t) = self.global_type(name, scope) {
                    return match self.call_on(&t, "operator()", out) {
                        Outcome::Unresolved => Outcome::NotACall,
                        o => o,
                    };
                }
            }
            return if out.is_empty() {
                Outcome::Unresolved
            } else {
                Outcome::Resolved
            };
        }
        // A class named as a function: a temporary (its constructor and destructor run, and
        // a conversion operator when it converts: `T* p = SharedMemory<T>();`).
        let as_type =
            if self.type_by_name.contains_key(name) || scope.params.iter().any(|p| p == name) {
                self.resolve_type(name, scope)
            } else if is_builtin_type(name) {
                TypeRes::NotClass
            } else {
                TypeRes::Unknown
            };
        match as_type {
            TypeRes::Classes(cs) => {
                for class in cs {
                    self.lifetime(&class, false, 0, out);
                    self.lifetime(&class, true, 0, out);
                    self.conversions(&class, out);
                }
                return Outcome::Resolved;
            }
            // A template parameter bound to functions (`template <void (*F)()> ... F()` called
            // as `run<step>()`) or to a lambda: a call of them.
            t @ (TypeRes::Lambda(_) | TypeRes::Functions(_))
                if scope.params.iter().any(|p| p == name) =>
            {
                return match self.call_on(&t, "operator()", out) {
                    Outcome::Unresolved => Outcome::NotACall,
                    o => o,
                };
            }
            TypeRes::NotClass | TypeRes::Param(_) | TypeRes::Lambda(_) | TypeRes::Functions(_) => {
                return Outcome::NotACall
            }
            TypeRes::Unknown => {}
        }
        if self.types.contains_key(name) || is_builtin_type(name) || name.ends_with("_t") {
            return Outcome::NotACall;
        }
        // A type of the unit that is no function anywhere (a member alias seen from outside
        // its class, `reference(x)`): a cast or a construction, never an unresolved callee.
        if self.type_by_name.contains_key(name) && self.named(name).is_empty() {
            return Outcome::NotACall;
        }
        // A file-scope object of a class (`__device__ SyncOp g_op; ... g_op(x)`): its
        // `operator()`, unless a member of the caller's class hides it.
        let member_named = scope.class.as_ref().is_some_and(|class| {
            self.field_type(class, name, 0).is_some() || !self.methods(class, name).0.is_empty()
        });
        if !member_named {
            if let Some(t) = self.global_type(name, scope) {
                let o = self.call_on(&t, "operator()", out);
                // A function of that name elsewhere (another namespace) may be the callee
                // instead: both count.
                if self.free_functions(name).next().is_none() {
                    return match o {
                        Outcome::Unresolved => Outcome::NotACall,
                        o => o,
                    };
                }
            }
        }
        // A member of the caller's class (and bases) hides the functions outside: a method, or
        // a data member holding a callable (`op(x)` for a member `Op op;`).
        if let Some(class) = &scope.class {
            let (v, complete) = self.methods(class, name);
            if !v.is_empty() {
                out.extend(v);
                return Outcome::Resolved;
            }
            if let Some(o) = self.field_call(scope, class, name, out) {
                return o;
            }
            if !complete {
                // An unknown base may define it: members of that name anywhere, and free
                // functions below.
                self.members_named(name, out);
            }
        }
        // Free functions: those of an enclosing namespace, else any (a `using` directive or
        // argument-dependent lookup may find them).
        let before = out.len();
        for s in &scope.scopes {
            let key = if s.is_empty() {
                name.to_string()
            } else {
                format!("{s}::{name}")
            };
            if let Some(v) = self.by_qname.get(&key) {
                out.extend(v.iter().copied().filter(|&j| !self.is_member(j)));
                if out.len() > before {
                    return Outcome::Resolved;
                }
            }
        }
        out.extend(self.free_functions(name));
        if out.is_empty() {
            Outcome::Unresolved
        } else {
            Outcome::Resolved
        }
    }
}

/// What [`Index::binding`] binds a function's parameter to, read once per function.
#[derive(Debug)]
enum ParamKind {
    /// A template parameter of the function (`T`, for `T op` or `const T& op`), or `auto@NAME`
    /// for a parameter declared `auto` (`void each(auto f)`: each its own template parameter).
    Bound(String),
    /// `ptr@NAME`: neither a template parameter nor `auto` (a pointer or reference to a
    /// function: `apply(local_plain, s)` for `apply(void (*f)(float*), ...)`): a function
    /// passed there is bound, so that what the parameter calls is that function, not every
    /// function whose address the unit takes.
    Pointer(String),
    /// Names a template parameter inside another type (`Vec<T>`): not bound.
    Neither,
}

/// [`ParamKind`] of each parameter of `g`.
fn param_kinds(g: &Function) -> Vec<ParamKind> {
    g.params
        .iter()
        .map(|p| {
            if is_auto(&p.type_text) {
                ParamKind::Bound(format!("auto@{}", p.name))
            } else if !g
                .template_params
                .iter()
                .any(|tp| p.type_text.contains(tp.as_str()))
            {
                ParamKind::Pointer(format!("ptr@{}", p.name))
            } else {
                match frontend::types::normal_type(&p.type_text) {
                    Some(pt) if g.template_params.contains(&pt) => ParamKind::Bound(pt),
                    _ => ParamKind::Neither,
                }
            }
        })
        .collect()
}

/// A call's [`argument_type`]s, each read the first time a callee's binding asks for it
/// ([`Index::binding`] runs once per callee: CUTLASS's overload sets read every argument of a
/// call again for each).
pub(crate) struct ArgTypes(Vec<std::cell::OnceCell<Option<Argument>>>);

impl ArgTypes {
    /// Nothing read yet of the `n` arguments of a call.
    pub(crate) fn new(n: usize) -> ArgTypes {
        ArgTypes((0..n).map(|_| std::cell::OnceCell::new()).collect())
    }
}

/// What an argument's type is, where the call shows it.
pub(crate) enum Argument {
    /// As written (a variable's declared type, a temporary's class).
    Type(String),
    /// A lambda (its span), written in the call or held by a variable.
    Lambda(frontend::Span),
    /// A name that is no variable of the caller (`helper`, `&helper`): a function named as a
    /// value, if the unit has one of that name.
    Function(String),
}

/// A parameter type written with `auto` (`auto f`, `const auto& f`).
fn is_auto(t: &str) -> bool {
    t.split(|ch: char| !(ch.is_alphanumeric() || ch == '_'))
        .any(|w| w == "auto")
}

/// The type of the argument at `arg` of a call at `at` of `f` where it is plain: a lambda, a
/// variable (see [`variable_type`]) or a temporary (`Op{}`, `Op()`, `ns::Op<4>{...}`).
pub(crate) fn argument_type(f: &Function, arg: frontend::Span, at: usize) -> Option<Argument> {
    if f.lambdas.contains(&arg) {
        return Some(Argument::Lambda(arg));
    }
    // The variable is the whole argument or behind one `&` (`apply(&op)` for `apply(F* f)`).
    let lo = f.idents.partition_point(|u| u.span.start < arg.start);
    if let Some(u) = f
        .idents
        .get(lo)
        .filter(|u| u.span.end == arg.end && u.span.start <= arg.start + 1)
    {
        let held = f
            .decls
            .iter()
            .rfind(|d| d.name == u.name && d.span.start < at)
            .and_then(|d| d.init)
            .and_then(|i| f.lambdas.iter().find(|l| i.contains(l)));
        if let Some(l) = held {
            return Some(Argument::Lambda(*l));
        }
    }
    if let Some(t) = variable_type(f, arg, at) {
        return Some(Argument::Type(t));
    }
    if let Some(u) = f
        .idents
        .get(lo)
        .filter(|u| u.span.end == arg.end && u.span.start <= arg.start + 1)
    {
        let declared = f.params.iter().any(|p| p.name == u.name)
            || f.decls
                .iter()
                .any(|d| d.name == u.name && d.span.start < at);
        if !declared {
            return Some(Argument::Function(u.name.clone()));
        }
    }
    let lo = f.calls.partition_point(|c| c.span.start < arg.start);
    f.calls[lo..]
        .iter()
        .take_while(|c| c.span.start == arg.start)
        .find(|c| c.span.end == arg.end)
        .and_then(|c| match c.form {
            CallForm::Construct => c.receiver_type.clone(),
            CallForm::Plain => Some(match &c.qualifier {
                Some(q) => format!("{q}::{}", c.callee),
                None => c.callee.clone(),
            }),
            _ => None,
        })
        .map(Argument::Type)
}

/// The declared type of the variable that the argument at `arg` of a call at `at` of `f` is
/// (`x`, `&x`, `*x`): a parameter or a local declared before the call.
fn variable_type(f: &Function, arg: frontend::Span, at: usize) -> Option<String> {
    let lo = f.idents.partition_point(|u| u.span.start < arg.start);
    let u = f.idents.get(lo)?;
    // The whole argument, or the name behind one `&` or `*`.
    if u.span.end != arg.end || u.span.start > arg.start + 1 {
        return None;
    }
    if let Some(d) = f
        .decls
        .iter()
        .rfind(|d| d.name == u.name && d.span.start < at)
    {
        return frontend::types::normal_type(&d.type_text).or_else(|| d.init_type.clone());
    }
    f.params
        .iter()
        .find(|p| p.name == u.name)
        .and_then(|p| frontend::types::normal_type(&p.type_text))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::checked_alone;

    /// A unit of `n` specialisations of a class template, each with the member alias
    /// `packed_type`, and a chain of `depth` aliases `T{i} = packing<T{i-1}>::packed_type`:
    /// resolving `T{depth}` meets each alias of the chain through every specialisation.
    fn alias_fan(n: usize, depth: usize) -> String {
        let mut s = String::from(
            "namespace lib {\ntemplate <typename X> struct packing { using packed_type = X; };\n",
        );
        for i in 0..n {
            s += &format!(
                "struct e{i} {{}}; struct e{i}x2 {{}};\ntemplate <> struct packing<e{i}> {{ using packed_type = e{i}x2; }};\n"
            );
        }
        s += "}\nusing T0 = lib::e0;\n";
        for i in 1..=depth {
            s += &format!("using T{i} = lib::packing<T{}>::packed_type;\n", i - 1);
        }
        s += &format!(
            "struct Block {{ __device__ void step() {{ __syncthreads(); }} }};\n\
             __global__ void k(float* out) {{\n  T{depth} v;\n  Block b;\n\
             for (int i = 0; i < 8; ++i) {{ b.step(); out[i] = i; }}\n\
             for (int i = 0; i < 8; ++i) {{ out[i] = i; }}\n}}\n"
        );
        s
    }

    /// Types met again in one walk are resolved once: the walk of a chain of aliases through
    /// 40 specialisations visited each specialisation's alias again for every path to it
    /// (40^4 paths within the depth bound: 6.4 s for this file, minutes for ThunderKittens'
    /// headers); now its steps grow with the unit, and the verdicts are those of the full walk.
    #[test]
    fn a_walk_resolves_each_alias_once() {
        let (report, verdicts, steps) = checked_alone(alias_fan(40, 6), &TYPE_STEPS_SEEN);
        assert_eq!(
            verdicts,
            [crate::Verdict::Blocked, crate::Verdict::Candidate],
            "{report:?}"
        );
        assert!(steps < 1_000, "{steps} type steps");
    }

    /// A class declared as a local object in many loops is taken apart once per unit: its
    /// constructors and destructors (and its members') are found in every loop, by the first
    /// walk's parts. composable_kernel declares `vector_type` in hundreds of loops: its
    /// fields were resolved again for each (61 s for the repository's headers, 11 s now).
    #[test]
    fn a_class_is_taken_apart_once_per_unit() {
        let mut src = String::from(
            "namespace lib {\nstruct Sync { __device__ Sync() { __syncthreads(); } };\n\
             template <typename T> struct Box { T v; };\n\
             struct Guard { Box<Sync> s; float x; };\n}\n",
        );
        for i in 0..30 {
            src += &format!(
                "__global__ void k{i}(float* out) {{\n\
                 for (int i = 0; i < 8; ++i) {{ lib::Guard g; out[i] = i; }}\n\
                 for (int i = 0; i < 8; ++i) {{ out[i] = i; }}\n}}\n"
            );
        }
        let (report, verdicts, walks) = checked_alone(src, &PARTS_WALKS);
        let expected: Vec<_> = (0..30)
            .flat_map(|_| [crate::Verdict::Blocked, crate::Verdict::Candidate])
            .collect();
        assert_eq!(verdicts, expected, "{report:?}");
        assert!(walks < 10, "{walks} walks of a class's parts");
    }

    /// A class reached along many paths of its bases is walked once per search: a class
    /// template whose specialisations derive from the template itself (each base resolves to
    /// every definition) was walked once per path, 5^8 for each unqualified call in a member
    /// of this file (is the callee a member?); rocWMMA's `mfma.hpp`: 17 s. The callee found
    /// is the one the full walk finds.
    #[test]
    fn a_base_reached_along_many_paths_is_walked_once() {
        let mut src = String::from(
            "__device__ void helper(int) { __syncthreads(); }\n\
             template <int N> struct V { __device__ void run(int i) { helper(i); } };\n",
        );
        for i in 1..6 {
            src += &format!("template <> struct V<{i}> : V<{}> {{}};\n", i - 1);
        }
        src += "__global__ void k(float* out) {\n  V<5> v;\n\
                for (int i = 0; i < 8; ++i) { v.run(i); out[i] = i; }\n\
                for (int i = 0; i < 8; ++i) { out[i] = i; }\n}\n";
        let (report, verdicts, visits) = checked_alone(src, &BASE_VISITS);
        assert_eq!(
            verdicts,
            [crate::Verdict::Blocked, crate::Verdict::Candidate],
            "{report:?}"
        );
        assert!(visits < 200, "{visits} classes visited");
    }

    /// A member call on a specialisation is matched against every candidate of its name;
    /// each candidate's class name and template arguments are read once per unit, not once
    /// per call (CUTLASS with its include directories: 57% of a check). The specialisation
    /// kept is the one the call names.
    #[test]
    fn candidates_class_names_are_read_once_per_unit() {
        let mut src = String::from(
            "template <int N> struct T { __device__ int get(int i) { return i; } };\n",
        );
        for i in 0..40 {
            let body = if i == 3 {
                "__syncthreads(); return i;"
            } else {
                "return i + 1;"
            };
            src += &format!(
                "template <> struct T<{i}> {{ __device__ int get(int i) {{ {body} }} }};\n"
            );
        }
        src += "__global__ void k(float* out) {\n  T<3> a;\n  T<4> b;\n";
        for _ in 0..20 {
            src += "  for (int i = 0; i < 8; ++i) { out[i] = a.get(i); }\n\
                    for (int i = 0; i < 8; ++i) { out[i] = b.get(i); }\n";
        }
        src += "}\n";
        let (report, verdicts, reads) = checked_alone(src, &CLASS_NAME_READS);
        let expected: Vec<_> = (0..20)
            .flat_map(|_| [crate::Verdict::Blocked, crate::Verdict::Candidate])
            .collect();
        assert_eq!(verdicts, expected, "{report:?}");
        assert!(reads <= 41, "{reads} reads of a candidate's class name");
    }

    #[test]
    fn names_and_arguments() {
        assert_eq!(norm("::a::(anonymous namespace)::S<int>::f"), "a::S::f");
        assert_eq!(template_args("ns::T<A, B<C, D>>"), ["A", "B<C, D>"]);
        assert!(template_args("T").is_empty());
        assert!(is_builtin_type("float4") && is_builtin_type("uint32_t"));
        assert!(!is_builtin_type("float5") && !is_builtin_type("Reducer"));
    }

    #[test]
    fn specialisation_arguments() {
        assert_eq!(
            split_segments("::a::B<c::D, 2>::e"),
            ["a", "B<c::D, 2>", "e"]
        );
        assert_eq!(split_segments("S<int>::operator<"), ["S<int>", "operator<"]);
        assert_eq!(split_segments("typename T<U>::V"), ["T<U>", "V"]);
        // Spellings of one type are one type; distinct built-in types differ.
        assert_eq!(exact_arg("unsigned"), exact_arg("unsigned  int"));
        assert_eq!(exact_arg("signed"), exact_arg("int"));
        assert_eq!(exact_arg("long int"), Some("long".into()));
        assert_eq!(exact_arg("0x8"), exact_arg("8u"));
        assert_eq!(exact_arg("true"), exact_arg("1"));
        let args_differ = |a: &str, b: &str| ArgKey::of(a).differs(&ArgKey::of(b));
        assert!(args_differ("long", "long long"));
        assert!(args_differ("char", "signed char"));
        assert!(args_differ("float", "double"));
        assert!(args_differ("4", "8"));
        assert!(args_differ("int64_t", "int"));
        // A typedef, a parameter or an expression may be anything.
        for (a, b) in [
            ("int32_t", "int"),
            ("real_t", "float"),
            ("T", "int"),
            ("2 * 4", "8"),
            ("float", "int32_t"),
            ("unsigned", "unsigned int"),
        ] {
            assert!(!args_differ(a, b), "{a} / {b}");
        }
        for a in ["int32_t", "T", "N + 1", "float*", "const int", "long short"] {
            assert_eq!(exact_arg(a), None, "{a}");
        }
    }
}
