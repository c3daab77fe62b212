//! Address uses of a function body (`Function::address_uses`, see [`AddressUse`]): stores
//! through pointers, address-valued call arguments, pointer and reference initialisers and
//! plain assignments, each with the names its address comes from. Iterative walks over small
//! expression trees (never recursive), bounded in the nodes they visit.

use tree_sitter::Node;

use super::Lowerer;
use crate::ir::{AddressKind, AddressUse};
use crate::kinds::fields;
use crate::node::{bytes_of, first_named_non_comment, span_of, text_of};

/// Nodes one address walk visits at most (an expression larger than this keeps the bases found
/// so far).
const WALK_CAP: usize = 256;

/// How deep `&*&*p` may nest before the walk gives up (the two walks call each other once per
/// `&` of an lvalue, so the stack stays bounded whatever the input).
const NEST_CAP: u32 = 16;

/// Calls whose first argument is the value converted (`reinterpret_cast<float4*>(p)`).
const CASTS: &[&str] = &[
    "reinterpret_cast",
    "static_cast",
    "const_cast",
    "dynamic_cast",
    "__builtin_assume_aligned",
];

impl Lowerer<'_> {
    fn push_use(&mut self, bases: Vec<String>, element: bool, node: Node<'_>, kind: AddressKind) {
        if bases.is_empty() {
            return;
        }
        if let Some(fc) = self.fns.last_mut() {
            fc.f.address_uses.push(AddressUse {
                bases,
                element,
                span: span_of(node),
                kind,
            });
        }
    }

    /// `target = value`, `target OP= value`: a store when the target is not a plain name; the
    /// value's address when a plain name is assigned with `=`.
    pub(super) fn assignment_addresses(&mut self, node: Node<'_>) {
        if !self.in_body(node) {
            return;
        }
        let f = fields();
        let (Some(l), Some(o)) = (
            node.child_by_field_id(f.left),
            node.child_by_field_id(f.operator),
        ) else {
            return;
        };
        let (bases, element) = lvalue(l, self.src, 0);
        if element {
            self.push_use(bases, true, l, AddressKind::Store);
        } else if l.kind() == "identifier" && bytes_of(o, self.src) == b"=" {
            if let Some(r) = node.child_by_field_id(f.right) {
                let (vb, el) = lvalue(r, self.src, 0);
                let target = text_of(l, self.src);
                self.push_use(vb, el, r, AddressKind::Assigned { target });
            }
        }
    }

    /// `x++`, `--p[i]`: a store when the operand is not a plain name.
    pub(super) fn update_addresses(&mut self, node: Node<'_>) {
        if !self.in_body(node) {
            return;
        }
        let Some(a) = node.child_by_field_id(fields().argument) else {
            return;
        };
        let (bases, element) = lvalue(a, self.src, 0);
        if element {
            self.push_use(bases, true, a, AddressKind::Store);
        }
    }

    /// Each argument of the call just lowered (the last of `Function::calls`, when it is this
    /// node) whose address comes from a name.
    pub(super) fn call_addresses(&mut self, node: Node<'_>) {
        if !self.in_body(node) {
            return;
        }
        let span = span_of(node);
        let Some(call) = self.fns.last().and_then(|fc| {
            let i = fc.f.calls.len().checked_sub(1)?;
            let c = &fc.f.calls[i];
            (c.span.start == span.start && c.span.end == span.end).then_some(i)
        }) else {
            return;
        };
        let Some(args) = node.child_by_field_id(fields().arguments) else {
            return;
        };
        let mut c = args.walk();
        let list: Vec<Node<'_>> = args
            .named_children(&mut c)
            .filter(|n| n.kind() != "comment")
            .collect();
        for (arg, a) in list.into_iter().enumerate() {
            if a.kind() == "number_literal" || a.kind().contains("string") {
                continue;
            }
            let (bases, element) = lvalue(a, self.src, 0);
            self.push_use(bases, element, a, AddressKind::CallArg { call, arg });
        }
    }

    /// The initialisers of the pointers and references a local declaration declares.
    pub(super) fn decl_addresses(&mut self, node: Node<'_>) {
        if !self.in_body(node) {
            return;
        }
        let f = fields();
        // `auto q = p + off;` declares a pointer without a `*`.
        let auto = node
            .child_by_field_id(f.ty)
            .is_some_and(|t| bytes_of(t, self.src) == b"auto");
        let mut c = node.walk();
        let declarators: Vec<Node<'_>> = node
            .children_by_field_id(f.declarator_nz, &mut c)
            .filter(|d| d.kind() == "init_declarator")
            .collect();
        for d in declarators {
            let (Some(inner), Some(value)) = (
                d.child_by_field_id(f.declarator),
                d.child_by_field_id(f.value),
            ) else {
                continue;
            };
            let reference = match inner.kind() {
                "reference_declarator" => true,
                "pointer_declarator" => false,
                "identifier" if auto => false,
                _ => continue,
            };
            let (bases, element) = lvalue(value, self.src, 0);
            if element && !reference {
                continue; // `float v = p[i];` copies a value
            }
            let Some(name) = declared_name(inner) else {
                continue;
            };
            let name_span = span_of(name);
            let Some(decl) = self.fns.last().and_then(|fc| {
                fc.f.decls
                    .iter()
                    .rposition(|v| v.name_span.start == name_span.start)
            }) else {
                continue;
            };
            self.push_use(bases, element, value, AddressKind::Init { decl, reference });
        }
    }
}

