//! `--format human`: one code frame per finding (annotate-snippets: the primary span at the
//! loop keyword, labelled secondary spans at the blockers), then a summary line.
//!
//! Source bytes that are not UTF-8 are shown as `?` one byte for one, so byte spans stay exact.

use crate::lines::LineIndex;
use crate::{plural, RuleInfo, Sources, Summary};
use annotate_snippets::{AnnotationKind, Group, Level, Origin, Renderer, Snippet};
use guards::{CheckOutput, Diagnostic, Severity};
use std::collections::{BTreeMap, HashMap};

#[derive(Debug, Clone, Copy, Default)]
pub struct HumanOptions {
    /// ANSI colors (the caller decides: a TTY and no `NO_COLOR`).
    pub color: bool,
    /// Findings only: no summary line.
    pub quiet: bool,
    /// List every loop with its verdict and blockers.
    pub loops: bool,
    /// Counts per rule and per blocker instead of one frame per finding.
    pub statistics: bool,
    /// How the caller applies the safe and the unsafe fixes (the binary: its two flags), named
    /// after the summary's "N fixes available"; nothing when `None`.
    pub fix_hints: Option<FixHints>,
}

/// The words after "N fix(es) available" in the summary: how to apply them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FixHints {
    pub safe: &'static str,
    pub unsafe_fixes: &'static str,
}

pub fn render(output: &CheckOutput, sources: &Sources, opts: &HumanOptions) -> String {
    let mut out = String::new();
    if opts.statistics {
        out.push_str(&statistics(output));
    } else {
        let renderer = if opts.color {
            Renderer::styled()
        } else {
            Renderer::plain()
        };
        let mut indexes: HashMap<&str, LineIndex> = HashMap::new();
        for d in &output.diagnostics {
            let src = sources.get(&d.path).map(|v| v.as_slice());
            let index = src.map(|s| {
                &*indexes
                    .entry(d.path.as_str())
                    .or_insert_with(|| LineIndex::new(s))
            });
            let group = frame(d, src.zip(index));
            out.push_str(&renderer.render(&[group]));
            out.push_str("\n\n");
        }
    }
    if opts.loops {
        out.push_str(&loops(output));
    }
    if !opts.quiet && !opts.statistics {
        out.push_str(&parse_error_notes(output));
    }
    if !opts.quiet {
        out.push_str(&summary_line(&Summary::of(output), output, opts.fix_hints));
        out.push('\n');
    }
    out
}

/// Rule documentation for `explain`: the registry's markdown as is, then the rule's kind and
/// default severity.
pub fn explain(rule: &RuleInfo) -> String {
    format!(
        "{}\n\n(rule `{}`: {}, default severity {})\n",
        rule.doc.trim_end(),
        rule.id,
        rule.kind,
        severity_name(rule.severity)
    )
}

fn summary_line(s: &Summary, output: &CheckOutput, hints: Option<FixHints>) -> String {
    let mut line = format!(
        "{}, {}, {}: {}, {}; {}",
        plural(s.files, "file", "files"),
        plural(s.kernels, "kernel", "kernels"),
        plural(s.loops, "loop", "loops"),
        plural(s.candidates, "candidate", "candidates"),
        s.blocked.to_string() + " blocked",
        plural(s.findings(), "finding", "findings"),
    );
    let parts: Vec<String> = [
        (s.errors, "error", "errors"),
        (s.warnings, "warning", "warnings"),
        (s.hints, "hint", "hints"),
    ]
    .iter()
    .filter(|(n, ..)| *n > 0)
    .map(|(n, one, many)| plural(*n, one, many))
    .collect();
    if !parts.is_empty() {
        line.push_str(&format!(" ({})", parts.join(", ")));
    }
    let fixes = |safe: bool| {
        output
            .diagnostics
            .iter()
            .filter(|d| d.fix.as_ref().is_some_and(|f| f.applies(false) == safe))
            .count()
    };
    let (safe, unsafe_) = (fixes(true), fixes(false));
    let with = |how: Option<&str>| how.map_or(String::new(), |h| format!(" with {h}"));
    if safe > 0 {
        line.push_str(&format!(
            "; {}{}",
            plural(safe, "fix available", "fixes available"),
            with(hints.map(|h| h.safe))
        ));
    }
    if unsafe_ > 0 {
        line.push_str(&format!(
            "; {}{}",
            plural(unsafe_, "unsafe fix available", "unsafe fixes available"),
            with(hints.map(|h| h.unsafe_fixes))
        ));
    }
    let with_errors = output.files.iter().filter(|f| f.parse_errors > 0).count();
    if with_errors > 0 {
        line.push_str(&format!(
            "; {} with parse errors",
            plural(with_errors, "file", "files")
        ));
    }
    line
}

/// One line per file that did not parse cleanly: where the first error is, and how many there
/// are (every location is in the JSON output).
fn parse_error_notes(output: &CheckOutput) -> String {
    let mut s = String::new();
    for f in &output.files {
        let Some(first) = f.parse_error_locations.first() else {
            continue;
        };
        let more = match f.parse_errors {
            0 | 1 => String::new(),
            n => format!(" (and {} more)", n - 1),
        };
        s.push_str(&format!(
            "{}:{}:{}: note: parse error: {}{more}; the rest of the file is analysed\n",
            f.path, first.line, first.column, first.message
        ));
    }
    s
}

