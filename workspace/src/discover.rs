//! Which files `check` analyses: explicit files, and the source files of directory walks (the
//! `ignore` crate's parallel walker, honouring ignore files unless told not to).

use crate::FileError;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Extensions of the files a directory walk picks up, compared without case (a file named
/// explicitly is always checked; `[check] extend-include` adds patterns): CUDA and HIP sources
/// and headers, the usual C++ source and header extensions. Not `.c` (C has no kernels) nor
/// `.inc` (often not C++ at all).
pub const EXTENSIONS: [&str; 18] = [
    "cu", "cuh", "hip", "cpp", "cc", "cxx", "c++", "cp", "h", "hh", "hpp", "hxx", "h++", "inl",
    "ipp", "tpp", "tcc", "txx",
];

/// Whether a walk picks `path` up by its extension.
pub fn has_source_extension(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| EXTENSIONS.iter().any(|x| x.eq_ignore_ascii_case(e)))
}

/// Every file to check, with whether it was named explicitly, and the walked files without a
/// source extension (which `extend-include` may still take). Missing paths and walk errors go
/// to `errors` (the other paths are still checked).
pub(crate) fn collect_files(
    paths: &[PathBuf],
    no_ignore: bool,
    errors: &mut Vec<FileError>,
) -> (Vec<(PathBuf, bool)>, Vec<PathBuf>) {
    let mut files = Vec::new();
    let mut dirs = Vec::new();
    for p in paths {
        match std::fs::metadata(p) {
            Ok(m) if m.is_dir() => dirs.push(p.clone()),
            Ok(_) => files.push((p.clone(), true)),
            Err(e) => errors.push(FileError::Missing {
                path: p.clone(),
                reason: fsio::reason(&e),
            }),
        }
    }
    let Some((first, rest)) = dirs.split_first() else {
        return (files, Vec::new());
    };
    let mut builder = ignore::WalkBuilder::new(first);
    for d in rest {
        builder.add(d);
    }
    builder
        .hidden(true)
        .parents(!no_ignore)
        .ignore(!no_ignore)
        .git_ignore(!no_ignore)
        .git_global(!no_ignore)
        .git_exclude(!no_ignore)
        .require_git(false)
        .threads(
            std::thread::available_parallelism()
                .map_or(2, |n| n.get())
                .min(8),
        );
    let found: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
    let others: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
    let walk_errors: Mutex<Vec<String>> = Mutex::new(Vec::new());
    builder.build_parallel().run(|| {
        let found = &found;
        let others = &others;
        let walk_errors = &walk_errors;
        Box::new(move |entry| {
            match entry {
                Ok(e) => {
                    if e.file_type().is_some_and(|t| t.is_file()) {
                        let list = if has_source_extension(e.path()) {
                            found
                        } else {
                            others
                        };
                        list.lock()
                            .unwrap_or_else(|p| p.into_inner())
                            .push(e.into_path());
                    }
                }
                Err(err) => walk_errors
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push(err.to_string()),
            }
            ignore::WalkState::Continue
        })
    });
    let mut walk_errors = walk_errors.into_inner().unwrap_or_else(|p| p.into_inner());
    walk_errors.sort();
    errors.extend(walk_errors.into_iter().map(FileError::Walk));
    files.extend(
        found
            .into_inner()
            .unwrap_or_else(|p| p.into_inner())
            .into_iter()
            .map(|p| (p, false)),
    );
    let mut others = others.into_inner().unwrap_or_else(|p| p.into_inner());
    others.sort();
    (files, others)
}

/// The path as reports show it: as given, without leading `./`.
pub fn display_path(p: &Path) -> String {
    let clean: PathBuf = p
        .components()
        .filter(|c| !matches!(c, std::path::Component::CurDir))
        .collect();
    if clean.as_os_str().is_empty() {
        return ".".into();
    }
    clean.to_string_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_path_strips_dot_prefix() {
        assert_eq!(display_path(Path::new("./a/b.cu")), "a/b.cu");
        assert_eq!(display_path(Path::new("././b.cu")), "b.cu");
        assert_eq!(display_path(Path::new("a/./b.cu")), "a/b.cu");
        assert_eq!(display_path(Path::new(".")), ".");
        assert_eq!(display_path(Path::new("/abs/x.cu")), "/abs/x.cu");
    }

    #[test]
    fn extensions() {
        for ok in [
            "a.cu", "a.cuh", "a.hip", "a.cpp", "a.hpp", "a.h", "A.CU", "a.cc", "a.cxx", "a.c++",
            "a.hh", "a.hxx", "a.inl", "a.ipp", "a.tpp", "x.CC",
        ] {
            assert!(has_source_extension(Path::new(ok)), "{ok}");
        }
        for no in [
            "a.c", "a.C", "a.txt", "cu", "a.cu.bak", "a", "a.inc", "a.py",
        ] {
            assert!(!has_source_extension(Path::new(no)), "{no}");
        }
    }

    #[test]
    fn walk_splits_sources_from_others_and_reports_missing_paths() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("k.cu"), "").unwrap();
        std::fs::write(dir.path().join("notes.txt"), "").unwrap();
        let mut errors = Vec::new();
        let (found, others) = collect_files(
            &[dir.path().to_path_buf(), dir.path().join("gone.cu")],
            false,
            &mut errors,
        );
        assert_eq!(found, vec![(dir.path().join("k.cu"), false)]);
        assert_eq!(others, vec![dir.path().join("notes.txt")]);
        assert_eq!(errors.len(), 1);
        let e = errors[0].to_string();
        assert!(e.contains("gone.cu") && e.contains("no such file"), "{e}");
    }
}
