//! Baseline for the check benchmark: a bare single-threaded tree-sitter-cuda parse of files.
//!
//! Usage: `bare-parse [--list FILE] [--quiet] [PATH...]`. A PATH that is a directory is walked
//! recursively for `.cu .cuh .hip .cpp .hpp .h` files (sorted); `--list FILE` reads one path per
//! line. Every file is read and parsed with one reused `Parser`, on one thread. The only work
//! besides the parse is reading two O(1) facts from each tree (the node count and whether it
//! has errors) so the optimiser cannot drop the parse. Prints files, bytes, nodes, files with
//! errors, the elapsed time and files/s; exits 2 on a usage or I/O error.
#![allow(clippy::print_stdout, clippy::print_stderr, clippy::exit)]

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

const EXTS: [&str; 6] = ["cu", "cuh", "hip", "cpp", "hpp", "h"];

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let path = e.path();
        let ty = e.file_type()?;
        if ty.is_dir() {
            walk(&path, out)?;
        } else if ty.is_file()
            && path
                .extension()
                .and_then(|x| x.to_str())
                .is_some_and(|x| EXTS.contains(&x))
        {
            out.push(path);
        }
    }
    Ok(())
}

fn collect(args: &[String]) -> Result<(Vec<PathBuf>, bool), String> {
    let mut files = Vec::new();
    let mut quiet = false;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--list" => {
                let list = it.next().ok_or("--list needs a FILE")?;
                let text = std::fs::read_to_string(list).map_err(|e| format!("{list}: {e}"))?;
                files.extend(
                    text.lines()
                        .filter(|l| !l.trim().is_empty())
                        .map(PathBuf::from),
                );
            }
            "--quiet" | "-q" => quiet = true,
            "-h" | "--help" => {
                return Err("usage: bare-parse [--list FILE] [--quiet] [PATH...]".into());
            }
            p => {
                let path = PathBuf::from(p);
                if path.is_dir() {
                    walk(&path, &mut files).map_err(|e| format!("{p}: {e}"))?;
                } else {
                    files.push(path);
                }
            }
        }
    }
    if files.is_empty() {
        return Err("no input files (usage: bare-parse [--list FILE] [--quiet] [PATH...])".into());
    }
    Ok((files, quiet))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (files, quiet) = match collect(&args) {
        Ok(v) => v,
        Err(msg) => {
            eprintln!("bare-parse: {msg}");
            return ExitCode::from(2);
        }
    };
    let mut parser = tree_sitter::Parser::new();
    if let Err(e) = parser.set_language(&tree_sitter_cuda::LANGUAGE.into()) {
        eprintln!("bare-parse: cannot load tree-sitter-cuda: {e}");
        return ExitCode::from(2);
    }
    let start = Instant::now();
    let (mut bytes, mut nodes, mut with_errors) = (0usize, 0usize, 0usize);
    for path in &files {
        let source = match std::fs::read(path) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("bare-parse: {}: {e}", path.display());
                return ExitCode::from(2);
            }
        };
        bytes += source.len();
        if let Some(tree) = parser.parse(&source, None) {
            let root = tree.root_node();
            nodes += root.descendant_count();
            with_errors += usize::from(root.has_error());
        }
    }
    let secs = start.elapsed().as_secs_f64();
    if !quiet {
        println!(
            "files={} bytes={bytes} nodes={nodes} files_with_errors={with_errors} seconds={secs:.3} files_per_s={:.1}",
            files.len(),
            files.len() as f64 / secs.max(1e-9)
        );
    }
    ExitCode::SUCCESS
}