fn statistics(output: &CheckOutput) -> String {
    let mut by_rule: BTreeMap<(&str, Severity), usize> = BTreeMap::new();
    for d in &output.diagnostics {
        *by_rule.entry((d.rule.as_str(), d.severity)).or_default() += 1;
    }
    let mut by_blocker: BTreeMap<&str, usize> = BTreeMap::new();
    for l in output
        .files
        .iter()
        .flat_map(|f| &f.functions)
        .flat_map(|f| &f.loops)
    {
        for b in &l.blockers {
            *by_blocker.entry(b.as_str()).or_default() += 1;
        }
    }
    let mut rows: Vec<_> = by_rule.into_iter().collect();
    rows.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut s = String::new();
    if !rows.is_empty() {
        s.push_str("findings by rule:\n");
        for ((rule, sev), n) in rows {
            s.push_str(&format!("{n:>6}  {:<8} {rule}\n", severity_name(sev)));
        }
    }
    let mut rows: Vec<_> = by_blocker.into_iter().collect();
    rows.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    if !rows.is_empty() {
        s.push_str("loops by blocker:\n");
        for (blocker, n) in rows {
            s.push_str(&format!("{n:>6}  {blocker}\n"));
        }
    }
    s
}

fn loops(output: &CheckOutput) -> String {
    let mut s = String::new();
    for f in &output.files {
        for func in &f.functions {
            for l in &func.loops {
                let trip = l.trip_count.map_or("?".to_string(), |t| t.to_string());
                let pragma = l
                    .unroll_pragma
                    .as_deref()
                    .map_or(String::new(), |p| format!(", #pragma {p}"));
                let kind = serde_json::to_value(l.kind)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default();
                let mut verdict = match l.verdict {
                    guards::Verdict::Candidate => "candidate".to_string(),
                    guards::Verdict::Blocked => format!("blocked by {}", l.blockers.join(", ")),
                };
                if !l.unresolved.is_empty() {
                    verdict.push_str(&format!(
                        "; calls with no visible body: {}",
                        l.unresolved.join(", ")
                    ));
                }
                s.push_str(&format!(
                    "{}:{}:{}: {} {kind} (depth {}, trip count {trip}{pragma}): {verdict}\n",
                    f.path, l.line, l.column, l.id, l.depth
                ));
            }
        }
    }
    s
}

fn severity_name(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Hint => "hint",
    }
}

fn level(s: Severity) -> Level<'static> {
    match s {
        Severity::Error => Level::ERROR,
        Severity::Warning => Level::WARNING,
        Severity::Hint => Level::HELP.with_name("hint"),
    }
}

/// A span that agrees with its reported line/column, or one rebuilt from them (one char wide).
fn checked_span(
    span: (usize, usize),
    line: u32,
    column: u32,
    src: &[u8],
    ix: &LineIndex,
) -> (usize, usize) {
    let (s, e) = span;
    if s <= e && e <= src.len() {
        let l0 = ix.line_of(s);
        if l0 + 1 == line as usize && s - ix.line_start(l0) + 1 == column as usize {
            return (s, e);
        }
    }
    let s = ix.offset(line, column);
    (s, (s + 1).min(ix.line_end(ix.line_of(s))))
}

fn frame<'a>(d: &'a Diagnostic, src: Option<(&[u8], &LineIndex)>) -> Group<'a> {
    let title = level(d.severity)
        .primary_title(d.message.as_str())
        .id(d.rule.as_str());
    let Some((src, ix)) = src else {
        return title.element(
            Origin::path(d.path.as_str())
                .line(d.line.max(1) as usize)
                .char_column(d.column.max(1) as usize),
        );
    };
    let primary = checked_span(d.span, d.line, d.column, src, ix);
    let related: Vec<((usize, usize), &str)> = d
        .related
        .iter()
        .map(|r| {
            (
                checked_span(r.span, r.line, r.column, src, ix),
                r.label.as_str(),
            )
        })
        .collect();
    let lo = related
        .iter()
        .map(|r| r.0 .0)
        .chain([primary.0])
        .min()
        .unwrap_or(0);
    let hi = related
        .iter()
        .map(|r| r.0 .1)
        .chain([primary.1])
        .max()
        .unwrap_or(0);
    let first = ix.line_of(lo);
    let window_start = ix.line_start(first);
    let mut window_end = ix.line_end(ix.line_of(hi)).max(hi);
    if window_end > hi && src[window_end - 1] == b'\r' {
        window_end -= 1; // the last line's CR (annotate-snippets handles the inner CRLFs)
    }
    let text = lossless_text(&src[window_start..window_end]);
    let local = |(s, e): (usize, usize)| {
        let (mut s, mut e) = (s - window_start, e - window_start);
        while !text.is_char_boundary(s) {
            s -= 1;
        }
        while !text.is_char_boundary(e) {
            e += 1;
        }
        s..e
    };
    let mut snippet = Snippet::source(text.clone())
        .line_start(first + 1)
        .path(d.path.as_str());
    snippet = snippet.annotation(AnnotationKind::Primary.span(local(primary)));
    for (span, label) in &related {
        snippet = snippet.annotation(
            AnnotationKind::Context
                .span(local(*span))
                .label(label.to_string()),
        );
    }
    title.element(snippet)
}

