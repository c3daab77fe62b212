//! Benchmark: tree-sitter alone on a list of files, whole and with the bodies of the functions
//! the lowering calls host code left out (included ranges), alternating over three rounds: how
//! much of the parse host bodies cost (`bench/README.md`, "Host bodies left out of the parse").
//! `cargo run --release -p frontend --example host_parse LIST` (one path per line).
#![allow(clippy::print_stdout, clippy::print_stderr, clippy::exit)]
use std::time::Instant;

fn point(src: &[u8], o: usize) -> tree_sitter::Point {
    let row = memchr::memchr_iter(b'\n', &src[..o]).count();
    let column = o - memchr::memrchr(b'\n', &src[..o]).map_or(0, |p| p + 1);
    tree_sitter::Point { row, column }
}

fn main() {
    let Some(list) = std::env::args().nth(1) else {
        eprintln!("usage: host_parse LIST");
        std::process::exit(2);
    };
    let list = std::fs::read_to_string(list).expect("read the list");
    let lang: tree_sitter::Language = tree_sitter_cuda::LANGUAGE.into();
    let mut p = tree_sitter::Parser::new();
    p.set_language(&lang).expect("tree-sitter-cuda");
    // Per file: its text and the ranges to parse with host bodies left out.
    let mut files = Vec::new();
    let (mut bytes, mut host) = (0usize, 0usize);
    for path in list.lines() {
        let Ok(src) = std::fs::read(path) else {
            continue;
        };
        let f = frontend::parse(&src);
        let mut holes: Vec<(usize, usize)> = f
            .functions
            .iter()
            .filter(|f| f.kind == frontend::FunctionKind::Host && f.body.end > f.body.start + 2)
            .map(|f| (f.body.start + 1, f.body.end - 1))
            .collect();
        holes.sort();
        let mut ranges = Vec::new();
        let mut pos = 0usize;
        for (a, b) in holes {
            if a < pos {
                continue;
            }
            host += b - a;
            ranges.push(tree_sitter::Range {
                start_byte: pos,
                end_byte: a,
                start_point: point(&src, pos),
                end_point: point(&src, a),
            });
            pos = b;
        }
        ranges.push(tree_sitter::Range {
            start_byte: pos,
            end_byte: src.len(),
            start_point: point(&src, pos),
            end_point: point(&src, src.len()),
        });
        bytes += src.len();
        files.push((src, ranges));
    }
    println!(
        "{} files, {bytes} bytes, {host} in host function bodies",
        files.len()
    );
    for round in 0..3 {
        let t = Instant::now();
        for (src, _) in &files {
            let _ = p.parse(src, None);
        }
        let whole = t.elapsed().as_secs_f64();
        let t = Instant::now();
        for (src, ranges) in &files {
            p.set_included_ranges(ranges).expect("ranges in order");
            let _ = p.parse(src, None);
            p.set_included_ranges(&[]).expect("whole text");
        }
        let left_out = t.elapsed().as_secs_f64();
        println!(
            "round {round}: whole {whole:.3} s, host bodies left out {left_out:.3} s, ratio {:.3}",
            left_out / whole
        );
    }
}
