//! Error recovery for the lowering: kernels whose headers the grammar could not parse (macro
//! qualifiers, `#if` inside a signature, unbalanced braces) and loops whose body the grammar cut
//! off. Functions here read nodes and return what they found; the lowering decides what to do
//! with it (it alone builds functions).

use tree_sitter::Node;

use crate::ir::{FunctionKind, Span};
use crate::kinds::{fields, Kinds};
use crate::node::{bytes_of, span_of, text_of};

/// A function found inside an ERROR node: its name, qualifiers and the id of its body.
pub(crate) struct Recovered {
    /// Id of the body node (a `compound_statement`, or a bare `{` token whose statements follow
    /// as siblings inside the ERROR node).
    pub(crate) body: usize,
    /// For a bare `{`: the id and end byte of the matching `}` token.
    pub(crate) close: Option<(usize, usize)>,
    pub(crate) name: String,
    pub(crate) name_span: Span,
    pub(crate) start: Span,
    pub(crate) kind: FunctionKind,
    pub(crate) qual_candidates: Vec<String>,
}

/// A kernel whose body the grammar read as an initializer list (see [`stub_kernels`]).
pub(crate) struct Stub {
    pub(crate) name: String,
    pub(crate) kind: FunctionKind,
    pub(crate) span: Span,
    pub(crate) name_span: Span,
    pub(crate) body: Span,
}

/// `__global__ void ATTR_MACRO(args)` (a dangling declaration) followed by
/// `name(T* MACRO p, ...)` that parses as a call statement with a MISSING `;`, then a
/// top-level `{ ... }`: the braces are the body of `name`, qualified by the declaration.
///
/// `dangling` is the end and kind of the pending dangling qualifier; the caller clears it when
/// this finds a function.
pub(crate) fn call_shaped_header(
    node: Node<'_>,
    src: &[u8],
    dangling: (usize, FunctionKind),
) -> Option<Recovered> {
    let (end, kind) = dangling;
    let missing_semicolon = node
        .child(node.child_count().saturating_sub(1))
        .is_some_and(|c| c.start_byte() == c.end_byte());
    let name = node
        .named_child(0)
        .filter(|c| c.kind() == "call_expression")
        .and_then(|c| c.child_by_field_id(fields().function))
        .filter(|f| f.kind() == "identifier");
    let mut body = node.next_sibling();
    while let Some(b) = body.filter(|b| b.kind() == "comment") {
        body = b.next_sibling();
    }
    let (Some(name), Some(body), true) = (name, body, missing_semicolon) else {
        return None;
    };
    if body.kind() != "compound_statement"
        || end > node.start_byte()
        || !only_directives_and_attributes(&src[end..node.start_byte()])
    {
        return None;
    }
    Some(Recovered {
        body: body.id(),
        close: None,
        name: text_of(name, src),
        name_span: span_of(name),
        start: span_of(node),
        kind,
        qual_candidates: Vec::new(),
    })
}

