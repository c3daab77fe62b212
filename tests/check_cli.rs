//! End-to-end tests of `hip-unroll check` and `hip-unroll explain`: the real binary on the
//! fixtures of `testdata/cli/` and on malformed input generated here (exit codes, formats,
//! walking, config discovery, rule selection).
#![allow(clippy::print_stdout, clippy::print_stderr, clippy::exit)]

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_hip-unroll");

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Run the binary in `cwd` (no color, whatever the caller's environment).
fn run_in(cwd: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir(cwd)
        .env("NO_COLOR", "1")
        .output()
        .expect("run hip-unroll")
}

fn run(args: &[&str]) -> Output {
    run_in(&root(), args)
}

fn code(o: &Output) -> i32 {
    o.status
        .code()
        .unwrap_or_else(|| panic!("killed by a signal: {}", stderr(o)))
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn json(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}\n{}", stdout(o), stderr(o)))
}

/// Paths of the `files` of a JSON report, sorted as reported.
fn files(v: &Value) -> Vec<String> {
    v["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap().to_string())
        .collect()
}

fn rules(v: &Value) -> Vec<String> {
    v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["rule"].as_str().unwrap().to_string())
        .collect()
}

/// A malformed-input run must end normally: a report (0/1) and never a panic or a signal.
fn assert_no_crash(o: &Output) {
    let c = code(o);
    let err = stderr(o);
    assert!(
        !err.contains("panicked") && !err.contains("internal error") && !err.contains("overflow"),
        "{err}"
    );
    assert!(c == 0 || c == 1, "exit {c}: {err}");
}

// ---------------------------------------------------------------- exit codes

#[test]
fn clean_file_exits_0() {
    let o = run(&["check", "testdata/cli/clean.cu"]);
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    assert!(
        stdout(&o).contains("1 file, 2 kernels, 2 loops"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn findings_exit_1_and_fail_on_moves_the_threshold() {
    let o = run(&["check", "testdata/cli/blocked.cu"]);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    let o = run(&["check", "--fail-on", "error", "testdata/cli/blocked.cu"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    // Hints do not fail by default, but do with --fail-on hint.
    let o = run(&[
        "check",
        "--hints",
        "--format",
        "json",
        "testdata/cli/clean.cu",
    ]);
    assert_eq!(code(&o), 0);
    assert!(
        rules(&json(&o)).iter().any(|r| r == "candidate"),
        "{}",
        stdout(&o)
    );
    let o = run(&[
        "check",
        "--hints",
        "--fail-on",
        "hint",
        "testdata/cli/clean.cu",
    ]);
    assert_eq!(code(&o), 1);
}

#[test]
fn missing_path_exits_2_naming_it_and_still_reports_the_rest() {
    let o = run(&[
        "check",
        "--format",
        "json",
        "testdata/cli/clean.cu",
        "testdata/cli/no-such-file.cu",
    ]);
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("testdata/cli/no-such-file.cu"),
        "{}",
        stderr(&o)
    );
    assert_eq!(files(&json(&o)), ["testdata/cli/clean.cu"]);
}

#[cfg(unix)]
#[test]
fn unreadable_file_exits_2() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("locked.cu");
    std::fs::write(&f, "__global__ void k() {}\n").unwrap();
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o000)).unwrap();
    if testenv::lacks(
        "non-root",
        std::fs::read(&f).is_err(),
        "running as root: file permissions do not apply",
    ) {
        return;
    }
    let o = run_in(dir.path(), &["check", "locked.cu"]);
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("locked.cu") && stderr(&o).contains("permission denied"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn directory_without_sources_exits_0() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "nothing to check").unwrap();
    let o = run_in(dir.path(), &["check"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(stdout(&o).contains("0 files"), "{}", stdout(&o));
}

#[test]
fn unknown_rule_id_exits_2_with_the_known_ids() {
    for flag in ["--select", "--ignore"] {
        let o = run(&[
            "check",
            flag,
            "barrier,no-such-rule",
            "testdata/cli/clean.cu",
        ]);
        assert_eq!(code(&o), 2, "{flag}");
        let err = stderr(&o);
        assert!(
            err.contains("no-such-rule") && err.contains("known rule ids:"),
            "{err}"
        );
        assert_eq!(err.lines().count(), 1, "one line: {err}");
        for id in [
            "barrier",
            "atomic",
            "dynamic-lds",
            "early-exit",
            "wave-size",
            "unroll-blocked",
        ] {
            assert!(err.contains(id), "{id} missing from {err}");
        }
    }
}

#[test]
fn usage_errors_exit_2() {
    assert_eq!(
        code(&run(&["check", "--format", "xml", "testdata/cli/clean.cu"])),
        2
    );
    assert_eq!(
        code(&run(&[
            "check",
            "--fail-on",
            "fatal",
            "testdata/cli/clean.cu"
        ])),
        2
    );
    assert_eq!(
        code(&run(&[
            "check",
            "--format",
            "json",
            "--statistics",
            "testdata/cli/clean.cu"
        ])),
        2
    );
    assert_eq!(
        code(&run(&[
            "check",
            "--config",
            "testdata/cli/none.toml",
            "testdata/cli/clean.cu"
        ])),
        2
    );
    let o = run(&["check", "--config", "testdata/cli", "testdata/cli/clean.cu"]);
    assert_eq!(code(&o), 2);
    assert_eq!(
        stderr(&o).trim(),
        "error: config file testdata/cli: is a directory, not a file"
    );
    let o = run(&[
        "check",
        "--hsaco",
        "testdata/cli/none.hsaco",
        "testdata/cli/clean.cu",
    ]);
    assert_eq!(code(&o), 2);
    assert_eq!(
        stderr(&o).matches("testdata/cli/none.hsaco").count(),
        1,
        "names the file once: {}",
        stderr(&o)
    );
}

// ---------------------------------------------------------------- formats

fn blocked(format: &str) -> Output {
    let o = run(&[
        "check",
        "--hints",
        "--format",
        format,
        "testdata/cli/blocked.cu",
    ]);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    o
}

#[test]
fn human_format_snapshot() {
    let o = blocked("human");
    let text = stdout(&o);
    assert!(!text.contains('\x1b'), "no color when not a terminal");
    insta::assert_snapshot!("human", text);
}

#[test]
fn json_format_snapshot_and_contract() {
    let o = blocked("json");
    let v = json(&o);
    assert_eq!(v["version"], 1);
    assert_eq!(files(&v), ["testdata/cli/blocked.cu"]);
    let f = &v["files"][0];
    assert_eq!(f["parse_errors"], 0);
    assert_eq!(f["parsed"], true);
    let names: Vec<&str> = f["functions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"scale") && names.contains(&"search") && names.contains(&"wave"),
        "{names:?}"
    );
    let scale = f["functions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"] == "scale")
        .unwrap();
    assert_eq!(scale["kind"], "kernel");
    let loops = scale["loops"].as_array().unwrap();
    assert_eq!(loops.len(), 3);
    assert_eq!(loops[0]["id"], "scale:0");
    assert_eq!(loops[0]["line"], 13);
    assert_eq!(loops[0]["column"], 5);
    assert_eq!(loops[0]["kind"], "for");
    assert_eq!(loops[0]["verdict"], "blocked");
    assert_eq!(loops[0]["blockers"], serde_json::json!(["barrier"]));
    assert_eq!(loops[1]["blockers"], serde_json::json!(["atomic"]));
    assert_eq!(loops[2]["verdict"], "candidate");
    assert_eq!(loops[2]["trip_count"], 8);
    let diags = v["diagnostics"].as_array().unwrap();
    for d in diags {
        let mut keys: Vec<&str> = d.as_object().unwrap().keys().map(|k| k.as_str()).collect();
        keys.sort_unstable();
        // `fix` only where the rule gives one (here: the wave-size shuffle width), absent
        // elsewhere so that reports without fixes keep their exact shape.
        let has_fix = keys.contains(&"fix");
        keys.retain(|k| *k != "fix");
        assert_eq!(
            keys,
            ["column", "line", "message", "path", "rule", "severity"]
        );
        assert_eq!(has_fix, d["rule"] == "wave-size", "{d}");
    }
    // The contract's key order, in the text itself.
    let text = stdout(&o);
    let order = [
        "\"path\":",
        "\"line\":",
        "\"column\":",
        "\"rule\":",
        "\"severity\":",
        "\"message\":",
    ];
    let at: Vec<usize> = order.iter().map(|k| text.rfind(k).unwrap()).collect();
    assert!(at.windows(2).all(|w| w[0] < w[1]), "{text}");
    let lines: Vec<(u64, &str)> = diags
        .iter()
        .map(|d| (d["line"].as_u64().unwrap(), d["rule"].as_str().unwrap()))
        .collect();
    // `unroll-blocked` points at the pragma, the others at the loop or the offending code.
    for want in [
        (12, "unroll-blocked"),
        (16, "unroll-blocked"),
        (20, "candidate"),
        (37, "wave-size"),
    ] {
        assert!(lines.contains(&want), "{want:?} not in {lines:?}");
    }
    // The pragma over the early-exit loop (line 26) is the compiler's business (issue 26).
    assert!(!lines.contains(&(26, "unroll-blocked")), "{lines:?}");
    insta::assert_snapshot!("json", stdout(&o));
}

#[test]
fn sarif_format_is_structurally_valid_2_1_0() {
    let o = blocked("sarif");
    let v = json(&o);
    assert_eq!(v["version"], "2.1.0");
    assert!(v["$schema"]
        .as_str()
        .unwrap()
        .contains("sarif-schema-2.1.0"));
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1);
    let driver = &runs[0]["tool"]["driver"];
    assert_eq!(driver["name"], "hip-unroll");
    let rules = driver["rules"].as_array().unwrap();
    let mut ids: Vec<&str> = rules.iter().map(|r| r["id"].as_str().unwrap()).collect();
    for r in rules {
        assert!(
            !r["shortDescription"]["text"].as_str().unwrap().is_empty(),
            "{r}"
        );
        assert!(
            !r["fullDescription"]["text"].as_str().unwrap().is_empty(),
            "{r}"
        );
    }
    let n = ids.len();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), n, "rule ids are unique");
    let results = runs[0]["results"].as_array().unwrap();
    assert!(results.len() >= 4);
    for r in results {
        let rule = r["ruleId"].as_str().unwrap();
        assert_eq!(rules[r["ruleIndex"].as_u64().unwrap() as usize]["id"], rule);
        assert!(["none", "note", "warning", "error"].contains(&r["level"].as_str().unwrap()));
        assert!(!r["message"]["text"].as_str().unwrap().is_empty());
        let loc = &r["locations"][0]["physicalLocation"];
        assert_eq!(loc["artifactLocation"]["uri"], "testdata/cli/blocked.cu");
        let region = &loc["region"];
        assert!(region["startLine"].as_u64().unwrap() >= 1);
        assert!(region["startColumn"].as_u64().unwrap() >= 1);
        if let Some(end) = region["endLine"].as_u64() {
            assert!(end >= region["startLine"].as_u64().unwrap());
        }
        for rel in r["relatedLocations"].as_array().into_iter().flatten() {
            assert!(
                rel["physicalLocation"]["region"]["startLine"]
                    .as_u64()
                    .unwrap()
                    >= 1
            );
            assert!(!rel["message"]["text"].as_str().unwrap().is_empty());
        }
    }
    // The rules' documentation belongs to `guards` (and to `explain`'s tests): the snapshot pins
    // where SARIF puts it, not its wording, so that editing a rule's doc does not break it.
    let mut text = stdout(&o);
    for r in rules {
        let doc = serde_json::to_string(&r["fullDescription"]["text"]).unwrap();
        text = text.replace(&doc, &format!("\"<doc of {}>\"", r["id"].as_str().unwrap()));
    }
    insta::assert_snapshot!("sarif", text);
}

