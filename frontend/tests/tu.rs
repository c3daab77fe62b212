//! Translation units: include resolution order, transitive includes, cycles, missing includes,
//! and the run-wide header cache (one parse per header content, shared between threads).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use frontend::tu::{HeaderCache, IncludeKind, Includes, MissingReason, TranslationUnit};

fn write(dir: &Path, rel: &str, text: &str) -> PathBuf {
    let p = dir.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(&p, text).unwrap();
    p
}

fn unit(inc: &Includes, path: &Path) -> TranslationUnit {
    let bytes = std::fs::read(path).unwrap();
    let file = frontend::parse(&bytes);
    inc.resolve(path, &bytes, &file)
}

fn names(u: &TranslationUnit, root: &Path) -> Vec<String> {
    u.headers
        .iter()
        .map(|h| {
            h.path
                .strip_prefix(root)
                .unwrap_or(&h.path)
                .display()
                .to_string()
        })
        .collect()
}

#[test]
fn resolution_order_is_own_directory_then_search_dirs_in_order() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path();
    write(root, "src/a.h", "#define FROM_SRC 1\n");
    write(root, "inc1/a.h", "#define FROM_INC1 1\n");
    write(root, "inc1/b.h", "#define B1 1\n");
    write(root, "inc2/b.h", "#define B2 1\n");
    write(root, "inc2/c.h", "#define C2 1\n");
    let main = write(
        root,
        "src/k.cu",
        "#include \"a.h\"\n#include \"b.h\"\n#include \"c.h\"\n#include <hip/hip_runtime.h>\n",
    );
    let inc = Includes::new(
        vec![root.join("inc1"), root.join("inc2")],
        Arc::new(HeaderCache::new()),
    );
    let u = unit(&inc, &main);
    assert_eq!(names(&u, root), ["src/a.h", "inc1/b.h", "inc2/c.h"]);
    assert!(u.macro_def("FROM_SRC").is_some() && u.macro_def("FROM_INC1").is_none());
    assert!(u.macro_def("B1").is_some() && u.macro_def("B2").is_none());
    assert_eq!(u.system, ["hip/hip_runtime.h"]);
    assert!(u.missing.is_empty());
}

#[test]
fn transitive_includes_cycles_and_guards_each_header_once() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path();
    write(
        root,
        "a.cuh",
        "#ifndef A\n#define A\n#include \"sub/b.cuh\"\n#define IN_A 1\n#endif\n",
    );
    write(
        root,
        "sub/b.cuh",
        "#pragma once\n#include \"../a.cuh\"\n#include \"c.cuh\"\n#include \"../k.cu\"\n",
    );
    write(
        root,
        "sub/c.cuh",
        "#include \"b.cuh\"\n__device__ void c_helper() {}\n",
    );
    let main = write(root, "k.cu", "#include \"a.cuh\"\n#include \"./a.cuh\"\n");
    let inc = Includes::new(Vec::new(), Arc::new(HeaderCache::new()));
    let u = unit(&inc, &main);
    // Depth first in source order; the main file itself and every repeat are skipped.
    assert_eq!(names(&u, root), ["a.cuh", "sub/b.cuh", "sub/c.cuh"]);
    assert!(u.missing.is_empty(), "{:?}", u.missing);
    assert!(u.declares("c_helper") && u.declares("IN_A"));
    // Where each header's text comes in: the first include met, depth first.
    let at: Vec<(Option<usize>, u32)> = u
        .headers
        .iter()
        .map(|h| h.included_at.map(|(from, span)| (from, span.line)).unwrap())
        .collect();
    assert_eq!(at, [(None, 1), (Some(0), 3), (Some(1), 3)]);
}