/// `bytes` as text, each byte of an invalid UTF-8 sequence replaced by `?` (same length).
fn lossless_text(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        s.push_str(chunk.valid());
        s.extend(std::iter::repeat_n('?', chunk.invalid().len()));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures;

    #[test]
    fn human_snapshot_plain() {
        let (out, sources) = fixtures::output();
        let text = render(&out, &sources, &HumanOptions::default());
        assert!(!text.contains('\x1b'), "no ANSI escapes without color");
        assert!(text.contains("warning[unroll-blocked]"));
        assert!(text.contains("barrier: every thread must reach this"));
        assert!(text.contains("hint[include-not-found]"), "{text}");
        assert!(text.ends_with(
            "1 file, 1 kernel, 2 loops: 1 candidate, 1 blocked; 4 findings (2 warnings, 2 hints)\n"
        ));
        insta::assert_snapshot!(text);
    }

    #[test]
    fn fix_counts_name_the_callers_way_to_apply_them() {
        let (mut out, sources) = fixtures::output();
        out.diagnostics[2].fix = Some(guards::Fix::unsafe_replace(
            "Replace `32` with `warpSize`",
            frontend::Span::default(),
            "warpSize",
        ));
        let plain = render(&out, &sources, &HumanOptions::default());
        assert!(plain.ends_with("; 1 unsafe fix available\n"), "{plain}");
        let opts = HumanOptions {
            fix_hints: Some(FixHints {
                safe: "SAFE",
                unsafe_fixes: "UNSAFE",
            }),
            ..HumanOptions::default()
        };
        let hinted = render(&out, &sources, &opts);
        assert!(
            hinted.ends_with("; 1 unsafe fix available with UNSAFE\n"),
            "{hinted}"
        );
    }

    #[test]
    fn human_color_has_ansi() {
        let (out, sources) = fixtures::output();
        let opts = HumanOptions {
            color: true,
            ..HumanOptions::default()
        };
        assert!(render(&out, &sources, &opts).contains('\x1b'));
    }

    #[test]
    fn human_without_source_gives_location_only() {
        let (out, _) = fixtures::output();
        let text = render(
            &out,
            &Sources::new(),
            &HumanOptions {
                quiet: true,
                ..HumanOptions::default()
            },
        );
        assert!(text.contains("kernels/odd name,100%:v2.cu:5:5"), "{text}");
        assert!(!text.contains("file,"), "quiet drops the summary: {text}");
    }

    #[test]
    fn human_statistics_and_loops() {
        let (out, sources) = fixtures::output();
        let opts = HumanOptions {
            statistics: true,
            loops: true,
            ..HumanOptions::default()
        };
        insta::assert_snapshot!(render(&out, &sources, &opts));
    }

    #[test]
    fn crlf_and_tabs_render_cleanly() {
        let (mut out, _) = fixtures::output();
        let src = fixtures::SOURCE
            .replace('\n', "\r\n")
            .replace("    for (int i", "\tfor (int i");
        let at = src.find("for (int i").unwrap();
        out.diagnostics.truncate(1);
        out.diagnostics[0].span = (at, at + 3);
        out.diagnostics[0].column = 2;
        let sync = src.find("__syncthreads").unwrap();
        out.diagnostics[0].related[0].span = (sync, sync + 15);
        let mut sources = Sources::new();
        sources.insert(out.files[0].path.clone(), src.into_bytes());
        let text = render(
            &out,
            &sources,
            &HumanOptions {
                quiet: true,
                ..HumanOptions::default()
            },
        );
        assert!(!text.contains('\r') && !text.contains('\t'), "{text:?}");
        assert!(text.contains("for (int i = 0; i < 8; ++i) {\n"), "{text}");
        assert!(text.contains("__syncthreads();\n"), "{text}");
    }

    #[test]
    fn non_utf8_and_bad_spans_do_not_panic() {
        let (mut out, _) = fixtures::output();
        let mut src = fixtures::SOURCE.as_bytes().to_vec();
        src[60] = 0xff; // inside line 2
        for d in &mut out.diagnostics {
            d.span = (usize::MAX - 1, usize::MAX);
            for r in &mut d.related {
                r.span = (10, 5);
            }
        }
        out.diagnostics[0].line = 2;
        out.diagnostics[0].column = 1;
        out.diagnostics[1].line = 999; // past the end: clamped, not a panic
        let mut sources = Sources::new();
        sources.insert(out.files[0].path.clone(), src);
        let text = render(&out, &sources, &HumanOptions::default());
        assert!(text.contains('?'));
        assert_eq!(lossless_text(b"a\xffb\xe2\x82"), "a?b??");
    }
}