#[test]
fn github_format_snapshot() {
    let o = blocked("github");
    let text = stdout(&o);
    for line in text.lines() {
        assert!(
            line.starts_with("::warning file=testdata/cli/blocked.cu,line=")
                || line.starts_with("::notice file="),
            "{line}"
        );
    }
    insta::assert_snapshot!("github", text);
}

// ---------------------------------------------------------------- walking

#[test]
fn walk_honours_gitignore_hidden_and_extensions() {
    let o = run(&["check", "--format", "json", "testdata/cli/walk"]);
    assert_eq!(
        files(&json(&o)),
        [
            "testdata/cli/walk/a.cu",
            "testdata/cli/walk/nested/d.hip",
            "testdata/cli/walk/nested/deep/c.cuh"
        ]
    );
    let o = run(&[
        "check",
        "--format",
        "json",
        "--no-ignore",
        "testdata/cli/walk",
    ]);
    assert_eq!(
        files(&json(&o)),
        [
            "testdata/cli/walk/a.cu",
            "testdata/cli/walk/build/b.cu",
            "testdata/cli/walk/ignored.cu",
            "testdata/cli/walk/nested/d.hip",
            "testdata/cli/walk/nested/deep/c.cuh",
        ]
    );
    // A file named explicitly is checked whatever its extension or ignore status.
    let o = run(&[
        "check",
        "--format",
        "json",
        "testdata/cli/walk/notes.txt",
        "testdata/cli/walk/ignored.cu",
    ]);
    assert_eq!(
        files(&json(&o)),
        [
            "testdata/cli/walk/ignored.cu",
            "testdata/cli/walk/notes.txt"
        ]
    );
    // The walk is relative to the current directory when no path is given; `./` is dropped.
    let o = run_in(
        &root().join("testdata/cli/walk"),
        &["check", "--format", "json"],
    );
    assert_eq!(
        files(&json(&o)),
        ["a.cu", "nested/d.hip", "nested/deep/c.cuh"]
    );
}

