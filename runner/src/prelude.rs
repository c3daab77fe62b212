//! The NVIDIA path's headers and refusals. For nvcc, a thin mapping of HIP's device-side names
//! (`runner/prelude/hip_unroll_nvcc_hip.h`, reached through a `hip/hip_runtime.h` on the include
//! path; CUDA's own headers do the rest). For the clang-19 fallback, the prelude
//! (`runner/prelude/hip_unroll_cuda_prelude.h` and its math, passed with `-include`) that
//! declares what the CUDA headers would. And the refusals: constructs with no CUDA meaning that
//! a kernel reaches (AMD builtins, wave64-only code), found on the frontend IR of the kernel and
//! the same-file functions and macros it uses.

use frontend::{Function, FunctionKind, SourceFile, Span};
use serde::Serialize;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

/// The clang prelude, passed to clang with `-include`.
pub const PRELUDE: &str = include_str!("../prelude/hip_unroll_cuda_prelude.h");
/// File name of the prelude in the cache.
pub const PRELUDE_NAME: &str = "hip_unroll_cuda_prelude.h";
/// The prelude's math functions (float libm on NVPTX without libdevice).
pub const PRELUDE_MATH: &str = include_str!("../prelude/hip_unroll_cuda_math.h");
/// File name of the prelude's math header (included by the prelude).
pub const PRELUDE_MATH_NAME: &str = "hip_unroll_cuda_math.h";
/// The thin mapping of HIP's names for nvcc.
pub const HIP_MAP: &str = include_str!("../prelude/hip_unroll_nvcc_hip.h");
/// File name of the mapping header in the cache.
pub const HIP_MAP_NAME: &str = "hip_unroll_nvcc_hip.h";

/// A header that includes `target` (a file one directory up), standing in for a HIP or CUDA
/// runtime header.
fn shadow(what: &str, target: &str) -> String {
    format!("// hip-unroll: {what} on the NVIDIA path.\n#include \"../{target}\"\n")
}

fn shadow_here(what: &str, target: &str) -> String {
    format!("// hip-unroll: {what} on the NVIDIA path.\n#include \"{target}\"\n")
}

/// Write `files` (relative path, text) under `dir/<prefix>-<hash of them all>` (once per
/// content; atomically); returns that directory.
fn write_set(dir: &Path, prefix: &str, files: &[(&str, String)]) -> std::io::Result<PathBuf> {
    let mut h = blake3::Hasher::new();
    for (name, text) in files {
        h.update(name.as_bytes());
        h.update(&[0]);
        h.update(text.as_bytes());
        h.update(&[0]);
    }
    let root = dir.join(format!("{prefix}-{}", &h.finalize().to_hex()[..16]));
    for (name, text) in files {
        let path = root.join(name);
        if std::fs::read_to_string(&path).ok().as_deref() == Some(text.as_str()) {
            continue;
        }
        let parent = path.parent().expect("has a parent");
        std::fs::create_dir_all(parent)?;
        // Unique per write: two threads of one process (two tune lanes sharing a cache)
        // installing the same file must not rename each other's temporary away.
        static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let tmp = parent.join(format!(
            ".tmp-{}-{n}-{}",
            std::process::id(),
            path.file_name().and_then(|n| n.to_str()).unwrap_or("h")
        ));
        std::fs::write(&tmp, text)?;
        std::fs::rename(&tmp, &path)?;
    }
    Ok(root)
}

/// Write the clang prelude, its math header and the shadow runtime headers (`hip/hip_runtime.h`,
/// `cuda_runtime.h`, ... which all include the prelude, so that a source's own include finds
/// it before any installed header) under `dir`; returns the prelude's path and the include
/// directory to pass with `-I`.
pub fn install(dir: &Path) -> std::io::Result<(PathBuf, PathBuf)> {
    let up = |what: &str| shadow(what, PRELUDE_NAME);
    let here = |what: &str| shadow_here(what, PRELUDE_NAME);
    let root = write_set(
        dir,
        "prelude",
        &[
            (PRELUDE_NAME, PRELUDE.to_string()),
            (PRELUDE_MATH_NAME, PRELUDE_MATH.to_string()),
            (
                "hip/hip_runtime.h",
                up("HIP's runtime header is the prelude"),
            ),
            (
                "hip/hip_runtime_api.h",
                up("HIP's runtime header is the prelude"),
            ),
            (
                "cuda_runtime.h",
                here("CUDA's runtime header is the prelude"),
            ),
            (
                "cuda_runtime_api.h",
                here("CUDA's runtime header is the prelude"),
            ),
            (
                "device_launch_parameters.h",
                here("CUDA's launch parameters are the prelude's"),
            ),
        ],
    )?;
    Ok((root.join(PRELUDE_NAME), root))
}

