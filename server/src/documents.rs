//! The open documents: each one's URI, file path, version and unsaved text, kept exactly while
//! the editor has it open (so the server's memory is bounded by what is open), and the overlay
//! of their texts that translation units and config lookups read instead of the disk.

use frontend::tu::Overlay;
use lsp_types::{TextDocumentContentChangeEvent, Uri};
use render::lines::LineIndex;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What the server does with a document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A source `check` takes (`.cu`, `.cuh`, `.hip`, `.h`, `.hpp`, ...): analysed.
    Source,
    /// `hip-unroll.toml`: its edits re-check every open source.
    Config,
    /// Anything else: kept only for the overlay.
    Other,
}

#[derive(Debug, Clone)]
pub struct Document {
    pub uri: Uri,
    /// The file's path (lexically normalised), for a `file:` URI.
    pub path: Option<PathBuf>,
    pub version: i32,
    pub text: Arc<[u8]>,
    pub kind: Kind,
}

/// Why an edit could not be applied.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum EditError {
    #[error("a change to a document that is not open: {0}")]
    NotOpen(String),
}

/// The documents the editor has open, by URI.
#[derive(Debug, Default)]
pub struct Documents {
    by_uri: HashMap<Uri, Document>,
}

impl Documents {
    /// How many documents are open.
    pub fn count(&self) -> usize {
        self.by_uri.len()
    }

    pub fn get(&self, uri: &Uri) -> Option<&Document> {
        self.by_uri.get(uri)
    }

    pub fn iter(&self) -> impl Iterator<Item = &Document> {
        self.by_uri.values()
    }

    /// `didOpen` (an open of a document already open replaces it).
    pub fn open(&mut self, uri: Uri, version: i32, text: Vec<u8>) -> &Document {
        let path = file_path(&uri);
        let kind = path.as_deref().map_or(Kind::Source, kind_of);
        let doc = Document {
            uri: uri.clone(),
            path,
            version,
            text: Arc::from(text),
            kind,
        };
        self.by_uri.insert(uri.clone(), doc);
        &self.by_uri[&uri]
    }

    /// `didChange`: the changes in order (a change without a range replaces the whole text;
    /// ranges are UTF-16 positions in the text as the previous change left it).
    pub fn change(
        &mut self,
        uri: &Uri,
        version: i32,
        changes: Vec<TextDocumentContentChangeEvent>,
    ) -> Result<&Document, EditError> {
        let doc = self
            .by_uri
            .get_mut(uri)
            .ok_or_else(|| EditError::NotOpen(uri.as_str().to_string()))?;
        let mut text: Vec<u8> = doc.text.to_vec();
        for c in changes {
            match c.range {
                None => text = c.text.into_bytes(),
                Some(r) => {
                    let ix = LineIndex::new(&text);
                    let start = ix.utf16_offset(&text, r.start.line, r.start.character);
                    let end = ix
                        .utf16_offset(&text, r.end.line, r.end.character)
                        .max(start);
                    text.splice(start..end, c.text.into_bytes());
                }
            }
        }
        doc.text = Arc::from(text);
        doc.version = version;
        Ok(doc)
    }

    /// `didClose`: the document is forgotten.
    pub fn close(&mut self, uri: &Uri) -> Option<Document> {
        self.by_uri.remove(uri)
    }

    /// The texts of every open document with a path, by path: what units and config lookups
    /// read instead of the disk.
    pub fn overlay(&self) -> Arc<Overlay> {
        Arc::new(
            self.by_uri
                .values()
                .filter_map(|d| d.path.clone().map(|p| (p, d.text.clone())))
                .collect(),
        )
    }
}

/// What a path is to the server.
pub fn kind_of(path: &Path) -> Kind {
    if path.file_name().is_some_and(|n| n == config::CONFIG_NAME) {
        Kind::Config
    } else if workspace::has_source_extension(path) {
        Kind::Source
    } else {
        Kind::Other
    }
}

/// The path of a `file:` URI (percent-decoded, lexically normalised), `None` for any other
/// scheme or a remote host.
pub fn file_path(uri: &Uri) -> Option<PathBuf> {
    if !uri
        .scheme()
        .is_some_and(|s| s.as_str().eq_ignore_ascii_case("file"))
    {
        return None;
    }
    if let Some(a) = uri.authority() {
        let host = a.host().as_str();
        if !host.is_empty() && !host.eq_ignore_ascii_case("localhost") {
            return None;
        }
    }
    let bytes = uri.path().as_estr().decode().into_bytes().into_owned();
    #[cfg(unix)]
    let path = {
        use std::os::unix::ffi::OsStringExt;
        PathBuf::from(std::ffi::OsString::from_vec(bytes))
    };
    #[cfg(not(unix))]
    let path = PathBuf::from(String::from_utf8_lossy(&bytes).into_owned());
    path.is_absolute().then(|| frontend::tu::normalize(&path))
}

#[cfg(test)]
mod tests {
    use super::*;
    use lsp_types::{Position, Range};

    fn uri(s: &str) -> Uri {
        s.parse().unwrap()
    }

    #[test]
    fn file_uris_become_paths() {
        assert_eq!(
            file_path(&uri("file:///a/b%20c/./k.cu")),
            Some(PathBuf::from("/a/b c/k.cu"))
        );
        assert_eq!(
            file_path(&uri("file://localhost/x.cuh")),
            Some(PathBuf::from("/x.cuh"))
        );
        assert_eq!(file_path(&uri("untitled:Untitled-1")), None);
        assert_eq!(file_path(&uri("file://elsewhere/x.cu")), None);
        assert_eq!(kind_of(Path::new("/a/hip-unroll.toml")), Kind::Config);
        assert_eq!(kind_of(Path::new("/a/k.cuh")), Kind::Source);
        assert_eq!(kind_of(Path::new("/a/notes.txt")), Kind::Other);
    }

    #[test]
    fn incremental_changes_apply_in_utf16() {
        let mut docs = Documents::default();
        let u = uri("file:///k.cu");
        docs.open(u.clone(), 1, "a\u{1F600}b\nline2\n".into());
        let at = |l, c| Position::new(l, c);
        let change = |r: Option<Range>, t: &str| TextDocumentContentChangeEvent {
            range: r,
            range_length: None,
            text: t.into(),
        };
        // Replace `b` (after the emoji: UTF-16 column 3), then insert on line 2.
        let d = docs
            .change(
                &u,
                2,
                vec![
                    change(Some(Range::new(at(0, 3), at(0, 4))), "B"),
                    change(Some(Range::new(at(1, 0), at(1, 0))), ">"),
                ],
            )
            .unwrap();
        assert_eq!(&*d.text, "a\u{1F600}B\n>line2\n".as_bytes());
        assert_eq!(d.version, 2);
        let d = docs.change(&u, 3, vec![change(None, "x")]).unwrap();
        assert_eq!(&*d.text, b"x");
        assert_eq!(docs.overlay()[Path::new("/k.cu")].as_ref(), b"x");
        assert!(docs.close(&u).is_some());
        assert_eq!(docs.count(), 0);
        assert!(docs.change(&u, 4, vec![]).is_err());
    }
}