/// Finds `[qualifiers] name ( ... ) { body }` sequences among the direct children of an ERROR
/// node (a kernel whose header the grammar could not parse) and registers their bodies.
pub(crate) fn functions_in_error(node: Node<'_>, src: &[u8]) -> Vec<Recovered> {
    let mut found_fns = Vec::new();
    let (mut global, mut device) = (false, false);
    let mut start: Option<Span> = None;
    let mut prev_ident: Option<Node<'_>> = None;
    let mut name: Option<Node<'_>> = None;
    let mut cands: Vec<String> = Vec::new();
    let mut c = node.walk();
    let children: Vec<Node<'_>> = node.children(&mut c).collect();
    let mut skip_until = 0;
    for (ci, &ch) in children.iter().enumerate() {
        if ci <= skip_until && skip_until > 0 {
            continue; // inside a recovered `{ ... }` body
        }
        let kind = ch.kind();
        if start.is_none() && kind != "comment" {
            start = Some(span_of(ch));
        }
        let t = bytes_of(ch, src);
        match kind {
            "compound_statement" | "{" => {
                // A bare `{`: the body's statements are siblings up to the matching `}`.
                let close = if kind == "{" {
                    let mut depth = 0usize;
                    let mut found = None;
                    for (si, &sib) in children.iter().enumerate().skip(ci + 1) {
                        match sib.kind() {
                            "{" => depth += 1,
                            "}" if depth == 0 => {
                                found = Some((sib.id(), sib.end_byte()));
                                skip_until = si;
                                break;
                            }
                            "}" => depth -= 1,
                            _ => {}
                        }
                    }
                    if found.is_none() && name.is_some() {
                        // Unbalanced braces (`#if`/`#else` each opening a `for {`): the body
                        // runs up to the sibling before the next definition.
                        let mut last = None;
                        for (si, &sib) in children.iter().enumerate().skip(ci + 1) {
                            if matches!(
                                sib.kind(),
                                "template_declaration"
                                    | "function_definition"
                                    | "template"
                                    | "linkage_specification"
                                    | "namespace_definition"
                            ) {
                                break;
                            }
                            last = Some((si, sib));
                        }
                        if let Some((si, sib)) = last {
                            found = Some((sib.id(), sib.end_byte()));
                            skip_until = si;
                        }
                    }
                    match found {
                        Some(f) => Some(f),
                        None => {
                            (global, device, start, prev_ident, name) =
                                (false, false, None, None, None);
                            cands.clear();
                            continue;
                        }
                    }
                } else {
                    None
                };
                if let (Some(n), Some(st)) = (name, start) {
                    let fkind = if global {
                        FunctionKind::Kernel
                    } else if device {
                        FunctionKind::Device
                    } else {
                        FunctionKind::Host
                    };
                    if fkind != FunctionKind::Host || !cands.is_empty() {
                        found_fns.push(Recovered {
                            body: ch.id(),
                            close,
                            name: text_of(n, src),
                            name_span: span_of(n),
                            start: st,
                            kind: fkind,
                            qual_candidates: std::mem::take(&mut cands),
                        });
                    }
                }
                (global, device, start, prev_ident, name) = (false, false, None, None, None);
                cands.clear();
            }
            ";"
            | "}"
            | "expression_statement"
            | "declaration"
            | "function_definition"
            | "template_declaration"
            | "preproc_def"
            | "preproc_function_def"
            | "preproc_include"
            | "preproc_call"
            | "comment" => {
                (global, device, start, prev_ident, name) = (false, false, None, None, None);
                cands.clear();
            }
            "(" | "parameter_list" | "argument_list" => {
                if let Some(p) = prev_ident.take() {
                    name = Some(p);
                }
            }
            "function_declarator" => {
                name = ch.child_by_field_id(fields().declarator).map(|d| {
                    let mut d = d;
                    while let Some(n) = d.child_by_field_id(fields().name) {
                        d = n;
                    }
                    d
                });
            }
            "identifier" | "type_identifier" | "field_identifier" => {
                if let Some(p) = prev_ident.replace(ch) {
                    cands.push(text_of(p, src));
                }
            }
            "launch_bounds" => global = true,
            _ => {
                if t == b"__global__" {
                    global = true;
                } else if t == b"__device__" {
                    device = true;
                } else if ch.child_count() > 0 && ch.child_count() <= 8 {
                    let mut c2 = ch.walk();
                    for g in ch.children(&mut c2) {
                        match bytes_of(g, src) {
                            b"__global__" => global = true,
                            b"__device__" => device = true,
                            _ => {}
                        }
                    }
                }
            }
        }
    }
    found_fns
}

/// `__global__ void k(...) { UNREACHABLE_CODE }`: a body holding only a macro parses as an
/// initializer list, making the definition a declaration. Keep the function (with no loops:
/// the body is not code the grammar understood).
pub(crate) fn stub_kernels(node: Node<'_>, declarators: &[Node<'_>], src: &[u8]) -> Vec<Stub> {
    let mut out = Vec::new();
    let mut kind = None;
    let mut c = node.walk();
    for ch in node.children(&mut c) {
        match (ch.kind(), bytes_of(ch, src)) {
            ("launch_bounds", _) | (_, b"__global__") => kind = Some(FunctionKind::Kernel),
            (_, b"__device__") if kind.is_none() => kind = Some(FunctionKind::Device),
            _ => {}
        }
    }
    let Some(kind) = kind else { return out };
    for d in declarators {
        if d.kind() != "init_declarator" {
            continue;
        }
        let (Some(fd), Some(body)) = (
            d.child_by_field_id(fields().declarator),
            d.child_by_field_id(fields().value),
        ) else {
            continue;
        };
        if fd.kind() != "function_declarator" || body.kind() != "initializer_list" {
            continue;
        }
        let Some(name_node) = fd.child_by_field_id(fields().declarator) else {
            continue;
        };
        out.push(Stub {
            name: text_of(name_node, src),
            kind,
            span: span_of(node),
            name_span: span_of(name_node),
            body: span_of(body),
        });
    }
    out
}

