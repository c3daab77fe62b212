//! One document's analysis, exactly as `check` would do it on that text: the nearest
//! `hip-unroll.toml` upward from the file (an open buffer of it wins over the disk), merged by
//! `workspace::file_settings`; the translation unit resolved by `frontend::tu` with the open
//! documents as an overlay; the byte pre-filter, the guards and the lint of
//! `guards::check_unit`. Also the document's `pipeline::Source` (the rewrite policy's parse and
//! verdicts) for code actions and hover. Pure functions of a [`Snapshot`]: the session runs
//! them on its worker threads.

use frontend::tu::{HeaderCache, Includes, Overlay};
use guards::{Diagnostic, Settings};
use render::lines::LineIndex;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

/// The environment variable of the panic test point: when it is set to a non-empty text, an
/// analysis of a document that contains that text panics (the way `fsio`'s test points make a
/// process stop), so tests can prove that a panic is caught and reported.
pub const PANIC_ENV: &str = "HIP_UNROLL_SERVER_PANIC";

/// Everything an analysis reads: one document's text at one version, and the open documents'
/// texts that stand in for the disk.
#[derive(Debug, Clone)]
pub struct Snapshot {
    /// The file (`None` for a document without a `file:` URI: analysed alone, default config).
    pub path: Option<PathBuf>,
    pub version: i32,
    pub text: Arc<[u8]>,
    pub overlay: Arc<Overlay>,
    pub headers: Arc<HeaderCache>,
    /// The GPU specifier macros the workspace and the open documents define: a text that uses
    /// one is analysed though it mentions no GPU qualifier (as `check DIR` does).
    pub learned: Option<Arc<workspace::GpuMacros>>,
}

/// What analysing a document gave.
#[derive(Debug)]
pub struct Analysis {
    pub version: i32,
    pub text: Arc<[u8]>,
    pub lines: LineIndex,
    /// `check`'s diagnostics of this text (suppressions, selection and severities applied).
    pub diagnostics: Vec<Diagnostic>,
    /// The headers of its unit (normalised paths): an edit of one re-checks this document.
    pub headers: Vec<PathBuf>,
    /// True when an include of its unit was not found (a new file may answer it).
    pub missing: bool,
    /// Why the config could not be used (then nothing was analysed).
    pub config_error: Option<String>,
    /// The GPU specifier macros this text defines (`frontend::gpu_specifier_defines`): other
    /// open documents that use one are analysed as `check DIR` would.
    pub defines: Vec<String>,
    /// True when the byte pre-filter found no GPU code and nothing was analysed, or when it
    /// was analysed only because it uses a learned specifier macro: a change of the learned
    /// macros may change its result.
    pub by_learned: bool,
}

/// The settings of the document's file and the search directories of its includes.
pub struct Resolved {
    pub settings: Settings,
}

/// The config that applies to `path`: the nearest `hip-unroll.toml` upward, from the overlay
/// when the editor has it open, else from the disk (`config::discover`'s rule, with open
/// buffers first).
pub fn find_config(path: &Path, overlay: &Overlay) -> Result<config::Found, config::Error> {
    for dir in path.ancestors().skip(1) {
        let candidate = dir.join(config::CONFIG_NAME);
        if let Some(text) = overlay.get(&candidate) {
            let text = String::from_utf8_lossy(text);
            let config = config::parse(&text, &candidate)?;
            return Ok(config::Found {
                path: Some(candidate),
                config,
            });
        }
        if candidate.is_file() {
            return config::discover(&candidate);
        }
    }
    Ok(config::Found::default())
}

/// `check`'s settings for the document, its includes reading the overlay first.
pub fn resolve(snap: &Snapshot) -> Result<Resolved, String> {
    let Some(path) = &snap.path else {
        return Ok(Resolved {
            settings: Settings::default(),
        });
    };
    let found = find_config(path, &snap.overlay).map_err(|e| e.to_string())?;
    let known = workspace::rule_ids();
    let mut fs = workspace::file_settings(
        &workspace::Options::default(),
        &known,
        &found,
        snap.headers.clone(),
    )
    .map_err(|e| e.to_string())?;
    fs.settings.includes = fs
        .settings
        .includes
        .take()
        .map(|inc| inc.with_overlay(snap.overlay.clone()));
    Ok(Resolved {
        settings: fs.settings,
    })
}

/// Panics when the test point is armed and the text holds its marker.
fn test_point(text: &[u8]) {
    static MARKER: OnceLock<Option<String>> = OnceLock::new();
    let marker = MARKER.get_or_init(|| std::env::var(PANIC_ENV).ok().filter(|m| !m.is_empty()));
    if let Some(m) = marker {
        if text.windows(m.len()).any(|w| w == m.as_bytes()) {
            panic!("test point {PANIC_ENV}: the document holds {m:?}");
        }
    }
}

