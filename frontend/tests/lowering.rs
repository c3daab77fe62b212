//! Lowering tests: each IR feature on small HIP sources, checked field by field.

use frontend::*;

fn text(src: &str, s: Span) -> &str {
    &src[s.start..s.end]
}

fn func<'a>(f: &'a SourceFile, name: &str) -> &'a Function {
    f.functions
        .iter()
        .find(|x| x.name == name)
        .unwrap_or_else(|| {
            panic!(
                "no function {name}; have {:?}",
                f.functions.iter().map(|x| &x.name).collect::<Vec<_>>()
            )
        })
}

#[test]
fn function_kinds_and_attributes() {
    let src = r#"
#define KERNEL __global__
#define DEV_INLINE __device__ __forceinline__
#define KATTR KERNEL
__global__ void k(int n) {}
__device__ float d(float x) { return x; }
__host__ __device__ int hd() { return 0; }
int host_fn() { return 1; }
template <typename T, int N> __global__ void __launch_bounds__(256, 2) tk(T* p) {}
static __device__ void sd() {}
extern "C" __global__ void ck() {}
extern "C" { __global__ void ck2() {} }
namespace outer { namespace inner { __global__ void nk() {} } }
struct S { __device__ void m() {} };
KERNEL void mk(float* a) {}
KATTR void mk2() {}
DEV_INLINE float md(float v) { return v; }
template <> __global__ void tk<float, 4>(float* p) {}
"#;
    let f = parse(src.as_bytes());
    // The macro-qualified definitions (`KERNEL void mk`) parse cleanly: the parse skips
    // specifier macros, and their names give the qualifiers.
    let error_lines: Vec<u32> = f.parse_errors.iter().map(|e| e.span.line).collect();
    assert_eq!(error_lines, Vec::<u32>::new());
    let kinds: Vec<(&str, FunctionKind)> = f
        .functions
        .iter()
        .map(|x| (x.name.as_str(), x.kind))
        .collect();
    use FunctionKind::*;
    assert_eq!(
        kinds,
        vec![
            ("k", Kernel),
            ("d", Device),
            ("hd", Device),
            ("host_fn", Host),
            ("tk", Kernel),
            ("sd", Device),
            ("ck", Kernel),
            ("ck2", Kernel),
            ("nk", Kernel),
            ("m", Device),
            ("mk", Kernel),
            ("mk2", Kernel),
            ("md", Device),
            ("tk", Kernel),
        ]
    );
    let tk = &f.functions[4];
    assert!(tk.is_template);
    assert_eq!(
        tk.launch_bounds.as_deref(),
        Some(&["256".to_string(), "2".to_string()][..])
    );
    assert!(text(src, tk.span).starts_with("template <typename T"));
    assert_eq!(tk.params[0].name, "p");
    assert!(func(&f, "sd").is_static);
    assert_eq!(func(&f, "nk").qualified_name, "outer::inner::nk");
    assert_eq!(func(&f, "m").qualified_name, "S::m");
    assert_eq!(func(&f, "mk").qualifier_macro.as_deref(), Some("KERNEL"));
    assert_eq!(func(&f, "mk2").qualifier_macro.as_deref(), Some("KATTR"));
    assert_eq!(
        func(&f, "md").qualifier_macro.as_deref(),
        Some("DEV_INLINE")
    );
    assert!(f.functions[13].is_template);
    let k = func(&f, "k");
    assert_eq!(text(src, k.name_span), "k");
    assert_eq!(text(src, k.body), "{}");
    assert_eq!((k.span.line, k.span.column), (5, 1));
}

#[test]
fn kernels_behind_unparsable_macros_and_preprocessor_are_found() {
    let src = r#"
#ifdef USE_HIP
__global__ void in_ifdef(int n) { for (int i = 0; i < n; ++i) {} }
#else
__global__ void in_else(int n) {
#if FAST
  for (int i = 0; i < 4; ++i) {}
#endif
}
#endif
__global__ void LAUNCH_BOUNDS(256) after_macro(int n) { while (n--) {} }
"#;
    let f = parse(src.as_bytes());
    let names: Vec<&str> = f.functions.iter().map(|x| x.name.as_str()).collect();
    assert_eq!(names, vec!["in_ifdef", "in_else", "after_macro"]);
    assert!(f.functions.iter().all(|x| x.kind == FunctionKind::Kernel));
    assert_eq!(
        f.functions[1].loops.len(),
        1,
        "loop inside #if inside the body"
    );
    // `LAUNCH_BOUNDS` is defined nowhere: an unknown specifier, skipped by the parse.
    assert!(!f.functions[2].recovered);
    assert_eq!(f.functions[2].unseen_specifiers, ["LAUNCH_BOUNDS"]);
    assert_eq!(f.functions[2].loops[0].kind, LoopKind::While);
}

#[test]
fn loops_nesting_spans_and_kinds() {
    let src = "__global__ void k(int n, float* a) {
  for (int i = 0; i < n; ++i) {
    while (n > 0) { n--; }
    do { a[0] += 1; } while (a[0] < 3);
  }
  for (float x : arr) a[0] = x;
  for (;;) { break; }
}
";
    let f = parse(src.as_bytes());
    let l = &func(&f, "k").loops;
    assert_eq!(l.len(), 5);
    let kinds: Vec<LoopKind> = l.iter().map(|x| x.kind).collect();
    assert_eq!(
        kinds,
        vec![
            LoopKind::For,
            LoopKind::While,
            LoopKind::Do,
            LoopKind::RangeFor,
            LoopKind::For
        ]
    );
    assert_eq!(
        l.iter().map(|x| x.parent).collect::<Vec<_>>(),
        vec![None, Some(0), Some(0), None, None]
    );
    assert_eq!(
        l.iter().map(|x| x.depth).collect::<Vec<_>>(),
        vec![0, 1, 1, 0, 0]
    );
    assert_eq!(
        l.iter().map(|x| x.index).collect::<Vec<_>>(),
        vec![0, 1, 2, 3, 4]
    );
    assert_eq!(text(src, l[0].init.unwrap()), "int i = 0");
    assert_eq!(text(src, l[0].condition.unwrap()), "i < n");
    assert_eq!(text(src, l[0].update.unwrap()), "++i");
    assert_eq!(text(src, l[0].keyword), "for");
    assert_eq!((l[0].keyword.line, l[0].keyword.column), (2, 3));
    assert!(l[0].body_is_block);
    assert_eq!(text(src, l[1].condition.unwrap()), "n > 0");
    assert_eq!(text(src, l[2].condition.unwrap()), "a[0] < 3");
    assert_eq!(text(src, l[2].keyword), "do");
    assert_eq!(text(src, l[3].init.unwrap()), "float x");
    assert_eq!(text(src, l[3].condition.unwrap()), "arr");
    assert!(!l[3].body_is_block);
    assert_eq!(text(src, l[3].body), "a[0] = x;");
    assert!(l[4].init.is_none() && l[4].condition.is_none() && l[4].update.is_none());
    assert!(text(src, l[0].span).starts_with("for (int i") && text(src, l[0].span).ends_with('}'));
}

