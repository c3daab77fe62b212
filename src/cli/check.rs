//! `hip-unroll check`: walks files and directories, analyses every HIP source in parallel with
//! `guards::check_source`, and renders one report (human, json, sarif or github).
//!
//! `--fix` applies the findings' safe fixes (`--unsafe-fixes` also the unsafe ones) through
//! `guards::fix::fix_source` and writes each changed file atomically; the report then shows what
//! remains. `--diff` prints the fixes as unified diffs and writes nothing.
//!
//! Each fixed file is written only if it still holds what was read: it is compared right before
//! its own rename (an exchange that puts back an edit saved in between), and every written file
//! once more at the end; an edited file is left as saved and reported.
//!
//! Exit status: 0 clean, 1 a finding at or above the failing level (after fixing, what remains;
//! with `--diff`, a file the fixes would change), 2 usage, config or I/O errors (also an internal
//! error on one file, or a file that is not a regular file: the others are still reported),
//! 3 `--fix` left a file alone because it was edited while check ran (and no error).

use crate::cli::explain;
use crate::cli::FailOnSeverity;
use crate::render::{self, human::HumanOptions, Format, Sources};
use anyhow::{bail, Context};
use config::{CheckSection, FailOn};
use guards::{CheckOutput, Diagnostic, FileReport, Settings};
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use rayon::prelude::*;
use std::collections::HashMap;
use std::io::IsTerminal;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

/// Extensions of the files a directory walk picks up, compared without case (a file named
/// explicitly is always checked; `[check] extend-include` adds patterns): CUDA and HIP sources
/// and headers, the usual C++ source and header extensions. Not `.c` (C has no kernels) nor
/// `.inc` (often not C++ at all).
pub const EXTENSIONS: [&str; 18] = [
    "cu", "cuh", "hip", "cpp", "cc", "cxx", "c++", "cp", "h", "hh", "hpp", "hxx", "h++", "inl",
    "ipp", "tpp", "tcc", "txx",
];

/// Stack of each analysis thread: deeply nested input must not overflow it.
const STACK_SIZE: usize = 256 << 20;
const WORKER_PREFIX: &str = "hip-unroll-check-";

