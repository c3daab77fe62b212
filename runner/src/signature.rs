//! A compiled kernel's real parameter list (from the code object's `.args` on AMD, from the PTX
//! `.param` list on NVIDIA, with C++ types from the demangled symbol), finding the kernel a spec
//! names, and checking the spec's arguments against the parameters.

use crate::elem::Elem;
use crate::spec::{ArgKind, Spec};
use serde::Serialize;

/// One explicit kernel parameter.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Param {
    /// The source name, when the object keeps it (AMD metadata does; PTX does not).
    pub name: Option<String>,
    /// The C++ type from the demangled symbol (`float const*`), when the symbol is mangled.
    pub cxx_type: Option<String>,
    /// Bytes the argument occupies.
    pub size: u32,
    /// Offset in the kernel-argument segment (AMD), or the running offset (NVIDIA).
    pub offset: u32,
    /// `Some(true)` a pointer, `Some(false)` a value, `None` unknown (a PTX `.u64` of an
    /// `extern "C"` kernel).
    pub pointer: Option<bool>,
}

/// A compiled kernel as the runner launches it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KernelSig {
    /// The symbol to load (mangled).
    pub symbol: String,
    pub demangled: Option<String>,
    pub params: Vec<Param>,
    /// Size of the explicit-argument block (AMD: the metadata's kernarg segment size).
    pub kernarg_size: u32,
    /// The largest block the compiled kernel accepts (AMD `.max_flat_workgroup_size`).
    pub max_block_size: Option<u32>,
}

