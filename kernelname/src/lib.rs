//! kernelname: the one reading of a GPU kernel's name and the one rule that matches a kernel to
//! the source function it was compiled from (tuner, runner, codeobj, profiler and replay).
//!
//! A kernel name arrives in many forms: a mangled symbol (`_ZN2ns1kILi4EEEvPf`), a runtime
//! symbol naming the kernel descriptor (`….kd`), a profiler's row (`k(float*) [clone .kd]`,
//! `k(float*) (.kd)`), a demangled name with return type and parameters
//! (`void ns::k<4>(float*)`), or a name as a user writes it (`ns::k<4>`, `k`).
//!
//! **The rule** ([`is_function`]): a kernel name designates a source function when
//! 1. the name is read into its function ([`function_of`]): tool suffixes removed, a mangled
//!    name demangled, then the return type, the parameter list and the trailing template
//!    arguments removed (`void ns::k<4>(float*)` -> `ns::k`);
//! 2. anonymous namespaces are left out on both sides (`(anonymous namespace)::k` is `k`);
//! 3. the two are equal as qualified names, except that a kernel name without `::` (an
//!    `extern "C"` symbol, or a name written bare) is compared with the function's last
//!    component, its bare name.
//!
//! Template arguments and parameters never take part: every instantiation and every overload of
//! a function is that function. Choosing one instantiation among several symbols is
//! `runner::signature::resolve`'s job (by canonical template arguments).

/// Suffixes the tools append to kernel symbols: rocprof v2/rocprofv3 write `name (.kd)`,
/// rocprof v1 writes `name [clone .kd]`, runtime symbols end in `.kd` (the kernel descriptor).
const SUFFIXES: [&str; 3] = [" (.kd)", "[clone .kd]", ".kd"];

const ANON: &str = "(anonymous namespace)";

/// The name without the tools' suffixes (repeatedly, in any order) and surrounding quotes or
/// blanks: `_Z6scalePfi.kd` -> `_Z6scalePfi`.
pub fn strip_suffixes(raw: &str) -> &str {
    let mut s = raw.trim().trim_matches('"').trim();
    loop {
        let before = s.len();
        for suf in SUFFIXES {
            if let Some(rest) = s.strip_suffix(suf) {
                s = rest.trim_end();
            }
        }
        if s.len() == before {
            return s;
        }
    }
}

/// Demangle an Itanium C++ name in full; `None` for names that are not mangled (`extern "C"`).
pub fn demangle(name: &str) -> Option<String> {
    if !name.starts_with("_Z") {
        return None;
    }
    let sym = cpp_demangle::Symbol::new(name.as_bytes()).ok()?;
    sym.demangle(&cpp_demangle::DemangleOptions::default()).ok()
}

/// The name to show for a kernel: suffixes removed, demangled when mangled (with parameters):
/// `_Z6vecAddPfS_S_i.kd` -> `vecAdd(float*, float*, float*, int)`.
pub fn display(raw: &str) -> String {
    let s = strip_suffixes(raw);
    demangle(s).unwrap_or_else(|| s.to_string())
}

/// The source-level function a kernel name designates: qualified, without return type,
/// parameters or trailing template arguments, anonymous namespaces kept as written
/// (`_ZN2ns1kILi4EEEvPf` and `void ns::k<4>(float*)` -> `ns::k`).
pub fn function_of(raw: &str) -> String {
    const MARK: &str = "\u{1}anon\u{1}";
    let owned = display(raw).replace(ANON, MARK);
    let s = owned.trim();
    // The parameter list starts at the first '(' outside template brackets.
    let mut depth = 0i32;
    let mut end = s.len();
    for (i, c) in s.char_indices() {
        match c {
            '<' => depth += 1,
            '>' => depth -= 1,
            '(' if depth == 0 => {
                end = i;
                break;
            }
            _ => {}
        }
    }
    let mut name = s[..end].trim_end().to_string();
    // Trailing template arguments.
    if name.ends_with('>') {
        let mut d = 0i32;
        for (i, c) in name.char_indices().rev() {
            match c {
                '>' => d += 1,
                '<' => {
                    d -= 1;
                    if d == 0 {
                        name.truncate(i);
                        break;
                    }
                }
                _ => {}
            }
        }
    }
    // A leading return type: the last space outside template brackets.
    let mut d = 0i32;
    let mut start = 0;
    for (i, c) in name.char_indices() {
        match c {
            '<' => d += 1,
            '>' => d -= 1,
            ' ' if d == 0 => start = i + 1,
            _ => {}
        }
    }
    name[start..].trim().replace(MARK, ANON)
}

