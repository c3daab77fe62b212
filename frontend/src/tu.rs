//! Translation units: the headers a source file reaches through `#include "..."`, found on disk,
//! parsed once per run and shared between the files that include them.
//!
//! A quoted include is looked for in the including file's directory, then in the search
//! directories of [`Includes`] in their order (the binary puts the command line's `-I` first,
//! then `[check] include-dirs`, then the `-I` of `[compile]` and `[tune] compile-flags`).
//! Includes are followed transitively, depth first in source order, each header once per unit
//! (cycles and include guards need nothing more). System includes (`#include <...>`) are not
//! followed: the HIP/CUDA API is known by name. A header is parsed once per content (BLAKE3
//! hash) for the whole run by a [`HeaderCache`] that the threads of `check` share.
//!
//! What cannot be found is listed ([`TranslationUnit::missing`]): nothing the guards cannot see
//! is assumed harmless for a manual rewrite.

use std::collections::{HashMap, HashSet};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use crate::ir::{MacroDef, SourceFile, Span};
use crate::lex::{self, Tok, Token};

/// Headers larger than this are not read (listed as missing, [`MissingReason::TooLarge`]).
pub const MAX_HEADER_BYTES: u64 = 16 << 20;
/// At most this many headers per unit; further ones are listed as missing
/// ([`MissingReason::TooMany`]).
pub const MAX_HEADERS: usize = 2048;

/// How an `#include` names its file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum IncludeKind {
    /// `#include "name"`: followed.
    Quoted,
    /// `#include <name>`: not followed (the compiler's and the system's headers).
    System,
    /// `#include MACRO` (a computed include): cannot be followed.
    Computed,
}

/// One `#include` directive of a file.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Include {
    /// The name between the quotes or angle brackets (for a computed include, the text after
    /// `#include`).
    pub spelled: String,
    pub kind: IncludeKind,
    /// The whole directive line (from `#`).
    pub span: Span,
}

/// Why an include of the unit was not followed.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum MissingReason {
    /// No such file next to the including file or in any search directory.
    NotFound,
    /// `#include MACRO`: the name is computed by the preprocessor.
    Computed,
    /// Larger than [`MAX_HEADER_BYTES`].
    TooLarge,
    /// The unit already holds [`MAX_HEADERS`] headers.
    TooMany,
    /// Found but not readable (the I/O error).
    Unreadable(String),
}

/// A quoted include that the unit could not follow.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct MissingInclude {
    pub spelled: String,
    pub reason: MissingReason,
    /// The file that holds the directive (the main file's path as given, or a header's
    /// [`Header::path`]).
    pub from: PathBuf,
    /// Line of the directive in `from`.
    pub line: u32,
    /// The main file's `#include` through which it was reached (the directive itself when
    /// `from` is the main file).
    pub via: Span,
    /// 0 when the directive is in the main file, else how many headers deep.
    pub depth: usize,
}

/// One parsed header, shared by every unit (and thread) that includes this content.
#[derive(Debug)]
pub struct Parsed {
    /// BLAKE3 of `bytes`.
    pub hash: [u8; 32],
    pub bytes: Vec<u8>,
    pub file: Arc<SourceFile>,
    pub includes: Vec<Include>,
    /// True when the header holds no GPU code (no `__global__`, `__device__`,
    /// `__launch_bounds__`; see [`crate::may_contain_gpu_code`]) and was read for its macros and
    /// includes only, without the grammar: `file` holds its `#define`s and comments, no
    /// function. It is parsed in full when it uses a specifier macro of the unit (a
    /// `DEVICE_QUALIFIER void f()` of a header that defines `DEVICE_QUALIFIER` elsewhere).
    pub light: bool,
    tokens: OnceLock<Vec<Token>>,
    declared: OnceLock<HashSet<String>>,
}

impl Parsed {
    fn new(bytes: Vec<u8>) -> Parsed {
        Parsed::with(bytes, &HashMap::new(), &HashMap::new())
    }

    /// Parsed with the specifier macros (`DINLINE`) that other headers of the unit define.
    fn with(
        bytes: Vec<u8>,
        outer: &HashMap<String, crate::SpecifierMacro>,
        namespaces: &HashMap<String, crate::NamespaceMacro>,
    ) -> Parsed {
        let file = crate::parse_in_unit(&bytes, outer, namespaces);
        let includes = scan_includes(&bytes, &file);
        Parsed {
            hash: [0; 32],
            bytes,
            file: Arc::new(file),
            includes,
            light: false,
            tokens: OnceLock::new(),
            declared: OnceLock::new(),
        }
    }

    /// A header with no GPU code: its `#define`s and includes, read without the grammar.
    fn light(bytes: Vec<u8>) -> Parsed {
        let file = macros_only(&bytes);
        let includes = scan_includes(&bytes, &file);
        Parsed {
            hash: [0; 32],
            bytes,
            file: Arc::new(file),
            includes,
            light: true,
            tokens: OnceLock::new(),
            declared: OnceLock::new(),
        }
    }

    fn hashed(mut self, hash: [u8; 32]) -> Parsed {
        self.hash = hash;
        self
    }

    /// The header's tokens ([`lex::tokenize`]); computed on first use.
    pub fn tokens(&self) -> &[Token] {
        self.tokens
            .get_or_init(|| lex::tokenize(&self.bytes, 0..self.bytes.len()))
    }

    /// The names this header declares at file, namespace or class scope (see
    /// [`declared_names`]); computed on first use.
    pub fn declared(&self) -> &HashSet<String> {
        self.declared.get_or_init(|| {
            let toks = self.tokens();
            if self.light {
                // No function was lowered: the bodies are found from the tokens.
                declared_names_outside(&self.bytes, toks, body_spans(toks))
            } else {
                declared_names(&self.bytes, toks, &self.file)
            }
        })
    }
}

/// A header of a unit: where it was found and its parse.
#[derive(Debug, Clone)]
pub struct Header {
    /// The including file's directory or the search directory joined with the spelled name,
    /// lexically normalised (`a/./b/../c.h` is `a/c.h`); relative when they are. Diagnostics
    /// that point into the header name this path.
    pub path: PathBuf,
    pub parsed: Arc<Parsed>,
    /// The include that brings its text into the unit (the first one met, depth first: a
    /// later one finds it included before): the including file (`None` for the main file,
    /// `Some(i)` for `headers[i]`, always an earlier header) and the directive's span there.
    /// `None` for the command line's `-D`/`-U` header.
    pub included_at: Option<(Option<usize>, Span)>,
}

impl Header {
    pub fn file(&self) -> &SourceFile {
        &self.parsed.file
    }
    pub fn bytes(&self) -> &[u8] {
        &self.parsed.bytes
    }
}

/// What a source file reaches through its includes: the headers found (depth first, in source
/// order, each once), the quoted includes that were not, and the system includes named.
#[derive(Debug, Clone, Default)]
pub struct TranslationUnit {
    pub headers: Vec<Header>,
    /// The main file's include directives, in order (a header's are in its [`Parsed`]).
    pub main_includes: Vec<Include>,
    pub missing: Vec<MissingInclude>,
    /// The `#include <...>` names of the main file and its headers, each once, in order.
    pub system: Vec<String>,
    /// The names the command line undefines (`-U NAME`, see [`Defines`]): the compiler's
    /// predefined platform macros among them count as not defined.
    pub undefined: Vec<String>,
    /// True when the main file is a source file (`.cu`, `.hip`, `.cpp`, ..., not a header):
    /// the templates it defines are instantiated by the unit's own code only, so a template
    /// parameter is what its calls bind. False for a header (any file may instantiate its
    /// templates) and for a unit built without a path.
    pub closed: bool,
}

/// True for a path whose extension names a source file rather than a header (`.cu`, `.hip`,
/// `.cc`, `.cpp`, `.cxx`, `.c`, `.C`).
pub fn is_source_path(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("cu" | "hip" | "cc" | "cpp" | "cxx" | "c" | "C" | "c++")
    )
}

