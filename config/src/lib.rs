//! `hip-unroll.toml`: found upward from a file and read whole by [`load`] into [`Config`], one
//! serde struct per section (`[check]`, `[compile]`, `[vgpr-pressure]`, `[tune]`); an unknown
//! section or key is an error wherever it is, whichever command reads the file. Errors are one
//! line: file, line:column, reason. Nothing here prints or exits.

use std::path::{Path, PathBuf};

pub const CONFIG_NAME: &str = "hip-unroll.toml";

/// Why a config file could not be used. Each message is one line that names the file (and,
/// where the parser knows it, the line and column and the section).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot read {}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        error: std::io::Error,
    },
    /// Not TOML, an unknown section or key, or a value of the wrong type or range.
    #[error("{}{}: {message}", path.display(), at.map(|(l, c)| format!(":{l}:{c}")).unwrap_or_default())]
    Toml {
        path: PathBuf,
        /// 1-based line and column.
        at: Option<(usize, usize)>,
        message: String,
    },
    /// A config file named explicitly that is not a regular file.
    #[error("config file {}: {reason}", path.display())]
    NotAFile { path: PathBuf, reason: String },
}

/// Every section of `hip-unroll.toml`. An unknown section or key is an error.
#[derive(Debug, Clone, Default, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Config {
    #[serde(default)]
    pub check: CheckSection,
    #[serde(default)]
    pub compile: CompileSection,
    #[serde(default)]
    pub vgpr_pressure: PressureSection,
    #[serde(default)]
    pub tune: TuneSection,
}

/// The sections a config file may have.
pub const SECTIONS: [&str; 4] = ["check", "compile", "vgpr-pressure", "tune"];

/// Read and check the whole config file at `path`: its TOML, every section and every key (an
/// unknown one is an error naming it, its section and the file, wherever it is).
pub fn load(path: &Path) -> Result<Config, Error> {
    let text = std::fs::read_to_string(path).map_err(|error| Error::Read {
        path: path.to_path_buf(),
        error,
    })?;
    parse(&text, path)
}

/// [`load`] on text read from `path` (for messages).
pub fn parse(text: &str, path: &Path) -> Result<Config, Error> {
    // Syntax first, so that a syntax error is called one.
    text.parse::<toml::Table>().map_err(|e| {
        let mut err = toml_error(text, path, &e);
        if let Error::Toml { message, .. } = &mut err {
            *message = format!("invalid TOML: {message}");
        }
        err
    })?;
    toml::from_str::<Config>(text).map_err(|e| toml_error(text, path, &e))
}

/// One line from a toml error: `FILE:LINE:COL: reason`, with the section of a misplaced key
/// (toml's own message is a multi-line code frame).
pub fn toml_error(text: &str, path: &Path, e: &toml::de::Error) -> Error {
    let at = e.span().map(|s| line_col(text, s.start));
    let mut message = e
        .message()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    if let Some(rest) = message.strip_prefix("unknown field ") {
        let (key, known) = rest.split_once(", expected ").unwrap_or((rest, ""));
        message = match e.span().and_then(|s| enclosing_table(text, s.start)) {
            Some(sec) if known.is_empty() => format!("unknown key {key} in [{sec}]"),
            Some(sec) => format!("unknown key {key} in [{sec}] (expected {known})"),
            None => format!(
                "unknown section {key} (known: {})",
                SECTIONS.map(|s| format!("[{s}]")).join(", ")
            ),
        };
    }
    Error::Toml {
        path: path.to_path_buf(),
        at,
        message,
    }
}

/// 1-based line and column (in characters) of byte `offset` of `text`.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
    (line, col)
}

