//! Kernel-name normalisation: tool suffixes removed, Itanium-mangled names demangled.

/// Suffixes the tools append to kernel symbols: rocprof v2/rocprofv3 write `name (.kd)`,
/// rocprof v1 writes `name [clone .kd]`, raw symbols end in `.kd` (the kernel descriptor).
const SUFFIXES: [&str; 3] = [" (.kd)", "[clone .kd]", ".kd"];

/// Normalise a kernel name as written by any of the tools: trim, strip the `.kd` suffixes
/// (repeatedly, in any order), then demangle if the rest is an Itanium-mangled symbol.
pub fn normalize(raw: &str) -> String {
    let mut s = raw.trim().trim_matches('"').trim();
    loop {
        let before = s.len();
        for suf in SUFFIXES {
            if let Some(rest) = s.strip_suffix(suf) {
                s = rest.trim_end();
            }
        }
        if s.len() == before {
            break;
        }
    }
    if s.starts_with("_Z") {
        if let Ok(sym) = cpp_demangle::Symbol::new(s.as_bytes()) {
            if let Ok(d) = sym.demangle(&cpp_demangle::DemangleOptions::default()) {
                return d;
            }
        }
    }
    s.to_string()
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