impl TranslationUnit {
    /// A unit of the main file alone (no include followed, none missing).
    pub fn empty() -> TranslationUnit {
        TranslationUnit::default()
    }

    /// True when no header was found and none is missing.
    pub fn is_empty(&self) -> bool {
        self.headers.is_empty() && self.missing.is_empty()
    }

    /// Every macro of the headers, with the index of its header, in unit order.
    pub fn macros(&self) -> impl Iterator<Item = (usize, &MacroDef)> {
        self.headers
            .iter()
            .enumerate()
            .flat_map(|(i, h)| h.file().macros.iter().map(move |m| (i, m)))
    }

    /// The last definition of macro `name` among the headers (the unit order: a header
    /// included later wins, as a redefinition would).
    pub fn macro_def(&self, name: &str) -> Option<&MacroDef> {
        self.headers
            .iter()
            .rev()
            .find_map(|h| h.file().macros.iter().rev().find(|m| m.name == name))
    }

    /// The specifier macros (`#define DINLINE __device__ __forceinline__`) the headers define
    /// (see [`crate::specifier_macros`]).
    pub fn specifier_macros(&self) -> HashMap<String, crate::SpecifierMacro> {
        self.elision_macros().0
    }

    /// The specifier macros ([`TranslationUnit::specifier_macros`]) and the namespace macros
    /// (`#define BEGIN_ROCPRIM_NAMESPACE namespace rocprim {`, see [`crate::namespace_macros`])
    /// the headers define, their definitions read once.
    pub fn elision_macros(
        &self,
    ) -> (
        HashMap<String, crate::SpecifierMacro>,
        HashMap<String, crate::NamespaceMacro>,
    ) {
        if self.headers.is_empty() {
            return (HashMap::new(), HashMap::new());
        }
        let defs: Vec<MacroDef> = self
            .headers
            .iter()
            .flat_map(|h| h.file().macros.iter().cloned())
            .collect();
        let (mut spec, namespaces) = crate::unit_macros(&defs);
        // Reserved names (`__device__`, `__global__`, `__forceinline__`) are the compiler's
        // qualifiers; a header that defines them does so for a host-only compile (`#ifndef
        // __HIPCC__`), and eliding them would take the kernels' qualifiers away.
        spec.retain(|name, _| !name.starts_with("__"));
        (spec, namespaces)
    }

    /// Parse `source`, a file of this unit (the main file, or a rewritten text of it), with the
    /// specifier macros of the headers that it uses and does not define itself, so that their
    /// uses are skipped as the file's own would be.
    pub fn parse(&self, source: &[u8]) -> SourceFile {
        let file = Arc::new(crate::parse(source));
        let (spec, namespaces) = self.elision_macros();
        let file = self.reparse(source, file, &spec, &namespaces);
        Arc::try_unwrap(file).unwrap_or_else(|shared| (*shared).clone())
    }

    /// `file` (the plain parse of `source`), parsed again with those of `spec` and
    /// `namespaces` that `source` uses and does not define, if any.
    fn reparse(
        &self,
        source: &[u8],
        file: Arc<SourceFile>,
        spec: &HashMap<String, crate::SpecifierMacro>,
        namespaces: &HashMap<String, crate::NamespaceMacro>,
    ) -> Arc<SourceFile> {
        let own: HashSet<&str> = file.macros.iter().map(|m| m.name.as_str()).collect();
        // A namespace macro's use parses without an error (it is skipped as a macro call), but
        // what follows it is in its namespace only when its definition is known.
        let outer_ns = used_outer(namespaces, &own, source);
        // A parse without an error has nothing left to elide (a specifier macro the grammar
        // cannot read leaves an error behind, or was taken for an unknown one).
        if outer_ns.is_empty()
            && (spec.is_empty() || (file.parse_errors.is_empty() && !unseen_in(&file, spec)))
        {
            return file;
        }
        let outer = used_outer(spec, &own, source);
        if outer.is_empty() && outer_ns.is_empty() {
            return file;
        }
        let with = crate::parse_in_unit(source, &outer, &outer_ns);
        if finds_no_less(&file, &with) {
            Arc::new(with)
        } else {
            file
        }
    }

    /// True when a quoted include of the unit was not followed: what it defines is unseen.
    pub fn has_missing(&self) -> bool {
        !self.missing.is_empty()
    }

    /// True when some header declares `name` at file, namespace or class scope (a macro, a
    /// function, a variable, a type, an enumerator or a template parameter).
    pub fn declares(&self, name: &str) -> bool {
        self.headers.iter().any(|h| {
            h.parsed.declared().contains(name)
                || h.file().macros.iter().any(|m| m.name == name)
                || h.file().functions.iter().any(|f| f.name == name)
        })
    }
}

/// What a path gives: `None` when there is no such file, else its parse or why it cannot be
/// had.
type Loaded = Option<Result<Arc<Parsed>, MissingReason>>;
type ParseOnce = Arc<OnceLock<Arc<Parsed>>>;

/// The run's parsed headers, shared by every file (and thread) of one run: each header content
/// is parsed once (keyed by its BLAKE3 hash), each path read once.
#[derive(Debug, Default)]
pub struct HeaderCache {
    /// Normalised path -> its parse, or why it cannot be had (`None`: no such file).
    by_path: Mutex<HashMap<PathBuf, Loaded>>,
    /// Content hash -> its parse, made once (other threads wait for it).
    by_hash: Mutex<HashMap<[u8; 32], ParseOnce>>,
    /// (content hash, the outer specifier macros it uses) -> its parse with them.
    by_context: Mutex<HashMap<([u8; 32], String), ParseOnce>>,
    parses: AtomicUsize,
    lookups: AtomicUsize,
}

impl HeaderCache {
    pub fn new() -> HeaderCache {
        HeaderCache::default()
    }

    /// How many header contents this cache has read (each once: with the grammar, or for its
    /// macros only when it holds no GPU code).
    pub fn parses(&self) -> usize {
        self.parses.load(Ordering::Relaxed)
    }

    /// How many times a unit looked a header up in this cache (every include followed, in
    /// every unit of the run): the parses that the cache saved are `lookups() - parses()`.
    pub fn lookups(&self) -> usize {
        self.lookups.load(Ordering::Relaxed)
    }

    /// The header at `path`: `None` when there is no such file, else its parse or why it
    /// cannot be read.
    fn load(&self, path: &Path) -> Loaded {
        self.lookups.fetch_add(1, Ordering::Relaxed);
        if let Some(hit) = lock(&self.by_path).get(path) {
            return hit.clone();
        }
        let loaded = self.read(path);
        lock(&self.by_path).insert(path.to_path_buf(), loaded.clone());
        loaded
    }

    fn read(&self, path: &Path) -> Loaded {
        let meta = std::fs::metadata(path).ok()?;
        if !meta.is_file() {
            return None;
        }
        if meta.len() > MAX_HEADER_BYTES {
            return Some(Err(MissingReason::TooLarge));
        }
        let bytes = match std::fs::read(path) {
            Ok(b) if b.len() as u64 <= MAX_HEADER_BYTES => b,
            Ok(_) => return Some(Err(MissingReason::TooLarge)),
            Err(e) => return Some(Err(MissingReason::Unreadable(e.kind().to_string()))),
        };
        Some(self.parse_header(bytes))
    }

    /// The parse of a header's text that is not on disk (an [`Overlay`]'s), through the
    /// content key like any other; never recorded by path.
    fn parsed(&self, bytes: &[u8]) -> Result<Arc<Parsed>, MissingReason> {
        self.lookups.fetch_add(1, Ordering::Relaxed);
        if bytes.len() as u64 > MAX_HEADER_BYTES {
            return Err(MissingReason::TooLarge);
        }
        self.parse_header(bytes.to_vec())
    }

