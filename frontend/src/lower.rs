//! The lowering pass: ONE iterative walk over the tree-sitter tree (a `TreeCursor` plus explicit
//! stacks, never Rust recursion on the syntax tree) that builds the whole [`SourceFile`] IR.
//!
//! Context (current function, enclosing loops/switches/lambdas, declarations whose initialiser is
//! being walked, namespaces) lives on explicit stacks; each entry remembers the node that opened
//! it and is popped when the walk leaves that node.

use std::collections::HashMap;

use tree_sitter::{Node, Tree};

use crate::declarator::{
    declarator_name, find_function_declarator, function_parts, int_value, param_type,
    second_list_item,
};
use crate::elide::Plan;
use crate::header::for_header;
use crate::identity::{assign_ids, join_tokens, strip_template_args, tokens, IdParts};
use crate::ir::*;
use crate::kinds::{fields, Kinds, K};
use crate::lex::parse_int_literal;
use crate::macros::{body_facts, join_continuations, BodyFacts};
use crate::node::{bytes_of, inner_span, span_of, text_of};
use crate::postpass::{memchr_crlf, qualifier_through_macros, void_counts_of_by_ref_args};
use crate::pragma::parse_pragma_text;
use crate::recover::{self, Recovered};
use crate::trip::trip_count_with;
use crate::types::{self, normal_type};

mod addresses;

/// Operators for which [`ConstOp`]s are recorded.
const CONST_OPS: &[&[u8]] = &[
    b"%", b"&", b"/", b">>", b"<<", b"*", b"==", b"!=", b"<", b"<=", b">", b">=", b"+", b"-",
];

/// How many enclosing collectors (const-op operands, declaration initialisers) an identifier is
/// added to: bounds the work on pathological nesting while covering real code.
const COLLECT_FANOUT: usize = 3;
/// At most this many bytes of an indirect call's callee expression are kept as its name.
const INDIRECT_TEXT: usize = 48;
/// At most this many names are kept from one file-scope initialiser (`Op table[] = {f, g};`).
const GLOBAL_INIT_NAMES: usize = 1024;

/// A call's argument list, its arguments' spans and their values when integer literals
/// (comments left out).
fn arguments<'t>(call: Node<'t>, src: &[u8]) -> (Option<Node<'t>>, Vec<Span>, Vec<Option<i128>>) {
    let args_node = call.child_by_field_id(fields().arguments);
    let mut spans = Vec::new();
    let mut ints = Vec::new();
    if let Some(a) = args_node {
        let mut c = a.walk();
        for ch in a.named_children(&mut c) {
            if ch.kind() != "comment" {
                spans.push(span_of(ch));
                ints.push(int_value(ch, src));
            }
        }
    }
    (args_node, spans, ints)
}

/// The names in a file-scope initialiser that may be functions named as values: the whole
/// initialiser (`= f`, `= ns::f`), a name behind `&` (`= &f`, `= &S::m`), the elements of
/// braced lists (`{f, &g}`, `{.op = f}`, nested). Operands of arithmetic and arguments are
/// left out: tables of numbers stay cheap.
fn value_names(node: Node<'_>, src: &[u8], depth: usize, out: &mut Vec<String>) {
    if depth > 8 || out.len() >= GLOBAL_INIT_NAMES {
        return;
    }
    match node.kind() {
        "identifier" => {
            let name = text_of(node, src);
            if !out.contains(&name) {
                out.push(name);
            }
        }
        "qualified_identifier" => {
            if let Some(n) = node.child_by_field_id(fields().name) {
                value_names(n, src, depth + 1, out);
            }
        }
        "pointer_expression" => {
            let address = node
                .child_by_field_id(fields().operator)
                .is_some_and(|o| o.kind() == "&");
            if let (true, Some(a)) = (address, node.child_by_field_id(fields().argument)) {
                value_names(a, src, depth + 1, out);
            }
        }
        "initializer_pair" => {
            if let Some(v) = node.child_by_field_id(fields().value) {
                value_names(v, src, depth + 1, out);
            }
        }
        "initializer_list" | "parenthesized_expression" => {
            let mut c = node.walk();
            for ch in node.named_children(&mut c) {
                value_names(ch, src, depth + 1, out);
                if out.len() >= GLOBAL_INIT_NAMES {
                    break;
                }
            }
        }
        _ => {}
    }
}

enum Scope {
    Loop(usize),
    Switch,
    Lambda,
}

enum Pop {
    Function,
    Loop(usize),
    Scope,
    Lambda,
    Ns,
    Init,
    Collect,
    ArrayDeclarator,
    Subscript,
}

/// `ns::T<32> name = init;` / `ns::T<32> name(args);`, which the grammar reads as the
/// expression `(ns::T < 32) > (name = init)`: a declaration of `name` (see
/// [`misparsed_template_decl`]). Node ids of its parts.
struct MisparsedDecl {
    /// `ns::T < 32`: the type, not walked.
    type_node: usize,
    /// The declared name.
    name_node: usize,
    /// The assignment or call the grammar made of it (no `Assign`, no `Call`).
    shell_node: usize,
    /// The initialiser (the assignment's right side, or the call's arguments).
    init_node: Option<usize>,
    /// Index of its `VarDecl` in the current function.
    decl: usize,
}

/// An open subscript `a[...][expr]`: the node its whole index is (parentheses aside).
struct OpenSubscript {
    target: usize,
    index: ArrayIndex,
}

#[derive(Clone, Copy)]
enum DeclRef {
    Local(usize),
    Global(usize),
    /// The right-hand side of `Function::assigns[i]`.
    Assign(usize),
}

struct FnCtx {
    f: Function,
    body_start: usize,
    scopes: Vec<Scope>,
    lambda_depth: u32,
    loop_stack: Vec<usize>,
    /// Start bytes of writes to each name, in increasing order (for trip-count validation).
    writes: HashMap<String, Vec<usize>>,
    /// Callee identifiers and type identifiers: candidates for macro references.
    extra_refs: Vec<MacroRef>,
    /// Identifiers among the declaration specifiers: candidates for qualifier macros.
    qual_candidates: Vec<String>,
    id_parts: IdParts,
    /// Name -> index of its last declaration in `f.decls`, up to `decl_names_upto` (extended
    /// at each loop: a header's names are looked up in O(1), not by a scan of every earlier
    /// declaration, which made a function with many loops quadratic).
    decl_names: NameIndex,
}

/// Name -> index of its last occurrence in a list that only grows, brought up to date on
/// demand (amortised O(1) per element).
#[derive(Default)]
struct NameIndex {
    last: HashMap<String, usize>,
    upto: usize,
}

impl NameIndex {
    fn sync(&mut self, decls: &[VarDecl]) {
        for (i, d) in decls.iter().enumerate().skip(self.upto) {
            self.last.insert(d.name.clone(), i);
        }
        self.upto = decls.len();
    }

    fn get(&self, name: &str) -> Option<usize> {
        self.last.get(name).copied()
    }
}

struct PendingPragma {
    pragma: Pragma,
    parent: usize,
    end: usize,
}

struct Finished {
    f: Function,
    id_parts: IdParts,
    qual_candidates: Vec<String>,
    extra_refs: Vec<MacroRef>,
}

pub(crate) struct Lowerer<'s> {
    src: &'s [u8],
    kinds: &'s Kinds,
    out: SourceFile,
    fns: Vec<FnCtx>,
    finished: Vec<Finished>,
    pops: Vec<(usize, Pop)>,
    ns: Vec<String>,
    /// Parallel to `ns`: for a class, its index in `out.types` (`None` for a namespace, or a
    /// class without a body).
    class_stack: Vec<Option<usize>>,
    pending_pragma: Option<PendingPragma>,
    /// The range expression of the range-for being entered: its [`CallForm::Range`] call is
    /// recorded when the walk reaches it.
    pending_range: Option<usize>,
    init_map: Vec<(usize, DeclRef)>,
    init_stack: Vec<DeclRef>,
    collect_stack: Vec<usize>,
    skip_ident: Option<usize>,
    /// A top-level declaration/ERROR that ended without `;` and carried kernel/device qualifiers
    /// (`__global__ void LAUNCH_BOUNDS(256) k(...) {` parses as a declaration then a function).
    dangling_qual: Option<(usize, FunctionKind)>,
    macro_ints: HashMap<String, i128>,
    recover: Vec<Recovered>,
    /// Macro name -> index in `out.macros` (the last definition wins).
    macro_idx: HashMap<String, usize>,
    /// The body of a host function: not lowered (host code is never analysed).
    skip_node: Option<usize>,
    /// Assignment node id -> index in `Function::assigns` (until its right side is entered).
    assign_map: Vec<(usize, usize)>,
    /// Name -> index of its last declaration in `out.globals` (see [`NameIndex`]).
    global_names: NameIndex,
    /// The macro uses the parse skipped (`DINLINE`, `__align__(16)`).
    elided: Plan,
    /// Array declarators being walked (their sizes must stay constant expressions).
    array_declarators: usize,
    subscripts: Vec<OpenSubscript>,
    misparsed: Option<MisparsedDecl>,
    /// The namespace macros the parse skipped (`BEGIN_ROCPRIM_NAMESPACE`), by position: each
    /// opens or closes namespaces of `ns` when the walk passes it.
    ns_events: Vec<(usize, crate::elide::NamespaceMacro)>,
    /// The next of `ns_events` to apply.
    ns_next: usize,
    /// The scopes the namespace macros opened, innermost last: `ns`'s length before each, and
    /// how many names it pushed (0 for an inline namespace).
    macro_ns: Vec<(usize, usize)>,
}

impl<'s> Lowerer<'s> {
    pub(crate) fn new(src: &'s [u8], kinds: &'s Kinds, elided: Plan) -> Self {
        let ns_events = elided
            .elided
            .iter()
            .filter_map(|e| e.namespace.clone().map(|n| (e.span.start, n)))
            .collect();
        Lowerer {
            src,
            kinds,
            out: SourceFile::default(),
            fns: Vec::new(),
            finished: Vec::new(),
            pops: Vec::new(),
            ns: Vec::new(),
            class_stack: Vec::new(),
            pending_pragma: None,
            pending_range: None,
            init_map: Vec::new(),
            init_stack: Vec::new(),
            collect_stack: Vec::new(),
            skip_ident: None,
            dangling_qual: None,
            macro_ints: HashMap::new(),
            recover: Vec::new(),
            macro_idx: HashMap::new(),
            skip_node: None,
            assign_map: Vec::new(),
            global_names: NameIndex::default(),
            elided,
            array_declarators: 0,
            subscripts: Vec::new(),
            misparsed: None,
            ns_events,
            ns_next: 0,
            macro_ns: Vec::new(),
        }
    }

    /// Opens and closes the namespaces of the namespace macros before `at` (their uses lie
    /// between declarations at namespace scope: every node the walk left before one has
    /// been left, and the next node entered begins after it). A closing macro closes only
    /// what a macro opened.
    fn namespace_macros_before(&mut self, at: usize) {
        while let Some((pos, effect)) = self.ns_events.get(self.ns_next) {
            if *pos > at {
                break;
            }
            match effect {
                crate::elide::NamespaceMacro::Open(scopes) => {
                    for name in scopes {
                        self.macro_ns
                            .push((self.ns.len(), usize::from(name.is_some())));
                        if let Some(n) = name {
                            self.ns.push(n.clone());
                            self.class_stack.push(None);
                        }
                    }
                }
                crate::elide::NamespaceMacro::Close(n) => {
                    for _ in 0..*n {
                        match self.macro_ns.last() {
                            Some(&(before, pushed)) if self.ns.len() == before + pushed => {
                                self.macro_ns.pop();
                                self.ns.truncate(before);
                                self.class_stack.truncate(before);
                            }
                            _ => break, // a scope the macro did not open is innermost
                        }
                    }
                }
            }
            self.ns_next += 1;
        }
    }

    /// The lowering of `tree` (a parse of `src` with the plan's ranges elided).
    pub(crate) fn run(self, tree: &Tree) -> SourceFile {
        let (mut file, parts) = self.run_parts(tree);
        assign_ids(&mut file.functions, &parts);
        file
    }

    /// Starts with the macros of `file` known (the `#define`s of the file whose text a macro
    /// expansion is parsed from): integer macros for trip counts, macro uses in bodies.
    pub(crate) fn with_macros_of(mut self, file: &SourceFile) -> Self {
        for m in &file.macros {
            self.macro_idx.insert(m.name.clone(), self.out.macros.len());
            self.out.macros.push(m.clone());
            if m.params.is_none() {
                let body = m.body.trim().trim_start_matches('(').trim_end_matches(')');
                if let Some(v) = parse_int_literal(body) {
                    self.macro_ints.insert(m.name.clone(), v);
                }
            }
        }
        self
    }

