//! frontend: parses HIP/CUDA sources with tree-sitter-cuda and lowers them into the typed IR.
//!
//! Entry point: [`parse`]. Parsing never fails: syntax errors become [`ir::ParseError`]s and
//! the lowering carries on around them. Raw tree-sitter nodes never leave this crate.

pub mod builtins;
mod bulk;
pub mod cond;
pub mod constctx;
mod declarator;
pub mod edit;
mod elide;
mod expand;
mod header;
mod id;
pub mod identity;
pub mod ints;
pub mod ir;
mod kinds;
pub mod known;
pub mod lex;
mod lower;
mod macros;
mod node;
mod postpass;
mod pragma;
mod recover;
mod scan;
pub mod trip;
pub mod tu;
pub mod types;

use std::cell::RefCell;
use std::collections::HashMap;

pub use elide::{namespace_macros, specifier_macros, unit_macros, NamespaceMacro, SpecifierMacro};

pub use ir::*;
pub use trip::trip_count;

struct ThreadParser {
    parser: tree_sitter::Parser,
    kinds: kinds::Kinds,
}

thread_local! {
    static PARSER: RefCell<Option<ThreadParser>> = const { RefCell::new(None) };
}

/// Makes tree-sitter allocate with mimalloc instead of the C library's malloc: about 5% fewer
/// instructions for a parse of HIP sources (tree-sitter allocates a node per token). Pair it with
/// `#[global_allocator] static A: mimalloc::MiMalloc = mimalloc::MiMalloc;` in the binary.
///
/// # Safety
/// Call it first thing in `main`, before any tree-sitter object exists in the process (memory
/// tree-sitter allocated with one allocator must not be freed with the other). Later calls do
/// nothing.
pub unsafe fn use_mimalloc_for_tree_sitter() {
    use std::ffi::c_void;
    unsafe extern "C" fn malloc(size: usize) -> *mut c_void {
        unsafe { libmimalloc_sys::mi_malloc(size) }
    }
    unsafe extern "C" fn calloc(n: usize, size: usize) -> *mut c_void {
        match n.checked_mul(size) {
            Some(total) => unsafe { libmimalloc_sys::mi_zalloc(total) },
            None => std::ptr::null_mut(),
        }
    }
    unsafe extern "C" fn realloc(p: *mut c_void, size: usize) -> *mut c_void {
        unsafe { libmimalloc_sys::mi_realloc(p, size) }
    }
    unsafe extern "C" fn free(p: *mut c_void) {
        unsafe { libmimalloc_sys::mi_free(p) }
    }
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| unsafe {
        tree_sitter::set_allocator(Some(malloc), Some(calloc), Some(realloc), Some(free))
    });
}

/// The qualifiers that make a function GPU code.
const GPU_QUALIFIERS: [&[u8]; 3] = [b"__global__", b"__device__", b"__launch_bounds__"];

/// Specifier macros of libraries whose headers a kernel repository uses without shipping them
/// (CUTLASS, CuTe: `CUTLASS_DEVICE void f()`), so that no file of the run defines them: a file
/// that uses one holds device code.
pub const LIBRARY_GPU_SPECIFIERS: [&str; 5] = [
    "CUTLASS_DEVICE",
    "CUTLASS_HOST_DEVICE",
    "CUTLASS_GLOBAL",
    "CUTE_DEVICE",
    "CUTE_HOST_DEVICE",
];

/// True when `source` may hold kernel or `__device__` code: it mentions `__global__`,
/// `__device__` or `__launch_bounds__` (also inside a `#define`, which is how macro-qualified
/// kernels of the same file get their qualifier), or one of [`LIBRARY_GPU_SPECIFIERS`]. A file
/// for which this is false has no function any rule looks at unless it uses a specifier macro
/// defined elsewhere ([`gpu_specifier_defines`] finds those), so a caller may skip parsing it
/// (its parse errors are then unknown).
pub fn may_contain_gpu_code(source: &[u8]) -> bool {
    GPU_QUALIFIERS
        .iter()
        .copied()
        .chain(LIBRARY_GPU_SPECIFIERS.iter().map(|n| n.as_bytes()))
        .any(|needle| memchr::memmem::find(source, needle).is_some())
}

