//! Debug aid: prints the tree-sitter-cuda syntax tree of a file (`cargo run -p frontend --example dump FILE`).
#![allow(clippy::print_stdout, clippy::print_stderr, clippy::exit)]
fn main() {
    let path = std::env::args().nth(1).expect("usage: dump FILE");
    let src = std::fs::read(&path).expect("read");
    let mut p = tree_sitter::Parser::new();
    p.set_language(&tree_sitter_cuda::LANGUAGE.into())
        .expect("language");
    let t = p.parse(&src, None).expect("parse");
    let mut c = t.walk();
    let mut depth = 0usize;
    loop {
        let n = c.node();
        let field = c.field_name().map(|f| format!("{f}: ")).unwrap_or_default();
        let text = if n.child_count() == 0 {
            format!(" {:?}", String::from_utf8_lossy(&src[n.byte_range()]))
        } else {
            String::new()
        };
        println!(
            "{}{}{}{} [{}:{}]{}",
            "  ".repeat(depth),
            field,
            if n.is_named() { "" } else { "'" },
            n.kind(),
            n.start_position().row + 1,
            n.start_position().column + 1,
            text
        );
        if c.goto_first_child() {
            depth += 1;
            continue;
        }
        loop {
            if c.goto_next_sibling() {
                break;
            }
            if !c.goto_parent() {
                return;
            }
            depth -= 1;
        }
    }
}