/// The table that the key at `offset` belongs to (`None`: the top level): the header of a
/// `[table]` line itself names its parent; a key under a header, that header; a top-level
/// `section.key = ...` or `section = { key = ... }`, the section.
fn enclosing_table(text: &str, offset: usize) -> Option<String> {
    fn header(line: &str) -> String {
        let name = line.trim().trim_start_matches('[');
        let name = name.split(']').next().unwrap_or("");
        name.split('.')
            .map(|p| p.trim().trim_matches('"').trim_matches('\''))
            .collect::<Vec<_>>()
            .join(".")
    }
    let before = text.get(..offset.min(text.len()))?;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let line = text[line_start..].lines().next().unwrap_or("").trim_start();
    if line.starts_with('[') {
        return header(line)
            .rsplit_once('.')
            .map(|(parent, _)| parent.to_string());
    }
    if let Some(h) = before[..line_start]
        .lines()
        .rev()
        .map(str::trim_start)
        .find(|l| l.starts_with('['))
    {
        return Some(header(h));
    }
    let head = line.split(['=', '.']).next().unwrap_or("").trim();
    let rest = line[line.find(head).unwrap_or(0) + head.len()..].trim_start();
    let inline = rest
        .strip_prefix('=')
        .is_some_and(|r| r.trim_start().starts_with('{'));
    (rest.starts_with('.') || inline).then(|| head.trim_matches('"').to_string())
}

/// The config that applies at a path: the file found (`None`: there is none) and its contents
/// (every section's default when there is no file).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Found {
    pub path: Option<PathBuf>,
    pub config: Config,
}

/// The one config lookup of every command: the nearest `hip-unroll.toml` upward from `start`
/// (a file or a directory), read and checked whole (see [`load`]); no file is every section's
/// default. `check` looks up every directory through one [`Lookup`], which reads each file once.
pub fn discover(start: &Path) -> Result<Found, Error> {
    Lookup::default().find(start).map(|f| (*f).clone())
}

/// A config file named explicitly (`check --config`): it must be a regular file.
pub fn explicit(path: &Path) -> Result<Found, Error> {
    fsio::regular(path).map_err(|e| Error::NotAFile {
        path: path.to_path_buf(),
        reason: e.reason(),
    })?;
    let canon = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let config = load(&canon)?;
    Ok(Found {
        path: Some(canon),
        config,
    })
}

/// [`discover`] for many starting points: each config file is read once.
#[derive(Debug, Default)]
pub struct Lookup {
    loaded: std::collections::HashMap<Option<PathBuf>, std::sync::Arc<Found>>,
}

impl Lookup {
    /// The config that applies at `start` (see [`discover`]).
    pub fn find(&mut self, start: &Path) -> Result<std::sync::Arc<Found>, Error> {
        let path = find_config(start);
        if let Some(f) = self.loaded.get(&path) {
            return Ok(f.clone());
        }
        let config = match &path {
            Some(p) => load(p)?,
            None => Config::default(),
        };
        let found = std::sync::Arc::new(Found {
            path: path.clone(),
            config,
        });
        self.loaded.insert(path, found.clone());
        Ok(found)
    }
}

/// The nearest `hip-unroll.toml` in `start` (a file or directory) or any of its ancestors.
pub fn find_config(start: &Path) -> Option<PathBuf> {
    let abs = std::fs::canonicalize(start).unwrap_or_else(|_| start.to_path_buf());
    let mut dir = if abs.is_dir() {
        Some(abs.as_path())
    } else {
        abs.parent()
    };
    while let Some(d) = dir {
        let candidate = d.join(CONFIG_NAME);
        if candidate.is_file() {
            return Some(candidate);
        }
        dir = d.parent();
    }
    None
}

/// `--fail-on` / `fail-on`: the least severity that makes `check` exit 1.
/// Also a rule's severity in `[check.severity]`; the binary maps it onto `guards::Severity`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum FailOn {
    Hint,
    Warning,
    Error,
}

