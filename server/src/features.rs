//! Code actions and hover over one analysed document. Quick fixes are the fixes of `check`'s
//! diagnostics (a safe one preferred, an unsafe one titled as such and never preferred); the
//! refactors are "Unroll loop L by 2/4/8 (pragma)/(manual)", offered only for the rewrites
//! `pipeline::Source::variant` makes under the default policy (so never on a blocked loop, nor
//! on a loop whose pragma is its author's decision), each with exactly the edits that
//! `hip-unroll unroll` writes. Hover on a loop says its id, verdict and why; on a diagnostic,
//! the rule's documentation (`explain`).

use crate::analysis::Analysis;
use crate::convert;
use guards::fix::Applicability;
use lsp_types::{
    CodeAction, CodeActionKind, CodeActionOrCommand, DocumentChanges, Hover, HoverContents,
    MarkupContent, MarkupKind, OneOf, OptionalVersionedTextDocumentIdentifier, Range,
    TextDocumentEdit, TextEdit, Uri, WorkspaceEdit,
};
use pipeline::{LoopLoc, Mode, Policy, Source};
use std::collections::HashMap;
use std::sync::OnceLock;

/// The factors offered as refactors.
pub const FACTORS: [u32; 3] = [2, 4, 8];

/// How edits are sent: with the document's version (`documentChanges`, when the client
/// supports it: a client applies them only to that version) or as plain `changes`.
#[derive(Debug, Clone, Copy)]
pub struct EditStyle {
    pub versioned: bool,
}

fn workspace_edit(
    uri: &Uri,
    version: i32,
    edits: Vec<TextEdit>,
    style: EditStyle,
) -> WorkspaceEdit {
    if style.versioned {
        WorkspaceEdit {
            document_changes: Some(DocumentChanges::Edits(vec![TextDocumentEdit {
                text_document: OptionalVersionedTextDocumentIdentifier {
                    uri: uri.clone(),
                    version: Some(version),
                },
                edits: edits.into_iter().map(OneOf::Left).collect(),
            }])),
            ..WorkspaceEdit::default()
        }
    } else {
        WorkspaceEdit {
            changes: Some(HashMap::from([(uri.clone(), edits)])),
            ..WorkspaceEdit::default()
        }
    }
}

/// Lines `a` and `b` overlap.
fn overlaps(a: &Range, b: &Range) -> bool {
    a.start <= b.end && b.start <= a.end
}

/// The code actions for `range` of the document.
pub fn code_actions(
    uri: &Uri,
    analysis: &Analysis,
    source: Option<&Source>,
    range: Range,
    style: EditStyle,
) -> Vec<CodeActionOrCommand> {
    let text: &[u8] = &analysis.text;
    let lines = &analysis.lines;
    let mut out = Vec::new();
    for d in &analysis.diagnostics {
        let Some(fix) = &d.fix else { continue };
        let diag = convert::diagnostic(d, uri, text, lines);
        if !overlaps(&diag.range, &range) {
            continue;
        }
        let safe = fix.applicability == Applicability::Safe;
        let title = if safe {
            fix.message.clone()
        } else {
            format!("{} (unsafe fix)", fix.message)
        };
        out.push(CodeActionOrCommand::CodeAction(CodeAction {
            title,
            kind: Some(CodeActionKind::QUICKFIX),
            diagnostics: Some(vec![diag]),
            edit: Some(workspace_edit(
                uri,
                analysis.version,
                convert::text_edits(&fix.edits, text, lines),
                style,
            )),
            is_preferred: Some(safe),
            ..CodeAction::default()
        }));
    }
    let Some(source) = source else { return out };
    let at = convert::offset(text, lines, range.start);
    let Some(loc) = loop_at(source, at) else {
        return out;
    };
    let id = source.file().loop_id(loc);
    for factor in FACTORS {
        for mode in [Mode::Pragma, Mode::Manual] {
            let Ok(v) = source.variant(loc, factor, mode, Policy::default()) else {
                continue;
            };
            if v.edits.is_empty() {
                continue;
            }
            out.push(CodeActionOrCommand::CodeAction(CodeAction {
                title: format!("Unroll loop {id} by {factor} ({mode})"),
                kind: Some(CodeActionKind::REFACTOR_REWRITE),
                edit: Some(workspace_edit(
                    uri,
                    analysis.version,
                    convert::text_edits(&v.edits, text, lines),
                    style,
                )),
                is_preferred: Some(false),
                ..CodeAction::default()
            }));
        }
    }
    out
}