/// The names of the `#define`s of `source` whose replacement list holds a GPU qualifier
/// (`#define DS_D_INLINE __device__ __forceinline__`, `#define KERNEL(n) __global__ void n()`),
/// in the order written. A file that uses one of these names holds device code even where it
/// does not include the header that defines it (a unit built with `-include`, or a header
/// included by its includer): a directory check learns them from every file of the run.
pub fn gpu_specifier_defines(source: &[u8]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    if !GPU_QUALIFIERS
        .iter()
        .any(|q| memchr::memmem::find(source, q).is_some())
    {
        return out;
    }
    // The directive being read: after `#define` (no name yet), or its name and whether its
    // replacement list holds a qualifier so far.
    enum At {
        Outside,
        Define,
        Body(std::ops::Range<usize>, bool),
    }
    let mut at = At::Outside;
    let mut prev_end = 0;
    let mut finish = |at: &mut At| {
        if let At::Body(name, true) = std::mem::replace(at, At::Outside) {
            let name = String::from_utf8_lossy(&source[name]).into_owned();
            if !out.contains(&name) {
                out.push(name);
            }
        }
    };
    lex::scan(source, 0..source.len(), |kind, r| {
        // A directive ends at a newline that no backslash continues (the lexer skips those).
        if !matches!(at, At::Outside) && ends_line(&source[prev_end..r.start]) {
            finish(&mut at);
        }
        prev_end = r.end;
        at = match (std::mem::replace(&mut at, At::Outside), kind) {
            (_, lex::Kind::Directive) => {
                let word = source[r].trim_ascii_start();
                let word = word.strip_prefix(b"#").unwrap_or(word).trim_ascii_start();
                if word == b"define" {
                    At::Define
                } else {
                    At::Outside
                }
            }
            (At::Define, lex::Kind::Ident) => At::Body(r, false),
            (At::Body(name, found), lex::Kind::Ident) => {
                let q = GPU_QUALIFIERS.contains(&&source[r]);
                At::Body(name, found || q)
            }
            (At::Body(name, found), _) => At::Body(name, found),
            _ => At::Outside,
        };
    });
    finish(&mut at);
    out
}

/// Whether the text between two tokens holds a newline that no backslash continues.
fn ends_line(gap: &[u8]) -> bool {
    memchr::memchr_iter(b'\n', gap).any(|nl| {
        let before = gap[..nl].iter().rposition(|&b| b != b'\r');
        before.is_none_or(|p| gap[p] != b'\\')
    })
}

