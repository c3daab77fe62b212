//! Baseline for the check benchmark: a bare single-threaded tree-sitter-cuda parse of files. (Being written.)
fn main() {}