#[test]
fn missing_includes_name_their_includer_and_the_main_files_line() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path();
    write(root, "h.cuh", "\n\n#include \"gone.cuh\"\n");
    let main = write(
        root,
        "k.cu",
        "// k\n#include \"h.cuh\"\n#include \"nope.h\"\n#include GENERATED_HEADER\n",
    );
    let inc = Includes::new(Vec::new(), Arc::new(HeaderCache::new()));
    let u = unit(&inc, &main);
    let got: Vec<(&str, &MissingReason, u32, u32, usize)> = u
        .missing
        .iter()
        .map(|m| (m.spelled.as_str(), &m.reason, m.line, m.via.line, m.depth))
        .collect();
    assert_eq!(
        got,
        [
            ("gone.cuh", &MissingReason::NotFound, 3, 2, 1),
            ("nope.h", &MissingReason::NotFound, 3, 3, 0),
            ("GENERATED_HEADER", &MissingReason::Computed, 4, 4, 0),
        ]
    );
    assert_eq!(u.missing[0].from, root.join("h.cuh"));
    let includes =
        frontend::tu::scan_includes(&std::fs::read(&main).unwrap(), &frontend::parse(b""));
    assert_eq!(includes[2].kind, IncludeKind::Computed);
}

#[test]
fn a_header_is_parsed_once_per_content_across_files_and_threads() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path();
    let common = "#pragma once\n__device__ inline void sync_all() { __syncthreads(); }\n";
    write(root, "common.cuh", common);
    // The same content at a second path: one parse for both.
    write(root, "copy/common.cuh", common);
    write(root, "other.cuh", "#define OTHER 1\n");
    let mut mains = Vec::new();
    for i in 0..32 {
        let text = if i % 2 == 0 {
            "#include \"common.cuh\"\n#include \"other.cuh\"\n"
        } else {
            "#include \"copy/common.cuh\"\n"
        };
        mains.push(write(root, &format!("k{i}.cu"), text));
    }
    let cache = Arc::new(HeaderCache::new());
    let inc = Includes::new(Vec::new(), cache.clone());
    std::thread::scope(|s| {
        for chunk in mains.chunks(4) {
            let inc = &inc;
            s.spawn(move || {
                for m in chunk {
                    let u = unit(inc, m);
                    assert!(u.declares("sync_all"), "{}", m.display());
                }
            });
        }
    });
    assert_eq!(cache.parses(), 2, "common.cuh (both paths) and other.cuh");
    // 16 units follow two includes, 16 one.
    assert_eq!(cache.lookups(), 48);
}

#[test]
fn oversized_and_unreadable_headers_are_missing_not_fatal() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path();
    std::fs::create_dir_all(root.join("dir.h")).unwrap();
    let main = write(root, "k.cu", "#include \"dir.h\"\n");
    let inc = Includes::new(Vec::new(), Arc::new(HeaderCache::new()));
    let u = unit(&inc, &main);
    // A directory is no header: not found.
    assert_eq!(u.missing.len(), 1);
    assert_eq!(u.missing[0].reason, MissingReason::NotFound);
}

/// An overlay (the language server's open buffers) wins over the disk: its text is parsed
/// instead of the file's, a header only in the overlay is found, and the cache never records
/// an overlay's text by path (the same cache then still reads the disk).
#[test]
fn overlay_texts_win_over_the_disk() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path();
    let main = write(root, "k.cu", "#include \"a.h\"\n#include \"new.h\"\n");
    write(root, "a.h", "#define ON_DISK 1\n");
    let cache = Arc::new(HeaderCache::new());
    let mut overlay = frontend::tu::Overlay::new();
    overlay.insert(
        frontend::tu::normalize(&root.join("a.h")),
        Arc::from(&b"#define IN_BUFFER 1\n"[..]),
    );
    overlay.insert(
        frontend::tu::normalize(&root.join("new.h")),
        Arc::from(&b"#define UNSAVED 1\n"[..]),
    );
    let with = Includes::new(vec![], cache.clone()).with_overlay(Arc::new(overlay));
    let u = unit(&with, &main);
    assert_eq!(names(&u, root), ["a.h", "new.h"]);
    assert!(u.missing.is_empty(), "{:?}", u.missing);
    assert!(u.macro_def("IN_BUFFER").is_some() && u.macro_def("UNSAVED").is_some());
    assert!(u.macro_def("ON_DISK").is_none());
    let plain = Includes::new(vec![], cache);
    let u = unit(&plain, &main);
    assert!(u.macro_def("ON_DISK").is_some() && u.macro_def("IN_BUFFER").is_none());
    assert_eq!(u.missing.len(), 1, "new.h is not on disk");
}