#[test]
fn unroll_pragmas() {
    let src = "#define UF 8
__global__ void k(float* a) {
  #pragma unroll
  for (int i = 0; i < 4; ++i) {}
#pragma unroll 4
  for (int i = 0; i < 4; ++i) {}
  #pragma unroll(2)
  // a comment between
  for (int i = 0; i < 4; ++i) {}
  #pragma nounroll
  while (a[0] > 0) {}
  #pragma unroll 1
  for (int i = 0; i < 4; ++i) {}
  #pragma unroll UF
  for (int i = 0; i < 4; ++i) {}
  #pragma unroll
  a[0] = 1;
  for (int i = 0; i < 4; ++i) {}
  _Pragma(\"unroll\") for (int i = 0; i < 4; ++i) {}
  #pragma once
  for (int i = 0; i < 4; ++i) {}
}
";
    let f = parse(src.as_bytes());
    let hints: Vec<Option<UnrollHint>> = func(&f, "k")
        .loops
        .iter()
        .map(|l| l.pragma.as_ref().map(|p| p.hint))
        .collect();
    use UnrollHint::*;
    assert_eq!(
        hints,
        vec![
            Some(Unroll(None)),
            Some(Unroll(Some(4))),
            Some(Unroll(Some(2))),
            Some(NoUnroll),
            Some(NoUnroll),
            Some(Unroll(Some(8))),
            None,
            Some(Unroll(None)),
            None
        ]
    );
    let p = func(&f, "k").loops[0].pragma.as_ref().unwrap();
    assert_eq!(text(src, p.span), "#pragma unroll");
}

fn header_of(src_loop: &str) -> (Option<ForHeader>, Option<u64>) {
    let src = format!("__global__ void k(int n) {{ {src_loop} }}");
    let f = parse(src.as_bytes());
    let l = &f.functions[0].loops[0];
    (l.header.clone(), l.trip_count)
}

#[test]
fn trip_counts_are_exact() {
    let cases: &[(&str, Option<u64>)] = &[
        ("for (int i = 0; i < 16; ++i) {}", Some(16)),
        ("for (int i = 0; i < 16; i += 3) {}", Some(6)),
        ("for (int i = 0; i <= 16; i += 4) {}", Some(5)),
        ("for (int i = 16; i > 0; --i) {}", Some(16)),
        ("for (int i = 15; i >= 0; i -= 2) {}", Some(8)),
        ("for (int i = 0; i != 12; i += 3) {}", Some(4)),
        ("for (int i = 0; i != 10; i += 3) {}", None),
        ("for (int i = 10; i < 4; ++i) {}", Some(0)),
        ("for (int i = 0; i > 4; --i) {}", Some(0)),
        ("for (int i = 0; i < 16; --i) {}", None),
        ("for (int i = 0; 8 > i; i++) {}", Some(8)),
        ("for (int i = -4; i < 4; i = i + 2) {}", Some(4)),
        ("for (unsigned i = 0x10; i > 0; i -= 0x4) {}", Some(4)),
        ("for (int i = 0; i < 1'000; i++) {}", Some(1000)),
        ("for (int i = 0; i < n; ++i) {}", None),
        ("for (int i = 0; i < 16; ++i) { i += 2; }", None),
        ("for (int i = 0; i < 16; i *= 2) {}", None),
        ("int i; for (i = 0; i < 5; i++) {}", Some(5)),
    ];
    for (code, want) in cases {
        let (_, got) = header_of(code);
        assert_eq!(got, *want, "{code}");
    }
}

#[test]
fn for_header_shape() {
    let (h, _) = header_of("for (unsigned j = 2; n >= j; j -= 4) {}");
    let h = h.expect("canonical header");
    assert_eq!(h.var, "j");
    assert_eq!(h.var_type.as_deref(), Some("unsigned"));
    assert!(!h.var_on_left);
    assert_eq!(h.cmp, CmpOp::Le);
    assert!(matches!(h.init_value, Some(Expr::Int { value: 2, .. })));
    assert!(matches!(&h.bound, Expr::Ident { name, .. } if name == "n"));
    assert!(matches!(h.step, Step::Const(-4)));
    let (h, _) = header_of("for (int i = n - 1; i < (n * 2); i += n / 2) {}");
    let h = h.unwrap();
    assert!(matches!(&h.init_value, Some(Expr::Binary { op, .. }) if op == "-"));
    assert!(matches!(&h.bound, Expr::Binary { op, .. } if op == "*"));
    assert!(matches!(&h.step, Step::Add(Expr::Binary { op, .. }) if op == "/"));
    let (h, _) = header_of("for (int i = 0, j = 1; i < 4; ++i) {}");
    assert!(h.is_none());
}

/// A header without init clause is read by the one header reader (the unroller had a second,
/// token-level one): the variable is the comparison's plain-name side, the left one first.
#[test]
fn for_header_without_init() {
    let (h, trip) = header_of("for (; 8 > k; k += 2) {}");
    let h = h.expect("canonical header");
    assert_eq!(
        (h.var.as_str(), h.cmp, h.var_on_left),
        ("k", CmpOp::Lt, false)
    );
    assert!(h.init_value.is_none() && h.var_type.is_none());
    assert!(matches!(h.step, Step::Const(2)));
    assert_eq!(trip, None, "no init value: no trip count");
    let (h, _) = header_of("for (; i < n; i = i + s) {}");
    let h = h.expect("canonical header");
    assert_eq!(h.var, "i");
    assert!(matches!(&h.step, Step::Add(Expr::Ident { name, .. }) if name == "s"));
    // `i = s + i` was refused by the token reader; `i = i + s < 3` is `i = ((i + s) < 3)`.
    assert!(header_of("for (; i < n; i = s + i) {}").0.is_some());
    for not_canonical in [
        "for (; i < n; i = i + s < 3) {}",
        "for (; f(i) < n; ++i) {}",
        "for (; i < n; ++j) {}",
        "for (;;) {}",
        "for (; i; ++i) {}",
    ] {
        assert!(header_of(not_canonical).0.is_none(), "{not_canonical}");
    }
}

#[test]
fn calls_of_every_shape() {
    let src = "__global__ void k(float* p) {
  __syncthreads();
  cooperative_groups::this_grid().sync();
  g.sync();
  ptr->fetch(1, 2);
  cg::sync(block);
  f<float, 4>(p);
  ns::g<int>(0xffffffff, 32, -1);
  kern<<<1, 2>>>(p);
}";
    let f = parse(src.as_bytes());
    let c = &func(&f, "k").calls;
    let shape: Vec<(&str, Option<&str>, Option<&str>)> = c
        .iter()
        .map(|c| {
            (
                c.callee.as_str(),
                c.receiver.as_deref(),
                c.qualifier.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        shape,
        vec![
            ("__syncthreads", None, None),
            ("sync", Some("cooperative_groups::this_grid()"), None),
            ("this_grid", None, Some("cooperative_groups")),
            ("sync", Some("g"), None),
            ("fetch", Some("ptr"), None),
            ("sync", None, Some("cg")),
            ("f", None, None),
            ("g", None, Some("ns")),
            ("kern", None, None),
        ]
    );
    let g = &c[7];
    assert_eq!(g.arg_ints, vec![Some(0xffff_ffff), Some(32), Some(-1)]);
    assert_eq!(text(src, g.arg_spans[1]), "32");
    assert_eq!(text(src, g.args), "(0xffffffff, 32, -1)");
    assert_eq!(text(src, c[4].callee_span), "fetch");
}

#[test]
fn identifier_access() {
    let src = "__device__ void k(int* p) {
  int i = 0, j;
  i = 1; j += i; i++; --j;
  int* q = &i;
  s.i = 3;
  p->i = 4;
  f(i);
}";
    let f = parse(src.as_bytes());
    let ids: Vec<(&str, Access)> = func(&f, "k")
        .idents
        .iter()
        .map(|u| (u.name.as_str(), u.access))
        .collect();
    use Access::*;
    assert_eq!(
        ids,
        vec![
            ("i", Decl),
            ("j", Decl),
            ("i", Write),
            ("j", Write),
            ("i", Read),
            ("i", Write),
            ("j", Write),
            ("q", Decl),
            ("i", Write),
            ("s", Read),
            ("p", Read),
            ("i", Read),
        ]
    );
}

#[test]
fn declarations_shared_memory_and_aliases() {
    let src = "extern __shared__ float file_smem[];
constexpr int WARP_SIZE = 32;
__global__ void k(int n) {
  __shared__ float tile[32][33];
  extern __shared__ float smem[];
  extern __shared__ HIP_DYNAMIC_SHARED_ATTRIBUTE float attr_smem[];
  HIP_DYNAMIC_SHARED(float, hip_smem)
  HIP_DYNAMIC_SHARED(double, hip_smem2);
  float* a = smem + 4, b = 2;
  float& r = a[n];
  int lane = threadIdx.x % 32;
}";
    let f = parse(src.as_bytes());
    assert_eq!(f.shared.len(), 1);
    assert_eq!(
        (f.shared[0].name.as_str(), f.shared[0].kind),
        ("file_smem", SharedKind::ExternDynamic)
    );
    assert_eq!(f.globals.len(), 1);
    assert_eq!(
        (f.globals[0].name.as_str(), f.globals[0].init_int),
        ("WARP_SIZE", Some(32))
    );
    let k = func(&f, "k");
    let sh: Vec<(&str, SharedKind)> = k.shared.iter().map(|s| (s.name.as_str(), s.kind)).collect();
    use SharedKind::*;
    assert_eq!(
        sh,
        vec![
            ("tile", Static),
            ("smem", ExternDynamic),
            ("attr_smem", ExternDynamic),
            ("hip_smem", HipDynamicMacro),
            ("hip_smem2", HipDynamicMacro)
        ]
    );
    let a = k.decls.iter().find(|d| d.name == "a").unwrap();
    assert!(a.is_pointer_or_ref);
    assert_eq!(a.init_idents, vec!["smem"]);
    assert_eq!(text(src, a.init.unwrap()), "smem + 4");
    let b = k.decls.iter().find(|d| d.name == "b").unwrap();
    assert!(!b.is_pointer_or_ref);
    assert_eq!(b.init_int, Some(2));
    let r = k.decls.iter().find(|d| d.name == "r").unwrap();
    assert!(r.is_pointer_or_ref);
    assert_eq!(r.init_idents, vec!["a", "n"]);
    let lane = k.decls.iter().find(|d| d.name == "lane").unwrap();
    assert_eq!(lane.init_idents, vec!["threadIdx"]);
    let op = k.const_ops.iter().find(|o| o.op == "%").unwrap();
    assert_eq!((op.constant, op.constant_on_right), (32, true));
    assert_eq!(op.operand_names, vec!["threadIdx"]);
}

#[test]
fn jump_targets() {
    let src = "__global__ void k(int n) {
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) { if (j) break; continue; }
    switch (i) { case 0: break; default: continue; }
    auto f = [&](int x) { return x; };
    if (i == 3) goto out;
    if (i == 4) return;
    inner: ;
  }