#[derive(clap::Args, Debug)]
pub struct CheckArgs {
    /// Files or directories to check [default: .]
    #[arg(value_name = "PATHS")]
    pub paths: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    /// Run only these rules (comma-separated ids; replaces the config's `select`).
    #[arg(long, value_delimiter = ',', value_name = "RULES")]
    pub select: Option<Vec<String>>,
    /// Turn these rules off (comma-separated ids; replaces the config's `ignore`).
    #[arg(long, value_delimiter = ',', value_name = "RULES")]
    pub ignore: Option<Vec<String>>,
    /// Exit 1 when a finding has at least this severity [default: warning].
    #[arg(long, value_enum, value_name = "LEVEL")]
    pub fail_on: Option<FailOn>,
    /// Report unrollable loops without a pragma as `candidate` hints.
    #[arg(long, overrides_with = "no_hints")]
    pub hints: bool,
    /// Do not report `candidate` hints (the default unless the config says `hints = true`).
    #[arg(long, overrides_with = "hints")]
    pub no_hints: bool,
    /// Attach register/occupancy figures from this code object (hsaco, bundle or executable).
    #[arg(long, value_name = "FILE")]
    pub hsaco: Option<PathBuf>,
    /// Use this config file instead of finding `hip-unroll.toml` upward from each file.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Do not honour .gitignore, .ignore and git exclude files.
    #[arg(long)]
    pub no_ignore: bool,
    /// Parse every file, also those with no `__global__`/`__device__`/`__launch_bounds__` and
    /// no `warp`/`wave` beside a `32` (skipped by default and listed with `"parsed": false`),
    /// e.g. to count parse errors.
    #[arg(long)]
    pub parse_all: bool,
    /// Apply the config's `exclude` also to files named on the command line (for pre-commit).
    #[arg(long)]
    pub force_exclude: bool,
    /// Human format: findings only, no summary line.
    #[arg(long, short)]
    pub quiet: bool,
    /// Human format: counts per rule and per blocker instead of one frame per finding.
    #[arg(long)]
    pub statistics: bool,
    /// Human format: also list every loop with its verdict and blockers.
    #[arg(long)]
    pub loops: bool,
    /// Write the report to this file (atomically) instead of stdout.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output_file: Option<PathBuf>,
    /// Apply the safe fixes of the findings to the files (atomically); report what remains.
    #[arg(long)]
    pub fix: bool,
    /// Apply unsafe fixes too (implies `--fix` unless `--diff` is given).
    #[arg(long)]
    pub unsafe_fixes: bool,
    /// Print the fixes `--fix` would apply as unified diffs; write nothing. Exit 1 when a file
    /// would change.
    #[arg(long, conflicts_with = "output_file")]
    pub diff: bool,
    /// Colors in the human format: `auto` = only on a terminal and when NO_COLOR is unset.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN")]
    pub color: ColorChoice,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

/// Settings that apply to one file: its config merged under the command-line flags.
struct Resolved {
    settings: Settings,
    fail_on: FailOn,
    /// Compiled `exclude` patterns, rooted at the config file's directory.
    exclude: Option<Gitignore>,
    /// Compiled `extend-include` patterns, rooted at the config file's directory.
    include: Option<Gitignore>,
}

/// One file to analyse.
struct Job {
    path: PathBuf,
    display: String,
    resolved: Arc<Resolved>,
}

/// The analysis of one file (`guards::check_source`; tests substitute their own).
type Checker = fn(&str, &[u8], &Settings) -> (FileReport, Vec<Diagnostic>);

/// What analysing one file gave.
struct Outcome {
    report: FileReport,
    diagnostics: Vec<Diagnostic>,
    /// Kept only when the renderer needs it (code frames, SARIF regions) and there are findings.
    source: Option<Vec<u8>>,
}

pub fn run(args: CheckArgs) -> anyhow::Result<ExitCode> {
    if args.format != Format::Human && (args.statistics || args.loops) {
        bail!("--statistics and --loops only apply to --format human");
    }
    let known = explain::rule_ids();
    for ids in [&args.select, &args.ignore].into_iter().flatten() {
        validate_rules(ids, &known, "the command line")?;
    }

    let paths = if args.paths.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        args.paths.clone()
    };
    if let Some(out) = &args.output_file {
        crate::files::check_output(out)?;
    }
    let mut errors: Vec<String> = Vec::new();
    let (found, others) = collect_files(&paths, args.no_ignore, &mut errors);

    let mut resolver = Resolver::new(&args, &known)?;
    let mut jobs: Vec<Job> = Vec::with_capacity(found.len());
    let mut extra = Vec::new();
    for path in others {
        let resolved = resolver.for_file(&path)?;
        if resolver.matches(&path, &resolved, |r| r.include.as_ref()) {
            extra.push((path, false));
        }
    }
    for (path, explicit) in found.into_iter().chain(extra) {
        let resolved = resolver.for_file(&path)?;
        if (!explicit || args.force_exclude) && resolver.excluded(&path, &resolved) {
            continue;
        }
        jobs.push(Job {
            display: display_path(&path),
            path,
            resolved,
        });
    }
    jobs.sort_by(|a, b| a.display.cmp(&b.display));
    jobs.dedup_by(|a, b| a.display == b.display);
    // A directory that gives no file to check is said so (a typo'd or wrong path would
    // otherwise pass as clean); the exit status stays what the other files make it.
    for dir in paths.iter().filter(|p| p.is_dir()) {
        if !jobs.iter().any(|j| j.path.starts_with(dir)) {
            eprintln!(
                "warning: {}: no file to check (no .cu/.cuh/.hip/.cpp/.h/... file, or every one excluded)",
                dir.display()
            );
        }
    }

    let fixing = args.fix || args.unsafe_fixes || args.diff;
    let keep_source = fixing || matches!(args.format, Format::Human | Format::Sarif);
    let mut outcomes = analyse_all(&jobs, keep_source, guards::check_source)?;
    let fixes = if fixing {
        apply_fixes(&jobs, &mut outcomes, &args, &mut errors)
    } else {
        FixSummary::default()
    };
    if args.diff {
        crate::files::stdout(&fixes.diff)?;
        fixes.tell(&args);
        for e in &errors {
            eprintln!("error: {e}");
        }
        let code = if !errors.is_empty() {
            2
        } else if fixes.files > 0 {
            1
        } else {
            0
        };
        return Ok(ExitCode::from(code));
    }