    /// [`Lowerer::run`] without the ids: the functions' [`IdParts`] beside them, for a caller
    /// that adds functions before the ids are assigned ([`assign_ids`]).
    pub(crate) fn run_parts(mut self, tree: &Tree) -> (SourceFile, Vec<IdParts>) {
        let mut cursor = tree.walk();
        let mut ancestors: Vec<Node<'_>> = Vec::new();
        'walk: loop {
            let node = cursor.node();
            let parent = ancestors.last().copied();
            // `field_id` walks the cursor stack: ask only where the field matters.
            let pk = parent.map_or(K::Other, |p| self.kinds.of(p.kind_id()));
            let needs_field = matches!(
                pk,
                K::FunctionDefinition
                    | K::InitDeclarator
                    | K::Declaration
                    | K::AssignmentExpression
            ) || (self.kinds.of(node.kind_id()) == K::Identifier
                && matches!(
                    pk,
                    K::AssignmentExpression
                        | K::Declaration
                        | K::FieldDeclaration
                        | K::HasDeclarator
                        | K::TypeDefinition
                        | K::ArrayDeclarator
                        | K::ForRangeLoop
                ));
            let field = if needs_field {
                cursor.field_id().map_or(0, |f| f.get())
            } else {
                0
            };
            let descend = self.enter(node, field, parent);
            if descend && cursor.goto_first_child() {
                ancestors.push(node);
                continue;
            }
            self.leave(node);
            loop {
                if cursor.goto_next_sibling() {
                    break;
                }
                if !cursor.goto_parent() {
                    break 'walk;
                }
                if let Some(p) = ancestors.pop() {
                    self.leave(p);
                }
            }
        }
        // Functions still open (cannot happen with a well-formed walk, but never lose one).
        while !self.fns.is_empty() {
            self.end_function();
        }
        self.finish()
    }

    /// The pragma of the loop whose keyword is at `kw`: a pragma macro the parse skipped right
    /// before it (`UNROLL_8 for`), if any.
    fn pragma_macro(&self, kw: Span) -> Option<Pragma> {
        let e = self.elided.pragma_before(self.src, kw.start)?;
        let crate::elide::Role::Pragma { hint, unknown } = e.role else {
            return None;
        };
        let (hint, syntax) = hint?;
        let _ = unknown;
        Some(Pragma {
            hint,
            syntax,
            span: e.span,
            macro_name: Some(e.name.clone()),
        })
    }

    fn in_body(&self, n: Node<'_>) -> bool {
        self.fns
            .last()
            .is_some_and(|f| n.start_byte() >= f.body_start)
    }

    fn enter(&mut self, node: Node<'_>, field: u16, parent: Option<Node<'_>>) -> bool {
        if self
            .ns_events
            .get(self.ns_next)
            .is_some_and(|(pos, _)| *pos <= node.start_byte())
        {
            self.namespace_macros_before(node.start_byte());
        }
        let k = self.kinds.of(node.kind_id());
        if let Some(p) = &self.pending_pragma {
            if node.start_byte() >= p.end
                && node.is_named()
                && k != K::Comment
                && !k.is_loop()
                && !matches!(
                    node.kind(),
                    "preproc_else" | "preproc_elif" | "preproc_elifdef" | "preproc_call"
                )
            {
                self.pending_pragma = None;
            }
        }
        if self.skip_node == Some(node.id()) {
            self.skip_node = None;
            return false;
        }
        if self.pending_range.is_some_and(|r| r == node.id()) {
            self.pending_range = None;
            self.range_call(node);
        }
        if let Some(m) = &self.misparsed {
            if m.type_node == node.id() {
                return false; // `ns::T < 32`: a type, no comparison
            }
            if m.init_node == Some(node.id()) {
                self.init_stack.push(DeclRef::Local(m.decl));
                self.pops.push((node.id(), Pop::Init));
            }
        }
        if node.is_missing() {
            self.out.parse_errors.push(ParseError {
                span: span_of(node),
                message: format!("missing {}", node.kind()),
            });
        }
        if field == fields().declarator
            && parent.is_some_and(|p| self.kinds.of(p.kind_id()) == K::FunctionDefinition)
            && !node.has_error()
        {
            return false; // the function's name and parameters: read by `start_function`
        }
        if (k == K::TemplateArgumentList
            || (field == fields().ty
                && node.child_count() > 0 // a bare `MACRO` in type position is a macro use
                && parent.is_some_and(|p| self.kinds.of(p.kind_id()) == K::Declaration)
                && !(k == K::ClassSpecifier && node.child_by_field_id(fields().body).is_some())))
            && !node.has_error()
        {
            // Types and template arguments: nothing a rule or transform reads.
            return false;
        }
        if field == fields().right && !self.assign_map.is_empty() {
            if let Some(p) = parent {
                if let Some(pos) = self.assign_map.iter().rposition(|(id, _)| *id == p.id()) {
                    let (_, i) = self.assign_map.swap_remove(pos);
                    self.init_stack.push(DeclRef::Assign(i));
                    self.pops.push((node.id(), Pop::Init));
                }
            }
        }
        if field == fields().value {
            if let Some(p) = parent {
                if self.kinds.of(p.kind_id()) == K::InitDeclarator {
                    if let Some(pos) = self.init_map.iter().rposition(|(id, _)| *id == p.id()) {
                        let (_, r) = self.init_map.swap_remove(pos);
                        self.init_stack.push(r);
                        self.pops.push((node.id(), Pop::Init));
                    }
                }
            }
        }
        match k {
            K::Comment | K::StringLike => {
                let mut s = span_of(node);
                // A `//` comment token of a CRLF file ends with the `\r`.
                while s.end > s.start && self.src.get(s.end - 1) == Some(&b'\r') {
                    s.end -= 1;
                }
                self.out.inert.push(s);
                return false;
            }
            K::Error => {
                self.out.parse_errors.push(ParseError {
                    span: span_of(node),
                    message: error_message(bytes_of(node, self.src)),
                });
                if !self.in_body(node) {
                    let found = recover::functions_in_error(node, self.src);
                    self.recover.extend(found);
                }
            }
            K::CompoundStatement | K::Other if !self.recover.is_empty() => {
                if let Some(pos) = self.recover.iter().position(|r| r.body == node.id()) {
                    let r = self.recover.swap_remove(pos);
                    self.start_recovered_function(node, r);
                }
            }
            K::PreprocDef | K::PreprocFunctionDef => {
                self.macro_def(node, k);
                self.child_comments(node);
                return false;
            }
            K::PreprocCall => {
                self.preproc_call(node, parent);
                self.child_comments(node);
                return false;
            }
            // C++ has no function defined inside a function body: the grammar's reading of a
            // statement macro with a block (`CUDA_KERNEL_LOOP(i, n) { ... }`).
            // (A member function of a local class is a definition: its parent is the class's
            // field list.)
            // Only a head that is `NAME(args)` alone: a definition with a type or specifiers
            // inside a body is a real function that an unbalanced `#if` nested there.
            K::FunctionDefinition
                if self.in_body(node)
                    && is_statement_macro(node)
                    && parent.is_some_and(|p| {
                        !matches!(
                            p.kind(),
                            "field_declaration_list"
                                | "template_declaration"
                                | "declaration_list"
                                | "linkage_specification"
                        )
                    }) =>
            {
                self.macro_block(node)
            }
            K::FunctionDefinition => self.start_function(node, parent),
            K::NamespaceDefinition | K::ClassSpecifier => {
                let name = match node.child_by_field_id(fields().name) {
                    Some(n) => join_tokens(tokens(&text_of(n, self.src))),
                    // As demanglers print them.
                    None if k == K::NamespaceDefinition => "(anonymous namespace)".into(),
                    None => types::anonymous_class_name(node, self.src),
                };
                let mut class = None;
                if k == K::ClassSpecifier {
                    let template =
                        parent.filter(|p| self.kinds.of(p.kind_id()) == K::TemplateDeclaration);
                    let src = self.src;
                    if let Some(t) = types::class_def(node, template, |n| self.qualify(n), src) {
                        class = Some(self.out.types.len());
                        self.out.types.push(t);
                    }
                }
                self.ns.push(name);
                self.class_stack.push(class);
                self.pops.push((node.id(), Pop::Ns));
            }
            K::TemplateInstantiation => {
                let d = node.child_by_field_id(fields().declarator);
                if let Some(parts) = d.and_then(|d| function_parts(d, self.src)) {
                    if !self.out.instantiated.contains(&parts.leaf) {
                        self.out.instantiated.push(parts.leaf);
                    }
                }
                return false;
            }
            K::NamespaceAlias => {
                let src = self.src;
                let name = node.child_by_field_id(fields().name);
                let mut c = node.walk();
                let target = node
                    .named_children(&mut c)
                    .filter(|n| Some(*n) != name)
                    .find(|n| {
                        matches!(
                            n.kind(),
                            "namespace_identifier" | "nested_namespace_specifier" | "identifier"
                        )
                    });
                if let (Some(n), Some(t)) = (name, target) {
                    let pair = (text_of(n, src), join_tokens(tokens(&text_of(t, src))));
                    if !self.out.namespace_aliases.contains(&pair) {
                        self.out.namespace_aliases.push(pair);
                    }
                }
                return false;
            }
            K::EnumSpecifier => {
                let src = self.src;
                if let Some(t) = types::enum_def(node, |n| self.qualify(n), src) {
                    self.out.types.push(t);
                }
            }
            K::TypeDefinition | K::AliasDeclaration => {
                let template =
                    parent.filter(|p| self.kinds.of(p.kind_id()) == K::TemplateDeclaration);
                let src = self.src;
                // An alias declared in a function body (`using T = typename RV::dtype;`) is the
                // function's own, qualified by it (`ns::f::T`): never a type of the namespace,
                // which every other function's `T` would find.
                let local = self
                    .fns
                    .last()
                    .filter(|_| self.in_body(node))
                    .map(|f| f.f.qualified_name.clone());
                let qualify = |n: &str| match &local {
                    Some(fq) => format!("{fq}::{n}"),
                    None => self.qualify(n),
                };
                let found = types::alias_defs(node, template, qualify, src);
                self.out.types.extend(found);
            }
            K::CompoundLiteral if self.in_body(node) => self.temporary(node),
            K::ForStatement | K::ForRangeLoop | K::WhileStatement | K::DoStatement
                if self.in_body(node) =>
            {
                self.start_loop(node, k, parent);
            }
            K::SwitchStatement if self.in_body(node) => {
                if let Some(fc) = self.fns.last_mut() {
                    fc.scopes.push(Scope::Switch);
                    self.pops.push((node.id(), Pop::Scope));
                }
            }
            K::LambdaExpression if self.in_body(node) => {
                if let Some(fc) = self.fns.last_mut() {
                    fc.scopes.push(Scope::Lambda);
                    fc.lambda_depth += 1;
                    fc.f.lambdas.push(span_of(node));
                    self.pops.push((node.id(), Pop::Lambda));
                }
            }
            K::BreakStatement | K::ContinueStatement | K::ReturnStatement | K::GotoStatement
                if self.in_body(node) =>
            {
                self.jump(node, k);
            }
            K::LabeledStatement if self.in_body(node) => {
                if let (Some(l), Some(fc)) =
                    (node.child_by_field_id(fields().label), self.fns.last_mut())
                {
                    fc.f.labels.push(Label {
                        name: text_of(l, self.src),
                        span: span_of(node),
                    });
                }
            }
            K::CallExpression => {
                self.call(node, parent);
                self.call_addresses(node);
            }
            K::GnuAsm if self.in_body(node) => self.inline_asm(node),
            K::Declaration | K::FieldDeclaration => {
                self.declaration(node, k);
                self.decl_addresses(node);
                if !self.in_body(node) && !node.has_error() {
                    // File/namespace/class-scope declarations hold nothing to lower beyond what
                    // `declaration` read, unless they define a class (member functions).
                    let defines_class = node.child_by_field_id(fields().ty).is_some_and(|t| {
                        self.kinds.of(t.kind_id()) == K::ClassSpecifier
                            && t.child_by_field_id(fields().body).is_some()
                    });
                    if !defines_class {
                        return false;
                    }
                }
            }
            K::Identifier | K::TypeIdentifier => self.ident(node, k, field, parent),
            K::ArrayDeclarator => {
                self.array_declarators += 1;
                self.pops.push((node.id(), Pop::ArrayDeclarator));
            }
            K::SubscriptArgumentList if self.in_body(node) => {
                if let Some(p) = parent {
                    if let Some(operand) = p.child_by_field_id(fields().argument) {
                        self.operator_call(p, operand, "[]");
                    }
                }
                if let Some(open) = parent.and_then(|p| open_subscript(p, node, self.src)) {
                    self.subscripts.push(open);
                    self.pops.push((node.id(), Pop::Subscript));
                }
            }
            K::BinaryExpression => {
                if self.in_body(node) {
                    self.misparsed_decl(node, parent);
                    self.operator_of(node, &[fields().left, fields().right]);
                }
                self.const_op(node)
            }
            K::AssignmentExpression => {
                if self.in_body(node) {
                    self.operator_of(node, &[fields().left]);
                }
                self.assignment(node);
                self.assignment_addresses(node);
            }
            K::UpdateExpression => {
                if self.in_body(node) {
                    self.operator_of(node, &[fields().argument]);
                }
                self.update_addresses(node)
            }
            _ => {}
        }
        true
    }

    fn leave(&mut self, node: Node<'_>) {
        let id = node.id();
        while self.pops.last().is_some_and(|(pid, _)| *pid == id) {
            let Some((_, pop)) = self.pops.pop() else {
                break;
            };
            match pop {
                Pop::Function => self.end_function(),
                Pop::Loop(idx) => self.end_loop(idx),
                Pop::Scope => {
                    if let Some(fc) = self.fns.last_mut() {
                        fc.scopes.pop();
                    }
                }
                Pop::Lambda => {
                    if let Some(fc) = self.fns.last_mut() {
                        fc.scopes.pop();
                        fc.lambda_depth = fc.lambda_depth.saturating_sub(1);
                    }
                }
                Pop::Ns => {
                    self.ns.pop();
                    self.class_stack.pop();
                }
                Pop::Init => {
                    self.init_stack.pop();
                }
                Pop::Collect => {
                    self.collect_stack.pop();
                }
                Pop::ArrayDeclarator => {
                    self.array_declarators = self.array_declarators.saturating_sub(1);
                }
                Pop::Subscript => {
                    self.subscripts.pop();
                }
            }
        }
        if self.fns.is_empty() {
            let k = self.kinds.of(node.kind_id());
            if matches!(k, K::Declaration | K::Error) {
                if let Some(d) = recover::dangling_qualifier(node, self.src) {
                    self.dangling_qual = Some(d);
                }
            } else if node.kind() == "expression_statement" {
                let found = self
                    .dangling_qual
                    .and_then(|d| recover::call_shaped_header(node, self.src, d));
                if let Some(r) = found {
                    self.dangling_qual = None;
                    self.recover.push(r);
                }
            }
        }
    }

    fn child_comments(&mut self, node: Node<'_>) {
        let mut c = node.walk();
        for ch in node.children(&mut c) {
            if self.kinds.of(ch.kind_id()) == K::Comment {
                self.out.inert.push(span_of(ch));
            }
        }
    }

    // ---------------------------------------------------------------- functions

    fn start_function(&mut self, node: Node<'_>, parent: Option<Node<'_>>) {
        let Some(body) = node.child_by_field_id(fields().body) else {
            return;
        };
        let src = self.src;
        let declarator = node.child_by_field_id(fields().declarator);
        let Some(parts) = declarator.and_then(|d| function_parts(d, src)) else {
            // A definition with a body that names no function (`MACRO namespace x { ... }`,
            // `struct ATTR_MACRO(16) S { ... }`): its body is not lowered as a function.
            // Say so where it is, unless the grammar already reported an error there.
            if !node.has_error() {
                let head = &src[node.start_byte()..body.start_byte().max(node.start_byte())];
                let head = String::from_utf8_lossy(head);
                let head: String = head.split_whitespace().collect::<Vec<_>>().join(" ");
                let head = match head.char_indices().nth(60) {
                    Some((i, _)) => format!("{}...", &head[..i]),
                    None => head,
                };
                self.out.parse_errors.push(ParseError {
                    span: span_of(node),
                    message: format!(
                        "`{head}` is not read as a function definition (a macro the tool cannot expand?); its body is not analysed"
                    ),
                });
            }
            return;
        };
        let name = parts.leaf;
        let (with_args, qualified_name) = self.names(&parts.written);

        // Declaration specifiers: qualifiers, storage class, launch bounds, macro candidates.
        let (mut global, mut device, mut host, mut is_static) = (false, false, false, false);
        let mut launch_bounds = None;
        let mut qual_candidates = Vec::new();
        let skip = [declarator.map(|d| d.id()), Some(body.id())];
        let mut c = node.walk();
        for ch in node.children(&mut c) {
            if skip.contains(&Some(ch.id())) {
                continue;
            }
            let mut stack = vec![ch];
            let mut budget = 256;
            while let Some(n) = stack.pop() {
                budget -= 1;
                if budget == 0 {
                    break;
                }
                if n.kind() == "launch_bounds" {
                    let mut c2 = n.walk();
                    launch_bounds = Some(
                        n.named_children(&mut c2)
                            .filter(|a| a.kind() != "comment")
                            .map(|a| text_of(a, src))
                            .collect(),
                    );
                    global = true;
                    continue;
                }
                if n.child_count() == 0 {
                    match bytes_of(n, src) {
                        b"__global__" => global = true,
                        b"__device__" => device = true,
                        b"__host__" => host = true,
                        b"static" => is_static = true,
                        _ => {
                            if matches!(n.kind(), "identifier" | "type_identifier") {
                                qual_candidates.push(text_of(n, src));
                            }
                        }
                    }
                } else {
                    let mut c3 = n.walk();
                    let children: Vec<_> = n.children(&mut c3).collect();
                    stack.extend(children.into_iter().rev());
                }
            }
        }
        // Specifier macros the parse skipped (`DINLINE float& f()`): between the previous
        // sibling (or the parent's start) and the declarator.
        let lo = {
            let mut prev = node.prev_sibling();
            while let Some(p) = prev.filter(|p| self.kinds.of(p.kind_id()) == K::Comment) {
                prev = p.prev_sibling();
            }
            match prev {
                Some(p) => p.end_byte(),
                // The root starts at its first included byte: what the parse skipped before it
                // is the first definition's.
                None => parent
                    .filter(|p| p.parent().is_some())
                    .map_or(0, |p| p.start_byte()),
            }
        };
        let hi = declarator.map_or(node.start_byte(), |d| d.start_byte());
        let mut first_elided = None;
        let mut elided_qualifier = None;
        let mut unseen_specifiers: Vec<String> = Vec::new();
        let elided: Vec<&crate::elide::Elided> = self
            .elided
            .within(lo, hi)
            .iter()
            .filter(|e| e.is_specifier())
            .collect();
        let mut front = 0;
        for (k, e) in elided.into_iter().enumerate() {
            if k == 0 {
                first_elided = Some(e.span);
            }
            if e.is_unknown() {
                // Defined nowhere in the file: no qualifier, no macro of the file to read.
                if !unseen_specifiers.contains(&e.name) {
                    unseen_specifiers.push(e.name.clone());
                }
                continue;
            }
            is_static |= e.is_static;
            match e.kind {
                Some(FunctionKind::Kernel) => global = true,
                Some(FunctionKind::Device) => device = true,
                _ => {}
            }
            if e.kind.is_some() && elided_qualifier.is_none() {
                elided_qualifier = Some(e.name.clone());
            }
            qual_candidates.insert(front, e.name.clone());
            front += 1;
        }
        let mut recovered = false;
        if !global && !device {
            if let Some((end, kind)) = self.dangling_qual.take() {
                if end <= node.start_byte()
                    && recover::only_directives_and_attributes(&src[end..node.start_byte()])
                {
                    global = kind == FunctionKind::Kernel;
                    device = kind == FunctionKind::Device;
                    recovered = true;
                }
            }
        }
        self.dangling_qual = None;
        let mut kind = if global {
            FunctionKind::Kernel
        } else if device || (!host && !unseen_specifiers.is_empty()) {
            // An unknown specifier macro (`CUTLASS_DEVICE`) is taken for `__device__`: its
            // function is analysed rather than skipped as host code.
            FunctionKind::Device
        } else {
            FunctionKind::Host
        };
        let mut qualifier_macro = elided_qualifier;
        if kind == FunctionKind::Host && !self.macro_idx.is_empty() {
            let macros = &self.out.macros;
            let idx = &self.macro_idx;
            let lookup = |n: &str| idx.get(n).map(|&i| &macros[i]);
            if let Some((c, k)) = qual_candidates
                .iter()
                .find_map(|c| qualifier_through_macros(c, &lookup).map(|k| (c, k)))
            {
                kind = k;
                qualifier_macro = Some(c.clone());
            }
        }
        if kind == FunctionKind::Host
            && !body.has_error()
            && !holds_device_code(bytes_of(body, src))
        {
            // Host code is never analysed: do not lower its body (saves most of the walk on
            // host-heavy files). Its qualifiers could still come from a macro defined later.
            // A body holding device code is lowered: a `__device__` lambda or a local class
            // with device members passed to a kernel template is what the kernel calls.
            self.skip_node = Some(body.id());
        }
        let is_template =
            parent.is_some_and(|p| self.kinds.of(p.kind_id()) == K::TemplateDeclaration);
        let template_params = match parent {
            Some(p) if is_template => types::template_param_names(p, src),
            _ => Vec::new(),
        };
        let class_name = self
            .class_stack
            .last()
            .copied()
            .flatten()
            .map(|i| self.out.types[i].qualified_name.clone());
        let mut span = match parent {
            Some(p) if is_template => span_of(p),
            _ => span_of(node),
        };
        if let Some(e) = first_elided.filter(|e| e.start < span.start) {
            (span.start, span.line, span.column) = (e.start, e.line, e.column);
        }
        let mut params = Vec::new();
        let mut param_types: Vec<String> = Vec::new();
        if let Some(pl) = parts.params {
            let mut c = pl.walk();
            for p in pl.named_children(&mut c) {
                if !p.kind().contains("parameter_declaration") {
                    continue;
                }
                let type_text = p
                    .child_by_field_id(fields().ty)
                    .map(|t| text_of(t, src))
                    .unwrap_or_default();
                let (pname, _, is_ptr) = declarator_name(p.child_by_field_id(fields().declarator));
                param_types.push(param_type(p, pname, src));
                params.push(Param {
                    name: pname.map(|n| text_of(n, src)).unwrap_or_default(),
                    type_text,
                    span: span_of(p),
                    is_pointer_or_ref: is_ptr,
                });
            }
        }
        if param_types.len() == 1 && param_types[0] == "void" {
            param_types.clear(); // `f(void)`
        }
        let signature = format!("({})", param_types.join(", "));
        // What it returns when that may be an object of a class (a pointer never is).
        let return_type = node
            .child_by_field_id(fields().ty)
            .filter(|_| declarator.is_some_and(|d| d.kind() != "pointer_declarator"))
            .and_then(|t| normal_type(&text_of(t, src)))
            .filter(|t| may_overload(t));
        let arity = parts
            .params
            .and_then(|pl| arity_of(pl, src))
            .filter(|_| !recovered);
        let f = Function {
            return_type,
            arity,
            is_template,
            is_static,
            launch_bounds,
            qualifier_macro,
            params,
            recovered,
            template_params,
            class_name,
            unseen_specifiers,
            signature: Some(signature.clone()),
            ..blank_function(
                name,
                qualified_name,
                kind,
                span,
                parts.leaf_span,
                span_of(body),
            )
        };
        let id_parts = IdParts {
            with_args,
            signature: Some(signature),
        };
        self.open_function(f, body.start_byte(), node.id(), qual_candidates, id_parts);
    }

    /// Makes `f` the current function until the walk leaves the node `close`: the one place a
    /// [`FnCtx`] is built.
    fn open_function(
        &mut self,
        f: Function,
        body_start: usize,
        close: usize,
        qual_candidates: Vec<String>,
        id_parts: IdParts,
    ) {
        let mut f = f;
        f.specialised_name = crate::identity::class_args_written(&id_parts.with_args);
        self.fns.push(FnCtx {
            f,
            body_start,
            scopes: Vec::new(),
            lambda_depth: 0,
            loop_stack: Vec::new(),
            writes: HashMap::new(),
            extra_refs: Vec::new(),
            qual_candidates,
            id_parts,
            decl_names: NameIndex::default(),
        });
        self.pops.push((close, Pop::Function));
    }

    /// `ns::Class::name` for a function recovered at the current position.
    fn qualify(&self, name: &str) -> String {
        let mut q: Vec<&str> = self.ns.iter().map(|s| s.as_str()).collect();
        q.push(name);
        q.join("::")
    }

    /// The qualified name of a function named `name` as written here, with its template
    /// arguments (for ids) and without them.
    fn names(&self, name: &str) -> (String, String) {
        let with_args = self.qualify(&join_tokens(tokens(name)));
        let qualified_name = strip_template_args(&with_args);
        (with_args, qualified_name)
    }

    fn start_recovered_function(&mut self, body: Node<'_>, r: Recovered) {
        let mut span = r.start;
        span.end = r.close.map_or(body.end_byte(), |(_, end)| end);
        let mut body_span = span_of(body);
        body_span.end = span.end;
        let (with_args, qualified_name) = self.names(&r.name);
        let mut f = blank_function(
            r.name.clone(),
            qualified_name,
            r.kind,
            span,
            r.name_span,
            body_span,
        );
        f.recovered = true;
        let id_parts = IdParts {
            with_args,
            signature: None,
        };
        let close = r.close.map_or(body.id(), |(id, _)| id);
        self.open_function(f, body.start_byte(), close, r.qual_candidates, id_parts);
    }

    /// Kernels whose body the grammar read as an initializer list (see
    /// [`recover::stub_kernels`]): kept, with no loops, as recovered functions.
    fn stub_kernels(&mut self, node: Node<'_>, declarators: &[Node<'_>]) {
        for stub in recover::stub_kernels(node, declarators, self.src) {
            let (with_args, qualified_name) = self.names(&stub.name);
            let mut f = blank_function(
                stub.name,
                qualified_name,
                stub.kind,
                stub.span,
                stub.name_span,
                stub.body,
            );
            f.recovered = true;
            self.finished.push(Finished {
                f,
                qual_candidates: Vec::new(),
                extra_refs: Vec::new(),
                id_parts: IdParts {
                    with_args,
                    signature: None,
                },
            });
        }
    }

    fn end_function(&mut self) {
        let Some(fc) = self.fns.pop() else { return };
        self.finished.push(Finished {
            f: fc.f,
            qual_candidates: fc.qual_candidates,
            extra_refs: fc.extra_refs,
            id_parts: fc.id_parts,
        });
    }

    // ---------------------------------------------------------------- loops and jumps

    fn start_loop(&mut self, node: Node<'_>, k: K, parent: Option<Node<'_>>) {
        let src = self.src;
        let pragma = match self.pending_pragma.take() {
            Some(p) if parent.is_some_and(|par| par.id() == p.parent) => Some(p.pragma),
            _ => None,
        };
        let pragma = pragma.or_else(|| {
            let kw = node.child(0).map(span_of)?;
            self.pragma_macro(kw)
        });
        let Some(fc) = self.fns.last_mut() else {
            return;
        };
        let idx = fc.f.loops.len();
        let parent_loop = fc.loop_stack.last().copied();
        let depth = parent_loop.map(|p| fc.f.loops[p].depth + 1).unwrap_or(0);
        let keyword = node.child(0).map(span_of).unwrap_or_else(|| span_of(node));
        let mut body = node.child_by_field_id(fields().body);
        // `for (...)` + `#pragma unroll` + `for (...) stmt;`: the grammar ends the outer loop
        // with a MISSING `;` and leaves the inner loop as a sibling. Re-attach it as the body.
        let repaired = body
            .filter(|b| recover::is_missing_statement(*b))
            .and_then(|_| recover::repaired_body(node, self.kinds));
        let mut loop_span = span_of(node);
        let mut end_line = node.end_position().row as u32 + 1;
        if let Some((stmt, last)) = repaired {
            body = Some(stmt);
            loop_span.end = last.end_byte();
            end_line = last.end_position().row as u32 + 1;
        }
        // `for (...) MACRO(args) { ... }`: the grammar ends the loop at the macro call with a
        // MISSING `;` and leaves the block as the next statement. The body runs to its end.
        let macro_block = match (repaired, body) {
            (None, Some(b)) => recover::statement_macro_block(b),
            _ => None,
        };
        let mut body_span = body.map(span_of).unwrap_or_else(|| span_of(node));
        if let Some(block) = macro_block {
            body_span.end = block.end_byte();
            loop_span.end = block.end_byte();
            end_line = block.end_position().row as u32 + 1;
        }
        // `for (...) NV_IF_TARGET(C, (a; b;))`: the parse reads `for (...) a;` then `b;` (see
        // `scan::Found::Statements`); the loop runs to the end of the call.
        if let Some(end) = self
            .elided
            .statement_macro_end(loop_span.start, loop_span.end)
        {
            end_line += src[loop_span.end..end]
                .iter()
                .filter(|&&b| b == b'\n')
                .count() as u32;
            body_span.end = end;
            loop_span.end = end;
        }
        let (kind, init, condition, update, header) = match k {
            K::ForStatement => {
                let init = node.child_by_field_id(fields().initializer).map(|i| {
                    let mut s = span_of(i);
                    if s.end > s.start && src.get(s.end - 1) == Some(&b';') {
                        s.end -= 1;
                    }
                    s
                });
                (
                    LoopKind::For,
                    init,
                    node.child_by_field_id(fields().condition).map(span_of),
                    node.child_by_field_id(fields().update).map(span_of),
                    for_header(node, src),
                )
            }
            K::ForRangeLoop => {
                let start = node
                    .child_by_field_id(fields().ty)
                    .or_else(|| node.child_by_field_id(fields().declarator));
                let end = node.child_by_field_id(fields().declarator);
                let init = match (start, end) {
                    (Some(s), Some(e)) => {
                        let mut sp = span_of(s);
                        sp.end = e.end_byte();
                        Some(sp)
                    }
                    _ => None,
                };
                (
                    LoopKind::RangeFor,
                    init,
                    node.child_by_field_id(fields().right).map(span_of),
                    None,
                    None,
                )
            }
            K::WhileStatement => {
                let cond = node.child_by_field_id(fields().condition).map(|c| {
                    c.child_by_field_id(fields().value)
                        .map(span_of)
                        .unwrap_or_else(|| inner_span(c))
                });
                (LoopKind::While, None, cond, None, None)
            }
            _ => {
                let cond = node.child_by_field_id(fields().condition).map(inner_span);
                (LoopKind::Do, None, cond, None, None)
            }
        };
        // Names in the header resolve to object-like integer macros and `const`/`constexpr`
        // integers declared before the loop (file scope or this function).
        if header.is_some() {
            fc.decl_names.sync(&fc.f.decls);
            self.global_names.sync(&self.out.globals);
        }
        let trip_count = header.as_ref().and_then(|h| {
            let macro_ints = &self.macro_ints;
            let globals = &self.out.globals;
            let locals = &fc.f.decls;
            let (local_names, global_names) = (&fc.decl_names, &self.global_names);
            let resolve = |n: &str| -> Option<i128> {
                let is_const = |d: &&VarDecl| d.is_const;
                local_names
                    .get(n)
                    .map(|i| &locals[i])
                    .filter(is_const)
                    .and_then(|d| d.init_int)
                    .or_else(|| macro_ints.get(n).copied())
                    .or_else(|| {
                        global_names
                            .get(n)
                            .map(|i| &globals[i])
                            .filter(is_const)
                            .and_then(|d| d.init_int)
                    })
            };
            trip_count_with(h, &resolve)
        });
        fc.f.loops.push(Loop {
            index: idx,
            kind,
            span: loop_span,
            end_line,
            keyword,
            parent: parent_loop,
            depth,
            init,
            condition,
            update,
            body: body_span,
            body_is_block: body.is_some_and(|b| b.kind() == "compound_statement"),
            pragma,
            header,
            trip_count,
        });
        fc.scopes.push(Scope::Loop(idx));
        fc.loop_stack.push(idx);
        if k == K::ForRangeLoop {
            // Recorded when the walk reaches the range expression: calls stay in source order.
            self.pending_range = node.child_by_field_id(fields().right).map(|r| r.id());
        }
        let close = match (repaired, macro_block) {
            (Some((_, last)), _) => last.id(),
            (None, Some(block)) => block.id(),
            (None, None) => node.id(),
        };
        self.pops.push((close, Pop::Loop(idx)));
    }

    fn end_loop(&mut self, idx: usize) {
        let Some(fc) = self.fns.last_mut() else {
            return;
        };
        fc.scopes.pop();
        fc.loop_stack.pop();
        let Some(l) = fc.f.loops.get_mut(idx) else {
            return;
        };
        if l.trip_count.is_some() {
            if let Some(h) = &l.header {
                // A write to the induction variable in the body makes the count unknown.
                if let Some(ws) = fc.writes.get(&h.var) {
                    let first = ws.partition_point(|&p| p < l.body.start);
                    if ws.get(first).is_some_and(|&p| p < l.body.end) {
                        l.trip_count = None;
                    }
                }
            }
        }
    }

    fn jump(&mut self, node: Node<'_>, k: K) {
        let src = self.src;
        let Some(fc) = self.fns.last_mut() else {
            return;
        };
        let (kind, target) = match k {
            K::BreakStatement => {
                // The innermost loop or switch; nothing when a lambda is nearer.
                let t = fc.scopes.last().and_then(|s| match s {
                    Scope::Loop(i) => Some(JumpTarget::Loop(*i)),
                    Scope::Switch => Some(JumpTarget::Switch),
                    Scope::Lambda => None,
                });
                (JumpKind::Break, t)
            }
            K::ContinueStatement => {
                let t = fc.scopes.iter().rev().find_map(|s| match s {
                    Scope::Loop(i) => Some(Some(JumpTarget::Loop(*i))),
                    Scope::Switch => None,
                    Scope::Lambda => Some(None),
                });
                (JumpKind::Continue, t.flatten())
            }
            K::ReturnStatement => {
                let t = if fc.lambda_depth > 0 {
                    JumpTarget::Lambda
                } else {
                    JumpTarget::Function
                };
                (JumpKind::Return, Some(t))
            }
            _ => {
                let l = node
                    .child_by_field_id(fields().label)
                    .map(|l| text_of(l, src))
                    .unwrap_or_default();
                (JumpKind::Goto, Some(JumpTarget::Label(l)))
            }
        };
        if let Some(target) = target {
            fc.f.jumps.push(Jump {
                kind,
                target,
                span: span_of(node),
            });
        }
    }

    // ---------------------------------------------------------------- calls, names, declarations

    fn call(&mut self, node: Node<'_>, parent: Option<Node<'_>>) {
        if self
            .misparsed
            .as_ref()
            .is_some_and(|m| m.shell_node == node.id())
        {
            return; // `ns::T<32> name(args)`: a constructor, no call
        }
        let src = self.src;
        let Some(func) = node.child_by_field_id(fields().function) else {
            return;
        };
        // `std::forward<F>(f)(i)`, `std::move(f)(i)`, `static_cast<F&&>(f)(i)`: a call of `f`.
        let func = forwarded(func, src).unwrap_or(func);
        if matches!(
            func.kind(),
            "compound_literal_expression" | "call_expression"
        ) {
            self.temporary_call(node, func);
            return;
        }
        let mut receiver = None;
        let mut receiver_node = None;
        let mut qualifier = None;
        let mut template_args = None;
        let mut qual_start = None;
        let mut qual_head = None;
        let mut cur = func;
        let mut callee_node = None;
        let mut indirect = false;
        let mut deref = false;
        for _ in 0..64 {
            match cur.kind() {
                "identifier" | "field_identifier" | "type_identifier" | "primitive_type" => {
                    callee_node = Some(cur);
                    break;
                }
                // `(f)(i)`, `(*f)(i)`: a call of `f` (a pointer to a function or a callable).
                "parenthesized_expression" => match cur.named_child(0) {
                    Some(n) if n.kind() != "comment" => cur = n,
                    _ => break,
                },
                "pointer_expression"
                    if cur
                        .child_by_field_id(fields().operator)
                        .is_some_and(|o| o.kind() == "*") =>
                {
                    deref = true;
                    match cur.child_by_field_id(fields().argument) {
                        Some(n) => cur = n,
                        None => break,
                    }
                }
                // `x.template f<N>()`, `T::template f<N>()`.
                "dependent_name" => match cur.named_child(0) {
                    Some(n) => cur = n,
                    None => break,
                },
                "qualified_identifier" => {
                    let Some(n) = cur.child_by_field_id(fields().name) else {
                        break;
                    };
                    // The qualifier is everything before the last name (`a::b` of
                    // `a::b::f`, `::ns` of `::ns::f`), read once the last name is found.
                    qual_start.get_or_insert(cur.start_byte());
                    if qual_head.is_none() {
                        qual_head = Some(cur.child_by_field_id(fields().scope));
                    }
                    cur = n;
                }
                "template_function" | "template_method" => {
                    if template_args.is_none() {
                        template_args = cur
                            .child_by_field_id(fields().arguments)
                            .map(|a| join_tokens(tokens(&text_of(a, src))));
                    }
                    match cur.child_by_field_id(fields().name) {
                        Some(n) => cur = n,
                        None => break,
                    }
                }
                // `(o.*pm)(x)`, `(p->*pm)(x)` (the latter an ERROR to the grammar), `(c ? f :
                // g)(x)`, `table[k](x)` on no local: a call of a pointer no name answers.
                "field_expression"
                    if cur
                        .child_by_field_id(fields().operator)
                        .is_some_and(|o| matches!(o.kind(), ".*" | "->*")) =>
                {
                    indirect = true;
                    break;
                }
                "conditional_expression" | "ERROR" => {
                    indirect = true;
                    break;
                }
                "subscript_expression" => {
                    // `ops[k](x)` on a local or parameter array: a call of that variable
                    // (its element type is its declared type); else of the array's name.
                    match cur.child_by_field_id(fields().argument) {
                        Some(a) if a.kind() == "identifier" => cur = a,
                        _ => {
                            indirect = true;
                            break;
                        }
                    }
                }
                "field_expression" => {
                    receiver_node = cur.child_by_field_id(fields().argument);
                    receiver = receiver_node.map(|a| text_of(a, src));
                    match cur.child_by_field_id(fields().field) {
                        Some(f) => cur = f,
                        None => break,
                    }
                }
                _ => break,
            }
        }
        if indirect {
            self.indirect_call(node, func);
            return;
        }
        let Some(cn) = callee_node else { return };
        let callee = text_of(cn, src);
        // `(x)(...)` is a call of `x` only where `x` is a local or a parameter: else a cast
        // (`(ulong)(v)`) or a global pointer nothing here resolves. `(*x)(...)` is always a
        // call (of a pointer: a global one is a plain call of its name).
        let through_parens = func.kind() == "parenthesized_expression";
        if through_parens
            && !deref
            && (cn.kind() != "identifier" || self.type_of_variable(&callee).is_none())
        {
            return;
        }
        // A statement macro written without `;` before a call of a global name
        // (`CHECK_WARP` then `::lib::copy(x);`) reads as the call's first qualifier: the
        // name, in capitals and apart from its `::`, is a use of the macro, and the
        // qualifier starts after it.
        let mut q0 = qual_start;
        if let Some(head) = qual_head.flatten().filter(|h| {
            h.kind() == "namespace_identifier"
                && crate::macro_like(&text_of(*h, src))
                && src
                    .get(h.end_byte())
                    .is_some_and(|b| b.is_ascii_whitespace())
        }) {
            let name = text_of(head, src);
            self.glued_macro(name, span_of(head));
            q0 = Some(head.end_byte());
        }
        if let Some(q0) = q0.filter(|&q0| q0 < cn.start_byte()) {
            let q = join_tokens(tokens(&String::from_utf8_lossy(&src[q0..cn.start_byte()])));
            let q = q.strip_suffix("template").unwrap_or(&q).trim_end();
            let q = q.strip_suffix("::").unwrap_or(q).trim();
            qualifier = Some(q.to_string());
        }
        let args_node = node.child_by_field_id(fields().arguments);
        let mut arg_spans = Vec::new();
        let mut arg_nodes = Vec::new();
        if let Some(a) = args_node {
            let mut c = a.walk();
            for ch in a.named_children(&mut c) {
                if ch.kind() != "comment" {
                    arg_spans.push(span_of(ch));
                    arg_nodes.push(ch);
                }
            }
        }
        let arg_pack = arg_nodes
            .iter()
            .any(|a| a.kind() == "parameter_pack_expansion");
        if cn.kind() == "identifier" {
            self.skip_ident = Some(cn.id());
        }
        if callee == "_Pragma" {
            // `_Pragma("unroll") for (...)`: the pragma applies to the next statement.
            if let (Some(a), Some(stmt)) = (arg_nodes.first(), parent) {
                let t = text_of(*a, src);
                let t = t
                    .trim()
                    .trim_start_matches(['L', 'u', 'U', '8'])
                    .trim_matches('"')
                    .replace("\\\"", "\"");
                let ints = &self.macro_ints;
                if let Some((hint, syntax)) = parse_pragma_text(&t, |n| ints.get(n).copied()) {
                    if let Some(gp) = stmt.parent() {
                        self.pending_pragma = Some(PendingPragma {
                            pragma: Pragma {
                                hint,
                                syntax,
                                span: span_of(node),
                                macro_name: None,
                            },
                            parent: if stmt.kind() == "expression_statement" {
                                gp.id()
                            } else {
                                stmt.id()
                            },
                            end: if stmt.kind() == "expression_statement" {
                                stmt.end_byte()
                            } else {
                                node.end_byte()
                            },
                        });
                    }
                }
            }
            return;
        }
        if callee == "HIP_DYNAMIC_SHARED" {
            if let Some(n) = arg_nodes.get(1) {
                self.add_shared(
                    text_of(*n, src).trim().to_string(),
                    SharedKind::HipDynamicMacro,
                    span_of(node),
                    node,
                    Vec::new(),
                );
            }
        }
        if !self.in_body(node) {
            return;
        }
        let arg_ints = arg_nodes.iter().map(|a| int_value(*a, src)).collect();
        let (form, receiver_type) = match receiver_node {
            Some(r) => (CallForm::Method, self.type_of_receiver(r)),
            None if qualifier.is_none() && cn.kind() == "identifier" => {
                match self.type_of_variable(&callee) {
                    Some(t) => (CallForm::Variable, t),
                    None => (CallForm::Plain, None),
                }
            }
            None => (CallForm::Plain, None),
        };
        let Some(fc) = self.fns.last_mut() else {
            return;
        };
        if cn.kind() == "identifier" && receiver.is_none() {
            fc.extra_refs.push(MacroRef {
                name: callee.clone(),
                span: span_of(cn),
            });
        }
        fc.f.calls.push(Call {
            callee,
            receiver,
            qualifier,
            span: span_of(node),
            callee_span: span_of(cn),
            args: args_node.map(span_of).unwrap_or_else(|| span_of(node)),
            arg_spans,
            arg_ints,
            form,
            receiver_span: receiver_node.map(span_of),
            receiver_type,
            template_args,
            arg_pack,
        });
    }

    /// `NAME(args) { ... }` inside a function body, which the grammar reads as a nested
    /// function definition: a statement macro (`CUDA_KERNEL_LOOP(i, n) { ... }`, often a loop
    /// header) and its block. The block is the enclosing function's code (its barriers, atomics,
    /// loops and jumps are the function's and its loops'; a `break` in it is taken as leaving
    /// the enclosing loop, which is on the safe side when the macro is itself a loop), and the
    /// macro is a call to `NAME` (what its replacement list calls is reached through it).
    fn macro_block(&mut self, node: Node<'_>) {
        let src = self.src;
        let declarator = node.child_by_field_id(fields().declarator);
        let Some(parts) = declarator.and_then(|d| function_parts(d, src)) else {
            return;
        };
        let mut arg_spans = Vec::new();
        if let Some(params) = parts.params {
            let mut c = params.walk();
            for ch in params.named_children(&mut c) {
                if ch.kind() != "comment" {
                    arg_spans.push(span_of(ch));
                }
            }
        }
        let Some(fc) = self.fns.last_mut() else {
            return;
        };
        fc.extra_refs.push(MacroRef {
            name: parts.leaf.clone(),
            span: parts.leaf_span,
        });
        let head = Span {
            start: node.start_byte(),
            end: node
                .child_by_field_id(fields().body)
                .map_or(node.end_byte(), |b| b.start_byte()),
            ..span_of(node)
        };
        fc.f.calls.push(Call {
            callee: parts.leaf,
            receiver: None,
            qualifier: None,
            span: head,
            callee_span: parts.leaf_span,
            args: parts.params.map_or(head, span_of),
            arg_ints: vec![None; arg_spans.len()],
            arg_spans,
            form: CallForm::Plain,
            receiver_span: None,
            receiver_type: None,
            template_args: None,
            arg_pack: false,
        });
    }

    /// The operator of `node` (a binary, compound-assignment or update expression) applied to
    /// its operands in `operand_fields`: see [`Self::operator_call`]. Plain `=` counts on its
    /// left operand (a class's copy or converting assignment, `c = v`).
    fn operator_of(&mut self, node: Node<'_>, operand_fields: &[u16]) {
        let Some(op) = node.child_by_field_id(fields().operator) else {
            return;
        };
        let op = text_of(op, self.src);
        for &f in operand_fields {
            if let Some(operand) = node.child_by_field_id(f) {
                self.operator_call(node, operand, &op);
            }
        }
    }

    /// Records `operator<op>` of the variable `operand` (an identifier naming a local or a
    /// parameter whose declared type may be a class) as a [`CallForm::Operator`] call at
    /// `node`'s span.
    fn operator_call(&mut self, node: Node<'_>, operand: Node<'_>, op: &str) {
        if self.kinds.of(operand.kind_id()) != K::Identifier {
            return;
        }
        self.object_call(
            operand,
            format!("operator{op}"),
            CallForm::Operator,
            span_of(node),
        );
    }

    /// A read of the variable `ident` where C++ converts it implicitly or by a cast (an
    /// initialiser, an assignment's value, an argument, a return value, a cast's operand, a
    /// condition, an index, a braced list's element): when its declared type may be a class,
    /// a [`CallForm::Convert`] call of that class's conversion operators.
    fn conversion_call(&mut self, ident: Node<'_>, parent: Option<Node<'_>>) {
        let Some(p) = parent else { return };
        let is = |f: u16| p.child_by_field_id(f).map(|c| c.id()) == Some(ident.id());
        let converts = match p.kind() {
            "init_declarator" => is(fields().value),
            "assignment_expression" => is(fields().right),
            "argument_list"
            | "return_statement"
            | "condition_clause"
            | "subscript_argument_list"
            | "initializer_list"
            | "cast_expression" => true,
            _ => false,
        };
        if !converts {
            return;
        }
        self.convert_named(ident);
    }

    /// A [`CallForm::Convert`] call of the variable named by `ident` (an identifier, or a
    /// type identifier the grammar misread), when it is a local object that may be a class.
    fn convert_named(&mut self, ident: Node<'_>) {
        self.object_call(ident, "operator".into(), CallForm::Convert, span_of(ident));
    }

    /// A `form` call `callee` on the variable `ident` (at `span`) when it is a local object
    /// that may be a class ([`Self::object_type`]): what the guards look up in its class.
    fn object_call(&mut self, ident: Node<'_>, callee: String, form: CallForm, span: Span) {
        let name = text_of(ident, self.src);
        let Some(t) = self.object_type(&name) else {
            return;
        };
        let Some(fc) = self.fns.last_mut() else {
            return;
        };
        fc.f.calls.push(Call {
            callee,
            receiver: Some(name),
            qualifier: None,
            span,
            callee_span: span_of(ident),
            args: span,
            arg_spans: Vec::new(),
            arg_ints: Vec::new(),
            form,
            receiver_span: Some(span_of(ident)),
            receiver_type: Some(t),
            template_args: None,
            arg_pack: false,
        });
    }

    /// The declared type of the local variable or parameter `name` when it is an object (no
    /// pointer, no array) of a type that may be a class (no scalar or vector type).
    fn object_type(&mut self, name: &str) -> Option<String> {
        let fc = self.fns.last_mut()?;
        fc.decl_names.sync(&fc.f.decls);
        let src = self.src;
        // The declared type, and the declaration's text before and after the name (a `*` or
        // an array bound there: no class object).
        let (written, before, after) = match fc.decl_names.get(name) {
            Some(i) => {
                let d = &fc.f.decls[i];
                (
                    d.type_text.clone(),
                    &src[d.span.start..d.name_span.start],
                    &src[d.name_span.end..d.span.end.max(d.name_span.end)],
                )
            }
            None => match fc.f.params.iter().find(|p| p.name == name) {
                Some(p) => {
                    let text = &src[p.span.start..p.span.end];
                    let at = find_word(text, name.as_bytes()).unwrap_or(text.len());
                    (
                        p.type_text.clone(),
                        &text[..at],
                        &text[(at + name.len()).min(text.len())..],
                    )
                }
                None => return None,
            },
        };
        if written.contains('*') || written.contains('[') || !is_object(before, after) {
            return None;
        }
        normal_type(&written).filter(|t| may_overload(t))
    }

    /// The calls a range-for makes on its range expression `range` ([`CallForm::Range`]): its
    /// type from a variable's declaration, `this`, or a temporary's written type.
    fn range_call(&mut self, range: Node<'_>) {
        let src = self.src;
        let receiver_type = match range.kind() {
            "identifier" | "this" | "parenthesized_expression" | "pointer_expression" => {
                self.type_of_receiver(range)
            }
            "compound_literal_expression" => range
                .child_by_field_id(fields().ty)
                .and_then(|t| normal_type(&text_of(t, src))),
            // `R(n)` names a class the guards look up; a function's result is not known here.
            "call_expression" => range
                .child_by_field_id(fields().function)
                .filter(|f| {
                    matches!(
                        f.kind(),
                        "identifier" | "qualified_identifier" | "template_function"
                    )
                })
                .and_then(|f| normal_type(&text_of(f, src))),
            _ => None,
        };
        let Some(fc) = self.fns.last_mut() else {
            return;
        };
        fc.f.calls.push(Call {
            callee: "begin".into(),
            receiver: Some(text_of(range, src)),
            qualifier: None,
            span: span_of(range),
            callee_span: span_of(range),
            args: span_of(range),
            arg_spans: Vec::new(),
            arg_ints: Vec::new(),
            form: CallForm::Range,
            receiver_span: Some(span_of(range)),
            receiver_type,
            template_args: None,
            arg_pack: false,
        });
    }

    /// `F{}(p)`, `F()(p)`: `operator()` of a temporary of type `F` (the temporary itself is
    /// a construction, `F{}`, or a call, `F()`, recorded when the walk reaches it).
    fn temporary_call(&mut self, node: Node<'_>, func: Node<'_>) {
        if !self.in_body(node) {
            return;
        }
        let src = self.src;
        let ty = if func.kind() == "compound_literal_expression" {
            func.child_by_field_id(fields().ty)
        } else {
            func.child_by_field_id(fields().function)
        };
        let receiver_type = ty
            .filter(|t| {
                matches!(
                    t.kind(),
                    "identifier"
                        | "type_identifier"
                        | "qualified_identifier"
                        | "template_type"
                        | "template_function"
                )
            })
            .and_then(|t| normal_type(&text_of(t, src)));
        let (args_node, arg_spans, arg_ints) = arguments(node, src);
        let Some(fc) = self.fns.last_mut() else {
            return;
        };
        fc.f.calls.push(Call {
            callee: "operator()".into(),
            receiver: Some(text_of(func, src)),
            qualifier: None,
            span: span_of(node),
            callee_span: span_of(func),
            args: args_node.map(span_of).unwrap_or_else(|| span_of(node)),
            arg_spans,
            arg_ints,
            form: CallForm::Temporary,
            receiver_span: Some(span_of(func)),
            receiver_type,
            template_args: None,
            arg_pack: false,
        });
    }

    /// A call of a pointer that no name answers (`(o.*pm)(x)`, `(c ? f : g)(x)`, `(*s.tbl[k])(x)`):
    /// [`CallForm::Indirect`], `callee` the expression as written (tokens joined, at most
    /// [`INDIRECT_TEXT`] bytes).
    fn indirect_call(&mut self, node: Node<'_>, func: Node<'_>) {
        if !self.in_body(node) {
            return;
        }
        let src = self.src;
        let mut callee = join_tokens(tokens(&text_of(func, src)));
        if callee.len() > INDIRECT_TEXT {
            let mut cut = INDIRECT_TEXT;
            while !callee.is_char_boundary(cut) {
                cut -= 1;
            }
            callee.truncate(cut);
            callee.push_str("...");
        }
        let (args_node, arg_spans, arg_ints) = arguments(node, src);
        let Some(fc) = self.fns.last_mut() else {
            return;
        };
        fc.f.calls.push(Call {
            callee,
            receiver: None,
            qualifier: None,
            span: span_of(node),
            callee_span: span_of(func),
            args: args_node.map(span_of).unwrap_or_else(|| span_of(node)),
            arg_spans,
            arg_ints,
            form: CallForm::Indirect,
            receiver_span: None,
            receiver_type: None,
            template_args: None,
            arg_pack: false,
        });
    }

    /// A temporary `T{...}` in a body: its constructor and destructor run there.
    fn temporary(&mut self, node: Node<'_>) {
        if let Some(ty) = node.child_by_field_id(fields().ty) {
            let ty = text_of(ty, self.src);
            self.construct(&ty, span_of(node));
        }
    }

    /// Records the constructor and destructor calls of an object of type `ty` (as written)
    /// made at `span`: [`CallForm::Construct`] then [`CallForm::Destroy`].
    fn construct(&mut self, ty: &str, span: Span) {
        let Some(t) = normal_type(ty) else { return };
        let stripped = crate::identity::strip_template_args(&t);
        let (qualifier, name) = match stripped.rsplit_once("::") {
            Some((q, n)) => (Some(q.to_string()), n.to_string()),
            None => (None, stripped.clone()),
        };
        if name.is_empty() || !name.starts_with(|c: char| c.is_alphabetic() || c == '_') {
            return;
        }
        let Some(fc) = self.fns.last_mut() else {
            return;
        };
        for (callee, form) in [
            (name.clone(), CallForm::Construct),
            (format!("~{name}"), CallForm::Destroy),
        ] {
            fc.f.calls.push(Call {
                callee,
                receiver: None,
                qualifier: qualifier.clone(),
                span,
                callee_span: span,
                args: span,
                arg_spans: Vec::new(),
                arg_ints: Vec::new(),
                form,
                receiver_span: None,
                receiver_type: Some(t.clone()),
                template_args: None,
                arg_pack: false,
            });
        }
    }

    /// The declared type of the local variable or parameter `name` of the current function, if
    /// it is one (`Some(None)` when it is one whose type is not written: `auto` without a
    /// constructor call in its initialiser).
    fn type_of_variable(&mut self, name: &str) -> Option<Option<String>> {
        let fc = self.fns.last_mut()?;
        fc.decl_names.sync(&fc.f.decls);
        if let Some(i) = fc.decl_names.get(name) {
            let d = &fc.f.decls[i];
            return Some(normal_type(&d.type_text).or_else(|| d.init_type.clone()));
        }
        let p = fc.f.params.iter().find(|p| p.name == name)?;
        Some(normal_type(&p.type_text))
    }

    /// The static type of a call's receiver expression, where the function shows it: a
    /// variable or parameter (`r`, `p` in `p->f()`, `(*p)`), `this` (the enclosing class).
    fn type_of_receiver(&mut self, r: Node<'_>) -> Option<String> {
        let mut r = r;
        for _ in 0..8 {
            match r.kind() {
                "parenthesized_expression" => r = r.named_child(0)?,
                "pointer_expression" => r = r.child_by_field_id(fields().argument)?,
                _ => break,
            }
        }
        match r.kind() {
            "this" => {
                let fc = self.fns.last()?;
                fc.f.class_name.clone().or_else(|| {
                    // `void S::m() { this->f(); }`: the qualifier of the name.
                    fc.f.qualified_name
                        .rsplit_once("::")
                        .map(|(q, _)| q.to_string())
                })
            }
            "identifier" => {
                let name = text_of(r, self.src);
                self.type_of_variable(&name).flatten()
            }
            _ => None,
        }
    }

    fn inline_asm(&mut self, node: Node<'_>) {
        let src = self.src;
        let Some(code) = node.child_by_field_id(fields().assembly_code) else {
            return;
        };
        // A string literal, or adjacent literals (`"s_waitcnt lgkmcnt(0)\n" "s_barrier"`).
        let mut parts = Vec::new();
        let mut stack = vec![code];
        while let Some(n) = stack.pop() {
            match n.kind() {
                "string_content" | "escape_sequence" | "raw_string_content" => {
                    parts.push(text_of(n, src))
                }
                _ => {
                    let mut c = n.walk();
                    let children: Vec<_> = n.children(&mut c).collect();
                    stack.extend(children.into_iter().rev());
                }
            }
            if parts.len() > 4096 {
                break;
            }
        }
        let template = parts.concat();
        if let Some(fc) = self.fns.last_mut() {
            fc.f.asm.push(InlineAsm {
                template,
                span: span_of(node),
            });
        }
    }

    fn add_shared(
        &mut self,
        name: String,
        kind: SharedKind,
        span: Span,
        node: Node<'_>,
        dims: Vec<Option<i128>>,
    ) {
        let d = SharedDecl {
            name,
            kind,
            span,
            dims,
        };
        if self.in_body(node) {
            if let Some(fc) = self.fns.last_mut() {
                fc.f.shared.push(d);
                return;
            }
        }
        self.out.shared.push(d);
    }

    /// The extents of an array declarator, outermost first (integer literals and object-like
    /// integer macros; `None` for anything else).
    fn array_dims(&self, d: Node<'_>) -> Vec<Option<i128>> {
        let mut dims = Vec::new();
        let mut cur = Some(d);
        for _ in 0..64 {
            let Some(x) = cur else { break };
            cur = match x.kind() {
                "array_declarator" => {
                    dims.push(x.child_by_field_id(fields().size).and_then(|n| {
                        int_value(n, self.src).or_else(|| {
                            (n.kind() == "identifier")
                                .then(|| self.macro_ints.get(&text_of(n, self.src)).copied())
                                .flatten()
                        })
                    }));
                    x.child_by_field_id(fields().declarator)
                }
                "init_declarator" | "attributed_declarator" => {
                    x.child_by_field_id(fields().declarator)
                }
                _ => None,
            };
        }
        dims.reverse();
        dims
    }

    fn declaration(&mut self, node: Node<'_>, k: K) {
        let src = self.src;
        let in_fn = self.in_body(node);
        let (mut shared, mut is_extern, mut is_const) = (false, false, false);
        let mut c = node.walk();
        for ch in node.children(&mut c) {
            match ch.kind() {
                "type_qualifier" if bytes_of(ch, src) == b"__shared__" => shared = true,
                "type_qualifier" if matches!(bytes_of(ch, src), b"const" | b"constexpr") => {
                    is_const = true
                }
                "storage_class_specifier" if bytes_of(ch, src) == b"extern" => is_extern = true,
                _ => {}
            }
        }
        // Specifier macros the parse skipped in front of the declarator
        // (`ROCPRIM_SHARED_MEMORY T storage;`, `extern SMEM float s[];`).
        if !shared || !is_extern {
            let lo = node.prev_sibling().map_or_else(
                || node.parent().map_or(0, |p| p.start_byte()),
                |p| p.end_byte(),
            );
            let hi = node
                .child_by_field_id(fields().declarator)
                .map_or(node.end_byte(), |d| d.start_byte());
            for e in self.elided.within(lo, hi) {
                if e.is_specifier() {
                    shared |= e.shared;
                    is_extern |= e.is_extern;
                }
            }
        }
        let ty_node = node.child_by_field_id(fields().ty);
        let type_text = ty_node.map(|t| text_of(t, src)).unwrap_or_default();
        // A local object of a class type (not a pointer or reference to one) runs its
        // constructor and destructor where it is declared.
        let constructs = in_fn
            && k == K::Declaration
            && !shared
            && !is_extern
            && ty_node.is_some_and(|t| {
                matches!(
                    t.kind(),
                    "type_identifier" | "qualified_identifier" | "template_type"
                ) || (matches!(t.kind(), "struct_specifier" | "class_specifier")
                    && t.child_by_field_id(fields().body).is_none())
            });
        let default_value = if k == K::FieldDeclaration {
            node.child_by_field_id(fields().default_value)
        } else {
            None
        };
        let mut c = node.walk();
        let declarators: Vec<Node<'_>> = node
            .children_by_field_id(fields().declarator_nz, &mut c)
            .collect();
        if !in_fn {
            self.stub_kernels(node, &declarators);
        }
        for d in declarators {
            let (name_node, value, is_ptr) = declarator_name(Some(d));
            // `Guard g(x);` reads as a function declaration: with arguments, in a body, it is
            // an object constructed from them (`Guard g();` stays a function declaration).
            let vexing = constructs
                && d.kind() == "function_declarator"
                && d.child_by_field_id(fields().declarator)
                    .is_some_and(|n| n.kind() == "identifier")
                && d.child_by_field_id(fields().parameters)
                    .is_some_and(|p| p.named_child_count() > 0);
            if vexing {
                if let Some(n) = d.child_by_field_id(fields().declarator) {
                    self.construct(&type_text, span_of(node));
                    let Some(fc) = self.fns.last_mut() else {
                        continue;
                    };
                    fc.f.decls.push(VarDecl {
                        name: text_of(n, src),
                        type_text: type_text.clone(),
                        span: span_of(node),
                        name_span: span_of(n),
                        init: None,
                        init_idents: Vec::new(),
                        is_pointer_or_ref: false,
                        init_int: None,
                        is_const,
                        init_type: None,
                    });
                }
                continue;
            }
            if d.kind() == "function_declarator" || name_node.is_none() {
                // `HIP_DYNAMIC_SHARED(float, smem);` parses as a function declaration.
                if let Some(fd) = find_function_declarator(d) {
                    self.defaulted_declaration(fd);
                    let callee = fd
                        .child_by_field_id(fields().declarator)
                        .map(|n| bytes_of(n, src));
                    if callee == Some(b"HIP_DYNAMIC_SHARED") {
                        if let Some(name) = fd
                            .child_by_field_id(fields().parameters)
                            .and_then(|p| second_list_item(p, src))
                        {
                            self.add_shared(
                                name,
                                SharedKind::HipDynamicMacro,
                                span_of(node),
                                node,
                                Vec::new(),
                            );
                        }
                    }
                }
                continue;
            }
            let Some(name_node) = name_node else { continue };
            let name = text_of(name_node, src);
            if shared {
                let kind = if is_extern {
                    SharedKind::ExternDynamic
                } else {
                    SharedKind::Static
                };
                let dims = self.array_dims(d);
                self.add_shared(name.clone(), kind, span_of(node), node, dims);
            }
            let value = value.or(default_value);
            if constructs && !is_ptr {
                self.construct(&type_text, span_of(node));
            }
            if !in_fn && k == K::Declaration && !shared {
                self.out
                    .global_types
                    .push((name.clone(), type_text.clone(), is_ptr));
            }
            if !in_fn && value.is_none() {
                // A file-scope variable without an initialiser (`__device__ Op table[4];`,
                // filled by the host): its name only.
                if k == K::Declaration && !shared && !self.out.file_variables.contains(&name) {
                    self.out.file_variables.push(name);
                }
                continue;
            }
            let init_type = value.and_then(|v| init_type_of(v, src));
            let decl = VarDecl {
                name,
                type_text: type_text.clone(),
                span: span_of(node),
                name_span: span_of(name_node),
                init: value.map(span_of),
                init_idents: Vec::new(),
                is_pointer_or_ref: is_ptr,
                init_int: value.and_then(|v| int_value(v, src)),
                is_const,
                init_type,
            };
            let r = if in_fn {
                let Some(fc) = self.fns.last_mut() else {
                    continue;
                };
                fc.f.decls.push(decl);
                DeclRef::Local(fc.f.decls.len() - 1)
            } else {
                let mut decl = decl;
                if let Some(v) = value {
                    value_names(v, src, 0, &mut decl.init_idents);
                }
                self.out.globals.push(decl);
                DeclRef::Global(self.out.globals.len() - 1)
            };
            if d.kind() == "init_declarator" && value.is_some() {
                self.init_map.push((d.id(), r));
            }
        }
    }

    /// A macro's name read as part of another expression (see [`Lowerer::call`]): a use of it
    /// in the current function, kept in source order among its identifiers.
    fn glued_macro(&mut self, name: String, span: Span) {
        let Some(fc) = self.fns.last_mut() else {
            return;
        };
        let idents = &mut fc.f.idents;
        let at = idents.partition_point(|u| u.span.start <= span.start);
        idents.insert(
            at,
            IdentUse {
                name,
                span,
                access: Access::Read,
            },
        );
    }

    /// Records a function declaration (no body) that gives a parameter a default value
    /// ([`SourceFile::defaulted_declarations`]).
    fn defaulted_declaration(&mut self, fd: Node<'_>) {
        let defaulted = fd.child_by_field_id(fields().parameters).is_some_and(|pl| {
            let mut c = pl.walk();
            let any = pl
                .named_children(&mut c)
                .any(|p| p.kind() == "optional_parameter_declaration");
            any
        });
        let Some(name) = fd
            .child_by_field_id(fields().declarator)
            .filter(|_| defaulted)
        else {
            return;
        };
        let name = strip_template_args(&text_of(name, self.src));
        let name = name
            .rsplit("::")
            .next()
            .unwrap_or_default()
            .trim()
            .to_string();
        if !name.is_empty() && !self.out.defaulted_declarations.contains(&name) {
            self.out.defaulted_declarations.push(name);
        }
    }

    fn ident(&mut self, node: Node<'_>, k: K, field: u16, parent: Option<Node<'_>>) {
        let src = self.src;
        let raw = bytes_of(node, src);
        if raw == b"HIP_DYNAMIC_SHARED" {
            // Macro use that the grammar turned into an ERROR: `HIP_DYNAMIC_SHARED(float, s)` without `;`.
            if let Some(p) = parent {
                if p.kind() == "function_declarator" && field == fields().declarator {
                    let in_decl = p.parent().is_some_and(|gp| gp.kind() == "declaration");
                    if !in_decl {
                        if let Some(name) = p
                            .child_by_field_id(fields().parameters)
                            .and_then(|l| second_list_item(l, src))
                        {
                            self.add_shared(
                                name,
                                SharedKind::HipDynamicMacro,
                                span_of(p),
                                node,
                                Vec::new(),
                            );
                        }
                    }
                }
            }
        }
        if !self.in_body(node) {
            return;
        }
        let name = String::from_utf8_lossy(raw).into_owned();
        let span = span_of(node);
        let is_callee = self.skip_ident == Some(node.id());
        // Lane-arithmetic operands and initialiser names.
        if !self.collect_stack.is_empty() {
            if let Some(fc) = self.fns.last_mut() {
                for &ci in self.collect_stack.iter().rev().take(COLLECT_FANOUT) {
                    if let Some(op) = fc.f.const_ops.get_mut(ci) {
                        if !op.operand_names.contains(&name) {
                            op.operand_names.push(name.clone());
                        }
                    }
                }
            }
        }
        let Some(fc) = self.fns.last_mut() else {
            return;
        };
        if k == K::TypeIdentifier {
            fc.extra_refs.push(MacroRef { name, span });
            // `float v(b);` reads as a function declaration taking a `b`: where `b` is a local
            // object, it is `v` initialised from it (a conversion).
            let misread_argument = parent.is_some_and(|p| {
                p.kind() == "parameter_declaration"
                    && p.child_by_field_id(fields().ty).map(|t| t.id()) == Some(node.id())
                    && p.child_by_field_id(fields().declarator).is_none()
                    && p.parent()
                        .and_then(|l| l.parent())
                        .is_some_and(|d| d.kind() == "function_declarator")
            });
            if misread_argument {
                self.convert_named(node);
            }
            return;
        }
        if !self.init_stack.is_empty() {
            for r in self.init_stack.iter().rev().take(COLLECT_FANOUT) {
                let list = match *r {
                    DeclRef::Local(i) => fc.f.decls.get_mut(i).map(|d| &mut d.init_idents),
                    DeclRef::Global(i) => self.out.globals.get_mut(i).map(|d| &mut d.init_idents),
                    DeclRef::Assign(i) => fc.f.assigns.get_mut(i).map(|a| &mut a.value_idents),
                };
                if let Some(list) = list {
                    if !list.contains(&name) {
                        list.push(name.clone());
                    }
                }
            }
        }
        if is_callee {
            return;
        }
        let pk = parent
            .map(|p| self.kinds.of(p.kind_id()))
            .unwrap_or(K::Other);
        let declared = self
            .misparsed
            .as_ref()
            .is_some_and(|m| m.name_node == node.id());
        let access = if field == fields().declarator || declared {
            Access::Decl
        } else if (pk == K::AssignmentExpression && field == fields().left)
            || pk == K::UpdateExpression
            || (pk == K::PointerExpression
                && parent
                    .and_then(|p| p.child_by_field_id(fields().operator))
                    .is_some_and(|o| bytes_of(o, src) == b"&"))
        {
            Access::Write
        } else {
            Access::Read
        };
        // `int& r = i;` can write `i` through `r`: not a write itself, but the loop's count
        // is no longer known.
        let bound_to_reference = pk == K::InitDeclarator
            && field == fields().value
            && parent
                .and_then(|p| p.child_by_field_id(fields().declarator))
                .is_some_and(|d| d.kind() == "reference_declarator");
        if access == Access::Write || bound_to_reference {
            fc.writes.entry(name.clone()).or_default().push(span.start);
        }
        fc.f.idents.push(IdentUse { name, span, access });
        if access == Access::Read && !bound_to_reference {
            self.conversion_call(node, parent);
        }
    }

    /// Recognises `ns::T<32> name = init;` / `ns::T<32> name(args);` read as comparisons (see
    /// [`MisparsedDecl`]) and records the declaration.
    fn misparsed_decl(&mut self, node: Node<'_>, parent: Option<Node<'_>>) {
        let src = self.src;
        let op = |n: Node<'_>| {
            n.child_by_field_id(fields().operator)
                .map(|o| bytes_of(o, src))
        };
        if op(node) != Some(b">") {
            return;
        }
        let (Some(ty), Some(rest)) = (
            node.child_by_field_id(fields().left),
            node.child_by_field_id(fields().right),
        ) else {
            return;
        };
        let qualified_less = ty.kind() == "binary_expression"
            && op(ty) == Some(b"<")
            && ty
                .child_by_field_id(fields().left)
                .is_some_and(|l| l.kind() == "qualified_identifier");
        let in_statement = parent.is_some_and(|p| p.kind() == "expression_statement");
        if !qualified_less || !in_statement {
            return;
        }
        let (name, init) = match rest.kind() {
            "assignment_expression" if op(rest) == Some(b"=") => (
                rest.child_by_field_id(fields().left),
                rest.child_by_field_id(fields().right),
            ),
            "call_expression" => (
                rest.child_by_field_id(fields().function),
                rest.child_by_field_id(fields().arguments),
            ),
            _ => return,
        };
        let Some(name) = name.filter(|n| n.kind() == "identifier") else {
            return;
        };
        let Some(fc) = self.fns.last_mut() else {
            return;
        };
        fc.f.decls.push(VarDecl {
            name: text_of(name, src),
            type_text: format!("{}>", text_of(ty, src)),
            span: span_of(node),
            name_span: span_of(name),
            init: init.map(span_of),
            init_idents: Vec::new(),
            is_pointer_or_ref: false,
            init_int: None,
            is_const: false,
            init_type: None,
        });
        let decl = fc.f.decls.len() - 1;
        let type_text = format!("{}>", text_of(ty, src));
        self.construct(&type_text, span_of(node));
        self.misparsed = Some(MisparsedDecl {
            type_node: ty.id(),
            name_node: name.id(),
            shell_node: rest.id(),
            init_node: init.map(|i| i.id()),
            decl,
        });
    }

    fn assignment(&mut self, node: Node<'_>) {
        if !self.in_body(node)
            || self
                .misparsed
                .as_ref()
                .is_some_and(|m| m.shell_node == node.id())
        {
            return;
        }
        let (Some(l), Some(o)) = (
            node.child_by_field_id(fields().left),
            node.child_by_field_id(fields().operator),
        ) else {
            return;
        };
        if bytes_of(o, self.src) != b"=" {
            return;
        }
        // `x = ...`, and `this->x = ...` (a data member, kept as written: `this->x`).
        let this_member = l.kind() == "field_expression"
            && l.child_by_field_id(fields().argument)
                .is_some_and(|a| bytes_of(a, self.src) == b"this")
            && l.child_by_field_id(fields().field)
                .is_some_and(|f| f.kind() == "field_identifier");
        if l.kind() != "identifier" && !this_member {
            return;
        }
        let target = if this_member {
            join_tokens(tokens(&text_of(l, self.src)))
        } else {
            text_of(l, self.src)
        };
        let Some(fc) = self.fns.last_mut() else {
            return;
        };
        fc.f.assigns.push(Assign {
            target,
            span: span_of(node),
            value_idents: Vec::new(),
        });
        self.assign_map.push((node.id(), fc.f.assigns.len() - 1));
    }

    fn const_op(&mut self, node: Node<'_>) {
        if !self.in_body(node) {
            return;
        }
        let src = self.src;
        let (Some(l), Some(o), Some(r)) = (
            node.child_by_field_id(fields().left),
            node.child_by_field_id(fields().operator),
            node.child_by_field_id(fields().right),
        ) else {
            return;
        };
        let op = bytes_of(o, src);
        if !CONST_OPS.contains(&op) {
            return;
        }
        let (lv, rv) = (int_value(l, src), int_value(r, src));
        let (constant, on_right, lit) = match (lv, rv) {
            (None, Some(v)) => (v, true, r),
            (Some(v), None) => (v, false, l),
            _ => return,
        };
        let Some(fc) = self.fns.last_mut() else {
            return;
        };
        let index_of = self
            .subscripts
            .last()
            .filter(|o| o.target == node.id())
            .map(|o| o.index.clone());
        let in_array_size = self.array_declarators > 0;
        fc.f.const_ops.push(ConstOp {
            op: String::from_utf8_lossy(op).into_owned(),
            constant,
            constant_on_right: on_right,
            span: span_of(node),
            constant_span: span_of(lit),
            operand_names: Vec::new(),
            index_of,
            in_array_size,
            in_constant: in_array_size,
        });
        self.collect_stack.push(fc.f.const_ops.len() - 1);
        self.pops.push((node.id(), Pop::Collect));
    }

    // ---------------------------------------------------------------- preprocessor

    fn macro_def(&mut self, node: Node<'_>, k: K) {
        let src = self.src;
        let Some(name) = node.child_by_field_id(fields().name) else {
            return;
        };
        let name = text_of(name, src);
        let body = node
            .child_by_field_id(fields().value)
            .map(|v| join_continuations(bytes_of(v, src)))
            .unwrap_or_default();
        let params = if k == K::PreprocFunctionDef {
            node.child_by_field_id(fields().parameters).map(|p| {
                let mut c = p.walk();
                let v: Vec<String> = p
                    .named_children(&mut c)
                    .filter(|n| n.kind() != "comment")
                    .map(|n| text_of(n, src))
                    .collect();
                v
            })
        } else {
            None
        };
        if params.is_none() {
            if let Some(v) =
                parse_int_literal(body.trim().trim_start_matches('(').trim_end_matches(')'))
            {
                self.macro_ints.insert(name.clone(), v);
            }
        }
        let BodyFacts {
            calls,
            idents,
            control,
            asm,
        } = body_facts(&body);
        // The directive node ends after its newline; the macro ends before it.
        let mut span = span_of(node);
        while span.end > span.start && matches!(src[span.end - 1], b'\n' | b'\r') {
            span.end -= 1;
        }
        self.macro_idx.insert(name.clone(), self.out.macros.len());
        self.out.macros.push(MacroDef {
            name,
            params,
            body,
            span,
            calls,
            idents,
            control,
            asm,
        });
    }

    fn preproc_call(&mut self, node: Node<'_>, parent: Option<Node<'_>>) {
        let src = self.src;
        let Some(dir) = node.child_by_field_id(fields().directive) else {
            return;
        };
        let d = bytes_of(dir, src);
        let d: Vec<u8> = d
            .iter()
            .copied()
            .filter(|b| !b.is_ascii_whitespace() && *b != b'#')
            .collect();
        if d != b"pragma" {
            return;
        }
        // `#pragma unroll \` + `8` on the next line is `#pragma unroll 8`.
        let arg = node
            .child_by_field_id(fields().argument)
            .map(|a| join_continuations(bytes_of(a, src)))
            .unwrap_or_default();
        let ints = &self.macro_ints;
        let Some((hint, syntax)) = parse_pragma_text(&arg, |n| ints.get(n).copied()) else {
            return;
        };
        let mut span = span_of(node);
        while span.end > span.start && matches!(src.get(span.end - 1), Some(b'\n' | b'\r')) {
            span.end -= 1;
        }
        // `#if X` / `#pragma unroll` / `#endif` / `for ...`: the pragma applies to the loop
        // after the conditional, whose parent is the conditional's parent.
        let mut p = parent;
        while let Some(x) = p.filter(|x| x.kind().starts_with("preproc_")) {
            p = x.parent();
        }
        let target = p.map(|p| p.id()).unwrap_or(usize::MAX);
        // In `#if A #pragma unroll 8 #else #pragma unroll 2 #endif`, the first branch wins.
        let in_else = parent.is_some_and(|x| {
            matches!(
                x.kind(),
                "preproc_else" | "preproc_elif" | "preproc_elifdef"
            )
        });
        if in_else
            && self
                .pending_pragma
                .as_ref()
                .is_some_and(|pp| pp.parent == target)
        {
            if let Some(pp) = &mut self.pending_pragma {
                pp.end = node.end_byte();
            }
            return;
        }
        self.pending_pragma = Some(PendingPragma {
            pragma: Pragma {
                hint,
                syntax,
                span,
                macro_name: None,
            },
            parent: target,
            end: node.end_byte(),
        });
    }

    // ---------------------------------------------------------------- post-pass

    fn finish(mut self) -> (SourceFile, Vec<IdParts>) {
        let src = self.src;
        self.out.crlf = memchr_crlf(src);
        let mut finished = std::mem::take(&mut self.finished);
        finished.sort_by_key(|f| f.f.span.start);
        let macros: HashMap<&str, &MacroDef> = self
            .out
            .macros
            .iter()
            .map(|m| (m.name.as_str(), m))
            .collect();
        let mut functions = Vec::with_capacity(finished.len());
        let mut id_parts = Vec::with_capacity(finished.len());
        for mut fin in finished {
            if !macros.is_empty() {
                let mut refs: Vec<MacroRef> = fin
                    .f
                    .idents
                    .iter()
                    .filter(|i| macros.contains_key(i.name.as_str()))
                    .map(|i| MacroRef {
                        name: i.name.clone(),
                        span: i.span,
                    })
                    .collect();
                refs.extend(
                    fin.extra_refs
                        .into_iter()
                        .filter(|r| macros.contains_key(r.name.as_str())),
                );
                refs.sort_by_key(|r| r.span.start);
                refs.dedup_by_key(|r| r.span.start);
                fin.f.macro_refs = refs;
                if fin.f.kind == FunctionKind::Host {
                    let lookup = |n: &str| macros.get(n).copied();
                    for cand in &fin.qual_candidates {
                        if let Some(kind) = qualifier_through_macros(cand, &lookup) {
                            fin.f.kind = kind;
                            fin.f.qualifier_macro = Some(cand.clone());
                            break;
                        }
                    }
                }
            }
            if fin.f.recovered
                && fin.f.kind == FunctionKind::Host
                && fin.f.qualifier_macro.is_none()
            {
                continue; // a brace block in an ERROR region that is not a kernel after all
            }
            functions.push(fin.f);
            id_parts.push(fin.id_parts);
        }
        void_counts_of_by_ref_args(&mut functions, src);
        self.out.functions = functions;
        self.out.statement_macros = self.elided.statement_macros();
        self.out.inert.sort_by_key(|s| s.start);
        (self.out, id_parts)
    }
}