    fn parse_header(&self, bytes: Vec<u8>) -> Result<Arc<Parsed>, MissingReason> {
        let hash = *blake3::hash(&bytes).as_bytes();
        let cell = lock(&self.by_hash).entry(hash).or_default().clone();
        let hash_of = hash;
        let parsed = cell
            .get_or_init(|| {
                self.parses.fetch_add(1, Ordering::Relaxed);
                if !crate::may_contain_gpu_code(&bytes) {
                    return Arc::new(Parsed::light(bytes).hashed(hash_of));
                }
                Arc::new(Parsed::new(bytes).hashed(hash_of))
            })
            .clone();
        Ok(parsed)
    }

    /// The parse of a file `check` analyses itself, shared with the units that include it: a
    /// header is often both (a `.cuh` walked by `check` and included by the `.cu` beside it).
    /// Kept in the cache only for header-like names; other files are parsed alone.
    fn parse_main(&self, path: &Path, bytes: &[u8]) -> Arc<SourceFile> {
        const HEADERS: &[&str] = &[
            "cuh", "h", "hh", "hpp", "hxx", "h++", "inl", "ipp", "tpp", "tcc", "txx", "inc",
        ];
        let header = path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| HEADERS.iter().any(|h| h.eq_ignore_ascii_case(e)));
        // Shared only when the units that include it would parse it in full too: a header with
        // no GPU code is read for its macros only by a unit ([`Parsed::light`]), and which of
        // the two a shared entry holds must not depend on which thread got there first.
        if !header || bytes.len() as u64 > MAX_HEADER_BYTES || !crate::may_contain_gpu_code(bytes) {
            return Arc::new(crate::parse(bytes));
        }
        let hash = *blake3::hash(bytes).as_bytes();
        let cell = lock(&self.by_hash).entry(hash).or_default().clone();
        cell.get_or_init(|| {
            self.parses.fetch_add(1, Ordering::Relaxed);
            Arc::new(Parsed::new(bytes.to_vec()).hashed(hash))
        })
        .file
        .clone()
    }

    /// `p` parsed again with the outer specifier macros it uses (once per content and set of
    /// names for the run), or `p` itself when it uses none.
    fn in_context(
        &self,
        p: &Arc<Parsed>,
        spec: &HashMap<String, crate::SpecifierMacro>,
        namespaces: &HashMap<String, crate::NamespaceMacro>,
    ) -> Arc<Parsed> {
        let own: HashSet<&str> = p.file.macros.iter().map(|m| m.name.as_str()).collect();
        let outer = used_outer(spec, &own, &p.bytes);
        // Namespace macros matter only to a header parsed in full (a light one has no
        // function to qualify, unless it uses a specifier macro: it is parsed in full then).
        let outer_ns = if p.light && outer.is_empty() {
            HashMap::new()
        } else {
            used_outer(namespaces, &own, &p.bytes)
        };
        // A full parse that read everything without an error has nothing left to elide.
        let complete = !p.light && p.file.parse_errors.is_empty() && !unseen_in(&p.file, spec);
        if (complete && outer_ns.is_empty()) || (outer.is_empty() && outer_ns.is_empty()) {
            return p.clone();
        }
        // (A light header used with these macros is parsed in full now.) The key holds what each
        // name means too: two units may define one name differently (`__device__` in one,
        // `__host__ __device__` in another), and each must get the parse of its own meaning.
        let mut key: Vec<String> = outer
            .iter()
            .map(|(n, m)| format!("{n}={m:?}"))
            .chain(outer_ns.iter().map(|(n, m)| format!("{n}={m:?}")))
            .collect();
        key.sort();
        let key = key.join(",");
        let cell = lock(&self.by_context)
            .entry((p.hash, key))
            .or_default()
            .clone();
        cell.get_or_init(|| {
            self.parses.fetch_add(1, Ordering::Relaxed);
            let with = Parsed::with(p.bytes.clone(), &outer, &outer_ns).hashed(p.hash);
            if finds_no_less(&p.file, &with.file) {
                Arc::new(with)
            } else {
                p.clone()
            }
        })
        .clone()
    }
}

/// True when `name` occurs in `source` as a whole identifier.
fn uses_identifier(source: &[u8], name: &[u8]) -> bool {
    memchr::memmem::find_iter(source, name)
        .any(|at| lex::is_whole_identifier(source, at..at + name.len()))
}

/// Those of `macros` that `source` uses (their name appears in it) and does not define (`own`).
fn used_outer<M: Clone>(
    macros: &HashMap<String, M>,
    own: &HashSet<&str>,
    source: &[u8],
) -> HashMap<String, M> {
    macros
        .iter()
        .filter(|(n, _)| !own.contains(n.as_str()))
        .filter(|(n, _)| memchr::memmem::find(source, n.as_bytes()).is_some())
        .map(|(n, m)| (n.clone(), m.clone()))
        .collect()
}

/// True when a function of `file` was parsed with one of `spec` taken for an unknown
/// specifier (`Function::unseen_specifiers`): parsed again with it, its qualifiers are known.
fn unseen_in(file: &SourceFile, spec: &HashMap<String, crate::SpecifierMacro>) -> bool {
    file.functions
        .iter()
        .any(|f| f.unseen_specifiers.iter().any(|n| spec.contains_key(n)))
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Texts that stand in for files on disk, by lexically normalised path ([`normalize`]): an
/// editor's unsaved buffers, which the language server resolves units with.
pub type Overlay = HashMap<PathBuf, Arc<[u8]>>;

/// The path of the pseudo-header that holds the command line's macros (as clang names it).
pub const COMMAND_LINE: &str = "<command line>";

/// Macros defined and undefined on a command line (`-D NAME[=VALUE]`, `-U NAME`), in order:
/// what the guards see as if a header included first had `#define`d them, and what a compile
/// gets ([`Defines::flags`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Defines {
    /// `(NAME, Some(VALUE))` for a definition (`NAME(PARAMS)` for a function-like one), `(NAME,
    /// None)` for an undefinition.
    items: Vec<(String, Option<String>)>,
}

/// A macro argument that is not `NAME`, `NAME=VALUE` or `NAME(PARAMS)=VALUE`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not NAME or NAME=VALUE (NAME an identifier, optionally with a parameter list)")]
pub struct BadMacro(pub String);

impl Defines {
    /// Add `NAME`, `NAME=VALUE` or `NAME(PARAMS)=VALUE` (a bare `NAME` is `1`, as compilers do).
    pub fn define(&mut self, spec: &str) -> Result<(), BadMacro> {
        let (head, value) = match spec.split_once('=') {
            Some((h, v)) => (h, v.to_string()),
            None => (spec, "1".to_string()),
        };
        let name_end = head.find('(').unwrap_or(head.len());
        let params_ok = head[name_end..].is_empty()
            || (head.ends_with(')')
                && head[name_end + 1..head.len() - 1]
                    .split(',')
                    .map(str::trim)
                    .all(|p| p.is_empty() || p == "..." || is_identifier(p)));
        if !is_identifier(&head[..name_end]) || !params_ok {
            return Err(BadMacro(spec.to_string()));
        }
        self.items.push((head.to_string(), Some(value)));
        Ok(())
    }

    /// Add `-U NAME`.
    pub fn undefine(&mut self, name: &str) -> Result<(), BadMacro> {
        if !is_identifier(name) {
            return Err(BadMacro(name.to_string()));
        }
        self.items.push((name.to_string(), None));
        Ok(())
    }

