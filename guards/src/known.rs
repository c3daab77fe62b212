//! The HIP/CUDA device API and the C++ library calls known by name: a call to one of these is
//! not listed as `unresolved` on a loop (its behaviour is known: barriers and atomics are the
//! rules', the rest neither synchronises nor leaves the loop).

use frontend::Call;

/// C math functions of the device library; each also with an `f` suffix (float) and most
/// with a `__` prefix intrinsic form (covered by the `__` rule).
const MATH: &[&str] = &[
    "sin",
    "cos",
    "tan",
    "asin",
    "acos",
    "atan",
    "atan2",
    "sinh",
    "cosh",
    "tanh",
    "asinh",
    "acosh",
    "atanh",
    "exp",
    "exp2",
    "exp10",
    "expm1",
    "log",
    "log2",
    "log10",
    "log1p",
    "logb",
    "ilogb",
    "pow",
    "powi",
    "sqrt",
    "rsqrt",
    "cbrt",
    "rcbrt",
    "hypot",
    "rhypot",
    "fabs",
    "fmin",
    "fmax",
    "fma",
    "floor",
    "ceil",
    "round",
    "rint",
    "lrint",
    "llrint",
    "lround",
    "llround",
    "trunc",
    "nearbyint",
    "fmod",
    "remainder",
    "remquo",
    "frexp",
    "ldexp",
    "scalbn",
    "scalbln",
    "modf",
    "copysign",
    "nextafter",
    "erf",
    "erfc",
    "erfinv",
    "erfcinv",
    "erfcx",
    "lgamma",
    "tgamma",
    "sincos",
    "sincospi",
    "sinpi",
    "cospi",
    "norm",
    "rnorm",
    "norm3d",
    "rnorm3d",
    "norm4d",
    "rnorm4d",
    "normcdf",
    "normcdfinv",
    "j0",
    "j1",
    "jn",
    "y0",
    "y1",
    "yn",
    "fdim",
    "nan",
    "isnan",
    "isinf",
    "isfinite",
    "signbit",
    "fdivide",
    "saturate",
];

/// Other device functions and C/C++ library calls known by name.
const OTHER: &[&str] = &[
    "min",
    "max",
    "abs",
    "labs",
    "llabs",
    "umin",
    "umax",
    "llmin",
    "llmax",
    "ullmin",
    "ullmax",
    "printf",
    "assert",
    "malloc",
    "free",
    "memcpy",
    "memset",
    "sizeof",
    "alignof",
    "decltype",
    "static_cast",
    "reinterpret_cast",
    "const_cast",
    "dynamic_cast",
    "clock",
    "clock64",
    "wall_clock64",
    "float",
    "double",
    "int",
    "unsigned",
    "char",
    "short",
    "long",
    "bool",
    "half",
    "half2",
    "dim3",
    "swap",
    "move",
    "forward",
    "static_assert",
    "rintf",
    "float1",
    "float2",
    "float3",
    "float4",
    "double1",
    "double2",
    "double3",
    "double4",
    "int1",
    "int2",
    "int3",
    "int4",
    "uint1",
    "uint2",
    "uint3",
    "uint4",
    "char1",
    "char2",
    "char4",
    "uchar1",
    "uchar2",
    "uchar4",
    "short2",
    "short4",
    "ushort2",
    "ushort4",
    "long2",
    "long4",
    "ulong2",
    "ulong4",
    "longlong2",
    "ulonglong2",
    // Cooperative groups' free functions, also after `using namespace cooperative_groups`.
    "this_thread_block",
    "this_grid",
    "this_multi_grid",
    "this_thread",
    "this_cluster",
    "tiled_partition",
    "coalesced_threads",
    "labeled_partition",
    "binary_partition",
];

/// Methods of cooperative-groups objects, `std::` containers and vector types that neither
/// synchronise nor leave a loop (the synchronising ones are the barrier rule's).
const METHODS: &[&str] = &[
    "thread_rank",
    "size",
    "num_threads",
    "meta_group_rank",
    "meta_group_size",
    "group_index",
    "thread_index",
    "dim_threads",
    "group_dim",
    "block_rank",
    "block_index",
    "num_blocks",
    "dim_blocks",
    "is_valid",
    "shfl",
    "shfl_down",
    "shfl_up",
    "shfl_xor",
    "any",
    "all",
    "ballot",
    "match_any",
    "match_all",
    "data",
    "begin",
    "end",
    "get",
    "load",
    "store",
    "x",
    "y",
    "z",
    "w",
];

/// Namespaces whose functions are the language's or the toolkits' own.
const NAMESPACES: &[&str] = &[
    "std",
    "cuda",
    "cooperative_groups",
    "cg",
    "hip",
    "__gnu_cxx",
];

/// True when `c` calls a function of the HIP/CUDA device API or of the C/C++ library, known by
/// name: builtins and intrinsics (`__` prefix), `hip*`/`cuda*`/`make_*` functions, the math
/// library, `std::`, `cuda::` (libcu++) and cooperative-groups functions and the methods of
/// their objects; a one-letter callee (a template parameter, `T(0)`).
pub(crate) fn is_known_call(c: &Call) -> bool {
    let name = c.callee.as_str();
    // A one-letter callee is a template parameter constructing a value (`T(0)`).
    if name.len() < 2 || name.starts_with("__") || name.starts_with("operator") {
        return true;
    }
    if crate::rules::barrier::is_barrier_call(c) || crate::rules::atomic::is_atomic_call(c) {
        return true;
    }
    if c.receiver.is_some() {
        return METHODS.contains(&name);
    }
    if let Some(q) = c.qualifier.as_deref() {
        let q = q.trim_start_matches("::");
        if NAMESPACES
            .iter()
            .any(|n| q == *n || q.starts_with(&format!("{n}::")))
        {
            return true;
        }
    }
    if name.starts_with("hip") || name.starts_with("cuda") || name.starts_with("make_") {
        return true;
    }
    let base = name.strip_suffix('f').filter(|b| MATH.contains(b));
    MATH.contains(&name) || base.is_some() || OTHER.contains(&name)
}
