//! `spec check`: a launch spec validated without a GPU, the first problem named with its line
//! in the spec. In order: no `# FILL:` placeholder is left ([`crate::FILL`]); the spec's own
//! checks (`runner::Spec::parse`: fields, types, lengths against `min-length`); the source
//! exists and the kernel is in it (the IR of its translation unit); the arguments match the
//! kernel's parameters (count, names, scalar or buffer, element types; a buffer the kernel
//! stores through must be an output); then the compile for each target with `runner::build`
//! (the `bench --compile-only` route), which checks the arguments against the compiled
//! kernel's real parameters too. Lines come from the TOML parser's spans.

use crate::ctype::{self, Shape, Types};
use crate::template;
use crate::writes::{self, Written};
use codeobj::compile::CompileError;
use frontend::tu::Includes;
use frontend::{FunctionKind, SourceFile};
use runner::build::{BuildOptions, Built, Target};
use runner::spec::{ArgKind, Place, Spec};
use runner::RunnerError;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// What to check with.
#[derive(Debug, Clone)]
pub struct CheckOptions {
    /// The targets to build for; `None`: those the source is written for (only NVIDIA when it
    /// includes a CUDA header, else AMD `gfx90a` and NVIDIA `sm_80`, NVIDIA left out for a kernel
    /// that uses AMD-only constructs).
    pub targets: Option<Vec<Target>>,
    pub build: BuildOptions,
    /// Where `#include "..."` is looked for after the source's directory (the spec's own `-I`
    /// flags are added).
    pub include_dirs: Vec<PathBuf>,
}

/// A spec that passed.
#[derive(Debug, Clone)]
pub struct Checked {
    /// The kernel as the spec names it.
    pub kernel: String,
    pub args: usize,
    pub built: Vec<Built>,
    /// Targets left out in the automatic choice, with why.
    pub skipped: Vec<(Target, String)>,
}

/// The first problem of a spec: `dot.toml:14: argument 2 (`b`): ...`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub path: String,
    /// 1-based line in the spec, when the problem has one.
    pub line: Option<usize>,
    pub message: String,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            Some(l) => write!(f, "{}:{l}: {}", self.path, self.message),
            None => write!(f, "{}: {}", self.path, self.message),
        }
    }
}

/// Why a spec did not pass.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    /// The spec is wrong.
    #[error("{0}")]
    Problem(Problem),
    /// The spec could not be read.
    #[error("{path}: {reason}")]
    Unreadable { path: String, reason: String },
    /// The check could not be done here (no compiler and no cached object).
    #[error("{path}: {error}")]
    Cannot {
        path: String,
        error: Box<RunnerError>,
    },
}

/// Where each key of a spec is: the line of every top-level key, and of every key of every
/// `[[args]]` table (with the table's own line).
#[derive(Debug, Default)]
struct Lines {
    top: HashMap<String, usize>,
    args: Vec<(usize, Vec<(String, usize)>)>,
}

fn line_at(text: &str, pos: usize) -> usize {
    text[..pos.min(text.len())].matches('\n').count() + 1
}

/// A placeholder left: the line and the comment after `# FILL:`.
type Placeholder = (usize, String, String);

