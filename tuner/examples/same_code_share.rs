//! The share of `#pragma unroll N` variants whose gfx90a machine code is the baseline's
//! (`same-code`), measured with the tuner's own discovery, rewrite and code-object gates.
//!
//! Usage: `same_code_share LIST [FACTORS]`: LIST holds one source path per line (files hipcc
//! compiles alone, e.g. from `bench/corpus_compiles.py`); FACTORS defaults to `2,4,8`. Every
//! unblocked loop of a kernel gets one pragma variant per factor; a variant the rewrite refuses
//! or that does not compile is not counted. Prints one line per file and a summary per factor.
#![allow(clippy::print_stdout, clippy::print_stderr, clippy::exit)]

use codeobj::compile::{Compiler, DEFAULT_COMMAND};
use std::collections::BTreeMap;
use std::path::PathBuf;
use tuner::gates::Gates;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(list) = args.get(1) else {
        eprintln!("usage: same_code_share LIST [FACTORS]");
        std::process::exit(2);
    };
    let factors: Vec<u32> = args
        .get(2)
        .map(|s| s.split(',').map(|f| f.parse().expect("a factor")).collect())
        .unwrap_or_else(|| vec![2, 4, 8]);
    let files: Vec<PathBuf> = std::fs::read_to_string(list)
        .expect("the list")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(PathBuf::from)
        .collect();
    let cache = tempfile::tempdir().expect("a temporary directory");
    let gates = Gates {
        compiler: Compiler::new(DEFAULT_COMMAND, "gfx90a", cache.path()),
        max_occupancy_loss: None,
        instances: Vec::new(),
    };
    // factor -> (same, compared)
    let mut by_factor: BTreeMap<u32, (u32, u32)> = BTreeMap::new();
    for path in &files {
        let work = tempfile::tempdir().expect("a temporary directory");
        let name = path.file_name().expect("a file name");
        let base = work.path().join(name);
        std::fs::copy(path, &base).expect("copy");
        let Ok(disc) = tuner::discover::discover(
            work.path(),
            &[PathBuf::from(name)],
            &[],
            &pipeline::Includes::default(),
        ) else {
            continue;
        };
        let compiled = gates.baseline(&base);
        if compiled.is_err() {
            println!("{}: the baseline does not compile alone", path.display());
            continue;
        }
        let Some(info) = disc.file(std::path::Path::new(name)) else {
            continue;
        };
        let (mut same, mut n) = (0, 0);
        for l in disc.loops().filter(|l| l.in_kernel && !l.blocked) {
            for &f in &factors {
                let Ok(rw) =
                    tuner::discover::rewrite(l, &info.source, &[], f, pipeline::Mode::Pragma)
                else {
                    continue;
                };
                if rw.edits.is_empty() {
                    continue;
                }
                let var_dir = work.path().join(format!("v-{}-{f}", n + same + 1));
                std::fs::create_dir_all(&var_dir).expect("mkdir");
                let var = var_dir.join(name);
                std::fs::write(&var, &rw.source).expect("write");
                let r = gates.check(&compiled, &var);
                if r.failure().is_some() || r.skipped().is_some() {
                    continue;
                }
                let e = by_factor.entry(f).or_default();
                e.1 += 1;
                n += 1;
                if r.same_code {
                    e.0 += 1;
                    same += 1;
                }
            }
        }
        println!("{}: {same} of {n} variants same-code", path.display());
    }
    let (mut s, mut t) = (0, 0);
    for (f, (same, n)) in &by_factor {
        s += same;
        t += n;
        println!(
            "x{f}: {same} of {n} same-code ({:.0}%)",
            100.0 * *same as f64 / (*n).max(1) as f64
        );
    }
    println!(
        "all: {s} of {t} same-code ({:.0}%) in {} files",
        100.0 * s as f64 / t.max(1) as f64,
        files.len()
    );
}