/// Write the nvcc mapping of HIP's names and the `hip/hip_runtime.h` (and
/// `hip/hip_runtime_api.h`) that includes it under `dir`; returns the include directory to
/// pass with `-I`. A CUDA source never includes these and compiles as it is.
pub fn install_hip_map(dir: &Path) -> std::io::Result<PathBuf> {
    let up = |what: &str| shadow(what, HIP_MAP_NAME);
    write_set(
        dir,
        "hip-map",
        &[
            (HIP_MAP_NAME, HIP_MAP.to_string()),
            (
                "hip/hip_runtime.h",
                up("HIP's runtime header maps HIP's names onto CUDA's"),
            ),
            (
                "hip/hip_runtime_api.h",
                up("HIP's runtime header maps HIP's names onto CUDA's"),
            ),
        ],
    )
}

/// A construct the NVIDIA path cannot compile faithfully.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Refusal {
    /// The construct as named in the source (`__builtin_amdgcn_readfirstlane`, `0xffffffffffffffff`).
    pub construct: String,
    pub line: u32,
    pub column: u32,
    /// Why it has no CUDA meaning.
    pub reason: String,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "line {}: `{}`: {}",
            self.line, self.construct, self.reason
        )
    }
}

/// Calls with no CUDA meaning, by prefix.
const AMD_PREFIXES: &[(&str, &str)] = &[
    ("__builtin_amdgcn_", "an AMDGPU builtin"),
    ("__builtin_r600_", "an AMDGPU builtin"),
    ("__ockl_", "an AMD device-library function (ockl)"),
    ("__ocml_", "an AMD device-library function (ocml)"),
    ("__llvm_amdgcn_", "an AMDGPU intrinsic"),
    ("__hip_atomic_", "an AMD scoped atomic builtin"),
    ("__hip_ds_", "an AMD LDS permute/swizzle"),
    ("__hip_move_dpp", "an AMD DPP move"),
    ("__amdgcn_", "an AMDGPU builtin"),
    ("__mbcnt_", "AMD's lane-count instruction (mbcnt)"),
    ("__bitextract_", "an AMD bit-field instruction"),
    ("__bitinsert_", "an AMD bit-field instruction"),
    ("__fns", "an AMD find-nth-set-bit helper"),
    ("__lastbit_", "an AMD bit helper"),
];

const BALLOTS: &[&str] = &["__ballot", "__ballot_sync", "__activemask"];

fn is_warp_intrinsic(name: &str) -> bool {
    name == "__syncwarp"
        || (name.ends_with("_sync")
            && [
                "__shfl", "__ballot", "__any", "__all", "__match", "__reduce", "__uni",
            ]
            .iter()
            .any(|p| name.starts_with(p)))
}

/// The refusals for kernel `kernel` of `file` (as the spec names it; every function it is by
/// `kernelname::is_function`: every overload and instantiation).
pub fn refusals(file: &SourceFile, kernel: &str) -> Vec<Refusal> {
    let mut out = Vec::new();
    let macros: HashMap<&str, Vec<&frontend::MacroDef>> =
        file.macros.iter().fold(HashMap::new(), |mut m, d| {
            m.entry(d.name.as_str()).or_default().push(d);
            m
        });
    for f in reachable(file, kernel) {
        calls(f, &macros, &mut out);
        wave64(f, &mut out);
    }
    // Wave-size constants of 64 the reached code uses.
    for f in reachable(file, kernel) {
        for r in &f.macro_refs {
            if let Some(defs) = macros.get(r.name.as_str()) {
                let all_64 = defs.iter().all(|d| d.params.is_none() && is_64(&d.body));
                if all_64 && frontend::builtins::is_warp_size_name(&r.name) {
                    push(
                        &mut out,
                        &r.name,
                        r.span,
                        "a wave size of 64 (wave64-only code; NVIDIA warps have 32 lanes)",
                    );
                }
            }
        }
        for d in f.decls.iter().chain(file.globals.iter()) {
            if d.init_int == Some(64)
                && frontend::builtins::is_warp_size_name(&d.name)
                && f.idents.iter().any(|u| u.name == d.name)
            {
                let span = if f.span.contains(&d.span) {
                    d.span
                } else {
                    f.idents
                        .iter()
                        .find(|u| u.name == d.name)
                        .map(|u| u.span)
                        .unwrap_or(d.span)
                };
                push(
                    &mut out,
                    &d.name,
                    span,
                    "a wave size of 64 (wave64-only code; NVIDIA warps have 32 lanes)",
                );
            }
        }
    }
    out.sort_by_key(|r| (r.line, r.column, r.construct.clone()));
    out.dedup();
    out
}