/// The functions of `path` as `Includes::open` gives them: `(name, kind)`.
fn opened(inc: &Includes, path: &Path) -> Vec<(String, frontend::FunctionKind)> {
    let bytes = std::fs::read(path).unwrap();
    let (file, _) = inc.open(path, &bytes);
    file.functions
        .iter()
        .map(|f| (f.name.clone(), f.kind))
        .collect()
}

/// A header with no GPU keyword of its own (its functions are device functions through a
/// macro another header defines) is read for its macros only when a unit includes it, and
/// parsed in full when it is checked itself: which of the two happens first must not change
/// what either sees (issue 26: `check --parse-all` with headers on the command line printed
/// the header's functions in one run and none in the next).
#[test]
fn a_header_checked_itself_is_parsed_in_full_whichever_comes_first() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path();
    write(
        root,
        "defs.cuh",
        "#pragma once\n#define DINLINE __device__ __forceinline__\n",
    );
    let plain = write(
        root,
        "plain.h",
        "#pragma once\n#include \"defs.cuh\"\nDINLINE float sq(float x) { return x * x; }\nDINLINE void all(float* a, int n) { for (int i = 0; i < n; ++i) a[i] = sq(a[i]); }\n",
    );
    let main = write(
        root,
        "k.cu",
        "#include \"plain.h\"\n__global__ void k(float* a, int n) { all(a, n); }\n",
    );
    let dev = frontend::FunctionKind::Device;
    let want = vec![("sq".to_string(), dev), ("all".to_string(), dev)];
    for main_first in [true, false] {
        let inc = Includes::new(Vec::new(), Arc::new(HeaderCache::new()));
        if main_first {
            let u = unit(&inc, &main);
            let h = u.headers.iter().find(|h| h.path.ends_with("plain.h"));
            assert!(
                h.unwrap().parsed.light,
                "a unit reads plain.h for its macros"
            );
        }
        assert_eq!(opened(&inc, &plain), want, "main first: {main_first}");
        let bytes = std::fs::read(&main).unwrap();
        let (_, u) = inc.open(&main, &bytes);
        let h = u.headers.iter().find(|h| h.path.ends_with("plain.h"));
        let fns: Vec<_> = h
            .unwrap()
            .file()
            .functions
            .iter()
            .map(|f| (f.name.clone(), f.kind))
            .collect();
        assert_eq!(fns, want, "in the unit, main first: {main_first}");
    }
}

/// One header used by two units in which one macro name means different things: each unit
/// gets the header parsed with its own meaning, whichever unit comes first.
#[test]
fn one_macro_name_two_meanings_two_parses() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path();
    write(
        root,
        "a/defs.cuh",
        "#pragma once\n#define QUAL __forceinline__\n",
    );
    write(
        root,
        "b/defs.cuh",
        "#pragma once\n#define QUAL __device__ __forceinline__\n",
    );
    write(
        root,
        "common/h.cuh",
        "#pragma once\nQUAL int twice(int x) { return 2 * x; }\n",
    );
    let text = "#include \"defs.cuh\"\n#include \"h.cuh\"\n";
    let a = write(root, "a/k.cu", text);
    let b = write(root, "b/k.cu", text);
    let kind_in = |inc: &Includes, main: &Path| {
        let bytes = std::fs::read(main).unwrap();
        let (_, u) = inc.open(main, &bytes);
        let h = u
            .headers
            .iter()
            .find(|h| h.path.ends_with("h.cuh"))
            .unwrap();
        assert_eq!(h.file().functions.len(), 1, "{}", main.display());
        h.file().functions[0].kind
    };
    for a_first in [true, false] {
        let inc = Includes::new(vec![root.join("common")], Arc::new(HeaderCache::new()));
        let (ka, kb) = if a_first {
            let ka = kind_in(&inc, &a);
            (ka, kind_in(&inc, &b))
        } else {
            let kb = kind_in(&inc, &b);
            (kind_in(&inc, &a), kb)
        };
        assert_eq!(kb, frontend::FunctionKind::Device, "a first: {a_first}");
        assert_eq!(ka, frontend::FunctionKind::Host, "a first: {a_first}");
    }
}

