//! Types defined in a file: classes (their bases, data members and declared member functions),
//! enums and type aliases, read from their nodes by iterating direct children (never by
//! recursion on the syntax tree); and the one normal form of a type as written that the IR's
//! receiver types use (`const ns::T<4>&` -> `ns::T<4>`).

use tree_sitter::Node;

use crate::declarator::{declarator_name, find_function_declarator, function_parts};
use crate::identity::{join_tokens, tokens};
use crate::ir::{Field, Span, TypeDef, TypeKind};
use crate::kinds::fields;
use crate::node::{bytes_of, span_of, text_of};

/// Words that qualify a type without naming it.
const QUALIFIERS: &[&str] = &[
    "const",
    "volatile",
    "struct",
    "class",
    "union",
    "typename",
    "__restrict__",
    "__restrict",
    "restrict",
    "static",
    "constexpr",
    "inline",
    "__shared__",
    "__device__",
    "__constant__",
    "mutable",
    "register",
    "extern",
];

/// A type as written, in the normal form of [`crate::ir::Call::receiver_type`]: cv-qualifiers,
/// elaborated-type keywords, `*`, `&` and blanks left out (`const ns::T<4, 2>&` ->
/// `ns::T<4,2>`). `None` for `auto`/`decltype(...)` and for nothing.
pub fn normal_type(text: &str) -> Option<String> {
    let toks: Vec<&str> = tokens(text)
        .into_iter()
        .filter(|t| !QUALIFIERS.contains(t) && !matches!(*t, "*" | "&" | "&&"))
        .collect();
    // `auto` or `decltype(...)` as the type itself is unknown here; inside template arguments
    // (`Loader<decltype(desc), 4>`) it leaves only that argument unknown.
    let mut depth = 0i32;
    for t in &toks {
        match *t {
            "<" => depth += 1,
            ">" => depth -= 1,
            ">>" => depth -= 2,
            "auto" | "decltype" if depth <= 0 => return None,
            _ => {}
        }
    }
    if toks.is_empty() {
        return None;
    }
    Some(join_tokens(toks))
}

/// A type word that is never a class: a scalar (`int`, `unsigned`, `float`, `uint32_t`, the HIP
/// aliases `uint`, `uchar`, ...), a half or bfloat16 type, `dim3`, or a CUDA/HIP vector type
/// (`float4`, `uchar2`). The one table, for the lowering and the guards.
pub fn is_builtin_type(name: &str) -> bool {
    const WORDS: &[&str] = &[
        "void",
        "bool",
        "char",
        "short",
        "int",
        "long",
        "float",
        "double",
        "signed",
        "unsigned",
        "wchar_t",
        "char8_t",
        "char16_t",
        "char32_t",
        "half",
        "half2",
        "__half",
        "__half2",
        "__nv_bfloat16",
        "__nv_bfloat162",
        // The toolkits' typedefs and 8-bit float types (`cuda_bf16.h`, `cuda_fp16.h`,
        // `cuda_fp8.h`, `hip_fp8.h`): a functional cast `nv_bfloat16(x)` is no call.
        "nv_bfloat16",
        "nv_bfloat162",
        "nv_half",
        "nv_half2",
        "__nv_fp8_e4m3",
        "__nv_fp8_e5m2",
        "__nv_fp8x2_e4m3",
        "__nv_fp8x2_e5m2",
        "__nv_fp8x4_e4m3",
        "__nv_fp8x4_e5m2",
        "__hip_fp8_e4m3",
        "__hip_fp8_e5m2",
        "__hip_fp8_e4m3_fnuz",
        "__hip_fp8_e5m2_fnuz",
        "__hip_bfloat16",
        "__hip_bfloat162",
        "hip_bfloat16",
        "bfloat16",
        "bf16",
        "dim3",
        "__fp16",
        "__bf16",
        "_Float16",
        "uchar",
        "ushort",
        "ulong",
        "longlong",
        "ulonglong",
    ];
    if WORDS.contains(&name) || crate::ints::parse(name).is_some() {
        return true;
    }
    // CUDA/HIP vector types: `float4`, `uchar2`, `longlong1`, `double3`.
    let base = name.trim_end_matches(|c: char| c.is_ascii_digit());
    let digits = &name[base.len()..];
    matches!(digits, "1" | "2" | "3" | "4")
        && matches!(
            base,
            "char"
                | "uchar"
                | "short"
                | "ushort"
                | "int"
                | "uint"
                | "long"
                | "ulong"
                | "longlong"
                | "ulonglong"
                | "float"
                | "double"
        )
}

