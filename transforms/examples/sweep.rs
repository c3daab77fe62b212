//! Robustness sweep: parse every file given (or listed in a file with `@LIST`), try every loop
//! in both modes with one factor in-process, and count results (rewritten, refused by reason,
//! new parse errors, panics). `cargo run --release -p transforms --example sweep -- [--factor N] FILES|@LIST`
#![allow(clippy::print_stdout, clippy::print_stderr, clippy::exit)]

use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use transforms::{LoopLoc, Mode};

fn main() {
    let mut factor = 4u32;
    let mut paths = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--factor" {
            factor = args
                .next()
                .and_then(|v| v.parse().ok())
                .expect("--factor N");
        } else if let Some(list) = a.strip_prefix('@') {
            let text = std::fs::read_to_string(list).expect("read list");
            paths.extend(
                text.lines()
                    .filter(|l| !l.trim().is_empty())
                    .map(str::to_string),
            );
        } else {
            paths.push(a);
        }
    }
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    let (mut files, mut loops) = (0usize, 0usize);
    for p in &paths {
        let Ok(src) = std::fs::read(p) else { continue };
        files += 1;
        let file = frontend::parse(&src);
        for (fi, f) in file.functions.iter().enumerate() {
            for lp in &f.loops {
                loops += 1;
                for mode in [Mode::Pragma, Mode::Manual] {
                    let loc = LoopLoc {
                        function: fi,
                        index: lp.index,
                    };
                    let r = catch_unwind(AssertUnwindSafe(|| {
                        transforms::unroll(&src, &file, loc, factor, mode)
                    }));
                    let key = match r {
                        Ok(Ok(_)) => format!("{mode} rewritten"),
                        Ok(Err(transforms::Error::Refused(r))) => {
                            format!("{mode} refused {}", r.id())
                        }
                        Ok(Err(e)) => format!("{mode} error {e}"),
                        Err(_) => {
                            eprintln!("PANIC {p} {}:{}", f.name, lp.index);
                            format!("{mode} PANIC")
                        }
                    };
                    if std::env::var("SWEEP_SHOW").is_ok_and(|w| key.ends_with(&w)) {
                        println!("{p}:{} {key}", lp.keyword.line);
                    }
                    *counts.entry(key).or_default() += 1;
                }
            }
        }
    }
    println!("files {files}, loops {loops}, factor {factor}");
    for (k, v) in counts {
        println!("{v:6}  {k}");
    }
}