/// For the `[...]` `list` of the subscript expression `sub`: the node that is its whole index
/// (parentheses aside) and which array and subscript it indexes (`a[i][si % 32]`: `a`, 1).
/// Walks children only (a node's parent is not cheap to find in tree-sitter).
fn open_subscript(sub: Node<'_>, list: Node<'_>, src: &[u8]) -> Option<OpenSubscript> {
    if sub.kind() != "subscript_expression" {
        return None;
    }
    let mut c = list.walk();
    let mut items = list
        .named_children(&mut c)
        .filter(|x| x.kind() != "comment");
    let (mut target, None) = (items.next()?, items.next()) else {
        return None;
    };
    for _ in 0..16 {
        if target.kind() != "parenthesized_expression" {
            break;
        }
        target = target.named_child(0)?;
    }
    let mut dim = 0;
    let mut base = sub.child_by_field_id(fields().argument)?;
    for _ in 0..64 {
        if base.kind() != "subscript_expression" {
            break;
        }
        dim += 1;
        base = base.child_by_field_id(fields().argument)?;
    }
    (base.kind() == "identifier").then(|| OpenSubscript {
        target: target.id(),
        index: ArrayIndex {
            array: text_of(base, src),
            dim,
        },
    })
}

/// The type an initialiser names when it is one call or braced construction (`T(...)`,
/// `ns::T<4>{...}`, `make<N>(...)`), as written.
fn init_type_of(v: Node<'_>, src: &[u8]) -> Option<String> {
    let t = match v.kind() {
        "call_expression" => v.child_by_field_id(fields().function)?,
        "compound_literal_expression" => v.child_by_field_id(fields().ty)?,
        _ => return None,
    };
    if !matches!(
        t.kind(),
        "identifier"
            | "type_identifier"
            | "qualified_identifier"
            | "template_function"
            | "template_type"
    ) {
        return None;
    }
    normal_type(&text_of(t, src))
}