    /// The `-D`/`-U` of compiler words (`-DX`, `-D X`, `-DX=1`, `-UX`, `-U X`), in order;
    /// malformed ones are left to the compiler.
    pub fn from_flags<'a>(words: impl IntoIterator<Item = &'a str>) -> Defines {
        let mut out = Defines::default();
        let mut words = words.into_iter();
        while let Some(w) = words.next() {
            let (define, rest) = match (w.strip_prefix("-D"), w.strip_prefix("-U")) {
                (Some(r), _) => (true, r),
                (_, Some(r)) => (false, r),
                _ => continue,
            };
            let arg = if rest.is_empty() {
                match words.next() {
                    Some(a) => a,
                    None => break,
                }
            } else {
                rest
            };
            let _ = if define {
                out.define(arg)
            } else {
                out.undefine(arg)
            };
        }
        out
    }

    /// Those of `other` after these.
    pub fn extend(&mut self, other: &Defines) {
        self.items.extend(other.items.iter().cloned());
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The compile flags, in order (`-DNAME=VALUE`, `-UNAME`).
    pub fn flags(&self) -> Vec<String> {
        self.items
            .iter()
            .map(|(n, v)| match v {
                Some(v) => format!("-D{n}={v}"),
                None => format!("-U{n}"),
            })
            .collect()
    }

    /// What stays defined at the end, in order: `(NAME or NAME(PARAMS), VALUE)`.
    fn defined(&self) -> Vec<(&str, &str)> {
        let mut out: Vec<(&str, &str)> = Vec::new();
        for (head, v) in &self.items {
            let name = head.split('(').next().unwrap_or(head);
            out.retain(|(h, _)| h.split('(').next() != Some(name));
            if let Some(v) = v {
                out.push((head, v));
            }
        }
        out
    }

    /// The names `-U` leaves undefined at the end.
    fn undefined(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for (head, v) in &self.items {
            let name = head.split('(').next().unwrap_or(head);
            out.retain(|n| n != name);
            if v.is_none() {
                out.push(name.to_string());
            }
        }
        out
    }

    /// The pseudo-header [`COMMAND_LINE`]: one `#define` line per macro that stays defined.
    fn header(&self) -> Option<Arc<Parsed>> {
        let defined = self.defined();
        if defined.is_empty() {
            return None;
        }
        let text: String = defined
            .iter()
            .map(|(h, v)| format!("#define {h} {v}\n"))
            .collect();
        let hash = *blake3::hash(text.as_bytes()).as_bytes();
        Some(Arc::new(Parsed::light(text.into_bytes()).hashed(hash)))
    }
}

fn is_identifier(s: &str) -> bool {
    let mut b = s.bytes();
    b.next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == b'_')
        && b.all(|c| c.is_ascii_alphanumeric() || c == b'_')
}

/// Where the quoted includes of a file are looked for after the file's own directory, the
/// command line's macros, the texts that stand in for files (an editor's buffers), and the run's
/// header cache.
#[derive(Debug, Clone, Default)]
pub struct Includes {
    /// Search directories, in order.
    pub dirs: Vec<PathBuf>,
    pub cache: Arc<HeaderCache>,
    /// Texts that win over the disk: a header whose normalised path is here is parsed from
    /// these bytes (through the cache's content key; never recorded by path), even where no
    /// file exists on disk.
    pub overlay: Option<Arc<Overlay>>,
    /// The [`COMMAND_LINE`] pseudo-header of [`Includes::with_defines`], first in every unit.
    command_line: Option<Arc<Parsed>>,
    /// The names the command line undefines.
    undefined: Vec<String>,
}

impl Includes {
    pub fn new(dirs: Vec<PathBuf>, cache: Arc<HeaderCache>) -> Includes {
        Includes {
            dirs,
            cache,
            overlay: None,
            command_line: None,
            undefined: Vec::new(),
        }
    }

    /// These includes with `overlay` standing in for the disk.
    pub fn with_overlay(mut self, overlay: Arc<Overlay>) -> Includes {
        self.overlay = Some(overlay);
        self
    }

    /// The header at the normalised `path`: its overlay text if it has one, else the disk's.
    fn load(&self, path: &Path) -> Loaded {
        match self.overlay.as_ref().and_then(|o| o.get(path)) {
            Some(bytes) => Some(self.cache.parsed(bytes)),
            None => self.cache.load(path),
        }
    }

    /// The same, with the command line's macros: every unit starts with a pseudo-header named
    /// [`COMMAND_LINE`] that `#define`s them, and lists the names it undefines
    /// ([`TranslationUnit::undefined`]).
    pub fn with_defines(mut self, defines: &Defines) -> Includes {
        self.command_line = defines.header();
        self.undefined = defines.undefined();
        self
    }

    /// Parse the file at `path` (as given: relative paths are relative to the working
    /// directory) whose bytes are `source`, in its unit: resolved as [`Includes::resolve`]
    /// does, then the file and its headers parsed again with the specifier macros
    /// (`#define DINLINE __device__ __forceinline__`, see [`crate::specifier_macros`]) that
    /// other headers of the unit define, where they use them.
    pub fn open(&self, path: &Path, source: &[u8]) -> (Arc<SourceFile>, TranslationUnit) {
        let file = self.cache.parse_main(path, source);
        let mut unit = self.resolve(path, source, &file);
        let (spec, namespaces) = unit.elision_macros();
        if spec.is_empty() && namespaces.is_empty() {
            return (file, unit);
        }
        for h in &mut unit.headers {
            h.parsed = self.cache.in_context(&h.parsed, &spec, &namespaces);
        }
        let file = unit.reparse(source, file, &spec, &namespaces);
        (file, unit)
    }

    /// The first (by name) specifier macro of the headers of `source`'s unit that makes
    /// device code (`#define ROCPRIM_DEVICE __device__` in the `config.hpp` it includes) and
    /// that `source` uses as a whole identifier: a file that names no GPU qualifier itself
    /// holds device code through it, and a check of that file alone (a pre-commit hook's)
    /// must parse it. Reads the file's macros and includes only (no grammar); `None` when it
    /// includes nothing or uses no such macro.
    pub fn gpu_macro_from_headers(&self, path: &Path, source: &[u8]) -> Option<String> {
        memchr::memmem::find(source, b"include")?;
        let light = macros_only(source);
        let unit = self.resolve(path, source, &light);
        let spec = unit.specifier_macros();
        let mut names: Vec<&String> = spec
            .iter()
            .filter(|(_, m)| m.kind.is_some())
            .map(|(n, _)| n)
            .collect();
        names.sort();
        names
            .into_iter()
            .find(|n| uses_identifier(source, n.as_bytes()))
            .cloned()
    }

    /// The unit of the file at `path` (as given: relative paths are relative to the working
    /// directory) whose bytes are `source`, parsed into `file`.
    pub fn resolve(&self, path: &Path, source: &[u8], file: &SourceFile) -> TranslationUnit {
        let mut unit = self.resolve_includes(path, source, file);
        if let Some(cl) = &self.command_line {
            unit.headers.insert(
                0,
                Header {
                    path: PathBuf::from(COMMAND_LINE),
                    parsed: cl.clone(),
                    included_at: None,
                },
            );
            for h in &mut unit.headers[1..] {
                if let Some((Some(i), _)) = &mut h.included_at {
                    *i += 1;
                }
            }
        }
        unit.undefined = self.undefined.clone();
        unit.closed = is_source_path(path);
        unit
    }

