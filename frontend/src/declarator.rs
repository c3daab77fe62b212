//! Declarator chains and parameters: the declared name under pointers, references, arrays and
//! parentheses, function declarators, parameter types as ids show them, integer literals.

use tree_sitter::Node;

use crate::identity::{join_tokens, tokens};
use crate::ir::Span;
use crate::kinds::fields;
use crate::lex::parse_int_literal;
use crate::node::{bytes_of, span_of, text_of};

/// Walks a declarator chain to the declared name: (name, initialiser, is pointer or reference).
pub(crate) fn declarator_name(d: Option<Node<'_>>) -> (Option<Node<'_>>, Option<Node<'_>>, bool) {
    let mut d = d;
    let mut value = None;
    let mut is_ptr = false;
    let mut guard = 0;
    while let Some(x) = d {
        guard += 1;
        if guard > 256 {
            return (None, value, is_ptr);
        }
        match x.kind() {
            "identifier" | "field_identifier" => return (Some(x), value, is_ptr),
            // A pointer to member, `void (S::*pm)() = &S::f;`: the grammar reads `S::*pm` as a
            // qualified name around a pointer type declarator whose name is a type identifier.
            "qualified_identifier" => {
                d = x
                    .child_by_field_id(fields().name)
                    .filter(|n| n.kind() == "pointer_type_declarator");
            }
            "pointer_type_declarator" => {
                is_ptr = true;
                return (
                    x.child_by_field_id(fields().declarator)
                        .filter(|n| matches!(n.kind(), "type_identifier" | "identifier")),
                    value,
                    is_ptr,
                );
            }
            "init_declarator" => {
                value = x.child_by_field_id(fields().value);
                d = x.child_by_field_id(fields().declarator);
            }
            "pointer_declarator" | "reference_declarator" => {
                is_ptr = true;
                d = x
                    .child_by_field_id(fields().declarator)
                    .or_else(|| x.named_child(x.named_child_count().saturating_sub(1)));
            }
            "array_declarator" | "attributed_declarator" => {
                d = x.child_by_field_id(fields().declarator)
            }
            // A function pointer or reference variable, `void (*fp)(float*) = helper;`: the
            // name is inside the parenthesized declarator (a prototype names no variable).
            "function_declarator"
                if x.child_by_field_id(fields().declarator)
                    .is_some_and(|n| n.kind() == "parenthesized_declarator") =>
            {
                d = x.child_by_field_id(fields().declarator)
            }
            "parenthesized_declarator" => {
                // `__align__(16) char smem[]` reads as `__align__ (16 char smem[])` with an
                // ERROR before the declarator: take the last child that is not one.
                let mut c = x.walk();
                d = x
                    .named_children(&mut c)
                    .filter(|n| !n.is_error() && n.kind() != "comment")
                    .last();
            }
            _ => return (None, value, is_ptr),
        }
    }
    (None, value, is_ptr)
}

/// The `function_declarator` in a declarator chain (`*f(...)`, `&f(...)`, `&&f(...)`,
/// `(f)(...)`).
pub(crate) fn find_function_declarator(d: Node<'_>) -> Option<Node<'_>> {
    let mut cur = Some(d);
    for _ in 0..64 {
        let x = cur?;
        cur = match x.kind() {
            "function_declarator" => return Some(x),
            "parenthesized_declarator" => x.named_child(0),
            // `T& f(...)`: the grammar gives the inner declarator no field name.
            "reference_declarator" => x.named_child(x.named_child_count().checked_sub(1)?),
            _ => x.child_by_field_id(fields().declarator),
        };
    }
    None
}

/// What a function definition's declarator names: the name as written (qualifiers and
/// template arguments included, parameters not), the unqualified name and the parameter list.
pub(crate) struct FnParts<'t> {
    pub(crate) written: String,
    pub(crate) leaf: String,
    pub(crate) leaf_span: Span,
    pub(crate) params: Option<Node<'t>>,
}

