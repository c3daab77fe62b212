//! Debug aid for performance work: runs one phase over every file named on stdin, so that
//! `perf stat`/callgrind can compare them. Modes: `lower` (`frontend::parse`), `check`
//! (`guards::check_source`). Prints the total wall time. The bare tree-sitter parse is
//! `bench/bare-parse` (tree-sitter stays inside `frontend`).
#![allow(clippy::print_stdout, clippy::print_stderr, clippy::exit)]
use std::io::BufRead;
use std::time::Instant;

fn main() {
    let mode = std::env::args().nth(1).unwrap_or_else(|| "check".into());
    let files: Vec<Vec<u8>> = std::io::stdin()
        .lock()
        .lines()
        .map_while(Result::ok)
        .filter_map(|p| std::fs::read(p).ok())
        .collect();
    let settings = guards::Settings::default();
    let t = Instant::now();
    let mut n = 0usize;
    for src in &files {
        match mode.as_str() {
            "lower" => n += frontend::parse(src).functions.len(),
            _ => n += guards::check_source("x", src, &settings).0.functions.len(),
        }
    }
    eprintln!(
        "{mode}: {} files, {:.3} s ({n})",
        files.len(),
        t.elapsed().as_secs_f64()
    );
}