/// `-D`/`-U` (issue 26): the command line's macros are a pseudo-header first in every unit,
/// so the guards see them as the compiler does: a specifier macro is elided, a macro body is
/// visible, and `-U` takes an earlier `-D` back.
#[test]
fn command_line_macros_join_every_unit() {
    use frontend::tu::Defines;
    let d = tempfile::tempdir().unwrap();
    let root = d.path();
    let main = write(
        root,
        "k.cu",
        "// k.cu\nDINLINE float sq(float x) { return x * x; }\n__global__ void k(float* a) { for (int i = 0; i < 4; ++i) a[i] = SYNC_THEN(sq(a[i])); }\n",
    );
    let mut defs = Defines::default();
    defs.define("DINLINE=__device__ __forceinline__").unwrap();
    defs.define("SYNC_THEN(x)=(__syncthreads(), x)").unwrap();
    defs.define("GONE").unwrap();
    defs.undefine("GONE").unwrap();
    defs.undefine("__HIP_PLATFORM_AMD__").unwrap();
    assert!(defs.define("9bad=1").is_err() && defs.undefine("a-b").is_err());
    assert_eq!(
        defs.flags(),
        [
            "-DDINLINE=__device__ __forceinline__",
            "-DSYNC_THEN(x)=(__syncthreads(), x)",
            "-DGONE=1",
            "-UGONE",
            "-U__HIP_PLATFORM_AMD__"
        ]
    );
    let inc = Includes::new(Vec::new(), Arc::new(HeaderCache::new())).with_defines(&defs);
    let bytes = std::fs::read(&main).unwrap();
    let (file, u) = inc.open(&main, &bytes);
    assert_eq!(u.headers[0].path, Path::new(frontend::tu::COMMAND_LINE));
    let sq = file.functions.iter().find(|f| f.name == "sq").unwrap();
    assert_eq!(sq.kind, frontend::FunctionKind::Device);
    assert!(
        sq.unseen_specifiers.is_empty(),
        "{:?}",
        sq.unseen_specifiers
    );
    let m = u.macro_def("SYNC_THEN").unwrap();
    assert_eq!(m.params.as_deref(), Some(&["x".to_string()][..]));
    assert!(m.body.contains("__syncthreads"));
    assert!(u.macro_def("GONE").is_none());
    assert_eq!(u.undefined, ["GONE", "__HIP_PLATFORM_AMD__"]);
    // Without them, the file alone.
    let plain = Includes::new(Vec::new(), Arc::new(HeaderCache::new()));
    let (file, u) = plain.open(&main, &bytes);
    assert!(u.headers.is_empty() && u.undefined.is_empty());
    // `DINLINE` is then a specifier macro defined nowhere: the function is still read (as
    // `__device__`), carrying the name it could not see.
    let sq = file.functions.iter().find(|f| f.name == "sq").unwrap();
    assert_eq!(sq.unseen_specifiers, ["DINLINE"]);
}

#[test]
fn macros_from_compiler_flags() {
    use frontend::tu::Defines;
    let words = "hipcc -DA -D B=2 -UC -U D -DE(x)=x -O3 -D".split_whitespace();
    assert_eq!(
        Defines::from_flags(words).flags(),
        ["-DA=1", "-DB=2", "-UC", "-UD", "-DE(x)=x"]
    );
}

/// The command line's pseudo-header comes first: the include sites of the headers after it
/// still name their including header.
#[test]
fn include_sites_survive_the_command_line_header() {
    use frontend::tu::Defines;
    let d = tempfile::tempdir().unwrap();
    let root = d.path();
    write(root, "h1.cuh", "// h1\n#include \"h2.cuh\"\n");
    write(root, "h2.cuh", "#define H2 1\n");
    let main = write(root, "k.cu", "#include \"h1.cuh\"\n");
    let mut defs = Defines::default();
    defs.define("X=1").unwrap();
    let inc = Includes::new(Vec::new(), Arc::new(HeaderCache::new())).with_defines(&defs);
    let u = unit(&inc, &main);
    assert_eq!(names(&u, root).len(), 3);
    assert_eq!(u.headers[0].included_at, None);
    let at = |i: usize| u.headers[i].included_at.map(|(f, s)| (f, s.line));
    assert_eq!((at(1), at(2)), (Some((None, 1)), Some((Some(1), 2))));
}

