//! End-to-end tests of `hip-unroll server`: the real binary over stdio with an LSP client made
//! of `lsp-server`'s framing and `lsp-types` (tests/support/lsp.rs). Diagnostics are compared
//! with `check --format json`, refactors with `unroll ... -o -`, hover with `explain`, on a
//! copy of `testdata/server` (a kernel file, a header found through `include-dirs`, a config).
#![allow(clippy::print_stdout, clippy::print_stderr, clippy::exit)]

#[path = "support/lsp.rs"]
mod lsp;

use lsp::{apply, file_uri, Client, BIN};
use lsp_types::notification::Notification as _;
use lsp_types::request::{CodeActionRequest, HoverRequest};
use lsp_types::{
    CodeAction, CodeActionContext, CodeActionKind, CodeActionOrCommand, CodeActionParams,
    DiagnosticSeverity, HoverContents, HoverParams, NumberOrString, Position, Range,
    TextDocumentIdentifier, TextDocumentPositionParams, Uri,
};
use std::path::{Path, PathBuf};
use std::process::Command;

/// A copy of testdata/server in a temporary directory (canonical path, so that the paths the
/// server and `check` print agree).
fn fixture() -> (tempfile::TempDir, PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(d.path()).unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/server");
    for rel in ["kernels.cu", "include/helpers.cuh", "hip-unroll.toml"] {
        let to = root.join(rel);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(src.join(rel), to).unwrap();
    }
    (d, root)
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap()
}

fn cli(cwd: &Path, args: &[&str]) -> std::process::Output {
    Command::new(BIN)
        .args(args)
        .current_dir(cwd)
        .output()
        .unwrap()
}

/// One diagnostic as both sides can say it: (line, column, rule, severity, message).
type Row = (u32, u32, String, String, String);