/// "cannot parse `TEXT`": the start of an ERROR node's text (its first line, at most 40
/// characters, blanks collapsed).
fn error_message(text: &[u8]) -> String {
    let text = String::from_utf8_lossy(&text[..text.len().min(256)]);
    let first = text.lines().next().unwrap_or_default();
    let words: Vec<&str> = first.split_whitespace().collect();
    let mut short = words.join(" ");
    if let Some((i, _)) = short.char_indices().nth(40) {
        short.truncate(i);
        short.push_str("...");
    } else if text.lines().nth(1).is_some() {
        short.push_str(" ...");
    }
    format!("cannot parse `{short}`")
}

/// A function with no body contents yet.
/// True when host code text holds device code: a `__device__` (a lambda, a local class's
/// member) or `__global__`.
fn holds_device_code(text: &[u8]) -> bool {
    memchr::memmem::find(text, b"__device__").is_some()
        || memchr::memmem::find(text, b"__global__").is_some()
}

/// The argument counts a parameter list accepts; `None` for a list that is not plain C++ to
/// this parse: a syntax error or a directive in it, a C++23 explicit object parameter, or a
/// parameter whose type is a name in capitals (`void f(KERNEL_ARGS)`, `void f(float x,
/// TENSOR(t))`: a macro that may stand for several parameters, as far as the parse can tell).
fn arity_of(pl: Node<'_>, src: &[u8]) -> Option<Arity> {
    let (mut min, mut max) = (0usize, Some(0usize));
    let mut c = pl.walk();
    for p in pl.children(&mut c) {
        match p.kind() {
            "(" | ")" | "," | "comment" => {}
            "..." | "variadic_parameter_declaration" => max = None,
            "parameter_declaration" => {
                let ty = p
                    .child_by_field_id(fields().ty)
                    .map(|t| text_of(t, src))
                    .unwrap_or_default();
                let unnamed = p.child_by_field_id(fields().declarator).is_none();
                if unnamed && ty == "void" && pl.named_child_count() == 1 {
                    continue; // `f(void)`
                }
                if crate::macro_like(&ty) {
                    return None;
                }
                min += 1;
                max = max.map(|m| m + 1);
            }
            "optional_parameter_declaration" => max = max.map(|m| m + 1),
            _ => return None,
        }
    }
    Some(Arity { min, max })
}