/// A file whose plain parse (the unit's `IFC`, `#define IFC constexpr`, and `ATTR_`, empty,
/// unknown) recovers a function named `ATTR_` and loses the loop after it (as rocPRIM's `if
/// ROCPRIM_IF_CONSTEXPR(x)` did before one unknown name between `if` and `(` was skipped
/// without the unit): the parse with the unit's macros has fewer functions but more loops and
/// fewer errors, and is the one kept (it was dropped for finding fewer functions: 16 of
/// rocPRIM's loops lost).
#[test]
fn a_parse_with_fewer_functions_but_more_loops_and_fewer_errors_is_kept() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path();
    write(
        root,
        "cfg.cuh",
        "#pragma once\n#define DEV __device__\n#define IFC constexpr\n#define ATTR_\n",
    );
    let main = write(
        root,
        "k.cuh",
        "#include \"cfg.cuh\"\nstruct H {\n  template<bool F, bool G>\n  DEV void run(int* a, int n) {\n    if IFC ATTR_(F)\n    {\n      if IFC ATTR_(G) { a[0] = 1; } else { a[1] = 1; }\n    }\n    else\n    {\n      const int o = 3;\n      if IFC ATTR_(G) { a[2] = o; }\n    }\n    for (int i = 0; i < n; ++i) a[i] = 0;\n  }\n};\n",
    );
    let bytes = std::fs::read(&main).unwrap();
    let plain = frontend::parse(&bytes);
    assert!(
        plain.functions.len() > 1 && plain.functions.iter().all(|f| f.loops.is_empty()),
        "the plain parse recovers a spurious function and loses the loop: {:?}",
        plain
            .functions
            .iter()
            .map(|f| &f.qualified_name)
            .collect::<Vec<_>>()
    );
    let inc = Includes::new(Vec::new(), Arc::new(HeaderCache::new()));
    let (file, _) = inc.open(&main, &bytes);
    let got: Vec<(&str, usize)> = file
        .functions
        .iter()
        .map(|f| (f.qualified_name.as_str(), f.loops.len()))
        .collect();
    assert_eq!(got, [("H::run", 1)]);
    assert!(file.parse_errors.len() < plain.parse_errors.len());
}

/// Namespaces opened and closed by macros of a header (`BEGIN_NS` is `namespace lib {`, and
/// an ABI macro opens an inline namespace through another macro): the main file's functions
/// and those of a header that uses the macros are qualified as the expansion puts them, with
/// the inline namespace left out as qualified calls leave it out; the same whichever file is
/// opened first.
#[test]
fn namespace_macros_of_a_header_qualify_what_follows_them() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path();
    write(
        root,
        "cfg.cuh",
        "#pragma once\n#define BEGIN_NS \\\n  namespace lib {\n#define END_NS } /* lib */\n#define ABI v3\n#define ABI_BEGIN inline namespace ABI {\n#define BEGIN_NS2 namespace lib2 { ABI_BEGIN\n#define END_NS2 } }\n",
    );
    write(
        root,
        "ops.cuh",
        "#pragma once\n#include \"cfg.cuh\"\nBEGIN_NS\nnamespace detail {\n__device__ void sync() { __syncthreads(); }\n}\nEND_NS\n",
    );
    let main = write(
        root,
        "k.cu",
        "#include \"ops.cuh\"\nBEGIN_NS2\n__device__ void step(float* a) { a[0] = 0.f; }\nEND_NS2\n__global__ void k(float* a) { lib2::step(a); lib::detail::sync(); }\n",
    );
    for main_first in [true, false] {
        let inc = Includes::new(Vec::new(), Arc::new(HeaderCache::new()));
        let ops = root.join("ops.cuh");
        let qualified = |path: &Path| {
            let bytes = std::fs::read(path).unwrap();
            let (file, u) = inc.open(path, &bytes);
            let mut names: Vec<String> = file
                .functions
                .iter()
                .map(|f| f.qualified_name.clone())
                .collect();
            for h in &u.headers {
                names.extend(h.file().functions.iter().map(|f| f.qualified_name.clone()));
            }
            names
        };
        let (m, o) = if main_first {
            let m = qualified(&main);
            (m, qualified(&ops))
        } else {
            let o = qualified(&ops);
            (qualified(&main), o)
        };
        assert_eq!(
            m,
            ["lib2::step", "k", "lib::detail::sync"],
            "main first: {main_first}"
        );
        assert_eq!(o, ["lib::detail::sync"], "main first: {main_first}");
    }
}
