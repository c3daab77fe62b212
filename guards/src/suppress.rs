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
            let Some(text) = src.get(span.start..span.end) else { continue };
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
                let Some(args) = after.trim_start().strip_prefix('(') else { continue };
                let Some(end) = args.find(')') else { continue };
                for rule in args[..end].split(',').map(str::trim).filter(|r| !r.is_empty()) {
                    if whole_file {
                        s.file.insert(rule.to_string());
                    } else {
                        // A directive in a block comment applies from the line it is written on.
                        s.lines.entry(span.line).or_default().push(rule.to_string());
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

    /// True when `rule` is allowed on `line` (directive on that line or the line before).
    pub fn allows(&self, rule: &str, line: u32) -> bool {
        if self.file_allows(rule) {
            return true;
        }
        [line, line.saturating_sub(1)].iter().any(|l| {
            self.lines.get(l).is_some_and(|v| v.iter().any(|r| r == rule || r == "all"))
        })
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
        let src = "// hip-unroll: allow(barrier, atomic)\nint x; /* hip-unroll: allow-file(wave-size) */\nconst char* s = \"hip-unroll: allow(early-exit)\";\n";
        let f = frontend::parse(src.as_bytes());
        let s = Suppressions::from_file(&f, src.as_bytes());
        assert!(s.allows("barrier", 1) && s.allows("atomic", 2) && !s.allows("atomic", 3));
        assert!(s.allows("wave-size", 40));
        assert!(!s.allows("early-exit", 3) && !s.allows("early-exit", 4));
    }
}
