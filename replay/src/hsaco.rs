//! Code objects for replay: the kernel a snapshot names, found in `kernel.hsaco` or a variant
//! by its symbol; the bare ELF for the snapshot's processor out of an offload bundle (what the
//! runtime loads); target-id parsing.

use codeobj::{CodeObject, Kernel};

/// The target id of an HSA ISA name: `amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-` ->
/// `gfx90a:sramecc+:xnack-`; a bare target id is returned as it is.
pub fn target_id(isa_name: &str) -> &str {
    match isa_name.splitn(5, '-').nth(4) {
        Some(t) if isa_name.starts_with("amdgcn-") => t,
        _ => isa_name,
    }
}

/// The processor of an ISA name or target id: `gfx90a`.
pub fn processor(isa_name: &str) -> &str {
    target_id(isa_name).split(':').next().unwrap_or("")
}

/// The kernel name of a runtime symbol name: the runtime names kernel symbols after their
/// descriptor (`_Z6scalePfi.kd`), the metadata after the function (`_Z6scalePfi`).
/// (`kernelname::strip_suffixes`, the one reading of kernel names).
pub fn kernel_name(symbol: &str) -> &str {
    kernelname::strip_suffixes(symbol)
}

/// Whether a metadata entry is the kernel a runtime symbol (or kernel) name designates.
pub fn is_kernel(k: &Kernel, symbol: &str) -> bool {
    k.meta.symbol == symbol || k.meta.name == symbol || k.meta.name == kernel_name(symbol)
}

/// Find `symbol` in code objects read from one file, preferring the code object for
/// `isa_name`'s processor when there are several (a bundle).
pub fn find_kernel<'a>(
    objects: &'a [CodeObject],
    isa_name: &str,
    symbol: &str,
) -> Result<(&'a CodeObject, &'a Kernel), String> {
    let want = processor(isa_name);
    let matching = |co: &&CodeObject| want.is_empty() || co.arch == want;
    let candidates: Vec<&CodeObject> = if objects.iter().any(|c| matching(&c)) {
        objects.iter().filter(matching).collect()
    } else if want.is_empty() {
        objects.iter().collect()
    } else {
        let have: Vec<&str> = objects.iter().map(|c| c.target_id.as_str()).collect();
        return Err(format!(
            "no code object for {want} (it has: {})",
            if have.is_empty() {
                "none".to_string()
            } else {
                have.join(", ")
            }
        ));
    };
    for co in &candidates {
        if let Some(k) = co.kernels.iter().find(|k| is_kernel(k, symbol)) {
            return Ok((co, k));
        }
    }
    let mut names: Vec<&str> = candidates
        .iter()
        .flat_map(|c| c.kernels.iter().map(|k| k.meta.name.as_str()))
        .collect();
    names.sort_unstable();
    names.dedup();
    Err(format!(
        "kernel symbol `{symbol}` is not in the code object (its kernels: {})",
        if names.is_empty() {
            "none".to_string()
        } else {
            names.join(", ")
        }
    ))
}

/// The bare AMDGPU ELF for `processor` in `data`: `data` itself when it is one, else the
/// matching entry of an offload bundle (compressed or not). This is what
/// `hsa_code_object_reader_create_from_memory` accepts.
pub fn device_elf(data: &[u8], processor: &str) -> Result<Vec<u8>, String> {
    if codeobj::elf::is_elf(data) {
        return match codeobj::elf::machine(data) {
            Ok(codeobj::elf::EM_AMDGPU) => Ok(data.to_vec()),
            Ok(_) => Err("a host ELF, not an AMDGPU code object; pass the --genco object".into()),
            Err(e) => Err(e.to_string()),
        };
    }
    let owned;
    let bundle_bytes = if codeobj::compressed::is_compressed(data) {
        owned = codeobj::compressed::decompress(data).map_err(|e| e.to_string())?;
        &owned[..]
    } else {
        data
    };
    if !codeobj::bundle::is_bundle(bundle_bytes) {
        return Err("neither an AMDGPU ELF nor an offload bundle".into());
    }
    let b = codeobj::bundle::parse(bundle_bytes).map_err(|e| e.to_string())?;
    let mut have = Vec::new();
    for e in &b.entries {
        let t = e.target();
        if t.is_host() || e.data.is_empty() {
            continue;
        }
        if t.processor() == processor || processor.is_empty() {
            return device_elf(e.data, processor);
        }
        have.push(t.target_id.clone());
    }
    Err(format!(
        "the bundle has no entry for {processor} (it has: {})",
        if have.is_empty() {
            "none".into()
        } else {
            have.join(", ")
        }
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(
            target_id("amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-"),
            "gfx90a:sramecc+:xnack-"
        );
        assert_eq!(
            processor("amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-"),
            "gfx90a"
        );
        assert_eq!(processor("gfx942"), "gfx942");
        assert_eq!(processor(""), "");
        assert_eq!(kernel_name("_Z6scalePfi.kd"), "_Z6scalePfi");
        assert_eq!(kernel_name("plain"), "plain");
    }
}
