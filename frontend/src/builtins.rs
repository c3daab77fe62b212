//! The one list of HIP/CUDA built-in names the workspace reasons about: the built-in index
//! variables, `warpSize`, the lane-id intrinsics, and what reads as a warp-size constant.
//!
//! Used by `transforms` (values constant for a thread's lifetime, unsigned operands), the
//! `wave-size` rule (lane ids, block sizes, warp-size constants) and `runner` (wave64-only
//! code), which therefore need not depend on each other.

/// The built-in variables of unsigned type (`threadIdx` ... `gridDim` and HIP's
/// `hipThreadIdx_x`-style spellings): constant for a thread's lifetime.
pub const UNSIGNED_VARIABLES: &[&str] = &[
    "threadIdx",
    "blockIdx",
    "blockDim",
    "gridDim",
    "hipThreadIdx_x",
    "hipThreadIdx_y",
    "hipThreadIdx_z",
    "hipBlockIdx_x",
    "hipBlockIdx_y",
    "hipBlockIdx_z",
    "hipBlockDim_x",
    "hipBlockDim_y",
    "hipBlockDim_z",
    "hipGridDim_x",
    "hipGridDim_y",
    "hipGridDim_z",
];

/// The built-in `int` variable holding the number of lanes of a warp/wavefront.
pub const WARP_SIZE_VARIABLE: &str = "warpSize";

/// A built-in variable of unsigned type ([`UNSIGNED_VARIABLES`]).
pub fn is_unsigned_variable(w: &str) -> bool {
    UNSIGNED_VARIABLES.contains(&w)
}

/// A built-in variable: an unsigned one or `warpSize`.
pub fn is_variable(w: &str) -> bool {
    w == WARP_SIZE_VARIABLE || is_unsigned_variable(w)
}

/// The thread-index variables (`threadIdx`, `hipThreadIdx_x/y/z`).
pub fn is_thread_index(w: &str) -> bool {
    w == "threadIdx" || w.strip_prefix("hipThreadIdx_").is_some_and(is_axis)
}

/// The block-size variables and intrinsic (`blockDim`, `hipBlockDim_x/y/z`,
/// `__builtin_amdgcn_workgroup_size_x`).
pub fn is_block_dim(w: &str) -> bool {
    w == "blockDim"
        || w.strip_prefix("hipBlockDim_").is_some_and(is_axis)
        || w == "__builtin_amdgcn_workgroup_size_x"
}

fn is_axis(a: &str) -> bool {
    matches!(a, "x" | "y" | "z")
}

/// Functions whose result is a thread's lane or local id.
pub const LANE_ID_FUNCTIONS: &[&str] = &[
    "__lane_id",
    "__builtin_amdgcn_workitem_id_x",
    "__builtin_amdgcn_mbcnt_lo",
    "__builtin_amdgcn_mbcnt_hi",
    "__ockl_get_local_id",
];

/// A warp/wave-size-like constant name: `WARP_SIZE`, `kWarpSize`, `warp_sz`, `THREADS_PER_WARP`
/// (case and underscores ignored).
pub fn is_warp_size_name(n: &str) -> bool {
    let c: String = n
        .chars()
        .filter(|c| *c != '_')
        .collect::<String>()
        .to_ascii_lowercase();
    [
        "warpsize",
        "warpsz",
        "threadsperwarp",
        "wavesize",
        "wavefrontsize",
        "warplanes",
        "lanesperwarp",
    ]
    .iter()
    .any(|k| c.contains(k))
}