/// The parameter types of a mangled name, from its demangled form (`None` for names that are
/// not mangled, such as `extern "C"` kernels).
pub fn demangled_params(symbol: &str) -> Option<(String, Vec<String>)> {
    let full = codeobj::metadata::demangle(symbol)?;
    // The parameter list is the last top-level `( ... )`.
    let close = full.rfind(')')?;
    let mut depth = 0i32;
    let mut open = None;
    for (i, c) in full[..=close].char_indices().rev() {
        match c {
            ')' | '>' | ']' => depth += 1,
            '(' | '<' | '[' => {
                depth -= 1;
                if depth == 0 && c == '(' {
                    open = Some(i);
                    break;
                }
            }
            _ => {}
        }
    }
    let open = open?;
    let inner = &full[open + 1..close];
    let mut params = Vec::new();
    let mut depth = 0i32;
    let mut cur = String::new();
    for c in inner.chars() {
        match c {
            '(' | '<' | '[' => depth += 1,
            ')' | '>' | ']' => depth -= 1,
            ',' if depth == 0 => {
                params.push(cur.trim().to_string());
                cur.clear();
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    if !cur.trim().is_empty() && cur.trim() != "void" {
        params.push(cur.trim().to_string());
    }
    Some((full, params))
}

/// The name to compare a spec's `kernel` with: demangled without return type and parameters,
/// in [`canonical`] form (`stencil<4>`, `ns::k`, `tile<32>` for a `template <unsigned B>`).
pub fn short_name(symbol: &str) -> String {
    let shown = cpp_demangle::Symbol::new(symbol)
        .ok()
        .and_then(|s| {
            s.demangle(
                &cpp_demangle::DemangleOptions::new()
                    .no_params()
                    .no_return_type(),
            )
            .ok()
        })
        .unwrap_or_else(|| symbol.to_string());
    canonical(&shown)
}

/// Integer types a demangler writes as casts of template arguments (`(unsigned int)32`), white
/// space removed.
const INT_CASTS: &[&str] = &[
    "(unsignedint)",
    "(unsignedlong)",
    "(unsignedlonglong)",
    "(unsignedshort)",
    "(unsignedchar)",
    "(unsigned)",
    "(signedchar)",
    "(char)",
    "(short)",
    "(int)",
    "(long)",
    "(longlong)",
    "(__int128)",
    "(unsigned__int128)",
    "(wchar_t)",
    "(char8_t)",
    "(char16_t)",
    "(char32_t)",
];

/// A kernel name as written or demangled, in one form: white space removed, integer casts of
/// template arguments dropped (`(unsigned int)32` -> `32`), integer literals in decimal without
/// suffixes (`32u`, `0x20` -> `32`) and plain character literals as their code (`'A'` -> `65`).
/// `k<32>` names a `template <const uint B>` kernel instantiated with 32, as nvcc and clang
/// mangle it (`_Z1kILj32EEvPf`).
pub fn canonical(name: &str) -> String {
    let s: String = name.chars().filter(|c| !c.is_whitespace()).collect();
    let b = s.as_bytes();
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < b.len() {
        let prev_ident = i > 0 && ident(b[i - 1]);
        if b[i] == b'(' && !prev_ident {
            if let Some(cast) = INT_CASTS.iter().find(|c| s[i..].starts_with(*c)) {
                let next = b.get(i + cast.len()).copied();
                if next.is_some_and(|c| c.is_ascii_digit() || c == b'-' || c == b'\'') {
                    i += cast.len();
                    continue;
                }
            }
        }
        if b[i].is_ascii_digit() && !prev_ident {
            let start = i;
            while i < b.len() && ident(b[i]) {
                i += 1;
            }
            let tok = &s[start..i];
            out.push_str(&int_literal(tok).map_or_else(|| tok.to_string(), |v| v.to_string()));
            continue;
        }
        if b[i] == b'\'' && i + 2 < b.len() && b[i + 2] == b'\'' && b[i + 1] != b'\\' {
            out.push_str(&b[i + 1].to_string());
            i += 3;
            continue;
        }
        out.push(b[i] as char);
        i += 1;
    }
    out
}

/// The value of a C++ integer literal (decimal, hex, octal or binary, with `u`/`l` suffixes).
fn int_literal(tok: &str) -> Option<u128> {
    let t = tok.trim_end_matches(['u', 'U', 'l', 'L']).replace('\'', "");
    let (digits, radix) = if let Some(h) = t.strip_prefix("0x").or(t.strip_prefix("0X")) {
        (h, 16)
    } else if let Some(b) = t.strip_prefix("0b").or(t.strip_prefix("0B")) {
        (b, 2)
    } else if t.len() > 1 && t.starts_with('0') {
        (&t[1..], 8)
    } else {
        (t.as_str(), 10)
    };
    u128::from_str_radix(digits, radix).ok()
}

/// Pick the symbol among `symbols` that `wanted` names: the mangled name itself, the demangled
/// name without parameters (`stencil<4>`, `ns::k`, whitespace ignored), or a bare name
/// (`stencil`) when exactly one kernel has it.
pub fn resolve(symbols: &[String], wanted: &str) -> Result<String, String> {
    if let Some(s) = symbols.iter().find(|s| *s == wanted) {
        return Ok(s.clone());
    }
    let w = canonical(wanted);
    let by_short: Vec<&String> = symbols.iter().filter(|s| short_name(s) == w).collect();
    let pick = |found: Vec<&String>| -> Result<Option<String>, String> {
        match found.len() {
            0 => Ok(None),
            1 => Ok(Some(found[0].clone())),
            _ => Err(format!(
                "kernel `{wanted}` is ambiguous: {}; name one by its mangled name",
                found.iter().map(|s| show(s)).collect::<Vec<_>>().join(", ")
            )),
        }
    };
    if let Some(s) = pick(by_short)? {
        return Ok(s);
    }
    if !w.contains('<') {
        let by_base: Vec<&String> = symbols
            .iter()
            .filter(|s| {
                kernelname::bare(s) == w || short_name(s).rsplit("::").next() == Some(w.as_str())
            })
            .collect();
        if let Some(s) = pick(by_base)? {
            return Ok(s);
        }
    }
    Err(format!(
        "no kernel `{wanted}` in the compiled source (kernels: {})",
        if symbols.is_empty() {
            "none".to_string()
        } else {
            symbols
                .iter()
                .map(|s| show(s))
                .collect::<Vec<_>>()
                .join(", ")
        }
    ))
}

fn show(symbol: &str) -> String {
    let short = short_name(symbol);
    if short == symbol {
        symbol.to_string()
    } else {
        format!("{short} ({symbol})")
    }
}

/// The signature of `symbol` from an AMD code object's metadata.
pub fn from_amd(k: &codeobj::KernelMeta) -> KernelSig {
    let explicit: Vec<&codeobj::ArgMeta> = k
        .args
        .iter()
        .filter(|a| !a.value_kind.starts_with("hidden_"))
        .collect();
    let (demangled, types) = match demangled_params(&k.name) {
        Some((d, t)) if t.len() == explicit.len() => (Some(d), t.into_iter().map(Some).collect()),
        Some((d, _)) => (Some(d), vec![None; explicit.len()]),
        None => (None, vec![None; explicit.len()]),
    };
    let params = explicit
        .iter()
        .zip(types)
        .map(|(a, cxx_type)| Param {
            name: a.name.clone(),
            cxx_type,
            size: a.size,
            offset: a.offset,
            pointer: Some(
                a.value_kind == "global_buffer" || a.value_kind == "dynamic_shared_pointer",
            ),
        })
        .collect::<Vec<_>>();
    let kernarg_size = params.iter().map(|p| p.offset + p.size).max().unwrap_or(0);
    KernelSig {
        symbol: k.name.clone(),
        demangled,
        params,
        kernarg_size,
        max_block_size: Some(k.max_flat_workgroup_size),
    }
}

/// The signature of a PTX entry.
pub fn from_ptx(e: &crate::ptx::PtxEntry) -> KernelSig {
    let (demangled, types) = match demangled_params(&e.name) {
        Some((d, t)) if t.len() == e.params.len() => (Some(d), t.into_iter().map(Some).collect()),
        Some((d, _)) => (Some(d), vec![None; e.params.len()]),
        None => (None, vec![None; e.params.len()]),
    };
    let mut offset = 0u32;
    let params = e
        .params
        .iter()
        .zip(types)
        .map(|(p, cxx_type): (&crate::ptx::PtxParam, Option<String>)| {
            let align = p.align.max(1);
            offset = offset.div_ceil(align) * align;
            let pointer = match &cxx_type {
                Some(t) => Some(t.ends_with('*')),
                None if p.is_ptr => Some(true),
                None if p.size == 8 && p.ty != "f64" => None,
                None => Some(false),
            };
            let out = Param {
                name: None,
                cxx_type,
                size: p.size,
                offset,
                pointer,
            };
            offset += p.size;
            out
        })
        .collect();
    KernelSig {
        symbol: e.name.clone(),
        demangled,
        params,
        kernarg_size: offset,
        max_block_size: None,
    }
}

/// The element type a pointer parameter's C++ type points to (`float const*` -> `float`).
fn pointee(t: &str) -> Option<&str> {
    let t = t.trim().strip_suffix('*')?.trim();
    let t = t.trim_end_matches("__restrict").trim();
    if t.ends_with('*') {
        return Some(t); // pointer to pointer: no scalar element type
    }
    Some(
        t.trim_start_matches("const ")
            .trim_end_matches(" const")
            .trim_start_matches("volatile ")
            .trim_end_matches(" volatile")
            .trim(),
    )
}

/// Check the spec's arguments against the kernel's parameters: count, kind (buffer or scalar),
/// size and, where the symbol is mangled, the C++ element type; names where both sides have one.
pub fn check_args(spec: &Spec, sig: &KernelSig) -> Result<(), String> {
    let kernel = sig.demangled.as_deref().unwrap_or(&sig.symbol);
    if spec.args.len() != sig.params.len() {
        return Err(format!(
            "the spec has {} argument(s), kernel `{kernel}` takes {}",
            spec.args.len(),
            sig.params.len()
        ));
    }
    for (i, (a, p)) in spec.args.iter().zip(&sig.params).enumerate() {
        let label = a.label(i);
        let ty = p
            .cxx_type
            .as_deref()
            .map(|t| format!(" `{t}`"))
            .unwrap_or_default();
        if let (Some(want), Some(have)) = (&a.name, &p.name) {
            if want != have {
                return Err(format!(
                    "{label}: the kernel's parameter {} is named `{have}` (arguments are given in the kernel's order)",
                    i + 1
                ));
            }
        }
        match &a.kind {
            ArgKind::Buffer(b) => {
                if p.pointer == Some(false) {
                    return Err(format!(
                        "{label}: a buffer, but parameter {}{ty} is passed by value ({} bytes)",
                        i + 1,
                        p.size
                    ));
                }
                if p.size != 8 {
                    return Err(format!(
                        "{label}: a buffer, but parameter {}{ty} is {} bytes, not a 64-bit pointer",
                        i + 1,
                        p.size
                    ));
                }
                if let Some(pt) = p.cxx_type.as_deref().and_then(pointee) {
                    if pt.ends_with('*') {
                        return Err(format!("{label}: parameter {}{ty} is a pointer to pointers, which a spec cannot describe", i + 1));
                    }
                    if let Some(e) = Elem::from_cxx(pt) {
                        if !b.elem.cxx_names().contains(&pt) && e != b.elem {
                            return Err(format!(
                                "{label}: buffer of {} but parameter {}{ty} points to {pt} ({})",
                                b.elem,
                                i + 1,
                                e
                            ));
                        }
                    }
                }
            }
            ArgKind::Scalar { elem, .. } => {
                if p.pointer == Some(true) {
                    return Err(format!(
                        "{label}: a scalar, but parameter {}{ty} is a pointer (use `buffer = ...`)",
                        i + 1
                    ));
                }
                if p.size as usize != elem.size() {
                    return Err(format!(
                        "{label}: scalar {elem} is {} bytes, parameter {}{ty} is {} bytes",
                        elem.size(),
                        i + 1,
                        p.size
                    ));
                }
                if let Some(t) = p.cxx_type.as_deref() {
                    if let Some(e) = Elem::from_cxx(t) {
                        if e != *elem && !elem.cxx_names().contains(&t.trim()) {
                            return Err(format!(
                                "{label}: scalar {elem}, but parameter {}{ty} is {e}",
                                i + 1
                            ));
                        }
                    }
                }
            }
        }
    }
    if let Some(max) = sig.max_block_size {
        let block: u64 = spec.block.iter().map(|&b| b as u64).product();
        if block > max as u64 {
            return Err(format!(
                "block of {block} work-items is over the kernel's maximum of {max} (its __launch_bounds__)"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn demangles_parameter_lists() {
        let (d, p) = demangled_params("_Z7stencilILi4EEvPKfPfS1_i").unwrap();
        assert_eq!(
            d,
            "void stencil<4>(float const*, float*, float const*, int)"
        );
        assert_eq!(p, ["float const*", "float*", "float const*", "int"]);
        assert_eq!(demangled_params("_Z1kv").unwrap().1, Vec::<String>::new());
        assert!(demangled_params("plain_c_kernel").is_none());
        assert_eq!(pointee("float const*"), Some("float"));
        assert_eq!(pointee("unsigned int*"), Some("unsigned int"));
        assert_eq!(pointee("int"), None);
    }

    #[test]
    fn resolves_names() {
        let syms: Vec<String> = [
            "_Z7stencilILi4EEvPKfPfS1_i",
            "_Z7stencilILi2EEvPKfPfS1_i",
            "_Z3dotPKfS0_Pfi",
            "_ZN2ns3dotEPf",
            "plain",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(resolve(&syms, "stencil<4>").unwrap(), syms[0]);
        assert_eq!(resolve(&syms, "stencil< 2 >").unwrap(), syms[1]);
        assert_eq!(resolve(&syms, "_Z3dotPKfS0_Pfi").unwrap(), syms[2]);
        assert_eq!(resolve(&syms, "ns::dot").unwrap(), syms[3]);
        assert_eq!(resolve(&syms, "plain").unwrap(), "plain");
        let e = resolve(&syms, "stencil").unwrap_err();
        assert!(e.contains("ambiguous") && e.contains("stencil<4>"), "{e}");
        // `dot` is the global one exactly; `ns::dot` is only reached by its qualified name.
        assert_eq!(resolve(&syms, "dot").unwrap(), syms[2]);
        // A `template <const uint B>` kernel is named as written in the source (issue 17).
        let tile: Vec<String> = [
            "_Z4tileILj32EEvPf",
            "_Z4tileILj64EEvPf",
            "_Z1kILm8ELb1ELc65EEvPf",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        for w in [
            "tile<32>",
            "tile< 32u >",
            "tile<0x20>",
            "tile<(unsigned int)32>",
        ] {
            assert_eq!(resolve(&tile, w).unwrap(), tile[0], "{w}");
        }
        assert_eq!(resolve(&tile, "k<8, true, 'A'>").unwrap(), tile[2]);
        let e = resolve(&tile, "tile<16>").unwrap_err();
        assert!(
            e.contains("tile<32> (_Z4tileILj32EEvPf)") && !e.contains("unsigned"),
            "{e}"
        );
        let e = resolve(&syms, "nope").unwrap_err();
        assert!(e.starts_with("no kernel `nope` in the compiled source (kernels: stencil<4> (_Z7stencilILi4EEvPKfPfS1_i)"), "{e}");
    }
}