/// The declared identifier under pointer/reference declarators (`* const q`, `&r`).
fn declared_name(mut d: Node<'_>) -> Option<Node<'_>> {
    for _ in 0..64 {
        match d.kind() {
            "identifier" => return Some(d),
            "pointer_declarator" | "reference_declarator" | "attributed_declarator" => {
                d = d
                    .child_by_field_id(fields().declarator)
                    .or_else(|| d.named_child(d.named_child_count().checked_sub(1)?))?;
            }
            _ => return None,
        }
    }
    None
}

/// The callee name of a call that converts its first argument (`reinterpret_cast<T*>(x)`).
fn cast_call_value<'t>(n: Node<'t>, src: &[u8]) -> Option<Node<'t>> {
    let func = n.child_by_field_id(fields().function)?;
    let name = match func.kind() {
        "template_function" => func.child_by_field_id(fields().name)?,
        "identifier" => func,
        _ => return None,
    };
    let text = bytes_of(name, src);
    if !CASTS.iter().any(|c| c.as_bytes() == text) {
        return None;
    }
    first_named_non_comment(n.child_by_field_id(fields().arguments)?)
}

/// The memory an expression designates, or the address it computes: (bases, element). A plain
/// name is (`[name]`, false); `p[i]`, `*p`, `p->x`, `s.x` are element forms.
fn lvalue(node: Node<'_>, src: &[u8], depth: u32) -> (Vec<String>, bool) {
    let f = fields();
    if depth > NEST_CAP {
        return (Vec::new(), false);
    }
    let mut cur = node;
    for _ in 0..WALK_CAP {
        match cur.kind() {
            "parenthesized_expression" => match first_named_non_comment(cur) {
                Some(n) => cur = n,
                None => break,
            },
            "cast_expression" => match cur.child_by_field_id(f.value) {
                Some(n) => cur = n,
                None => break,
            },
            "call_expression" => match cast_call_value(cur, src) {
                Some(n) => cur = n,
                None => break,
            },
            "subscript_expression" => {
                return (
                    addresses(cur.child_by_field_id(f.argument), src, depth + 1),
                    true,
                )
            }
            "pointer_expression" => {
                let star = cur
                    .child_by_field_id(f.operator)
                    .is_some_and(|o| bytes_of(o, src) == b"*");
                return if star {
                    (
                        addresses(cur.child_by_field_id(f.argument), src, depth + 1),
                        true,
                    )
                } else {
                    (addresses(Some(cur), src, depth + 1), false)
                };
            }
            "field_expression" => {
                let arrow = cur
                    .child_by_field_id(f.operator)
                    .is_some_and(|o| bytes_of(o, src) == b"->");
                let Some(obj) = cur.child_by_field_id(f.argument) else {
                    break;
                };
                if arrow {
                    return (addresses(Some(obj), src, depth + 1), true);
                }
                // `s.x`: the object's own memory (a name: a variable or a reference).
                let (b, _) = lvalue(obj_peel(obj), src, depth + 1);
                return (b, true);
            }
            "identifier" => return (vec![text_of(cur, src)], false),
            _ => return (addresses(Some(cur), src, depth + 1), false),
        }
    }
    (Vec::new(), false)
}

/// `(s)` and casts around an object of a member access.
fn obj_peel(mut n: Node<'_>) -> Node<'_> {
    for _ in 0..64 {
        match n.kind() {
            "parenthesized_expression" => match first_named_non_comment(n) {
                Some(x) => n = x,
                None => break,
            },
            _ => break,
        }
    }
    n
}

/// The names an address-valued expression's address comes from (see [`AddressUse`]).
fn addresses(root: Option<Node<'_>>, src: &[u8], depth: u32) -> Vec<String> {
    let f = fields();
    let mut out: Vec<String> = Vec::new();
    let mut work: Vec<Node<'_>> = root.into_iter().collect();
    let mut seen = 0;
    while let Some(n) = work.pop() {
        seen += 1;
        if seen > WALK_CAP {
            break;
        }
        match n.kind() {
            "identifier" => {
                let t = text_of(n, src);
                if !out.contains(&t) {
                    out.push(t);
                }
            }
            "parenthesized_expression" => work.extend(first_named_non_comment(n)),
            "cast_expression" => work.extend(n.child_by_field_id(f.value)),
            "call_expression" => work.extend(cast_call_value(n, src)),
            "update_expression" => work.extend(n.child_by_field_id(f.argument)),
            "comma_expression" => work.extend(n.child_by_field_name("right")),
            "conditional_expression" => {
                // Pushed in reverse: popped in source order.
                work.extend(n.child_by_field_name("alternative"));
                work.extend(n.child_by_field_name("consequence"));
            }
            "binary_expression" => {
                let op = n.child_by_field_id(f.operator).map(|o| bytes_of(o, src));
                if matches!(op, Some(b"+") | Some(b"-")) {
                    work.extend(n.child_by_field_id(f.right));
                    work.extend(n.child_by_field_id(f.left));
                }
            }
            "pointer_expression" => {
                let amp = n
                    .child_by_field_id(f.operator)
                    .is_some_and(|o| bytes_of(o, src) == b"&");
                if let (true, Some(a)) = (amp, n.child_by_field_id(f.argument)) {
                    // `&p[i]`, `&p->x`, `&*p`: the address of memory an address designates;
                    // `&x` of a variable is the variable's own address, not a pointer's.
                    if let (b, true) = lvalue(a, src, depth + 1) {
                        for x in b {
                            if !out.contains(&x) {
                                out.push(x);
                            }
                        }
                    }
                }
            }
            // A subscript, member or call result used as an operand is a value, not an address.
            _ => {}
        }
    }
    out
}
