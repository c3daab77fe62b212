//! Tidy: the greppable invariants of ARCHITECTURE.md, checked on the workspace's own sources
//! (in the style of rust-analyzer's `xtask tidy`). Each rule is a pure function over one file's
//! path and text, so the `planted_*` tests prove that every rule fails on a violation; the
//! `workspace_is_tidy` test runs all of them over every file of the repository.
//!
//! Rules (the ARCHITECTURE.md invariant each one enforces):
//! - `doc-header`: every `.rs` file opens with a `//!` line saying what it is for.
//! - `tree-sitter`: raw tree-sitter never leaves `frontend` (no `tree_sitter::` path and no
//!   tree-sitter dependency elsewhere; `bench/bare-parse`, the bare-parse baseline, is exempt).
//! - `transforms-io`: `transforms` does no I/O (no `std::fs`, `std::io`, `std::net`,
//!   `std::env`, `std::process`, `File`).
//! - `sqlite`: SQLite lives in `profiler` (rocpd) and `tuner` (the ledger) only; tests may read
//!   a ledger.
//! - `spawn`: processes are spawned only by the modules ARCHITECTURE.md names (see
//!   [`SPAWNERS`]).
//! - `print`: library crates never print or exit; only the binary (`src/`), the bare-parse
//!   baseline and the fuzz helpers do.
//! - `user-files`: the binary (`src/`) reads and writes the user's files only through `fsio`
//!   (no `std::fs::read`/`write`/`rename`/`copy`, `File::open`/`create`, `OpenOptions` or
//!   `tempfile` there).
//! - `module-cycle`: no two modules of one crate import each other, directly or through others
//!   (the graph of `crate::`/`super::` paths in each file's non-test code; the crate root, a
//!   facade, is left out). Known cycles that other work items remove are in [`KNOWN_CYCLES`].
//! - `cli-flag`: no library crate spells a flag of the `hip-unroll` binary (`--force`, read from
//!   each command's `--help`) in a string of its non-test code: a library's messages do not know
//!   the command line; the binary adds the hints. A string that is only the flag (an argv
//!   element of another tool that shares its name) is not a message. Files not yet converted
//!   are in [`KNOWN_FLAG_MESSAGES`], each with the exact count it holds (a larger allowance is
//!   stale and fails too).
//! - `lints`: the root Cargo.toml has `[workspace.lints.clippy]` denying `print_stdout`,
//!   `print_stderr` and `exit`, and every crate has `[lints] workspace = true` (the binary and
//!   the test, example and benchmark files allow the three at their crate root).
#![allow(clippy::print_stdout, clippy::print_stderr, clippy::exit)]

use std::path::{Path, PathBuf};

/// The only non-test source files allowed to start a process (ARCHITECTURE.md, "processes are
/// spawned only by ...").
const SPAWNERS: &[&str] = &[
    "childproc/src/lib.rs", // every compiler and user command, in its own process group
    "codeobj/src/compile.rs", // the compiler (hipcc, clang), through childproc
    "profiler/src/run.rs",  // rocprofv3 / rocprof, and rocm_agent_enumerator (the local GPU)
    "tuner/src/shell.rs",   // the user's build, run and check commands; rocprofv3 for the backend
    "replay/src/launch.rs", // `capture`: the application under HSA_TOOLS_LIB
    "tuner/src/executor/slurm.rs", // one srun job step per Slurm lane, one tune-worker per local replay lane
];

/// Module cycles that exist today and belong to other work items; each is the set of modules
/// of one strongly connected component (a cycle found that is not listed exactly fails).
const KNOWN_CYCLES: &[(&str, &[&str])] = &[];

/// Library files whose messages still name a flag of the binary, with how many such strings
/// each may hold (at most; a file not listed may hold none). Issue 20, item "no CLI flag names
/// in library errors": these move the hint to the binary as runner's did.
const KNOWN_FLAG_MESSAGES: &[(&str, usize)] = &[];

/// Binaries, not libraries: they may print and exit.
const BINARIES: &[&str] = &["src/", "bench/bare-parse/", "fuzz/"];

#[derive(Debug, Clone, PartialEq, Eq)]
struct Violation {
    rule: &'static str,
    path: String,
    line: usize,
    text: String,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{}: [{}] {}",
            self.path,
            self.line,
            self.rule,
            self.text.trim()
        )
    }
}

/// Whether a path (relative, `/`-separated) is test, bench or example code.
fn is_test_code(rel: &str) -> bool {
    rel.starts_with("tests/")
        || rel.contains("/tests/")
        || rel.contains("/benches/")
        || rel.contains("/examples/")
        || rel.starts_with("fuzz/")
        // The counted-skip helper: a dev-dependency only, it prints the SKIP line and probes
        // for programs.
        || rel.starts_with("testenv/")
}