/// The names of a template header's parameters (`template <class T, int N = 4, typename...
/// R>` -> `T`, `N`, `R`), from its `parameters` list.
pub(crate) fn template_param_names(tpl: Node<'_>, src: &[u8]) -> Vec<String> {
    let Some(list) = tpl.child_by_field_id(fields().parameters) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut c = list.walk();
    for p in list.named_children(&mut c) {
        let name = match p.kind() {
            "type_parameter_declaration" | "variadic_type_parameter_declaration" => {
                last_named_of_kind(p, &["type_identifier"])
            }
            "optional_type_parameter_declaration" => p.child_by_field_id(fields().name),
            "parameter_declaration"
            | "optional_parameter_declaration"
            | "variadic_parameter_declaration" => {
                declarator_name(p.child_by_field_id(fields().declarator)).0
            }
            "template_template_parameter_declaration" => {
                last_named_of_kind(p, &["type_parameter_declaration"])
                    .and_then(|t| last_named_of_kind(t, &["type_identifier"]))
            }
            _ => None,
        };
        if let Some(n) = name {
            out.push(text_of(n, src));
        }
    }
    out
}

/// The name of a class with none: the typedef's (`typedef struct { ... } Op;` is `Op`), else
/// as demanglers print it (`(anonymous struct)`).
pub(crate) fn anonymous_class_name(node: Node<'_>, src: &[u8]) -> String {
    let typedef_name = node
        .parent()
        .filter(|p| p.kind() == "type_definition")
        .and_then(|p| p.child_by_field_id(fields().declarator))
        .filter(|d| d.kind() == "type_identifier");
    match typedef_name {
        Some(d) => text_of(d, src),
        None => format!("(anonymous {})", node.kind().trim_end_matches("_specifier")),
    }
}

fn last_named_of_kind<'t>(n: Node<'t>, kinds: &[&str]) -> Option<Node<'t>> {
    let mut c = n.walk();
    let found = n
        .named_children(&mut c)
        .filter(|x| kinds.contains(&x.kind()))
        .last();
    found
}

/// The unqualified name of a class or enum name node (`S`, `S<double>` -> `S`, `ns::S` ->
/// `S`).
fn leaf_name(n: Node<'_>, src: &[u8]) -> String {
    let mut n = n;
    for _ in 0..16 {
        match n.kind() {
            "qualified_identifier" | "template_type" => match n.child_by_field_id(fields().name) {
                Some(x) => n = x,
                None => break,
            },
            _ => break,
        }
    }
    text_of(n, src)
}

/// The definition of a class, struct or union with a body, named `qualified_name` where it is;
/// `template` is the template declaration around it, if any. `None` without a body.
pub(crate) fn class_def(
    node: Node<'_>,
    template: Option<Node<'_>>,
    qualify: impl Fn(&str) -> String,
    src: &[u8],
) -> Option<TypeDef> {
    let body = node.child_by_field_id(fields().body)?;
    let name_node = node.child_by_field_id(fields().name);
    let name = match name_node {
        Some(n) => leaf_name(n, src),
        None => anonymous_class_name(node, src),
    };
    let written = name_node.map_or(name.clone(), |n| {
        crate::identity::strip_template_args(&join_tokens(tokens(&text_of(n, src))))
    });
    let mut span = span_of(node);
    let mut template_params = Vec::new();
    if let Some(t) = template {
        span = span_of(t);
        template_params = template_param_names(t, src);
    }
    let mut bases = Vec::new();
    let mut fields_out = Vec::new();
    let mut methods: Vec<String> = Vec::new();
    let mut c = node.walk();
    for ch in node.named_children(&mut c) {
        if ch.kind() != "base_class_clause" {
            continue;
        }
        let mut c2 = ch.walk();
        for b in ch.named_children(&mut c2) {
            if matches!(
                b.kind(),
                "type_identifier" | "qualified_identifier" | "template_type"
            ) {
                bases.push(join_tokens(tokens(&text_of(b, src))));
            }
        }
    }
    let mut add_method = |m: String| {
        if !methods.contains(&m) {
            methods.push(m);
        }
    };
    let mut c = body.walk();
    let members: Vec<Node<'_>> = body.named_children(&mut c).collect();
    for m in members {
        // A member template: the declaration under the template header.
        let m = if m.kind() == "template_declaration" {
            let mut c2 = m.walk();
            let inner = m.named_children(&mut c2).find(|x| {
                matches!(
                    x.kind(),
                    "function_definition" | "declaration" | "field_declaration"
                )
            });
            match inner {
                Some(x) => x,
                None => continue,
            }
        } else {
            m
        };
        match m.kind() {
            "function_definition" => {
                if let Some(parts) = m
                    .child_by_field_id(fields().declarator)
                    .and_then(|d| function_parts(d, src))
                {
                    add_method(parts.leaf);
                }
            }
            "field_declaration" | "declaration" => {
                let ty = m.child_by_field_id(fields().ty);
                let type_text = ty.map(|t| text_of(t, src)).unwrap_or_default();
                let mut c2 = m.walk();
                let decls: Vec<Node<'_>> = m
                    .children_by_field_id(fields().declarator_nz, &mut c2)
                    .collect();
                for d in decls {
                    if let Some(fd) = find_function_declarator(d) {
                        if let Some(n) = fd.child_by_field_id(fields().declarator) {
                            if n.kind() == "parenthesized_declarator" {
                                // `float (*step)(float);`: a data member holding a pointer to
                                // a function, not a method.
                                if let (Some(name), _, _) = declarator_name(Some(n)) {
                                    fields_out.push(Field {
                                        name: text_of(name, src),
                                        type_text: type_text.clone(),
                                        is_pointer_or_ref: true,
                                    });
                                }
                                continue;
                            }
                            add_method(join_tokens(tokens(&text_of(n, src))));
                        }
                        continue;
                    }
                    if let Some(parts) = function_parts(d, src) {
                        add_method(parts.leaf); // `operator T*();`
                        continue;
                    }
                    let (name, _, is_ptr) = declarator_name(Some(d));
                    if let Some(n) = name {
                        fields_out.push(Field {
                            name: text_of(n, src),
                            type_text: type_text.clone(),
                            is_pointer_or_ref: is_ptr,
                        });
                    }
                }
            }
            _ => {}
        }
    }
    Some(TypeDef {
        qualified_name: qualify(&written),
        name,
        kind: TypeKind::Class,
        span,
        aliased: None,
        template_params,
        bases,
        fields: fields_out,
        methods,
    })
}