    fn resolve_includes(&self, path: &Path, source: &[u8], file: &SourceFile) -> TranslationUnit {
        let mut unit = TranslationUnit::default();
        let top = scan_includes(source, file);
        if top.is_empty() {
            return unit;
        }
        unit.main_includes = top.clone();
        let main = normalize(path);
        let mut seen_paths: HashSet<PathBuf> = HashSet::from([main.clone()]);
        let mut seen_parses: HashSet<*const Parsed> = HashSet::new();
        let mut seen_system: HashSet<String> = HashSet::new();
        // Depth first in source order: a stack of (including file, its includes, next index, via).
        struct Frame {
            path: PathBuf,
            /// `None` for the main file, else its index in `unit.headers`.
            header: Option<usize>,
            includes: Arc<Vec<Include>>,
            next: usize,
        }
        let mut stack = vec![Frame {
            path: main,
            header: None,
            includes: Arc::new(top),
            next: 0,
        }];
        let mut via = Span::default();
        while let Some(frame) = stack.last_mut() {
            let Some(inc) = frame.includes.get(frame.next).cloned() else {
                stack.pop();
                continue;
            };
            frame.next += 1;
            let from = frame.path.clone();
            let from_header = frame.header;
            let depth = stack.len() - 1;
            if depth == 0 {
                via = inc.span;
            }
            let missing = |reason| MissingInclude {
                spelled: inc.spelled.clone(),
                reason,
                from: from.clone(),
                line: inc.span.line,
                via,
                depth,
            };
            match inc.kind {
                IncludeKind::System => {
                    if seen_system.insert(inc.spelled.clone()) {
                        unit.system.push(inc.spelled.clone());
                    }
                    continue;
                }
                IncludeKind::Computed => {
                    unit.missing.push(missing(MissingReason::Computed));
                    continue;
                }
                IncludeKind::Quoted => {}
            }
            let here = from.parent().map(Path::to_path_buf).unwrap_or_default();
            let mut found = None;
            for dir in std::iter::once(&here).chain(self.dirs.iter()) {
                let candidate = normalize(&dir.join(&inc.spelled));
                if let Some(loaded) = self.load(&candidate) {
                    found = Some((candidate, loaded));
                    break;
                }
            }
            let Some((hpath, loaded)) = found else {
                // `#include "cuda_runtime.h"`: a toolkit's header spelled with quotes is the
                // compiler's, as with angle brackets.
                if toolkit_of(&inc.spelled).is_some() {
                    if seen_system.insert(inc.spelled.clone()) {
                        unit.system.push(inc.spelled.clone());
                    }
                } else {
                    unit.missing.push(missing(MissingReason::NotFound));
                }
                continue;
            };
            let parsed = match loaded {
                Ok(p) => p,
                Err(reason) => {
                    unit.missing.push(missing(reason));
                    continue;
                }
            };
            if !seen_paths.insert(hpath.clone()) || !seen_parses.insert(Arc::as_ptr(&parsed)) {
                continue; // included before (an include guard, `#pragma once` or a cycle)
            }
            if unit.headers.len() >= MAX_HEADERS {
                unit.missing.push(missing(MissingReason::TooMany));
                continue;
            }
            let includes = Arc::new(parsed.includes.clone());
            unit.headers.push(Header {
                path: hpath.clone(),
                parsed,
                included_at: Some((from_header, inc.span)),
            });
            stack.push(Frame {
                path: hpath,
                header: Some(unit.headers.len() - 1),
                includes,
                next: 0,
            });
        }
        unit
    }
}

/// Whose header an include names: a GPU toolkit's or the C/C++ standard library's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Toolkit {
    /// The CUDA toolkit: the runtime and driver APIs, device headers, CCCL (`cub/`, `thrust/`,
    /// `cuda/`, `nv/`), cooperative groups, the math and communication libraries.
    Cuda,
    /// ROCm: HIP and its libraries (`hip/`, `hipcub/`, `rocprim/`, `rocblas`, ...).
    Hip,
    /// Both toolkits ship it (`thrust/`: CCCL and rocThrust).
    Both,
    /// The C or C++ standard library.
    Standard,
}

/// CUDA headers by file name (no directory).
const CUDA_HEADERS: &[&str] = &[
    "cuda.h",
    "cudaProfiler.h",
    "cudaTypedefs.h",
    "cuda_runtime.h",
    "cuda_runtime_api.h",
    "cuda_fp16.h",
    "cuda_fp16.hpp",
    "cuda_bf16.h",
    "cuda_bf16.hpp",
    "cuda_fp8.h",
    "cuda_fp8.hpp",
    "cuda_fp6.h",
    "cuda_fp4.h",
    "cuda_pipeline.h",
    "cuda_pipeline_primitives.h",
    "cuda_awbarrier.h",
    "cuda_awbarrier_primitives.h",
    "cuda_texture_types.h",
    "cuda_surface_types.h",
    "cuda_occupancy.h",
    "cuda_profiler_api.h",
    "cuda_gl_interop.h",
    "cuComplex.h",
    "cooperative_groups.h",
    "device_launch_parameters.h",
    "device_functions.h",
    "device_atomic_functions.h",
    "device_types.h",
    "driver_types.h",
    "host_defines.h",
    "vector_types.h",
    "vector_functions.h",
    "math_constants.h",
    "math_functions.h",
    "mma.h",
    "nccl.h",
    "nvrtc.h",
    "nvml.h",
    "nvToolsExt.h",
    "cutensor.h",
    "cufile.h",
    "nvjpeg.h",
    "nvshmem.h",
    "nvshmemx.h",
    "texture_fetch_functions.h",
    "surface_functions.h",
];
/// CUDA library headers by file-name prefix (`cublas_v2.h`, `cublasLt.h`, `curand_kernel.h`);
/// also `sm_NN_*.h`.
const CUDA_PREFIXES: &[&str] = &[
    "cublas", "cusparse", "cusolver", "cufft", "curand", "cudnn", "npp",
];
/// CUDA directories (the first component of the spelled name).
const CUDA_DIRS: &[&str] = &["cooperative_groups", "cub", "cuda", "nv", "nvtx3", "crt"];
/// ROCm directories and headers.
const HIP_DIRS: &[&str] = &[
    "hip",
    "hipcub",
    "rocprim",
    "rocblas",
    "hipblas",
    "hipblaslt",
    "rocrand",
    "hiprand",
    "rocwmma",
    "rocsparse",
    "hipsparse",
    "rocsolver",
    "hipsolver",
    "hipfft",
    "rocfft",
    "rccl",
    "roctracer",
    "rocprofiler",
    "rocprofiler-sdk",
    "miopen",
    "hsa",
];
const HIP_HEADERS: &[&str] = &[
    "hip_runtime.h",
    "rocblas.h",
    "hipblas.h",
    "rccl.h",
    "roctx.h",
    "hiprtc.h",
    "hiprand.h",
    "rocrand.h",
    "hipfft.h",
    "rocfft.h",
    "hipsparse.h",
    "rocsparse.h",
    "miopen.h",
];
/// The C and C++ standard library (C headers also in their `<cNAME>` form).
const STANDARD: &[&str] = &[
    "assert.h",
    "complex.h",
    "ctype.h",
    "errno.h",
    "fenv.h",
    "float.h",
    "inttypes.h",
    "iso646.h",
    "limits.h",
    "locale.h",
    "math.h",
    "setjmp.h",
    "signal.h",
    "stdalign.h",
    "stdarg.h",
    "stdatomic.h",
    "stdbool.h",
    "stddef.h",
    "stdint.h",
    "stdio.h",
    "stdlib.h",
    "string.h",
    "tgmath.h",
    "threads.h",
    "time.h",
    "uchar.h",
    "wchar.h",
    "wctype.h",
    "algorithm",
    "any",
    "array",
    "atomic",
    "bit",
    "bitset",
    "cassert",
    "cctype",
    "cerrno",
    "cfenv",
    "cfloat",
    "charconv",
    "chrono",
    "cinttypes",
    "climits",
    "clocale",
    "cmath",
    "codecvt",
    "complex",
    "concepts",
    "condition_variable",
    "cstdarg",
    "cstddef",
    "cstdint",
    "cstdio",
    "cstdlib",
    "cstring",
    "ctime",
    "cwchar",
    "deque",
    "exception",
    "execution",
    "filesystem",
    "format",
    "forward_list",
    "fstream",
    "functional",
    "future",
    "initializer_list",
    "iomanip",
    "ios",
    "iosfwd",
    "iostream",
    "istream",
    "iterator",
    "limits",
    "list",
    "locale",
    "map",
    "memory",
    "mutex",
    "new",
    "numbers",
    "numeric",
    "optional",
    "ostream",
    "queue",
    "random",
    "ranges",
    "ratio",
    "regex",
    "set",
    "shared_mutex",
    "span",
    "sstream",
    "stack",
    "stdexcept",
    "string",
    "string_view",
    "system_error",
    "thread",
    "tuple",
    "type_traits",
    "typeinfo",
    "unordered_map",
    "unordered_set",
    "utility",
    "valarray",
    "variant",
    "vector",
    "version",
];