/// The rows of `check --format json` on `file`, and the whole document.
fn check_json(cwd: &Path, file: &str) -> (Vec<Row>, serde_json::Value) {
    let out = cli(cwd, &["check", "--format", "json", file]);
    assert!(out.status.code().unwrap() <= 1, "{out:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    (json_rows(&v, None), v)
}

/// The rows of a `check --format json` document (of the file `path` only, when given).
fn json_rows(v: &serde_json::Value, path: Option<&str>) -> Vec<Row> {
    v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| path.is_none_or(|p| d["path"] == p))
        .map(|d| {
            (
                d["line"].as_u64().unwrap() as u32,
                d["column"].as_u64().unwrap() as u32,
                d["rule"].as_str().unwrap().to_string(),
                d["severity"].as_str().unwrap().to_string(),
                d["message"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// The same rows from published LSP diagnostics (ASCII fixtures: UTF-16 column = byte column).
fn lsp_rows(ds: &[lsp_types::Diagnostic]) -> Vec<Row> {
    let mut rows: Vec<_> = ds
        .iter()
        .map(|d| {
            let sev = match d.severity {
                Some(DiagnosticSeverity::ERROR) => "error",
                Some(DiagnosticSeverity::WARNING) => "warning",
                Some(DiagnosticSeverity::HINT) => "hint",
                other => panic!("severity {other:?}"),
            };
            let code = match &d.code {
                Some(NumberOrString::String(s)) => s.clone(),
                other => panic!("code {other:?}"),
            };
            (
                d.range.start.line + 1,
                d.range.start.character + 1,
                code,
                sev.to_string(),
                d.message.clone(),
            )
        })
        .collect();
    rows.sort();
    rows
}

fn rules(ds: &[lsp_types::Diagnostic]) -> Vec<String> {
    let mut r: Vec<String> = lsp_rows(ds).into_iter().map(|r| r.2).collect();
    r.sort();
    r
}

fn actions(c: &mut Client, uri: &Uri, line: u32, character: u32) -> Vec<CodeAction> {
    let at = Position::new(line, character);
    let r = c.request::<CodeActionRequest>(CodeActionParams {
        text_document: TextDocumentIdentifier { uri: uri.clone() },
        range: Range::new(at, at),
        context: CodeActionContext::default(),
        work_done_progress_params: Default::default(),
        partial_result_params: Default::default(),
    });
    r.unwrap_or_default()
        .into_iter()
        .map(|a| match a {
            CodeActionOrCommand::CodeAction(a) => a,
            CodeActionOrCommand::Command(c) => panic!("a bare command {c:?}"),
        })
        .collect()
}

fn hover(c: &mut Client, uri: &Uri, line: u32, character: u32) -> Option<String> {
    let h = c.request::<HoverRequest>(HoverParams {
        text_document_position_params: TextDocumentPositionParams {
            text_document: TextDocumentIdentifier { uri: uri.clone() },
            position: Position::new(line, character),
        },
        work_done_progress_params: Default::default(),
    })?;
    match h.contents {
        HoverContents::Markup(m) => Some(m.value),
        other => panic!("hover contents {other:?}"),
    }
}

fn edits_of(a: &CodeAction, uri: &Uri) -> Vec<lsp_types::TextEdit> {
    let e = a.edit.as_ref().expect("an edit");
    if let Some(changes) = &e.changes {
        return changes[uri].clone();
    }
    match e.document_changes.as_ref().expect("changes") {
        lsp_types::DocumentChanges::Edits(v) => v
            .iter()
            .flat_map(|d| d.edits.iter())
            .map(|e| match e {
                lsp_types::OneOf::Left(t) => t.clone(),
                lsp_types::OneOf::Right(a) => a.text_edit.clone(),
            })
            .collect(),
        other => panic!("{other:?}"),
    }
}

#[test]
fn diagnostics_of_an_open_file_are_checks() {
    let (_d, root) = fixture();
    let file = root.join("kernels.cu");
    let (expected, _) = check_json(&root, "kernels.cu");
    assert_eq!(expected.len(), 4, "{expected:?}");
    let mut c = Client::start(&root, &[]);
    let init = c.initialize();
    assert!(init.capabilities.hover_provider.is_some());
    let uri = file_uri(&file);
    c.open(&uri, 1, &read(&file));
    let p = c.diagnostics(&uri, 1);
    let mut expected = expected;
    expected.sort();
    assert_eq!(lsp_rows(&p.diagnostics), expected);
    // The blocked loop's diagnostic points at the barrier through the header.
    let blocked = p
        .diagnostics
        .iter()
        .find(|d| d.code == Some(NumberOrString::String("unroll-blocked".into())))
        .unwrap();
    let related = blocked.related_information.as_ref().expect("related");
    assert_eq!(related[0].location.range.start, Position::new(9, 4));
    assert!(related[0].message.contains("helpers.cuh:5"), "{related:?}");
    assert_eq!(blocked.source.as_deref(), Some("hip-unroll"));

    // An unsaved edit: diagnostics of the buffer, not of the disk (a second shuffle).
    let edited = read(&file).replace(
        "  out[threadIdx.x] = x;\n}",
        "  x += __shfl_xor(x, 1, 32);\n  out[threadIdx.x] = x;\n}",
    );
    c.change(&uri, 2, &edited);
    let p = c.diagnostics(&uri, 2);
    let (disk, _) = check_json(&root, "kernels.cu");
    std::fs::write(&file, &edited).unwrap();
    let (mut now, _) = check_json(&root, "kernels.cu");
    now.sort();
    assert_eq!(disk.len() + 1, now.len());
    assert_eq!(lsp_rows(&p.diagnostics), now);
    assert_eq!(c.shutdown().code(), Some(0));
}

/// Each version of the text has as many wave-size findings as its number: every publication
/// must hold exactly its version's findings, edits within the debounce are analysed once, and
/// the last version is the one shown.
#[test]
fn stale_results_are_never_published() {
    let (_d, root) = fixture();
    let file = root.join("w.cu");
    let text = |n: usize| {
        let mut s = String::from("__global__ void w(float* v) {\n  float x = v[0];\n");
        for _ in 0..n {
            s.push_str("  x += __shfl_down(x, 1, 32);\n");
        }
        s.push_str("  v[0] = x;\n}\n");
        s
    };
    let mut c = Client::start(&root, &[]);
    c.initialize_with(
        serde_json::json!({"debounceMs": 1500}),
        lsp_types::ClientCapabilities::default(),
    );
    let uri = file_uri(&file);
    c.open(&uri, 1, &text(1));
    assert_eq!(c.diagnostics(&uri, 1).diagnostics.len(), 1);
    for v in 2..=6 {
        c.change(&uri, v, &text(v as usize));
    }
    assert_eq!(c.diagnostics(&uri, 6).diagnostics.len(), 6);
    let all = c.published(&uri);
    for p in &all {
        let v = p.version.expect("versioned");
        assert_eq!(p.diagnostics.len(), v as usize, "version {v}");
    }
    let versions: Vec<i32> = all.iter().filter_map(|p| p.version).collect();
    assert_eq!(
        versions,
        [1, 6],
        "edits within the debounce are analysed once"
    );
    // A big document's analysis (started at once by its open) is overtaken by an edit:
    // whatever is published matches its version, and the last publication is the edit's.
    let mut big = text(0).replace("  v[0] = x;\n}\n", "");
    for i in 0..3000 {
        big.push_str(&format!(
            "  for (int i{i} = 0; i{i} < 4; ++i{i}) {{ x += __shfl_down(x, 1, 32); }}\n"
        ));
    }
    big.push_str("  v[0] = x;\n}\n");
    std::fs::write(root.join("big.cu"), &big).unwrap();
    let (big_rows, _) = check_json(&root, "big.cu");
    assert_eq!(
        big_rows.len(),
        6000,
        "a shuffle and a candidate hint per loop"
    );
    let other = file_uri(&root.join("big.cu"));
    c.open(&other, 1, &big);
    c.change(&other, 2, &text(2));
    let (_, last) = c.diagnostics_after(0, &other, Some(2));
    assert_eq!(last.diagnostics.len(), 2);
    for p in c.published(&other) {
        match p.version {
            Some(1) => assert_eq!(p.diagnostics.len(), big_rows.len()),
            Some(2) => assert_eq!(p.diagnostics.len(), 2),
            v => panic!("version {v:?}"),
        }
    }
    assert_eq!(c.shutdown().code(), Some(0));
}

#[test]
fn open_headers_and_configs_win_over_the_disk() {
    let (_d, root) = fixture();
    let file = root.join("kernels.cu");
    let header = root.join("include/helpers.cuh");
    let config = root.join("hip-unroll.toml");
    let mut c = Client::start(&root, &[]);
    c.initialize();
    let (k, h, t) = (file_uri(&file), file_uri(&header), file_uri(&config));
    c.open(&k, 1, &read(&file));
    let (mut seen, p) = c.diagnostics_after(0, &k, Some(1));
    assert!(rules(&p.diagnostics).contains(&"unroll-blocked".to_string()));
    let refactors = |c: &mut Client| {
        actions(c, &k, 7, 3)
            .into_iter()
            .filter(|a| a.kind == Some(CodeActionKind::REFACTOR_REWRITE))
            .count()
    };
    assert_eq!(refactors(&mut c), 0, "blocked through the header on disk");
    // The header's buffer loses its barrier: the includer is re-checked, unsaved.
    c.open(&h, 1, &read(&header));
    c.change(
        &h,
        2,
        "#pragma once\n__device__ void stage(float* s) { s[threadIdx.x] *= 2.0f; }\n",
    );
    loop {
        let (i, p) = c.diagnostics_after(seen + 1, &k, Some(1));
        seen = i;
        if !rules(&p.diagnostics).contains(&"unroll-blocked".to_string()) {
            break;
        }
    }
    // The rewrites follow the buffer too (the kept rewrite source of version 1 was dropped).
    assert!(refactors(&mut c) > 0, "unblocked by the header's buffer");
    // Closed unsaved: the disk's header (with its barrier) stands in again.
    c.close(&h);
    loop {
        let (i, p) = c.diagnostics_after(seen + 1, &k, Some(1));
        seen = i;
        if rules(&p.diagnostics).contains(&"unroll-blocked".to_string()) {
            break;
        }
    }
    assert_eq!(refactors(&mut c), 0, "blocked again by the disk's header");
    // The config's buffer ignores wave-size: everything open is re-checked.
    let cfg = read(&config);
    c.open(&t, 1, &cfg);
    c.change(
        &t,
        2,
        &cfg.replace("hints = true", "hints = true\nignore = [\"wave-size\"]"),
    );
    loop {
        let (i, p) = c.diagnostics_after(seen + 1, &k, Some(1));
        seen = i;
        if !rules(&p.diagnostics).contains(&"wave-size".to_string()) {
            break;
        }
    }
    // A broken config is one error diagnostic, not a silent pass.
    c.change(&t, 3, "[check]\nnot-a-key = 1\n");
    loop {
        let (i, p) = c.diagnostics_after(seen + 1, &k, Some(1));
        seen = i;
        if p.diagnostics
            .iter()
            .any(|d| d.message.contains("not-a-key"))
        {
            assert_eq!(p.diagnostics.len(), 1);
            break;
        }
    }
    // Closed: the disk's config; then the disk's config changes (a watched-file event).
    c.close(&t);
    std::fs::write(
        &config,
        "[check]\ninclude-dirs = [\"include\"]\nselect = [\"wave-size\"]\n",
    )
    .unwrap();
    c.notify::<lsp_types::notification::DidChangeWatchedFiles>(
        lsp_types::DidChangeWatchedFilesParams {
            changes: vec![lsp_types::FileEvent {
                uri: t.clone(),
                typ: lsp_types::FileChangeType::CHANGED,
            }],
        },
    );
    loop {
        let (i, p) = c.diagnostics_after(seen + 1, &k, Some(1));
        seen = i;
        if rules(&p.diagnostics) == ["wave-size"] {
            break;
        }
    }
    assert_eq!(c.shutdown().code(), Some(0));
}

#[test]
fn code_actions_are_checks_fixes_and_unrolls_writes() {
    let (_d, root) = fixture();
    let file = root.join("kernels.cu");
    let text = read(&file);
    let mut c = Client::start(&root, &[]);
    let caps = lsp_types::ClientCapabilities {
        workspace: Some(lsp_types::WorkspaceClientCapabilities {
            workspace_edit: Some(lsp_types::WorkspaceEditClientCapabilities {
                document_changes: Some(true),
                ..Default::default()
            }),
            ..Default::default()
        }),
        ..Default::default()
    };
    c.initialize_with(serde_json::json!({}), caps);
    let uri = file_uri(&file);
    c.open(&uri, 1, &text);
    c.diagnostics(&uri, 1);

    // The shuffle width: check's unsafe fix, marked so, not preferred.
    let (_, json) = check_json(&root, "kernels.cu");
    let fix = json["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["rule"] == "wave-size")
        .unwrap()["fix"]
        .clone();
    let acts = actions(&mut c, &uri, 15, 26);
    let quick: Vec<&CodeAction> = acts
        .iter()
        .filter(|a| a.kind == Some(CodeActionKind::QUICKFIX))
        .collect();
    assert_eq!(quick.len(), 1, "{acts:?}");
    assert!(quick[0].title.contains("unsafe"), "{}", quick[0].title);
    assert_eq!(quick[0].is_preferred, Some(false));
    let mut expected = text.clone().into_bytes();
    for e in fix["edits"].as_array().unwrap().iter().rev() {
        let (s, t) = (
            e["start"].as_u64().unwrap() as usize,
            e["end"].as_u64().unwrap() as usize,
        );
        expected.splice(s..t, e["content"].as_str().unwrap().bytes());
    }
    assert_eq!(
        apply(&text, &edits_of(quick[0], &uri)),
        String::from_utf8(expected).unwrap()
    );
    assert!(!acts
        .iter()
        .any(|a| a.kind == Some(CodeActionKind::REFACTOR_REWRITE)));

    // Each loop: the refactors offered are exactly the rewrites `unroll` makes, edit for edit.
    for (loop_id, line) in [("scale:1", 11u32), ("sum:0", 21), ("scale:0", 7)] {
        let acts = actions(&mut c, &uri, line, 3);
        let mut offered = 0;
        for factor in [2, 4, 8] {
            for mode in ["pragma", "manual"] {
                let out = cli(
                    &root,
                    &[
                        "unroll",
                        "kernels.cu",
                        "--loop",
                        loop_id,
                        "--factor",
                        &factor.to_string(),
                        "--mode",
                        mode,
                        "-o",
                        "-",
                    ],
                );
                let title = format!("Unroll loop {loop_id} by {factor} ({mode})");
                let action = acts.iter().find(|a| a.title == title);
                match out.status.code() {
                    Some(0) => {
                        let a = action.unwrap_or_else(|| panic!("{title} not offered: {acts:?}"));
                        assert_eq!(a.kind, Some(CodeActionKind::REFACTOR_REWRITE));
                        assert_ne!(a.is_preferred, Some(true));
                        let e = a.edit.as_ref().unwrap();
                        assert!(
                            e.document_changes.is_some(),
                            "versioned edits when supported"
                        );
                        assert_eq!(
                            apply(&text, &edits_of(a, &uri)),
                            String::from_utf8(out.stdout).unwrap(),
                            "{title}"
                        );
                        offered += 1;
                    }
                    Some(1) => assert!(action.is_none(), "{title} offered, unroll refuses it"),
                    other => panic!("unroll {other:?}: {}", String::from_utf8_lossy(&out.stderr)),
                }
            }
        }
        if loop_id == "scale:0" {
            assert_eq!(offered, 0, "a blocked loop gets no rewrite");
        } else {
            assert!(offered >= 4, "{loop_id}: {offered}");
        }
    }
    assert_eq!(c.shutdown().code(), Some(0));
}

#[test]
fn hover_says_why_a_loop_is_blocked_and_explains_rules() {
    let (_d, root) = fixture();
    let file = root.join("kernels.cu");
    let mut c = Client::start(&root, &[]);
    c.initialize();
    let uri = file_uri(&file);
    c.open(&uri, 1, &read(&file));
    c.diagnostics(&uri, 1);
    let blocked = hover(&mut c, &uri, 7, 3).expect("hover on the blocked loop");
    for needle in [
        "scale:0",
        "blocked",
        "barrier",
        "stage()",
        "helpers.cuh:5",
        "trip count: 8",
        "#pragma unroll 4",
    ] {
        assert!(blocked.contains(needle), "{needle:?} in {blocked}");
    }
    let free = hover(&mut c, &uri, 11, 2).expect("hover on a candidate");
    assert!(
        free.contains("scale:1") && free.contains("candidate"),
        "{free}"
    );
    assert!(free.contains("trip count: not a constant"), "{free}");
    // On the wave-size finding: its message and `explain wave-size`'s documentation.
    let rule = hover(&mut c, &uri, 15, 26).expect("hover on a finding");
    let explain = cli(&root, &["explain", "wave-size"]);
    let doc = String::from_utf8(explain.stdout).unwrap();
    let doc_body = doc.split("\n\n(rule `").next().unwrap();
    assert!(
        rule.contains("wave-size") && rule.contains(doc_body),
        "{rule}"
    );
    assert!(hover(&mut c, &uri, 0, 0).is_none());
    assert_eq!(c.shutdown().code(), Some(0));
}

#[test]
fn a_panicking_analysis_is_logged_once_and_the_server_goes_on() {
    let (_d, root) = fixture();
    let mut c = Client::start(&root, &[("HIP_UNROLL_SERVER_PANIC", "BOOM-MARKER")]);
    c.initialize();
    let bad = file_uri(&root.join("bad.cu"));
    c.open(&bad, 1, "// BOOM-MARKER\n__global__ void k() {}\n");
    let i = c.wait_for(0, |n| {
        n.method == lsp_types::notification::LogMessage::METHOD
    });
    let log = c.logs().join("\n");
    assert!(
        log.contains("internal error") && log.contains("bad.cu") && log.contains("BOOM-MARKER"),
        "{log}"
    );
    let file = root.join("kernels.cu");
    let good = file_uri(&file);
    c.open(&good, 1, &read(&file));
    assert_eq!(c.diagnostics(&good, 1).diagnostics.len(), 4);
    assert!(hover(&mut c, &good, 7, 3).is_some());
    let logs = c.logs();
    assert_eq!(
        logs.len(),
        1,
        "one log message for one panic: {logs:?} (first at {i})"
    );
    assert_eq!(c.shutdown().code(), Some(0));
}

#[test]
fn huge_documents_and_invalid_utf8_are_answered() {
    let (_d, root) = fixture();
    let mut c = Client::start(&root, &[]);
    c.initialize();
    // 50,000 lines: one kernel per 10 lines, each with a loop and a 32-lane shuffle.
    let mut big = String::new();
    for k in 0..5000 {
        big.push_str(&format!(
            "__global__ void k{k}(float* v) {{\n  float x = v[0];\n  for (int i = 0; i < 4; ++i) {{\n    x += v[i];\n  }}\n  x += __shfl_down(x, 1, 32);\n  v[0] = x;\n}}\n\n\n"
        ));
    }
    assert_eq!(big.lines().count(), 50_000);
    let uri = file_uri(&root.join("big.cu"));
    c.open(&uri, 1, &big);
    // A request while it is analysed is answered too.
    assert!(hover(&mut c, &uri, 49_992, 2).is_some());
    let p = c.diagnostics(&uri, 1);
    assert_eq!(
        p.diagnostics.len(),
        5000 + 5000,
        "wave-size and candidate hints"
    );

    // Invalid UTF-8 in the message itself (as Neovim sends a buffer's bytes), and in a header
    // on disk: both are answered.
    std::fs::write(
        root.join("bad.cuh"),
        b"// \xff\xfe\n__device__ void f() { __syncthreads(); }\n",
    )
    .unwrap();
    let u = file_uri(&root.join("raw.cu"));
    let body = [
        format!(r##"{{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{{"textDocument":{{"uri":"{}","languageId":"cuda","version":1,"text":"#include \"bad.cuh\"\n// "##, u.as_str()).into_bytes(),
        b"\xff\xc3".to_vec(),
        br##"\n__global__ void k(float* v) {\n  #pragma unroll 2\n  for (int i = 0; i < 4; ++i) { f(); }\n  v[0] = __shfl_xor(v[0], 1, 32);\n}\n"}}}"##.to_vec(),
    ]
    .concat();
    c.send_raw(&body);
    let p = c.diagnostics(&u, 1);
    let mut r = rules(&p.diagnostics);
    r.dedup();
    assert_eq!(r, ["unroll-blocked", "wave-size"]);
    let unroll = p
        .diagnostics
        .iter()
        .find(|d| d.code == Some(NumberOrString::String("unroll-blocked".into())))
        .unwrap();
    assert_eq!(unroll.range.start, Position::new(3, 2));
    assert!(hover(&mut c, &u, 3, 2).unwrap().contains("barrier"));
    // Garbage between messages is logged, not fatal.
    c.send_raw(b"{ not json");
    assert!(hover(&mut c, &u, 3, 2).is_some());
    assert!(
        c.logs().iter().any(|l| l.contains("not JSON-RPC")),
        "{:?}",
        c.logs()
    );
    assert_eq!(c.shutdown().code(), Some(0));
}

#[test]
fn the_protocols_life_cycle_and_exit_codes() {
    let (_d, root) = fixture();
    // A request before `initialize` is refused; `exit` without `shutdown` is status 1.
    let mut c = Client::start(&root, &[]);
    let r = c.request_raw("textDocument/hover", serde_json::json!({}));
    assert_eq!(r.error.unwrap().code, -32002);
    c.initialize();
    c.notify::<lsp_types::notification::Exit>(());
    assert_eq!(c.wait().code(), Some(1));
    // The input closed without `shutdown`: 1; after `shutdown`: requests refused, then 0.
    let mut c = Client::start(&root, &[]);
    c.initialize();
    c.close_input();
    assert_eq!(c.wait().code(), Some(1));
    let mut c = Client::start(&root, &[]);
    c.initialize();
    c.request::<lsp_types::request::Shutdown>(());
    let r = c.request_raw("hip-unroll/status", serde_json::Value::Null);
    assert!(r.error.is_some());
    c.notify::<lsp_types::notification::Exit>(());
    assert_eq!(c.wait().code(), Some(0));
    // Unknown methods are answered with an error.
    let mut c = Client::start(&root, &[]);
    c.initialize();
    let r = c.request_raw("textDocument/definition", serde_json::json!({}));
    assert_eq!(r.error.unwrap().code, -32601);
    assert_eq!(c.shutdown().code(), Some(0));
}

/// Opening and closing many documents (each with a header buffer of its own content, each
/// hovered so that its rewrite source is kept) leaves nothing behind: the state is bounded by
/// what is open.
#[test]
fn state_is_bounded_by_the_open_documents() {
    let (_d, root) = fixture();
    let mut c = Client::start(&root, &[]);
    c.initialize();
    let n = 60;
    let mut uris = Vec::new();
    for i in 0..n {
        let h = file_uri(&root.join(format!("h{i}.cuh")));
        c.open(
            &h,
            1,
            &format!("__device__ float g{i}(float x) {{ return x * {i}.0f; }}\n"),
        );
        let k = file_uri(&root.join(format!("k{i}.cu")));
        c.open(
            &k,
            1,
            &format!("#include \"h{i}.cuh\"\n__global__ void k(float* v) {{\n  for (int j = 0; j < 4; ++j) v[j] = g{i}(v[j]);\n}}\n"),
        );
        c.diagnostics(&k, 1);
        assert!(hover(&mut c, &k, 2, 2).unwrap().contains("candidate"));
        uris.push(h);
        uris.push(k);
    }
    let s = c.status();
    assert_eq!(s["documents"], 2 * n);
    assert!(s["sources"].as_u64().unwrap() <= 2 * n as u64, "{s}");
    assert!(
        s["headerParses"].as_u64().unwrap() <= server::HEADER_PARSES_BOUND as u64,
        "{s}"
    );
    for u in &uris {
        c.close(u);
    }
    let s = c.status();
    for key in [
        "documents",
        "analyses",
        "sources",
        "pending",
        "inFlight",
        "generations",
    ] {
        assert_eq!(s[key], 0, "{key}: {s}");
    }
    assert_eq!(c.shutdown().code(), Some(0));
}

/// A header whose only GPU qualifier is a specifier macro defined in another header it does not
/// include (its includer does): `check DIR` learns the macro from the files of its run and
/// checks the header; the server learns it from its workspace folder (and from the open
/// documents), and publishes what `check DIR` reports. Without either it is skipped, as by
/// `check FILE`.
#[test]
fn specifier_macros_of_the_workspace_are_learned_as_check_learns_them() {
    let d = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(d.path()).unwrap();
    let defs = "#pragma once\n#define DS_D_INLINE __device__ __forceinline__\n";
    let ops = "DS_D_INLINE float warp_sum(float v) {\n  \
               for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o, 32);\n  \
               return v;\n}\n";
    std::fs::create_dir_all(root.join("include")).unwrap();
    std::fs::write(root.join("include/defs.cuh"), defs).unwrap();
    std::fs::write(root.join("ops.cuh"), ops).unwrap();
    // `check .` on the tree: the header's findings; `check ops.cuh` alone: none.
    let out = cli(&root, &["check", "--format", "json", "."]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut expected = json_rows(&v, Some("ops.cuh"));
    expected.sort();
    assert_eq!(expected.len(), 3, "{v}");
    assert!(check_json(&root, "ops.cuh").0.is_empty());
    let uri = file_uri(&root.join("ops.cuh"));

    // A workspace folder: learned in the background, then the open header is checked again.
    let mut c = Client::start(&root, &[]);
    #[allow(deprecated)]
    let params = lsp_types::InitializeParams {
        root_uri: Some(file_uri(&root)),
        ..lsp_types::InitializeParams::default()
    };
    c.request::<lsp_types::request::Initialize>(params);
    c.notify::<lsp_types::notification::Initialized>(lsp_types::InitializedParams {});
    c.open(&uri, 1, ops);
    let mut from = 0;
    let rows = loop {
        let (i, p) = c.diagnostics_after(from, &uri, Some(1));
        if !p.diagnostics.is_empty() {
            break lsp_rows(&p.diagnostics);
        }
        from = i + 1;
    };
    assert_eq!(rows, expected);
    assert_eq!(
        c.status()["specifierMacros"],
        serde_json::json!(["DS_D_INLINE"])
    );
    assert_eq!(c.shutdown().code(), Some(0));

    // No workspace: skipped as by `check ops.cuh`, until the header that defines the macro is
    // opened; closing it forgets the macro again.
    let mut c = Client::start(&root, &[]);
    c.initialize();
    c.open(&uri, 1, ops);
    assert!(c.diagnostics(&uri, 1).diagnostics.is_empty());
    assert_eq!(c.status()["specifierMacros"], serde_json::json!([]));
    let defs_uri = file_uri(&root.join("include/defs.cuh"));
    let (seen, _) = c.diagnostics_after(0, &uri, Some(1));
    c.open(&defs_uri, 1, defs);
    let mut from = seen + 1;
    let (seen, rows) = loop {
        let (i, p) = c.diagnostics_after(from, &uri, Some(1));
        if !p.diagnostics.is_empty() {
            break (i, lsp_rows(&p.diagnostics));
        }
        from = i + 1;
    };
    assert_eq!(rows, expected);
    assert_eq!(
        c.status()["specifierMacros"],
        serde_json::json!(["DS_D_INLINE"])
    );
    c.close(&defs_uri);
    let (_, p) = c.diagnostics_after(seen + 1, &uri, Some(1));
    assert!(p.diagnostics.is_empty(), "{:?}", p.diagnostics);
    assert_eq!(c.status()["specifierMacros"], serde_json::json!([]));
    assert_eq!(c.shutdown().code(), Some(0));
}

/// A file whose only GPU qualifier is a specifier macro of a header it includes is analysed
/// with no workspace folder and no other document open, as `check FILE` analyses it alone (a
/// pre-commit hook's view: rocPRIM's headers and `ROCPRIM_DEVICE` from `config.hpp`).
#[test]
fn specifier_macros_of_included_headers_count_without_a_workspace() {
    let d = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(d.path()).unwrap();
    let defs = "#pragma once\n#define DS_D_INLINE __device__ __forceinline__\n";
    let ops = "#include \"include/defs.cuh\"\n\
               DS_D_INLINE float warp_sum(float v) {\n  \
               for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o, 32);\n  \
               return v;\n}\n";
    std::fs::create_dir_all(root.join("include")).unwrap();
    std::fs::write(root.join("include/defs.cuh"), defs).unwrap();
    std::fs::write(root.join("ops.cuh"), ops).unwrap();
    let (mut expected, _) = check_json(&root, "ops.cuh");
    expected.sort();
    assert_eq!(
        expected.len(),
        3,
        "check ops.cuh alone reads its header's macro"
    );
    let uri = file_uri(&root.join("ops.cuh"));
    let mut c = Client::start(&root, &[]);
    c.initialize();
    c.open(&uri, 1, ops);
    let mut rows = lsp_rows(&c.diagnostics(&uri, 1).diagnostics);
    rows.sort();
    assert_eq!(rows, expected);
    assert_eq!(c.shutdown().code(), Some(0));
}