/// The `[check]` section of `hip-unroll.toml`. Unknown keys are an error.
#[derive(Debug, Clone, Default, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct CheckSection {
    /// Rule ids to run (replaces the default set).
    pub select: Option<Vec<String>>,
    /// Rule ids to turn off.
    pub ignore: Option<Vec<String>>,
    pub fail_on: Option<FailOn>,
    /// Emit `candidate` hints for unrollable loops without a pragma.
    pub hints: Option<bool>,
    /// Gitignore-style patterns, relative to the config file's directory, of files and
    /// directories that directory walks skip.
    pub exclude: Option<Vec<String>>,
    /// Gitignore-style patterns (`*.cl`, `kernels/*.inc`) of files that directory walks pick
    /// up besides the usual C++/HIP/CUDA extensions, as ruff's `extend-include`.
    pub extend_include: Option<Vec<String>>,
    /// Severity of a rule's diagnostics, by rule id (`unroll-blocked = "warning"`).
    pub severity: Option<std::collections::BTreeMap<String, FailOn>>,
    /// Directories (relative to the config file's directory) where `#include "..."` is looked
    /// for after the including file's own directory and the command line's `-I`.
    pub include_dirs: Option<Vec<PathBuf>>,
}

/// The `[tune]` section: every `tune` option except the output ones; command-line options
/// win. Unknown keys are an error.
#[derive(Debug, Clone, Default, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct TuneSection {
    pub paths: Option<Vec<PathBuf>>,
    pub build: Option<String>,
    pub run: Option<String>,
    pub check: Option<String>,
    /// `command`, `rocprofv3`, `bench` or `replay`.
    pub backend: Option<String>,
    /// bench: the launch spec.
    pub spec: Option<PathBuf>,
    /// replay: the snapshot directory.
    pub snapshot: Option<PathBuf>,
    /// replay: the file defining the captured kernel.
    pub source: Option<PathBuf>,
    pub time_regex: Option<String>,
    pub time_unit: Option<String>,
    pub kernel: Option<String>,
    /// Unroll factors: counts, and `"full"` (`#pragma unroll` with no count).
    pub factors: Option<Vec<Factor>>,
    /// `pragma`, `manual` or `both`.
    pub mode: Option<String>,
    pub jobs: Option<usize>,
    /// Percent.
    pub min_speedup: Option<f64>,
    pub confidence: Option<f64>,
    pub min_runs: Option<usize>,
    pub max_runs: Option<usize>,
    /// Percent.
    pub max_noise: Option<f64>,
    /// Seconds per command.
    pub timeout: Option<u64>,
    pub state: Option<PathBuf>,
    pub arch: Option<String>,
    pub compile_flags: Option<Vec<String>>,
    /// Where lanes run: `local` (the default) or `slurm`.
    pub executor: Option<String>,
    /// `[tune.slurm]`: how Slurm lanes are started.
    pub slurm: Option<SlurmSection>,
}

/// `[tune.slurm]`: the Slurm executor's lanes; command-line options win (extra srun arguments
/// of the command line come after these).
#[derive(Debug, Clone, Default, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct SlurmSection {
    /// Job steps, one lane each.
    pub lanes: Option<usize>,
    /// Extra srun arguments for every step (`--partition=gpu`...).
    pub args: Option<Vec<String>>,
    /// The srun program [default: `srun` on PATH].
    pub srun: Option<PathBuf>,
}

/// `[compile]`: how `pressure`, `unroll --verify`, `bench` and `tune` compile a source.
#[derive(Debug, Clone, Default, PartialEq, serde::Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct CompileSection {
    pub command: Option<String>,
    pub arch: Option<String>,
    pub cache_dir: Option<PathBuf>,
    /// Seconds one compile may take (1 to 86400) before its process group is killed.
    pub timeout: Option<u64>,
    /// nvcc for NVIDIA targets (`bench`, `tune --backend bench`), before `$CUDA_HOME/bin` and
    /// `PATH`.
    pub nvcc: Option<PathBuf>,
}