    let mut output = CheckOutput {
        version: 1,
        files: Vec::with_capacity(jobs.len()),
        diagnostics: Vec::new(),
    };
    let mut sources = Sources::new();
    let mut fail_on: HashMap<String, FailOn> = HashMap::new();
    for (job, outcome) in jobs.iter().zip(outcomes) {
        match outcome {
            Ok(o) => {
                if let Some(src) = o.source {
                    sources.insert(job.display.clone(), src);
                }
                fail_on.insert(job.display.clone(), job.resolved.fail_on);
                output.files.push(o.report);
                output.diagnostics.extend(o.diagnostics);
            }
            Err(e) => errors.push(e),
        }
    }

    if let Some(hsaco) = &args.hsaco {
        // The code-object reader's errors already name the file.
        guards::hsaco::attach(&mut output, hsaco)
            .map_err(crate::files::hsaco_error)
            .context("--hsaco")?;
    }
    output.diagnostics.sort_by(|a, b| {
        (&a.path, a.line, a.column, &a.rule, &a.message)
            .cmp(&(&b.path, b.line, b.column, &b.rule, &b.message))
    });

    let text = match args.format {
        Format::Human => {
            let opts = HumanOptions {
                color: use_color(args.color, args.output_file.is_some()),
                quiet: args.quiet,
                loops: args.loops,
                statistics: args.statistics,
            };
            render::human::render(&output, &sources, &opts)
        }
        Format::Json => render::json::render(&output),
        Format::Sarif => render::sarif::render(&output, &sources, &explain::rule_infos()),
        Format::Github => render::github::render(&output),
    };
    match &args.output_file {
        Some(path) => crate::files::output(path, text.as_bytes())?,
        None => crate::files::stdout(&text)?,
    }

    if fixing {
        fixes.tell(&args);
    }
    for e in &errors {
        eprintln!("error: {e}");
    }
    for e in &fixes.edited {
        eprintln!("error: {e}");
    }
    if !errors.is_empty() {
        return Ok(ExitCode::from(2));
    }
    if !fixes.edited.is_empty() {
        return Ok(ExitCode::from(crate::files::EXIT_EDITED));
    }
    let default_fail = resolver.default_fail_on();
    let failing = output.diagnostics.iter().any(|d| {
        d.severity
            >= fail_on
                .get(&d.path)
                .copied()
                .unwrap_or(default_fail)
                .severity()
    });
    Ok(ExitCode::from(if failing { 1 } else { 0 }))
}

/// What `--fix`/`--diff` did over all files.
#[derive(Default)]
struct FixSummary {
    /// Findings fixed (or, with `--diff`, that would be).
    fixed: usize,
    /// Files changed (or that would change).
    files: usize,
    /// Remaining findings with an unsafe fix that was not applied (no `--unsafe-fixes`).
    unsafe_left: usize,
    /// `--diff`: the unified diffs, in file order.
    diff: String,
    /// `--fix`: files left alone because they were edited while check ran (one line each).
    edited: Vec<String>,
}

impl FixSummary {
    /// One line on stderr, so that stdout stays the report (or the diff).
    fn tell(&self, args: &CheckArgs) {
        let verb = if args.diff { "would fix" } else { "fixed" };
        let mut line = format!(
            "{verb} {} in {}",
            crate::render::plural(self.fixed, "finding", "findings"),
            crate::render::plural(self.files, "file", "files")
        );
        if self.unsafe_left > 0 {
            line.push_str(&format!(
                "; {} available with --unsafe-fixes",
                crate::render::plural(self.unsafe_left, "unsafe fix", "unsafe fixes")
            ));
        }
        eprintln!("{line}");
    }
}

