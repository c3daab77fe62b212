//! frontend: parses HIP/CUDA sources with tree-sitter-cuda and lowers them into the typed IR.
//!
//! Entry point: [`parse`]. Parsing never fails: syntax errors become [`ir::ParseError`]s and
//! the lowering carries on around them. Raw tree-sitter nodes never leave this crate.

pub mod builtins;
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

pub use elide::{specifier_macros, SpecifierMacro};

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

/// True when `source` may hold kernel or `__device__` code: it mentions `__global__`,
/// `__device__` or `__launch_bounds__` (also inside a `#define`, which is how macro-qualified
/// kernels of the same file get their qualifier). A file for which this is false has no function
/// any rule looks at, so a caller may skip parsing it (its parse errors are then unknown).
pub fn may_contain_gpu_code(source: &[u8]) -> bool {
    [&b"__global__"[..], b"__device__", b"__launch_bounds__"]
        .iter()
        .any(|needle| memchr::memmem::find(source, needle).is_some())
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
    let ranges = plan.included_ranges(source);
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

/// `source` parsed with `more`'s ranges skipped, incrementally from `old` (its parse with
/// `base`'s, a subset of them): the ranges only `more` skips are blanked (newlines kept, so
/// every position stays the original's) and edited into `old`, so that tree-sitter reparses
/// only around them. A full parse with `more`'s ranges when `more` drops one of `base`'s.
fn parse_extended(
    parser: &mut tree_sitter::Parser,
    source: &[u8],
    base: &elide::Plan,
    old: &tree_sitter::Tree,
    more: elide::Plan,
) -> (Option<tree_sitter::Tree>, elide::Plan) {
    let key = |e: &elide::Elided| (e.span.start, e.span.end);
    let base_keys: std::collections::HashSet<(usize, usize)> =
        base.elided.iter().map(key).collect();
    let more_keys: std::collections::HashSet<(usize, usize)> =
        more.elided.iter().map(key).collect();
    if !base_keys.is_subset(&more_keys) {
        return parse_planned(parser, source, more);
    }
    let mut text = source.to_vec();
    let mut tree = old.clone();
    let mut pos = elide::Positions::new(source);
    for e in more.elided.iter().filter(|e| !base_keys.contains(&key(e))) {
        let (a, b) = (e.span.start.min(text.len()), e.span.end.min(text.len()));
        for byte in &mut text[a..b] {
            if !matches!(*byte, b'\n' | b'\r') {
                *byte = b' ';
            }
        }
        let (p0, p1) = (pos.point(a), pos.point(b));
        tree.edit(&tree_sitter::InputEdit {
            start_byte: a,
            old_end_byte: b,
            new_end_byte: b,
            start_position: p0,
            old_end_position: p1,
            new_end_position: p1,
        });
    }
    let ranges = base.included_ranges(source);
    if ranges.is_empty() {
        return (parser.parse(&text, Some(&tree)), more);
    }
    let set = parser.set_included_ranges(&ranges).is_ok();
    let parsed = if set {
        parser.parse(&text, Some(&tree))
    } else {
        None
    };
    let _ = parser.set_included_ranges(&[]);
    match parsed {
        Some(t) => (Some(t), more),
        None => parse_planned(parser, source, more),
    }
}

/// True when `with` finds at least the kernels, functions and loops of `plain`.
fn finds_no_less(plain: &SourceFile, with: &SourceFile) -> bool {
    let count = |f: &SourceFile| {
        let kernels = f
            .functions
            .iter()
            .filter(|x| x.kind == FunctionKind::Kernel)
            .count();
        let loops: usize = f.functions.iter().map(|x| x.loops.len()).sum();
        (kernels, f.functions.len(), loops)
    };
    let (a, b) = (count(plain), count(with));
    b.0 >= a.0 && b.1 >= a.1 && b.2 >= a.2
}

/// [`parse`], with the specifier macros defined outside `source` (in the headers it includes;
/// see [`specifier_macros`]): their uses are skipped by the parse like the file's own.
pub fn parse_with(source: &[u8], outer: &HashMap<String, SpecifierMacro>) -> SourceFile {
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
        let plan = elide::plan(source, outer);
        let (tree, plan) = parse_planned(&mut tp.parser, source, plan);
        match tree {
            Some(tree) => {
                let extend = tree.root_node().has_error() || plan.expandable;
                let file = lower::Lowerer::new(source, &tp.kinds, plan.clone_ranges()).run(&tree);
                if !extend {
                    return file;
                }
                // What the grammar could not read may be unknown macros (see `elide::extend`):
                // parsed again with them skipped, kept when it finds no less.
                let more = elide::extend(source, outer, &plan);
                if more.elided.len() == plan.elided.len() && more.expansions.is_empty() {
                    return file;
                }
                let (tree2, more) = parse_extended(&mut tp.parser, source, &plan, &tree, more);
                let Some(tree2) = tree2 else { return file };
                let expansions = !more.expansions.is_empty();
                let lowerer = lower::Lowerer::new(source, &tp.kinds, more.clone_ranges());
                let (mut with, mut parts) = lowerer.run_parts(&tree2);
                if expansions {
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
                if finds_no_less(&file, &with) {
                    with
                } else {
                    file
                }
            }
            None => {
                // Only happens on cancellation/timeouts, which we never set; keep the promise anyway.
                tp.parser.reset();
                SourceFile {
                    parse_errors: vec![ParseError {
                        span: Span::default(),
                        message: "parser gave no tree".into(),
                    }],
                    ..Default::default()
                }
            }
        }
    })
}