/// The last component of [`function_of`]: `_ZN2ns3fooEPf` -> `foo`.
pub fn bare(raw: &str) -> String {
    let f = function_of(raw);
    last_component(&f).to_string()
}

fn last_component(qualified: &str) -> &str {
    qualified.rsplit("::").next().unwrap_or(qualified)
}

/// A qualified name with anonymous namespaces left out.
fn without_anonymous(q: &str) -> String {
    q.replace(&format!("{ANON}::"), "")
}

/// **The rule** (see the crate documentation): whether the kernel named `kernel` (any form) is
/// the source function whose qualified name is `qualified` (`frontend::Function::
/// qualified_name`, template arguments never part of it).
pub fn is_function(kernel: &str, qualified: &str) -> bool {
    let k = without_anonymous(&function_of(kernel));
    let q = without_anonymous(qualified.trim());
    if k.is_empty() {
        return false;
    }
    if k.contains("::") {
        k == q
    } else {
        k == last_component(&q)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_of_one_name() {
        for form in [
            "_ZN2ns1kILi4EEEvPf",
            "_ZN2ns1kILi4EEEvPf.kd",
            "void ns::k<4>(float*)",
            "ns::k<4>(float*) [clone .kd]",
            "ns::k<4>(float*) (.kd)",
            "ns::k<4>",
            "ns::k",
            "\"ns::k\"",
        ] {
            assert_eq!(function_of(form), "ns::k", "{form}");
            assert_eq!(bare(form), "k", "{form}");
        }
        assert_eq!(
            function_of("void ns::inner::k<std::pair<int, int> >(int)"),
            "ns::inner::k"
        );
        assert_eq!(function_of("chain(int const*, int*, int, int)"), "chain");
        assert_eq!(
            function_of("(anonymous namespace)::k(int)"),
            "(anonymous namespace)::k"
        );
        assert_eq!(function_of("plain_kernel"), "plain_kernel");
        assert_eq!(
            display("_Z6vecAddPfS_S_i.kd"),
            "vecAdd(float*, float*, float*, int)"
        );
        assert_eq!(display("_Zgarbage"), "_Zgarbage");
        assert_eq!(strip_suffixes("k.kd [clone .kd]"), "k");
    }

    #[test]
    fn the_rule_namespaces_templates_overloads() {
        // Namespaces: qualified against qualified.
        assert!(is_function("_ZN2ns1kEPf", "ns::k"));
        assert!(!is_function("_ZN2ns1kEPf", "k"));
        assert!(!is_function("_ZN2ns1kEPf", "other::k"));
        assert!(!is_function("_ZN1a2ns1kEPf", "ns::k"));
        // Anonymous namespaces are left out on both sides.
        assert!(is_function("_ZN12_GLOBAL__N_11kEPf", "k"));
        assert!(is_function(
            "(anonymous namespace)::k(int)",
            "(anonymous namespace)::k"
        ));
        assert!(is_function("ns::(anonymous namespace)::k", "ns::k"));
        // A bare kernel name (extern "C", or written bare) is compared with the bare name.
        assert!(is_function("k", "ns::k"));
        assert!(is_function("k.kd", "k"));
        assert!(!is_function("kk", "ns::k"));
        // Templates: every instantiation is the function.
        assert!(is_function("_Z5scaleILi4EEvPfPKfif", "scale"));
        assert!(is_function("void ns::t<float, 4>(float*)", "ns::t"));
        // Overloads: the parameters never take part.
        assert!(is_function("_Z4overPfi", "over"));
        assert!(is_function("_Z4overPdi", "over"));
        assert!(!is_function("", "k"));
    }
}
