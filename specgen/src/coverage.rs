//! The kernels of a tree that no launch spec launches, for `tune --spec` to list once ("N
//! kernels without a spec"). A spec covers a kernel when its source is the kernel's file and
//! its `kernel` names the kernel's function (`kernelname::is_function`: every instantiation and
//! overload of a function is that function, so `stencil<4>` covers the template `stencil`).
//! [`summary`] is the line `tune` prints for them.

use runner::Spec;
use std::path::{Path, PathBuf};

/// A kernel no spec covers.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Uncovered {
    /// The file, as the caller gave it.
    pub file: PathBuf,
    /// The kernel's qualified name (`ns::k`), once per function (overloads are one kernel).
    pub kernel: String,
}

/// Whether two paths name the same file: equal once made absolute and lexically normalised,
/// or once canonicalised (symbolic links resolved) when both exist.
fn same_file(a: &Path, b: &Path) -> bool {
    let norm = |p: &Path| std::path::absolute(p).map(|p| frontend::tu::normalize(&p));
    match (norm(a), norm(b)) {
        (Ok(x), Ok(y)) if x == y => return true,
        _ => {}
    }
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}

/// The kernels of `kernels` (each a file and a kernel's qualified name, as the tuner's
/// discovery lists them; paths relative to the working directory or absolute, like the specs'
/// sources) that none of `specs` covers, in the order given, each once.
pub fn kernels_without_spec<P, K>(
    kernels: impl IntoIterator<Item = (P, K)>,
    specs: &[Spec],
) -> Vec<Uncovered>
where
    P: AsRef<Path>,
    K: AsRef<str>,
{
    let mut out: Vec<Uncovered> = Vec::new();
    for (file, kernel) in kernels {
        let (file, kernel) = (file.as_ref(), kernel.as_ref());
        let covered = specs
            .iter()
            .any(|s| kernelname::is_function(&s.kernel, kernel) && same_file(&s.source, file));
        if covered {
            continue;
        }
        let u = Uncovered {
            file: file.to_path_buf(),
            kernel: kernel.to_string(),
        };
        if !out.contains(&u) {
            out.push(u);
        }
    }
    out
}

/// The one line `tune` prints for the kernels no spec covers, `None` when there are none:
/// `3 kernels without a spec: `hip-unroll spec new` writes one (a.cu: k1, k2; b.cu: k3)`, the
/// first `shown` kernels named (by file, in the order given) and the rest counted.
pub fn summary(uncovered: &[Uncovered], shown: usize) -> Option<String> {
    let n = uncovered.len();
    if n == 0 {
        return None;
    }
    let mut groups: Vec<(String, Vec<&str>)> = Vec::new();
    for u in uncovered.iter().take(shown) {
        let file = u.file.display().to_string();
        match groups.iter_mut().find(|(f, _)| *f == file) {
            Some((_, ks)) => ks.push(&u.kernel),
            None => groups.push((file, vec![&u.kernel])),
        }
    }
    let mut named = groups
        .iter()
        .map(|(f, ks)| format!("{f}: {}", ks.join(", ")))
        .collect::<Vec<_>>()
        .join("; ");
    if n > shown {
        if !named.is_empty() {
            named.push_str("; ");
        }
        named.push_str(&format!("{} more", n - shown));
    }
    Some(format!(
        "{n} kernel{} without a spec: `hip-unroll spec new` writes one ({named})",
        if n == 1 { "" } else { "s" }
    ))
}

/// The kernels (`__global__` functions) of a parsed file, as [`kernels_without_spec`] takes
/// them: the file and each kernel's qualified name, in source order.
pub fn kernels_of<'a>(
    path: &'a Path,
    file: &'a frontend::SourceFile,
) -> impl Iterator<Item = (&'a Path, &'a str)> {
    file.functions
        .iter()
        .filter(|f| f.kind == frontend::FunctionKind::Kernel)
        .map(move |f| (path, f.qualified_name.as_str()))
}