#[test]
fn gitignore_outside_a_git_repository_is_honoured() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(".gitignore"), "skip.cu\n").unwrap();
    std::fs::write(dir.path().join("keep.cu"), "__global__ void k() {}\n").unwrap();
    std::fs::write(dir.path().join("skip.cu"), "__global__ void k() {}\n").unwrap();
    let o = run_in(dir.path(), &["check", "--format", "json", "."]);
    assert_eq!(files(&json(&o)), ["keep.cu"]);
}

/// chipStar's samples are `.cc`: a directory walk takes every usual C++ source and header
/// extension, and `extend-include` patterns of the config add more (as ruff's).
#[test]
fn walk_takes_cpp_extensions_and_extend_include() {
    let dir = tempfile::tempdir().unwrap();
    let k = "__global__ void k(float* t) { for (int i = 0; i < 4; ++i) t[i] = 0.f; }\n";
    for name in [
        "a.cc",
        "b.cxx",
        "c.hh",
        "d.inl",
        "e.cu",
        "f.cl",
        "g.txt",
        "h.c",
        "sub/i.cl",
        "sub/j.kern",
    ] {
        let p = dir.path().join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, k).unwrap();
    }
    let o = run_in(dir.path(), &["check", "--format", "json", "."]);
    assert_eq!(files(&json(&o)), ["a.cc", "b.cxx", "c.hh", "d.inl", "e.cu"]);
    std::fs::write(
        dir.path().join("hip-unroll.toml"),
        "[check]\nextend-include = [\"*.cl\", \"sub/*.kern\"]\nexclude = [\"sub/i.cl\"]\n",
    )
    .unwrap();
    let o = run_in(dir.path(), &["check", "--format", "json", "."]);
    assert_eq!(
        files(&json(&o)),
        [
            "a.cc",
            "b.cxx",
            "c.hh",
            "d.inl",
            "e.cu",
            "f.cl",
            "sub/j.kern"
        ]
    );
}