/// The lines of a Rust file that are code outside its `#[cfg(test)]` test modules (the
/// attribute followed by a `mod` line; a `#[cfg(test)]` on a single item does not end the
/// code), without line comments (doc comments may name what they forbid). A test module ends at
/// its closing brace (or its `;`): code after it is code too, so an item placed below the tests
/// is checked like any other.
fn code_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut skip = vec![false; lines.len()];
    let mut i = 0;
    while i < lines.len() {
        let next = (i + 1..lines.len()).find(|&j| !lines[j].trim().is_empty());
        let is_mod = |l: &str| {
            let l = l.trim_start();
            l.starts_with("mod ") || l.starts_with("pub mod ") || l.starts_with("pub(crate) mod ")
        };
        match next.filter(|&j| lines[i].trim() == "#[cfg(test)]" && is_mod(lines[j])) {
            Some(j) => {
                let end = module_end(&lines, j);
                skip[i..=end].iter_mut().for_each(|s| *s = true);
                i = end + 1;
            }
            None => i += 1,
        }
    }
    lines
        .into_iter()
        .enumerate()
        .filter(move |(i, _)| !skip[*i])
        .filter(|(_, l)| !l.trim_start().starts_with("//"))
        .map(|(i, l)| (i + 1, l))
}

/// The index of the line that ends the module declared on line `start`: the line of its `;`,
/// or of the brace that closes its body (braces in strings, raw strings, characters and
/// comments, over any number of lines, do not count); the last line when it never closes.
fn module_end(lines: &[&str], start: usize) -> usize {
    let text = lines[start..].join("\n");
    let b = text.as_bytes();
    let (mut depth, mut opened, mut k, mut line) = (0usize, false, 0usize, start);
    // Advance to `to`, counting the lines passed.
    let skip_to = |k: &mut usize, line: &mut usize, to: usize| {
        *line += b[*k..to.min(b.len())]
            .iter()
            .filter(|&&c| c == b'\n')
            .count();
        *k = to.min(b.len());
    };
    while k < b.len() {
        let rest = &b[k..];
        let ident_before = k > 0 && (b[k - 1].is_ascii_alphanumeric() || b[k - 1] == b'_');
        let to = if rest.starts_with(b"//") {
            k + rest.iter().position(|&c| c == b'\n').unwrap_or(rest.len())
        } else if rest.starts_with(b"/*") {
            // Nested block comments, as Rust has them.
            let (mut d, mut j) = (0usize, k);
            while j < b.len() {
                if b[j..].starts_with(b"/*") {
                    d += 1;
                    j += 2;
                } else if b[j..].starts_with(b"*/") {
                    d -= 1;
                    j += 2;
                    if d == 0 {
                        break;
                    }
                } else {
                    j += 1;
                }
            }
            j
        } else if rest[0] == b'"' || (rest.starts_with(b"b\"") && !ident_before) {
            let mut j = k + rest.iter().position(|&c| c == b'"').unwrap_or(0) + 1;
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            j + 1
        } else if !ident_before
            && (rest.starts_with(b"r#")
                || rest.starts_with(b"r\"")
                || rest.starts_with(b"br#")
                || rest.starts_with(b"br\""))
        {
            let open = k + rest
                .iter()
                .position(|&c| c == b'#' || c == b'"')
                .unwrap_or(0);
            let hashes = b[open..].iter().take_while(|&&c| c == b'#').count();
            if b.get(open + hashes) != Some(&b'"') {
                k + 1
            } else {
                let close: Vec<u8> = std::iter::once(b'"')
                    .chain(std::iter::repeat_n(b'#', hashes))
                    .collect();
                let body = open + hashes + 1;
                b[body..]
                    .windows(close.len())
                    .position(|w| w == close.as_slice())
                    .map_or(b.len(), |p| body + p + close.len())
            }
        } else if rest[0] == b'\'' {
            // A character literal ('{', '\'', '\u{7b}'), else a lifetime ('a).
            let after = &text[k + 1..];
            match after.chars().next() {
                Some('\\') => after
                    .get(2..)
                    .and_then(|r| r.find('\''))
                    .map_or(b.len(), |p| k + p + 4),
                Some(c) if after[c.len_utf8()..].starts_with('\'') => k + c.len_utf8() + 2,
                _ => k + 1,
            }
        } else {
            match rest[0] {
                b';' if !opened => return line,
                b'{' => {
                    depth += 1;
                    opened = true;
                }
                b'}' => {
                    depth = depth.saturating_sub(1);
                    if opened && depth == 0 {
                        return line;
                    }
                }
                _ => {}
            }
            k + 1
        };
        skip_to(&mut k, &mut line, to);
    }
    lines.len().saturating_sub(1)
}

fn grep(rule: &'static str, rel: &str, text: &str, pat: &regex::Regex, out: &mut Vec<Violation>) {
    for (line, l) in code_lines(text) {
        if pat.is_match(l) {
            out.push(Violation {
                rule,
                path: rel.to_string(),
                line,
                text: l.to_string(),
            });
        }
    }
}

/// The dependency names of the `[dependencies]`-like tables of a Cargo.toml (line, name,
/// table), `[workspace.dependencies]` left out (it only declares versions).
fn cargo_deps(text: &str) -> Vec<(usize, String, String)> {
    let mut table = String::new();
    let mut out = Vec::new();
    for (i, l) in text.lines().enumerate() {
        let t = l.trim();
        if t.starts_with('[') {
            table = t.trim_matches(|c| c == '[' || c == ']').to_string();
            continue;
        }
        let dep_table = table == "dependencies"
            || table == "dev-dependencies"
            || table == "build-dependencies"
            || (table.starts_with("target.") && table.ends_with("dependencies"));
        if !dep_table || t.starts_with('#') {
            continue;
        }
        if let Some((name, _)) = t.split_once('=') {
            let name = name.trim().split('.').next().unwrap_or("").trim();
            if !name.is_empty() {
                out.push((i + 1, name.to_string(), table.clone()));
            }
        }
    }
    out
}