fn is_64(body: &str) -> bool {
    body.trim().trim_matches(['(', ')']).trim() == "64"
}

fn push(out: &mut Vec<Refusal>, construct: &str, span: Span, reason: &str) {
    out.push(Refusal {
        construct: construct.to_string(),
        line: span.line,
        column: span.column,
        reason: reason.to_string(),
    });
}

/// The kernel and every same-file `__device__` function it reaches through calls or macros.
fn reachable<'a>(file: &'a SourceFile, kernel: &str) -> Vec<&'a Function> {
    let gpu: Vec<&Function> = file
        .functions
        .iter()
        .filter(|f| f.kind != FunctionKind::Host)
        .collect();
    let macro_calls: HashMap<&str, &Vec<String>> = file
        .macros
        .iter()
        .map(|m| (m.name.as_str(), &m.calls))
        .collect();
    let mut seen: HashSet<usize> = HashSet::new();
    let mut stack: Vec<usize> = gpu
        .iter()
        .enumerate()
        .filter(|(_, f)| {
            f.kind == FunctionKind::Kernel && kernelname::is_function(kernel, &f.qualified_name)
        })
        .map(|(i, _)| i)
        .collect();
    while let Some(i) = stack.pop() {
        if !seen.insert(i) {
            continue;
        }
        let f = gpu[i];
        let mut names: Vec<&str> = f.calls.iter().map(|c| c.callee.as_str()).collect();
        for r in &f.macro_refs {
            if let Some(cs) = macro_calls.get(r.name.as_str()) {
                names.extend(cs.iter().map(String::as_str));
            }
        }
        for (j, g) in gpu.iter().enumerate() {
            if g.kind == FunctionKind::Device
                && names.contains(&g.name.as_str())
                && !seen.contains(&j)
            {
                stack.push(j);
            }
        }
    }
    let mut v: Vec<usize> = seen.into_iter().collect();
    v.sort_unstable();
    v.into_iter().map(|i| gpu[i]).collect()
}

fn amd_reason(name: &str) -> Option<&'static str> {
    AMD_PREFIXES
        .iter()
        .find(|(p, _)| name.starts_with(p))
        .map(|(_, r)| *r)
}

/// AMD-only calls, directly or through the file's macros (followed to any depth).
fn calls(f: &Function, macros: &HashMap<&str, Vec<&frontend::MacroDef>>, out: &mut Vec<Refusal>) {
    for c in &f.calls {
        if let Some(why) = amd_reason(&c.callee) {
            push(
                out,
                &c.callee,
                c.callee_span,
                &format!("{why}, with no CUDA equivalent"),
            );
        }
    }
    for r in &f.macro_refs {
        let mut stack = vec![r.name.as_str()];
        let mut seen = HashSet::new();
        while let Some(m) = stack.pop() {
            if !seen.insert(m) {
                continue;
            }
            for d in macros.get(m).into_iter().flatten() {
                for c in d.calls.iter().chain(d.idents.iter()) {
                    if let Some(why) = amd_reason(c) {
                        push(
                            out,
                            c,
                            r.span,
                            &format!(
                                "{why}, with no CUDA equivalent (through macro `{}`)",
                                r.name
                            ),
                        );
                    } else if macros.contains_key(c.as_str()) {
                        stack.push(c);
                    }
                }
            }
        }
    }
}