fn blank_function(
    name: String,
    qualified_name: String,
    kind: FunctionKind,
    span: Span,
    name_span: Span,
    body: Span,
) -> Function {
    Function {
        name,
        qualified_name,
        id: FunctionId::default(),
        signature: None,
        kind,
        span,
        name_span,
        body,
        is_template: false,
        is_static: false,
        launch_bounds: None,
        qualifier_macro: None,
        params: Vec::new(),
        loops: Vec::new(),
        calls: Vec::new(),
        idents: Vec::new(),
        decls: Vec::new(),
        shared: Vec::new(),
        jumps: Vec::new(),
        labels: Vec::new(),
        lambdas: Vec::new(),
        assigns: Vec::new(),
        macro_refs: Vec::new(),
        asm: Vec::new(),
        const_ops: Vec::new(),
        recovered: false,
        address_uses: Vec::new(),
        template_params: Vec::new(),
        class_name: None,
        unseen_specifiers: Vec::new(),
        expansion: None,
        arity: None,
        return_type: None,
        specialised_name: None,
    }
}

/// A function definition inside a body that is a statement macro with a block: its head is
/// `NAME(args)` alone (no type, no specifier; the name a plain identifier).
fn is_statement_macro(node: Node<'_>) -> bool {
    if node.child_by_field_id(fields().ty).is_some() {
        return false;
    }
    let Some(d) = node.child_by_field_id(fields().declarator) else {
        return false;
    };
    if d.kind() != "function_declarator"
        || d.child_by_field_id(fields().declarator)
            .is_none_or(|n| n.kind() != "identifier")
    {
        return false;
    }
    // Nothing before the declarator (`__device__`, `static`, attributes).
    node.child(0).is_some_and(|c| c.id() == d.id())
}

