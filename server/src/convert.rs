//! `check`'s findings in the Language Server Protocol's terms: byte ranges to 0-based line and
//! UTF-16 positions (through `render::lines`), `guards::Diagnostic` to an LSP diagnostic (the
//! rule id as its code, the same severity and message, the blockers as related information),
//! byte edits to text edits.

use frontend::edit::Edit;
use guards::Severity;
use lsp_types::{
    DiagnosticRelatedInformation, DiagnosticSeverity, Location, NumberOrString, Position, Range,
    TextEdit, Uri,
};
use render::lines::LineIndex;

/// The `source` of every diagnostic the server publishes.
pub const SOURCE: &str = "hip-unroll";

/// The LSP range of bytes `start..end` of `text`.
pub fn range(text: &[u8], lines: &LineIndex, start: usize, end: usize) -> Range {
    let (sl, sc) = lines.utf16_position(text, start);
    let (el, ec) = lines.utf16_position(text, end.max(start));
    Range::new(Position::new(sl, sc), Position::new(el, ec))
}

/// The byte offset of an LSP position in `text`.
pub fn offset(text: &[u8], lines: &LineIndex, p: Position) -> usize {
    lines.utf16_offset(text, p.line, p.character)
}

pub fn severity(s: Severity) -> DiagnosticSeverity {
    match s {
        Severity::Error => DiagnosticSeverity::ERROR,
        Severity::Warning => DiagnosticSeverity::WARNING,
        Severity::Hint => DiagnosticSeverity::HINT,
    }
}

/// One of `check`'s diagnostics of the document at `uri`.
pub fn diagnostic(
    d: &guards::Diagnostic,
    uri: &Uri,
    text: &[u8],
    lines: &LineIndex,
) -> lsp_types::Diagnostic {
    let span = checked_span(d.span, d.line, d.column, text, lines);
    let related: Vec<DiagnosticRelatedInformation> = d
        .related
        .iter()
        .map(|r| DiagnosticRelatedInformation {
            location: Location::new(uri.clone(), {
                let s = checked_span(r.span, r.line, r.column, text, lines);
                range(text, lines, s.0, s.1)
            }),
            message: r.label.clone(),
        })
        .collect();
    lsp_types::Diagnostic {
        range: range(text, lines, span.0, span.1),
        severity: Some(severity(d.severity)),
        code: Some(NumberOrString::String(d.rule.clone())),
        code_description: None,
        source: Some(SOURCE.to_string()),
        message: d.message.clone(),
        related_information: (!related.is_empty()).then_some(related),
        tags: None,
        data: None,
    }
}

/// A span that agrees with its reported 1-based line and byte column, or one rebuilt from them
/// (to the end of the word there): a diagnostic is never placed elsewhere than `check` says.
fn checked_span(
    span: (usize, usize),
    line: u32,
    column: u32,
    text: &[u8],
    lines: &LineIndex,
) -> (usize, usize) {
    let (s, e) = span;
    if s <= e && e <= text.len() {
        let l0 = lines.line_of(s);
        if l0 + 1 == line as usize && s - lines.line_start(l0) + 1 == column as usize {
            return (s, e);
        }
    }
    let s = lines.offset(line, column);
    let end = lines.line_end(lines.line_of(s));
    let word = text[s..end]
        .iter()
        .position(|b| !(b.is_ascii_alphanumeric() || *b == b'_'))
        .unwrap_or(end - s);
    (s, s + word.max(1).min(end - s))
}

/// Byte edits of `text` as LSP text edits.
pub fn text_edits(edits: &[Edit], text: &[u8], lines: &LineIndex) -> Vec<TextEdit> {
    edits
        .iter()
        .map(|e| TextEdit {
            range: range(text, lines, e.range.start, e.range.end),
            new_text: String::from_utf8_lossy(&e.text).into_owned(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_become_utf16_ranges() {
        let text = "// \u{e9}\u{1F600}\nfor (;;) {}\n".as_bytes();
        let lines = LineIndex::new(text);
        let at = text.iter().position(|&b| b == b'f').unwrap();
        let d = guards::Diagnostic {
            path: "k.cu".into(),
            line: 2,
            column: 1,
            rule: "unroll-blocked".into(),
            severity: Severity::Warning,
            message: "m".into(),
            span: (at, at + 3),
            related: vec![guards::Related {
                line: 1,
                column: 4,
                span: (3, 5),
                label: "here".into(),
            }],
            fix: None,
        };
        let uri: Uri = "file:///k.cu".parse().unwrap();
        let l = diagnostic(&d, &uri, text, &lines);
        assert_eq!(
            l.range,
            Range::new(Position::new(1, 0), Position::new(1, 3))
        );
        assert_eq!(
            l.code,
            Some(NumberOrString::String("unroll-blocked".into()))
        );
        assert_eq!(l.severity, Some(DiagnosticSeverity::WARNING));
        let r = &l.related_information.unwrap()[0];
        assert_eq!(
            r.location.range,
            Range::new(Position::new(0, 3), Position::new(0, 4))
        );
        // A span that disagrees with its line and column is rebuilt from them.
        let mut bad = d.clone();
        bad.span = (usize::MAX - 1, usize::MAX);
        let l = diagnostic(&bad, &uri, text, &lines);
        assert_eq!(
            l.range,
            Range::new(Position::new(1, 0), Position::new(1, 3))
        );
        let edits = text_edits(&[Edit::replace(at..at + 3, "while")], text, &lines);
        assert_eq!(edits[0].range.start, Position::new(1, 0));
        assert_eq!(edits[0].new_text, "while");
    }
}
