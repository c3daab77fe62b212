//! `hip-unroll check`: arguments and printing only. The `workspace` crate walks the files and
//! directories, resolves each file's config, analyses every HIP source in parallel and applies
//! fixes; this module renders its one report (human, json, sarif or github).
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

use anyhow::{bail, Context};
use config::FailOn;
use render::human::HumanOptions;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use workspace::{FixMode, FixSummary, Status};

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
    /// Look for `#include "..."` in DIR too (repeatable; after the including file's own
    /// directory, before `[check] include-dirs` and the `-I` of `[compile]`/`[tune]`).
    #[arg(short = 'I', value_name = "DIR")]
    pub include: Vec<PathBuf>,
    /// Define a macro for the guards' view, `NAME` or `NAME=VALUE` (repeatable; after the `-D`
    /// of `[compile] command` and `[tune] compile-flags`).
    #[arg(short = 'D', value_name = "NAME[=VALUE]")]
    pub define: Vec<String>,
    /// Undefine a macro for the guards' view (repeatable; also one of `-D`, and a predefined
    /// platform macro such as `__HIP_PLATFORM_AMD__`).
    #[arg(short = 'U', value_name = "NAME")]
    pub undefine: Vec<String>,
    /// Use this config file instead of finding `hip-unroll.toml` upward from each file.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Do not honour .gitignore, .ignore and git exclude files.
    #[arg(long)]
    pub no_ignore: bool,
    /// Parse every file, also those with no `__global__`/`__device__`/`__launch_bounds__`, no
    /// GPU specifier macro (`CUTLASS_DEVICE`, or one another file of the run defines) and no
    /// `warp`/`wave` beside a `32` (skipped by default and listed with `"parsed": false`), e.g.
    /// to count parse errors.
    #[arg(long)]
    pub parse_all: bool,
    /// Analyse files on N threads [default: one per core]; the report is the same at any count.
    #[arg(long, value_name = "N")]
    pub threads: Option<std::num::NonZeroUsize>,
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

/// `--format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Code frames and a summary line, for people.
    Human,
    /// Machine-readable report, schema version 1 (loops, verdicts, blockers, diagnostics).
    Json,
    /// SARIF 2.1.0, for code-scanning services.
    Sarif,
    /// GitHub Actions workflow commands (`::warning file=...::message`).
    Github,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

pub fn run(args: CheckArgs) -> anyhow::Result<ExitCode> {
    if args.format != Format::Human && (args.statistics || args.loops) {
        bail!("--statistics and --loops only apply to --format human");
    }
    let known = workspace::rule_ids();
    for ids in [&args.select, &args.ignore].into_iter().flatten() {
        workspace::validate_rules(ids, &known, "the command line")?;
    }
    if let Some(out) = &args.output_file {
        crate::files::check_output(out)?;
    }
    let fixing = args.fix || args.unsafe_fixes || args.diff;
    let opts = workspace::Options {
        paths: args.paths.clone(),
        select: args.select.clone(),
        ignore: args.ignore.clone(),
        fail_on: args.fail_on,
        hints: if args.hints {
            Some(true)
        } else if args.no_hints {
            Some(false)
        } else {
            None
        },
        parse_all: args.parse_all,
        config: args.config.clone(),
        no_ignore: args.no_ignore,
        force_exclude: args.force_exclude,
        hsaco: args.hsaco.clone(),
        fix: fixing.then_some(FixMode {
            write: !args.diff,
            unsafe_fixes: args.unsafe_fixes,
        }),
        keep_sources: matches!(args.format, Format::Human | Format::Sarif),
        include: args.include.clone(),
        threads: args.threads,
        defines: defines(&args.define, &args.undefine)?,
    };
    let checked = match workspace::check(&opts) {
        Ok(c) => c,
        Err(workspace::Error::Hsaco(e)) => {
            // The code-object reader's errors already name the file.
            return Err(crate::files::hsaco_error(e)).context("--hsaco");
        }
        Err(e) => return Err(e.into()),
    };
    for w in &checked.warnings {
        eprintln!("warning: {w}");
    }
    let status = checked.status();
    if args.diff {
        let fixes = checked.fixes.as_ref().expect("fixes were asked for");
        let diff: String = fixes
            .changes
            .iter()
            .map(|c| render::diff::unified(&c.display, &c.before, &c.after))
            .collect();
        crate::files::stdout(&diff)?;
        tell(fixes, &args);
        for e in &checked.errors {
            eprintln!("error: {e}");
        }
        return Ok(exit_code(status));
    }

    let output = &checked.output;
    let sources = &checked.sources;
    let text = match args.format {
        Format::Human => {
            let opts = HumanOptions {
                color: use_color(args.color, args.output_file.is_some()),
                quiet: args.quiet,
                loops: args.loops,
                statistics: args.statistics,
                fix_hints: Some(render::human::FixHints {
                    safe: "--fix",
                    unsafe_fixes: "--unsafe-fixes",
                }),
            };
            render::human::render(output, sources, &opts)
        }
        Format::Json => render::json::render(output),
        Format::Sarif => render::sarif::render(output, sources, &render::rules()),
        Format::Github => render::github::render(output),
    };
    let text = if args.statistics {
        // What the translation units cost: each header content is parsed once per run.
        format!(
            "{text}headers: {} parsed for {} includes followed\n",
            checked.header_parses, checked.header_lookups
        )
    } else {
        text
    };
    match &args.output_file {
        Some(path) => crate::files::output(path, text.as_bytes())?,
        None => crate::files::stdout(&text)?,
    }

    if let Some(fixes) = &checked.fixes {
        tell(fixes, &args);
    }
    for e in &checked.errors {
        eprintln!("error: {e}");
    }
    for e in checked.fixes.iter().flat_map(|f| &f.edited) {
        eprintln!("error: {}", edited_line(e));
    }
    Ok(exit_code(status))
}

/// The `-D` and `-U` of `check`, `unroll` and `tune`: the definitions in order, then the
/// undefinitions (clap keeps each flag's order, not their interleaving, so a name given to
/// both is undefined).
pub fn defines(define: &[String], undefine: &[String]) -> anyhow::Result<frontend::tu::Defines> {
    let mut out = frontend::tu::Defines::default();
    for d in define {
        out.define(d).context("-D")?;
    }
    for u in undefine {
        out.undefine(u).context("-U")?;
    }
    Ok(out)
}

fn exit_code(status: Status) -> ExitCode {
    ExitCode::from(match status {
        Status::Clean => 0,
        Status::Findings => 1,
        Status::Errors => 2,
        Status::Edited => crate::files::EXIT_EDITED,
    })
}

/// What `--fix`/`--diff` did, in one line on stderr, so that stdout stays the report (or the
/// diff).
fn tell(fixes: &FixSummary, args: &CheckArgs) {
    let verb = if args.diff { "would fix" } else { "fixed" };
    let mut line = format!(
        "{verb} {} in {}",
        render::plural(fixes.fixed, "finding", "findings"),
        render::plural(fixes.files, "file", "files")
    );
    if fixes.unsafe_left > 0 {
        line.push_str(&format!(
            "; {} available with --unsafe-fixes",
            render::plural(fixes.unsafe_left, "unsafe fix", "unsafe fixes")
        ));
    }
    eprintln!("{line}");
}

/// The one line for a file `--fix` left alone (or found changed once written).
fn edited_line(e: &workspace::Edited) -> String {
    let display = &e.display;
    if e.after {
        format!(
            "{display}: edited while check --fix ran, after its fixes were written; left as saved"
        )
    } else {
        format!("{display}: edited since check read it; its fixes were not written, it is left as saved")
    }
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
