//! The one list of HIP/CUDA built-in names (`frontend::builtins`), which `transforms`, the
//! `wave-size` rule and `runner` share.

use frontend::builtins::*;

#[test]
fn index_variables_and_warp_size() {
    for v in ["threadIdx", "hipBlockIdx_z", "gridDim", "hipGridDim_x"] {
        assert!(is_unsigned_variable(v) && is_variable(v), "{v}");
    }
    assert!(is_variable(WARP_SIZE_VARIABLE) && !is_unsigned_variable(WARP_SIZE_VARIABLE));
    assert!(!is_variable("threadIdx_x") && !is_variable("hipThreadIdx_w"));
    assert!(is_thread_index("hipThreadIdx_y") && !is_thread_index("hipThreadIdx_w"));
    assert!(is_thread_index("threadIdx") && !is_thread_index("blockIdx"));
    assert!(is_block_dim("hipBlockDim_x") && is_block_dim("__builtin_amdgcn_workgroup_size_x"));
    assert!(!is_block_dim("hipBlockDim_q") && !is_block_dim("blockIdx"));
    // Every thread-index and block-size variable is in the unsigned list.
    for v in UNSIGNED_VARIABLES {
        if is_thread_index(v) || (is_block_dim(v) && !v.starts_with("__")) {
            assert!(is_unsigned_variable(v));
        }
    }
}

#[test]
fn warp_size_names() {
    for n in [
        "WARP_SIZE",
        "kWarpSize",
        "warp_sz",
        "THREADS_PER_WARP",
        "WAVEFRONT_SIZE",
    ] {
        assert!(is_warp_size_name(n), "{n}");
    }
    for n in ["WARPS", "block_size", "wave", "size"] {
        assert!(!is_warp_size_name(n), "{n}");
    }
}