/// Applies the fixes of every analysed file that has an applicable one: the outcome is replaced
/// by the fixed text's report and diagnostics; the file is written atomically (`--fix`) or its
/// diff collected (`--diff`). A fix that would add a parse error is left out and said so on
/// stderr; a file that cannot be written is an error (exit 2), the others are still fixed. A
/// file edited since it was read is left as saved (its report stays the one of what was read)
/// and listed in `edited`; so is a written file found changed again once all are written.
fn apply_fixes(
    jobs: &[Job],
    outcomes: &mut [Result<Outcome, String>],
    args: &CheckArgs,
    errors: &mut Vec<String>,
) -> FixSummary {
    let unsafe_ok = args.unsafe_fixes;
    let mut sum = FixSummary::default();
    // What each written file must still hold once all are written.
    let mut written: Vec<(&Job, String)> = Vec::new();
    for (job, outcome) in jobs.iter().zip(outcomes.iter_mut()) {
        let Ok(o) = outcome else { continue };
        let wanted = o
            .diagnostics
            .iter()
            .any(|d| d.fix.as_ref().is_some_and(|f| f.applies(unsafe_ok)));
        if wanted {
            if let Some(src) = &o.source {
                let fixed =
                    guards::fix::fix_source(&job.display, src, &job.resolved.settings, unsafe_ok);
                for d in &fixed.rejected {
                    eprintln!(
                        "warning: {}:{}:{}: {} fix not applied: it would add a parse error",
                        d.path, d.line, d.column, d.rule
                    );
                }
                if fixed.changed(src) {
                    if args.diff {
                        sum.diff.push_str(&crate::render::diff::unified(
                            &job.display,
                            src,
                            &fixed.source,
                        ));
                    } else {
                        match crate::files::rewrite_in_place(
                            &job.path,
                            src,
                            &fixed.source,
                            "check.fix",
                        ) {
                            Ok(()) => written.push((job, fsio::digest(&fixed.source))),
                            Err(e) if e.is_edited() => {
                                sum.edited.push(edited_line(&job.display, false));
                                continue;
                            }
                            Err(e) => {
                                errors.push(format!("{}: fixes not written: {e}", job.display));
                                continue;
                            }
                        }
                    }
                    sum.fixed += fixed.fixed;
                    sum.files += 1;
                    o.report = fixed.report;
                    o.diagnostics = fixed.diagnostics;
                    o.source = (!o.diagnostics.is_empty()).then_some(fixed.source);
                }
            }
        }
        sum.unsafe_left += o
            .diagnostics
            .iter()
            .filter(|d| d.fix.as_ref().is_some_and(|f| !f.applies(unsafe_ok)))
            .count();
    }
    // The whole set once more: an edit saved after a file was written is reported too.
    for (job, want) in written {
        let now = fsio::read_source(&job.path).map(|b| fsio::digest(&b)).ok();
        if now.as_deref() != Some(want.as_str()) {
            sum.edited.push(edited_line(&job.display, true));
        }
    }
    sum
}

/// The one line for a file `--fix` left alone (or, `after`, found changed once written).
fn edited_line(display: &str, after: bool) -> String {
    if after {
        format!(
            "{display}: edited while check --fix ran, after its fixes were written; left as saved"
        )
    } else {
        format!("{display}: edited since check read it; its fixes were not written, it is left as saved")
    }
}

fn validate_rules(ids: &[String], known: &[String], origin: &str) -> anyhow::Result<()> {
    let unknown: Vec<&str> = ids
        .iter()
        .map(|s| s.trim())
        .filter(|id| !known.iter().any(|k| k == id))
        .collect();
    if !unknown.is_empty() {
        let named: Vec<String> = unknown
            .iter()
            .map(|u| format!("{u}{}", super::explain::did_you_mean(u)))
            .collect();
        bail!(
            "unknown rule id{} in {origin}: {} (known rule ids: {})",
            if unknown.len() == 1 { "" } else { "s" },
            named.join(", "),
            known.join(", ")
        );
    }
    Ok(())
}

fn has_source_extension(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| EXTENSIONS.iter().any(|x| x.eq_ignore_ascii_case(e)))
}

