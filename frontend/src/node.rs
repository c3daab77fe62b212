//! Span and text helpers over tree-sitter nodes, shared by the lowering, the loop-header reader
//! and error recovery (a leaf module: it imports no other module of the crate but `ir`).

use tree_sitter::Node;

use crate::ir::Span;

/// The byte range and 1-based line/column of a node.
pub(crate) fn span_of(n: Node<'_>) -> Span {
    let p = n.start_position();
    Span {
        start: n.start_byte(),
        end: n.end_byte(),
        line: p.row as u32 + 1,
        column: p.column as u32 + 1,
    }
}

/// The text of a node (invalid UTF-8 replaced).
pub(crate) fn text_of(n: Node<'_>, src: &[u8]) -> String {
    String::from_utf8_lossy(bytes_of(n, src)).into_owned()
}

/// The bytes of a node, clamped to the source.
pub(crate) fn bytes_of<'a>(n: Node<'_>, src: &'a [u8]) -> &'a [u8] {
    let r = n.byte_range();
    &src[r.start.min(src.len())..r.end.min(src.len())]
}

/// `(content)` without its parentheses.
pub(crate) fn inner_span(n: Node<'_>) -> Span {
    let mut s = span_of(n);
    if s.len() >= 2 {
        s.start += 1;
        s.end -= 1;
        s.column += 1;
    }
    s
}

/// The first named child that is not a comment.
pub(crate) fn first_named_non_comment(n: Node<'_>) -> Option<Node<'_>> {
    let mut c = n.walk();
    let found = n.named_children(&mut c).find(|ch| ch.kind() != "comment");
    found
}
