//! `Function::address_uses`: the stores through pointers and references, the address-valued
//! call arguments and the pointer/reference initialisers of a body, with their bases.

use frontend::{parse, AddressKind, AddressUse, Function, SourceFile};

fn func<'a>(f: &'a SourceFile, name: &str) -> &'a Function {
    f.functions
        .iter()
        .find(|x| x.name == name)
        .unwrap_or_else(|| panic!("no function {name}"))
}

/// (text of the expression, bases, element) of the uses of `kind`'s shape.
fn uses(
    src: &str,
    f: &Function,
    pick: impl Fn(&AddressUse) -> bool,
) -> Vec<(String, String, bool)> {
    f.address_uses
        .iter()
        .filter(|u| pick(u))
        .map(|u| {
            (
                src[u.span.start..u.span.end].to_string(),
                u.bases.join(","),
                u.element,
            )
        })
        .collect()
}

fn stores(src: &str, f: &Function) -> Vec<(String, String)> {
    uses(src, f, |u| u.kind == AddressKind::Store)
        .into_iter()
        .map(|(t, b, e)| {
            assert!(e, "a store is an element form: {t}");
            (t, b)
        })
        .collect()
}

fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
    v.iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

#[test]
fn stores_through_every_lvalue_shape() {
    let src = r#"
struct P { float x; };
__global__ void k(float* a, float* b, P* c, float* d, float* e, int* idx, float* g, int n) {
    int i = threadIdx.x;
    a[i] = 1.0f;
    *b += 2.0f;
    c->x = 3.0f;
    *(d + i) = 4.0f;
    ((float*)e)[i]++;
    --g[idx[i]];
    n = 5;
    i += 1;
    float local[4];
    local[0] = 1.0f;
    *a++ = 0.0f;
    reinterpret_cast<float4*>(e)[i].x = 1.0f;
    (i > 0 ? a : b)[i] = 7.0f;
    c[i].x -= 1.0f;
}
"#;
    let f = parse(src.as_bytes());
    let k = func(&f, "k");
    assert_eq!(
        stores(src, k),
        pairs(&[
            ("a[i]", "a"),
            ("*b", "b"),
            ("c->x", "c"),
            ("*(d + i)", "d,i"),
            ("((float*)e)[i]", "e"),
            ("g[idx[i]]", "g"),
            ("local[0]", "local"),
            ("*a++", "a"),
            ("reinterpret_cast<float4*>(e)[i].x", "e"),
            ("(i > 0 ? a : b)[i]", "a,b"),
            ("c[i].x", "c"),
        ])
    );
}

#[test]
fn call_arguments_initialisers_and_assignments() {
    let src = r#"
__device__ void put(float* p, float v);
__device__ void add(float& r, float v);
__global__ void k(float* out, const float* in, float* acc, int* count, float* y, const int* rows, int n) {
    int i = threadIdx.x;
    put(out + i, in[i]);
    add(acc[i], 1.0f);
    atomicAdd(&count[i], 1);
    float* q = y + rows[i];
    float& r = acc[0];
    auto z = out + 4;
    float v = in[i];
    float* w;
    w = q + 1;
    __stcs(w, v);
}
"#;
    let f = parse(src.as_bytes());
    let k = func(&f, "k");
    let args = uses(src, k, |u| matches!(u.kind, AddressKind::CallArg { .. }));
    assert_eq!(
        args,
        vec![
            ("out + i".to_string(), "out,i".to_string(), false),
            ("in[i]".into(), "in".into(), true),
            ("acc[i]".into(), "acc".into(), true),
            ("&count[i]".into(), "count".into(), false),
            ("w".into(), "w".into(), false),
            ("v".into(), "v".into(), false),
        ]
    );
    // The call each argument belongs to.
    let callees: Vec<(String, usize)> = k
        .address_uses
        .iter()
        .filter_map(|u| match u.kind {
            AddressKind::CallArg { call, arg } => Some((k.calls[call].callee.clone(), arg)),
            _ => None,
        })
        .collect();
    assert_eq!(
        callees,
        [
            ("put", 0),
            ("put", 1),
            ("add", 0),
            ("atomicAdd", 0),
            ("__stcs", 0),
            ("__stcs", 1)
        ]
        .map(|(c, a)| (c.to_string(), a))
    );
    let inits: Vec<(String, String, bool)> = k
        .address_uses
        .iter()
        .filter_map(|u| match u.kind {
            AddressKind::Init { decl, reference } => {
                Some((k.decls[decl].name.clone(), u.bases.join(","), reference))
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        inits,
        vec![
            ("i".to_string(), String::new(), false),
            ("q".into(), "y".into(), false),
            ("r".into(), "acc".into(), true),
            ("z".into(), "out".into(), false),
        ]
        .into_iter()
        .filter(|(_, b, _)| !b.is_empty())
        .collect::<Vec<_>>()
    );
    let assigned = uses(
        src,
        k,
        |u| matches!(&u.kind, AddressKind::Assigned { target } if target == "w"),
    );
    assert_eq!(
        assigned,
        vec![("q + 1".to_string(), "q".to_string(), false)]
    );
}

#[test]
fn host_bodies_and_deep_nesting_are_bounded() {
    // A host function's body is not lowered: nothing listed.
    let src = "void h(float* p) { p[0] = 1.0f; }\n";
    assert!(func(&parse(src.as_bytes()), "h").address_uses.is_empty());
    // `&*&*...p` nested far deeper than the walk follows: no overflow, no panic.
    let deep = format!(
        "__global__ void k(float* p) {{ {}p{} = 1.0f; }}\n",
        "*&".repeat(5000),
        ""
    );
    let f = parse(deep.as_bytes());
    let _ = &func(&f, "k").address_uses;
}