out:
  return;
}";
    let f = parse(src.as_bytes());
    let k = func(&f, "k");
    let j: Vec<(JumpKind, JumpTarget)> =
        k.jumps.iter().map(|j| (j.kind, j.target.clone())).collect();
    use JumpKind::*;
    assert_eq!(
        j,
        vec![
            (Break, JumpTarget::Loop(1)),
            (Continue, JumpTarget::Loop(1)),
            (Break, JumpTarget::Switch),
            (Continue, JumpTarget::Loop(0)),
            (Return, JumpTarget::Lambda),
            (Goto, JumpTarget::Label("out".into())),
            (Return, JumpTarget::Function),
            (Return, JumpTarget::Function),
        ]
    );
    let labels: Vec<&str> = k.labels.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(labels, vec!["inner", "out"]);
    assert_eq!(k.lambdas.len(), 1);
}

#[test]
fn macros_and_macro_refs() {
    let src = "#define SYNC() __syncthreads()
#define BARRIER SYNC();
#define ADD(p, v) \\
  atomicAdd(p, v)
__global__ void k(float* a) {
  SYNC();
  BARRIER
  ADD(a, 1.0f);
}";
    let f = parse(src.as_bytes());
    type Summary<'a> = (&'a str, Option<Vec<String>>, Vec<String>);
    let m: Vec<Summary> = f
        .macros
        .iter()
        .map(|m| (m.name.as_str(), m.params.clone(), m.calls.clone()))
        .collect();
    assert_eq!(
        m[0],
        ("SYNC", Some(vec![]), vec!["__syncthreads".to_string()])
    );
    assert_eq!(m[1], ("BARRIER", None, vec!["SYNC".to_string()]));
    assert_eq!(m[2].1, Some(vec!["p".to_string(), "v".to_string()]));
    assert_eq!(m[2].2, vec!["atomicAdd".to_string()]);
    assert_eq!(f.macros[2].body, "atomicAdd(p, v)");
    let refs: Vec<&str> = func(&f, "k")
        .macro_refs
        .iter()
        .map(|r| r.name.as_str())
        .collect();
    assert_eq!(refs, vec!["SYNC", "BARRIER", "ADD"]);
}

#[test]
fn inert_ranges_errors_and_crlf() {
    let src = "// __syncthreads();\r\n__global__ void k() { const char* s = \"atomicAdd(\"; /* x */ char c = '\\''; R\"(raw)\"; }\r\n";
    let f = parse(src.as_bytes());
    assert!(f.crlf);
    let inert: Vec<&str> = f.inert.iter().map(|s| text(src, *s)).collect();
    assert_eq!(
        inert,
        vec![
            "// __syncthreads();",
            "\"atomicAdd(\"",
            "/* x */",
            "'\\''",
            "R\"(raw)\""
        ]
    );
    assert!(func(&f, "k").calls.is_empty());
    let bad = parse(b"__global__ void k( { for (int i = 0; i < 4; ++i) {} }");
    assert!(!bad.parse_errors.is_empty());
    // The kernel is recovered from the ERROR node, with its loop.
    assert_eq!(bad.functions.len(), 1);
    assert!(bad.functions[0].recovered);
    assert_eq!(
        (bad.functions[0].name.as_str(), bad.functions[0].kind),
        ("k", FunctionKind::Kernel)
    );
    assert_eq!(bad.functions[0].loops[0].trip_count, Some(4));
    assert!(!parse(b"int main() { return 0; }\n").crlf);
}

