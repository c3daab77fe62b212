//! The typed IR of a HIP/CUDA source file: everything later stages may know about the source.
//!
//! Every node carries a [`Span`] (byte range plus 1-based line/column of its start). Raw
//! tree-sitter nodes never leave the `frontend` crate; other crates read only these types.

use serde::Serialize;

pub use crate::id::{Candidate, FunctionId, LookupError, LoopId, LoopLoc, LoopRef};

/// A byte range in the original file, with the 1-based line and column (in bytes) of `start`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Default)]
pub struct Span {
    pub start: usize,
    pub end: usize,
    pub line: u32,
    pub column: u32,
}

impl Span {
    /// True when `other` lies entirely inside `self`.
    pub fn contains(&self, other: &Span) -> bool {
        self.start <= other.start && other.end <= self.end
    }
    pub fn len(&self) -> usize {
        self.end - self.start
    }
    pub fn is_empty(&self) -> bool {
        self.start == self.end
    }
}

/// One parsed source file.
#[derive(Debug, Clone, Serialize, Default)]
pub struct SourceFile {
    /// Functions with a body (kernels, device functions and host functions), in source order.
    pub functions: Vec<Function>,
    /// `#define`s in the file, object-like and function-like, in source order.
    pub macros: Vec<MacroDef>,
    /// Syntax errors (tree-sitter ERROR / MISSING nodes); analysis continues around them.
    pub parse_errors: Vec<ParseError>,
    /// File-scope `__shared__` declarations (`extern __shared__ float smem[];` at top level).
    pub shared: Vec<SharedDecl>,
    /// Comments and string/char literals: ranges no rule may ever match inside (those inside
    /// host function bodies are not listed: host bodies are not lowered).
    pub inert: Vec<Span>,
    /// True when the file uses CRLF line endings.
    pub crlf: bool,
    /// File-scope (and namespace/class-scope) variables with an initialiser
    /// (`constexpr int WARP_SIZE = 32;`), in source order. Their `init_idents` hold only the
    /// names that may be functions named as values: the whole initialiser, a braced list's
    /// elements, a name behind `&` (`Op table[] = {f, &g};`).
    pub globals: Vec<VarDecl>,
    /// Classes, structs, unions and enums defined in the file (at any scope, inside functions
    /// too) and type aliases (`typedef`, `using X = ...;`), in source order: what a call's
    /// receiver type, a constructor or a qualified name resolves against.
    pub types: Vec<TypeDef>,
    /// The branches of the file's preprocessor conditionals, in source order (read from the
    /// text: tree-sitter parses every branch; `frontend::cond::inactive` says which a compile
    /// never sees).
    pub conditionals: Vec<CondBranch>,
    /// Names of the functions the file explicitly instantiates (`template float f<Op>(...);`,
    /// `extern template ...`): templates instantiated with arguments no call shows.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub instantiated: Vec<String>,
    /// Namespace aliases (`namespace cg = cooperative_groups;`, `namespace L = a::b;`), at any
    /// scope, in source order: `(alias, namespace as written)`, a leading `::` kept.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub namespace_aliases: Vec<(String, String)>,
    /// Names of the file- and namespace-scope variables declared without an initialiser
    /// (`__device__ Op table[4];`: a call of one is a call of a pointer), deduplicated, in
    /// source order; `__shared__` ones are in `shared`, initialised ones in `globals`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub file_variables: Vec<String>,
    /// Names (unqualified) of the functions declared here without a body with a default value
    /// for a parameter (`void f(int a, int b = 0);`, a method declared in its class and
    /// defined outside): their definitions may be called with fewer arguments than they
    /// list ([`Arity::accepts`]), deduplicated, in source order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub defaulted_declarations: Vec<String>,
    /// Every file- and namespace-scope variable but `__shared__` ones (initialised or not), as
    /// `(name, type as written, pointer or reference)`, in source order: a call of one whose
    /// type is a class is a call of its `operator()` (`__device__ SyncOp g_op; ... g_op(x)`),
    /// a method call on one is resolved by that type.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub global_types: Vec<(String, String, bool)>,
    /// Macro calls in function bodies whose arguments are statements, in source order
    /// (CCCL's `NV_IF_TARGET(NV_IS_DEVICE, (__syncthreads();))`): the parse reads every
    /// argument group's statements in a row (what some target runs: the guards see them all);
    /// a loop written inside one is no place for a `#pragma`, and which groups run is the
    /// macro's to say.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub statement_macros: Vec<StatementMacro>,
}