/// All rules over one file. `rel` is the path relative to the repository root, with `/`.
fn check_file(rel: &str, text: &str) -> Vec<Violation> {
    let mut out = Vec::new();
    if rel.ends_with(".rs") {
        check_rust(rel, text, &mut out);
    } else if rel.ends_with("Cargo.toml") {
        check_manifest(rel, text, &mut out);
    }
    out
}

fn check_rust(rel: &str, text: &str, out: &mut Vec<Violation>) {
    // doc-header
    let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    if !first.starts_with("//!") {
        out.push(Violation {
            rule: "doc-header",
            path: rel.to_string(),
            line: 1,
            text: "the file does not open with a `//!` line saying what it is for".into(),
        });
    }
    // The planted violations of this file's own tests are string literals.
    if rel == "tests/tidy.rs" {
        return;
    }
    // tree-sitter
    if !rel.starts_with("frontend/") && !rel.starts_with("bench/bare-parse/") {
        let pat = regex::Regex::new(r"\btree_sitter(_cuda)?\s*::").unwrap();
        grep("tree-sitter", rel, text, &pat, out);
    }
    // transforms-io
    if rel.starts_with("transforms/src/") {
        let pat = regex::Regex::new(
            r"\bstd\s*::\s*(fs|io|net|env|process)\b|\b(File|OpenOptions)\s*::|\bTcpStream\b",
        )
        .unwrap();
        grep("transforms-io", rel, text, &pat, out);
    }
    let test_code = is_test_code(rel);
    // sqlite
    if !test_code && !rel.starts_with("profiler/") && !rel.starts_with("tuner/") {
        let pat = regex::Regex::new(r"\brusqlite\b").unwrap();
        grep("sqlite", rel, text, &pat, out);
    }
    // spawn
    if !test_code && !SPAWNERS.contains(&rel) {
        let pat = regex::Regex::new(r"\bCommand\s*::\s*new\b|\bprocess\s*::\s*Command\b").unwrap();
        grep("spawn", rel, text, &pat, out);
    }
    // print
    if !test_code && !BINARIES.iter().any(|b| rel.starts_with(b)) {
        let pat = regex::Regex::new(
            r"\b(println|eprintln|print|eprint|dbg)!\s*\(|\bprocess\s*::\s*exit\s*\(",
        )
        .unwrap();
        grep("print", rel, text, &pat, out);
    }
    // user-files
    if rel.starts_with("src/") {
        let pat = regex::Regex::new(
            r"\bstd\s*::\s*fs\s*::\s*(read|read_to_string|write|rename|copy)\b|\bFile\s*::\s*(open|create)\b|\bOpenOptions\b|\btempfile\s*::",
        )
        .unwrap();
        grep("user-files", rel, text, &pat, out);
    }
}

fn check_manifest(rel: &str, text: &str, out: &mut Vec<Violation>) {
    let dir = rel.trim_end_matches("Cargo.toml");
    for (line, name, table) in cargo_deps(text) {
        let rule = match name.as_str() {
            "tree-sitter" | "tree-sitter-cuda"
                if dir != "frontend/" && dir != "bench/bare-parse/" =>
            {
                "tree-sitter"
            }
            "rusqlite" if table != "dev-dependencies" && dir != "profiler/" && dir != "tuner/" => {
                "sqlite"
            }
            _ => continue,
        };
        out.push(Violation {
            rule,
            path: rel.to_string(),
            line,
            text: format!("`{name}` in [{table}]"),
        });
    }
}

/// The module of a file of a crate's `src/` (`a::b` for `src/a/b.rs` or `src/a/b/mod.rs`; the
/// empty path for the crate root); `None` for a file outside `src/` or a `src/bin/` target.
fn module_of(src_rel: &str) -> Option<String> {
    let path = src_rel.strip_suffix(".rs")?;
    if path.starts_with("bin/") {
        return None;
    }
    if path == "lib" || path == "main" {
        return Some(String::new());
    }
    let path = path.strip_suffix("/mod").unwrap_or(path);
    Some(path.replace('/', "::"))
}

/// The paths a use tree at the start of `s` names (`a::b`, `{a, b::{c, d}}`), as segments.
fn use_paths(s: &str) -> Vec<Vec<String>> {
    fn tree(s: &[u8], i: &mut usize, prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
        let mut path = prefix;
        loop {
            while *i < s.len() && s[*i].is_ascii_whitespace() {
                *i += 1;
            }
            if *i < s.len() && s[*i] == b'{' {
                *i += 1;
                loop {
                    tree(s, i, path.clone(), out);
                    while *i < s.len() && s[*i].is_ascii_whitespace() {
                        *i += 1;
                    }
                    match s.get(*i) {
                        Some(b',') => *i += 1,
                        Some(b'}') => {
                            *i += 1;
                            break;
                        }
                        _ => break,
                    }
                    while *i < s.len() && s[*i].is_ascii_whitespace() {
                        *i += 1;
                    }
                    if s.get(*i) == Some(&b'}') {
                        *i += 1;
                        break;
                    }
                }
                return;
            }
            let start = *i;
            while *i < s.len() && (s[*i].is_ascii_alphanumeric() || s[*i] == b'_') {
                *i += 1;
            }
            if start == *i {
                break;
            }
            path.push(String::from_utf8_lossy(&s[start..*i]).into_owned());
            if s[*i..].starts_with(b"::") {
                *i += 2;
            } else {
                break;
            }
        }
        if !path.is_empty() {
            out.push(path);
        }
    }
    let mut out = Vec::new();
    let mut i = 0;
    tree(s.as_bytes(), &mut i, Vec::new(), &mut out);
    out
}

