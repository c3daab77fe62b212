//! Debug aid: prints the lowered IR of a file (`cargo run -p frontend --example ir FILE`).
#![allow(clippy::print_stdout, clippy::print_stderr, clippy::exit)]
fn main() {
    let path = std::env::args().nth(1).expect("usage: ir FILE");
    let src = std::fs::read(&path).expect("read");
    let f = frontend::parse(&src);
    println!("{f:#?}");
}
