//! The reach of issue 26 as a library: the verdicts do not depend on hash-map order (the same
//! bytes on every run, each run with new hash seeds), and a call resolved by name says so in its
//! evidence, with its candidates.

use std::path::Path;

/// The fixtures of issue 26 items 1-3.
const FIXTURES: &[&str] = &[
    "barrier/member_templates.cu",
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