/// The modules of one crate (by module path) that the non-test code of each imports through
/// `crate::` and `super::` paths: the longest prefix of each path that is a module of the
/// crate, the crate root left out.
fn module_imports(files: &[(String, String)]) -> Vec<(String, String)> {
    let modules: std::collections::BTreeSet<String> = files
        .iter()
        .filter(|(m, _)| !m.is_empty())
        .map(|(m, _)| m.clone())
        .collect();
    let at = regex::Regex::new(r"(^|[^A-Za-z0-9_$])((?:super::)+|\$?crate::)").unwrap();
    let mut edges = Vec::new();
    for (module, text) in files {
        if module.is_empty() {
            continue;
        }
        let code: String = code_lines(text)
            .map(|(_, l)| l.split("//").next().unwrap_or(l))
            .collect::<Vec<_>>()
            .join("\n");
        let own: Vec<&str> = module.split("::").collect();
        for m in at.captures_iter(&code) {
            let head = m.get(2).unwrap();
            let base: Vec<String> = if head.as_str().ends_with("crate::") {
                Vec::new()
            } else {
                let ups = head.as_str().matches("super::").count();
                own[..own.len().saturating_sub(ups)]
                    .iter()
                    .map(|s| s.to_string())
                    .collect()
            };
            for rest in use_paths(&code[head.end()..]) {
                let full: Vec<String> = base.iter().cloned().chain(rest).collect();
                let target = (1..=full.len())
                    .rev()
                    .map(|n| full[..n].join("::"))
                    .find(|p| modules.contains(p));
                if let Some(t) = target.filter(|t| t != module) {
                    edges.push((module.clone(), t));
                }
            }
        }
    }
    edges.sort();
    edges.dedup();
    edges
}

/// Each set of modules of one crate that import each other in a cycle, sorted.
fn cycles_of(files: &[(String, String)]) -> Vec<Vec<String>> {
    let mut graph = petgraph::graphmap::DiGraphMap::<&str, ()>::new();
    let edges = module_imports(files);
    for (a, b) in &edges {
        graph.add_edge(a.as_str(), b.as_str(), ());
    }
    let mut out: Vec<Vec<String>> = petgraph::algo::tarjan_scc(&graph)
        .into_iter()
        .filter(|c| c.len() > 1)
        .map(|c| {
            let mut c: Vec<String> = c.into_iter().map(String::from).collect();
            c.sort();
            c
        })
        .collect();
    out.sort();
    out
}

/// The crates of a repository (directories holding a Cargo.toml and `src/`) and, for each, its
/// `src/` files as (module, text).
fn crates_of(files: &[(String, String)]) -> Vec<(String, Vec<(String, String)>)> {
    let mut roots: Vec<String> = files
        .iter()
        .filter_map(|(rel, _)| rel.strip_suffix("Cargo.toml").map(String::from))
        .collect();
    // The deepest crate directory holding a file owns it.
    roots.sort_by_key(|r| std::cmp::Reverse(r.len()));
    let mut out: Vec<(String, Vec<(String, String)>)> = Vec::new();
    for (rel, text) in files.iter().filter(|(r, _)| r.ends_with(".rs")) {
        let Some(root) = roots.iter().find(|r| rel.starts_with(r.as_str())) else {
            continue;
        };
        let Some(module) = rel[root.len()..].strip_prefix("src/").and_then(module_of) else {
            continue;
        };
        let name = if root.is_empty() {
            "hip-unroll".to_string()
        } else {
            root.trim_end_matches('/').to_string()
        };
        match out.iter_mut().find(|(n, _)| *n == name) {
            Some((_, v)) => v.push((module, text.clone())),
            None => out.push((name, vec![(module, text.clone())])),
        }
    }
    out.sort();
    out
}

/// `module-cycle` over a whole repository, with the cycles `known` allows.
fn check_cycles(files: &[(String, String)], known: &[(&str, &[&str])]) -> Vec<Violation> {
    let mut out = Vec::new();
    for (name, modules) in crates_of(files) {
        for cycle in cycles_of(&modules) {
            let listed = known.iter().any(|(k, set)| {
                *k == name
                    && (set.is_empty() || set.iter().copied().eq(cycle.iter().map(String::as_str)))
            });
            if !listed {
                out.push(Violation {
                    rule: "module-cycle",
                    path: format!("{name}/"),
                    line: 0,
                    text: format!("modules import each other in a cycle: {}", cycle.join(", ")),
                });
            }
        }
    }
    out
}

/// The long flags of the binary, from the `--help` of each command (`--help`/`--version` left
/// out).
fn binary_flags() -> Vec<String> {
    let bin = env!("CARGO_BIN_EXE_hip-unroll");
    let help = |args: &[&str]| {
        let o = std::process::Command::new(bin)
            .args(args)
            .output()
            .expect("run hip-unroll --help");
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let top = help(&["--help"]);
    let commands: Vec<String> = top
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next().map(String::from))
        .filter(|c| c != "help")
        .collect();
    assert!(commands.len() >= 10, "commands from --help: {commands:?}");
    // Option lines only (`  -o, --output-file <FILE>`, `      --force`), not the descriptions.
    let pat = regex::Regex::new(r"(?m)^\s+(?:-[A-Za-z], )?(--[a-z][a-z0-9-]*)").unwrap();
    let mut flags: Vec<String> = commands
        .iter()
        .flat_map(|c| {
            let text = help(&[c, "--help"]);
            pat.captures_iter(&text)
                .map(|m| m[1].to_string())
                .collect::<Vec<_>>()
        })
        .filter(|f| f != "--help" && f != "--version")
        .collect();
    flags.sort();
    flags.dedup();
    flags
}