/// `unroll-blocked` is a hint by default (exit 0 at the default fail-on level) and can be
/// raised per rule in `[check.severity]`; unknown rule ids there are an error.
#[test]
fn severity_of_a_rule_is_configurable() {
    let dir = tempfile::tempdir().unwrap();
    let k = "__global__ void k(float* t) {\n#pragma unroll\n  for (int i = 0; i < 4; ++i) { t[i] = 0.f; __syncthreads(); }\n}\n";
    std::fs::write(dir.path().join("k.cu"), k).unwrap();
    let o = run_in(dir.path(), &["check", "--format", "json", "k.cu"]);
    assert_eq!(code(&o), 0, "{}", stdout(&o));
    assert_eq!(json(&o)["diagnostics"][0]["severity"], "hint");
    std::fs::write(
        dir.path().join("hip-unroll.toml"),
        "[check.severity]\nunroll-blocked = \"error\"\n",
    )
    .unwrap();
    let o = run_in(dir.path(), &["check", "--format", "json", "k.cu"]);
    assert_eq!(code(&o), 1);
    assert_eq!(json(&o)["diagnostics"][0]["severity"], "error");
    std::fs::write(
        dir.path().join("hip-unroll.toml"),
        "[check.severity]\nunroll-blockd = \"error\"\n",
    )
    .unwrap();
    let o = run_in(dir.path(), &["check", "k.cu"]);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("unroll-blockd"), "{}", stderr(&o));
}

// ---------------------------------------------------------------- config

#[test]
fn nearest_config_applies_per_directory() {
    // project/hip-unroll.toml: fail-on error, exclude generated/; project/sub/: fail-on warning.
    let o = run(&["check", "--format", "json", "testdata/cli/project"]);
    let v = json(&o);
    assert_eq!(
        files(&v),
        [
            "testdata/cli/project/src/kernel.cu",
            "testdata/cli/project/sub/kernel.cu"
        ]
    );
    assert_eq!(code(&o), 1, "sub/ fails on its warning");
    let o = run(&["check", "testdata/cli/project/src"]);
    assert_eq!(
        code(&o),
        0,
        "src/ has a warning but its config fails on errors only"
    );
    // CLI flags override the config.
    let o = run(&["check", "--fail-on", "error", "testdata/cli/project"]);
    assert_eq!(code(&o), 0);
    let o = run(&["check", "--fail-on", "warning", "testdata/cli/project/src"]);
    assert_eq!(code(&o), 1);
}

#[test]
fn exclude_applies_to_walks_and_with_force_exclude_to_named_files() {
    let gen = "testdata/cli/project/generated/gen.cu";
    let o = run(&["check", "--format", "json", gen]);
    assert_eq!(files(&json(&o)), [gen]);
    let o = run(&["check", "--format", "json", "--force-exclude", gen]);
    assert!(files(&json(&o)).is_empty());
    assert_eq!(code(&o), 0);
}

#[test]
fn explicit_config_replaces_discovery() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("strict.toml");
    std::fs::write(&cfg, "[check]\nfail-on = \"error\"\n").unwrap();
    let o = run(&[
        "check",
        "--config",
        cfg.to_str().unwrap(),
        "testdata/cli/project/sub",
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
}

#[test]
fn bad_config_exits_2_naming_the_file() {
    // Generated here, not committed: a broken config in the tree would make `check .` at the
    // repository root exit 2.
    let dir = tempfile::tempdir().unwrap();
    for (name, config) in [
        (
            "bad-config",
            "[check]\nselect = [\"barrier\"]\nfail_level = \"error\"\n",
        ),
        ("bad-toml", "[check\nselect = \n"),
    ] {
        std::fs::create_dir(dir.path().join(name)).unwrap();
        std::fs::write(dir.path().join(name).join("hip-unroll.toml"), config).unwrap();
        std::fs::copy(
            root().join("testdata/cli/clean.cu"),
            dir.path().join(name).join("k.cu"),
        )
        .unwrap();
    }
    let o = run_in(dir.path(), &["check", "bad-config"]);
    assert_eq!(code(&o), 2);
    let err = stderr(&o);
    assert!(
        err.contains("fail_level") && err.contains("bad-config/hip-unroll.toml"),
        "{err}"
    );
    let o = run_in(dir.path(), &["check", "bad-toml/k.cu"]);
    assert_eq!(code(&o), 2);
    let err = stderr(&o);
    assert!(
        err.contains("invalid TOML") && err.contains("bad-toml/hip-unroll.toml"),
        "{err}"
    );
}

#[test]
fn unknown_rule_in_config_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("hip-unroll.toml"),
        "[check]\nignore = [\"barier\"]\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("k.cu"), "__global__ void k() {}\n").unwrap();
    let o = run_in(dir.path(), &["check"]);
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("barier") && stderr(&o).contains("hip-unroll.toml"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn config_hints_and_cli_override() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("hip-unroll.toml"),
        "[check]\nhints = true\n",
    )
    .unwrap();
    std::fs::copy(
        root().join("testdata/cli/clean.cu"),
        dir.path().join("k.cu"),
    )
    .unwrap();
    let o = run_in(dir.path(), &["check", "--format", "json"]);
    assert!(
        rules(&json(&o)).contains(&"candidate".to_string()),
        "{}",
        stdout(&o)
    );
    let o = run_in(dir.path(), &["check", "--format", "json", "--no-hints"]);
    assert!(rules(&json(&o)).is_empty(), "{}", stdout(&o));
}

