//! Fixture tests: every `testdata/transforms/<case>.cu` (except `*.fixed.cu` and `headers/`),
//! in its translation unit (its `#include "..."`s are followed),
//! starts with `// hip-unroll-test: loop=L factor=N mode=M [expect=REFUSAL-ID]`. Without
//! `expect`, the rewrite must equal `<case>.fixed.cu` byte for byte, re-parse without new
//! errors, leave the bytes outside the loop alone, and (pragma mode) be idempotent. All
//! expected outputs must also compile as host C++ (g++ -fsyntax-only, one invocation).
//!
//! `UPDATE_FIXTURES=1 cargo test -p transforms --test fixtures` rewrites the `.fixed.cu` files.
#![allow(clippy::print_stdout, clippy::print_stderr, clippy::exit)]

mod common;

use std::path::{Path, PathBuf};
use transforms::{LoopRef, Mode};

struct Directive {
    loop_ref: LoopRef,
    factor: u32,
    mode: Mode,
    expect: Option<String>,
}

fn directive(src: &str) -> Result<Directive, String> {
    let first = src.lines().next().unwrap_or_default();
    let rest = first
        .strip_prefix("// hip-unroll-test:")
        .ok_or("first line lacks `// hip-unroll-test:`")?;
    let (mut l, mut f, mut m, mut e) = (None, None, Mode::Pragma, None);
    for kv in rest.split_whitespace() {
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| format!("bad directive item `{kv}`"))?;
        match k {
            "loop" => l = Some(v.parse::<LoopRef>().map_err(|e| e.to_string())?),
            "factor" => f = Some(v.parse::<u32>().map_err(|e| e.to_string())?),
            "mode" => {
                m = match v {
                    "manual" => Mode::Manual,
                    "pragma" => Mode::Pragma,
                    _ => return Err(format!("bad mode {v}")),
                }
            }
            "expect" => e = Some(v.to_string()),
            _ => return Err(format!("unknown directive key {k}")),
        }
    }
    Ok(Directive {
        loop_ref: l.ok_or("no loop=")?,
        factor: f.ok_or("no factor=")?,
        mode: m,
        expect: e,
    })
}

fn cases() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(common::testdata())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let n = p.file_name().unwrap().to_string_lossy().into_owned();
            n.ends_with(".cu") && !n.ends_with(".fixed.cu")
        })
        .collect();
    v.sort();
    v
}

fn fixed_path(p: &Path) -> PathBuf {
    p.with_extension("fixed.cu")
}

/// Check one fixture; `Err` says what is wrong.
fn check(path: &Path) -> Result<(), String> {
    let src = std::fs::read(path).map_err(|e| e.to_string())?;
    let d = directive(&String::from_utf8_lossy(&src))?;
    // In its translation unit: the headers it includes (next to it) are seen.
    let (file, unit) = frontend::tu::Includes::default().open(path, &src);
    let loc = transforms::resolve(&file, &d.loop_ref).map_err(|e| e.to_string())?;
    let result = transforms::unroll_in(&src, &file, &unit, loc, d.factor, d.mode);
    let fixed = fixed_path(path);
    match (&d.expect, result) {
        (Some(id), Err(transforms::Error::Refused(r))) => {
            if r.id() != id {
                return Err(format!("refused with `{}` ({r}), expected `{id}`", r.id()));
            }
            if r.to_string().is_empty() {
                return Err("empty refusal message".into());
            }
            if fixed.exists() {
                return Err("a refusal case must not have a .fixed.cu".into());
            }
            Ok(())
        }
        (Some(id), Ok(_)) => Err(format!("rewritten, but expected refusal `{id}`")),
        (_, Err(e)) => Err(format!("unexpected error: {e}")),
        (None, Ok(v)) => {
            if std::env::var_os("UPDATE_FIXTURES").is_some() {
                std::fs::write(&fixed, &v.source).map_err(|e| e.to_string())?;
            }
            let want = std::fs::read(&fixed).map_err(|e| format!("{}: {e}", fixed.display()))?;
            if v.source != want {
                return Err(format!(
                    "output differs from {}:\n{}",
                    fixed.display(),
                    similar::TextDiff::from_lines(
                        &String::from_utf8_lossy(&want),
                        &String::from_utf8_lossy(&v.source)
                    )
                    .unified_diff()
                    .header("expected", "actual")
                ));
            }
            let re = frontend::parse(&v.source);
            if re.parse_errors.len() > file.parse_errors.len() {
                return Err(format!(
                    "re-parse has {} new errors",
                    re.parse_errors.len() - file.parse_errors.len()
                ));
            }
            // Bytes outside the loop (and its pragma line) are untouched.
            let lp = &file.functions[loc.function].loops[loc.index];
            let start = lp
                .pragma
                .as_ref()
                .map_or(lp.span.start, |p| p.span.start.min(lp.span.start));
            let head = &src[..transforms::text::line_start(&src, start)];
            if !v.source.starts_with(head) || !v.source.ends_with(&src[lp.span.end..]) {
                return Err("bytes outside the loop changed".into());
            }
            if d.mode == Mode::Pragma {
                let loc2 = transforms::resolve(
                    &re,
                    &LoopRef::Id {
                        function: file.functions[loc.function].name.clone(),
                        index: loc.index,
                    },
                )
                .map_err(|e| e.to_string())?;
                let again = transforms::unroll_in(&v.source, &re, &unit, loc2, d.factor, d.mode)
                    .map_err(|e| e.to_string())?;
                if again.source != v.source || !again.edits.is_empty() {
                    return Err("pragma mode is not idempotent".into());
                }
            }
            Ok(())
        }
    }
}

#[test]
fn every_fixture() {
    let cases = cases();
    assert!(cases.len() >= 30, "only {} fixtures found", cases.len());
    let mut failures = Vec::new();
    for c in &cases {
        let name = c.file_name().unwrap().to_string_lossy().into_owned();
        match check(c) {
            Ok(()) => eprintln!("ok   {name}"),
            Err(e) => {
                eprintln!("FAIL {name}: {e}");
                failures.push(name);
            }
        }
    }
    assert!(failures.is_empty(), "failing fixtures: {failures:?}");
}

/// Every expected output is valid C++ for g++ with the host header (one compiler run).
#[test]
fn fixed_outputs_compile_as_host_cpp() {
    let fixed: Vec<PathBuf> = cases()
        .iter()
        .map(|c| fixed_path(c))
        .filter(|p| p.exists())
        .collect();
    assert!(fixed.len() >= 15);
    let out = std::process::Command::new("g++")
        .args(["-std=c++17", "-fsyntax-only", "-x", "c++", "-include"])
        .arg(common::testdata().join("hip_host.h"))
        .args(&fixed)
        .output()
        .expect("g++ runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
