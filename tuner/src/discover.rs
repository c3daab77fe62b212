//! The tuner's one seam onto the safety policy: lists the loops of PATHS with their verdicts,
//! and builds a variant of a loop or says why not, all through the `pipeline` crate, the policy
//! that `hip-unroll unroll` applies too. Each file is parsed and guarded once
//! ([`pipeline::Source`]); a file the search has rewritten is parsed once more per accepted
//! edit, by the search. No guard, pragma or rewrite decision is taken here: a `guard-blocked`
//! loop is reported `blocked` (with its blockers) and never built; a `user-pragma` or transform
//! refusal comes back as [`Refused`] with the pipeline's stable id.
//!
//! What the tuner adds: the files of PATHS, the kernels per file, and finding a loop of the
//! original file again in a text that earlier accepted edits changed (its keyword's offset
//! mapped through those edits, then its [`LoopLoc`] in the new parse).

use crate::error::{io_err, Error};
use frontend::FunctionKind;
use pipeline::{Edit, LoopId, LoopLoc, Mode, Policy, Source};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Source files the tuner reads.
pub const EXTENSIONS: [&str; 9] = ["cu", "cuh", "hip", "cpp", "cc", "cxx", "h", "hpp", "hh"];

/// One loop of PATHS, as the pipeline sees it.
#[derive(Debug, Clone)]
pub struct LoopInfo {
    /// Path relative to the tree root.
    pub file: PathBuf,
    /// The loop's id (`function:index`, the `id` of `check --format json`).
    pub id: LoopId,
    /// Where it is in the original file's parse.
    pub loc: LoopLoc,
    pub line: u32,
    pub depth: u32,
    /// 0 for a loop with no loop inside, else 1 + the largest height of its inner loops.
    pub height: u32,
    /// The enclosing function's qualified name, and whether it is a kernel.
    pub function: String,
    pub in_kernel: bool,
    /// A guard blocks it (the pipeline's `guard-blocked`): reported, never built.
    pub blocked: bool,
    /// The blocking rules' ids, in id order, each once.
    pub blockers: Vec<String>,
    /// The unroll pragma already on the loop, as `check` prints it (`unroll 4`, `nounroll`).
    pub pragma: Option<String>,
    /// Byte offset of the loop keyword in the original file.
    pub offset: usize,
}

/// One source file of PATHS.
#[derive(Debug, Clone)]
pub struct FileInfo {
    pub rel: PathBuf,
    /// The original content, parsed and guarded once.
    pub source: Arc<Source>,
    pub loops: Vec<LoopInfo>,
    /// Qualified names of the kernels (`__global__`) defined in the file.
    pub kernels: Vec<String>,
    /// What each of those kernels reaches through calls ([`pipeline::Source::kernel_reach`]),
    /// a header's functions under the header's path relative to the tree root when it lies in
    /// the tree (as [`FileInfo::rel`] names files).
    pub reach: Vec<pipeline::Reached>,
}

/// Everything discovery found.
#[derive(Debug, Clone, Default)]
pub struct Discovery {
    pub files: Vec<FileInfo>,
    /// When [`discover`] began: the start of a tune's wall time (its `timing`); `None` for a
    /// discovery made otherwise (the tune then counts from its session's start).
    pub started: Option<std::time::Instant>,
}

/// A kernel of the tree: the file that defines it and its qualified name.
pub type KernelRef = (PathBuf, String);

impl Discovery {
    /// The kernels whose calls reach the function holding `l` (its own kernel when it is in
    /// one), from every file's call graph: a loop of a header helper is reached by the kernels
    /// of every file that includes the header and calls the helper. Sorted, each once.
    pub fn reaching(&self, l: &LoopInfo) -> Vec<KernelRef> {
        let mut out: Vec<KernelRef> = Vec::new();
        for f in &self.files {
            for r in &f.reach {
                let hit = r.functions.iter().any(|(path, name)| {
                    name == &l.function && path.as_deref().unwrap_or(&f.rel) == l.file
                });
                if hit {
                    out.push((f.rel.clone(), r.kernel.clone()));
                }
            }
        }
        out.sort();
        out.dedup();
        out
    }