// ---------------------------------------------------------------- rule selection

#[test]
fn select_and_ignore_filter_findings() {
    let o = run(&[
        "check",
        "--format",
        "json",
        "--select",
        "wave-size",
        "testdata/cli/blocked.cu",
    ]);
    let r = rules(&json(&o));
    assert!(!r.is_empty() && r.iter().all(|r| r == "wave-size"), "{r:?}");
    let o = run(&[
        "check",
        "--format",
        "json",
        "--ignore",
        "wave-size",
        "testdata/cli/blocked.cu",
    ]);
    let r = rules(&json(&o));
    assert!(
        r.contains(&"unroll-blocked".to_string()) && !r.contains(&"wave-size".to_string()),
        "{r:?}"
    );
    let o = run(&[
        "check",
        "--ignore",
        "wave-size,unroll-blocked",
        "testdata/cli/blocked.cu",
    ]);
    assert_eq!(code(&o), 0, "{}", stdout(&o));
}

// ---------------------------------------------------------------- malformed input

#[test]
fn empty_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("empty.cu"), "").unwrap();
    let o = run_in(dir.path(), &["check", "--format", "json", "empty.cu"]);
    assert_no_crash(&o);
    assert_eq!(code(&o), 0);
    assert_eq!(files(&json(&o)), ["empty.cu"]);
}