/// `ALL_CAPS` spelling (one capital letter at least; capitals, digits and `_` only): how
/// macros are spelt.
pub fn spelt_as_macro(name: &str) -> bool {
    name.bytes().any(|b| b.is_ascii_uppercase())
        && name
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

/// A name written in capitals (`KERNEL_ARGS`, `__VA_ARGS__`), taken for a macro's; not a
/// single letter (`T`, `N`: how template parameters are named).
pub fn macro_like(name: &str) -> bool {
    name.len() >= 2 && spelt_as_macro(name)
}

/// Parse `source` (any bytes; invalid UTF-8 is tolerated) into the IR.
///
/// Uses one tree-sitter parser per thread (created on first use) and a single walk over the
/// syntax tree. Never panics on malformed input.
pub fn parse(source: &[u8]) -> SourceFile {
    parse_with(source, &HashMap::new())
}

/// `source` parsed with `plan`'s ranges skipped (the whole text when that fails: the plan is
/// then empty).
fn parse_planned(
    parser: &mut tree_sitter::Parser,
    source: &[u8],
    plan: elide::Plan,
) -> (Option<tree_sitter::Tree>, elide::Plan) {
    let bulk = bulk::exclusions(source);
    let ranges = if bulk.is_empty() {
        plan.included_ranges(source)
    } else {
        // Long flat expressions (`bulk.rs`) are left out of the parse with the elided text.
        let mut skip: Vec<std::ops::Range<usize>> = plan.skipped();
        skip.extend(bulk);
        skip.sort_by_key(|r| (r.start, r.end));
        let mut joined: Vec<std::ops::Range<usize>> = Vec::with_capacity(skip.len());
        for r in skip {
            match joined.last_mut() {
                Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
                _ => joined.push(r),
            }
        }
        bulk::included(source, &joined)
    };
    if ranges.is_empty() {
        return (parser.parse(source, None), plan);
    }
    let set = parser.set_included_ranges(&ranges).is_ok();
    let tree = parser.parse(source, None);
    // The parser is reused for the next file: back to the whole text.
    let _ = parser.set_included_ranges(&[]);
    if set {
        (tree, plan)
    } else {
        (parser.parse(source, None), elide::Plan::default())
    }
}

/// [`parse`], with the specifier macros defined outside `source` (in the headers it includes;
/// see [`specifier_macros`]): their uses are skipped by the parse like the file's own.
pub fn parse_with(source: &[u8], outer: &HashMap<String, SpecifierMacro>) -> SourceFile {
    parse_in_unit(source, outer, &HashMap::new())
}

/// [`parse_with`], with the namespace macros defined outside `source` too (see
/// [`namespace_macros`]): a use of one written alone at namespace scope
/// (`BEGIN_ROCPRIM_NAMESPACE`) opens or closes its namespaces for what follows.
pub fn parse_in_unit(
    source: &[u8],
    outer: &HashMap<String, SpecifierMacro>,
    namespaces: &HashMap<String, NamespaceMacro>,
) -> SourceFile {
    // Host functions' bodies are skipped by the parse (`scan`'s `HostBody`: the lowering
    // never reads them, and they are a quarter to a third of a CUDA file's bytes). What the tokens
    // took for a host function must be one for the lowering too (a host function, its body
    // the skipped one); where it is not, the file is parsed again whole.
    let (file, host) = parse_once(source, outer, namespaces, true);
    if host.is_empty() || host_bodies_hold(&file, &host) {
        return file;
    }
    parse_once(source, outer, namespaces, false).0
}

/// True when every range of `host` lies between the braces of a host function's body of
/// `file` (a function defined where it is written, not recovered from an error).
fn host_bodies_hold(file: &SourceFile, host: &[std::ops::Range<usize>]) -> bool {
    let bodies: std::collections::HashSet<(usize, usize)> = file
        .functions
        .iter()
        .filter(|f| f.kind == FunctionKind::Host && !f.recovered && f.expansion.is_none())
        .map(|f| (f.body.start, f.body.end))
        .collect();
    host.iter()
        .all(|r| r.start > 0 && bodies.contains(&(r.start - 1, r.end + 1)))
}

/// [`parse_with`]'s one parse and lowering, skipping host bodies or not; with the host bodies
/// it skipped.
fn parse_once(
    source: &[u8],
    outer: &HashMap<String, SpecifierMacro>,
    namespaces: &HashMap<String, NamespaceMacro>,
    skip_host: bool,
) -> (SourceFile, Vec<std::ops::Range<usize>>) {
    PARSER.with(|cell| {
        let mut slot = cell.borrow_mut();
        let tp = slot.get_or_insert_with(|| {
            let lang: tree_sitter::Language = tree_sitter_cuda::LANGUAGE.into();
            let mut parser = tree_sitter::Parser::new();
            parser
                .set_language(&lang)
                .expect("tree-sitter-cuda is ABI-compatible with the tree-sitter crate");
            ThreadParser {
                kinds: kinds::Kinds::new(&lang),
                parser,
            }
        });
        let mut plan = elide::plan(source, outer);
        // What the grammar cannot read without the preprocessor (unknown specifier macros,
        // pragma macros, macro calls without `;`, function-defining macros; see
        // `elide::extend`), found from the tokens before the one parse. Each of those is a
        // syntax error for the grammar where it is found (the file would not parse as C++
        // without its macros), so skipping it loses no code the grammar could read.
        let mut more = elide::extend(source, outer, namespaces, &plan);
        if !skip_host {
            more.host_bodies.clear();
        }
        let extended = more.elided.len() > plan.elided.len() || !more.expansions.is_empty();
        // (What was skipped is the returned plan's: a parse that could not take the ranges
        // read the whole text with an empty plan.)
        if !extended {
            plan.host_bodies = std::mem::take(&mut more.host_bodies);
            let (tree, plan) = parse_planned(&mut tp.parser, source, plan);
            let host = plan.host_bodies.clone();
            return match tree {
                Some(tree) => {
                    let mut file = lower::Lowerer::new(source, &tp.kinds, plan).run(&tree);
                    file.conditionals = cond::scan(source, &file.inert);
                    constctx::mark(source, &mut file);
                    (file, host)
                }
                None => (no_tree(&mut tp.parser), Vec::new()),
            };
        }
        let (tree, more) = parse_planned(&mut tp.parser, source, more);
        let host = more.host_bodies.clone();
        let Some(tree) = tree else {
            return (no_tree(&mut tp.parser), Vec::new());
        };
        let lowerer = lower::Lowerer::new(source, &tp.kinds, more.clone_ranges());
        let (mut with, mut parts) = lowerer.run_parts(&tree);
        if !more.expansions.is_empty() {
            let extra = expand::expand(source, &mut tp.parser, &tp.kinds, &more, &with);
            with.parse_errors.extend(extra.parse_errors);
            with.parse_errors.sort_by_key(|e| e.span.start);
            with.inert.extend(extra.inert);
            with.inert.sort_by_key(|s| (s.start, s.end));
            with.inert.dedup_by_key(|s| s.start);
            let mut all: Vec<(Function, identity::IdParts)> =
                with.functions.drain(..).zip(parts).collect();
            all.extend(extra.functions);
            all.sort_by_key(|(f, _)| {
                (
                    f.span.start,
                    f.expansion.as_ref().map_or(0, |e| e.invocation.start),
                )
            });
            (with.functions, parts) = all.into_iter().unzip();
        }
        identity::assign_ids(&mut with.functions, &parts);
        with.conditionals = cond::scan(source, &with.inert);
        constctx::mark(source, &mut with);
        (with, host)
    })
}

/// The file a parse that gave no tree lowers to (cancellation or a time-out, which are never
/// set: the promise that parsing never fails is kept anyway).
fn no_tree(parser: &mut tree_sitter::Parser) -> SourceFile {
    parser.reset();
    SourceFile {
        parse_errors: vec![ParseError {
            span: Span::default(),
            message: "parser gave no tree".into(),
        }],
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `file` as JSON without its parse errors and what the lowering took from inside the
    /// bodies of host functions (their contents: it reads them only when they hold a syntax
    /// error, and never analyses them; the comments and strings there).
    fn without_errors(file: &SourceFile) -> serde_json::Value {
        let host: Vec<Span> = file
            .functions
            .iter()
            .filter(|f| f.kind == FunctionKind::Host)
            .map(|f| f.body)
            .collect();
        let mut v = serde_json::to_value(file).unwrap();
        let o = v.as_object_mut().unwrap();
        o.remove("parse_errors");
        for f in o["functions"].as_array_mut().unwrap() {
            if f["kind"] == "host" {
                let f = f.as_object_mut().unwrap();
                for k in [
                    "loops",
                    "calls",
                    "idents",
                    "decls",
                    "shared",
                    "jumps",
                    "labels",
                    "lambdas",
                    "assigns",
                    "macro_refs",
                    "asm",
                    "const_ops",
                    "address_uses",
                ] {
                    f.remove(k);
                }
            }
        }
        let inert: Vec<&Span> = file
            .inert
            .iter()
            .filter(|s| !host.iter().any(|b| b.start < s.start && s.end <= b.end))
            .collect();
        o["inert"] = serde_json::to_value(inert).unwrap();
        v
    }

    /// Differential: every source of testdata/ parses to the same IR with host bodies skipped
    /// as parsed whole, but for parse errors inside the skipped bodies (never one outside).
    #[test]
    fn skipping_host_bodies_changes_nothing_the_lowering_keeps() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata");
        let mut stack = vec![root];
        let (mut files, mut skipped) = (0, 0);
        while let Some(dir) = stack.pop() {
            for e in std::fs::read_dir(&dir).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    stack.push(p);
                    continue;
                }
                let ext = p.extension().and_then(|e| e.to_str()).unwrap_or("");
                if !matches!(ext, "cu" | "hip" | "cuh" | "h" | "hpp" | "cpp" | "cc") {
                    continue;
                }
                let src = std::fs::read(&p).unwrap();
                let (fast, host) = parse_once(&src, &HashMap::new(), &HashMap::new(), true);
                let whole = parse_once(&src, &HashMap::new(), &HashMap::new(), false).0;
                let got = parse(&src);
                files += 1;
                if !host.is_empty() && host_bodies_hold(&fast, &host) {
                    skipped += 1;
                }
                assert_eq!(
                    without_errors(&got),
                    without_errors(&whole),
                    "{}",
                    p.display()
                );
                for e in &got.parse_errors {
                    assert!(
                        whole
                            .parse_errors
                            .iter()
                            .any(|w| w.span.start == e.span.start),
                        "{}: a parse error the whole parse has not: {e:?}",
                        p.display()
                    );
                }
            }
        }
        assert!(
            files > 200 && skipped >= 8,
            "{files} files, {skipped} with host bodies skipped"
        );
    }

    /// What the tokens take for a host function that the lowering makes a device function (an
    /// unknown macro call before it qualifies it): the file is parsed again whole, and the
    /// function's loop is there.
    #[test]
    fn a_host_body_the_lowering_disowns_is_parsed() {
        let src = b"UNKNOWN_DEF(a, b)\n\nstatic float ref(float* x) {\n  for (int i = 0; i < 4; ++i) x[i] += 1;\n  return x[0];\n}\n\
int main() { for (int i = 0; i < 2; ++i) run(i); return 0; }\n";
        let (fast, host) = parse_once(src, &HashMap::new(), &HashMap::new(), true);
        assert_eq!(
            host.len(),
            2,
            "both bodies look like host code to the tokens"
        );
        assert!(!host_bodies_hold(&fast, &host));
        let file = parse(src);
        let f = file.functions.iter().find(|f| f.name == "ref").unwrap();
        assert_eq!(f.kind, FunctionKind::Device);
        assert_eq!(f.loops.len(), 1);
        // A file of host code alone is not parsed twice: the plain `main` holds.
        let (fast, host) = parse_once(
            b"int main() { return run(); }",
            &HashMap::new(),
            &HashMap::new(),
            true,
        );
        assert_eq!(host.len(), 1);
        assert!(host_bodies_hold(&fast, &host));
    }

    #[test]
    fn gpu_specifier_defines_reads_define_lines() {
        let src = b"#include <x.h>\n\
#define DS_D_INLINE __device__ __forceinline__\n\
  #  define HD \\\r\n  __host__ __device__\n\
#define KERNEL(n) __global__ void n(float* p)\n\
#define PLAIN inline\n\
int x = 1; #define NOT_AT_LINE_START __device__\n\
#define LATER \\\n  int \\\n  __launch_bounds__(256)\n\
#define DS_D_INLINE __device__\n\
#defineX __device__\n";
        assert_eq!(
            gpu_specifier_defines(src),
            ["DS_D_INLINE", "HD", "KERNEL", "LATER"]
        );
        // No GPU qualifier anywhere: nothing (and nothing scanned).
        assert!(gpu_specifier_defines(b"#define A inline\n").is_empty());
        // The replacement list stops at its line's end.
        assert!(gpu_specifier_defines(b"#define A inline\n__device__ void f();\n").is_empty());
    }

    /// One 4 MB line of `#`s (hostile input): each `#` looks back over its blanks only (a
    /// look back to the line's start made this quadratic: hours, not milliseconds).
    #[test]
    fn gpu_specifier_defines_is_linear_in_a_line_of_hashes() {
        let mut src = b"__device__ void f();\n".to_vec();
        src.extend(b"x # ".repeat(1 << 20));
        src.extend(b"\n#define D __device__\n");
        assert_eq!(gpu_specifier_defines(&src), ["D"]);
    }

    #[test]
    fn library_specifiers_count_as_gpu_code() {
        assert!(may_contain_gpu_code(b"CUTLASS_DEVICE void f() {}"));
        assert!(may_contain_gpu_code(b"CUTE_HOST_DEVICE auto g() {}"));
        assert!(!may_contain_gpu_code(b"inline void f() {}"));
    }
}