/// `cli-flag` over one library file: strings of its non-test code that name a flag of `flags`
/// (a string that is only the flag is an argv element, not a message).
fn flag_messages(rel: &str, text: &str, flags: &[String]) -> Vec<Violation> {
    let mut out = Vec::new();
    if is_test_code(rel) || BINARIES.iter().any(|b| rel.starts_with(b)) || !rel.ends_with(".rs") {
        return out;
    }
    let string = regex::Regex::new(r#""((?:[^"\\]|\\.)*)""#).unwrap();
    for (line, l) in code_lines(text) {
        for m in string.captures_iter(l) {
            let content = &m[1];
            let named = flags.iter().find(|f| {
                content.trim() != f.as_str()
                    && content.match_indices(f.as_str()).any(|(i, _)| {
                        let before = content[..i].chars().next_back();
                        let after = content[i + f.len()..].chars().next();
                        !before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
                            && !after
                                .is_some_and(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
                    })
            });
            if let Some(f) = named {
                out.push(Violation {
                    rule: "cli-flag",
                    path: rel.to_string(),
                    line,
                    text: format!("names {f}: {}", l.trim()),
                });
            }
        }
    }
    out
}

/// `cli-flag` over a repository, with how many strings each known file may hold: a file
/// holding more fails, and so does an allowance larger than its file needs (or for a file that
/// is gone), so that the list only ever shrinks to what is left.
fn check_flags(
    files: &[(String, String)],
    flags: &[String],
    known: &[(&str, usize)],
) -> Vec<Violation> {
    let mut out = Vec::new();
    for (rel, text) in files {
        let found = flag_messages(rel, text, flags);
        let allowed = known.iter().find(|(k, _)| k == rel).map_or(0, |(_, n)| *n);
        if found.len() > allowed {
            out.extend(found);
        } else if found.len() < allowed {
            out.push(Violation {
                rule: "cli-flag",
                path: rel.clone(),
                line: 0,
                text: format!(
                    "KNOWN_FLAG_MESSAGES allows {allowed} string(s) naming a flag, the file holds {}: lower the entry",
                    found.len()
                ),
            });
        }
    }
    for (k, n) in known {
        if !files.iter().any(|(rel, _)| rel == k) {
            out.push(Violation {
                rule: "cli-flag",
                path: k.to_string(),
                line: 0,
                text: format!("KNOWN_FLAG_MESSAGES allows {n} string(s) for a file that does not exist: delete the entry"),
            });
        }
    }
    out
}

/// `lints`: `[workspace.lints.clippy]` of the root manifest denies the three, and every crate's
/// manifest inherits it.
fn check_lints(files: &[(String, String)]) -> Vec<Violation> {
    let mut out = Vec::new();
    for (rel, text) in files.iter().filter(|(r, _)| r.ends_with("Cargo.toml")) {
        if rel.starts_with("fuzz/") {
            continue; // not a member of the workspace (cargo-fuzz's own)
        }
        let tables = |name: &str| -> Vec<String> {
            let mut cur = String::new();
            let mut lines = Vec::new();
            for l in text.lines() {
                let t = l.trim();
                if t.starts_with('[') {
                    cur = t.to_string();
                } else if cur == format!("[{name}]") && !t.is_empty() && !t.starts_with('#') {
                    lines.push(t.replace(' ', ""));
                }
            }
            lines
        };
        if rel == "Cargo.toml" {
            let lints = tables("workspace.lints.clippy");
            for lint in ["print_stdout", "print_stderr", "exit"] {
                if !lints.contains(&format!("{lint}=\"deny\"")) {
                    out.push(Violation {
                        rule: "lints",
                        path: rel.clone(),
                        line: 0,
                        text: format!("[workspace.lints.clippy] does not deny {lint}"),
                    });
                }
            }
        }
        if text.contains("[package]") && !tables("lints").contains(&"workspace=true".to_string()) {
            out.push(Violation {
                rule: "lints",
                path: rel.clone(),
                line: 0,
                text:
                    "the crate does not inherit the workspace's lints (`[lints] workspace = true`)"
                        .into(),
            });
        }
    }
    out
}

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every `.rs` and `Cargo.toml` of the repository that git would track (the `ignore` walker
/// honours `.gitignore`, so `target/` is left out).
fn repo_files(root: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for entry in ignore::WalkBuilder::new(root).hidden(true).build() {
        let entry = entry.expect("walk the repository");
        let path = entry.path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if !(name.ends_with(".rs") || name == "Cargo.toml") || !path.is_file() {
            continue;
        }
        let rel = path
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        // Snapshots of third-party or generated code would live under target/ (ignored).
        let text = std::fs::read_to_string(path).expect("read a source file");
        out.push((rel, text));
    }
    out.sort();
    out
}

#[test]
fn workspace_is_tidy() {
    let root = repo_root();
    let files = repo_files(&root);
    assert!(
        files.iter().any(|(r, _)| r == "frontend/src/lib.rs")
            && files.iter().any(|(r, _)| r == "tests/tidy.rs"),
        "the walk must see the workspace's sources ({} files)",
        files.len()
    );
    let flags = binary_flags();
    assert!(flags.iter().any(|f| f == "--force"), "{flags:?}");
    let mut violations: Vec<Violation> = files
        .iter()
        .flat_map(|(rel, text)| check_file(rel, text))
        .collect();
    violations.extend(check_cycles(&files, KNOWN_CYCLES));
    violations.extend(check_flags(&files, &flags, KNOWN_FLAG_MESSAGES));
    violations.extend(check_lints(&files));
    assert!(
        violations.is_empty(),
        "{} tidy violation(s):\n{}",
        violations.len(),
        violations
            .iter()
            .map(|v| v.to_string())
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn every_spawner_exists() {
    // An allowlist entry that no longer exists would silently allow a new file of that name.
    let root = repo_root();
    for s in SPAWNERS {
        assert!(
            root.join(s).is_file(),
            "{s} is listed in SPAWNERS but does not exist"
        );
    }
}

fn rules_of(rel: &str, text: &str) -> Vec<&'static str> {
    check_file(rel, text).into_iter().map(|v| v.rule).collect()
}

#[test]
fn planted_doc_header() {
    assert_eq!(
        rules_of("guards/src/x.rs", "use std::fmt;\n"),
        ["doc-header"]
    );
    assert_eq!(
        rules_of("guards/src/x.rs", "// a plain comment\n//! late doc\n"),
        ["doc-header"]
    );
    assert!(rules_of("guards/src/x.rs", "\n//! What it is for.\nuse std::fmt;\n").is_empty());
}

#[test]
fn planted_tree_sitter() {
    let src = "//! x\nfn f(n: tree_sitter::Node) {}\n";
    assert_eq!(rules_of("guards/src/x.rs", src), ["tree-sitter"]);
    assert_eq!(
        rules_of("tuner/src/x.rs", "//! x\nuse tree_sitter_cuda::LANGUAGE;\n"),
        ["tree-sitter"]
    );
    assert!(rules_of("frontend/src/x.rs", src).is_empty());
    // A name that merely contains the words is not a use.
    assert!(rules_of(
        "src/main.rs",
        "//! x\nfn g() { frontend::use_mimalloc_for_tree_sitter(); }\n"
    )
    .is_empty());
    let manifest = "[package]\nname = \"guards\"\n\n[dependencies]\ntree-sitter.workspace = true\n";
    assert_eq!(rules_of("guards/Cargo.toml", manifest), ["tree-sitter"]);
    assert!(rules_of("frontend/Cargo.toml", manifest).is_empty());
    let ws = "[workspace.dependencies]\ntree-sitter = \"0.25\"\n";
    assert!(rules_of("Cargo.toml", ws).is_empty());
}

#[test]
fn planted_transforms_io() {
    for bad in [
        "//! x\nuse std::fs;\n",
        "//! x\nfn f() { let _ = std::fs::read(\"a\"); }\n",
        "//! x\nuse std::io::Write;\n",
        "//! x\nfn f() { std::process::Command::new(\"cc\"); }\n",
        "//! x\nfn f() { let _ = std::env::var(\"X\"); }\n",
    ] {
        assert!(
            rules_of("transforms/src/manual.rs", bad).contains(&"transforms-io"),
            "{bad}"
        );
    }
    assert!(rules_of(
        "transforms/src/manual.rs",
        "//! x\n/// Unlike std::fs, pure.\nfn f() {}\n"
    )
    .is_empty());
    assert!(rules_of("guards/src/x.rs", "//! x\nuse std::io::Write;\n").is_empty());
}

#[test]
fn planted_sqlite() {
    assert_eq!(
        rules_of("guards/src/x.rs", "//! x\nuse rusqlite::Connection;\n"),
        ["sqlite"]
    );
    assert!(rules_of("tuner/src/ledger.rs", "//! x\nuse rusqlite::Connection;\n").is_empty());
    assert!(rules_of("tests/tune_cli.rs", "//! x\nuse rusqlite::Connection;\n").is_empty());
    let m = "[dependencies]\nrusqlite = { workspace = true }\n";
    assert_eq!(rules_of("codeobj/Cargo.toml", m), ["sqlite"]);
    assert!(rules_of("profiler/Cargo.toml", m).is_empty());
    let dev = "[dev-dependencies]\nrusqlite.workspace = true\n";
    assert!(rules_of("Cargo.toml", dev).is_empty());
}

#[test]
fn planted_spawn() {
    let src = "//! x\nfn f() { std::process::Command::new(\"ls\").status().ok(); }\n";
    assert_eq!(rules_of("guards/src/x.rs", src), ["spawn"]);
    assert_eq!(rules_of("src/cli/profile.rs", src), ["spawn"]);
    assert_eq!(
        rules_of("runner/src/build.rs", "//! x\nuse std::process::Command;\n"),
        ["spawn"]
    );
    assert!(rules_of("codeobj/src/compile.rs", src).is_empty());
    assert!(rules_of("guards/tests/t.rs", src).is_empty());
}

#[test]
fn planted_print() {
    for bad in [
        "//! x\nfn f() { println!(\"hi\"); }\n",
        "//! x\nfn f() { eprintln!(\"hi\"); }\n",
        "//! x\nfn f() { eprint!(\"hi\"); }\n",
        "//! x\nfn f(x: u8) { dbg!(x); }\n",
        "//! x\nfn f() { std::process::exit(2); }\n",
    ] {
        assert_eq!(rules_of("profiler/src/x.rs", bad), ["print"], "{bad}");
    }
    let ok = "//! x\nfn f() -> String { format!(\"hi\") }\n#[cfg(test)]\nmod t { fn g() { println!(\"x\"); } }\n";
    assert!(rules_of("profiler/src/x.rs", ok).is_empty());
    // A `#[cfg(test)]` item in the middle of a file does not hide the code after it.
    let mid = "//! x\n#[cfg(test)]\nfn helper() {}\nfn f() { println!(\"hi\"); }\n";
    assert_eq!(rules_of("profiler/src/x.rs", mid), ["print"]);
    assert!(rules_of("src/cli/check.rs", "//! x\nfn f() { println!(\"hi\"); }\n").is_empty());
}

#[test]
fn planted_user_files() {
    for bad in [
        "//! x\nfn f() { let _ = std::fs::read(\"a\"); }\n",
        "//! x\nfn f() { std::fs::write(\"a\", \"b\").ok(); }\n",
        "//! x\nfn f() { let _ = std::fs::File::create(\"a\"); }\n",
        "//! x\nfn f() { let _ = tempfile::NamedTempFile::new(); }\n",
    ] {
        assert_eq!(rules_of("src/cli/check.rs", bad), ["user-files"], "{bad}");
    }
    let ok = "//! x\nfn f() { let _ = fsio::read_source(p); let _ = std::fs::metadata(p); }\n";
    assert!(rules_of("src/cli/check.rs", ok).is_empty());
    assert!(rules_of(
        "fsio/src/write.rs",
        "//! x\nfn f() { std::fs::rename(\"a\", \"b\").ok(); }\n"
    )
    .is_empty());
}

/// A temporary tree of files (relative path, text), read back as the workspace walk reads it.
fn planted_tree(files: &[(&str, &str)]) -> (tempfile::TempDir, Vec<(String, String)>) {
    let dir = tempfile::tempdir().unwrap();
    for (rel, text) in files {
        let p = dir.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    let read = repo_files(dir.path());
    (dir, read)
}

#[test]
fn planted_module_cycle() {
    let (_d, files) = planted_tree(&[
        ("Cargo.toml", "[package]\nname = \"x\"\n"),
        (
            "src/lib.rs",
            "//! x\nmod error;\nmod session;\nmod build;\npub use crate::error::E;\n",
        ),
        ("src/error.rs", "//! x\nuse crate::session::OutputDiff;\n"),
        (
            "src/session.rs",
            "//! x\nuse crate::{build::{build, Built}, compare};\n",
        ),
        (
            "src/build.rs",
            "//! x\npub fn f() -> Result<(), super::error::E> { todo!() }\n",
        ),
        (
            "src/compare.rs",
            "//! x\n// use crate::error;\n#[cfg(test)]\nmod tests {\n    use crate::error::E;\n}\n",
        ),
        ("inner/Cargo.toml", "[package]\nname = \"inner\"\n"),
        ("inner/src/lib.rs", "//! x\nmod a;\nmod b;\n"),
        ("inner/src/a/mod.rs", "//! x\nmod c;\n"),
        ("inner/src/a/c.rs", "//! x\nuse super::super::b::B;\n"),
        (
            "inner/src/b.rs",
            "//! x\nuse crate::a::Thing;\nuse crate::a::c::C;\n",
        ),
    ]);
    let v = check_cycles(&files, &[]);
    let shown: Vec<String> = v.iter().map(|v| v.to_string()).collect();
    assert_eq!(
        shown,
        [
            "hip-unroll/:0: [module-cycle] modules import each other in a cycle: build, error, session",
            "inner/:0: [module-cycle] modules import each other in a cycle: a::c, b",
        ],
        "{shown:#?}"
    );
    // A listed cycle is allowed, exactly.
    assert_eq!(check_cycles(&files, &[("inner", &["a::c", "b"])]).len(), 1);
    assert_eq!(check_cycles(&files, &[("inner", &["a::c"])]).len(), 2);
    // Without the back edge there is no cycle (comments and test modules do not count).
    let (_d, files) = planted_tree(&[
        ("Cargo.toml", "[package]\nname = \"x\"\n"),
        ("src/error.rs", "//! x\nuse crate::compare::OutputDiff;\n"),
        (
            "src/session.rs",
            "//! x\nuse crate::{build::{build, Built}, compare};\n",
        ),
        (
            "src/build.rs",
            "//! x\npub fn f() -> Result<(), super::error::E> { todo!() }\n",
        ),
        (
            "src/compare.rs",
            "//! x\n// use crate::error;\n#[cfg(test)]\nmod tests {\n    use crate::error::E;\n}\n",
        ),
    ]);
    assert!(check_cycles(&files, &[]).is_empty());
}

/// Code below a test module is code: the runner's `device.rs` once called `crate::hip::...`
/// from a function placed after its `#[cfg(test)] mod tests`, and the cycle went unseen. The
/// module ends at its closing brace, whatever braces its strings, characters and comments hold.
#[test]
fn planted_code_after_the_test_module() {
    let device = r##"//! x
pub struct Info;
#[cfg(test)]
mod tests {
    use crate::hip::Dev;
    const K: &str = "__global__ void k() {
    }}";
    const R: &str = r#"{ "}" "#;
    fn f() -> char { let _ = '}'; let _ = '\''; '{' }
    /* } */
    fn g<'a>(x: &'a str) -> &'a str { x }
}

pub fn gpus() -> String {
    crate::hip::gfx_name(1)
}
"##;
    let (_d, files) = planted_tree(&[
        ("Cargo.toml", "[package]\nname = \"runner\"\n"),
        ("src/lib.rs", "//! x\nmod device;\nmod hip;\n"),
        ("src/device.rs", device),
        ("src/hip.rs", "//! x\nuse crate::device::Info;\n"),
    ]);
    let shown: Vec<String> = check_cycles(&files, &[])
        .iter()
        .map(|v| v.to_string())
        .collect();
    assert_eq!(
        shown,
        ["hip-unroll/:0: [module-cycle] modules import each other in a cycle: device, hip"]
    );
    // The test module itself is not code: its import alone makes no cycle.
    let tests_only = device.replace("crate::hip::gfx_name(1)", "String::new()");
    let (_d, files) = planted_tree(&[
        ("Cargo.toml", "[package]\nname = \"runner\"\n"),
        ("src/device.rs", &tests_only),
        ("src/hip.rs", "//! x\nuse crate::device::Info;\n"),
    ]);
    assert!(check_cycles(&files, &[]).is_empty());
    // The grep rules read it too: a process spawned below the tests is found, one inside them
    // is not.
    let spawn = "//! x\n#[cfg(test)]\nmod tests {\n    fn t() { std::process::Command::new(\"a\"); }\n}\nfn f() { std::process::Command::new(\"ls\"); }\n";
    let found = check_file("guards/src/x.rs", spawn);
    assert_eq!(
        found.iter().map(|v| (v.rule, v.line)).collect::<Vec<_>>(),
        [("spawn", 6)]
    );
    // A test module declared by `mod tests;` ends on its line.
    let decl = "//! x\n#[cfg(test)]\nmod tests;\nfn f() { std::process::Command::new(\"ls\"); }\n";
    assert_eq!(rules_of("guards/src/x.rs", decl), ["spawn"]);
}

#[test]
fn planted_cli_flag() {
    let flags = vec![
        "--backend".to_string(),
        "--force".to_string(),
        "--pmc".to_string(),
    ];
    let msg = "//! x\nfn f() -> String { format!(\"no runtime; use --backend cuda\") }\n";
    let v = flag_messages("runner/src/hip.rs", msg, &flags);
    assert_eq!(v.len(), 1, "{v:?}");
    assert_eq!(v[0].rule, "cli-flag");
    let files = vec![("runner/src/hip.rs".to_string(), msg.to_string())];
    assert_eq!(check_flags(&files, &flags, &[]).len(), 1);
    assert!(check_flags(&files, &flags, &[("runner/src/hip.rs", 1)]).is_empty());
    // A stale allowance fails: larger than the file needs, or for a file that is gone.
    let stale = check_flags(&files, &flags, &[("runner/src/hip.rs", 2)]);
    assert_eq!(stale.len(), 1, "{stale:?}");
    assert!(stale[0].text.contains("allows 2"), "{stale:?}");
    let gone = check_flags(
        &files,
        &flags,
        &[("runner/src/hip.rs", 1), ("runner/src/gone.rs", 1)],
    );
    assert_eq!(gone.len(), 1, "{gone:?}");
    assert_eq!(gone[0].path, "runner/src/gone.rs");
    for ok in [
        // An argv element of another tool that shares the flag's name.
        "//! x\nfn f(v: &mut Vec<String>) { v.push(\"--pmc\".into()); }\n",
        // Another flag that starts the same.
        "//! x\nconst C: &str = \"hipcc --backend-x {src}\";\n",
        // Comments, docs and tests.
        "//! Use --force.\n// --force\nfn f() {}\n#[cfg(test)]\nmod t { const S: &str = \"use --force\"; }\n",
    ] {
        assert!(flag_messages("runner/src/hip.rs", ok, &flags).is_empty(), "{ok}");
    }
    // The binary and tests may name flags.
    assert!(flag_messages("src/cli/unroll.rs", msg, &flags).is_empty());
    assert!(flag_messages("runner/tests/t.rs", msg, &flags).is_empty());
}

#[test]
fn planted_lints() {
    let root = "[workspace]\nmembers = [\"a\"]\n\n[workspace.lints.clippy]\nprint_stdout = \"deny\"\nprint_stderr = \"deny\"\nexit = \"deny\"\n\n[package]\nname = \"x\"\n\n[lints]\nworkspace = true\n";
    let member = "[package]\nname = \"a\"\n\n[lints]\nworkspace = true\n";
    let files = |r: &str, m: &str| {
        vec![
            ("Cargo.toml".to_string(), r.to_string()),
            ("a/Cargo.toml".to_string(), m.to_string()),
        ]
    };
    assert!(check_lints(&files(root, member)).is_empty());
    let v = check_lints(&files(&root.replace("exit = \"deny\"\n", ""), member));
    assert_eq!(v.len(), 1, "{v:?}");
    assert!(v[0].text.contains("exit"));
    let v = check_lints(&files(root, "[package]\nname = \"a\"\n"));
    assert_eq!(v.len(), 1, "{v:?}");
    assert_eq!(v[0].path, "a/Cargo.toml");
}
