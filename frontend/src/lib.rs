//! frontend: parses HIP/CUDA sources with tree-sitter-cuda and lowers them into the typed IR.
//!
//! Entry point: [`parse`]. Parsing never fails: syntax errors become [`ir::ParseError`]s and
//! the lowering carries on around them.

pub mod ir;

pub use ir::*;

/// Parse `source` (any bytes; invalid UTF-8 is tolerated) into the IR.
pub fn parse(source: &[u8]) -> SourceFile {
    let _ = source;
    todo!("frontend lowering: issue 2")
}
