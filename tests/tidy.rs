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

use std::path::{Path, PathBuf};

/// The only non-test source files allowed to start a process (ARCHITECTURE.md, "processes are
/// spawned only by ...").
const SPAWNERS: &[&str] = &[
    "childproc/src/lib.rs", // every compiler and user command, in its own process group
    "codeobj/src/compile.rs", // the compiler (hipcc, clang), through childproc
    "profiler/src/run.rs",  // rocprofv3 / rocprof, and rocm_agent_enumerator (the local GPU)
    "tuner/src/shell.rs",   // the user's build, run and check commands; rocprofv3 for the backend
    "replay/src/launch.rs", // `capture`: the application under HSA_TOOLS_LIB
    "tuner/src/executor/slurm.rs", // `tune --executor slurm`: one srun job step per lane
];

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
}

/// The lines of a Rust file that are code outside its `#[cfg(test)]` test module (the
/// attribute followed by a `mod` line; a `#[cfg(test)]` on a single item does not end the
/// code), without line comments (doc comments may name what they forbid).
fn code_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let lines: Vec<&str> = text.lines().collect();
    let test_mod = (0..lines.len()).find(|&i| {
        lines[i].trim() == "#[cfg(test)]"
            && lines[i + 1..]
                .iter()
                .find(|l| !l.trim().is_empty())
                .is_some_and(|l| {
                    let l = l.trim_start();
                    l.starts_with("mod ")
                        || l.starts_with("pub mod ")
                        || l.starts_with("pub(crate) mod ")
                })
    });
    lines
        .into_iter()
        .enumerate()
        .take(test_mod.unwrap_or(usize::MAX))
        .filter(|(_, l)| !l.trim_start().starts_with("//"))
        .map(|(i, l)| (i + 1, l))
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
    let violations: Vec<Violation> = files
        .iter()
        .flat_map(|(rel, text)| check_file(rel, text))
        .collect();
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