/// An enum with a body.
pub(crate) fn enum_def(
    node: Node<'_>,
    qualify: impl Fn(&str) -> String,
    src: &[u8],
) -> Option<TypeDef> {
    node.child_by_field_id(fields().body)?;
    let name = leaf_name(node.child_by_field_id(fields().name)?, src);
    Some(TypeDef {
        qualified_name: qualify(&name),
        name,
        kind: TypeKind::Enum,
        span: span_of(node),
        aliased: None,
        template_params: Vec::new(),
        bases: Vec::new(),
        fields: Vec::new(),
        methods: Vec::new(),
    })
}

/// The aliases of `typedef T A, *B;` (`A` -> `T`; a pointer alias too: it names no class
/// of its own) or of `using A = T;` (`template` is the template declaration around it).
pub(crate) fn alias_defs(
    node: Node<'_>,
    template: Option<Node<'_>>,
    qualify: impl Fn(&str) -> String,
    src: &[u8],
) -> Vec<TypeDef> {
    let Some(ty) = node.child_by_field_id(fields().ty) else {
        return Vec::new();
    };
    // `typedef struct { ... } Op;`: the class itself is named `Op` (see `class_def`).
    if ty.child_by_field_id(fields().body).is_some()
        && ty.child_by_field_id(fields().name).is_none()
    {
        return Vec::new();
    }
    let aliased = match ty.child_by_field_id(fields().body) {
        // `typedef struct S { ... } T;`: `T` is `S`.
        Some(_) => ty
            .child_by_field_id(fields().name)
            .map_or_else(String::new, |n| join_tokens(tokens(&text_of(n, src)))),
        None => join_tokens(tokens(&text_of(ty, src))),
    };
    let span = template.map_or(span_of(node), span_of);
    let template_params = template.map_or(Vec::new(), |t| template_param_names(t, src));
    let mut names: Vec<(String, Span)> = Vec::new();
    if node.kind() == "alias_declaration" {
        if let Some(n) = node.child_by_field_id(fields().name) {
            names.push((text_of(n, src), span));
        }
    } else {
        let mut c = node.walk();
        let decls: Vec<Node<'_>> = node
            .children_by_field_id(fields().declarator_nz, &mut c)
            .collect();
        for d in decls {
            // `typedef float T;` names a type_identifier; `typedef float* P;` a pointer
            // declarator around one; `typedef void (*F)(int);` a function pointer.
            let mut x = d;
            for _ in 0..16 {
                if x.kind() == "type_identifier" {
                    break;
                }
                match x
                    .child_by_field_id(fields().declarator)
                    .or_else(|| x.named_child(0))
                {
                    Some(n) => x = n,
                    None => break,
                }
            }
            if x.kind() == "type_identifier" {
                names.push((text_of(x, src), span));
            }
        }
    }
    names
        .into_iter()
        .filter(|(n, _)| !n.is_empty() && bytes_of(ty, src) != n.as_bytes())
        .map(|(name, span)| TypeDef {
            qualified_name: qualify(&name),
            name,
            kind: TypeKind::Alias,
            span,
            aliased: Some(aliased.clone()),
            template_params: template_params.clone(),
            bases: Vec::new(),
            fields: Vec::new(),
            methods: Vec::new(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normal_types() {
        assert_eq!(
            normal_type("const ns::T<4, 2>&").as_deref(),
            Some("ns::T<4, 2>")
        );
        assert_eq!(normal_type("struct S").as_deref(), Some("S"));
        assert_eq!(normal_type("auto"), None);
        assert_eq!(normal_type("const auto&"), None);
        assert_eq!(normal_type(""), None);
        assert_eq!(normal_type("decltype(x)"), None);
        assert_eq!(normal_type("decltype(x)::value_type"), None);
        // Inside template arguments it leaves that argument unknown, not the class.
        assert_eq!(
            normal_type("Loader<decltype(d), 4>").as_deref(),
            Some("Loader<decltype(d), 4>")
        );
        assert_eq!(
            normal_type("A<B<decltype(d)>>").as_deref(),
            Some("A<B<decltype(d)>>")
        );
    }
}
