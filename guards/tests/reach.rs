//! The reach of issue 26 as a library: the verdicts do not depend on hash-map order (the same
//! bytes on every run, each run with new hash seeds), and a call resolved by name says so in its
//! evidence, with its candidates.

use std::path::Path;

/// The fixtures of issue 26 items 1-3.
const FIXTURES: &[&str] = &[
    "barrier/member_templates.cu",
    "barrier/overloads.cu",
    "barrier/functors.cu",
    "barrier/raii.cu",
    "barrier/receiver_types.cu",
    "barrier/namespaces.cu",
    "barrier/macro_specifiers.cu",
    "barrier/macro_kernels.cu",
    "barrier/pragma_macros.cu",
    "barrier/asm_reach.cu",
    "atomic/inline_asm.cu",
    "dynamic-lds/returned_pointers.cu",
    "tu/unresolved_callees.cu",
    "barrier/template_parameters.cu",
    "barrier/template_lambdas.cu",
    "dynamic-lds/template_lambdas.cu",
    "atomic/operators.cu",
    "barrier/virtual_and_fields.cu",
    "dynamic-lds/held_objects.cu",
    "barrier/block_collectives.cu",
    "atomic/function_pointers.cu",
    "barrier/member_pointers.cu",
    "candidate/indirect_unresolved.cu",
    "barrier/function_template_arguments.cu",
    "barrier/cutlass_barriers.cu",
    "barrier/library_wrappers.cu",
    "atomic/unseen_wrappers.cu",
    "barrier/specialisations.cu",
    "barrier/host_code.cu",
    "barrier/pointer_members.cu",
    "barrier/global_objects.cu",
    "barrier/local_aliases.cu",
    "tu/included_members.cu",
    "tu/included_members_here.cu",
];

/// Everything a loop's verdict says, evidence labels included, as text.
fn verdicts(src: &[u8]) -> String {
    let file = frontend::parse(src);
    let a = guards::analyze_for_rewrite(&file);
    let mut out = String::new();
    for (f, loops) in file.functions.iter().zip(&a.loops) {
        for (l, v) in f.loops.iter().zip(loops) {
            out.push_str(&format!("{} {}:", f.id, l.index));
            for e in &v.evidence {
                out.push_str(&format!(" [{} {} {}]", e.rule.id(), e.span.start, e.label));
            }
            out.push_str(&format!(" unresolved={:?}\n", v.unresolved));
        }
    }
    out
}

#[test]
fn verdicts_are_the_same_on_every_run() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/check");
    for name in FIXTURES {
        let src = std::fs::read(root.join(name)).unwrap();
        let first = verdicts(&src);
        assert!(first.contains('['), "{name}: no evidence at all");
        for _ in 0..20 {
            assert_eq!(verdicts(&src), first, "{name}");
        }
        let json = |_: ()| {
            let (r, d) = guards::check_source(name, &src, &guards::Settings::default());
            format!(
                "{}{}",
                serde_json::to_string(&r).unwrap(),
                serde_json::to_string(&d).unwrap()
            )
        };
        let j = json(());
        for _ in 0..20 {
            assert_eq!(json(()), j, "{name}");
        }
    }
}

#[test]
fn a_call_by_name_lists_its_candidates() {
    let src = b"struct WarpReduce { __device__ float allreduce(float x) { return x; } };\n\
        struct BlockReduce { __device__ float allreduce(float x) { __syncthreads(); return x; } };\n\
        template <class R> __device__ float run(R& r, float* a, int n) {\n\
          for (int i = 0; i < n; ++i) a[i] = r.allreduce(a[i]);\n\
          return a[0];\n\
        }\n";
    let out = verdicts(src);
    assert!(
        out.contains(
            "`r.allreduce()` (its type is unknown here: any of `BlockReduce::allreduce`, \
             `WarpReduce::allreduce`), which reaches `__syncthreads` (line 2)"
        ),
        "{out}"
    );
}

/// The blockers of loop `id` when `src` is checked as the file `path`.
fn blockers_as(path: &str, src: &[u8], id: &str) -> Vec<String> {
    let (r, _) = guards::check_source(path, src, &guards::Settings::default());
    r.functions
        .iter()
        .flat_map(|f| &f.loops)
        .find(|l| l.id == id)
        .unwrap_or_else(|| panic!("{path}: no loop {id}"))
        .blockers
        .clone()
}

#[test]
fn a_template_of_a_header_is_what_any_includer_binds() {
    // In a source file, `op` is what the file's calls bind: `Sum`. In a header, any file that
    // includes it may bind `Op` to the syncing functor: by name, blocked.
    let src = b"struct Sum { __device__ float operator()(float a, float b) const { return a + b; } };\n\
        struct SyncSum { __device__ float operator()(float a, float b) const { __syncthreads(); return a; } };\n\
        template <class Op> __device__ float fold(const float* a, Op op) {\n\
          float v = 0.f;\n\
          for (int i = 0; i < 4; ++i) v = op(v, a[i]);\n\
          return v;\n\
        }\n\
        __global__ void k(float* a) { a[0] = fold(a, Sum{}); }\n";
    assert!(blockers_as("fold.cu", src, "fold:0").is_empty());
    assert!(blockers_as("fold.hip", src, "fold:0").is_empty());
    assert_eq!(blockers_as("fold.cuh", src, "fold:0"), ["barrier"]);
    assert_eq!(blockers_as("fold.h", src, "fold:0"), ["barrier"]);
    // The library without a path (no unit) cannot know: by name too.
    let file = frontend::parse(src);
    let a = guards::analyze_for_rewrite(&file);
    assert!(!a.loops[2][0].evidence.is_empty());
}