#[test]
fn non_utf8_file_is_analysed() {
    let dir = tempfile::tempdir().unwrap();
    let mut src =
        b"// caf\xe9 in Latin-1\n__global__ void k(float* t) {\n#pragma unroll\n".to_vec();
    src.extend_from_slice(
        b"    for (int i = 0; i < 4; ++i) { t[i] = 1.0f; __syncthreads(); } // \xff\xfe\n}\n",
    );
    std::fs::write(dir.path().join("latin1.cu"), &src).unwrap();
    let o = run_in(dir.path(), &["check", "--format", "json", "latin1.cu"]);
    assert_no_crash(&o);
    let v = json(&o);
    assert_eq!(v["files"][0]["functions"][0]["name"], "k");
    assert_eq!(rules(&v), ["unroll-blocked"]);
    // The code frame shows the line with the invalid bytes replaced, not a crash.
    let o = run_in(dir.path(), &["check", "latin1.cu"]);
    assert_eq!(code(&o), 0, "unroll-blocked is a hint by default");
    assert!(
        stdout(&o).contains("for (int i = 0; i < 4; ++i)"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn binary_garbage() {
    let dir = tempfile::tempdir().unwrap();
    // Deterministic pseudo-random bytes (xorshift), with NULs and every byte value.
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let bytes: Vec<u8> = (0..256 * 1024)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect();
    std::fs::write(dir.path().join("garbage.cu"), &bytes).unwrap();
    for format in ["human", "json", "sarif", "github"] {
        let o = run_in(dir.path(), &["check", "--format", format, "garbage.cu"]);
        assert_no_crash(&o);
    }
}

#[test]
fn deeply_nested_input() {
    let dir = tempfile::tempdir().unwrap();
    let depth = 20_000;
    let mut src = String::from("__global__ void k(float* t) {\n    for (int i = 0; i < 4; ++i) ");
    src.push_str(&"{".repeat(depth));
    src.push_str("t[i] = 0.0f;");
    src.push_str(&"}".repeat(depth));
    src.push_str("\n    float v = ");
    src.push_str(&"(".repeat(depth));
    src.push('1');
    src.push_str(&")".repeat(depth));
    src.push_str(";\n}\n");
    std::fs::write(dir.path().join("deep.cu"), &src).unwrap();
    let o = run_in(dir.path(), &["check", "--format", "json", "deep.cu"]);
    assert_no_crash(&o);
    assert_eq!(files(&json(&o)), ["deep.cu"]);
}

#[test]
fn deeply_nested_loops() {
    let dir = tempfile::tempdir().unwrap();
    let depth = 20_000;
    let mut src = String::from("__global__ void k(float* t) {\n");
    src.push_str(&"for (int i = 0; i < 2; ++i) {".repeat(depth));
    src.push_str("__syncthreads();");
    src.push_str(&"}".repeat(depth));
    src.push_str("\n}\n");
    std::fs::write(dir.path().join("loops.cu"), &src).unwrap();
    let o = run_in(dir.path(), &["check", "--format", "json", "loops.cu"]);
    assert_no_crash(&o);
}

#[test]
fn four_megabyte_file() {
    let dir = tempfile::tempdir().unwrap();
    let kernel = std::fs::read_to_string(root().join("testdata/cli/blocked.cu")).unwrap();
    let mut src = String::with_capacity(4 << 20);
    let mut n = 0;
    while src.len() < 4 << 20 {
        // Rename the kernels so that every copy is a distinct function.
        src.push_str(
            &kernel
                .replace("scale(", &format!("scale{n}("))
                .replace("search(", &format!("search{n}(")),
        );
        n += 1;
    }
    std::fs::write(dir.path().join("big.cu"), &src).unwrap();
    let o = run_in(dir.path(), &["check", "--format", "json", "big.cu"]);
    assert_no_crash(&o);
    let v = json(&o);
    let kernels = v["files"][0]["functions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] == "kernel")
        .count();
    assert_eq!(kernels, 3 * n, "every copy's kernels are found");
}

// ---------------------------------------------------------------- explain, pre-commit

#[test]
fn explain_prints_rule_docs() {
    let o = run(&["explain", "barrier"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(
        stdout(&o).contains("## What it does") && stdout(&o).contains("__syncthreads"),
        "{}",
        stdout(&o)
    );
    let o = run(&["explain", "--list"]);
    assert_eq!(code(&o), 0);
    let list = stdout(&o);
    for id in [
        "barrier",
        "atomic",
        "dynamic-lds",
        "early-exit",
        "wave-size",
        "unroll-blocked",
    ] {
        assert!(
            list.lines().any(|l| l.starts_with(id)),
            "{id} not listed:\n{list}"
        );
    }
    let o = run(&["explain", "no-such-rule"]);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("known rule ids:"), "{}", stderr(&o));
    assert_eq!(stderr(&o).lines().count(), 1, "one line: {}", stderr(&o));
    assert_eq!(code(&run(&["explain"])), 2);
}

#[test]
fn pre_commit_hook_definition() {
    let text = std::fs::read_to_string(root().join(".pre-commit-hooks.yaml")).unwrap();
    assert!(text.contains("- id: hip-unroll\n"), "{text}");
    assert!(text.contains("entry: hip-unroll check"), "{text}");
    assert!(text.contains("language: rust"), "{text}");
    let files = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("files: "))
        .expect("files regex");
    let re = regex::Regex::new(files.trim_matches('\'')).unwrap();
    for ok in [
        "a.cu",
        "src/a.cuh",
        "k.hip",
        "x/y.cpp",
        "y.hpp",
        "z.h",
        "s.cc",
        "s.cxx",
        "t.inl",
    ] {
        assert!(re.is_match(ok), "{ok}");
    }
    for no in ["a.c", "a.cu.orig", "README.md", "hip/notes.txt"] {
        assert!(!re.is_match(no), "{no}");
    }
}

// ---------------------------------------------------------------- human options, color

#[test]
fn human_quiet_statistics_and_loops() {
    let o = run(&["check", "--quiet", "testdata/cli/blocked.cu"]);
    assert_eq!(code(&o), 1, "the wave-size warning");
    assert!(stdout(&o).contains("hint[unroll-blocked]") && !stdout(&o).contains(" files,"));
    assert!(!stdout(&o).contains("1 file,"), "{}", stdout(&o));

    let o = run(&["check", "--statistics", "testdata/cli/blocked.cu"]);
    assert_eq!(code(&o), 1);
    let text = stdout(&o);
    assert!(text.contains("     2  hint     unroll-blocked\n"), "{text}");
    assert!(text.contains("     1  warning  wave-size\n"), "{text}");
    assert!(
        text.contains("loops by blocker:\n") && text.contains("     1  barrier\n"),
        "{text}"
    );
    assert!(
        !text.contains("-->"),
        "no code frames with --statistics: {text}"
    );

    let o = run(&["check", "--loops", "--quiet", "testdata/cli/blocked.cu"]);
    let text = stdout(&o);
    assert!(
        text.contains("testdata/cli/blocked.cu:13:5: scale:0 for (depth 0, trip count 4, #pragma unroll): blocked by barrier\n"),
        "{text}"
    );
    assert!(
        text.contains(
            "testdata/cli/blocked.cu:20:5: scale:2 for (depth 0, trip count 8): candidate\n"
        ),
        "{text}"
    );
}

/// Run under a pseudo-terminal (util-linux `script`), so that stdout is a TTY.
fn run_on_tty(no_color: Option<&str>) -> Option<String> {
    let cmd = format!("{BIN} check --hints testdata/cli/clean.cu");
    let mut c = Command::new("script");
    c.args(["-qec", &cmd, "/dev/null"])
        .current_dir(root())
        .env_remove("NO_COLOR");
    if let Some(v) = no_color {
        c.env("NO_COLOR", v);
    }
    let o = c.output().ok()?;
    o.status
        .success()
        .then(|| String::from_utf8_lossy(&o.stdout).into_owned())
}

#[test]
fn colors_only_on_a_terminal_without_no_color() {
    let tty = run_on_tty(None);
    if testenv::lacks(
        "script",
        tty.is_some(),
        "util-linux `script` is not available",
    ) {
        return;
    }
    let tty = tty.expect("checked");
    assert!(
        tty.contains("\x1b[") && tty.contains("candidate"),
        "{tty:?}"
    );
    let no_color = run_on_tty(Some("1")).unwrap();
    assert!(
        !no_color.contains('\x1b') && no_color.contains("hint[candidate]"),
        "{no_color:?}"
    );
    // An empty NO_COLOR does not count (no-color.org).
    assert!(run_on_tty(Some("")).unwrap().contains("\x1b["));
    // Not a terminal: no colors even without NO_COLOR.
    let o = Command::new(BIN)
        .args(["check", "--hints", "testdata/cli/clean.cu"])
        .current_dir(root())
        .env_remove("NO_COLOR")
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&o.stdout).contains('\x1b'));
}

#[test]
fn output_file_and_color_flags() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("report.sarif");
    std::fs::write(&out, "old").unwrap();
    let o = run(&[
        "check",
        "--format",
        "sarif",
        "-o",
        out.to_str().unwrap(),
        "testdata/cli/blocked.cu",
    ]);
    assert_eq!(code(&o), 1, "the exit status still reflects the findings");
    assert!(o.stdout.is_empty());
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(v["version"], "2.1.0");
    // Only the report is left in the directory (the temporary file was renamed over it).
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&out).unwrap().permissions().mode() & 0o777;
        assert_eq!(
            mode & 0o044,
            0o044,
            "readable by others like any report: {mode:o}"
        );
    }
    let o = run(&[
        "check",
        "-o",
        "/nonexistent-dir/r.txt",
        "testdata/cli/clean.cu",
    ]);
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("/nonexistent-dir/r.txt"),
        "{}",
        stderr(&o)
    );

    let o = run(&[
        "check",
        "--color",
        "always",
        "--hints",
        "testdata/cli/clean.cu",
    ]);
    assert!(
        stdout(&o).contains("\x1b["),
        "--color always wins over NO_COLOR and a pipe"
    );
    let o = run(&[
        "check",
        "--color",
        "never",
        "--hints",
        "testdata/cli/clean.cu",
    ]);
    assert!(!stdout(&o).contains('\x1b'));
}

