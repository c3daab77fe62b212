//! The settings of each file: the nearest `hip-unroll.toml` upward from its directory (through
//! `config::Lookup`, found once per directory and loaded once per file), or the one config
//! file the caller forces, merged under the caller's options.

use crate::{Error, Options};
use config::{CheckSection, FailOn};
use guards::Settings;
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Settings that apply to one file: its config merged under the caller's options.
pub(crate) struct Resolved {
    pub settings: Settings,
    pub fail_on: FailOn,
    /// Compiled `exclude` patterns, rooted at the config file's directory.
    exclude: Option<Gitignore>,
    /// Compiled `extend-include` patterns, rooted at the config file's directory.
    include: Option<Gitignore>,
}

impl Resolved {
    #[cfg(test)]
    pub fn plain() -> Resolved {
        Resolved {
            settings: Settings::default(),
            fail_on: FailOn::Warning,
            exclude: None,
            include: None,
        }
    }
}

/// `fail-on` and `[check.severity]` levels as the guards' severities.
pub fn severity(level: FailOn) -> guards::Severity {
    match level {
        FailOn::Hint => guards::Severity::Hint,
        FailOn::Warning => guards::Severity::Warning,
        FailOn::Error => guards::Severity::Error,
    }
}

/// Every rule id of the registry, in registry order.
pub fn rule_ids() -> Vec<String> {
    guards::rules::all()
        .iter()
        .map(|r| r.id.to_string())
        .collect()
}

/// Every id of `ids` must name a rule of `known`; `origin` says where the ids come from (a
/// config file, or what the caller calls its own options) for the error.
pub fn validate_rules(ids: &[String], known: &[String], origin: &str) -> Result<(), Error> {
    let unknown: Vec<&str> = ids
        .iter()
        .map(|s| s.trim())
        .filter(|id| !known.iter().any(|k| k == id))
        .collect();
    if unknown.is_empty() {
        return Ok(());
    }
    Err(Error::UnknownRules {
        origin: origin.to_string(),
        named: unknown
            .iter()
            .map(|u| {
                let close = guards::rules::closest(u)
                    .map_or(String::new(), |c| format!("; did you mean {c:?}?"));
                format!("{u}{close}")
            })
            .collect(),
        known: known.to_vec(),
    })
}

/// What `check` uses for a file under one config: the guards' settings and the failing level.
#[derive(Debug, Clone)]
pub struct FileSettings {
    pub settings: Settings,
    pub fail_on: FailOn,
}

/// The config file's path as errors name it (empty when there is none).
fn origin(found: &config::Found) -> String {
    found
        .path
        .as_ref()
        .map_or(String::new(), |p| p.display().to_string())
}

/// The settings of a file whose config is `found` (its `[check]` section merged under `opts`,
/// rule ids checked against `known`; the include search directories are `opts.include`, then
/// the config's), its headers parsed through `headers`: exactly what `check` analyses that
/// file with. The language server calls it with the config of an open buffer.
pub fn file_settings(
    opts: &Options,
    known: &[String],
    found: &config::Found,
    headers: Arc<frontend::tu::HeaderCache>,
) -> Result<FileSettings, Error> {
    let section: &CheckSection = &found.config.check;
    let config_dirs = found
        .path
        .as_ref()
        .map_or_else(Vec::new, |p| config::include_dirs(&found.config, p));
    // The config's compile macros, then the command line's (which come later, as on a
    // compiler's command line).
    let mut defines = frontend::tu::Defines::from_flags(
        config::compile_words(&found.config)
            .iter()
            .map(String::as_str),
    );
    defines.extend(&opts.defines);
    let origin = origin(found);
    for ids in [&section.select, &section.ignore].into_iter().flatten() {
        validate_rules(ids, known, &origin)?;
    }
    let mut levels = std::collections::BTreeMap::new();
    if let Some(map) = &section.severity {
        let ids: Vec<String> = map.keys().cloned().collect();
        validate_rules(&ids, known, &origin)?;
        for (id, level) in map {
            levels.insert(id.trim().to_string(), severity(*level));
        }
    }
    let o = opts;
    let hints = o.hints.unwrap_or(section.hints.unwrap_or(false));
    let trim = |v: &Vec<String>| v.iter().map(|s| s.trim().to_string()).collect::<Vec<_>>();
    Ok(FileSettings {
        settings: Settings {
            select: o.select.as_ref().or(section.select.as_ref()).map(trim),
            ignore: o
                .ignore
                .as_ref()
                .or(section.ignore.as_ref())
                .map(trim)
                .unwrap_or_default(),
            hints,
            parse_all: o.parse_all,
            severity: levels,
            includes: Some(
                frontend::tu::Includes::new(
                    o.include.iter().cloned().chain(config_dirs).collect(),
                    headers,
                )
                .with_defines(&defines),
            ),
        },
        fail_on: o.fail_on.or(section.fail_on).unwrap_or(FailOn::Warning),
    })
}

/// Finds and caches the config of each directory and merges it under the options.
pub(crate) struct Resolver<'a> {
    opts: &'a Options,
    known: &'a [String],
    lookup: config::Lookup,
    /// The forced config file, loaded once.
    forced: Option<Arc<Resolved>>,
    /// Parent directory (as walked) -> its canonical form and its settings.
    by_dir: HashMap<PathBuf, (PathBuf, Arc<Resolved>)>,
    /// Config file (canonical; `None` = no config) -> settings.
    by_config: HashMap<Option<PathBuf>, Arc<Resolved>>,
    /// The run's parsed headers, shared by every file (and analysis thread).
    pub headers: Arc<frontend::tu::HeaderCache>,
}