#[test]
fn lambdas_beyond_the_specialisation_cap_still_reach_the_template_loop() {
    // 300 calls of one template, each with its own lambda: beyond the cap on specialisations
    // per function (256), the calls reach the generic template; the last lambda syncs, and
    // the template's loop must still see it.
    let mut src = String::from(
        "template <class F> __device__ void each(F f) {\n  for (int i = 0; i < 4; ++i) f(i);\n}\n\
         __global__ void k(float* out) {\n",
    );
    for n in 0..300 {
        let body = if n == 299 { "__syncthreads();" } else { "" };
        src.push_str(&format!(
            "  each([&](int i) {{ out[i] = {n}.f; {body} }});\n"
        ));
    }
    src.push_str("}\n");
    assert_eq!(
        blockers_as("many.cu", src.as_bytes(), "each:0"),
        ["barrier"]
    );
    // And below the cap, the same with the syncing lambda first.
    let few = src.replace("__syncthreads();", "").replacen(
        "out[i] = 0.f; ",
        "out[i] = 0.f; __syncthreads();",
        1,
    );
    assert_eq!(blockers_as("few.cu", few.as_bytes(), "each:0"), ["barrier"]);
}

#[test]
fn a_template_called_from_dozens_of_places_binds_each_callers_lambda() {
    // composable_kernel's `static_for<...>{}([&](auto i) { ... })` is called from hundreds of
    // places in one unit. With 32 specialisations per function, the later callers reached
    // the generic template, whose parameter's calls reach every lambda bound past the cap:
    // `type_convert<float>(i)` was blocked by an atomic of an unrelated lambda. 60 callers
    // here, the 51st lambda atomic; the helper's own lambda is pure.
    let mut src = String::from(
        "template <class F> __device__ void each(F f) {\n  for (int i = 0; i < 4; ++i) f(i);\n}\n\
         __device__ void pure_user(float* o);\n\
         __global__ void k(float* out, float* acc) {\n",
    );
    for n in 0..60 {
        let body = if n == 50 { "atomicAdd(acc, 1.f);" } else { "" };
        src.push_str(&format!(
            "  each([&](int i) {{ out[i] = {n}.f; {body} }});\n"
        ));
    }
    src.push_str("  for (int j = 0; j < 4; ++j) pure_user(out);\n}\n");
    src.push_str("__device__ void pure_user(float* o) { each([&](int i) { o[i] = 0.f; }); }\n");
    assert!(blockers_as("many.cu", src.as_bytes(), "k:0").is_empty());
    assert_eq!(blockers_as("many.cu", src.as_bytes(), "each:0"), ["atomic"]);
}

#[test]
fn a_macro_kernel_calls_what_its_invocation_passes() {
    // `OP(a[i])` in the replacement list is a call of the invocation's argument: the kernel
    // given the syncing function is blocked, the one given a pure function is not, a
    // qualified argument resolves in its namespace, an unknown one is listed as written.
    let src = b"__device__ float syncing(float x) { __syncthreads(); return x; }\n\
        __device__ float pure(float x) { return x * 2.f; }\n\
        namespace ns { __device__ float step(float x) { __syncthreads(); return x; } }\n\
        namespace other { __device__ float step(float x) { return x; } }\n\
        #define DEF(name, OP) \\\n\
          __global__ void name(float* a, int n) { \\\n\
            for (int i = 0; i < n; ++i) a[i] = OP(a[i]); \\\n\
          }\n\
        DEF(k_sync, syncing)\n\
        DEF(k_pure, pure)\n\
        DEF(k_ns, ns::step)\n\
        DEF(k_other, other::step)\n\
        DEF(k_ext, external_fn)\n";
    assert_eq!(blockers_as("def.cu", src, "k_sync:0"), ["barrier"]);
    assert!(blockers_as("def.cu", src, "k_pure:0").is_empty());
    assert_eq!(blockers_as("def.cu", src, "k_ns:0"), ["barrier"]);
    assert!(blockers_as("def.cu", src, "k_other:0").is_empty());
    let (r, _) = guards::check_source("def.cu", src, &guards::Settings::default());
    let ext = r
        .functions
        .iter()
        .flat_map(|f| &f.loops)
        .find(|l| l.id == "k_ext:0")
        .unwrap();
    assert!(ext.blockers.is_empty());
    assert_eq!(ext.unresolved, ["external_fn"]);
}