/// One of `[tune] factors`: a count (`4`) or `"full"`, a full unroll (`#pragma unroll` with
/// no count).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Factor {
    Count(u32),
    Full,
}

impl<'de> serde::Deserialize<'de> for Factor {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Factor, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Factor;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an unroll factor (a positive integer) or \"full\"")
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Factor, E> {
                u32::try_from(v)
                    .map(Factor::Count)
                    .map_err(|_| E::invalid_value(serde::de::Unexpected::Signed(v), &self))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Factor, E> {
                u32::try_from(v)
                    .map(Factor::Count)
                    .map_err(|_| E::invalid_value(serde::de::Unexpected::Unsigned(v), &self))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Factor, E> {
                if v == "full" {
                    Ok(Factor::Full)
                } else {
                    Err(E::invalid_value(serde::de::Unexpected::Str(v), &self))
                }
            }
        }
        d.deserialize_any(V)
    }
}

/// `[vgpr-pressure]`: the thresholds of the `vgpr-pressure` judge.
#[derive(Debug, Clone, Default, PartialEq, serde::Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct PressureSection {
    /// Waves per SIMD (NVIDIA: register-limited warps per SM) a variant may lose. `check
    /// --hsaco` and `pressure` judge with it (unset: 0). For `tune` it is an opt-in veto: unset,
    /// an occupancy loss is a prediction the tune records and measures; set (also to 0), a
    /// variant that loses more is `gated` without a run.
    pub max_occupancy_loss: Option<u32>,
}

/// The include search directories a config file names, in order: `[check] include-dirs`, then
/// the `-I DIR`/`-IDIR`/`-iquote DIR` of `[compile] command` and of `[tune] compile-flags`;
/// relative ones are resolved from the config file's directory (`path`'s parent).
pub fn include_dirs(cfg: &Config, path: &Path) -> Vec<PathBuf> {
    let base = path.parent().unwrap_or(Path::new("."));
    let mut out: Vec<PathBuf> = cfg.check.include_dirs.clone().unwrap_or_default();
    out.extend(include_flags(&compile_words(cfg)));
    out.into_iter().map(|d| base.join(d)).collect()
}

/// The compiler words of `[compile] command` and `[tune] compile-flags`, in order: where the
/// `-D`/`-U` macros the guards see with the command line's come from (as [`include_dirs`] for
/// `-I`).
pub fn compile_words(cfg: &Config) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    if let Some(cmd) = &cfg.compile.command {
        words.extend(cmd.split_whitespace().map(str::to_string));
    }
    for f in cfg.tune.compile_flags.iter().flatten() {
        words.extend(f.split_whitespace().map(str::to_string));
    }
    words
}

/// The directories of `-I DIR`, `-IDIR`, `-iquote DIR` and `-iquoteDIR` among compiler words,
/// in order.
pub fn include_flags(words: &[String]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let w = words[i].as_str();
        if (w == "-I" || w == "-iquote") && i + 1 < words.len() {
            out.push(PathBuf::from(&words[i + 1]));
            i += 1;
        } else if let Some(d) = w
            .strip_prefix("-iquote")
            .or_else(|| w.strip_prefix("-I"))
            .filter(|d| !d.is_empty())
        {
            out.push(PathBuf::from(d));
        }
        i += 1;
    }
    out
}

