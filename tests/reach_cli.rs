//! End-to-end tests of `hip-unroll unroll` on the constructs of issue 26 items 1-3 (member
//! templates, functor temporaries, local structs, constructors and destructors, unknown
//! specifier macros, macro-defined kernels, pragma macros, asm atomics, dynamic shared memory
//! through returned pointers, statement macros with a block): each barrier, atomic or
//! dynamic-LDS loop that an earlier version rewrote with exit 0 is now refused (exit 1,
//! `guard-blocked`), and the new refusals (`in-macro-definition`, `unseen-macro`,
//! `user-pragma` for a pragma macro) hold.
#![allow(clippy::print_stdout, clippy::print_stderr, clippy::exit)]

use std::path::PathBuf;
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_hip-unroll");

fn unroll(dir: &tempfile::TempDir, text: &str, args: &[&str]) -> Output {
    let p: PathBuf = dir.path().join("k.cu");
    std::fs::write(&p, text).unwrap();
    Command::new(BIN)
        .arg("unroll")
        .arg(&p)
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .expect("run hip-unroll")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// One file per construct, with the loop `--loop` names and the blocker `unroll` must refuse.
const BLOCKED: &[(&str, &str, &str, &str)] = &[
    (
        "member template with `template`",
        "struct Stats { template <bool S> __device__ float compute(float x) { if (S) __syncthreads(); return x; } };\n\
         __global__ void k(float* a, Stats st, int n) {\n\
           for (int i = 0; i < n; ++i) a[i] = st.template compute<true>(a[i]);\n}\n",
        "k:0",
        "barrier",
    ),
    (
        "member template through a pointer",
        "struct Stats { template <bool S> __device__ float compute(float x) { if (S) __syncthreads(); return x; } };\n\
         __global__ void k(float* a, Stats* st, int n) {\n\
           for (int i = 0; i < n; ++i) a[i] = st->template compute<true>(a[i]);\n}\n",
        "k:0",
        "barrier",
    ),
    (
        "static member of a class template",
        "template <class T> struct Tile { template <int N> __device__ static void load(T* s) { s[N] = 0; __syncthreads(); } };\n\
         __global__ void k(float* a, int n) {\n\
           for (int i = 0; i < n; ++i) Tile<float>::template load<2>(a);\n}\n",
        "k:0",
        "barrier",
    ),
    (
        "functor temporary",
        "struct Sync { __device__ void operator()(float* s) const { __syncthreads(); } };\n\
         __global__ void k(float* a, int n) {\n\
           for (int i = 0; i < n; ++i) { a[i] = 0.f; Sync{}(a); }\n}\n",
        "k:0",
        "barrier",
    ),
    (
        "struct defined in the kernel",
        "__global__ void k(float* a, int n) {\n\
           struct Bar { __device__ void operator()() const { __syncthreads(); } };\n\
           Bar bar;\n\
           for (int i = 0; i < n; ++i) { a[i] = 0.f; bar(); }\n}\n",
        "k:0",
        "barrier",
    ),
    (
        "constructor of a local object",
        "struct Guard { __device__ Guard() { __syncthreads(); } };\n\
         __global__ void k(float* a, int n) {\n\
           for (int i = 0; i < n; ++i) { Guard g; a[i] = 0.f; }\n}\n",
        "k:0",
        "barrier",
    ),
    (
        "destructor of a local object",
        "struct Guard { float* s; __device__ ~Guard() { __syncthreads(); } };\n\
         __global__ void k(float* a, int n) {\n\
           for (int i = 0; i < n; ++i) { Guard g{a}; a[i] = 0.f; }\n}\n",
        "k:0",
        "barrier",
    ),
    (
        "method with an unknown specifier macro",
        "struct M { CUTLASS_DEVICE void sync(float* s) { __syncthreads(); } };\n\
         __global__ void k(float* a, M m, int n) {\n\
           for (int i = 0; i < n; ++i) { a[i] = 0.f; m.sync(a); }\n}\n",
        "k:0",
        "barrier",
    ),
    (
        "pragma macro before a barrier loop",
        "#define UNROLL_4 _Pragma(\"unroll 4\")\n\
         __global__ void k(float* a, int n) {\n\
           UNROLL_4\n\
           for (int i = 0; i < n; ++i) { a[i] = 0.f; __syncthreads(); }\n}\n",
        "k:0",
        "barrier",
    ),
    (
        "atomic in inline assembly",
        "__global__ void k(float* a, unsigned* c, int n) {\n\
           for (int i = 0; i < n; ++i) { a[i] = 0.f; asm volatile(\"red.global.add.u32 [%0], 1;\" :: \"l\"(c)); }\n}\n",
        "k:0",
        "atomic",
    ),
    (
        "dynamic shared memory returned by a method",
        "template <class T> struct SharedMemory { __device__ T* getPointer() { extern __shared__ int s[]; return (T*)s; } };\n\
         __global__ void k(const float* in, int n) {\n\
           SharedMemory<float> sm;\n\
           float* p = sm.getPointer() + 4;\n\
           for (int i = 0; i < n; ++i) p[i] = in[i];\n}\n",
        "k:0",
        "dynamic-lds",
    ),
    (
        "statement macro with a block (`CUDA_KERNEL_LOOP(i, n) { ... }`)",
        "#define CUDA_KERNEL_LOOP(i, n) for (int i = threadIdx.x; i < (n); i += blockDim.x)\n\
         __global__ void k(float* a, int n) {\n\
           for (int j = 0; j < 4; ++j) {\n\
             CUDA_KERNEL_LOOP(i, n) { a[i] += 1.f; __syncthreads(); }\n\
           }\n}\n",
        "k:0",
        "barrier",
    ),
    (
        "range-for whose iterator syncs",
        "struct Tiles { struct It { int i; __device__ int operator*() const { return i; }\n\
           __device__ It& operator++() { __syncthreads(); i += blockDim.x; return *this; }\n\
           __device__ bool operator!=(const It& o) const { return i < o.i; } };\n\
           int n; __device__ It begin() const { return It{(int)threadIdx.x}; } __device__ It end() const { return It{n}; } };\n\
         __global__ void k(float* a, int n) {\n\
           Tiles t{n};\n\
           for (int i : t) a[i] = 0.f;\n}\n",
        "k:0",
        "barrier",
    ),
    (
        "conversion operator that syncs",
        "struct BlockValue { float* slot; __device__ operator float() const { __syncthreads(); return *slot; } };\n\
         __global__ void k(float* a, float* s, int n) {\n\
           BlockValue b{s};\n\
           for (int i = 0; i < n; ++i) { float v = b; a[i] = v; }\n}\n",
        "k:0",
        "barrier",
    ),
];

#[test]
fn range_for_and_conversions_name_what_they_reach() {
    let dir = tempfile::tempdir().unwrap();
    for (what, said) in [
        (
            "range-for whose iterator syncs",
            "the range-for over `t` (its begin/end and iterator), which reaches `__syncthreads`",
        ),
        (
            "conversion operator that syncs",
            "the conversion or copy of `b`, which reaches `__syncthreads`",
        ),
    ] {
        let (_, text, id, _) = BLOCKED.iter().find(|b| b.0 == what).unwrap();
        let o = unroll(&dir, text, &["--loop", id, "--factor", "4"]);
        assert!(stderr(&o).contains(said), "{what}: {}", stderr(&o));
    }
}

#[test]
fn formerly_rewritten_loops_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    for (what, text, id, rule) in BLOCKED {
        for mode in ["pragma", "manual"] {
            let o = unroll(&dir, text, &["--loop", id, "--factor", "4", "--mode", mode]);
            let e = stderr(&o);
            assert_eq!(o.status.code(), Some(1), "{what} ({mode}): {e}");
            assert!(o.stdout.is_empty(), "{what} ({mode})");
            assert!(
                e.contains(&format!("is blocked by {rule}")) && e.contains("[guard-blocked]"),
                "{what} ({mode}): {e}"
            );
        }
    }
}