/// The innermost loop of a kernel or device function that holds byte `at` (in its statement or
/// its pragma line).
fn loop_at(source: &Source, at: usize) -> Option<LoopLoc> {
    let file = source.file();
    file.all_loops()
        .filter(|(_, f, _)| f.kind != frontend::FunctionKind::Host)
        .filter(|(_, _, l)| {
            let start = l.pragma.as_ref().map_or(l.span.start, |p| p.span.start);
            start <= at && at <= l.span.end
        })
        .max_by_key(|(_, _, l)| l.depth)
        .map(|(loc, _, _)| loc)
}

/// The loop whose header (from its pragma or keyword to its body) holds byte `at`.
fn loop_header_at(source: &Source, at: usize) -> Option<LoopLoc> {
    let file = source.file();
    file.all_loops()
        .filter(|(_, f, _)| f.kind != frontend::FunctionKind::Host)
        .find(|(_, _, l)| {
            let start = l.pragma.as_ref().map_or(l.keyword.start, |p| p.span.start);
            let end = if l.body.start > l.keyword.start {
                l.body.start
            } else {
                l.keyword.end
            };
            start <= at && at <= end
        })
        .map(|(loc, _, _)| loc)
}

fn rule_docs() -> &'static [render::RuleInfo] {
    static RULES: OnceLock<Vec<render::RuleInfo>> = OnceLock::new();
    RULES.get_or_init(render::rules)
}

/// What a loop is, in markdown: id, verdict, the evidence of each blocker (through which
/// helper, macro or header), the trip count, the pragma, the calls nothing visible answers.
pub fn loop_markdown(source: &Source, loc: LoopLoc) -> String {
    let info = source.info(loc);
    let kind = match info.kind {
        frontend::LoopKind::For => "for",
        frontend::LoopKind::While => "while",
        frontend::LoopKind::Do => "do-while",
        frontend::LoopKind::RangeFor => "range for",
    };
    let mut s = format!("**loop `{}`** ({kind}, depth {})", info.id, info.depth);
    if info.blockers.is_empty() {
        s.push_str(": **candidate**, no blocker reaches it\n");
    } else {
        let mut rules: Vec<&str> = info.blockers.iter().map(|b| b.rule).collect();
        rules.dedup();
        s.push_str(&format!(": **blocked** by {}\n", rules.join(", ")));
        for b in &info.blockers {
            s.push_str(&format!("- `{}` at line {}: {}\n", b.rule, b.line, b.what));
        }
    }
    s.push('\n');
    match info.trip_count {
        Some(n) => s.push_str(&format!("trip count: {n}\n")),
        None => s.push_str("trip count: not a constant\n"),
    }
    if let Some(p) = &info.pragma {
        s.push_str(&format!("\npragma: `{}`", p.text));
        if p.user_decision {
            s.push_str(" (its author's decision: not rewritten)");
        }
        s.push('\n');
    }
    if !info.unresolved.is_empty() {
        let calls: Vec<String> = info.unresolved.iter().map(|c| format!("`{c}`")).collect();
        s.push_str(&format!(
            "\ncalls with no visible body (the verdict cannot see into them): {}\n",
            calls.join(", ")
        ));
    }
    s
}

/// Hover at byte `at`: the loop whose header is there, and every diagnostic there with its
/// rule's documentation.
pub fn hover(analysis: &Analysis, source: Option<&Source>, at: usize) -> Option<Hover> {
    let text: &[u8] = &analysis.text;
    let lines = &analysis.lines;
    let mut parts: Vec<String> = Vec::new();
    let mut range: Option<Range> = None;
    if let Some((source, loc)) = source.and_then(|s| loop_header_at(s, at).map(|l| (s, l))) {
        parts.push(loop_markdown(source, loc));
        let l = &source.file().functions[loc.function].loops[loc.index];
        range = Some(convert::range(text, lines, l.keyword.start, l.keyword.end));
    }
    for d in &analysis.diagnostics {
        let (s, e) = d.span;
        if !(s <= at && at <= e) {
            continue;
        }
        let sev = match d.severity {
            guards::Severity::Error => "error",
            guards::Severity::Warning => "warning",
            guards::Severity::Hint => "hint",
        };
        let mut part = format!("**{}** ({sev}): {}\n", d.rule, d.message);
        if let Some(r) = rule_docs().iter().find(|r| r.id == d.rule) {
            part.push_str("\n---\n\n");
            part.push_str(r.doc.trim_end());
            part.push('\n');
        }
        parts.push(part);
        range.get_or_insert_with(|| convert::range(text, lines, s, e));
    }
    if parts.is_empty() {
        return None;
    }
    Some(Hover {
        contents: HoverContents::Markup(MarkupContent {
            kind: MarkupKind::Markdown,
            value: parts.join("\n---\n\n"),
        }),
        range,
    })
}