// ------------------------------------------------------------------ robustness

#[test]
fn empty_and_garbage_inputs() {
    let f = parse(b"");
    assert!(f.functions.is_empty() && f.parse_errors.is_empty());
    let mut garbage = Vec::with_capacity(64 * 1024);
    let mut x: u32 = 12345;
    for _ in 0..64 * 1024 {
        x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
        garbage.push((x >> 16) as u8);
    }
    let _ = parse(&garbage);
    let f =
        parse(b"\xff\xfe__global__ void k\xc3\x28(int n) { for (int i = 0; i < 4; ++i) {} } \xff");
    let _ = f;
    let f = parse(
        "__global__ void k(int n) { /* \u{e9}\u{e8} */ for (int i = 0; i < 4; ++i) {} }".as_bytes(),
    );
    assert_eq!(f.functions[0].loops.len(), 1);
    let invalid = b"__global__ void k\xff(int n) { for (int i = 0; i < 2; ++i) {} }";
    let f = parse(invalid);
    assert!(f.functions.iter().all(|f| f.name.chars().count() > 0));
}

#[test]
fn deep_nesting_does_not_overflow() {
    let depth = 20_000;
    let mut s = String::from("__global__ void k(int n) {");
    for _ in 0..depth {
        s.push_str("for(;;){");
    }
    for _ in 0..depth {
        s.push('}');
    }
    s.push('}');
    let f = parse(s.as_bytes());
    assert_eq!(f.functions[0].loops.len(), depth);
    assert_eq!(f.functions[0].loops[depth - 1].depth as usize, depth - 1);

    let mut s = String::from("__global__ void k(int n) { int x = ");
    s.push_str(&"(".repeat(depth));
    s.push('n');
    s.push_str(&")".repeat(depth));
    s.push_str("; for (int i = ");
    s.push_str(&"(".repeat(depth));
    s.push('0');
    s.push_str(&")".repeat(depth));
    s.push_str("; i < 4; ++i) {} }");
    let f = parse(s.as_bytes());
    assert_eq!(f.functions.len(), 1);

    let s = "{".repeat(depth);
    let _ = parse(s.as_bytes());
    let s = format!("__global__ void k() {{ {} }}", "a + ".repeat(depth) + "1;");
    let _ = parse(s.as_bytes());
}

#[test]
fn four_megabyte_file() {
    let unit = "__global__ void k(float* a, int n) {\n  #pragma unroll 4\n  for (int i = 0; i < 16; ++i) { a[i] += __shfl_xor(a[i], 1, 32); __syncthreads(); }\n}\n";
    let n = 4 * 1024 * 1024 / unit.len() + 1;
    let src = unit.repeat(n);
    assert!(src.len() >= 4 * 1024 * 1024);
    let f = parse(src.as_bytes());
    assert_eq!(f.functions.len(), n);
    assert!(f
        .functions
        .iter()
        .all(|f| f.loops.len() == 1 && f.loops[0].trip_count == Some(16)));
}

#[test]
fn host_bodies_are_not_lowered_and_gpu_prefilter() {
    let src = "void host(int n) { for (int i = 0; i < n; ++i) {} }\n__global__ void k(int n) { for (int i = 0; i < n; ++i) {} }\n";
    let f = parse(src.as_bytes());
    assert_eq!(f.functions.len(), 2);
    assert_eq!(f.functions[0].kind, FunctionKind::Host);
    assert!(f.functions[0].loops.is_empty() && f.functions[0].idents.is_empty());
    assert_eq!(f.functions[1].loops.len(), 1);
    assert!(may_contain_gpu_code(src.as_bytes()));
    assert!(may_contain_gpu_code(b"#define K __global__\nK void f() {}"));
    assert!(!may_contain_gpu_code(
        b"int main() { for (;;) {} } // __global_"
    ));
}

#[test]
fn kernels_split_by_preprocessor_or_inside_error_regions() {
    // CK style: `#if` between `__global__ void` and the name.
    let src = "template <typename G>
__global__ void
#if CK_USE_LAUNCH_BOUNDS
    __launch_bounds__(256, 2)
#endif
        run_op(int n)
{
    for (int i = 0; i < 4; ++i) {}
}
";
    let f = parse(src.as_bytes());
    let k = func(&f, "run_op");
    assert_eq!(k.kind, FunctionKind::Kernel);
    assert_eq!(k.loops.len(), 1);

    // A kernel whose body the grammar leaves as a bare `{` token inside an ERROR node.
    let src = "struct S { int a; } };\n};\ntemplate <typename T>\n__global__ void bare(T* out, int n) {\n#pragma FP_CONTRACT ON\n  for (int i = 0; i < 8; ++i) out[i] = 0;\n}\n";
    let f = parse(src.as_bytes());
    let k = func(&f, "bare");
    assert_eq!(k.kind, FunctionKind::Kernel);
    assert_eq!(k.loops.len(), 1);
    assert_eq!(k.loops[0].trip_count, Some(8));
}

#[test]
fn pragma_between_nested_loops_without_braces() {
    let src = "__global__ void k(float* a) {
  #pragma unroll
  for (int i = 0; i < 4; i++)
    #pragma unroll 2
    for (int j = 0; j < 4; j++)
      #pragma unroll
      for (int l = 0; l < 2; l++) a[i * 8 + j * 2 + l] = 0;
  a[1] = 2;
}";
    let f = parse(src.as_bytes());
    let l = &f.functions[0].loops;
    assert_eq!(l.len(), 3);
    assert_eq!(
        l.iter().map(|x| x.parent).collect::<Vec<_>>(),
        vec![None, Some(0), Some(1)]
    );
    assert_eq!(l.iter().map(|x| x.depth).collect::<Vec<_>>(), vec![0, 1, 2]);
    assert_eq!(
        l[1].pragma.as_ref().map(|p| p.hint),
        Some(UnrollHint::Unroll(Some(2)))
    );
    assert!(text(src, l[0].body).starts_with("for (int j"));
    assert!(text(src, l[0].span).ends_with("= 0;"));
    assert!(text(src, l[1].span).ends_with("= 0;"));
    assert_eq!(text(src, l[2].body), "a[i * 8 + j * 2 + l] = 0;");
}

#[test]
fn assignments_and_pointer_params() {
    let src = "__device__ void k(float* in, int n) { float* p; p = in + n; p += 1; n = 3; }";
    let f = parse(src.as_bytes());
    let k = &f.functions[0];
    let a: Vec<(&str, Vec<String>)> = k
        .assigns
        .iter()
        .map(|a| (a.target.as_str(), a.value_idents.clone()))
        .collect();
    assert_eq!(
        a,
        vec![
            ("p", vec!["in".to_string(), "n".to_string()]),
            ("n", vec![])
        ]
    );
    assert!(k.params[0].is_pointer_or_ref && !k.params[1].is_pointer_or_ref);
    assert_eq!(k.params[0].type_text, "float");
}