/// A file with no GPU code is listed unparsed (`parsed: false`) unless `--parse-all` asks for it:
/// its syntax error (at file scope: one inside a plain host function's body is never parsed)
/// is counted only then.
#[test]
fn host_only_files_are_skipped_unless_parse_all() {
    let dir = tempfile::tempdir().unwrap();
    let host = dir.path().join("host.cpp");
    std::fs::write(
        &host,
        "int main() { for (int i = 0; i < 3; ++i) { return ( } }\nstatic int broken = ( ;\n",
    )
    .unwrap();
    let run = |extra: &[&str]| {
        let mut args = vec!["check", "--format", "json"];
        args.extend_from_slice(extra);
        args.push(host.to_str().unwrap());
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_hip-unroll"))
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v["files"][0].clone()
    };
    let skipped = run(&[]);
    assert_eq!(skipped["parsed"], false);
    assert_eq!(skipped["parse_errors"], 0);
    let parsed = run(&["--parse-all"]);
    assert_eq!(parsed["parsed"], true);
    assert!(parsed["parse_errors"].as_u64().unwrap() > 0, "{parsed}");
    assert_eq!(parsed["functions"], serde_json::json!([]));
}

/// A file whose only GPU qualifier is a macro defined in another file of the run (a header it
/// does not include: `DS_D_INLINE`) or a well-known library's macro that nothing defines
/// (`CUTLASS_DEVICE`) is parsed and its loops are guarded, without `--parse-all`; a file that
/// uses the name only inside a longer identifier, or that is checked without the defining
/// header, is skipped as before.
#[test]
fn files_qualified_by_macros_from_elsewhere_are_checked() {
    let dir = tempfile::tempdir().unwrap();
    let w = |name: &str, text: &str| std::fs::write(dir.path().join(name), text).unwrap();
    w(
        "defs.h",
        "#pragma once\n#define DS_D_INLINE \\\n  __device__ __forceinline__\n",
    );
    w(
        "reduce.cuh",
        "DS_D_INLINE float sum(float* p) {\n  float s = 0;\n  for (int i = 0; i < 8; ++i) { s += p[i]; __syncthreads(); }\n  return s;\n}\n",
    );
    w(
        "epilogue.h",
        "CUTLASS_DEVICE void scale(float* p) {\n  for (int i = 0; i < 4; ++i) p[i] *= 2.f;\n}\n",
    );
    w(
        "host.cpp",
        "int NOT_DS_D_INLINE_AT_ALL(int* p) {\n  for (int i = 0; i < 4; ++i) p[i] = 0;\n  return 0;\n}\n",
    );
    let loops = |v: &Value, file: &str| -> Vec<(String, String)> {
        let f = v["files"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["path"].as_str().unwrap().ends_with(file))
            .unwrap_or_else(|| panic!("{file} not reported: {v}"));
        f["functions"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|g| g["loops"].as_array().unwrap().iter())
            .map(|l| {
                (
                    l["id"].as_str().unwrap().to_string(),
                    l["verdict"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    let o = run_in(dir.path(), &["check", "--format", "json", "."]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(
        loops(&v, "reduce.cuh"),
        [("sum:0".to_string(), "blocked".to_string())]
    );
    assert_eq!(
        loops(&v, "epilogue.h"),
        [("scale:0".to_string(), "candidate".to_string())]
    );
    let host = v["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"].as_str().unwrap().ends_with("host.cpp"))
        .unwrap();
    assert_eq!(host["parsed"], false, "{v}");
    // Without the header that defines it, the name says nothing: the file is skipped.
    let o = run_in(dir.path(), &["check", "--format", "json", "reduce.cuh"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(v["files"][0]["parsed"], false, "{v}");
}

/// `explain` says that suppressions quiet the lint but never open a loop to rewriting, and
/// gives dynamic-lds's real reason (unrolling touches the same addresses).
#[test]
fn explain_states_the_rewrite_policy() {
    for rule in ["barrier", "atomic", "dynamic-lds", "early-exit"] {
        let o = run(&["explain", rule]);
        assert_eq!(code(&o), 0);
        let t = stdout(&o).replace('\n', " ").replace("//! ", "");
        assert!(
            t.contains("silences the lint (`check`) only") && t.contains("--force"),
            "{rule}: {t}"
        );
    }
    let t = stdout(&run(&["explain", "dynamic-lds"]));
    assert!(!t.contains("read past the allocation"), "{t}");
    assert!(
        t.contains("touches exactly the addresses") && t.contains("group_segment_fixed_size"),
        "{t}"
    );
    let t = stdout(&run(&["explain", "barrier"]));
    for form in [
        "__syncwarp",
        "s_barrier",
        "arrive_and_wait",
        "producer_acquire",
        "cg::wait",
        "__threadfence",
    ] {
        assert!(t.contains(form), "{form}: {t}");
    }
    let t = stdout(&run(&["explain", "unroll-blocked"]));
    assert!(t.contains("hint") && t.contains("[check.severity]"), "{t}");
}

/// A parse error is reported where it is: `path:line:col` in human output (one note per file,
/// the first error), every location in JSON; a definition the lowering cannot read as a
/// function is one of them, never skipped silently.
#[test]
fn parse_errors_are_located() {
    let dir = tempfile::tempdir().unwrap();
    let src = "__global__ void k(float* a) { for (int i = 0; i < 4; i++) a[i] = 1; }\n\
               SHARED_MEMORY union\n{\n  int a;\n}\n\
               __global__ void g() { int = ; }\n";
    std::fs::write(dir.path().join("bad.cu"), src).unwrap();
    let o = run_in(dir.path(), &["check", "bad.cu"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("bad.cu:2:1: note: parse error: `SHARED_MEMORY union` is not read as a function definition"),
        "{out}"
    );
    assert!(out.contains("(and 1 more)"), "{out}");
    let o = run_in(dir.path(), &["check", "--format", "json", "bad.cu"]);
    let v = json(&o);
    let f = &v["files"][0];
    assert_eq!(f["parse_errors"], 2, "{f}");
    let at: Vec<(u64, u64)> = f["parse_error_locations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["line"].as_u64().unwrap(), e["column"].as_u64().unwrap()))
        .collect();
    assert_eq!(at, [(2, 1), (6, 27)], "{f}");
    assert_eq!(
        f["parse_error_locations"][1]["message"], "cannot parse `=`",
        "{f}"
    );
}

/// A misspelt rule id gets the closest known one: in `explain`, `--select` and `--ignore`.
#[test]
fn unknown_rule_ids_suggest_the_closest() {
    let o = run(&["explain", "wave_size"]);
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("unknown rule id \"wave_size\"; did you mean \"wave-size\"?"),
        "{}",
        stderr(&o)
    );
    for flag in ["--select", "--ignore"] {
        let o = run(&["check", flag, "barier,atomic", "testdata/check"]);
        assert_eq!(code(&o), 2);
        assert!(
            stderr(&o).contains("barier; did you mean \"barrier\"?"),
            "{flag}: {}",
            stderr(&o)
        );
    }
    let o = run(&["explain", "xyzzy"]);
    assert!(!stderr(&o).contains("did you mean"), "{}", stderr(&o));
}

/// A directory with no file to check is a warning on stderr (the output stays valid, the exit
/// status is what the other files make it: 0 here).
#[test]
fn an_empty_directory_is_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("empty")).unwrap();
    std::fs::create_dir(dir.path().join("docs")).unwrap();
    std::fs::write(dir.path().join("docs/notes.txt"), "nothing").unwrap();
    let o = run_in(dir.path(), &["check", "--format", "json", "empty", "docs"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(v["files"], serde_json::json!([]));
    for d in ["empty", "docs"] {
        assert!(
            stderr(&o).contains(&format!("warning: {d}: no file to check")),
            "{}",
            stderr(&o)
        );
    }
    std::fs::write(dir.path().join("empty/k.cu"), "__global__ void k() {}\n").unwrap();
    let o = run_in(dir.path(), &["check", "empty"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(!stderr(&o).contains("warning"), "{}", stderr(&o));
}