/// The identifier `x` of `std::forward<T>(x)`, `std::move(x)`, `forward<T>(x)`, `move(x)` or
/// `static_cast<T&&>(x)` (the function of a call `std::forward<F>(f)(i)`): calling the result
/// calls `x`.
fn forwarded<'t>(func: Node<'t>, src: &[u8]) -> Option<Node<'t>> {
    if func.kind() != "call_expression" {
        return None;
    }
    let name = func.child_by_field_id(fields().function)?;
    let text = text_of(name, src);
    let base = text.split('<').next().unwrap_or(&text).trim();
    let base = base.strip_prefix("::").unwrap_or(base);
    if !matches!(
        base,
        "std::forward"
            | "std::move"
            | "forward"
            | "move"
            | "static_cast"
            | "std::ref"
            | "std::cref"
    ) {
        return None;
    }
    let args = func.child_by_field_id(fields().arguments)?;
    let mut c = args.walk();
    let mut named = args
        .named_children(&mut c)
        .filter(|n| n.kind() != "comment");
    let only = named.next()?;
    (named.next().is_none() && only.kind() == "identifier").then_some(only)
}

/// True when a variable of type `t` (normalised) may have overloaded operators: not a scalar,
/// a CUDA/HIP vector or half type, `auto`, or a standard integer alias (`size_t`, `int32_t`).
fn may_overload(t: &str) -> bool {
    let base = t.rsplit("::").next().unwrap_or(t);
    // (`decltype`/`auto` only inside template arguments: a class template's object.)
    let head = base.split('<').next().unwrap_or(base);
    if base.ends_with("_t") || head.contains("auto") || head.contains("decltype") {
        return false;
    }
    !base
        .split_whitespace()
        .filter(|w| !matches!(*w, "const" | "volatile"))
        .all(crate::types::is_builtin_type)
}

/// The first occurrence of `word` in `text` as a whole identifier.
fn find_word(text: &[u8], word: &[u8]) -> Option<usize> {
    let ident = crate::lex::is_ident_char;
    (0..text.len().saturating_sub(word.len() - 1)).find(|&i| {
        text[i..].starts_with(word)
            && (i == 0 || !ident(text[i - 1]))
            && text.get(i + word.len()).is_none_or(|&b| !ident(b))
    })
}

/// True when a declarator whose text before the name is `before` (from the declaration's
/// start) and after it is `after` declares an object or a reference: no `*` right before the
/// name (qualifiers aside) and no array bound after it.
fn is_object(before: &[u8], after: &[u8]) -> bool {
    let mut b = String::from_utf8_lossy(before).trim_end().to_string();
    loop {
        let trimmed = [
            "const",
            "volatile",
            "__restrict__",
            "__restrict",
            "restrict",
        ]
        .iter()
        .find_map(|q| b.strip_suffix(q).map(|r| r.trim_end().to_string()));
        match trimmed {
            Some(t) => b = t,
            None => break,
        }
    }
    let array = String::from_utf8_lossy(after).trim_start().starts_with('[');
    !b.ends_with('*') && !array
}
