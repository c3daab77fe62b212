//! Debug aid for performance work: runs one phase over every file named on stdin, so that
//! `perf stat`/callgrind can compare them. Modes: `bare` (tree-sitter parse only), `lower`
//! (`frontend::parse`), `check` (`guards::check_source`). Prints the total wall time.
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
    let lang: tree_sitter::Language = tree_sitter_cuda::LANGUAGE.into();
    let mut parser = tree_sitter::Parser::new();
    parser.set_language(&lang).expect("language");
    let settings = guards::Settings::default();
    let t = Instant::now();
    let mut n = 0usize;
    for src in &files {
        match mode.as_str() {
            "bare" => {
                n += parser
                    .parse(src, None)
                    .map_or(0, |t| t.root_node().child_count())
            }
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