/// Read the `[check]` section of the config file at `path` (an absent section is empty).
pub fn load_check_section(path: &Path) -> Result<CheckSection, Error> {
    Ok(load(path)?.check)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, text: &str) -> PathBuf {
        let p = dir.join(CONFIG_NAME);
        std::fs::write(&p, text).unwrap();
        p
    }

    #[test]
    fn check_section_parses_and_rejects_unknown_keys() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(dir.path(), "[check]\nselect = [\"barrier\"]\nfail-on = \"error\"\nhints = true\nexclude = [\"gen/\"]\nextend-include = [\"*.cl\"]\n[check.severity]\nunroll-blocked = \"warning\"\n");
        let s = load_check_section(&p).unwrap();
        assert_eq!(s.select.as_deref(), Some(&["barrier".to_string()][..]));
        assert_eq!(s.fail_on, Some(FailOn::Error));
        assert_eq!(s.hints, Some(true));
        assert_eq!(s.exclude.as_deref(), Some(&["gen/".to_string()][..]));
        assert_eq!(s.extend_include.as_deref(), Some(&["*.cl".to_string()][..]));
        assert_eq!(
            s.severity.unwrap().get("unroll-blocked"),
            Some(&FailOn::Warning)
        );

        let p = write(dir.path(), "[check]\nselet = [\"barrier\"]\n");
        let e = load_check_section(&p).unwrap_err().to_string();
        assert!(
            e.contains("selet") && e.contains(&p.display().to_string()),
            "{e}"
        );

        let p = write(dir.path(), "[check\n");
        let e = load_check_section(&p).unwrap_err().to_string();
        assert!(
            e.contains("invalid TOML") && e.contains(&p.display().to_string()),
            "{e}"
        );

        let p = write(dir.path(), "[tune]\n");
        assert_eq!(load_check_section(&p).unwrap(), CheckSection::default());
    }

    #[test]
    fn tune_section_parses_and_rejects_unknown_keys() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(
            dir.path(),
            "[tune]\nbuild = \"make\"\nrun = \"./app\"\nfactors = [2, 8]\nmin-speedup = 5.0\ncompile-flags = [\"-Iinc\"]\n",
        );
        let t = load(&p).unwrap().tune;
        assert_eq!(t.build.as_deref(), Some("make"));
        assert_eq!(t.factors, Some(vec![Factor::Count(2), Factor::Count(8)]));
        assert_eq!(t.min_speedup, Some(5.0));
        assert_eq!(t.compile_flags, Some(vec!["-Iinc".to_string()]));
        let p = write(dir.path(), "[tune]\nbiuld = \"make\"\n");
        let e = load(&p).unwrap_err().to_string();
        assert!(e.contains("biuld") && e.contains("[tune]"), "{e}");
        // `full` is a factor; another word or a negative number is one line naming both.
        let p = write(dir.path(), "[tune]\nfactors = [\"full\", 4]\n");
        let t = load(&p).unwrap().tune;
        assert_eq!(t.factors, Some(vec![Factor::Full, Factor::Count(4)]));
        for bad in ["[\"fulll\"]", "[-2]"] {
            let p = write(dir.path(), &format!("[tune]\nfactors = {bad}\n"));
            let e = load(&p).unwrap_err().to_string();
            assert!(e.contains("\"full\"") && !e.contains('\n'), "{e}");
        }
    }

    #[test]
    fn include_dirs_in_order_relative_to_the_config() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(
            dir.path(),
            "[check]\ninclude-dirs = [\"inc\", \"/abs/inc\"]\n[compile]\ncommand = \"hipcc -I common -Ithird {src} -o {out}\"\n[tune]\ncompile-flags = [\"-iquote q\", \"-DX\"]\n",
        );
        let dirs = include_dirs(&load(&p).unwrap(), &p);
        let base = dir.path();
        assert_eq!(
            dirs,
            [
                base.join("inc"),
                PathBuf::from("/abs/inc"),
                base.join("common"),
                base.join("third"),
                base.join("q"),
            ]
        );
        let p = write(dir.path(), "[check]\ninclude-dirs = \"inc\"\n");
        let e = load(&p).unwrap_err().to_string();
        assert!(
            e.contains(":2:16:") && e.contains("expected a sequence"),
            "{e}"
        );
    }

    #[test]
    fn discover_loads_the_nearest_file_or_defaults() {
        let dir = tempfile::tempdir().unwrap();
        let deep = dir.path().join("a/b");
        std::fs::create_dir_all(&deep).unwrap();
        assert_eq!(discover(&deep).unwrap(), Found::default());
        let p = write(dir.path(), "[compile]\ncache-dir = \"c\"\n");
        let found = discover(&deep.join("k.cu")).unwrap();
        assert_eq!(found.path, Some(std::fs::canonicalize(&p).unwrap()));
        assert_eq!(found.config.compile.cache_dir, Some(PathBuf::from("c")));
        write(dir.path(), "[compile]\nbogus = 1\n");
        assert!(discover(&deep).unwrap_err().to_string().contains("bogus"));
        let e = explicit(dir.path()).unwrap_err().to_string();
        assert!(
            e.starts_with("config file ") && e.contains("directory"),
            "{e}"
        );
    }

    #[test]
    fn find_config_walks_upward() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(dir.path(), "");
        let deep = dir.path().join("a/b");
        std::fs::create_dir_all(&deep).unwrap();
        std::fs::write(deep.join("k.cu"), "").unwrap();
        let found = find_config(&deep.join("k.cu")).unwrap();
        assert_eq!(found, std::fs::canonicalize(&p).unwrap());
    }

    #[test]
    fn every_error_is_one_line_with_file_line_and_column() {
        let dir = tempfile::tempdir().unwrap();
        let f = |text: &str| {
            let p = write(dir.path(), text);
            let e = load(&p).unwrap_err().to_string();
            assert!(!e.contains('\n'), "{e}");
            e.strip_prefix(&format!("{}:", p.display()))
                .unwrap_or_else(|| panic!("{e}"))
                .to_string()
        };
        assert_eq!(
            f("[check\nx=1\n"),
            "1:7: invalid TOML: unclosed table, expected `]`"
        );
        assert_eq!(
            f("[check]\nselect = [\"barrier\"\n"),
            "2:20: invalid TOML: unclosed array, expected `]`"
        );
        let e = f("[check]\nhints = true\n[bogus]\nx = 1\n");
        assert!(
            e.starts_with(
                "3:2: unknown section `bogus` (known: [check], [compile], [vgpr-pressure], [tune])"
            ),
            "{e}"
        );
        let e = f("[tune]\nbuild = \"make\"\nbiuld = \"make\"\n");
        assert!(
            e.starts_with("3:1: unknown key `biuld` in [tune] (expected one of `paths`, "),
            "{e}"
        );
        let e = f("tune = { biuld = 1 }\n");
        assert!(e.contains("unknown key `biuld` in [tune]"), "{e}");
        let e = f("tune.biuld = 1\n");
        assert!(e.contains("unknown key `biuld` in [tune]"), "{e}");
        let e = f("[check.bogus]\nx = 1\n");
        assert!(e.contains("unknown key `bogus` in [check]"), "{e}");
        let e = f("[tune]\nmax-runs = -3\n");
        assert!(e.starts_with("2:12: "), "{e}");
        let e = f("[check]\nfail-on = \"loud\"\n");
        assert!(e.starts_with("2:11: unknown variant `loud`"), "{e}");
        // Nesting past the parser's limit is an error, not a stack overflow.
        let deep = format!(
            "[check]\nselect = {}{}\n",
            "[".repeat(100_000),
            "]".repeat(100_000)
        );
        let e = f(&deep);
        assert!(e.starts_with("2:") && e.contains("invalid TOML: "), "{e}");
        // Every known section and key loads.
        let p = write(dir.path(), "[check]\nhints = true\n[compile]\narch = \"gfx942\"\n[vgpr-pressure]\nmax-occupancy-loss = 1\n[tune]\njobs = 2\n");
        let c = load(&p).unwrap();
        assert_eq!(
            (
                c.check.hints,
                c.compile.arch.as_deref(),
                c.vgpr_pressure.max_occupancy_loss,
                c.tune.jobs
            ),
            (Some(true), Some("gfx942"), Some(1), Some(2))
        );
    }
}