impl Lines {
    /// The lines of `text`'s keys, and the first placeholder left (`None` where the text is not
    /// TOML: `Spec::parse` says why).
    fn read(text: &str) -> (Lines, Option<Placeholder>) {
        use toml::de::{DeTable, DeValue};
        let mut lines = Lines::default();
        let Ok(doc) = DeTable::parse(text) else {
            return (lines, None);
        };
        let mut first: Option<Placeholder> = None;
        let mut placeholder = |key: &str, v: &toml::Spanned<DeValue<'_>>, scope: &str| {
            let zero_int = |v: &DeValue<'_>| matches!(v, DeValue::Integer(i) if i.as_str() == "0");
            let is_placeholder = match v.get_ref() {
                DeValue::Integer(_) => zero_int(v.get_ref()),
                DeValue::Float(f) => f.as_str().parse::<f64>() == Ok(0.0),
                DeValue::String(s) => s == "FILL",
                DeValue::Array(a) => !a.is_empty() && a.iter().all(|x| zero_int(x.get_ref())),
                _ => false,
            };
            if !is_placeholder {
                return;
            }
            let end = v.span().end.min(text.len());
            let rest = &text[end..];
            let rest = &rest[..rest.find('\n').unwrap_or(rest.len())];
            if let Some(at) = rest.find(crate::FILL) {
                let line = line_at(text, v.span().start);
                let why = rest[at + crate::FILL.len()..].trim().to_string();
                if first.as_ref().is_none_or(|(l, _, _)| line < *l) {
                    first = Some((line, format!("{scope}`{key}`"), why));
                }
            }
        };
        for (k, v) in doc.get_ref().iter() {
            let key = k.get_ref().to_string();
            lines.top.insert(key.clone(), line_at(text, k.span().start));
            if key == "args" {
                if let DeValue::Array(items) = v.get_ref() {
                    for (i, item) in items.iter().enumerate() {
                        let mut keys = Vec::new();
                        let mut header = line_at(text, item.span().start);
                        if let DeValue::Table(t) = item.get_ref() {
                            for (ak, av) in t.iter() {
                                let l = line_at(text, ak.span().start);
                                keys.push((ak.get_ref().to_string(), l));
                                placeholder(ak.get_ref(), av, &format!("argument {} ", i + 1));
                            }
                        }
                        // The `[[args]]` line: the last one before the table's first key.
                        if let Some(first_key) = keys.iter().map(|(_, l)| *l).min() {
                            let upto: Vec<&str> = text.lines().take(first_key).collect();
                            if let Some(h) = upto
                                .iter()
                                .rposition(|l| l.trim_start().starts_with("[[args]]"))
                            {
                                header = h + 1;
                            }
                        }
                        lines.args.push((header, keys));
                    }
                }
            } else {
                placeholder(&key, v, "");
            }
        }
        (lines, first)
    }

    fn key(&self, k: &str) -> Option<usize> {
        self.top.get(k).copied()
    }

    /// The line of argument `i`'s key `k`, else of its `name`, else of its table.
    fn arg(&self, i: usize, k: Option<&str>) -> Option<usize> {
        let (header, keys) = self.args.get(i)?;
        let line = |k: &str| keys.iter().find(|(n, _)| n == k).map(|(_, l)| *l);
        k.and_then(line).or_else(|| line("name")).or(Some(*header))
    }

    /// The line of argument `i`'s key that `message` names first (`length`, `min-length`,
    /// `output`, ...; `buffer`, `scalar` and `name`, which messages use as words too, only when
    /// no other is named), else as [`Lines::arg`].
    fn arg_for(&self, i: usize, message: &str) -> Option<usize> {
        let (_, keys) = self.args.get(i)?;
        let generic = |k: &str| matches!(k, "buffer" | "scalar" | "name");
        let first = |want_generic: bool| {
            keys.iter()
                .filter(|(k, _)| generic(k) == want_generic)
                .filter_map(|(k, l)| word_at(message, k).map(|at| (at, *l)))
                .min()
                .map(|(_, l)| l)
        };
        first(false)
            .or_else(|| first(true))
            .or_else(|| self.arg(i, None))
    }
}

/// Where `word` first appears in `message` as a whole word (`length` is not in `min-length`).
fn word_at(message: &str, word: &str) -> Option<usize> {
    let wordy = |c: char| c.is_alphanumeric() || c == '_' || c == '-';
    message.match_indices(word).map(|(i, _)| i).find(|&i| {
        let before = message[..i].chars().next_back();
        let after = message[i + word.len()..].chars().next();
        !before.is_some_and(wordy) && !after.is_some_and(wordy)
    })
}