/// Wave64-only code: lane masks wider than 32 bits, the upper half of a ballot read, and lane
/// ids compared with or masked by values only a 64-lane wavefront reaches.
fn wave64(f: &Function, out: &mut Vec<Refusal>) {
    const WIDE: i128 = u32::MAX as i128;
    for c in &f.calls {
        if is_warp_intrinsic(&c.callee) {
            if let Some(Some(m)) = c.arg_ints.first() {
                if *m > WIDE || *m < -1 {
                    push(
                        out,
                        &format!("{}({m:#x}, ...)", c.callee),
                        c.span,
                        "a 64-bit lane mask (wave64-only code; NVIDIA warps have 32 lanes)",
                    );
                }
            }
        }
    }
    // Names holding a ballot (or derived from one), and names holding a lane id.
    let mut ballot: HashSet<&str> = HashSet::new();
    let mut lane: HashSet<&str> = HashSet::new();
    loop {
        let before = (ballot.len(), lane.len());
        for d in &f.decls {
            if d.init_idents
                .iter()
                .any(|n| BALLOTS.contains(&n.as_str()) || ballot.contains(n.as_str()))
            {
                ballot.insert(&d.name);
            }
            if d.init_idents
                .iter()
                .any(|n| n == "__lane_id" || lane.contains(n.as_str()))
            {
                lane.insert(&d.name);
            }
        }
        for a in &f.assigns {
            if a.value_idents
                .iter()
                .any(|n| BALLOTS.contains(&n.as_str()) || ballot.contains(n.as_str()))
            {
                ballot.insert(&a.target);
            }
        }
        if (ballot.len(), lane.len()) == before {
            break;
        }
    }
    for op in &f.const_ops {
        let names: Vec<&str> = op.operand_names.iter().map(String::as_str).collect();
        let on_ballot = names
            .iter()
            .any(|n| BALLOTS.contains(n) || ballot.contains(n));
        let on_lane = names.iter().any(|n| *n == "__lane_id" || lane.contains(n));
        let k = op.constant;
        let shown = |what: &str| format!("{what} {} {k}", op.op);
        if on_ballot {
            let upper = match op.op.as_str() {
                ">>" => op.constant_on_right && k >= 32,
                "&" | "==" | "!=" | "<" | "<=" | ">" | ">=" => k > WIDE,
                _ => false,
            };
            if upper {
                push(out, &shown("ballot"), op.span, "reads the upper 32 lanes of a ballot (wave64-only code; NVIDIA warps have 32 lanes)");
            }
        }
        if on_lane && op.constant_on_right {
            let wave64 = match op.op.as_str() {
                "<" | ">=" => k > 32,
                "<=" | ">" | "==" | "!=" => k >= 32,
                "%" => k > 32,
                "&" => k > 31 && k < 64,
                _ => false,
            };
            if wave64 {
                push(out, &shown("lane id"), op.span, "assumes lane ids of a 64-lane wavefront (wave64-only code; NVIDIA warps have 32 lanes)");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Threads of one process installing the headers into one fresh cache at once (two tune
    /// lanes sharing a compile cache) all succeed with the same files: each write has its own
    /// temporary name (with a shared one, a thread's rename could find its temporary already
    /// renamed by another: `no such file or directory`).
    #[test]
    fn concurrent_installs_into_one_cache_all_succeed() {
        for _ in 0..20 {
            let d = tempfile::tempdir().unwrap();
            let start = std::sync::Arc::new(std::sync::Barrier::new(6));
            let handles: Vec<_> = (0..6)
                .map(|k| {
                    let (dir, start) = (d.path().to_path_buf(), start.clone());
                    std::thread::spawn(move || {
                        start.wait();
                        if k % 2 == 0 {
                            install(&dir).map(|(_, root)| root)
                        } else {
                            install_hip_map(&dir)
                        }
                    })
                })
                .collect();
            for h in handles {
                let root = h.join().unwrap().unwrap_or_else(|e| panic!("{e}"));
                assert!(root.join("hip/hip_runtime.h").is_file());
            }
            let left: Vec<_> = walk(d.path())
                .into_iter()
                .filter(|p| {
                    p.file_name()
                        .unwrap()
                        .to_string_lossy()
                        .starts_with(".tmp-")
                })
                .collect();
            assert!(left.is_empty(), "temporaries left: {left:?}");
        }
    }

    fn walk(dir: &Path) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(walk(&p));
            }
            out.push(p);
        }
        out
    }

    fn refused(src: &str) -> Vec<String> {
        refusals(&frontend::parse(src.as_bytes()), "k")
            .into_iter()
            .map(|r| format!("{}:{}", r.line, r.construct))
            .collect()
    }

    /// The spec's kernel is matched to source functions by `kernelname::is_function`: a
    /// qualified name picks its namespace's kernel only; a bare name every namespace's.
    #[test]
    fn kernels_are_matched_by_the_one_rule() {
        let src =
            "namespace a { __global__ void k(int* p) { p[0] = __ockl_wfred_add_i32(p[1]); } }\n\
namespace b { __global__ void k(int* p) { p[0] = __builtin_amdgcn_readfirstlane(p[1]); } }\n\
template <int N> __global__ void t(int* p) { p[0] = __builtin_amdgcn_mbcnt_lo(~0u, 0u) + N; }\n";
        let file = frontend::parse(src.as_bytes());
        let lines = |kernel: &str| -> Vec<u32> {
            let mut l: Vec<u32> = refusals(&file, kernel).iter().map(|r| r.line).collect();
            l.dedup();
            l
        };
        assert_eq!(lines("a::k"), [1]);
        assert_eq!(lines("b::k"), [2]);
        assert_eq!(lines("_ZN1b1kEPi"), [2]);
        assert_eq!(lines("k"), [1, 2]);
        assert_eq!(lines("c::k"), Vec::<u32>::new());
        assert_eq!(lines("t<4>"), [3]);
        assert_eq!(lines("_Z1tILi4EEvPi"), [3]);
    }

    #[test]
    fn amd_builtins_are_refused_directly_and_through_macros_and_helpers() {
        let src = "#define FIRST(x) __builtin_amdgcn_readfirstlane(x)\n\
__device__ int helper(int v) { return __ockl_wfred_add_i32(v); }\n\
__device__ int unused(int v) { return __builtin_amdgcn_ds_swizzle(v, 0); }\n\
__global__ void k(int* p) {\n  p[0] = FIRST(p[1]);\n  p[2] = helper(p[3]);\n  p[4] = __builtin_amdgcn_mbcnt_lo(~0u, 0u);\n}\n";
        assert_eq!(
            refused(src),
            [
                "2:__ockl_wfred_add_i32",
                "5:__builtin_amdgcn_readfirstlane",
                "7:__builtin_amdgcn_mbcnt_lo"
            ]
        );
    }

    #[test]
    fn wave64_code_is_refused() {
        let src = "#define WAVE_SIZE 64\n\
__global__ void k(unsigned long long* p, int* q) {\n\
  unsigned long long b = __ballot(q[0] > 0);\n\
  if (b == 0xffffffffffffffff) p[0] = 1;\n\
  p[1] = b >> 32;\n\
  p[2] = __shfl_sync(0xffffffffffffffffull, p[3], 1);\n\
  int lane = __lane_id();\n\
  if (lane >= 48) q[1] = 0;\n\
  q[2] = lane & 63;\n\
  q[3] = WAVE_SIZE;\n\
}\n";
        let r = refused(src);
        assert_eq!(r.len(), 6, "{r:?}");
        for want in [
            "4:ballot == ",
            "5:ballot >> 32",
            "6:__shfl_sync(0xffffffffffffffff",
            "8:lane id >= 48",
            "9:lane id & 63",
            "10:WAVE_SIZE",
        ] {
            assert!(r.iter().any(|x| x.starts_with(want)), "{want} not in {r:?}");
        }
    }

    #[test]
    fn portable_code_is_not_refused() {
        let src = "#include <hip/hip_runtime.h>\n\
#if defined(__HIP_PLATFORM_AMD__)\n#define WARP 64\n#else\n#define WARP 32\n#endif\n\
__global__ void k(float* p, unsigned long long* m) {\n\
  float v = p[threadIdx.x];\n\
  for (int o = warpSize / 2; o > 0; o /= 2) v += __shfl_down(v, o);\n\
  unsigned long long b = __ballot(v > 0);\n\
  m[0] = __popcll(b) + WARP;\n\
  if (__lane_id() < 16) p[0] = v;\n\
  __syncthreads();\n\
  atomicAdd(p + 1, v);\n\
}\n";
        assert_eq!(refused(src), Vec::<String>::new());
    }
}