impl<'a> Resolver<'a> {
    pub fn new(opts: &'a Options, known: &'a [String]) -> Result<Resolver<'a>, Error> {
        let mut r = Resolver {
            opts,
            known,
            lookup: config::Lookup::default(),
            forced: None,
            by_dir: HashMap::new(),
            by_config: HashMap::new(),
            headers: Arc::new(frontend::tu::HeaderCache::new()),
        };
        if let Some(path) = &opts.config {
            let found = config::explicit(path)?;
            r.forced = Some(r.merge(&found)?);
        }
        Ok(r)
    }

    pub fn default_fail_on(&self) -> FailOn {
        self.opts.fail_on.unwrap_or(FailOn::Warning)
    }

    fn parent(path: &Path) -> PathBuf {
        match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        }
    }

    pub fn for_file(&mut self, path: &Path) -> Result<Arc<Resolved>, Error> {
        if let Some(f) = &self.forced {
            return Ok(f.clone());
        }
        let dir = Self::parent(path);
        if let Some((_, r)) = self.by_dir.get(&dir) {
            return Ok(r.clone());
        }
        let canon = std::fs::canonicalize(&dir).unwrap_or_else(|_| dir.clone());
        let found = self.lookup.find(&canon)?;
        let resolved = match self.by_config.get(&found.path) {
            Some(r) => r.clone(),
            None => {
                let r = self.merge(&found)?;
                self.by_config.insert(found.path.clone(), r.clone());
                r
            }
        };
        self.by_dir.insert(dir, (canon, resolved.clone()));
        Ok(resolved)
    }

    /// The `[check]` section of a found config merged under the options.
    fn merge(&self, found: &config::Found) -> Result<Arc<Resolved>, Error> {
        let FileSettings { settings, fail_on } =
            file_settings(self.opts, self.known, found, self.headers.clone())?;
        let section: &CheckSection = &found.config.check;
        let origin = origin(found);
        let patterns = |list: &Option<Vec<String>>, key: &'static str| match (&found.path, list) {
            (Some(p), Some(patterns)) if !patterns.is_empty() => {
                let root = p.parent().unwrap_or(Path::new("/"));
                let mut b = GitignoreBuilder::new(root);
                for pat in patterns {
                    b.add_line(None, pat).map_err(|source| Error::Pattern {
                        key,
                        pattern: Some(pat.clone()),
                        origin: origin.clone(),
                        source,
                    })?;
                }
                b.build().map(Some).map_err(|source| Error::Pattern {
                    key,
                    pattern: None,
                    origin: origin.clone(),
                    source,
                })
            }
            _ => Ok(None),
        };
        let exclude = patterns(&section.exclude, "exclude")?;
        let include = patterns(&section.extend_include, "extend-include")?;
        Ok(Arc::new(Resolved {
            settings,
            fail_on,
            exclude,
            include,
        }))
    }

    /// True when `path` matches its config's `exclude` (the file or one of its directories).
    pub fn excluded(&self, path: &Path, resolved: &Resolved) -> bool {
        self.matches(path, resolved, |r| r.exclude.as_ref())
    }

    /// True when `path` matches its config's `extend-include`.
    pub fn included(&self, path: &Path, resolved: &Resolved) -> bool {
        self.matches(path, resolved, |r| r.include.as_ref())
    }

    /// True when `path` (the file or one of its directories) matches the patterns `which`
    /// picks from its config.
    fn matches(
        &self,
        path: &Path,
        resolved: &Resolved,
        which: impl Fn(&Resolved) -> Option<&Gitignore>,
    ) -> bool {
        let Some(gi) = which(resolved) else {
            return false;
        };
        let canon_dir = match &self.forced {
            Some(_) => std::fs::canonicalize(Self::parent(path)).ok(),
            None => self.by_dir.get(&Self::parent(path)).map(|(c, _)| c.clone()),
        };
        let (Some(dir), Some(name)) = (canon_dir, path.file_name()) else {
            return false;
        };
        match dir.join(name).strip_prefix(gi.path()) {
            Ok(rel) => gi.matched_path_or_any_parents(rel, false).is_ignore(),
            Err(_) => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validate_rules_lists_known_ids() {
        let known = vec!["barrier".to_string(), "atomic".to_string()];
        assert!(validate_rules(&["barrier".into()], &known, "x").is_ok());
        let e = validate_rules(
            &["nope".into(), "atomic".into()],
            &known,
            "the command line",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("nope") && e.contains("barrier, atomic"), "{e}");
    }

    #[test]
    fn each_directory_gets_its_nearest_config() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("sub");
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::write(
            dir.path().join(config::CONFIG_NAME),
            "[check]\nfail-on = \"error\"\nexclude = [\"gen/\"]\n",
        )
        .unwrap();
        std::fs::write(sub.join(config::CONFIG_NAME), "[check]\nhints = true\n").unwrap();
        let opts = Options::default();
        let known = rule_ids();
        let mut r = Resolver::new(&opts, &known).unwrap();
        let top = r.for_file(&dir.path().join("a.cu")).unwrap();
        let low = r.for_file(&sub.join("b.cu")).unwrap();
        assert_eq!((top.fail_on, top.settings.hints), (FailOn::Error, false));
        assert_eq!((low.fail_on, low.settings.hints), (FailOn::Warning, true));
        std::fs::create_dir_all(dir.path().join("gen")).unwrap();
        let g = dir.path().join("gen/c.cu");
        let gen = r.for_file(&g).unwrap();
        assert!(r.excluded(&g, &gen));
        assert!(!r.excluded(&dir.path().join("a.cu"), &top));
    }
}