/// The [`FnParts`] of a function definition's declarator: a `function_declarator` anywhere in
/// the chain (pointer and reference returns, a name from a macro call), or a conversion
/// operator (`operator float() const`, `S::operator T&()`).
pub(crate) fn function_parts<'t>(d: Node<'t>, src: &[u8]) -> Option<FnParts<'t>> {
    if let Some(fd) = find_function_declarator(d) {
        let name_node = fd.child_by_field_id(fields().declarator)?;
        let mut leaf = name_node;
        for _ in 0..64 {
            let next = match leaf.kind() {
                // `NAME_MACRO(a, b)(params)`: the name comes from a macro call.
                "function_declarator" => leaf.child_by_field_id(fields().declarator),
                "qualified_identifier" | "template_function" | "template_method" => {
                    leaf.child_by_field_id(fields().name)
                }
                _ => None,
            };
            match next {
                Some(n) => leaf = n,
                None => break,
            }
        }
        return Some(FnParts {
            written: text_of(name_node, src),
            leaf: text_of(leaf, src),
            leaf_span: span_of(leaf),
            params: fd.child_by_field_id(fields().parameters),
        });
    }
    // A conversion operator: `operator T (params)`, possibly qualified (`S::operator T`).
    let mut op = d;
    for _ in 0..64 {
        match op.kind() {
            "operator_cast" => break,
            "qualified_identifier" => op = op.child_by_field_id(fields().name)?,
            _ => return None,
        }
    }
    if op.kind() != "operator_cast" {
        return None;
    }
    // `operator const T *()`: the pointer is part of the name, the parameters end it.
    let mut abstract_fn = op.child_by_field_id(fields().declarator)?;
    for _ in 0..64 {
        if abstract_fn.kind() == "abstract_function_declarator" {
            break;
        }
        // `operator T&()`: the reference declarator's inner declarator has no field name.
        abstract_fn = abstract_fn
            .child_by_field_id(fields().declarator)
            .or_else(|| abstract_fn.named_child(abstract_fn.named_child_count().checked_sub(1)?))?;
    }
    let params = abstract_fn.child_by_field_id(fields().parameters)?;
    let name_end = params.start_byte();
    let trimmed = |from: usize| {
        let text = String::from_utf8_lossy(src.get(from..name_end).unwrap_or_default());
        join_tokens(tokens(&text))
    };
    let leaf = trimmed(op.start_byte());
    let mut leaf_span = span_of(op);
    leaf_span.end = name_end;
    Some(FnParts {
        written: trimmed(d.start_byte()),
        leaf,
        leaf_span,
        params: Some(params),
    })
}

/// The text of the second item of a parenthesised list (`(float, smem)` -> `smem`).
pub(crate) fn second_list_item(list: Node<'_>, src: &[u8]) -> Option<String> {
    let mut c = list.walk();
    let item = list
        .named_children(&mut c)
        .filter(|n| n.kind() != "comment")
        .nth(1)?;
    let t = text_of(item, src);
    let t = t.trim();
    (!t.is_empty()).then(|| t.to_string())
}

/// The value of an integer literal, possibly negated and parenthesised (`-(4)`).
pub(crate) fn int_value(n: Node<'_>, src: &[u8]) -> Option<i128> {
    let mut n = n;
    let mut neg = false;
    for _ in 0..8 {
        match n.kind() {
            "number_literal" => {
                let v = parse_int_literal(&text_of(n, src))?;
                return Some(if neg { -v } else { v });
            }
            "parenthesized_expression" => n = n.named_child(0)?,
            "unary_expression"
                if n.child_by_field_id(fields().operator)
                    .is_some_and(|o| bytes_of(o, src) == b"-") =>
            {
                neg = !neg;
                n = n.child_by_field_id(fields().argument)?;
            }
            _ => return None,
        }
    }
    None
}

/// The type of a parameter as ids show it: its tokens without the declared name, the default
/// value, `__restrict__` and (for a parameter passed by value) top-level `const`/`volatile`.
pub(crate) fn param_type(p: Node<'_>, name: Option<Node<'_>>, src: &[u8]) -> String {
    let skip_value = p.child_by_field_id(fields().default_value).map(|v| v.id());
    let skip_name = name.map(|n| n.id());
    let mut by_value = true;
    let mut toks: Vec<String> = Vec::new();
    let mut stack = vec![p];
    let mut budget = 4096;
    while let Some(n) = stack.pop() {
        budget -= 1;
        if budget == 0 {
            break;
        }
        if Some(n.id()) == skip_value || Some(n.id()) == skip_name || n.kind() == "comment" {
            continue;
        }
        if matches!(
            n.kind(),
            "pointer_declarator"
                | "reference_declarator"
                | "array_declarator"
                | "abstract_pointer_declarator"
                | "abstract_reference_declarator"
                | "abstract_array_declarator"
                | "function_declarator"
                | "abstract_function_declarator"
        ) {
            by_value = false;
        }
        if n.child_count() == 0 {
            let t = text_of(n, src);
            if t == "=" && skip_value.is_some() {
                continue;
            }
            if !matches!(t.as_str(), "__restrict__" | "__restrict" | "restrict") {
                toks.push(t);
            }
        } else {
            let mut c = n.walk();
            let children: Vec<_> = n.children(&mut c).collect();
            stack.extend(children.into_iter().rev());
        }
    }
    if by_value {
        toks.retain(|t| t != "const" && t != "volatile");
    }
    let parts: Vec<&str> = toks.iter().flat_map(|t| tokens(t)).collect();
    join_tokens(parts)
}
