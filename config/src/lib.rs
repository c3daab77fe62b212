//! `hip-unroll.toml`: found upward from a file; each command reads its own section
//! (`[check]`, `[compile]`, `[vgpr-pressure]`, `[tune]`) with its own serde struct. The binary
//! and any crate that needs a section read it through here; nothing here prints or exits.

use std::path::{Path, PathBuf};

pub const CONFIG_NAME: &str = "hip-unroll.toml";

/// Why a config file could not be used. Each message names the file.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot read {}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        error: std::io::Error,
    },
    #[error("invalid TOML in {}", path.display())]
    Toml {
        path: PathBuf,
        #[source]
        error: Box<toml::de::Error>,
    },
    /// A section that is not what its struct expects (an unknown key, a wrong type).
    #[error("invalid [{section}] section in {}: {message}", path.display())]
    Section {
        section: String,
        path: PathBuf,
        message: String,
    },
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

/// Read and parse a config file into a TOML table (errors name the file).
pub fn load_table(path: &Path) -> Result<toml::Table, Error> {
    let text = std::fs::read_to_string(path).map_err(|error| Error::Read {
        path: path.to_path_buf(),
        error,
    })?;
    toml::from_str(&text).map_err(|error| Error::Toml {
        path: path.to_path_buf(),
        error: Box::new(error),
    })
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
    pub factors: Option<Vec<u32>>,
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
}

/// `[compile]`: how `pressure`, `unroll --verify` and `tune` compile a source.
#[derive(Debug, Clone, Default, PartialEq, serde::Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct CompileSection {
    pub command: Option<String>,
    pub arch: Option<String>,
    pub cache_dir: Option<PathBuf>,
    /// nvcc for NVIDIA targets (`bench`, `tune --backend bench`), before `$CUDA_HOME/bin` and
    /// `PATH`.
    pub nvcc: Option<PathBuf>,
}

/// `[vgpr-pressure]`: the thresholds of the `vgpr-pressure` judge.
#[derive(Debug, Clone, Default, PartialEq, serde::Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct PressureSection {
    pub max_occupancy_loss: Option<u32>,
}

/// Read the `[check]` section of the config file at `path` (an absent section is empty).
pub fn load_check_section(path: &Path) -> Result<CheckSection, Error> {
    section(&load_table(path)?, "check", path)
}

/// The section `name` of a parsed config file (`path`, for messages) as `T`; an absent section
/// is `T::default()`, a malformed one an error naming the section, the file and the key.
pub fn section<T: serde::de::DeserializeOwned + Default>(
    table: &toml::Table,
    name: &str,
    path: &Path,
) -> Result<T, Error> {
    match table.get(name) {
        None => Ok(T::default()),
        Some(value) => value.clone().try_into::<T>().map_err(|e| Error::Section {
            section: name.to_string(),
            path: path.to_path_buf(),
            message: e.message().to_string(),
        }),
    }
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
        let p = write(dir.path(), "[check]\nselect = [\"barrier\"]\nfail-on = \"error\"\nhints = true\nexclude = [\"gen/\"]\nextend-include = [\"*.cl\"]\n[check.severity]\nunroll-blocked = \"warning\"\n[profile]\nx = 1\n");
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
        let err = load_check_section(&p).unwrap_err();
        let e = err.to_string();
        assert!(
            e.contains("invalid TOML") && e.contains(&p.display().to_string()),
            "{e}"
        );
        // The parser's own message stays reachable as the source (the binary prints the chain).
        assert!(std::error::Error::source(&err).is_some(), "{err:?}");

        let p = write(dir.path(), "[other]\n");
        assert_eq!(load_check_section(&p).unwrap(), CheckSection::default());
    }

    #[test]
    fn tune_section_parses_and_rejects_unknown_keys() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(
            dir.path(),
            "[tune]\nbuild = \"make\"\nrun = \"./app\"\nfactors = [2, 8]\nmin-speedup = 5.0\ncompile-flags = [\"-Iinc\"]\n",
        );
        let t: TuneSection = section(&load_table(&p).unwrap(), "tune", &p).unwrap();
        assert_eq!(t.build.as_deref(), Some("make"));
        assert_eq!(t.factors, Some(vec![2, 8]));
        assert_eq!(t.min_speedup, Some(5.0));
        assert_eq!(t.compile_flags, Some(vec!["-Iinc".to_string()]));
        let p = write(dir.path(), "[tune]\nbiuld = \"make\"\n");
        let e = section::<TuneSection>(&load_table(&p).unwrap(), "tune", &p)
            .unwrap_err()
            .to_string();
        assert!(e.contains("biuld") && e.contains("[tune]"), "{e}");
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
}