/// The toolkit whose header `spelled` (as an `#include` writes it) names, if any. A quoted
/// include of such a name that is not found beside its file or in a search directory is taken
/// as a system include (no `include-not-found`); one that is found is followed like any other.
/// Third-party header libraries a project vendors (CUTLASS, CuTe, Eigen) are not on the list:
/// what they define matters to the guards (`CUTLASS_DEVICE`), so not finding them is reported.
pub fn toolkit_of(spelled: &str) -> Option<Toolkit> {
    let name = spelled.trim();
    let (dir, file) = match name.split_once('/') {
        Some((d, _)) => (Some(d), name.rsplit('/').next().unwrap_or(name)),
        None => (None, name),
    };
    if let Some(d) = dir {
        if d == "thrust" {
            return Some(Toolkit::Both);
        }
        if CUDA_DIRS.contains(&d) {
            return Some(Toolkit::Cuda);
        }
        if HIP_DIRS.contains(&d) {
            return Some(Toolkit::Hip);
        }
        return None;
    }
    if CUDA_HEADERS.contains(&file) {
        return Some(Toolkit::Cuda);
    }
    if HIP_HEADERS.contains(&file) {
        return Some(Toolkit::Hip);
    }
    if STANDARD.contains(&file) {
        return Some(Toolkit::Standard);
    }
    let lower = file.to_ascii_lowercase();
    let sm = file
        .strip_prefix("sm_")
        .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()));
    if lower.ends_with(".h") && (sm || CUDA_PREFIXES.iter().any(|p| file.starts_with(p))) {
        return Some(Toolkit::Cuda);
    }
    None
}

/// Why a file can only be compiled for NVIDIA (see [`TranslationUnit::cuda_only`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CudaOnly {
    /// It (or a header of its unit) includes this CUDA header.
    Header(String),
    /// It calls this NVVM built-in (`__nvvm_...`).
    Builtin(String),
    /// Its inline assembly is PTX (this instruction).
    Ptx(String),
}

impl std::fmt::Display for CudaOnly {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CudaOnly::Header(h) => write!(f, "it includes {h}"),
            CudaOnly::Builtin(b) => write!(f, "it calls {b}"),
            CudaOnly::Ptx(i) => write!(f, "its inline assembly is PTX (`{i}`)"),
        }
    }
}

impl TranslationUnit {
    /// Why `file` (the main file of this unit) can only be compiled as CUDA, if it can: no
    /// HIP header anywhere in the unit, and a CUDA header (`cuda_runtime.h`, `cub/...`,
    /// `cooperative_groups.h`: HIP has its own), an NVVM built-in or PTX inline assembly.
    pub fn cuda_only(&self, file: &SourceFile) -> Option<CudaOnly> {
        let hip = self
            .system
            .iter()
            .any(|s| toolkit_of(s) == Some(Toolkit::Hip))
            || self.headers.iter().any(|h| {
                h.path
                    .components()
                    .any(|c| c.as_os_str() == "hip" || c.as_os_str() == "hipcub")
            });
        if hip {
            return None;
        }
        if let Some(h) = self
            .system
            .iter()
            .find(|s| toolkit_of(s) == Some(Toolkit::Cuda))
        {
            return Some(CudaOnly::Header(h.clone()));
        }
        for f in &file.functions {
            if let Some(c) = f.calls.iter().find(|c| c.callee.starts_with("__nvvm_")) {
                return Some(CudaOnly::Builtin(c.callee.clone()));
            }
            if let Some(i) = f.asm.iter().find_map(|a| ptx_instruction(&a.template)) {
                return Some(CudaOnly::Ptx(i));
            }
        }
        None
    }
}

/// The first instruction of an inline-assembly template when it is PTX: a mnemonic with a
/// `.` suffix (`mov.u32`, `ld.global.nc.f32`, `red.global.add.u32`) or a `.reg` declaration.
/// AMDGPU mnemonics join their parts with `_` (`s_barrier`, `v_add_f32`, `global_atomic_add`).
fn ptx_instruction(template: &str) -> Option<String> {
    // Escapes are as written: `\n\t` between instructions.
    let text = template.replace("\\n", " ").replace("\\t", " ");
    let word = text
        .split(|c: char| c.is_whitespace() || matches!(c, '{' | ';' | '}'))
        .find(|w| !w.is_empty())?;
    let (head, rest) = word.split_once('.')?;
    let ptx = (head.is_empty() && rest == "reg")
        || (!head.is_empty()
            && !rest.is_empty()
            && head
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit()));
    ptx.then(|| word.to_string())
}

/// The `#define`s of a file read without the grammar (a header with no GPU code): a directive
/// first on its line, continuation lines joined, those in comments left out; the comments are
/// the file's `inert` ranges (for [`scan_includes`]).
fn macros_only(src: &[u8]) -> SourceFile {
    let inert: Vec<Span> = lex::comments(src, 0..src.len())
        .into_iter()
        .map(|c| Span {
            start: c.range.start,
            end: c.range.end,
            ..Span::default()
        })
        .collect();
    let mut out = SourceFile {
        crlf: memchr::memmem::find(src, b"\r\n").is_some(),
        ..SourceFile::default()
    };
    let mut line = 1u32;
    let mut counted = 0usize;
    for at in memchr::memmem::find_iter(src, b"define") {
        let mut i = at;
        while i > 0 && matches!(src[i - 1], b' ' | b'\t') {
            i -= 1;
        }
        if i == 0 || src[i - 1] != b'#' {
            continue;
        }
        let hash = i - 1;
        let mut s = hash;
        while s > 0 && matches!(src[s - 1], b' ' | b'\t') {
            s -= 1;
        }
        if (s > 0 && src[s - 1] != b'\n') || in_ranges(&inert, hash) {
            continue;
        }
        let mut j = at + "define".len();
        if !src.get(j).is_some_and(|b| *b == b' ' || *b == b'\t') {
            continue;
        }
        while j < src.len() && matches!(src[j], b' ' | b'\t') {
            j += 1;
        }
        let name_start = j;
        while j < src.len() && (src[j].is_ascii_alphanumeric() || src[j] == b'_') {
            j += 1;
        }
        if j == name_start {
            continue;
        }
        let name = String::from_utf8_lossy(&src[name_start..j]).into_owned();
        let end = logical_line_end(src, hash);
        let mut params = None;
        if src.get(j) == Some(&b'(') {
            let close = src[j..end].iter().position(|&b| b == b')').map(|p| j + p);
            let Some(close) = close else { continue };
            let list = crate::macros::join_continuations(&src[j + 1..close]);
            params = Some(
                list.split(',')
                    .map(|p| p.trim().to_string())
                    .filter(|p| !p.is_empty())
                    .collect(),
            );
            j = close + 1;
        }
        let mut line_end = end;
        if line_end > j && src[line_end - 1] == b'\r' {
            line_end -= 1;
        }
        let body = crate::macros::join_continuations(&src[j.min(line_end)..line_end]);
        line += memchr::memchr_iter(b'\n', &src[counted..hash]).count() as u32;
        counted = hash;
        let facts = crate::macros::body_facts(&body);
        out.macros.push(MacroDef {
            name,
            params,
            body,
            span: Span {
                start: hash,
                end: line_end,
                line,
                column: (hash - s) as u32 + 1,
            },
            calls: facts.calls,
            idents: facts.idents,
            control: facts.control,
            asm: facts.asm,
        });
    }
    out.inert = inert;
    out
}