    pub fn kernels(&self) -> impl Iterator<Item = (&Path, &str)> {
        self.files
            .iter()
            .flat_map(|f| f.kernels.iter().map(move |k| (f.rel.as_path(), k.as_str())))
    }

    pub fn loops(&self) -> impl Iterator<Item = &LoopInfo> {
        self.files.iter().flat_map(|f| f.loops.iter())
    }

    pub fn file(&self, rel: &Path) -> Option<&FileInfo> {
        self.files.iter().find(|f| f.rel == rel)
    }
}

fn has_source_ext(p: &Path) -> bool {
    p.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| EXTENSIONS.contains(&e.to_ascii_lowercase().as_str()))
}

/// Find and analyse the source files of `paths` (files or directories, relative to `root` or
/// absolute inside it). Directories are walked honouring ignore files; `exclude` (the state
/// directory) is skipped. Each file is analysed in its translation unit (`includes`).
pub fn discover(
    root: &Path,
    paths: &[PathBuf],
    exclude: &[PathBuf],
    includes: &pipeline::Includes,
) -> Result<Discovery, Error> {
    let started = std::time::Instant::now();
    let root = std::fs::canonicalize(root).map_err(io_err(root))?;
    let exclude: Vec<PathBuf> = exclude
        .iter()
        .filter_map(|p| std::fs::canonicalize(p).ok())
        .collect();
    let mut found: Vec<PathBuf> = Vec::new();
    for p in paths {
        let abs = if p.is_absolute() {
            p.clone()
        } else {
            root.join(p)
        };
        let abs = std::fs::canonicalize(&abs).map_err(io_err(p))?;
        if !abs.starts_with(&root) {
            return Err(Error::Usage(format!(
                "{} is outside the tree that tune copies ({}); run tune from a directory that contains it",
                p.display(),
                root.display()
            )));
        }
        if abs.is_file() {
            found.push(abs);
            continue;
        }
        let ex = exclude.clone();
        let walker = ignore::WalkBuilder::new(&abs)
            .hidden(false)
            .require_git(false)
            .filter_entry(move |e| e.file_name() != ".git" && !ex.iter().any(|x| e.path() == x))
            .build();
        for entry in walker {
            let entry = entry.map_err(|e| Error::Io {
                path: abs.display().to_string(),
                reason: e.to_string(),
            })?;
            if entry.file_type().is_some_and(|t| t.is_file()) && has_source_ext(entry.path()) {
                found.push(entry.path().to_path_buf());
            }
        }
    }
    found.sort();
    found.dedup();
    let mut files = Vec::new();
    for abs in found {
        let source = fsio::read_source(&abs)?;
        let rel = abs.strip_prefix(&root).expect("under root").to_path_buf();
        if let Some(mut f) = analyse_in(&rel, &abs, source, includes) {
            for r in &mut f.reach {
                for (path, _) in &mut r.functions {
                    if let Some(p) = path.as_mut() {
                        *p = in_tree(&root, p);
                    }
                }
            }
            files.push(f);
        }
    }
    Ok(Discovery {
        files,
        started: Some(started),
    })
}

/// A header's path as the unit found it (the including file's directory, absolute here, or a
/// search directory, relative to the working directory when given so, joined with the name),
/// relative to the tree root when it lies in the tree (as discovery names files), else as
/// found.
fn in_tree(root: &Path, header: &Path) -> PathBuf {
    let abs = std::fs::canonicalize(header).unwrap_or_else(|_| header.to_path_buf());
    match abs.strip_prefix(root) {
        Ok(rel) => rel.to_path_buf(),
        Err(_) => abs,
    }
}