/// A macro call whose arguments are statements (see [`SourceFile::statement_macros`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StatementMacro {
    /// The macro's name (`NV_IF_TARGET`).
    pub name: String,
    /// The whole call, from its name to its `)`.
    pub span: Span,
}

/// One branch of a preprocessor conditional: its directive (`#if`, `#ifdef`, `#ifndef`,
/// `#elif`, `#elifdef`, `#elifndef`, `#else`) up to the next directive of its group.
#[derive(Debug, Clone, Serialize)]
pub struct CondBranch {
    /// The directive's name: `if`, `ifdef`, `ifndef`, `elif`, `elifdef`, `elifndef`, `else`.
    pub directive: String,
    /// What follows the name, continuation lines joined and comments removed (empty for
    /// `#else`).
    pub condition: String,
    /// From the directive's `#` to the start of the next directive of its group (`#elif`,
    /// `#else`, `#endif`; the end of the file when it is missing).
    pub span: Span,
    /// The index (in `conditionals`) of the group's first branch, its `#if`.
    pub group: usize,
    /// The index of the branch this conditional sits in, if any.
    pub parent: Option<usize>,
}

/// What kind of type a [`TypeDef`] defines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TypeKind {
    /// `class`, `struct` or `union` with a body.
    Class,
    /// `enum` / `enum class` with a body.
    Enum,
    /// `typedef T X;` or `using X = T;`.
    Alias,
}

/// A type defined in the file.
#[derive(Debug, Clone, Serialize)]
pub struct TypeDef {
    /// Unqualified name, template arguments left out (`SharedMemory` for a specialisation
    /// `SharedMemory<double>`).
    pub name: String,
    /// Qualified as [`Function::qualified_name`] is (enclosing namespaces and classes; a class
    /// defined inside a function is named from the function's namespace: `ns::Local`).
    pub qualified_name: String,
    pub kind: TypeKind,
    /// The whole definition (the template header included).
    pub span: Span,
    /// For an alias: the aliased type as written (`BlockReduce<float, 256>`).
    pub aliased: Option<String>,
    /// Names of the template parameters (a class template, an alias template), in order.
    pub template_params: Vec<String>,
    /// Base classes as written, access specifiers left out (`Base<T>`).
    pub bases: Vec<String>,
    /// Data members (`R r;`, `float* p;`), in order: a member call's receiver resolves through
    /// them (`red.allreduce(x)` in a method, `this->red.allreduce(x)`).
    pub fields: Vec<Field>,
    /// Names of the member functions declared in the class body, with a body there or not
    /// (`S`, `~S`, `operator()`, `operator float*`), deduplicated, in order.
    pub methods: Vec<String>,
}

/// A data member of a class.
#[derive(Debug, Clone, Serialize)]
pub struct Field {
    pub name: String,
    /// The type as written, without the declarator's `*`/`&` (as [`Param::type_text`]).
    pub type_text: String,
    pub is_pointer_or_ref: bool,
}

/// Where a function defined by a macro invocation comes from (see [`Function::expansion`]).
#[derive(Debug, Clone, Serialize)]
pub struct MacroExpansion {
    /// The function-like macro whose replacement list holds the function's header (and, with
    /// `body_in_macro`, its body).
    pub name: String,
    /// The invocation (`DEFINE_KERNEL(k, float)`).
    pub invocation: Span,
    /// True when the body is in the macro's replacement list (`#define K(n) __global__ void
    /// n() { ... }` then `K(k)`): the function's spans, its loops' included, point into the
    /// `#define` (their real lines), shared by every invocation. False when the body follows
    /// the invocation (`DEFINE_KERNEL(k, float) { ... }`): the body is the file's own text.
    pub body_in_macro: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct ParseError {
    pub span: Span,
    /// "cannot parse `TEXT`" for an ERROR node, "missing <kind>" for a MISSING node, "`HEAD` is
    /// not read as a function definition ..." for a definition the lowering cannot read.
    pub message: String,
}

/// The argument counts a function's parameter list accepts: `min` (the parameters without a
/// default value) to `max` (`None`: any number, for a parameter pack or C's `...`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Arity {
    pub min: usize,
    pub max: Option<usize>,
}

