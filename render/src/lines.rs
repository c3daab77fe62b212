//! Positions in a source file's bytes: 1-based line and column of a byte offset (columns in
//! bytes or UTF-16 code units), and [`LineIndex`], the line starts of a text for conversions in
//! both directions without rescanning it (code frames; the language server's 0-based
//! line/UTF-16 positions). Bytes that are not UTF-8 count one unit each, so every offset has a
//! position and back.

/// 1-based line and 1-based column of byte offset `at` in `source`, the column counted in
/// units of `unit` (bytes or UTF-16 code units) over the line's text up to `at`.
pub fn line_col(source: &[u8], at: usize, unit: ColumnUnit) -> (u32, u32) {
    let at = at.min(source.len());
    let line_start = source[..at]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let line = 1 + memchr_count(&source[..line_start]);
    let prefix = &source[line_start..at];
    let col = match unit {
        ColumnUnit::Bytes => prefix.len(),
        ColumnUnit::Utf16 => utf16_len(prefix),
    };
    (line as u32, col as u32 + 1)
}

fn memchr_count(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| b == b'\n').count()
}

/// UTF-16 code units of `bytes` (an invalid byte counts one).
fn utf16_len(bytes: &[u8]) -> usize {
    bytes
        .utf8_chunks()
        .map(|c| c.valid().encode_utf16().count() + c.invalid().len())
        .sum()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnUnit {
    Bytes,
    /// SARIF's default `columnKind`, and the Language Server Protocol's default encoding.
    Utf16,
}

/// Byte offsets of line starts (lines end at `\n`; a `\r` before it belongs to the line).
#[derive(Debug, Clone)]
pub struct LineIndex {
    starts: Vec<usize>,
    len: usize,
}

impl LineIndex {
    pub fn new(src: &[u8]) -> LineIndex {
        let mut starts = vec![0];
        starts.extend(
            src.iter()
                .enumerate()
                .filter(|(_, &b)| b == b'\n')
                .map(|(i, _)| i + 1),
        );
        LineIndex {
            starts,
            len: src.len(),
        }
    }

    /// Number of lines (a text ending in `\n` has an empty last line).
    pub fn lines(&self) -> usize {
        self.starts.len()
    }

    /// 0-based line containing `offset` (clamped to the text).
    pub fn line_of(&self, offset: usize) -> usize {
        self.starts.partition_point(|&s| s <= offset.min(self.len)) - 1
    }

    /// Offset of the start of 0-based `line0` (clamped to the last line).
    pub fn line_start(&self, line0: usize) -> usize {
        self.starts[line0.min(self.starts.len() - 1)]
    }

    /// End of the 0-based line (its `\n` excluded).
    pub fn line_end(&self, line0: usize) -> usize {
        self.starts.get(line0 + 1).map_or(self.len, |s| s - 1)
    }

    /// Offset of a 1-based (line, byte column), clamped to that line.
    pub fn offset(&self, line: u32, column: u32) -> usize {
        let l0 = (line.max(1) - 1) as usize;
        let start = self.line_start(l0);
        (start + column.max(1) as usize - 1).min(self.line_end(l0))
    }

    /// 0-based line and 0-based UTF-16 column of byte `offset` of `src` (the text this index
    /// was made from), as the Language Server Protocol counts them. An offset inside a UTF-8
    /// sequence counts from the start of that sequence.
    pub fn utf16_position(&self, src: &[u8], offset: usize) -> (u32, u32) {
        let mut offset = offset.min(self.len).min(src.len());
        let line0 = self.line_of(offset);
        let start = self.line_start(line0);
        while offset > start && offset < src.len() && is_continuation(src[offset]) {
            offset -= 1;
        }
        (line0 as u32, utf16_len(&src[start..offset]) as u32)
    }

    /// Byte offset of 0-based `line0` and UTF-16 column `col16` in `src`, clamped to the
    /// line's end (a line past the last is the end of the text; a column inside a surrogate
    /// pair is the character's start).
    pub fn utf16_offset(&self, src: &[u8], line0: u32, col16: u32) -> usize {
        let line0 = line0 as usize;
        if line0 >= self.starts.len() {
            return self.len;
        }
        let (start, end) = (self.line_start(line0), self.line_end(line0));
        let mut at = start;
        let mut units = 0usize;
        for chunk in src[start..end].utf8_chunks() {
            for c in chunk.valid().chars() {
                let w = c.len_utf16();
                if units + w > col16 as usize {
                    return at;
                }
                units += w;
                at += c.len_utf8();
            }
            for _ in chunk.invalid() {
                if units + 1 > col16 as usize {
                    return at;
                }
                units += 1;
                at += 1;
            }
        }
        at
    }
}

/// A UTF-8 continuation byte (`10xxxxxx`).
fn is_continuation(b: u8) -> bool {
    b & 0xC0 == 0x80
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_counts_bytes_and_utf16() {
        let src = "ab\n\u{e9}\u{1F600}x\n".as_bytes();
        let x = src.iter().position(|&b| b == b'x').unwrap();
        assert_eq!(line_col(src, x, ColumnUnit::Bytes), (2, 7));
        // é is one UTF-16 unit, the emoji two.
        assert_eq!(line_col(src, x, ColumnUnit::Utf16), (2, 4));
        assert_eq!(line_col(src, 0, ColumnUnit::Bytes), (1, 1));
        assert_eq!(line_col(src, 10_000, ColumnUnit::Bytes), (3, 1));
    }

    #[test]
    fn utf16_positions_round_trip() {
        let src = ["ab\n\u{e9}\u{1F600}x\r\n".as_bytes(), b"\xff?\xffz"].concat();
        let ix = LineIndex::new(&src);
        assert_eq!(ix.lines(), 3);
        for offset in 0..=src.len() {
            let (l, c) = ix.utf16_position(&src, offset);
            let back = ix.utf16_offset(&src, l, c);
            assert!(back <= offset, "{offset} -> ({l},{c}) -> {back}");
            assert_eq!(ix.utf16_position(&src, back), (l, c));
        }
        let x = src.iter().position(|&b| b == b'x').unwrap();
        assert_eq!(ix.utf16_position(&src, x), (1, 3));
        assert_eq!(ix.utf16_offset(&src, 1, 3), x);
        // Inside the emoji (a surrogate pair): its start.
        assert_eq!(ix.utf16_offset(&src, 1, 2), x - 4);
        // Past the line's end: clamped before `\r\n`'s `\n`; past the last line: the end.
        assert_eq!(ix.utf16_offset(&src, 1, 99), ix.line_end(1));
        assert_eq!(ix.utf16_offset(&src, 9, 0), src.len());
        // An invalid byte is one unit.
        let z = src.len() - 1;
        assert_eq!(ix.utf16_position(&src, z), (2, 3));
    }
}