/// True when the parse `with` the outer specifier macros finds at least the kernels and loops
/// of the plain parse, and at least its functions unless it also has fewer parse errors: only
/// then is it kept (a kernel the recovery found around an unparsable `LAUNCH_BOUNDS(...)` must
/// not vanish because eliding it left another macro in the way). Fewer functions with fewer
/// errors is a better parse: the plain one's extra functions are the grammar's recovery around
/// the unexpanded macros (rocPRIM's `device_radix_sort.hpp`: 31 functions, 11 loops and 43
/// errors plain; 28 functions, 26 loops and 11 errors with the unit's `ROCPRIM_DEVICE`,
/// `ROCPRIM_IF_CONSTEXPR` elided).
fn finds_no_less(plain: &SourceFile, with: &SourceFile) -> bool {
    let count = |f: &SourceFile| {
        let kernels = f
            .functions
            .iter()
            .filter(|x| x.kind == crate::FunctionKind::Kernel)
            .count();
        let loops: usize = f.functions.iter().map(|x| x.loops.len()).sum();
        (kernels, f.functions.len(), loops)
    };
    let (a, b) = (count(plain), count(with));
    b.0 >= a.0 && b.2 >= a.2 && (b.1 >= a.1 || with.parse_errors.len() < plain.parse_errors.len())
}

