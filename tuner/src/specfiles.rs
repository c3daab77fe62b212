//! Which launch specs a `bench` tune uses: each `--spec` (or `[tune] specs` entry, relative to
//! the config file) is a file, a directory (every `*.toml` under it), or a glob
//! (`bench/*.toml`, `testdata/bench/**/*.toml`: `*` and `?` within a path component, `**` any
//! number of components). Matches are sorted and each spec is taken once, in the order the
//! patterns are given.

use std::path::{Component, Path, PathBuf};

/// Why the specs cannot be listed.
#[derive(Debug, thiserror::Error)]
pub enum SpecsError {
    #[error("spec `{0}`: no such file or directory")]
    Missing(String),
    #[error("spec pattern `{0}` matches no file")]
    NoMatch(String),
    #[error("spec pattern `{pattern}` is not a valid glob: {reason}")]
    BadGlob { pattern: String, reason: String },
    #[error("{path}: {reason}")]
    Io { path: String, reason: String },
}

/// A spec as the report names it (`name`: the path relative to `cwd` when it lies there, as
/// given otherwise) and its absolute path.
pub type SpecPath = (String, PathBuf);

fn is_glob(p: &str) -> bool {
    p.contains(['*', '?', '['])
}

/// The specs of `patterns`, relative to `base` (the working directory, or the config file's
/// directory); names relative to `cwd`.
pub fn expand(patterns: &[String], base: &Path, cwd: &Path) -> Result<Vec<SpecPath>, SpecsError> {
    let mut out: Vec<SpecPath> = Vec::new();
    for pat in patterns {
        let found = if is_glob(pat) {
            glob(pat, base)?
        } else {
            let p = absolute(Path::new(pat), base);
            if p.is_dir() {
                let mut v = Vec::new();
                walk(&p, &mut v)?;
                v.retain(|f| f.extension().is_some_and(|e| e == "toml"));
                if v.is_empty() {
                    return Err(SpecsError::NoMatch(pat.clone()));
                }
                v
            } else if p.exists() {
                vec![p]
            } else {
                return Err(SpecsError::Missing(pat.clone()));
            }
        };
        for p in found {
            if out.iter().all(|(_, q)| q != &p) {
                out.push((name(&p, cwd), p));
            }
        }
    }
    Ok(out)
}

fn absolute(p: &Path, base: &Path) -> PathBuf {
    let joined = if p.is_absolute() {
        p.to_path_buf()
    } else {
        base.join(p)
    };
    // Lexically normal (`./a/../b` -> `b`), so that one file has one name.
    let mut out = PathBuf::new();
    for c in joined.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

fn name(p: &Path, cwd: &Path) -> String {
    p.strip_prefix(cwd)
        .map(|r| r.display().to_string())
        .unwrap_or_else(|_| p.display().to_string())
}

/// Every file under `dir`, sorted.
fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), SpecsError> {
    let io = |e: std::io::Error| SpecsError::Io {
        path: dir.display().to_string(),
        reason: e.to_string(),
    };
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(io)?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()
        .map_err(io)?;
    entries.sort();
    for e in entries {
        if e.is_dir() {
            walk(&e, out)?;
        } else {
            out.push(e);
        }
    }
    Ok(())
}

/// The files matching the glob `pat` (relative to `base`), sorted.
fn glob(pat: &str, base: &Path) -> Result<Vec<PathBuf>, SpecsError> {
    let full = absolute(Path::new(pat), base);
    // Walk from the longest leading part without a wildcard.
    let mut root = PathBuf::new();
    for c in full.components() {
        if is_glob(&c.as_os_str().to_string_lossy()) {
            break;
        }
        root.push(c);
    }
    let matcher = globset::GlobBuilder::new(&full.to_string_lossy())
        .literal_separator(true)
        .build()
        .map_err(|e| SpecsError::BadGlob {
            pattern: pat.to_string(),
            reason: e.kind().to_string(),
        })?
        .compile_matcher();
    let mut all = Vec::new();
    if root.is_dir() {
        walk(&root, &mut all)?;
    }
    all.retain(|p| matcher.is_match(p));
    if all.is_empty() {
        return Err(SpecsError::NoMatch(pat.to_string()));
    }
    Ok(all)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_directories_and_globs_in_order_each_once() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path();
        for f in ["a/k1.toml", "a/k2.toml", "a/notes.txt", "b/c/k3.toml"] {
            std::fs::create_dir_all(d.join(f).parent().unwrap()).unwrap();
            std::fs::write(d.join(f), "").unwrap();
        }
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let names = |r: Vec<SpecPath>| r.into_iter().map(|(n, _)| n).collect::<Vec<_>>();
        assert_eq!(
            names(expand(&s(&["a/*.toml"]), d, d).unwrap()),
            ["a/k1.toml", "a/k2.toml"]
        );
        assert_eq!(
            names(expand(&s(&["b/c/k3.toml", "**/*.toml"]), d, d).unwrap()),
            ["b/c/k3.toml", "a/k1.toml", "a/k2.toml"]
        );
        assert_eq!(
            names(expand(&s(&["./b", "a/../a/k2.toml"]), d, d).unwrap()),
            ["b/c/k3.toml", "a/k2.toml"]
        );
        // Relative to the config's directory, named from the working directory.
        assert_eq!(
            names(expand(&s(&["*.toml"]), &d.join("a"), d).unwrap()),
            ["a/k1.toml", "a/k2.toml"]
        );
        assert!(matches!(
            expand(&s(&["a/*.json"]), d, d),
            Err(SpecsError::NoMatch(p)) if p == "a/*.json"
        ));
        assert!(matches!(
            expand(&s(&["nope.toml"]), d, d),
            Err(SpecsError::Missing(_))
        ));
        let e = expand(&s(&["a/[.toml"]), d, d).unwrap_err().to_string();
        assert!(!e.contains('\n') && e.contains("a/[.toml"), "{e}");
    }
}
