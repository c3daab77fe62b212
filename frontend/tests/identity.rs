//! Loop and function identity on the C++ that real HIP code is made of: namespaces (named,
//! nested, anonymous), classes, overloads, templates and their explicit specialisations, both
//! branches of an `#if`, macro-named kernels; and the resolution of what users type.

use frontend::{parse, LookupError, LoopLoc, LoopRef, SourceFile};
use std::collections::HashSet;

fn ids(f: &SourceFile) -> Vec<String> {
    f.functions.iter().map(|x| x.id.to_string()).collect()
}

fn loop_ids(f: &SourceFile) -> Vec<String> {
    f.all_loops()
        .map(|(loc, _, _)| f.loop_id(loc).to_string())
        .collect()
}

const ISSUE: &str = "namespace a { __global__ void k(float* x, int n) { for (int i = 0; i < n; ++i) { x[i] += 1.0f; } } }
namespace b { __global__ void k(float* x, int n) { for (int i = 0; i < n; ++i) { __syncthreads(); x[i] += 1.0f; } } }
__global__ void over(float* x, int n) { for (int i = 0; i < n; ++i) { x[i] += 1.0f; } }
__global__ void over(int* x, int n) { for (int i = 0; i < n; ++i) { atomicAdd(x, 1); } }
";

#[test]
fn the_issue_reproduction_gets_four_distinct_ids() {
    let f = parse(ISSUE.as_bytes());
    assert_eq!(
        loop_ids(&f),
        [
            "a::k:0",
            "b::k:0",
            "over(float*, int):0",
            "over(int*, int):0"
        ]
    );
    assert_eq!(f.functions[0].qualified_name, "a::k");
    assert_eq!(f.functions[2].signature.as_deref(), Some("(float*, int)"));
}

#[test]
fn namespaces_classes_and_anonymous_scopes() {
    let src = r#"
namespace { __global__ void k(float* x) { for (;;) {} } }
namespace a::b { __global__ void k(float* x) { for (;;) {} } }
namespace a { namespace { __device__ void h() { for (;;) {} } } }
struct S { __device__ void m(int n) { for (;;) {} } };
template <typename T> struct W { __device__ void m(T n) { for (;;) {} } };
struct { __device__ void u() { for (;;) {} } } unnamed;
__global__ void k(float* x) { for (;;) {} }
"#;
    let f = parse(src.as_bytes());
    assert_eq!(
        ids(&f),
        [
            "(anonymous namespace)::k",
            "a::b::k",
            "a::(anonymous namespace)::h",
            "S::m",
            "W::m",
            "(anonymous struct)::u",
            "k",
        ]
    );
}

#[test]
fn overloads_get_their_parameter_types_normalised() {
    let src = r#"
__global__ void over(const float* __restrict__ x, int n = 4) { for (;;) {} }
__global__ void over(const float *  /* in */ x, unsigned   int n) { for (;;) {} }
__global__ void over(int (&a)[4], const int n) { for (;;) {} }
__device__ void over(void) { for (;;) {} }
__device__ void solo(float* x) { for (;;) {} }
"#;
    let f = parse(src.as_bytes());
    assert_eq!(
        ids(&f),
        [
            "over(const float*, int)",
            "over(const float*, unsigned int)",
            "over(int(&)[4], int)",
            "over()",
            "solo",
        ]
    );
}

#[test]
fn templates_and_explicit_specialisations() {
    let src = r#"
template <typename T> __global__ void k(T* x) { for (;;) {} }
template <> __global__ void k<float>(float* x) { for (;;) {} }
template <> __global__ void k<double>(double* x) { for (;;) {} }
template <typename T> struct S { __device__ void m(); };
template <typename T> __device__ void S<T>::m() { for (;;) {} }
template <> __device__ void S<float>::m() { for (;;) {} }
template <int N> __global__ void only(float* x) { for (;;) {} }
"#;
    let f = parse(src.as_bytes());
    assert_eq!(
        ids(&f),
        [
            "k",
            "k<float>",
            "k<double>",
            "S<T>::m",
            "S<float>::m",
            "only"
        ]
    );
}

#[test]
fn identical_definitions_in_both_branches_of_an_if_get_ordinals() {
    let src = r#"
#if USE_FAST
__global__ void k(float* x, int n) { for (int i = 0; i < n; ++i) x[i] = 0; }
#else
__global__ void k(float* x, int n) { for (int i = 0; i < n; ++i) x[i] = 1; }
#endif
__global__ void k(int* x) { for (;;) {} }
"#;
    let f = parse(src.as_bytes());
    assert_eq!(ids(&f), ["k(float*, int)#1", "k(float*, int)#2", "k(int*)"]);
}