#[test]
fn trip_counts_through_named_constants() {
    let src = "#define TILE 16
#define STEP (2)
constexpr int kN = 8;
static const int kHalf = kN / 2;
int not_const = 5;
__global__ void k(float* a, int n) {
  const int local = 3;
  int var = 4;
  for (int i = 0; i < TILE; ++i) {}
  for (int i = 0; i < TILE * 2; i += STEP) {}
  for (int i = kN - 1; i >= 0; --i) {}
  for (int i = 0; i < local; ++i) {}
  for (int i = 0; i < var; ++i) {}
  for (int i = 0; i < not_const; ++i) {}
  for (int i = 0; i < n; ++i) {}
  for (int i = 0; i < TILE << 1; i += kN) {}
}";
    let f = parse(src.as_bytes());
    let trips: Vec<Option<u64>> = f.functions[0].loops.iter().map(|l| l.trip_count).collect();
    assert_eq!(
        trips,
        vec![
            Some(16),
            Some(16),
            Some(8),
            Some(3),
            None,
            None,
            None,
            Some(4)
        ]
    );
    assert!(f.globals.iter().find(|g| g.name == "kN").unwrap().is_const);
    assert!(
        !f.globals
            .iter()
            .find(|g| g.name == "not_const")
            .unwrap()
            .is_const
    );
    assert_eq!(
        trip_count(&f.functions[0].loops[0].header.clone().unwrap()),
        None,
        "literal-only API"
    );
}

#[test]
fn pragma_inside_a_preprocessor_conditional() {
    let src = "__global__ void k(float* a) {
#if defined(__HIP_PLATFORM_AMD__)
#pragma unroll 8
#else
#pragma unroll 2
#endif
  for (int i = 0; i < 16; ++i) a[i] = 0;
#ifdef NEVER
#pragma unroll
#endif
  a[0] = 1;
  for (int i = 0; i < 16; ++i) a[i] = 1;
}";
    let f = parse(src.as_bytes());
    let l = &f.functions[0].loops;
    // Both branches are seen without a preprocessor: the first one wins.
    assert_eq!(
        l[0].pragma.as_ref().map(|p| p.hint),
        Some(UnrollHint::Unroll(Some(8)))
    );
    assert!(
        l[1].pragma.is_none(),
        "a statement between the conditional and the loop"
    );
}

#[test]
fn stub_kernels_whose_body_is_a_macro() {
    let src = "template <typename T>\n__global__\n__launch_bounds__(256) void stub(const T* q) {\n  UNREACHABLE_CODE\n}\n__global__ void real(int n) { for (int i = 0; i < n; ++i) {} }\n";
    let f = parse(src.as_bytes());
    let names: Vec<(&str, FunctionKind, bool)> = f
        .functions
        .iter()
        .map(|x| (x.name.as_str(), x.kind, x.recovered))
        .collect();
    assert_eq!(
        names,
        vec![
            ("stub", FunctionKind::Kernel, true),
            ("real", FunctionKind::Kernel, false)
        ]
    );
    assert!(f.functions[0].loops.is_empty());
}

/// A bound names the last declaration of that name before the loop (local, then macro, then
/// global), looked up through an index rather than a scan of every earlier declaration; the
/// index must follow redeclarations and declarations between loops.
#[test]
fn trip_count_bounds_follow_the_last_declaration_before_the_loop() {
    let src = "constexpr int G = 3;
__global__ void k(float* a) {
  for (int i = 0; i < G; i++) a[i] = 0;
  const int n = 4;
  for (int i = 0; i < n; i++) a[i] = 0;
  const int G = 6;
  for (int i = 0; i < G; i++) a[i] = 0;
  int m = 5;
  for (int i = 0; i < m; i++) a[i] = 0;
  const int m2 = 7;
  for (int i = 0; i < m2; i++) a[i] = 0;
}
__global__ void h(float* a) { for (int i = 0; i < n; i++) a[i] = 0; for (int i = 0; i < G; i++) a[i] = 0; }
";
    let f = parse(src.as_bytes());
    let trips: Vec<Option<u64>> = func(&f, "k").loops.iter().map(|l| l.trip_count).collect();
    assert_eq!(trips, [Some(3), Some(4), Some(6), None, Some(7)]);
    // Another function does not see `k`'s locals; it sees the global.
    let trips: Vec<Option<u64>> = func(&f, "h").loops.iter().map(|l| l.trip_count).collect();
    assert_eq!(trips, [None, Some(3)]);
}