/// Analyse one file alone (no include followed): its GPU loops with their verdicts, and its
/// kernels. `None` for a file with no GPU code.
pub fn analyse(rel: &Path, source: Vec<u8>) -> Option<FileInfo> {
    analyse_in(rel, rel, source, &pipeline::Includes::default())
}

/// [`analyse`] in the file's translation unit: `path` is where it is (its includes are looked
/// for beside it, then in `includes`' directories).
pub fn analyse_in(
    rel: &Path,
    path: &Path,
    source: Vec<u8>,
    includes: &pipeline::Includes,
) -> Option<FileInfo> {
    // (A file may hold device code through a specifier macro of a header it includes,
    // rocPRIM's `ROCPRIM_DEVICE`: as `check` reads it.)
    if !frontend::may_contain_gpu_code(&source)
        && includes.gpu_macro_from_headers(path, &source).is_none()
    {
        return None;
    }
    let source = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        Source::open(path, source, includes)
    }))
    .ok()?;
    let parsed = source.file();
    let loops = source
        .loops()
        .into_iter()
        .map(|l| {
            let f = &parsed.functions[l.loc.function];
            let mut blockers: Vec<String> = l.blockers.iter().map(|b| b.rule.to_string()).collect();
            blockers.dedup();
            LoopInfo {
                file: rel.to_path_buf(),
                id: l.id,
                loc: l.loc,
                line: l.line,
                depth: l.depth,
                height: l.height,
                function: f.qualified_name.clone(),
                in_kernel: l.function_kind == FunctionKind::Kernel,
                blocked: l.verdict == pipeline::Verdict::Blocked,
                blockers,
                pragma: l.pragma.map(|p| p.hint),
                offset: l.offset,
            }
        })
        .collect();
    let kernels = parsed
        .functions
        .iter()
        .filter(|f| f.kind == FunctionKind::Kernel)
        .map(|f| f.qualified_name.clone())
        .collect();
    let reach = source.kernel_reach();
    Some(FileInfo {
        rel: rel.to_path_buf(),
        source: Arc::new(source),
        loops,
        kernels,
        reach,
    })
}

/// Why no variant was built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    /// Stable id: the pipeline's ([`pipeline::Refusal::id`]: `user-pragma`, `guard-blocked`,
    /// a transform's), or `rewritten` (see [`locate`]).
    pub id: String,
    pub message: String,
}

/// A rewritten file.
#[derive(Debug, Clone)]
pub struct Rewrite {
    pub source: Vec<u8>,
    /// The edits on the content the rewrite started from.
    pub edits: Vec<Edit>,
}

/// The loop `lp` (found in the original file) in `current`, the file's content now (the
/// original with earlier accepted edits, whose edit lists are `history`, oldest first): its
/// keyword's offset mapped through every edit, then the loop whose keyword starts there.
/// Refused `rewritten` when an accepted edit replaced it.
pub fn locate(lp: &LoopInfo, current: &Source, history: &[Vec<Edit>]) -> Result<LoopLoc, Refused> {
    let lost = || Refused {
        id: "rewritten".into(),
        message: "an accepted variant of an enclosing or overlapping loop rewrote this loop".into(),
    };
    let mut offset = Some(lp.offset);
    for edits in history {
        offset = offset.and_then(|o| map_offset(o, edits));
    }
    let offset = offset.ok_or_else(lost)?;
    current
        .file()
        .all_loops()
        .find(|(_, f, l)| f.kind != FunctionKind::Host && l.keyword.start == offset)
        .map(|(loc, _, _)| loc)
        .ok_or_else(lost)
}

