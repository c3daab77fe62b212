//! Kernel-name normalisation: tool suffixes removed, Itanium-mangled names demangled.

/// Normalise a kernel name as written by any of the tools: trim, strip the `.kd` suffixes
/// (repeatedly, in any order), then demangle if the rest is an Itanium-mangled symbol
/// (`kernelname::display`, the one reading of kernel names).
pub fn normalize(raw: &str) -> String {
    kernelname::display(raw)
}

/// HIP runtime (ROCclr) helper kernels: blits, fills, copies. Kept in the data, excluded from
/// rankings.
pub fn is_runtime_kernel(name: &str) -> bool {
    name.starts_with("__amd_rocclr_")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suffixes_and_demangling() {
        assert_eq!(
            normalize("vecCopy(double*, double*, double*, int, int) [clone .kd]"),
            "vecCopy(double*, double*, double*, int, int)"
        );
        assert_eq!(
            normalize("vecCopy(double*, double*, double*, int, int) (.kd)"),
            "vecCopy(double*, double*, double*, int, int)"
        );
        assert_eq!(
            normalize("_Z6vecAddPfS_S_i.kd"),
            "vecAdd(float*, float*, float*, int)"
        );
        assert_eq!(
            normalize("_Z6vecAddPfS_S_i"),
            "vecAdd(float*, float*, float*, int)"
        );
        assert_eq!(normalize("  plain_kernel "), "plain_kernel");
        // Not a valid mangled name: kept as written.
        assert_eq!(normalize("_Zgarbage"), "_Zgarbage");
        assert!(is_runtime_kernel(&normalize(
            "__amd_rocclr_fillBufferAligned.kd"
        )));
        assert!(!is_runtime_kernel("vecAdd"));
    }
}
