//! Inline suppressions: `// hip-unroll: allow(rule[, rule])` on the line of a finding or the line
//! before, and `// hip-unroll: allow-file(rule)` anywhere. Read from the comments only (the IR's
//! inert ranges), so a string literal that looks like a directive does nothing.

use std::collections::{HashMap, HashSet};

use frontend::SourceFile;

#[derive(Debug, Default)]
pub struct Suppressions {
    file: HashSet<String>,
    lines: HashMap<u32, Vec<String>>,
}

impl Suppressions {
    pub fn from_file(file: &SourceFile, src: &[u8]) -> Self {
        let mut s = Suppressions::default();
        for span in &file.inert {
            let Some(text) = src.get(span.start..span.end) else {
                continue;
            };
            if !(text.starts_with(b"//") || text.starts_with(b"/*")) {
                continue; // a string or char literal
            }
            let text = String::from_utf8_lossy(text);
            let mut rest: &str = &text;
            while let Some(i) = rest.find("hip-unroll:") {
                rest = &rest[i + "hip-unroll:".len()..];
                let r = rest.trim_start();
                let (whole_file, after) = if let Some(a) = r.strip_prefix("allow-file") {
                    (true, a)
                } else if let Some(a) = r.strip_prefix("allow") {
                    (false, a)
                } else {
                    continue;
                };
                let Some(args) = after.trim_start().strip_prefix('(') else {
                    continue;
                };
                let Some(end) = args.find(')') else { continue };
                // A comment alone on its line applies to that line and the next; a trailing
                // comment (code before it) only to its own line.
                let line_start = src[..span.start]
                    .iter()
                    .rposition(|&b| b == b'\n')
                    .map_or(0, |i| i + 1);
                let standalone = src[line_start..span.start]
                    .iter()
                    .all(|b| b.is_ascii_whitespace());
                for rule in args[..end]
                    .split(',')
                    .map(str::trim)
                    .filter(|r| !r.is_empty())
                {
                    if whole_file {
                        s.file.insert(rule.to_string());
                    } else {
                        s.lines.entry(span.line).or_default().push(rule.to_string());
                        if standalone {
                            s.lines
                                .entry(span.line + 1)
                                .or_default()
                                .push(rule.to_string());
                        }
                    }
                }
            }
        }
        s
    }

    /// True when `rule` is allowed for the whole file.
    pub fn file_allows(&self, rule: &str) -> bool {
        self.file.contains(rule) || self.file.contains("all")
    }

    /// True when `rule` is allowed on `line`: a directive trailing that line, or alone on the
    /// line before (or allowed for the whole file).
    pub fn allows(&self, rule: &str, line: u32) -> bool {
        self.file_allows(rule)
            || self
                .lines
                .get(&line)
                .is_some_and(|v| v.iter().any(|r| r == rule || r == "all"))
    }

    pub fn is_empty(&self) -> bool {
        self.file.is_empty() && self.lines.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directives_from_comments_only() {
        let src = "// hip-unroll: allow(barrier, atomic)\nint x; /* hip-unroll: allow-file(wave-size) */\nconst char* s = \"hip-unroll: allow(early-exit)\";\nint y; // hip-unroll: allow(candidate)\n";
        let f = frontend::parse(src.as_bytes());
        let s = Suppressions::from_file(&f, src.as_bytes());
        assert!(s.allows("barrier", 1) && s.allows("atomic", 2) && !s.allows("atomic", 3));
        assert!(s.allows("wave-size", 40));
        assert!(!s.allows("early-exit", 3) && !s.allows("early-exit", 4));
        // Trailing directive: its own line only.
        assert!(s.allows("candidate", 4) && !s.allows("candidate", 5));
    }
}