#[test]
fn ids_are_stable_under_edits_elsewhere() {
    let before = parse(ISSUE.as_bytes());
    let edited = format!("// a comment\n\n#include <x.h>\n__global__ void other() {{ for (;;) {{}} }}\n{ISSUE}\n// tail\n");
    let after = parse(edited.as_bytes());
    let b: HashSet<String> = loop_ids(&before).into_iter().collect();
    let a: HashSet<String> = loop_ids(&after).into_iter().collect();
    assert!(b.is_subset(&a), "{b:?} not in {a:?}");
}

#[test]
fn macro_named_and_macro_qualified_kernels() {
    let src = r#"
#define KERNEL __global__
#define NAME(a, b) a##_##b
KERNEL void k(float* x) { for (;;) {} }
__global__ void NAME(scale, f32)(float* x) { for (;;) {} }
__global__ void NAME(scale, f64)(double* x) { for (;;) {} }
"#;
    let f = parse(src.as_bytes());
    assert_eq!(ids(&f), ["k", "NAME(scale, f32)", "NAME(scale, f64)"]);
}

fn resolve(f: &SourceFile, r: &str) -> Result<String, LookupError> {
    let r: LoopRef = r.parse()?;
    f.resolve(&r).map(|loc| f.loop_id(loc).to_string())
}

#[test]
fn resolution_by_id_short_id_and_line() {
    let f = parse(ISSUE.as_bytes());
    assert_eq!(resolve(&f, "b::k:0").unwrap(), "b::k:0");
    assert_eq!(
        resolve(&f, "over(int *, int):0").unwrap(),
        "over(int*, int):0"
    );
    assert_eq!(resolve(&f, "2").unwrap(), "b::k:0");
    assert_eq!(resolve(&f, "4").unwrap(), "over(int*, int):0");
    // Short names that name several loops are refused with the candidates.
    match resolve(&f, "k:0") {
        Err(LookupError::AmbiguousId { candidates, .. }) => {
            let c: Vec<(String, u32)> = candidates.into_iter().map(|c| (c.id, c.line)).collect();
            assert_eq!(c, [("a::k:0".to_string(), 1), ("b::k:0".to_string(), 2)]);
        }
        other => panic!("{other:?}"),
    }
    let e = resolve(&f, "over:0").unwrap_err().to_string();
    assert!(
        e.contains("names several loops") && e.contains("over(float*, int):0 (line 3)"),
        "{e}"
    );
    // A unique short name is still accepted.
    let g = parse(b"namespace a { __global__ void k(int n) { for (;;) {} } }");
    assert_eq!(resolve(&g, "k:0").unwrap(), "a::k:0");
    // Unknown ids and lines list the loops there are.
    let e = resolve(&f, "c::k:0").unwrap_err();
    assert_eq!(e.candidates().len(), 4);
    assert!(e.to_string().contains("no function named `c::k`"), "{e}");
    let e = resolve(&f, "b::k:3").unwrap_err().to_string();
    assert!(
        e.contains("has no loop 3 (it has 1)") && e.contains("b::k:0 (line 2)"),
        "{e}"
    );
    let e = resolve(&f, "9").unwrap_err();
    assert!(
        matches!(e, LookupError::NoLoopAtLine { line: 9, .. }),
        "{e:?}"
    );
    assert_eq!(e.candidates()[0].line, 4, "nearest first");
}

#[test]
fn several_loops_on_one_line_are_ambiguous_by_line() {
    let f = parse(b"__global__ void k(int n) { for (;;) {} for (;;) {} }\n");
    let e = resolve(&f, "1").unwrap_err();
    assert!(matches!(e, LookupError::AmbiguousLine { .. }), "{e:?}");
    assert!(e.to_string().contains("k:0 (line 1)") && e.to_string().contains("k:1 (line 1)"));
    assert_eq!(
        f.resolve(&"k:1".parse().unwrap()).unwrap(),
        LoopLoc {
            function: 0,
            index: 1
        }
    );
}

#[test]
fn loop_ids_serialise_as_strings() {
    let f = parse(ISSUE.as_bytes());
    let id = f.loop_id(LoopLoc {
        function: 2,
        index: 0,
    });
    assert_eq!(
        serde_json::to_string(&id).unwrap(),
        "\"over(float*, int):0\""
    );
}

#[test]
fn continued_pragma_lines_and_inline_asm() {
    let src = "__global__ void k(float* x) {\n#pragma unroll \\\n  8\n  for (int i = 0; i < 64; ++i) x[i] = 0;\n  asm volatile(\"s_waitcnt lgkmcnt(0)\\n\" \"s_barrier\" ::: \"memory\");\n}\n";
    let f = parse(src.as_bytes());
    let p = f.functions[0].loops[0].pragma.as_ref().unwrap();
    assert_eq!(p.hint, frontend::UnrollHint::Unroll(Some(8)));
    assert_eq!(f.functions[0].asm.len(), 1);
    assert_eq!(
        f.functions[0].asm[0].template,
        "s_waitcnt lgkmcnt(0)\\ns_barrier"
    );
}