/// The document's diagnostics, as `check FILE` gives them for this text; `None` when
/// `cancel` was set before the work was done (a newer edit supersedes it).
pub fn analyse(snap: &Snapshot, cancel: &AtomicBool) -> Option<Analysis> {
    test_point(&snap.text);
    let lines = LineIndex::new(&snap.text);
    let mut out = Analysis {
        version: snap.version,
        text: snap.text.clone(),
        lines,
        diagnostics: Vec::new(),
        headers: Vec::new(),
        missing: false,
        config_error: None,
        defines: frontend::gpu_specifier_defines(&snap.text),
        by_learned: false,
    };
    let resolved = match resolve(snap) {
        Ok(r) => r,
        Err(e) => {
            out.config_error = Some(e);
            return Some(out);
        }
    };
    let settings = &resolved.settings;
    let text: &[u8] = &snap.text;
    let display = snap
        .path
        .as_ref()
        .map_or_else(|| "<buffer>".to_string(), |p| p.display().to_string());
    // `guards::check_source`, in its steps: the pre-filter, the unit, the guards and lint.
    if !settings.parse_all
        && !frontend::may_contain_gpu_code(text)
        && !guards::rules::wave_size::may_define_warp_size(text)
    {
        out.by_learned = true;
        // A specifier macro another file of the workspace defines, or one of a header this
        // file includes (as `check` reads a file alone).
        let from_headers = || match (&settings.includes, &snap.path) {
            (Some(inc), Some(path)) => inc.gpu_macro_from_headers(path, text).is_some(),
            _ => false,
        };
        if snap
            .learned
            .as_ref()
            .is_none_or(|g| g.used_in(text).is_none())
            && !from_headers()
        {
            return Some(out);
        }
    }
    if cancel.load(Ordering::Relaxed) {
        return None;
    }
    let (file, unit) = match (&settings.includes, &snap.path) {
        (Some(inc), Some(path)) => inc.open(path, text),
        _ => (
            Arc::new(frontend::parse(text)),
            frontend::tu::TranslationUnit::empty(),
        ),
    };
    if cancel.load(Ordering::Relaxed) {
        return None;
    }
    let (_, diagnostics) = guards::check_unit(&display, text, &file, &unit, settings);
    out.diagnostics = diagnostics;
    out.headers = unit.headers.iter().map(|h| h.path.clone()).collect();
    out.missing = unit.has_missing();
    Some(out)
}

/// The document under the rewrite policy (`pipeline::Source`: every blocker, no suppression)
/// in the same unit `check` sees: what `hip-unroll unroll FILE` would rewrite. `None` when the
/// config cannot be used.
pub fn source(snap: &Snapshot) -> Option<pipeline::Source> {
    test_point(&snap.text);
    let bytes = snap.text.to_vec();
    let Some(path) = &snap.path else {
        return Some(pipeline::Source::new(bytes));
    };
    let resolved = resolve(snap).ok()?;
    let includes: Includes = resolved
        .settings
        .includes
        .unwrap_or_else(|| Includes::new(Vec::new(), snap.headers.clone()));
    Some(pipeline::Source::open(path, bytes, &includes))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snap(path: &Path, text: &str, overlay: Overlay) -> Snapshot {
        Snapshot {
            path: Some(path.to_path_buf()),
            version: 1,
            text: Arc::from(text.as_bytes()),
            overlay: Arc::new(overlay),
            headers: Arc::new(HeaderCache::new()),
            learned: None,
        }
    }

    const KERNEL: &str = "#include \"h.cuh\"\n__global__ void k(float* a) {\n    #pragma unroll 4\n    for (int i = 0; i < 8; ++i) {\n        a[i] = 0;\n        step();\n    }\n}\n";

    #[test]
    fn open_header_and_config_buffers_win_over_the_disk() {
        let d = tempfile::tempdir().unwrap();
        let k = d.path().join("k.cu");
        std::fs::write(d.path().join("h.cuh"), "__device__ void step() {}\n").unwrap();
        let never = AtomicBool::new(false);
        let a = analyse(&snap(&k, KERNEL, Overlay::new()), &never).unwrap();
        assert!(a.diagnostics.is_empty(), "{:?}", a.diagnostics);
        assert_eq!(a.headers, [d.path().join("h.cuh")]);
        // The unsaved header reaches a barrier: the pragma'd loop is now blocked.
        let mut o = Overlay::new();
        o.insert(
            d.path().join("h.cuh"),
            Arc::from(&b"__device__ void step() { __syncthreads(); }\n"[..]),
        );
        let a = analyse(&snap(&k, KERNEL, o.clone()), &never).unwrap();
        let rules: Vec<&str> = a.diagnostics.iter().map(|d| d.rule.as_str()).collect();
        assert_eq!(rules, ["unroll-blocked"]);
        // An unsaved config that ignores the rule silences it; a broken one is an error.
        o.insert(
            d.path().join(config::CONFIG_NAME),
            Arc::from(&b"[check]\nignore = [\"unroll-blocked\"]\n"[..]),
        );
        let a = analyse(&snap(&k, KERNEL, o.clone()), &never).unwrap();
        assert!(a.diagnostics.is_empty());
        o.insert(
            d.path().join(config::CONFIG_NAME),
            Arc::from(&b"[check]\nnope = 1\n"[..]),
        );
        let a = analyse(&snap(&k, KERNEL, o), &never).unwrap();
        assert!(
            a.config_error
                .as_deref()
                .is_some_and(|e| e.contains("nope")),
            "{:?}",
            a.config_error
        );
    }

    #[test]
    fn a_cancelled_analysis_gives_nothing() {
        let d = tempfile::tempdir().unwrap();
        let cancelled = AtomicBool::new(true);
        assert!(analyse(
            &snap(&d.path().join("k.cu"), KERNEL, Overlay::new()),
            &cancelled
        )
        .is_none());
    }
}