/// Every file to check, with whether it was named explicitly, and the walked files without a
/// source extension (which `extend-include` may still take). Missing paths and walk errors go
/// to `errors` (exit 2 at the end; the other paths are still checked).
fn collect_files(
    paths: &[PathBuf],
    no_ignore: bool,
    errors: &mut Vec<String>,
) -> (Vec<(PathBuf, bool)>, Vec<PathBuf>) {
    let mut files = Vec::new();
    let mut dirs = Vec::new();
    for p in paths {
        match std::fs::metadata(p) {
            Ok(m) if m.is_dir() => dirs.push(p.clone()),
            Ok(_) => files.push((p.clone(), true)),
            Err(e) => errors.push(format!("{}: {}", p.display(), crate::files::io_reason(&e))),
        }
    }
    let Some((first, rest)) = dirs.split_first() else {
        return (files, Vec::new());
    };
    let mut builder = ignore::WalkBuilder::new(first);
    for d in rest {
        builder.add(d);
    }
    builder
        .hidden(true)
        .parents(!no_ignore)
        .ignore(!no_ignore)
        .git_ignore(!no_ignore)
        .git_global(!no_ignore)
        .git_exclude(!no_ignore)
        .require_git(false)
        .threads(
            std::thread::available_parallelism()
                .map_or(2, |n| n.get())
                .min(8),
        );
    let found: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
    let others: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
    let walk_errors: Mutex<Vec<String>> = Mutex::new(Vec::new());
    builder.build_parallel().run(|| {
        let found = &found;
        let others = &others;
        let walk_errors = &walk_errors;
        Box::new(move |entry| {
            match entry {
                Ok(e) => {
                    if e.file_type().is_some_and(|t| t.is_file()) {
                        let list = if has_source_extension(e.path()) {
                            found
                        } else {
                            others
                        };
                        list.lock()
                            .unwrap_or_else(|p| p.into_inner())
                            .push(e.into_path());
                    }
                }
                Err(err) => walk_errors
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push(err.to_string()),
            }
            ignore::WalkState::Continue
        })
    });
    let mut walk_errors = walk_errors.into_inner().unwrap_or_else(|p| p.into_inner());
    walk_errors.sort();
    errors.extend(walk_errors);
    files.extend(
        found
            .into_inner()
            .unwrap_or_else(|p| p.into_inner())
            .into_iter()
            .map(|p| (p, false)),
    );
    let mut others = others.into_inner().unwrap_or_else(|p| p.into_inner());
    others.sort();
    (files, others)
}

/// The path as reports show it: as given, without leading `./`.
fn display_path(p: &Path) -> String {
    let clean: PathBuf = p
        .components()
        .filter(|c| !matches!(c, std::path::Component::CurDir))
        .collect();
    if clean.as_os_str().is_empty() {
        return ".".into();
    }
    clean.to_string_lossy().into_owned()
}

/// Finds and caches the config of each directory and merges it under the command-line flags.
struct Resolver<'a> {
    args: &'a CheckArgs,
    known: &'a [String],
    /// `--config FILE`, loaded once.
    forced: Option<Arc<Resolved>>,
    /// Parent directory (as walked) -> its canonical form and its settings.
    by_dir: HashMap<PathBuf, (PathBuf, Arc<Resolved>)>,
    /// Config file (canonical; `None` = no config) -> settings.
    by_config: HashMap<Option<PathBuf>, Arc<Resolved>>,
}