/// `argument N ...` at the start of a message: N - 1.
fn arg_index(message: &str) -> Option<usize> {
    let rest = message.strip_prefix("argument ")?;
    let n: String = rest.chars().take_while(char::is_ascii_digit).collect();
    n.parse::<usize>().ok()?.checked_sub(1)
}

/// System headers that only the CUDA toolkit has: a source including one is built for NVIDIA
/// only.
fn cuda_only(system: &[String]) -> bool {
    system.iter().any(|h| {
        matches!(
            h.as_str(),
            "cuda_runtime.h"
                | "cuda_runtime_api.h"
                | "cuda.h"
                | "cuda_fp16.h"
                | "cuda_bf16.h"
                | "cuda_pipeline.h"
                | "cooperative_groups.h"
                | "mma.h"
                | "curand_kernel.h"
                | "device_launch_parameters.h"
        ) || h.starts_with("cooperative_groups/")
            || h.starts_with("cub/")
            || h.starts_with("cuda/")
    })
}

/// Check the spec at `path`.
pub fn check(path: &Path, opts: &CheckOptions) -> Result<Checked, CheckError> {
    let shown = path.display().to_string();
    let text = fsio::read_to_string(path, fsio::TEXT_CAP, "a launch spec").map_err(|e| {
        CheckError::Unreadable {
            path: shown.clone(),
            reason: e.reason(),
        }
    })?;
    let problem = |line: Option<usize>, message: String| {
        CheckError::Problem(Problem {
            path: shown.clone(),
            line,
            message,
        })
    };
    let (lines, placeholder) = Lines::read(&text);
    if let Some((line, what, why)) = placeholder {
        let why = if why.is_empty() {
            String::new()
        } else {
            format!(" ({why})")
        };
        return Err(problem(
            Some(line),
            format!("{what} is still a placeholder to fill{why}"),
        ));
    }
    let spec = Spec::parse(&text, path).map_err(|e| {
        let line = match e.place {
            Some(Place::At { line, .. }) => Some(line),
            Some(Place::Key(k)) => lines.key(k),
            Some(Place::Arg(i)) => {
                let after_label = e.message.split_once(": ").map_or("", |(_, m)| m);
                lines.arg_for(i, after_label)
            }
            None => None,
        };
        problem(line, e.message)
    })?;
    let source_line = lines.key("source");
    let kernel_line = lines.key("kernel");
    let bytes = fsio::read_source(&spec.source).map_err(|e| {
        problem(
            source_line,
            format!("source {}: {}", spec.source.display(), e.reason()),
        )
    })?;

    // The kernel in the IR of its unit.
    let dir = spec.path.parent().unwrap_or(Path::new(""));
    let mut dirs: Vec<PathBuf> = config::include_flags(&spec.flags)
        .into_iter()
        .map(|d| dir.join(d))
        .collect();
    dirs.extend(opts.include_dirs.iter().cloned());
    let includes = Includes::new(dirs, Default::default());
    let (file, unit) = includes.open(&spec.source, &bytes);
    let mut files: Vec<(&SourceFile, &[u8])> = vec![(&file, &bytes)];
    files.extend(unit.headers.iter().map(|h| (h.file(), h.bytes())));
    let kernels: Vec<(&frontend::Function, &[u8])> = files
        .iter()
        .flat_map(|(f, b)| {
            f.functions
                .iter()
                .filter(|k| k.kind == FunctionKind::Kernel)
                .map(move |k| (k, *b))
        })
        .collect();
    let named: Vec<&(&frontend::Function, &[u8])> = kernels
        .iter()
        .filter(|(k, _)| kernelname::is_function(&spec.kernel, &k.qualified_name))
        .collect();
    let Some(&&(kernel, ksrc)) = named
        .iter()
        .find(|(k, _)| k.params.len() == spec.args.len())
        .or(named.first())
    else {
        let names: Vec<&str> = file
            .functions
            .iter()
            .filter(|k| k.kind == FunctionKind::Kernel)
            .map(|k| k.qualified_name.as_str())
            .collect();
        return Err(problem(
            kernel_line,
            format!(
                "no kernel `{}` in {} (kernels: {})",
                spec.kernel,
                spec.source.display(),
                if names.is_empty() {
                    "none".into()
                } else {
                    names.join(", ")
                }
            ),
        ));
    };
    check_signature(&spec, kernel, ksrc, &file, &bytes, &unit, &lines)
        .map_err(|(line, m)| problem(line, m))?;

    // The compile, for each target.
    let (targets, skipped) = match &opts.targets {
        Some(t) => (t.clone(), Vec::new()),
        None => auto_targets(&spec, &file, &unit),
    };
    let mut built = Vec::new();
    for t in &targets {
        match runner::build::build(&spec, &spec.source, t, &opts.build) {
            Ok(b) => built.push(b),
            Err(e) => {
                return Err(match e {
                    RunnerError::Compile(CompileError::CompilerMissing { .. }) => {
                        CheckError::Cannot {
                            path: shown,
                            error: Box::new(e),
                        }
                    }
                    RunnerError::Invalid { message, .. } => {
                        let line = match arg_index(&message) {
                            Some(i) => lines.arg_for(i, &message),
                            None if message.starts_with("block") => lines.key("block"),
                            None => kernel_line,
                        };
                        problem(
                            line,
                            format!("{} ({}): {message}", t.arch(), compiler(t, &opts.build)),
                        )
                    }
                    RunnerError::Refused { .. } => problem(kernel_line, e.to_string()),
                    other => problem(
                        source_line,
                        format!("{} ({}): {other}", t.arch(), compiler(t, &opts.build)),
                    ),
                })
            }
        }
    }
    Ok(Checked {
        kernel: spec.kernel.clone(),
        args: spec.args.len(),
        built,
        skipped,
    })
}

