//! Pragma mode: put `#pragma unroll N` on its own line just before a loop, or rewrite the
//! unroll pragma it already has. Idempotent: a loop that already carries exactly that pragma
//! gets no edit.

use crate::edit::Edit;
use crate::text;
use frontend::{Loop, SourceFile};

/// The pragma text for `factor`: `#pragma unroll N`, or `#pragma unroll` (no count) for
/// [`crate::FULL`].
pub fn pragma_text(factor: u32) -> String {
    if factor == crate::FULL {
        "#pragma unroll".to_string()
    } else {
        format!("#pragma unroll {factor}")
    }
}

/// The edits that give `lp` the pragma [`pragma_text`] of `factor` (none when it already has
/// it). The caller refuses [`crate::FULL`] on a loop whose trip count is not a constant.
pub fn edits(src: &[u8], file: &SourceFile, lp: &Loop, factor: u32) -> Vec<Edit> {
    let want = pragma_text(factor);
    if let Some(p) = &lp.pragma {
        let have = &src[p.span.start..p.span.end];
        let have = trim_end(have);
        if have == want.as_bytes() {
            return Vec::new();
        }
        return vec![Edit::replace(p.span.start..p.span.start + have.len(), want)];
    }
    let nl = if file.crlf { "\r\n" } else { "\n" };
    let kw = lp.keyword.start;
    let indent = text::indent_of(src, kw).to_vec();
    if text::first_on_line(src, kw) && starts_statement(src, file, kw) {
        let mut t = indent;
        t.extend_from_slice(want.as_bytes());
        t.extend_from_slice(nl.as_bytes());
        vec![Edit::insert(text::line_start(src, kw), t)]
    } else {
        // `if (c) for (...)`, `label: for (...)`, or a loop that is the unbraced body of an
        // `if`/`for`/`else`: a pragma line there may not parse, so the loop becomes the only
        // statement of a new block that starts with the pragma.
        let unit = text::indent_unit(src, lp.span.start..lp.span.end, &indent);
        let mut inner = indent.clone();
        inner.extend_from_slice(&unit);
        let mut t = b"{".to_vec();
        t.extend_from_slice(nl.as_bytes());
        t.extend_from_slice(&inner);
        t.extend_from_slice(want.as_bytes());
        t.extend_from_slice(nl.as_bytes());
        t.extend_from_slice(&inner);
        t.extend_from_slice(&text::reindent(
            &src[lp.span.start..lp.span.end],
            &unit,
            |_| false,
        ));
        t.extend_from_slice(nl.as_bytes());
        t.extend_from_slice(&indent);
        t.push(b'}');
        vec![Edit::replace(lp.span.start..lp.span.end, t)]
    }
}

/// True when the code before `pos` ends a statement or opens/closes a block (`;`, `{`, `}`),
/// skipping whitespace, comments and preprocessor lines: a pragma line can go there.
fn starts_statement(src: &[u8], file: &SourceFile, pos: usize) -> bool {
    let mut i = pos;
    loop {
        while i > 0 && src[i - 1].is_ascii_whitespace() {
            i -= 1;
        }
        if i == 0 {
            return true;
        }
        if let Some(c) = file
            .inert
            .iter()
            .find(|s| s.start < i && i <= s.end && src[s.start] == b'/')
        {
            i = c.start;
            continue;
        }
        let ls = text::line_start(src, i - 1);
        if src[ls..i].iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'#') {
            i = ls;
            continue;
        }
        return matches!(src[i - 1], b';' | b'{' | b'}');
    }
}

fn trim_end(b: &[u8]) -> &[u8] {
    let n = b
        .iter()
        .rposition(|c| !c.is_ascii_whitespace())
        .map_or(0, |p| p + 1);
    &b[..n]
}

/// The edit that removes `lp`'s unroll pragma line entirely (manual mode: a pragma in front of
/// the generated block would no longer precede a loop). `None` when it has none, or when the
/// pragma shares its line with other code (then only the pragma text is removed).
pub fn removal(src: &[u8], lp: &Loop) -> Option<Edit> {
    let p = lp.pragma.as_ref()?;
    let (s, e) = (p.span.start, p.span.end);
    if text::first_on_line(src, s) && text::last_on_line(src, e) {
        Some(Edit::delete(
            text::line_start(src, s)..text::line_end_inclusive(src, e),
        ))
    } else {
        Some(Edit::delete(s..e))
    }
}