impl<'a> Resolver<'a> {
    fn new(args: &'a CheckArgs, known: &'a [String]) -> anyhow::Result<Resolver<'a>> {
        let mut r = Resolver {
            args,
            known,
            forced: None,
            by_dir: HashMap::new(),
            by_config: HashMap::new(),
        };
        if let Some(path) = &args.config {
            crate::files::require_file(path).map_err(|e| anyhow::anyhow!("config file {e}"))?;
            let canon = std::fs::canonicalize(path).unwrap_or_else(|_| path.clone());
            r.forced = Some(r.load(Some(canon))?);
        }
        Ok(r)
    }

    fn default_fail_on(&self) -> FailOn {
        self.args.fail_on.unwrap_or(FailOn::Warning)
    }

    fn parent(path: &Path) -> PathBuf {
        match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        }
    }

    fn for_file(&mut self, path: &Path) -> anyhow::Result<Arc<Resolved>> {
        if let Some(f) = &self.forced {
            return Ok(f.clone());
        }
        let dir = Self::parent(path);
        if let Some((_, r)) = self.by_dir.get(&dir) {
            return Ok(r.clone());
        }
        let canon = std::fs::canonicalize(&dir).unwrap_or_else(|_| dir.clone());
        let config = config::find_config(&canon);
        let resolved = match self.by_config.get(&config) {
            Some(r) => r.clone(),
            None => {
                let r = self.load(config.clone())?;
                self.by_config.insert(config, r.clone());
                r
            }
        };
        self.by_dir.insert(dir, (canon, resolved.clone()));
        Ok(resolved)
    }

    fn load(&self, config: Option<PathBuf>) -> anyhow::Result<Arc<Resolved>> {
        let section = match &config {
            Some(p) => config::load_check_section(p)?,
            None => CheckSection::default(),
        };
        let origin = config
            .as_ref()
            .map_or(String::new(), |p| p.display().to_string());
        for ids in [&section.select, &section.ignore].into_iter().flatten() {
            validate_rules(ids, self.known, &origin)?;
        }
        let patterns =
            |list: &Option<Vec<String>>, key: &str| -> anyhow::Result<Option<Gitignore>> {
                match (&config, list) {
                    (Some(p), Some(patterns)) if !patterns.is_empty() => {
                        let root = p.parent().unwrap_or(Path::new("/"));
                        let mut b = GitignoreBuilder::new(root);
                        for pat in patterns {
                            b.add_line(None, pat).with_context(|| {
                                format!("invalid {key} pattern {pat:?} in {origin}")
                            })?;
                        }
                        Ok(Some(b.build().with_context(|| {
                            format!("invalid {key} patterns in {origin}")
                        })?))
                    }
                    _ => Ok(None),
                }
            };
        let exclude = patterns(&section.exclude, "exclude")?;
        let include = patterns(&section.extend_include, "extend-include")?;
        let mut severity = std::collections::BTreeMap::new();
        if let Some(map) = &section.severity {
            let ids: Vec<String> = map.keys().cloned().collect();
            validate_rules(&ids, self.known, &origin)?;
            for (id, level) in map {
                severity.insert(id.trim().to_string(), level.severity());
            }
        }
        let a = self.args;
        let hints = if a.hints {
            true
        } else if a.no_hints {
            false
        } else {
            section.hints.unwrap_or(false)
        };
        let trim = |v: &Vec<String>| v.iter().map(|s| s.trim().to_string()).collect::<Vec<_>>();
        Ok(Arc::new(Resolved {
            settings: Settings {
                select: a.select.as_ref().or(section.select.as_ref()).map(trim),
                ignore: a
                    .ignore
                    .as_ref()
                    .or(section.ignore.as_ref())
                    .map(trim)
                    .unwrap_or_default(),
                hints,
                parse_all: a.parse_all,
                severity,
            },
            fail_on: a.fail_on.or(section.fail_on).unwrap_or(FailOn::Warning),
            exclude,
            include,
        }))
    }

    /// True when `path` matches its config's `exclude` (the file or one of its directories).
    fn excluded(&self, path: &Path, resolved: &Resolved) -> bool {
        self.matches(path, resolved, |r| r.exclude.as_ref())
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

/// Analyse every job on a pool of large-stack threads; each file's panic is caught and becomes
/// an error for that file. Results come back in `jobs` order.
fn analyse_all(
    jobs: &[Job],
    keep_source: bool,
    checker: Checker,
) -> anyhow::Result<Vec<Result<Outcome, String>>> {
    if jobs.is_empty() {
        return Ok(Vec::new());
    }
    install_panic_hook();
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(jobs.len());
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .stack_size(STACK_SIZE)
        .thread_name(|i| format!("{WORKER_PREFIX}{i}"))
        .build()
        .context("cannot start analysis threads")?;
    Ok(pool.install(|| {
        jobs.par_iter()
            .map(|job| analyse(job, keep_source, checker))
            .collect()
    }))
}

fn analyse(job: &Job, keep_source: bool, checker: Checker) -> Result<Outcome, String> {
    let bytes = fsio::read_source(&job.path).map_err(|e| match e {
        fsio::Error::Io { .. } => format!("{}: cannot read: {}", job.display, e.reason()),
        e => format!("{}: {}", job.display, e.reason()),
    })?;
    let settings = &job.resolved.settings;
    let result =
        std::panic::catch_unwind(AssertUnwindSafe(|| checker(&job.display, &bytes, settings)));
    match result {
        Ok((report, diagnostics)) => {
            let source = (keep_source && !diagnostics.is_empty()).then_some(bytes);
            Ok(Outcome {
                report,
                diagnostics,
                source,
            })
        }
        Err(payload) => {
            let msg = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            let at = LAST_PANIC
                .with(|l| l.borrow_mut().take())
                .map_or(String::new(), |l| format!(" at {l}"));
            Err(format!("{}: internal error while analysing this file (panicked{at}: {msg}); please report it", job.display))
        }
    }
}

thread_local! {
    /// Where the last panic on this analysis thread happened (set by the panic hook).
    static LAST_PANIC: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

/// Panics on analysis threads are caught and reported per file, so the default hook's message
/// is replaced by recording the location; panics elsewhere keep the default behaviour.
fn install_panic_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if std::thread::current()
                .name()
                .is_some_and(|n| n.starts_with(WORKER_PREFIX))
            {
                let loc = info
                    .location()
                    .map(|l| format!("{}:{}:{}", l.file(), l.line(), l.column()));
                LAST_PANIC.with(|l| *l.borrow_mut() = loc);
            } else {
                default(info);
            }
        }));
    });
}