/// Unroll `lp` (found in the original file) in `current` (see [`locate`]) under the pipeline's
/// default policy: the guard, the author's pragma, then the transform's proof.
pub fn rewrite(
    lp: &LoopInfo,
    current: &Source,
    history: &[Vec<Edit>],
    factor: u32,
    mode: Mode,
) -> Result<Rewrite, Refused> {
    let loc = locate(lp, current, history)?;
    match current.variant(loc, factor, mode, Policy::default()) {
        Ok(v) => Ok(Rewrite {
            source: v.source,
            edits: v.edits,
        }),
        Err(pipeline::Error::Refused { refusal, .. }) => Err(Refused {
            id: refusal.id().to_string(),
            message: refusal.to_string(),
        }),
        Err(e @ pipeline::Error::Lookup(_)) => Err(Refused {
            id: "lookup".into(),
            message: e.to_string(),
        }),
    }
}

pub use frontend::edit::map_offset;

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = r#"
__device__ float helper(const float* a, int n) {
    float s = 0.0f;
    for (int i = 0; i < n; ++i) { s += a[i]; }
    return s;
}
__global__ void k(float* out, const float* in, int n) {
    __shared__ float buf[64];
    for (int j = 0; j < n; ++j) {
        for (int i = 0; i < 4; ++i) { out[j] += in[i]; }
    }
    for (int t = 0; t < n; ++t) {
        buf[threadIdx.x] = in[t];
        __syncthreads();
        out[t] += buf[0];
    }
#pragma unroll 2
    for (int q = 0; q < n; ++q) { out[q] *= 2.0f; }
#pragma nounroll
    for (int r = 0; r < n; ++r) { out[r] += 1.0f; }
}
"#;

    fn info() -> FileInfo {
        analyse(Path::new("k.cu"), SRC.as_bytes().to_vec()).unwrap()
    }

    fn parsed(bytes: &[u8]) -> Source {
        Source::new(bytes.to_vec())
    }

    #[test]
    fn lists_loops_with_verdicts_heights_and_kernels() {
        let f = info();
        let got: Vec<(String, u32, u32, bool, Option<String>)> = f
            .loops
            .iter()
            .map(|l| {
                (
                    l.id.to_string(),
                    l.depth,
                    l.height,
                    l.blocked,
                    l.pragma.clone(),
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![
                ("helper:0".into(), 0, 0, false, None),
                ("k:0".into(), 0, 1, false, None),
                ("k:1".into(), 1, 0, false, None),
                ("k:2".into(), 0, 0, true, None),
                ("k:3".into(), 0, 0, false, Some("unroll 2".into())),
                ("k:4".into(), 0, 0, false, Some("nounroll".into())),
            ]
        );
        assert_eq!(f.loops[3].blockers, vec!["barrier".to_string()]);
        assert_eq!(f.kernels, vec!["k".to_string()]);
        assert!(!f.loops[0].in_kernel && f.loops[1].in_kernel);
        for l in &f.loops {
            assert!(SRC[l.offset..].starts_with("for"), "{}", l.id);
        }
        assert!(analyse(Path::new("host.cpp"), b"int main() { for(;;){} }".to_vec()).is_none());
    }

    #[test]
    fn rewrites_follow_earlier_edits_and_keep_the_pipeline_refusals() {
        let f = info();
        let inner = &f.loops[2];
        let outer = &f.loops[1];
        // Manual x2 of the inner loop first, then the outer loop in the new content.
        let a = rewrite(inner, &f.source, &[], 2, Mode::Manual).unwrap();
        let pa = parsed(&a.source);
        let b = rewrite(outer, &pa, std::slice::from_ref(&a.edits), 4, Mode::Pragma).unwrap();
        let text = String::from_utf8(b.source).unwrap();
        assert!(
            text.contains("#pragma unroll 4\n    for (int j = 0"),
            "{text}"
        );
        // A loop after the edited one maps through the edit; its `#pragma unroll 2` is not an
        // author's decision (the pipeline's policy), so it is rewritten.
        let later = &f.loops[4];
        let c = rewrite(later, &pa, std::slice::from_ref(&a.edits), 8, Mode::Pragma).unwrap();
        let c = String::from_utf8(c.source).unwrap();
        assert!(c.contains("#pragma unroll 8\n    for (int q"), "{c}");
        assert!(!c.contains("#pragma unroll 2"), "{c}");
        // The inner loop is gone once the outer one was rewritten by hand.
        let o = rewrite(outer, &f.source, &[], 2, Mode::Manual).unwrap();
        let e = rewrite(
            inner,
            &parsed(&o.source),
            std::slice::from_ref(&o.edits),
            2,
            Mode::Pragma,
        )
        .unwrap_err();
        assert_eq!(e.id, "rewritten");
        // `#pragma nounroll` is the author's decision.
        let e = rewrite(&f.loops[5], &f.source, &[], 4, Mode::Pragma).unwrap_err();
        assert_eq!(e.id, "user-pragma");
        // The barrier loop is never rewritten.
        let e = rewrite(&f.loops[3], &f.source, &[], 4, Mode::Pragma).unwrap_err();
        assert_eq!(e.id, "guard-blocked");
        // The transform's own refusal comes through with its id.
        let w = analyse(
            Path::new("w.cu"),
            b"__global__ void w(int* p, int n) { int i = 0; while (i < n) { p[i] = 0; ++i; } }"
                .to_vec(),
        )
        .unwrap();
        let e = rewrite(&w.loops[0], &w.source, &[], 2, Mode::Manual).unwrap_err();
        assert_eq!(e.id, "not-a-for-loop");
    }

    /// A helper of a header, called by one kernel of each of two files (once through a macro,
    /// once through a functor-free function pointer), is reached by both; a loop of a kernel
    /// only by its kernel; a helper nobody calls by no kernel.
    #[test]
    fn a_header_helper_is_reached_by_the_kernels_of_every_file_that_calls_it() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path();
        std::fs::write(
            d.join("helper.cuh"),
            "#pragma once\n__device__ float helper(const float* a, int n) {\n  float s = 0;\n  for (int i = 0; i < n; ++i) { s += a[i]; }\n  return s;\n}\n__device__ void unused(float* a) {\n  for (int i = 0; i < 4; ++i) { a[i] = 0; }\n}\n",
        )
        .unwrap();
        std::fs::write(
            d.join("a.cu"),
            "#include \"helper.cuh\"\n#define SUM(a, n) helper(a, n)\n__global__ void ka(float* o, const float* a, int n) {\n  o[0] = SUM(a, n);\n}\ntemplate <int N> __global__ void kt(float* o) {\n  for (int i = 0; i < N; ++i) { o[i] = i; }\n}\ntemplate __global__ void kt<4>(float*);\n",
        )
        .unwrap();
        std::fs::write(
            d.join("b.cu"),
            "#include \"helper.cuh\"\n__global__ void kb(float* o, const float* a, int n) {\n  auto f = &helper;\n  o[0] = f(a, n);\n}\n__global__ void alone(float* o) { o[0] = 1; }\n",
        )
        .unwrap();
        let disc = discover(d, &[".".into()], &[], &pipeline::Includes::default()).unwrap();
        let reach = |id: &str| -> Vec<String> {
            let l = disc
                .loops()
                .find(|l| l.id.to_string() == id)
                .unwrap_or_else(|| panic!("{id}"));
            disc.reaching(l)
                .into_iter()
                .map(|(f, k)| format!("{}:{k}", f.display()))
                .collect()
        };
        assert_eq!(reach("helper:0"), ["a.cu:ka", "b.cu:kb"]);
        assert_eq!(reach("kt:0"), ["a.cu:kt"]);
        assert!(reach("unused:0").is_empty());
    }

    #[test]
    fn map_offset_cases() {
        let ins = Edit::insert(5, b"abc".to_vec());
        assert_eq!(map_offset(5, std::slice::from_ref(&ins)), Some(8));
        assert_eq!(map_offset(4, &[ins]), Some(4));
        let rep = Edit::replace(2..6, b"x".to_vec());
        assert_eq!(map_offset(3, std::slice::from_ref(&rep)), None);
        assert_eq!(map_offset(10, &[rep]), Some(7));
    }
}