fn compiler(t: &Target, opts: &BuildOptions) -> String {
    match t {
        Target::Hip(_) => opts
            .hip_command
            .split_whitespace()
            .next()
            .unwrap_or("hipcc")
            .to_string(),
        Target::Cuda(_) => opts.cuda_compiler().to_string(),
    }
}

/// The targets the source is written for (see [`CheckOptions::targets`]).
fn auto_targets(
    spec: &Spec,
    file: &SourceFile,
    unit: &frontend::tu::TranslationUnit,
) -> (Vec<Target>, Vec<(Target, String)>) {
    let amd = Target::Hip(codeobj::compile::DEFAULT_ARCH.to_string());
    let nvidia = Target::Cuda(runner::build::DEFAULT_CUDA_ARCH.to_string());
    if cuda_only(&unit.system) {
        return (
            vec![nvidia],
            vec![(amd, "the source includes CUDA's headers".into())],
        );
    }
    let refusals = runner::prelude::refusals(file, &spec.kernel);
    if let Some(r) = refusals.first() {
        return (
            vec![amd],
            vec![(nvidia, format!("the kernel cannot run on NVIDIA: {r}"))],
        );
    }
    (vec![amd, nvidia], Vec::new())
}

/// The spec's arguments against the kernel's parameters in the IR: `(line, message)` of the
/// first mismatch.
#[allow(clippy::too_many_arguments)]
fn check_signature(
    spec: &Spec,
    kernel: &frontend::Function,
    ksrc: &[u8],
    file: &SourceFile,
    bytes: &[u8],
    unit: &frontend::tu::TranslationUnit,
    lines: &Lines,
) -> Result<(), (Option<usize>, String)> {
    let kernel_line = lines.key("kernel");
    let Some(sig) = kernel.signature.as_deref() else {
        return Ok(()); // parameters unknown in the IR: the compile checks them
    };
    let types_of = ctype::split_signature(sig);
    let params: Vec<String> = kernel.params.iter().map(|p| p.name.clone()).collect();
    let shown = |v: &[String]| {
        if v.iter().all(|n| !n.is_empty()) {
            format!(" ({})", v.join(", "))
        } else {
            String::new()
        }
    };
    if spec.args.len() != types_of.len() {
        let line = if spec.args.len() > types_of.len() {
            lines.arg(types_of.len(), None)
        } else {
            kernel_line
        };
        return Err((
            line,
            format!(
                "the spec has {} argument(s), kernel `{}` takes {}{}",
                spec.args.len(),
                kernel.qualified_name,
                types_of.len(),
                shown(&params)
            ),
        ));
    }
    // Template type arguments, when the spec names an instantiation.
    let mut binding = HashMap::new();
    if kernel.is_template {
        let tparams = template::params(ksrc, kernel.span.start, kernel.body.start);
        if let Some(args) = template::name_args(&spec.kernel) {
            if let Ok(b) = template::bind(&tparams, &args) {
                binding = tparams
                    .iter()
                    .filter(|p| p.is_type)
                    .filter_map(|p| b.get(&p.name).map(|v| (p.name.clone(), v.clone())))
                    .collect();
            }
        }
    }
    let mut types = Types::default();
    types.scan(bytes);
    for h in &unit.headers {
        types.scan(h.bytes());
    }
    let (fns, macros) = writes::unit_functions((file, bytes), &unit.headers);
    let all = writes::analyse(&fns, &macros);
    let written = fns
        .iter()
        .position(|u| std::ptr::eq(u.f, kernel))
        .map(|i| all[i].clone())
        .unwrap_or_default();
    for (i, (a, ty)) in spec.args.iter().zip(&types_of).enumerate() {
        let label = a.label(i);
        let pname = &params[i];
        if let Some(n) = &a.name {
            if !pname.is_empty() && n != pname {
                return Err((
                    lines.arg(i, Some("name")),
                    format!(
                        "{label}: the kernel's parameter {} is `{pname}` (arguments are given in the kernel's order)",
                        i + 1
                    ),
                ));
            }
        }
        let shape = ctype::shape(ty, &binding, &types);
        match (&a.kind, &shape) {
            (_, Shape::Unsupported(reason)) => {
                return Err((
                    lines.arg(i, None),
                    format!("{label}: parameter {} `{ty}`: {reason}", i + 1),
                ))
            }
            (ArgKind::Scalar { .. }, Shape::Buffer { .. } | Shape::UnknownBuffer { .. }) => {
                return Err((
                    lines.arg(i, Some("scalar")),
                    format!(
                        "{label}: a scalar, but parameter {} is `{ty}`, a pointer (use `buffer = ...`)",
                        i + 1
                    ),
                ))
            }
            (ArgKind::Buffer(_), Shape::Scalar { .. } | Shape::UnknownScalar) => {
                return Err((
                    lines.arg(i, Some("buffer")),
                    format!(
                        "{label}: a buffer, but parameter {} is `{ty}`, passed by value (use `scalar = ...`)",
                        i + 1
                    ),
                ))
            }
            (ArgKind::Scalar { elem, .. }, Shape::Scalar { elem: want }) if elem != want => {
                return Err((
                    lines.arg(i, Some("scalar")),
                    format!(
                        "{label}: scalar {elem}, but parameter {} is `{ty}` ({want})",
                        i + 1
                    ),
                ))
            }
            (ArgKind::Buffer(b), Shape::Buffer { elem: want, .. }) => {
                if b.elem != *want {
                    return Err((
                        lines.arg(i, Some("buffer")),
                        format!(
                            "{label}: buffer of {}, but parameter {} is `{ty}` ({want})",
                            b.elem,
                            i + 1
                        ),
                    ));
                }
                if let (None, Some(Some(Written::Yes(e)))) = (&b.output, written.get(i)) {
                    return Err((
                        lines.arg(i, None),
                        format!(
                            "{label}: the kernel writes through it ({e}), but it is not an output: add `output = ...` (a tolerance)"
                        ),
                    ));
                }
            }
            _ => {}
        }
    }
    Ok(())
}
