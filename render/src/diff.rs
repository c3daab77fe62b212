//! Unified diffs of a rewritten file (`unroll --diff`, `check --diff`): three lines of context,
//! the display path on both header lines.

/// The unified diff from `old` to `new`, empty when they are equal (bytes that are not UTF-8
/// are shown replaced; the diff is for reading, the files are written byte for byte).
pub fn unified(path: &str, old: &[u8], new: &[u8]) -> String {
    if old == new {
        return String::new();
    }
    let old = String::from_utf8_lossy(old);
    let new = String::from_utf8_lossy(new);
    similar::TextDiff::from_lines(old.as_ref(), new.as_ref())
        .unified_diff()
        .context_radius(3)
        .header(path, path)
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_and_hunks() {
        let d = unified("a.cu", b"x\ny\nz\n", b"x\nY\nz\n");
        assert!(
            d.starts_with("--- a.cu\n+++ a.cu\n@@ -1,3 +1,3 @@\n"),
            "{d}"
        );
        assert!(d.contains("-y\n+Y\n"), "{d}");
        assert_eq!(unified("a.cu", b"same\n", b"same\n"), "");
    }
}