/// `path` with `.` components removed and `dir/..` pairs folded (lexically: symbolic links are
/// not resolved, so two spellings of one file through a link stay two paths; the content hash
/// still parses it once).
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                let last = out.components().next_back();
                match last {
                    Some(Component::Normal(_)) => {
                        out.pop();
                    }
                    Some(Component::RootDir | Component::Prefix(_)) => {}
                    _ => out.push(".."),
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// The `#include` directives of a file, in order: `#` first on its line (after blanks), then
/// `include` (also `include_next`, `import`); those inside comments and string literals (the
/// file's `inert` ranges) are left out.
pub fn scan_includes(source: &[u8], file: &SourceFile) -> Vec<Include> {
    let mut out = Vec::new();
    let mut line = 1u32;
    let mut counted = 0usize;
    let mut hits: Vec<usize> = memchr::memmem::find_iter(source, b"include").collect();
    hits.extend(memchr::memmem::find_iter(source, b"import"));
    hits.sort_unstable();
    for at in hits {
        // Back over blanks to `#`, then over blanks to the line start.
        let mut i = at;
        while i > 0 && matches!(source[i - 1], b' ' | b'\t') {
            i -= 1;
        }
        if i == 0 || source[i - 1] != b'#' {
            continue;
        }
        let hash = i - 1;
        let mut s = hash;
        while s > 0 && matches!(source[s - 1], b' ' | b'\t') {
            s -= 1;
        }
        if s > 0 && source[s - 1] != b'\n' {
            continue;
        }
        if in_ranges(&file.inert, hash) {
            continue;
        }
        let word_end = at
            + source[at..]
                .iter()
                .take_while(|b| b.is_ascii_alphanumeric() || **b == b'_')
                .count();
        if !matches!(
            &source[at..word_end],
            b"include" | b"include_next" | b"import"
        ) {
            continue;
        }
        let eol = memchr::memchr(b'\n', &source[word_end..]).map_or(source.len(), |n| word_end + n);
        line += memchr::memchr_iter(b'\n', &source[counted..hash]).count() as u32;
        counted = hash;
        let rest = &source[word_end..eol];
        let text = String::from_utf8_lossy(rest);
        let rest = text.trim();
        let (spelled, kind) = match rest.as_bytes().first() {
            Some(b'"') => match rest[1..].find('"') {
                Some(e) => (rest[1..1 + e].to_string(), IncludeKind::Quoted),
                None => (rest.to_string(), IncludeKind::Computed),
            },
            Some(b'<') => match rest[1..].find('>') {
                Some(e) => (rest[1..1 + e].to_string(), IncludeKind::System),
                None => (rest.to_string(), IncludeKind::Computed),
            },
            _ => {
                let t = rest.split("//").next().unwrap_or("").trim();
                (t.to_string(), IncludeKind::Computed)
            }
        };
        let mut end = eol;
        if end > hash && source.get(end - 1) == Some(&b'\r') {
            end -= 1;
        }
        out.push(Include {
            spelled,
            kind,
            span: Span {
                start: hash,
                end,
                line,
                column: (hash - s) as u32 + 1,
            },
        });
    }
    out
}

/// True when `pos` lies inside one of `ranges` (sorted by start, not overlapping).
fn in_ranges(ranges: &[Span], pos: usize) -> bool {
    let i = ranges.partition_point(|r| r.start <= pos);
    i > 0 && pos < ranges[i - 1].end
}

/// The names a file declares outside function bodies, read from its tokens (`toks`, the whole
/// file's): every identifier in a declarator position (followed by `=`, `,`, `;`, `[`, `{`,
/// `}`, `>` or `:`, after a type word, `*`, `&`, `,`, `{` or `<`), which covers variables,
/// enumerators, template parameters, struct/class/enum/union/typedef/`using` names and function
/// prototypes (a name followed by `(` after a type word). Preprocessor lines are skipped (their
/// macros are the IR's). The net is wide on purpose: a name found here is "seen", so it is not
/// taken for a macro the tool cannot see.
pub fn declared_names(src: &[u8], toks: &[Token], file: &SourceFile) -> HashSet<String> {
    let bodies: Vec<(usize, usize)> = file
        .functions
        .iter()
        .map(|f| (f.body.start, f.body.end))
        .collect();
    declared_names_outside(src, toks, bodies)
}

/// [`declared_names`] outside the byte ranges `bodies` (function bodies).
fn declared_names_outside(
    src: &[u8],
    toks: &[Token],
    mut bodies: Vec<(usize, usize)>,
) -> HashSet<String> {
    bodies.sort_unstable();
    let in_body = |pos: usize| {
        let i = bodies.partition_point(|b| b.0 <= pos);
        i > 0 && pos < bodies[i - 1].1
    };
    let mut out = HashSet::new();
    let mut directive_end = 0usize;
    for (k, t) in toks.iter().enumerate() {
        if let Tok::Directive(_) = t.tok {
            directive_end = logical_line_end(src, t.range.start);
            continue;
        }
        if t.range.start < directive_end {
            continue;
        }
        let Tok::Ident(w) = &t.tok else { continue };
        if in_body(t.range.start) {
            continue;
        }
        let prev = k.checked_sub(1).map(|p| &toks[p].tok);
        let next = toks.get(k + 1).map(|x| &x.tok);
        let tagged = matches!(prev, Some(Tok::Ident(p)) if matches!(p.as_str(), "struct" | "class" | "union" | "enum" | "using" | "namespace" | "typename"));
        let after_type = matches!(
            prev,
            Some(Tok::Ident(_)) | Some(Tok::Punct("*" | "&" | "&&" | "," | "{" | "<" | ">"))
        );
        let declarator = matches!(
            next,
            Some(Tok::Punct(
                "=" | "," | ";" | "[" | "{" | "}" | ">" | ":" | ")" | "("
            ))
        );
        if tagged || (after_type && declarator) {
            out.insert(w.clone());
        }
    }
    out
}

/// The byte ranges of function bodies found from tokens alone (for a header read without the
/// grammar): a `{` after `)` or after `const`, `noexcept`, `override`, `final` or `mutable`
/// opens one, up to its matching `}`; preprocessor lines are skipped.
fn body_spans(toks: &[Token]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut prev: Option<&Tok> = None;
    let mut k = 0;
    while k < toks.len() {
        let t = &toks[k];
        if let Tok::Directive(_) = t.tok {
            k += 1;
            continue;
        }
        let opens = matches!(t.tok, Tok::Punct("{"))
            && matches!(prev, Some(Tok::Punct(")")) | Some(Tok::Ident(_)))
            && match prev {
                Some(Tok::Ident(w)) => {
                    matches!(
                        w.as_str(),
                        "const" | "noexcept" | "override" | "final" | "mutable"
                    )
                }
                _ => true,
            };
        if opens {
            let mut depth = 0usize;
            let mut j = k;
            while j < toks.len() {
                match toks[j].tok {
                    Tok::Punct("{") => depth += 1,
                    Tok::Punct("}") => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
            let end = toks.get(j).map_or(usize::MAX, |x| x.range.end);
            out.push((t.range.start, end));
            prev = toks.get(j).map(|x| &x.tok);
            k = j + 1;
            continue;
        }
        prev = Some(&t.tok);
        k += 1;
    }
    out
}

/// The end of the logical line (backslash-continued lines joined) that starts at or before
/// `pos`.
pub fn logical_line_end(src: &[u8], pos: usize) -> usize {
    let mut i = pos;
    loop {
        match memchr::memchr(b'\n', &src[i.min(src.len())..]) {
            None => return src.len(),
            Some(n) => {
                let nl = i + n;
                let mut j = nl;
                if j > 0 && src[j - 1] == b'\r' {
                    j -= 1;
                }
                if j > 0 && src[j - 1] == b'\\' {
                    i = nl + 1;
                    continue;
                }
                return nl;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toolkit_headers_by_name() {
        for (name, want) in [
            ("cuda_runtime.h", Some(Toolkit::Cuda)),
            ("cuda.h", Some(Toolkit::Cuda)),
            ("cublas_v2.h", Some(Toolkit::Cuda)),
            ("cublasLt.h", Some(Toolkit::Cuda)),
            ("curand_kernel.h", Some(Toolkit::Cuda)),
            ("sm_61_intrinsics.h", Some(Toolkit::Cuda)),
            ("cooperative_groups.h", Some(Toolkit::Cuda)),
            ("cooperative_groups/reduce.h", Some(Toolkit::Cuda)),
            ("cub/cub.cuh", Some(Toolkit::Cuda)),
            ("cuda/std/atomic", Some(Toolkit::Cuda)),
            ("thrust/device_vector.h", Some(Toolkit::Both)),
            ("hip/hip_runtime.h", Some(Toolkit::Hip)),
            ("hipcub/hipcub.hpp", Some(Toolkit::Hip)),
            ("rocblas.h", Some(Toolkit::Hip)),
            ("stdio.h", Some(Toolkit::Standard)),
            ("cstdint", Some(Toolkit::Standard)),
            ("cutlass/cutlass.h", None),
            ("cute/tensor.hpp", None),
            ("common.cuh", None),
            ("cuda_utils.h", None),
            ("smem.h", None),
            ("sm_utils.h", None),
        ] {
            assert_eq!(toolkit_of(name), want, "{name}");
        }
    }

    #[test]
    fn ptx_is_told_from_amdgpu_assembly() {
        assert_eq!(
            ptx_instruction("mov.u32 %0, %%laneid;"),
            Some("mov.u32".into())
        );
        assert_eq!(
            ptx_instruction("{\\n\\t.reg .pred p;\\n\\tsetp.ne.b32 p, %1, 0;\\n}"),
            Some(".reg".into())
        );
        assert_eq!(
            ptx_instruction("red.global.add.u32 [%0], %1;"),
            Some("red.global.add.u32".into())
        );
        assert_eq!(ptx_instruction("s_waitcnt lgkmcnt(0)\\n s_barrier"), None);
        assert_eq!(ptx_instruction("v_add_f32 %0, %1, %2"), None);
        assert_eq!(ptx_instruction("global_atomic_add_f32 %0, %1, off"), None);
        assert_eq!(ptx_instruction(""), None);
    }

    #[test]
    fn normalizes_lexically() {
        assert_eq!(normalize(Path::new("a/./b/../c.h")), PathBuf::from("a/c.h"));
        assert_eq!(normalize(Path::new("./x.h")), PathBuf::from("x.h"));
        assert_eq!(normalize(Path::new("../x.h")), PathBuf::from("../x.h"));
        assert_eq!(normalize(Path::new("/a/../../x.h")), PathBuf::from("/x.h"));
    }

    #[test]
    fn scans_includes_not_in_comments() {
        let src = b"#include \"a.h\"\n  #  include <b.h>\n// #include \"c.h\"\n/*\n#include \"d.h\"\n*/\n#include GEN(x)\nint include = 1;\n#import \"e.h\"\n";
        let file = crate::parse(src);
        let inc = scan_includes(src, &file);
        let got: Vec<(&str, IncludeKind, u32)> = inc
            .iter()
            .map(|i| (i.spelled.as_str(), i.kind, i.span.line))
            .collect();
        assert_eq!(
            got,
            [
                ("a.h", IncludeKind::Quoted, 1),
                ("b.h", IncludeKind::System, 2),
                ("GEN(x)", IncludeKind::Computed, 7),
                ("e.h", IncludeKind::Quoted, 9),
            ]
        );
        assert_eq!(
            &src[inc[0].span.start..inc[0].span.end],
            b"#include \"a.h\""
        );
    }

    /// A header without GPU code is read for its macros without the grammar: the same
    /// `#define`s as the lowering finds (names, parameters, bodies, lines, calls, control).
    #[test]
    fn macros_only_agrees_with_the_lowering() {
        let src = b"// h\n#define A 1\n  #  define SKIP_IF(c) if (c) continue\n/*\n#define NOT_ME 2\n*/\n#define LONG(x, y) \\\n  do { f(x); \\\n       g(y); } while (0)\n#define ASM_B asm volatile(\"s_barrier\")\n#define EMPTY\n#define STR \"#define X\" // c\nint undefined_x;\n#ifdef A\n#define BAIL break\n#endif\n";
        let light = macros_only(src);
        let full = crate::parse(src);
        let view = |f: &SourceFile| -> Vec<String> {
            f.macros
                .iter()
                .map(|m| {
                    format!(
                        "{:?}",
                        (
                            &m.name,
                            &m.params,
                            &m.body,
                            m.span.line,
                            &m.calls,
                            &m.control,
                            &m.asm,
                        )
                    )
                })
                .collect()
        };
        assert_eq!(view(&light), view(&full));
        assert_eq!(light.macros.len(), 7);
        assert!(light.functions.is_empty());
    }

    /// A header read without the grammar declares the same names as its full parse: the
    /// locals of its host functions are not declarations.
    #[test]
    fn light_headers_declare_what_their_parse_declares() {
        let src = b"#pragma once\n#define N 4\nstruct Opts { int LIMIT_A = 2; };\ninline int host_max(int a, int b) { int HIDDEN_LOCAL = a; return HIDDEN_LOCAL > b ? a : b; }\nstruct S { int get() const { int OTHER_LOCAL = 1; return OTHER_LOCAL; } };\nconstexpr int TILE = 8;\n";
        let light = Parsed::light(src.to_vec());
        let full = Parsed::new(src.to_vec());
        assert!(light.light && !full.light);
        assert_eq!(light.declared(), full.declared());
        for name in ["TILE", "LIMIT_A", "host_max", "Opts"] {
            assert!(light.declared().contains(name), "{name}");
        }
        for name in ["HIDDEN_LOCAL", "OTHER_LOCAL"] {
            assert!(!light.declared().contains(name), "{name}");
        }
    }

    #[test]
    fn declared_names_cover_declarations_not_uses() {
        let src = b"#define M 1\n#if FOO > 2\n#endif\nenum { A, B = 2 };\ntemplate <int TILE, typename T> struct S { static constexpr int K = 3; };\nconstexpr int LIMIT = 4;\nint counter;\nfloat RELU(float x);\ntypedef int idx_t;\n__device__ void f() { int LOCAL = 1; g(USED); }\nstatic float buf[SIZE];\n";
        let file = crate::parse(src);
        let toks = lex::tokenize(src, 0..src.len());
        let names = declared_names(src, &toks, &file);
        for n in [
            "A", "B", "TILE", "T", "S", "K", "LIMIT", "counter", "RELU", "idx_t",
        ] {
            assert!(names.contains(n), "{n} in {names:?}");
        }
        for n in ["FOO", "LOCAL", "USED", "SIZE", "M"] {
            assert!(!names.contains(n), "{n} in {names:?}");
        }
    }
}