#[test]
fn a_warp_reducer_loop_is_rewritten_a_block_reducer_loop_is_not() {
    let text = "struct Warp { __device__ float allreduce(float x) const { return x + __shfl_xor(x, 1); } };\n\
                struct Block { float* s; __device__ float allreduce(float x) { s[0] = x; __syncthreads(); return s[0]; } };\n\
                __global__ void k(float* a, float* s, int n) {\n\
                  Warp w;\n\
                  Block b{s};\n\
                  for (int i = 0; i < n; ++i) a[i] = w.allreduce(a[i]);\n\
                  for (int i = 0; i < n; ++i) a[i] = b.allreduce(a[i]);\n\
                }\n";
    let dir = tempfile::tempdir().unwrap();
    let o = unroll(&dir, text, &["--loop", "k:0", "--factor", "4"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("#pragma unroll 4"));
    let o = unroll(&dir, text, &["--loop", "k:1", "--factor", "4"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("[guard-blocked]"), "{}", stderr(&o));
}

#[test]
fn a_loop_in_a_macro_definition_is_never_rewritten() {
    let text = "#define DEFINE_KERNEL(name, T) \\\n\
                __global__ void name(T* p, int n) { \\\n\
                  for (int i = 0; i < n; ++i) p[i] = 0; \\\n\
                }\n\
                DEFINE_KERNEL(kf, float)\n\
                DEFINE_KERNEL(kd, double)\n";
    let dir = tempfile::tempdir().unwrap();
    for args in [
        &["--loop", "kf:0", "--factor", "2"][..],
        &["--loop", "kd:0", "--factor", "2", "--mode", "manual"][..],
        &["--loop", "kf:0", "--factor", "2", "--force"][..],
    ] {
        let o = unroll(&dir, text, args);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {e}");
        assert!(
            e.contains("[in-macro-definition]") && e.contains("DEFINE_KERNEL"),
            "{args:?}: {e}"
        );
    }
}

#[test]
fn loops_in_and_around_statement_macros() {
    let text = "__global__ void k(float* p, int n) {\n\
                  NV_IF_TARGET(NV_IS_DEVICE, (\n\
                    for (int i = 0; i < 8; ++i) p[i] *= 2.f;\n\
                  ))\n\
                  for (int i = 0; i < n; ++i) {\n\
                    NV_IF_TARGET(NV_PROVIDES_SM_80, (p[i] += 1.f;))\n\
                  }\n\
                }\n";
    let dir = tempfile::tempdir().unwrap();
    // In a macro's argument: no `#pragma` may go there, in either mode.
    for mode in ["pragma", "manual"] {
        let o = unroll(
            &dir,
            text,
            &["--loop", "k:0", "--factor", "4", "--mode", mode],
        );
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{mode}: {e}");
        assert!(
            e.contains("[in-macro-argument]") && e.contains("NV_IF_TARGET"),
            "{mode}: {e}"
        );
    }
    // Around one: the pragma goes before the loop; a manual copy is refused.
    let o = unroll(&dir, text, &["--loop", "k:1", "--factor", "4"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        out.contains("#pragma unroll 4\n") && out.contains("(p[i] += 1.f;))"),
        "{out}"
    );
    let o = unroll(
        &dir,
        text,
        &["--loop", "k:1", "--factor", "4", "--mode", "manual"],
    );
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(
        e.contains("[macro-in-body]") && e.contains("takes statements"),
        "{e}"
    );
}

#[test]
fn a_loop_after_a_header_macro_is_rewritten() {
    let text = "#define KERNEL_HEADER(name) __global__ void name(float* p, int n)\n\
                KERNEL_HEADER(k) {\n\
                  for (int i = 0; i < n; ++i) p[i] = 0.f;\n\
                }\n";
    let dir = tempfile::tempdir().unwrap();
    let o = unroll(&dir, text, &["--loop", "k:0", "--factor", "2"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        out.contains("KERNEL_HEADER(k) {\n#pragma unroll 2\n"),
        "{out}"
    );
}

#[test]
fn an_unknown_specifier_refuses_the_manual_rewrite_only() {
    let text = "CUTLASS_DEVICE void f(float* p, int n) {\n\
                  for (int i = 0; i < n; ++i) p[i] = 0.f;\n\
                }\n";
    let dir = tempfile::tempdir().unwrap();
    let o = unroll(
        &dir,
        text,
        &["--loop", "f:0", "--factor", "2", "--mode", "manual"],
    );
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(
        e.contains("[unseen-macro]") && e.contains("CUTLASS_DEVICE"),
        "{e}"
    );
    let o = unroll(&dir, text, &["--loop", "f:0", "--factor", "2"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn a_pragma_macro_is_the_loops_pragma() {
    let dir = tempfile::tempdir().unwrap();
    // Defined nowhere: the author's decision, as a bare `#pragma unroll`.
    let text = "__global__ void k(float* a, int n) {\n\
                  CUTLASS_PRAGMA_UNROLL\n\
                  for (int i = 0; i < n; ++i) a[i] = 0.f;\n\
                }\n";
    let o = unroll(&dir, text, &["--loop", "k:0", "--factor", "4"]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(
        e.contains("[user-pragma]") && e.contains("CUTLASS_PRAGMA_UNROLL"),
        "{e}"
    );
    // A count, as `#pragma unroll 8` is: replaced by the rewrite.
    let text = "#define UNROLL_8 _Pragma(\"unroll 8\")\n\
                __global__ void k(float* a, int n) {\n\
                  UNROLL_8\n\
                  for (int i = 0; i < n; ++i) a[i] = 0.f;\n\
                }\n";
    let o = unroll(&dir, text, &["--loop", "k:0", "--factor", "4"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        out.contains("#pragma unroll 4\nfor") && !out.contains("UNROLL_8\nfor"),
        "{out}"
    );
}
