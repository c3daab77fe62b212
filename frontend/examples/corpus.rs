//! Debug aid: lowers every file named on stdin and prints one line per file:
//! `path<TAB>parse_errors<TAB>parse_us<TAB>lower_us<TAB>kernel names (comma-separated)`.
//! (`find DIR -name '*.cu' | cargo run --release -p frontend --example corpus`)
#![allow(clippy::print_stdout, clippy::print_stderr, clippy::exit)]
use std::io::BufRead;
use std::time::Instant;

fn main() {
    let lang: tree_sitter::Language = tree_sitter_cuda::LANGUAGE.into();
    let mut parser = tree_sitter::Parser::new();
    parser.set_language(&lang).expect("language");
    let (mut t_parse, mut t_full) = (0u128, 0u128);
    for line in std::io::stdin().lock().lines() {
        let path = line.expect("stdin");
        let Ok(src) = std::fs::read(&path) else {
            continue;
        };
        let t0 = Instant::now();
        let tree = parser.parse(&src, None);
        let parse_us = t0.elapsed().as_micros();
        drop(tree);
        let t1 = Instant::now();
        let f = frontend::parse(&src);
        let full_us = t1.elapsed().as_micros();
        t_parse += parse_us;
        t_full += full_us;
        let kernels: Vec<&str> = f
            .functions
            .iter()
            .filter(|x| x.kind == frontend::FunctionKind::Kernel)
            .map(|x| x.name.as_str())
            .collect();
        println!(
            "{path}\t{}\t{parse_us}\t{full_us}\t{}",
            f.parse_errors.len(),
            kernels.join(",")
        );
    }
    eprintln!(
        "bare parse total {} ms, parse+lower total {} ms",
        t_parse / 1000,
        t_full / 1000
    );
}