/// Colors only on a terminal, and never when `NO_COLOR` is set to a non-empty value.
fn use_color(choice: ColorChoice, to_file: bool) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            !to_file
                && std::io::stdout().is_terminal()
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_path_strips_dot_prefix() {
        assert_eq!(display_path(Path::new("./a/b.cu")), "a/b.cu");
        assert_eq!(display_path(Path::new("././b.cu")), "b.cu");
        assert_eq!(display_path(Path::new("a/./b.cu")), "a/b.cu");
        assert_eq!(display_path(Path::new(".")), ".");
        assert_eq!(display_path(Path::new("/abs/x.cu")), "/abs/x.cu");
    }

    #[test]
    fn extensions() {
        for ok in [
            "a.cu", "a.cuh", "a.hip", "a.cpp", "a.hpp", "a.h", "A.CU", "a.cc", "a.cxx", "a.c++",
            "a.hh", "a.hxx", "a.inl", "a.ipp", "a.tpp", "x.CC",
        ] {
            assert!(has_source_extension(Path::new(ok)), "{ok}");
        }
        for no in [
            "a.c", "a.C", "a.txt", "cu", "a.cu.bak", "a", "a.inc", "a.py",
        ] {
            assert!(!has_source_extension(Path::new(no)), "{no}");
        }
    }

    fn job(path: PathBuf) -> Job {
        let resolved = Arc::new(Resolved {
            settings: Settings::default(),
            fail_on: FailOn::Warning,
            exclude: None,
            include: None,
        });
        Job {
            display: display_path(&path),
            path,
            resolved,
        }
    }

    /// Panics in `boom.cu`, recurses 100,000 frames deep in `deep.cu`, reports one loop-free
    /// function elsewhere.
    fn fragile(path: &str, source: &[u8], _: &Settings) -> (FileReport, Vec<Diagnostic>) {
        fn recurse(n: u32) -> u32 {
            let pad = std::hint::black_box([n; 64]);
            if n == 0 {
                0
            } else {
                1 + recurse(n - 1) + pad[63] - n
            }
        }
        if path.ends_with("boom.cu") {
            panic!("malformed thing at byte {}", source.len());
        }
        let depth = if path.ends_with("deep.cu") {
            recurse(100_000)
        } else {
            0
        };
        let report = FileReport {
            path: path.into(),
            parse_errors: depth as usize,
            parse_error_locations: Vec::new(),
            parsed: true,
            functions: vec![],
        };
        (report, vec![])
    }

    #[test]
    fn a_panicking_file_becomes_an_error_for_that_file_only() {
        let dir = tempfile::tempdir().unwrap();
        let mut jobs = Vec::new();
        for name in ["a.cu", "boom.cu", "deep.cu", "missing.cu"] {
            if name != "missing.cu" {
                std::fs::write(dir.path().join(name), "x").unwrap();
            }
            jobs.push(job(dir.path().join(name)));
        }
        let out = analyse_all(&jobs, true, fragile).unwrap();
        assert_eq!(out.len(), 4);
        assert!(out[0].is_ok());
        let e = out[1].as_ref().err().unwrap();
        assert!(
            e.contains("boom.cu")
                && e.contains("malformed thing at byte 1")
                && e.contains("check.rs"),
            "{e}"
        );
        assert_eq!(
            out[2].as_ref().unwrap().report.parse_errors,
            100_000,
            "large stacks"
        );
        let e = out[3].as_ref().err().unwrap();
        assert!(
            e.contains("missing.cu") && e.contains("no such file"),
            "{e}"
        );
    }

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
}