/// A top-level declaration / ERROR without a closing `;` that carries `__global__`/`__device__`:
/// its end byte and kind, so that the function definition right after it inherits them.
pub(crate) fn dangling_qualifier(node: Node<'_>, src: &[u8]) -> Option<(usize, FunctionKind)> {
    let mut c = node.walk();
    let mut kind = None;
    let mut last_semicolon = false;
    let mut count = 0;
    for ch in node.children(&mut c) {
        count += 1;
        if count > 64 {
            return None;
        }
        let t = bytes_of(ch, src);
        last_semicolon = t == b";";
        if t == b"__global__" {
            kind = Some(FunctionKind::Kernel);
        } else if t == b"__device__" && kind.is_none() {
            kind = Some(FunctionKind::Device);
        }
    }
    match (kind, last_semicolon) {
        (Some(kind), false) => Some((node.end_byte(), kind)),
        _ => None,
    }
}

/// True for text that holds only whitespace, preprocessor lines and `__launch_bounds__(...)` /
/// `__attribute__((...))` (what CK-style headers put between `__global__ void` and the name).
pub(crate) fn only_directives_and_attributes(b: &[u8]) -> bool {
    if b.len() > 4096 {
        return false;
    }
    let text = String::from_utf8_lossy(b);
    let mut rest = String::new();
    let mut in_directive = false;
    for line in text.split('\n') {
        let t = line.trim();
        if in_directive || t.starts_with('#') {
            in_directive = t.ends_with('\\');
            continue;
        }
        rest.push_str(t);
        rest.push(' ');
    }
    let r = rest.trim();
    r.is_empty()
        || ((r.starts_with("__launch_bounds__") || r.starts_with("__attribute__"))
            && !r.contains([';', '{', '}']))
}

/// An `expression_statement` that is only a MISSING `;` (zero width).
pub(crate) fn is_missing_statement(n: Node<'_>) -> bool {
    n.kind() == "expression_statement" && n.start_byte() == n.end_byte()
}

/// For a loop whose body `b` is a statement macro without its `;` (`MACRO(args)` then a MISSING
/// `;`): the block that follows the loop (comments between), which the macro heads.
pub(crate) fn statement_macro_block(b: Node<'_>) -> Option<Node<'_>> {
    if b.kind() != "expression_statement" || b.named_child_count() == 0 {
        return None;
    }
    let call = b.named_child(0)?;
    let semi = b.child(b.child_count().checked_sub(1)?)?;
    if call.kind() != "call_expression"
        || !semi.is_missing()
        || call
            .child_by_field_id(fields().function)
            .is_none_or(|f| f.kind() != "identifier")
    {
        return None;
    }
    let mut s = b.parent()?.next_sibling();
    while let Some(x) = s {
        if x.kind() != "comment" {
            break;
        }
        s = x.next_sibling();
    }
    s.filter(|x| x.kind() == "compound_statement")
}

/// For a loop whose body is a MISSING `;`: the statement after the pragmas that follow it (the
/// real body), and the node where the chain of such loops ends (`for ... #pragma for ... stmt`).
pub(crate) fn repaired_body<'t>(node: Node<'t>, kinds: &Kinds) -> Option<(Node<'t>, Node<'t>)> {
    let next_statement = |n: Node<'t>| {
        let mut s = n.next_sibling();
        let mut saw_pragma = false;
        while let Some(x) = s {
            match x.kind() {
                "preproc_call" => saw_pragma = true,
                "comment" => {}
                _ => break,
            }
            s = x.next_sibling();
        }
        s.filter(|_| saw_pragma)
    };
    let stmt = next_statement(node)?;
    let mut last = stmt;
    for _ in 0..256 {
        let broken = kinds.of(last.kind_id()).is_loop()
            && last
                .child_by_field_id(fields().body)
                .is_some_and(is_missing_statement);
        if !broken {
            break;
        }
        match next_statement(last) {
            Some(n) => last = n,
            None => break,
        }
    }
    Some((stmt, last))
}