impl Arity {
    /// True when a call passing `n` arguments may call it; `defaults_elsewhere`: a declaration
    /// of that name elsewhere may give parameters defaults that this definition does not
    /// repeat (`void f(int a, int b = 0);` ... `void f(int a, int b) {}`), so fewer
    /// arguments than `min` fit too.
    pub fn accepts(&self, n: usize, defaults_elsewhere: bool) -> bool {
        (defaults_elsewhere || n >= self.min) && self.max.is_none_or(|m| n <= m)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FunctionKind {
    /// `__global__`
    Kernel,
    /// `__device__` (including `__host__ __device__`)
    Device,
    /// Anything else (host code). Loops in host functions are never reported.
    Host,
}

#[derive(Debug, Clone, Serialize)]
pub struct Function {
    /// Unqualified name (`foo` for `ns::foo<T>`).
    pub name: String,
    /// Qualified name without template arguments: the enclosing namespaces and classes (an
    /// unnamed namespace as `(anonymous namespace)`) and the qualifiers written in the
    /// declarator (`a::b::S::m` for `void a::b::S::m()` or for `m` defined in `struct S` in
    /// `namespace a::b`).
    pub qualified_name: String,
    /// The function's identity in this file (unique; see [`crate::identity`]): the qualified
    /// name plus a disambiguator when it is not unique (`over(float*, int)`, `k<float>`).
    pub id: FunctionId,
    /// The parameter types, normalised (`(const float*, int)`; names, default values,
    /// `__restrict__` and top-level `const` left out). `None` when the function was recovered
    /// from a syntax-error region and its parameters are unknown.
    pub signature: Option<String>,
    pub kind: FunctionKind,
    /// Whole definition, template header and attributes included.
    pub span: Span,
    pub name_span: Span,
    /// The `{ ... }` body.
    pub body: Span,
    pub is_template: bool,
    pub is_static: bool,
    /// Arguments of `__launch_bounds__(...)`, as written.
    pub launch_bounds: Option<Vec<String>>,
    /// Set when the kernel/device qualifier came from an object-like macro of this file.
    pub qualifier_macro: Option<String>,
    pub params: Vec<Param>,
    /// The body-level vectors below (`loops` to `const_ops`) are empty for host functions:
    /// host code is never analysed, so its body is not lowered (unless it has syntax errors).
    ///
    /// All loops of the function in source order (outer before inner); `Loop::index` is the
    /// position in this vector, `Loop::parent` points into it.
    pub loops: Vec<Loop>,
    /// All calls in the body (function calls, method calls, function-like macro invocations).
    pub calls: Vec<Call>,
    /// All identifier occurrences in the body (reads and writes), in source order.
    pub idents: Vec<IdentUse>,
    /// Local variable declarations in the body.
    pub decls: Vec<VarDecl>,
    /// `__shared__` declarations in the body (file-scope ones are in `SourceFile::shared`).
    pub shared: Vec<SharedDecl>,
    /// `break`, `continue`, `return`, `goto` statements and `throw`s, with what they leave.
    pub jumps: Vec<Jump>,
    /// Labels (`name:`) defined in the body.
    pub labels: Vec<Label>,
    /// Lambda expressions in the body.
    pub lambdas: Vec<Span>,
    /// Plain assignments `name = expr;` to a variable (for alias tracking after the
    /// declaration: `float* p; p = smem + 4;`), in source order.
    pub assigns: Vec<Assign>,
    /// Uses of this file's macros in the body (object-like `BARRIER`, function-like `SYNC()`), in
    /// source order: what `guards` expands to see through macros.
    pub macro_refs: Vec<MacroRef>,
    /// Inline assembly statements in the body (`asm volatile("s_barrier")`), in source order.
    pub asm: Vec<InlineAsm>,
    /// Binary operations `x OP constant` / `constant OP x` for OP in `% & / >> << * == != < <= > >= + -`
    /// with an integer-literal operand, in the body (raw material of lane-arithmetic lints).
    pub const_ops: Vec<ConstOp>,
    /// True when the function was recovered from a syntax-error region (e.g. a kernel whose
    /// qualifiers came through an unparsable macro such as `LAUNCH_BOUNDS(256)`).
    pub recovered: bool,
    /// Where memory addresses go in the body, in source order (see [`AddressUse`]): the stores
    /// through pointers and references, the address-valued arguments of calls and the
    /// initialisers of local pointers and references. What `spec new` reads to tell which
    /// pointer parameters a kernel writes through.
    pub address_uses: Vec<AddressUse>,
    /// Names of the template parameters of the function's own template header, in order
    /// (those of an enclosing class template are in its [`TypeDef::template_params`]).
    pub template_params: Vec<String>,
    /// The qualified name of the class whose body holds the definition (a method defined in
    /// the class; `None` for free functions and out-of-line definitions `void S::m() {}`,
    /// whose class is the qualifier of `qualified_name`).
    pub class_name: Option<String>,
    /// Identifiers defined nowhere in the file, in declaration-specifier position before the
    /// declarator (`CUTLASS_DEVICE void f()`, `DS_D_INLINE T g()`): unknown specifier macros
    /// that the parse skipped. The function is lowered as `__device__` (unless written
    /// `__global__`/`__host__`): its loops are reported and guarded, and a manual rewrite in
    /// it is refused (`unseen-macro`) unless the unit defines these names.
    pub unseen_specifiers: Vec<String>,
    /// Set when the function comes from the expansion of a function-like macro of the file
    /// (`DEFINE_KERNEL(k, float)`): its name is the invocation's argument, its spans those of
    /// the text they are written in (see [`MacroExpansion`]).
    pub expansion: Option<MacroExpansion>,
    /// How many arguments a call of it may pass (see [`Arity`]); `None` where its parameter
    /// list is not plain C++ to this parse (a syntax error, a macro standing for parameters,
    /// a recovered or macro-expanded function): then any call of its name may be a call of it.
    pub arity: Option<Arity>,
    /// The declared return type when it may be a class (normalised as
    /// [`Call::receiver_type`] is: `Iter`, `Range<T>::iterator`); `None` for `void`, `auto`, a
    /// pointer or a scalar, a constructor or a recovered function. What a range-for's
    /// `begin()` returns: the iterator whose `++`, `*` and `!=` every iteration calls.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub return_type: Option<String>,
    /// The qualified name with the template arguments of its classes as written, set only
    /// where a class it belongs to is written with arguments: a member of an explicit or
    /// partial specialisation (`Traits<float>::Reducer::run`), an out-of-line definition
    /// (`Box<T>::get`). What tells `Traits<float>::Reducer::run` from
    /// `Traits<int>::Reducer::run`, which [`Function::qualified_name`] merges.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub specialised_name: Option<String>,
}

/// `target = value` where `target` is a plain name, or a data member through `this` (kept as
/// `this->name`).
#[derive(Debug, Clone, Serialize)]
pub struct Assign {
    pub target: String,
    /// The whole assignment expression.
    pub span: Span,
    /// The names the right-hand side reads or calls.
    pub value_idents: Vec<String>,
}

/// An inline assembly statement (`asm`, `__asm__`, `__asm volatile (...)`).
#[derive(Debug, Clone, Serialize)]
pub struct InlineAsm {
    /// The assembler template: the contents of its string literal(s), escapes as written
    /// (`s_waitcnt lgkmcnt(0)\n s_barrier`).
    pub template: String,
    pub span: Span,
}

/// A use of a macro defined in the same file.
#[derive(Debug, Clone, Serialize)]
pub struct MacroRef {
    pub name: String,
    pub span: Span,
}

/// A binary operation with one integer-literal operand (`threadIdx.x % 32`, `tid >> 5`).
#[derive(Debug, Clone, Serialize)]
pub struct ConstOp {
    /// The operator as written: `%`, `&`, `/`, `>>`...
    pub op: String,
    pub constant: i128,
    /// True for `x OP 32`, false for `32 OP x`.
    pub constant_on_right: bool,
    /// The whole binary expression.
    pub span: Span,
    /// The literal's span.
    pub constant_span: Span,
    /// Identifiers (and called names, e.g. `__lane_id`) in the other operand; member names are
    /// not included (`threadIdx.x` gives `threadIdx`).
    pub operand_names: Vec<String>,
    /// When the whole expression is one subscript of an array (`a[i][si % 32]`): which array
    /// and which subscript (0 for the outermost `[]`, the first written).
    pub index_of: Option<ArrayIndex>,
    /// Inside an array declarator's size (`__shared__ float s[B / 32];`): the expression must
    /// stay a constant expression.
    pub in_array_size: bool,
    /// Inside any constant expression: an array size, a template argument list
    /// (`reduce<B / 32>()`), a `constexpr` declaration, `static_assert`, `alignas`,
    /// `__launch_bounds__`, a `case` label (`frontend::constctx`; read for `%`, `/`, `&`,
    /// `>>`, `<<`, the operators a rewrite may change; the others only in an array size).
    pub in_constant: bool,
}

/// An expression used as a subscript of a named array.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ArrayIndex {
    pub array: String,
    pub dim: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct Param {
    pub name: String,
    pub type_text: String,
    pub span: Span,
    /// Declared with `*` or `&` (the stars are not part of `type_text`).
    pub is_pointer_or_ref: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LoopKind {
    For,
    While,
    Do,
    /// `for (x : range)`
    RangeFor,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase", tag = "kind", content = "factor")]
pub enum UnrollHint {
    /// `#pragma unroll` (full unroll) or `#pragma unroll N` / `#pragma unroll(N)` (factor N).
    Unroll(Option<u32>),
    /// `#pragma nounroll` or `#pragma unroll 1`
    NoUnroll,
}

/// How an unroll pragma is spelt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PragmaSyntax {
    /// `#pragma unroll [N]`, `#pragma unroll(N)`, `#pragma nounroll`
    Unroll,
    /// `#pragma GCC unroll N`
    Gcc,
    /// `#pragma clang loop unroll(...)` / `unroll_count(N)`
    ClangLoop,
}

#[derive(Debug, Clone, Serialize)]
pub struct Pragma {
    pub hint: UnrollHint,
    pub syntax: PragmaSyntax,
    /// The whole pragma line (from `#` to the end of the line, newline excluded); for a pragma
    /// macro, the macro's use (`UNROLL_8`).
    pub span: Span,
    /// Set when the pragma is a macro used before the loop (`#define UNROLL_8 _Pragma("unroll
    /// 8")` then `UNROLL_8`, `CUTLASS_PRAGMA_UNROLL`, `__pragma(unroll)`): its name. Its hint
    /// is the one its definition in the file spells; a macro defined nowhere in the file
    /// counts as a bare `#pragma unroll` (the author's decision, whatever it expands to).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub macro_name: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Loop {
    pub index: usize,
    pub kind: LoopKind,
    /// From the loop keyword to the end of the loop statement.
    pub span: Span,
    /// The 1-based line on which the loop statement ends.
    pub end_line: u32,
    /// The `for` / `while` / `do` keyword.
    pub keyword: Span,
    pub parent: Option<usize>,
    /// 0 for an outermost loop of the function.
    pub depth: u32,
    /// `for` init clause (declaration or expression), as written.
    pub init: Option<Span>,
    /// Loop condition (for `for`, `while`, `do`), without parentheses.
    pub condition: Option<Span>,
    /// `for` update clause.
    pub update: Option<Span>,
    /// The body statement (a `{}` block or a single statement).
    pub body: Span,
    pub body_is_block: bool,
    /// Pragma immediately before the loop (only blank lines/comments between).
    pub pragma: Option<Pragma>,
    /// Canonical `for` header, when the header has that shape.
    pub header: Option<ForHeader>,
    /// Constant trip count, when init, bound and step are integer constants.
    pub trip_count: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum CmpOp {
    Lt,
    Le,
    Gt,
    Ge,
    Ne,
}

/// A `for` header of the shape `for (T i = a; i CMP b; i += s)` (or `++i`, `i++`, `i--`,
/// `i -= s`, `i = i + s`), with `i` on either side of the comparison.
#[derive(Debug, Clone, Serialize)]
pub struct ForHeader {
    pub var: String,
    /// Type as written when the variable is declared in the init clause (`int`, `unsigned`...),
    /// with `volatile` in front when the declaration has that qualifier.
    pub var_type: Option<String>,
    /// The initial value expression; `None` when the header has no init clause
    /// (`for (; i < n; ++i)`), whose variable is then the comparison's plain-name side.
    pub init_value: Option<Expr>,
    pub cmp: CmpOp,
    /// The bound expression (the side of the comparison that is not `var`).
    pub bound: Expr,
    /// True when written `var CMP bound`, false for `bound CMP var` (cmp is then normalised so
    /// that it always reads `var cmp bound`).
    pub var_on_left: bool,
    /// Step added on each iteration: `++i` -> Int(1), `i -= 2` -> negated, `i += n` -> the expr.
    pub step: Step,
}

#[derive(Debug, Clone, Serialize)]
pub enum Step {
    /// A constant step (negative for decrement).
    Const(i64),
    /// `var += expr`: an expression step.
    Add(Expr),
    /// `var -= expr`
    Sub(Expr),
}

/// A small expression tree for loop headers.
#[derive(Debug, Clone, Serialize)]
pub enum Expr {
    Int {
        value: i128,
        span: Span,
    },
    Ident {
        name: String,
        span: Span,
    },
    Unary {
        op: String,
        operand: Box<Expr>,
        span: Span,
    },
    Binary {
        op: String,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
        span: Span,
    },
    /// Anything else (calls, member access, casts...): kept as text.
    Other {
        text: String,
        span: Span,
    },
}

impl Expr {
    pub fn span(&self) -> Span {
        match self {
            Expr::Int { span, .. }
            | Expr::Ident { span, .. }
            | Expr::Unary { span, .. }
            | Expr::Binary { span, .. }
            | Expr::Other { span, .. } => *span,
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Call {
    /// Callee name without receiver or template arguments: `__syncthreads`, `sync`, `atomicAdd`.
    pub callee: String,
    /// For `g.sync()` / `p->f()`: the receiver text (`g`).
    pub receiver: Option<String>,
    /// Qualifier as written (`cooperative_groups::this_grid` -> `cooperative_groups`).
    pub qualifier: Option<String>,
    pub span: Span,
    pub callee_span: Span,
    /// Argument list including parentheses.
    pub args: Span,
    /// Each argument expression (comments excluded), in order.
    pub arg_spans: Vec<Span>,
    /// Integer value of each argument when it is an integer literal (`0xffffffff`, `32`).
    pub arg_ints: Vec<Option<i128>>,
    /// How the call is written: what the call graph resolves it by.
    pub form: CallForm,
    /// The receiver expression (`stats` in `stats.template compute<true>(x)`, `F{}` in
    /// `F{}(p)`); `None` for a plain or qualified call.
    pub receiver_span: Option<Span>,
    /// The static type of the receiver where the function itself shows it, as written with
    /// cv-qualifiers, `*` and `&` left out (`BlockReduce<float, 256>`): a parameter's or local
    /// variable's declared type (for `auto x = T(...)` / `T{...}`, `T`), the enclosing class
    /// for `this`; for [`CallForm::Construct`], [`CallForm::Destroy`] and
    /// [`CallForm::Temporary`] the constructed type; for [`CallForm::Variable`] the
    /// variable's type. `None` when unknown here (a data member's type is in the class's
    /// [`TypeDef::fields`]).
    pub receiver_type: Option<String>,
    /// Explicit template arguments as written, angle brackets included (`<true>`,
    /// `<WarpReduce, 4>`).
    pub template_args: Option<String>,
    /// An argument is a pack expansion (`f(xs...)`, `f(g(xs)...)`): the call passes any
    /// number of arguments, whatever `arg_spans` counts.
    pub arg_pack: bool,
}

/// How a [`Call`] is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum CallForm {
    /// `f(x)`, `ns::f(x)`, `f<N>(x)`, `T::template f<N>()`, `S<T>::f()`: a function (or, when
    /// the name is a class, its constructor; or a functional cast `float(x)`).
    #[default]
    Plain,
    /// `x.f()`, `p->f()`, `x.template f<N>()`, `p->template f<N>()`.
    Method,
    /// A call of a local variable or parameter (`op(x)`, `fp()`): a functor's `operator()`,
    /// a lambda or a function pointer; `receiver_type` is the variable's declared type.
    Variable,
    /// `F{}(p)`, `F()(p)`: `operator()` of a temporary (`callee` is `operator()`,
    /// `receiver_type` is `F`).
    Temporary,
    /// A constructor run by a declaration in the body (`Guard g;`, `Guard g(x);`, `Guard
    /// g{x};`, `Guard g = ...;`) or by a temporary (`Guard{}`, `Guard{x}`): `callee` is the
    /// class's unqualified name, `qualifier` its qualifier, `receiver_type` the type as
    /// written; the span is the declaration's (or the temporary's).
    Construct,
    /// The destructor of that object (`callee` is `~Guard`), run when its scope ends: recorded
    /// at the same span, since the scope ends inside every loop the declaration is in.
    Destroy,
    /// An operator that may be overloaded, applied to a local variable or parameter whose
    /// declared type is no scalar, pointer or vector type: `c += v`, `++c`, `c[i]`, `a + b`
    /// (`callee` is `operator+=`, `operator++`, `operator[]`, `operator+`; `receiver` the
    /// variable, `receiver_type` its declared type; the span is the expression's). The guards
    /// look it up in that type only: never by name, never unresolved (most are built in).
    Operator,
    /// A call of a pointer that no name answers: a pointer to member (`(o.*pm)(x)`,
    /// `(p->*pm)(x)`), a choice (`(c ? f : g)(x)`), an element of an expression that is no
    /// variable (`s.table[k](x)`). `callee` is the expression as written (shortened). The
    /// guards take it to reach every function of the unit named as a value (its address
    /// taken), and list it as unresolved when there is none.
    Indirect,
    /// What a range-for runs on its range (`for (auto x : r)`): `r.begin()` and `r.end()`
    /// once, and on the iterator `begin()` returns its `++`, `*` and `!=` every iteration.
    /// `callee` is `begin`, `receiver` the range expression as written, `receiver_type` its
    /// type where the function shows it (a variable's declared type, `R` for a temporary
    /// `R(n)`/`R{n}`); the span is the range expression's.
    Range,
    /// A local variable or parameter whose declared type may be a class, read where C++
    /// converts it (`float x = c;`, `f(c)`, `return c;`, `(float)c`, `if (c)`, `a[c]`):
    /// its class's conversion operators (`operator float()`) may run. `callee` is
    /// `operator`, `receiver` the variable, `receiver_type` its declared type; the span is the
    /// variable's. The guards look in that class only: never by name, never unresolved.
    Convert,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Access {
    Read,
    /// Assigned, incremented/decremented, or its address taken / bound to a non-const reference.
    Write,
    /// The name being declared.
    Decl,
}

#[derive(Debug, Clone, Serialize)]
pub struct IdentUse {
    pub name: String,
    pub span: Span,
    pub access: Access,
}

#[derive(Debug, Clone, Serialize)]
pub struct VarDecl {
    pub name: String,
    pub type_text: String,
    /// Whole declaration statement.
    pub span: Span,
    pub name_span: Span,
    /// Initialiser expression, if any.
    pub init: Option<Span>,
    /// The names the initialiser reads or calls (for alias tracking: `float* p = smem + 4;`,
    /// `int lane = __lane_id();`); member names are not included.
    pub init_idents: Vec<String>,
    pub is_pointer_or_ref: bool,
    /// The initialiser's value when it is an integer literal (`= 32`, `= 0x20`, `= -1`).
    pub init_int: Option<i128>,
    /// Declared `const` or `constexpr`.
    pub is_const: bool,
    /// For an initialiser that is one call or braced construction (`auto r = T(...)`,
    /// `auto r = T{...}`, `auto r = make<N>(...)`): the callee or type as written (`T`,
    /// `ns::T<4>`); whether it names a class is for the reader to decide.
    pub init_type: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SharedKind {
    /// `__shared__ T x[N];`
    Static,
    /// `extern __shared__ T x[];`
    ExternDynamic,
    /// `HIP_DYNAMIC_SHARED(T, x)`
    HipDynamicMacro,
}

#[derive(Debug, Clone, Serialize)]
pub struct SharedDecl {
    pub name: String,
    pub kind: SharedKind,
    pub span: Span,
    /// The array's extents, outermost first (`[128][32]` -> `[Some(128), Some(32)]`); `None`
    /// for an extent that is no integer literal or integer macro; empty for a scalar.
    pub dims: Vec<Option<i128>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum JumpKind {
    Break,
    Continue,
    Return,
    Goto,
}

/// What a jump statement leaves.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum JumpTarget {
    /// `break`/`continue` of the loop with this index in `Function::loops`.
    Loop(usize),
    /// `break` of a `switch`.
    Switch,
    /// `return` from the function itself.
    Function,
    /// `return` inside a lambda (leaves only the lambda).
    Lambda,
    /// `goto label`.
    Label(String),
}

#[derive(Debug, Clone, Serialize)]
pub struct Jump {
    pub kind: JumpKind,
    pub target: JumpTarget,
    pub span: Span,
}

#[derive(Debug, Clone, Serialize)]
pub struct Label {
    pub name: String,
    pub span: Span,
}

#[derive(Debug, Clone, Serialize)]
pub struct MacroDef {
    pub name: String,
    /// `Some(params)` for function-like macros.
    pub params: Option<Vec<String>>,
    /// Replacement text as written (continuation lines joined).
    pub body: String,
    pub span: Span,
    /// Names of calls in the replacement (`__syncthreads`, `atomicAdd`...).
    pub calls: Vec<String>,
    /// Identifiers in the replacement that are not calls.
    pub idents: Vec<String>,
    /// Control-flow keywords of the replacement, in order (`break`, `continue`, `return`, `goto`,
    /// `for`, `while`, `do`, `switch`): a `return` in a macro leaves the function it is used in.
    pub control: Vec<String>,
    /// When the replacement holds inline assembly (`asm`, `__asm__`): the contents of its
    /// string literals, joined by newlines.
    pub asm: Option<String>,
}

/// An expression of a function body that designates memory (`p[i]`, `*p`, `p->x`, `r` bound to
/// `p[i]`) or computes an address (`p + i`, `&p[i]`, `(float4*)p`), with the variables that
/// address comes from (its *bases*), and what the body does with it.
///
/// The bases are the names reached through address arithmetic only: the pointer of a subscript,
/// `*`, `->` or `.`, both sides of `+`/`-` (an operand that is itself a subscript, member or call
/// is a value, not an address: `y + idx[i]` has the base `y` alone), casts, parentheses, `?:`
/// branches and `p++`. They are names, not types: `*(p + off)` has the bases `p` and `off`, and
/// a reader keeps those that are pointers. An expression whose address comes from no name
/// (`f(x)[i] = v`) is not listed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AddressUse {
    /// Names the address comes from, in source order, each once.
    pub bases: Vec<String>,
    /// True when the expression designates the memory at the address (an lvalue such as
    /// `p[i]`, `*p`, `p->x`, `s.x`); false when its value is the address (`p`, `p + i`, `&p[i]`).
    pub element: bool,
    /// The expression.
    pub span: Span,
    pub kind: AddressKind,
}

/// What a function body does with an [`AddressUse`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum AddressKind {
    /// The target of `=`, of a compound assignment or of `++`/`--` that is not a plain name:
    /// a store through the address (`p[i] = v`, `*q += v`, `p->n++`).
    Store,
    /// Argument `arg` (0-based) of the call `call` (an index into [`Function::calls`]).
    CallArg { call: usize, arg: usize },
    /// The initialiser of the local `decl` (an index into [`Function::decls`]), declared as a
    /// pointer (`float* q = p + off;`, `auto q = p + off;`) or, with `reference`, as a
    /// reference (`float& r = p[i];`).
    Init { decl: usize, reference: bool },
    /// The value of `target = value` for a plain name `target` (`q = p + off;`).
    Assigned { target: String },
}