#[test]
fn functions_with_any_return_type_are_lowered() {
    let src = r#"
#define DINLINE __device__ __forceinline__
#define LB(n) __launch_bounds__(n)
namespace opus { using fp32_t = float; }
using fp32x4 = __attribute__((__ext_vector_type__(4))) float;
typedef float float4_t __attribute__((ext_vector_type(4)));
__device__ float& sync_get(float* a, int i) { for (int k = 0; k < 4; k++) {} __syncthreads(); return a[i]; }
__device__ auto& ref_auto(float* a) { for (int k = 0; k < 4; k++) {} return a[0]; }
__device__ float&& rref(float* a) { for (int k = 0; k < 4; k++) {} return static_cast<float&&>(a[0]); }
__device__ const float& cref(const float* a) { for (int k = 0; k < 4; k++) {} return a[0]; }
__device__ auto trailing(float* a) -> float { for (int k = 0; k < 4; k++) {} return a[0]; }
template <typename T> DINLINE T upcast(T v) { for (int k = 0; k < 4; k++) {} return v; }
template <> DINLINE opus::fp32_t upcast<opus::fp32_t>(opus::fp32_t v) { for (int k = 0; k < 4; k++) {} return v; }
template <typename T, int N> DINLINE T& packed_add(T& a) { for (int k = 0; k < N; k++) {} return a; }
struct __align__(16) Vec4 {
  float x[4];
  __device__ float& at(int i) { for (int k = 0; k < 4; k++) {} return x[i]; }
  __device__ operator const float*() const { for (int k = 0; k < 4; k++) {} return x; }
};
struct AddFunctor { DINLINE opus::fp32_t operator()(opus::fp32_t a, opus::fp32_t b) { for (int k = 0; k < 4; k++) {} return a + b; } };
__device__ fp32x4 ev(fp32x4* a) { for (int k = 0; k < 4; k++) {} return a[0]; }
__device__ float4_t ev2(float4_t* a) { for (int k = 0; k < 4; k++) {} return a[0]; }
__global__ void LB(256) kern(float* a) { for (int k = 0; k < 4; k++) {} }
"#;
    let f = parse(src.as_bytes());
    assert!(f.parse_errors.is_empty(), "{:?}", f.parse_errors);
    use FunctionKind::*;
    let got: Vec<(&str, &str, FunctionKind, usize)> = f
        .functions
        .iter()
        .map(|x| {
            (
                x.name.as_str(),
                x.qualified_name.as_str(),
                x.kind,
                x.loops.len(),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            ("sync_get", "sync_get", Device, 1),
            ("ref_auto", "ref_auto", Device, 1),
            ("rref", "rref", Device, 1),
            ("cref", "cref", Device, 1),
            ("trailing", "trailing", Device, 1),
            ("upcast", "upcast", Device, 1),
            ("upcast", "upcast", Device, 1),
            ("packed_add", "packed_add", Device, 1),
            ("at", "Vec4::at", Device, 1),
            (
                "operator const float*",
                "Vec4::operator const float*",
                Device,
                1
            ),
            ("operator()", "AddFunctor::operator()", Device, 1),
            ("ev", "ev", Device, 1),
            ("ev2", "ev2", Device, 1),
            ("kern", "kern", Kernel, 1),
        ]
    );
    // The name's span is the name; the parameters and the barrier are read.
    let sg = func(&f, "sync_get");
    assert_eq!(text(src, sg.name_span), "sync_get");
    assert_eq!(sg.params.len(), 2);
    assert!(sg.calls.iter().any(|c| c.callee == "__syncthreads"));
    // A function's span starts at the specifier macro in front of it.
    let pa = func(&f, "packed_add");
    assert!(text(src, pa.span).starts_with("template <typename T, int N> DINLINE"));
    let op = func(&f, "operator const float*");
    assert_eq!(text(src, op.name_span), "operator const float*");
    assert_eq!(func(&f, "operator()").params.len(), 2);
}

#[test]
fn a_definition_that_is_no_function_is_a_located_parse_error() {
    // `SHARED_MEMORY` is defined nowhere the tool can see: the grammar reads `SHARED_MEMORY
    // union { ... }` as a definition named `union`. It is reported where it is, not skipped.
    let src = "int a;\nSHARED_MEMORY union\n{\n  int a;\n}\n\
               __global__ void k() { int = ; }\n";
    let f = parse(src.as_bytes());
    let errs: Vec<(u32, u32, &str)> = f
        .parse_errors
        .iter()
        .map(|e| (e.span.line, e.span.column, e.message.as_str()))
        .collect();
    assert!(
        errs.iter().any(|(l, c, m)| *l == 2
            && *c == 1
            && m.starts_with("`SHARED_MEMORY union` is not read as a function definition")),
        "{errs:?}"
    );
    // An ERROR node says what it could not parse.
    assert!(
        errs.iter()
            .any(|(l, _, m)| *l == 6 && m.starts_with("cannot parse `")),
        "{errs:?}"
    );
}

#[test]
fn specifier_macros_of_a_header_are_skipped_too() {
    let header = "#define DINLINE __device__ __forceinline__\n#define KERNEL_LB(n) __global__ __launch_bounds__(n)\n";
    let src =
        "template <typename T> DINLINE opus::vector_t<T, 4>& add(opus::vector_t<T, 4>& a) {\n\
               for (int i = 0; i < 4; i++) {} return a; }\n\
               KERNEL_LB(256) void k(float* a) { for (int i = 0; i < 4; i++) {} }\n";
    let outer = specifier_macros(&parse(header.as_bytes()).macros);
    let f = parse_with(src.as_bytes(), &outer);
    assert!(f.parse_errors.is_empty(), "{:?}", f.parse_errors);
    let got: Vec<(&str, FunctionKind, usize, Option<&str>)> = f
        .functions
        .iter()
        .map(|x| {
            (
                x.name.as_str(),
                x.kind,
                x.loops.len(),
                x.qualifier_macro.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("add", FunctionKind::Device, 1, Some("DINLINE")),
            ("k", FunctionKind::Kernel, 1, Some("KERNEL_LB"))
        ]
    );
    // Without the header's macros they are unknown specifiers: skipped, the functions taken
    // for `__device__` ones that carry them.
    let alone = parse(src.as_bytes());
    let got: Vec<(&str, FunctionKind, usize, &[String])> = alone
        .functions
        .iter()
        .map(|x| {
            (
                x.name.as_str(),
                x.kind,
                x.loops.len(),
                x.unseen_specifiers.as_slice(),
            )
        })
        .collect();
    let (dinline, klb) = (["DINLINE".to_string()], ["KERNEL_LB".to_string()]);
    assert_eq!(
        got,
        [
            ("add", FunctionKind::Device, 1, &dinline[..]),
            ("k", FunctionKind::Device, 1, &klb[..])
        ]
    );
}

#[test]
fn array_extents_subscripts_and_array_sizes() {
    let src = r#"
#define TILE 32
__global__ void k(float* out, int si) {
  __shared__ float a[128][32];
  __shared__ float b[TILE][TILE + 1];
  __shared__ float c[256 / 32];
  a[si / 32][(si % 32)] = b[0][si & 31];
  out[si + 1] = c[0];
}
"#;
    let f = parse(src.as_bytes());
    let k = func(&f, "k");
    let dims: Vec<(&str, &[Option<i128>])> = k
        .shared
        .iter()
        .map(|d| (d.name.as_str(), d.dims.as_slice()))
        .collect();
    assert_eq!(
        dims,
        vec![
            ("a", &[Some(128), Some(32)][..]),
            ("b", &[Some(32), None][..]),
            ("c", &[None][..]),
        ]
    );
    type Op = (String, Option<(String, usize)>, bool);
    let ops: Vec<Op> = k
        .const_ops
        .iter()
        .map(|o| {
            (
                text(src, o.span).to_string(),
                o.index_of.as_ref().map(|i| (i.array.clone(), i.dim)),
                o.in_array_size,
            )
        })
        .collect();
    let ix = |a: &str, d: usize| Some((a.to_string(), d));
    assert_eq!(
        ops,
        vec![
            // `256 / 32` has two literals: no ConstOp.
            ("TILE + 1".to_string(), None, true),
            ("si / 32".to_string(), ix("a", 0), false),
            ("si % 32".to_string(), ix("a", 1), false),
            ("si & 31".to_string(), ix("b", 1), false),
            ("si + 1".to_string(), ix("out", 0), false),
        ]
    );
}

#[test]
fn a_qualified_template_declaration_read_as_a_comparison_is_a_declaration() {
    // The grammar reads `cg::thread_block_tile<32> warp = ...;` as `(cg::thread_block_tile < 32)
    // > (warp = ...)`: it is a declaration of `warp`, not a write, a comparison nor a call.
    let src = "__global__ void k(float* a) {\n  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);\n  cg::thread_block_tile<16> half(block, 2);\n  a[0] = warp.size() + half.size();\n}\n";
    let f = parse(src.as_bytes());
    let k = func(&f, "k");
    let decls: Vec<(&str, &str, Option<&str>)> = k
        .decls
        .iter()
        .map(|d| {
            (
                d.name.as_str(),
                d.type_text.as_str(),
                d.init.map(|i| text(src, i)),
            )
        })
        .collect();
    assert_eq!(
        decls,
        vec![
            (
                "warp",
                "cg::thread_block_tile<32>",
                Some("cg::tiled_partition<32>(block)")
            ),
            ("half", "cg::thread_block_tile<16>", Some("(block, 2)")),
        ]
    );
    assert_eq!(k.decls[1].init_idents, vec!["block".to_string()]);
    let uses: Vec<(&str, Access)> = k
        .idents
        .iter()
        .filter(|i| i.name == "warp" || i.name == "half")
        .map(|i| (i.name.as_str(), i.access))
        .collect();
    assert_eq!(
        uses,
        vec![
            ("warp", Access::Decl),
            ("half", Access::Decl),
            ("warp", Access::Read),
            ("half", Access::Read),
        ]
    );
    assert!(k.assigns.is_empty(), "{:?}", k.assigns);
    assert!(!k.calls.iter().any(|c| c.callee == "half"), "{:?}", k.calls);
    assert!(k
        .const_ops
        .iter()
        .all(|o| o.constant != 32 && o.constant != 16));
}

#[test]
fn function_defining_macros_are_expanded_where_they_are_written() {
    let src = "#define K(op, T) \\\n\
               __global__ void op##_kernel(T* p, int n) { \\\n\
                 for (int i = 0; i < n; ++i) p[i] = 0; \\\n\
               }\n\
               #define HEADER(name) __global__ void name(float* p, int n)\n\
               namespace ns {\n\
               K(add, float)\n\
               K(mul, double)\n\
               }\n\
               HEADER(after) {\n\
                 for (int i = 0; i < n; ++i) p[i] = 1.f;\n\
               }\n\
               INSTANTIATE(float)\n\
               __global__ void last(int n) { while (n--) {} }\n";
    let f = parse(src.as_bytes());
    assert!(f.parse_errors.is_empty(), "{:?}", f.parse_errors);
    // Name, id, line of the name, body in the macro, lines of the loops.
    type Row<'a> = (&'a str, String, u32, Option<bool>, Vec<u32>);
    let got: Vec<Row> = f
        .functions
        .iter()
        .map(|x| {
            (
                x.qualified_name.as_str(),
                x.id.to_string(),
                x.name_span.line,
                x.expansion.as_ref().map(|e| e.body_in_macro),
                x.loops.iter().map(|l| l.keyword.line).collect(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (
                "ns::add_kernel",
                "ns::add_kernel".into(),
                7,
                Some(true),
                vec![3]
            ),
            (
                "ns::mul_kernel",
                "ns::mul_kernel".into(),
                8,
                Some(true),
                vec![3]
            ),
            ("after", "after".into(), 10, Some(false), vec![11]),
            ("last", "last".into(), 14, None, vec![14]),
        ]
    );
    let add = &f.functions[0];
    assert_eq!(add.kind, FunctionKind::Kernel);
    let e = add.expansion.as_ref().unwrap();
    assert_eq!((e.name.as_str(), e.invocation.line), ("K", 7));
}

#[test]
fn pragma_macros_are_the_loops_pragmas() {
    let src = "#define UNROLL_4 _Pragma(\"unroll 4\")\n\
               __global__ void k(float* a, int n) {\n\
                 UNROLL_4\n\
                 for (int i = 0; i < n; ++i) a[i] = 0.f;\n\
                 CUTLASS_PRAGMA_NO_UNROLL\n\
                 for (int i = 0; i < n; ++i) a[i] = 1.f;\n\
               }\n";
    let f = parse(src.as_bytes());
    assert!(f.parse_errors.is_empty(), "{:?}", f.parse_errors);
    let k = func(&f, "k");
    let p: Vec<(UnrollHint, Option<&str>, u32)> = k
        .loops
        .iter()
        .map(|l| {
            let p = l.pragma.as_ref().unwrap();
            (p.hint, p.macro_name.as_deref(), p.span.line)
        })
        .collect();
    assert_eq!(
        p,
        [
            (UnrollHint::Unroll(Some(4)), Some("UNROLL_4"), 3),
            (UnrollHint::NoUnroll, Some("CUTLASS_PRAGMA_NO_UNROLL"), 5)
        ]
    );
}

#[test]
fn calls_of_forwarded_dereferenced_and_parenthesised_callables() {
    let src = r#"
typedef unsigned long ulong;
__device__ int (*global_fp)(int);
template <class F> __device__ void g(F&& f, F* p, const F& r, float v) {
  std::forward<F>(f)(1);
  std::move(f)(2);
  static_cast<F&&>(f)(3);
  (*p)(4);
  (r)(5);
  ulong u = (ulong)(v);
  int w = (*global_fp)(6);
}
"#;
    let file = parse(src.as_bytes());
    let f = func(&file, "g");
    let of = |name: &str| -> Vec<(CallForm, u32)> {
        f.calls
            .iter()
            .filter(|c| c.callee == name)
            .map(|c| (c.form, c.span.line))
            .collect()
    };
    // The forwarded, moved and cast `f` is what is called, a variable of type `F`.
    assert_eq!(
        of("f"),
        [
            (CallForm::Variable, 5),
            (CallForm::Variable, 6),
            (CallForm::Variable, 7)
        ]
    );
    assert!(f
        .calls
        .iter()
        .filter(|c| c.callee == "f")
        .all(|c| c.receiver_type.as_deref() == Some("F")));
    assert_eq!(of("p"), [(CallForm::Variable, 8)]);
    assert_eq!(of("r"), [(CallForm::Variable, 9)]);
    // A cast is no call (the declaration's constructor and destructor aside); a global pointer
    // behind `*` is a call of its name.
    assert!(
        of("ulong")
            .iter()
            .all(|(form, _)| matches!(form, CallForm::Construct | CallForm::Destroy)),
        "{:?}",
        f.calls
    );
    assert_eq!(of("global_fp"), [(CallForm::Plain, 11)]);
    assert!(!f.calls.iter().any(|c| c.form == CallForm::Temporary));
}

#[test]
fn operators_on_class_objects_are_calls() {
    let src = r#"
struct Counter { int* p; };
__device__ void g(Counter& byref, Counter* ptr, const float* in, float4 v4, int n) {
  Counter c;
  Counter arr[4];
  float x = 0.f;
  c += 1;
  ++c;
  x = c[n] + in[n];
  byref -= 2;
  ptr[0] += 3;
  arr[1] += 4;
  x += 1.f;
  v4 = v4 + v4;
  c = byref;
  bool lt = c < byref;
}
"#;
    let file = parse(src.as_bytes());
    let f = func(&file, "g");
    let ops: Vec<(String, String, u32)> = f
        .calls
        .iter()
        .filter(|c| c.form == CallForm::Operator)
        .map(|c| {
            (
                c.callee.clone(),
                c.receiver.clone().unwrap_or_default(),
                c.span.line,
            )
        })
        .collect();
    let want = [
        ("operator+=", "c", 7),
        ("operator++", "c", 8),
        ("operator[]", "c", 9),
        ("operator-=", "byref", 10),
        ("operator=", "c", 15),
        ("operator<", "c", 16),
        ("operator<", "byref", 16),
    ];
    let want: Vec<(String, String, u32)> = want
        .iter()
        .map(|(a, b, l)| (a.to_string(), b.to_string(), *l))
        .collect();
    // Pointers, arrays, scalars and vector types are never operator calls; `=` is one on its
    // left operand only.
    assert_eq!(ops, want);
    assert!(f
        .calls
        .iter()
        .filter(|c| c.form == CallForm::Operator)
        .all(|c| c.receiver_type.as_deref() == Some("Counter")));
    // Still sorted by start (the guards look calls up by position).
    assert!(f
        .calls
        .windows(2)
        .all(|w| w[0].span.start <= w[1].span.start));
}

#[test]
fn calls_of_pointers_no_name_answers() {
    let src = r#"
typedef void (*Op)(float*);
struct S { void m(); };
namespace L = lib::detail;
__device__ Op g_table[2] = {f0, &f1};
__device__ void (S::*g_pm)() = &S::m;
__device__ int scale = 4 * K;
__device__ void g(S s, S* p, Op* ops, int i, float* a) {
  Op local[2] = {f0, f0};
  g_table[i](a);
  local[i](a);
  (s.*g_pm)();
  (p->*g_pm)();
  (i ? f0 : f1)(a);
  ops[i](a);
  namespace cg = cooperative_groups;
}
"#;
    let file = parse(src.as_bytes());
    let f = func(&file, "g");
    let forms: Vec<(&str, CallForm)> = f
        .calls
        .iter()
        .filter(|c| !matches!(c.form, CallForm::Construct | CallForm::Destroy))
        .map(|c| (c.callee.as_str(), c.form))
        .collect();
    assert_eq!(
        forms,
        [
            ("g_table", CallForm::Plain),
            ("local", CallForm::Variable),
            ("(s.*g_pm)", CallForm::Indirect),
            ("(p->*g_pm)", CallForm::Indirect),
            ("(i?f0:f1)", CallForm::Indirect),
            ("ops", CallForm::Variable),
        ],
        "{:?}",
        f.calls
    );
    // File-scope initialisers keep the names that may be functions named as values, nothing
    // of arithmetic; a pointer to member is a variable.
    let init = |name: &str| {
        file.globals
            .iter()
            .find(|g| g.name == name)
            .map(|g| g.init_idents.clone())
    };
    assert_eq!(
        init("g_table"),
        Some(vec!["f0".to_string(), "f1".to_string()])
    );
    assert_eq!(init("g_pm"), Some(vec!["m".to_string()]));
    assert_eq!(init("scale"), Some(Vec::new()));
    assert_eq!(
        file.namespace_aliases,
        [
            ("L".to_string(), "lib::detail".to_string()),
            ("cg".to_string(), "cooperative_groups".to_string())
        ]
    );
}

/// A range-for's calls on its range, conversions of class-typed locals and the copies the
/// grammar misreads (`float v(b);`) are calls like the others: recorded in source order (the
/// guards find a loop's calls by binary search on their starts), wherever they sit.
#[test]
fn range_and_conversion_calls_keep_source_order() {
    let src = r#"
struct R { __device__ int* begin(); __device__ int* end(); };
struct B { float* s; __device__ operator float() const; };
__device__ float f(float x);
__global__ void k(float* a, R r, B b) {
  for (auto g = f(1.f); int i : r) a[i] = f(g);
  float u = f(a[0]), v(b), w = b;
  for (int i : R(f(b))) a[i] = u + v + w;
  a[0] = f(b) + f(static_cast<float>(b));
}
"#;
    let f = parse(src.as_bytes());
    let k = func(&f, "k");
    let starts: Vec<usize> = k.calls.iter().map(|c| c.span.start).collect();
    let mut sorted = starts.clone();
    sorted.sort_unstable();
    assert_eq!(starts, sorted, "{:#?}", k.calls);
    let of = |form: CallForm| -> Vec<&str> {
        k.calls
            .iter()
            .filter(|c| c.form == form)
            .map(|c| text(src, c.span))
            .collect()
    };
    assert_eq!(of(CallForm::Range), ["r", "R(f(b))"]);
    // `v(b)`, `w = b`, `f(b)` twice (an argument: its conversion or copy may run) and the cast.
    assert_eq!(of(CallForm::Convert), ["b", "b", "b", "b", "b"]);
    let range = k.calls.iter().find(|c| c.form == CallForm::Range).unwrap();
    assert_eq!(range.receiver_type.as_deref(), Some("R"));
}

#[test]
fn arity_counts_defaults_packs_and_varargs() {
    let src = r#"
#define PARAMS float* s, int k
__device__ void none(void) {}
__device__ void empty() {}
__device__ void two(float a, int b) {}
__device__ void dflt(float a, int b = 0, int c = 1) {}
__device__ void cvar(const char* f, ...) {}
template <typename... Ts> __device__ void pack(int a, Ts... xs) {}
__device__ void unnamed(float, int) {}
__device__ void macro_params(PARAMS) {}
__device__ void macro_named(float x, TENSOR(t)) {}
__device__ void proto(int a, int b = 2);
struct S {
  __device__ void later(int a, int b = 3);
  __device__ void inline_one(int a) {}
};
__device__ void nodefault(int a, int b);
"#;
    let f = parse(src.as_bytes());
    let arity = |name: &str| func(&f, name).arity.map(|a| (a.min, a.max));
    assert_eq!(arity("none"), Some((0, Some(0))));
    assert_eq!(arity("empty"), Some((0, Some(0))));
    assert_eq!(arity("two"), Some((2, Some(2))));
    assert_eq!(arity("dflt"), Some((1, Some(3))));
    assert_eq!(arity("cvar"), Some((1, None)));
    assert_eq!(arity("pack"), Some((1, None)));
    assert_eq!(arity("unnamed"), Some((2, Some(2))));
    assert_eq!(arity("macro_params"), None);
    assert_eq!(arity("macro_named"), None);
    assert_eq!(arity("inline_one"), Some((1, Some(1))));
    assert_eq!(f.defaulted_declarations, vec!["proto", "later"]);
    let a = func(&f, "dflt").arity.unwrap();
    assert!(a.accepts(1, false) && a.accepts(3, false));
    assert!(!a.accepts(0, false) && !a.accepts(4, false));
    assert!(a.accepts(0, true) && !a.accepts(4, true));
}

/// CUDA's extended lambdas (`[=] __device__ (int i) { ... }`, `[c] __host__ __device__ (int i)
/// mutable { ... }`, `[c] __device__ { ... }`) parse without an error (the grammar cannot read
/// the qualifiers there: each was one to three errors, 1,033 on cuCollections with thrust's
/// lambdas among them); an attribute's `]]` before `__device__` is no lambda's.
#[test]
fn extended_lambdas_parse_without_errors() {
    let src = "struct S { [[nodiscard]] __device__ int f() { return 1; } };\n\
               void host(int* c, int n) {\n  run(c, [n, c] __device__(auto i) { c[i] = n; });\n}\n\
               __global__ void k(int* c, int n) {\n\
                 auto g = [c] __host__ __device__ (int i) mutable { for (int j = 0; j < 4; ++j) c[j] += i; };\n\
                 auto h = [c] __device__ { c[0] = 1; };\n\
                 for (int i = 0; i < n; ++i) { g(i); h(); }\n}\n";
    let f = parse(src.as_bytes());
    assert!(f.parse_errors.is_empty(), "{:?}", f.parse_errors);
    let kinds: Vec<(&str, FunctionKind, usize)> = f
        .functions
        .iter()
        .map(|x| (x.name.as_str(), x.kind, x.loops.len()))
        .collect();
    assert_eq!(
        kinds,
        [
            ("f", FunctionKind::Device, 0),
            ("host", FunctionKind::Host, 0),
            ("k", FunctionKind::Kernel, 2)
        ]
    );
}
