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
pub mod trip;
pub mod tu;

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
        let mut plan = elide::plan(source, outer);
        let bulk = bulk::exclusions(source);
        let ranges = if bulk.is_empty() {
            plan.included_ranges(source)
        } else {
            let mut skip: Vec<std::ops::Range<usize>> = plan
                .elided
                .iter()
                .map(|e| e.span.start..e.span.end)
                .chain(bulk)
                .collect();
            skip.sort_by_key(|r| r.start);
            bulk::included(source, &skip)
        };
        let tree = if ranges.is_empty() {
            tp.parser.parse(source, None)
        } else {
            let set = tp.parser.set_included_ranges(&ranges).is_ok();
            let tree = tp.parser.parse(source, None);
            // The parser is reused for the next file: back to the whole text.
            let _ = tp.parser.set_included_ranges(&[]);
            if set {
                tree
            } else {
                plan = elide::Plan::default();
                tp.parser.parse(source, None)
            }
        };
        match tree {
            Some(tree) => {
                let mut file = lower::Lowerer::new(source, &tp.kinds, plan).run(&tree);
                file.conditionals = cond::scan(source, &file.inert);
                constctx::mark(source, &mut file);
                file
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
