//! `spec new`: a launch spec drafted from a kernel's signature and body, as TOML text with
//! comments. What it cannot know is a placeholder marked `# FILL:` (the grid, buffer lengths,
//! scalar values, a type it cannot map: `0`, `0.0`, `[0]` or `"FILL"`, which `spec check`
//! refuses until replaced); what it reads from the source is marked `# GUESS:` with what to
//! check (outputs and their evidence, `min-length`, the block from `__launch_bounds__`, inits,
//! an instantiation picked from the file's only explicit one, a vector type carried as
//! elements).
//!
//! Defaults: a buffer the kernel writes through is an output compared `"exact"` when its
//! elements are integers, `{ rtol = 1e-5, atol = 1e-6 }` for f32 and `{ rtol = 1e-12, atol =
//! 1e-14 }` for f64 (an unrolled loop may contract or reassociate floating-point operations
//! differently; about 80 ulps of f32, well under what a wrong result moves); float buffers
//! start `uniform` in [-1, 1) with a seed per argument, integer buffers as zeros (they are
//! often indices or counts: zeros keep every index in bounds).

use crate::bounds::{self, Bound, Names};
use crate::ctype::{self, Shape, Types};
use crate::template;
use crate::writes::{self, Written};
use frontend::tu::Includes;
use frontend::{Function, FunctionKind, SharedKind, SourceFile};
use runner::elem::Elem;
use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// What to draft.
#[derive(Debug, Clone)]
pub struct NewRequest {
    /// The kernel's source file.
    pub source: PathBuf,
    /// How the spec names it (`source = "..."`: relative to the spec's directory).
    pub source_in_spec: String,
    /// The kernel as the user names it: `dot`, `ns::k`, `stencil<4>`.
    pub kernel: String,
    /// Where `#include "..."` is looked for after the source's directory.
    pub include_dirs: Vec<PathBuf>,
}

/// Why no spec was drafted.
#[derive(Debug, thiserror::Error)]
pub enum NewError {
    #[error("{0}")]
    Read(#[from] fsio::Error),
    #[error("{file}: no kernel `{kernel}` (kernels: {})", list(.kernels))]
    NoKernel {
        file: String,
        kernel: String,
        kernels: Vec<String>,
    },
    #[error("{file}: `{kernel}` names several kernels: {}; name one by its qualified name", .candidates.join(", "))]
    Ambiguous {
        file: String,
        kernel: String,
        candidates: Vec<String>,
    },
    /// A template kernel named without its arguments, and the file does not instantiate it
    /// exactly once.
    #[error("kernel `{kernel}` is a template <{params}>: name an instantiation{}", instances_hint(.instances))]
    NeedsInstantiation {
        kernel: String,
        params: String,
        instances: Vec<String>,
    },
    #[error("kernel `{kernel}`: {reason}")]
    BadInstantiation { kernel: String, reason: String },
    /// The kernel's parameters were not read (a syntax error around its signature).
    #[error("{file}:{line}: the parameters of kernel `{kernel}` could not be read (a syntax error around its signature)")]
    Unreadable {
        file: String,
        line: u32,
        kernel: String,
    },
    /// A parameter no spec can describe: the spec is refused.
    #[error("{file}:{line}: no spec can launch kernel `{kernel}`: parameter {} (`{name}`): {reason}", .index + 1)]
    Unsupported {
        file: String,
        line: u32,
        kernel: String,
        index: usize,
        name: String,
        reason: String,
    },
}

fn list(v: &[String]) -> String {
    if v.is_empty() {
        "none".into()
    } else {
        v.join(", ")
    }
}

fn instances_hint(v: &[String]) -> String {
    if v.is_empty() {
        " (the file neither instantiates nor launches one)".into()
    } else {
        format!(" (the file instantiates or launches {})", v.join(", "))
    }
}

/// A drafted spec: its parts (for tests and callers) and its text.
#[derive(Debug, Clone)]
pub struct Draft {
    /// The kernel as the spec names it (`ns::k`, `stencil<4>`).
    pub kernel: String,
    pub args: Vec<DraftArg>,
    /// The spec's text.
    pub text: String,
    /// The placeholders to fill (`grid`, `length of a`, ...).
    pub fills: Vec<String>,
    /// How many values are guesses to check.
    pub guesses: usize,
}

/// One drafted argument.
#[derive(Debug, Clone)]
pub struct DraftArg {
    pub name: String,
    /// The parameter's type as the signature writes it (`const float*`).
    pub cxx: String,
    pub kind: DraftKind,
}

#[derive(Debug, Clone)]
pub enum DraftKind {
    /// `elem` is `None` for a type hip-unroll does not know (a placeholder).
    Scalar { elem: Option<Elem> },
    Buffer {
        elem: Option<Elem>,
        lanes: u32,
        constant: bool,
        /// Why it is an output (`None`: an input).
        output: Option<Written>,
        /// Its `min-length`, or why there is none.
        bound: Result<Bound, String>,
    },
}

/// The kernel function `name` (without template arguments) among the kernels of `files`.
fn find_kernel<'a>(
    file_label: &str,
    files: &[&'a SourceFile],
    wanted: &str,
    name: &str,
) -> Result<&'a Function, NewError> {
    let mut found: Vec<&Function> = Vec::new();
    for f in files {
        for func in &f.functions {
            if func.kind == FunctionKind::Kernel
                && kernelname::is_function(name, &func.qualified_name)
            {
                found.push(func);
            }
        }
    }
    match found.as_slice() {
        [] => Err(NewError::NoKernel {
            file: file_label.to_string(),
            kernel: wanted.to_string(),
            kernels: files
                .first()
                .map(|f| {
                    f.functions
                        .iter()
                        .filter(|k| k.kind == FunctionKind::Kernel)
                        .map(|k| k.qualified_name.clone())
                        .collect()
                })
                .unwrap_or_default(),
        }),
        [one] => Ok(one),
        many => Err(NewError::Ambiguous {
            file: file_label.to_string(),
            kernel: wanted.to_string(),
            candidates: many
                .iter()
                .map(|f| {
                    format!(
                        "{}{}",
                        f.qualified_name,
                        f.signature.as_deref().unwrap_or("(...)")
                    )
                })
                .collect(),
        }),
    }
}

/// The integer value of a macro body (`256`, `(256)`, `1 << 8` is not read).
fn macro_int(body: &str) -> Option<i128> {
    let b = body.trim();
    let b = b
        .strip_prefix('(')
        .and_then(|x| x.strip_suffix(')'))
        .unwrap_or(b)
        .trim();
    frontend::lex::parse_int_literal(b)
}

/// Draft the spec of `req.kernel` in `req.source`.
pub fn new_spec(req: &NewRequest) -> Result<Draft, NewError> {
    let bytes = fsio::read_source(&req.source)?;
    let includes = Includes::new(req.include_dirs.clone(), Default::default());
    let (file, unit) = includes.open(&req.source, &bytes);
    let label = req.source.display().to_string();
    let args_given = template::name_args(&req.kernel);
    let base_name = match &args_given {
        Some(_) => {
            let k = req.kernel.trim();
            k[..k.find('<').unwrap_or(k.len())].trim().to_string()
        }
        None => req.kernel.trim().to_string(),
    };
    let mut files: Vec<&SourceFile> = vec![&file];
    files.extend(unit.headers.iter().map(|h| h.file()));
    let f = find_kernel(&label, &files, &req.kernel, &base_name)?;
    // The bytes the kernel was parsed from (the main file or a header).
    let src: &[u8] = if file.functions.iter().any(|g| std::ptr::eq(g, f)) {
        &bytes
    } else {
        unit.headers
            .iter()
            .find(|h| h.file().functions.iter().any(|g| std::ptr::eq(g, f)))
            .map(|h| h.bytes())
            .unwrap_or(&bytes)
    };
    let Some(signature) = f.signature.as_deref() else {
        return Err(NewError::Unreadable {
            file: label,
            line: f.span.line,
            kernel: f.qualified_name.clone(),
        });
    };
    let types_of = ctype::split_signature(signature);
    if types_of.len() != f.params.len() {
        return Err(NewError::Unreadable {
            file: label,
            line: f.span.line,
            kernel: f.qualified_name.clone(),
        });
    }

    // Template kernels: the instantiation.
    let mut notes: Vec<String> = Vec::new();
    let mut binding: HashMap<String, String> = HashMap::new();
    let kernel_name;
    let tparams = if f.is_template {
        template::params(src, f.span.start, f.body.start)
    } else {
        Vec::new()
    };
    if f.is_template && !tparams.is_empty() {
        let args = match &args_given {
            Some(a) => a.clone(),
            None => {
                let instances = template::explicit_instances(src, &f.name);
                match instances.as_slice() {
                    [one] => {
                        notes.push(format!(
                            "the file's only explicit instantiation, {}<{one}>; name another one with the kernel's template arguments",
                            f.name
                        ));
                        template::name_args(&format!("k<{one}>")).unwrap_or_default()
                    }
                    _ => {
                        return Err(NewError::NeedsInstantiation {
                            kernel: f.qualified_name.clone(),
                            params: tparams
                                .iter()
                                .map(|p| p.name.as_str())
                                .collect::<Vec<_>>()
                                .join(", "),
                            instances: instances
                                .iter()
                                .chain(
                                    template::launched_instances(src, &f.name)
                                        .iter()
                                        .filter(|l| !instances.contains(l)),
                                )
                                .map(|i| format!("{}<{i}>", f.name))
                                .collect(),
                        })
                    }
                }
            }
        };
        binding = template::bind(&tparams, &args).map_err(|reason| NewError::BadInstantiation {
            kernel: f.qualified_name.clone(),
            reason,
        })?;
        kernel_name = format!("{}<{}>", f.qualified_name, args.join(", "));
    } else {
        if args_given.is_some() {
            return Err(NewError::BadInstantiation {
                kernel: f.qualified_name.clone(),
                reason: "it is not a template, so it takes no template arguments".into(),
            });
        }
        kernel_name = f.qualified_name.clone();
    }

    // Types, aliases and constants of the unit.
    let mut types = Types::default();
    types.scan(&bytes);
    for h in &unit.headers {
        types.scan(h.bytes());
    }
    let mut constants: HashMap<String, i128> = HashMap::new();
    for m in file
        .macros
        .iter()
        .chain(unit.headers.iter().flat_map(|h| h.file().macros.iter()))
    {
        if m.params.is_none() {
            if let Some(v) = macro_int(&m.body) {
                constants.insert(m.name.clone(), v);
            }
        }
    }
    for p in &tparams {
        if let Some(v) = binding.get(&p.name).and_then(|v| macro_int(v)) {
            constants.insert(p.name.clone(), v);
        }
    }
    // Only the template's type parameters are substituted into types.
    let type_binding: HashMap<String, String> = tparams
        .iter()
        .filter(|p| p.is_type)
        .filter_map(|p| binding.get(&p.name).map(|v| (p.name.clone(), v.clone())))
        .collect();

    // Outputs: the unit's writes.
    let (fns, macros) = writes::unit_functions((&file, &bytes), &unit.headers);
    let all = writes::analyse(&fns, &macros);
    let at = fns
        .iter()
        .position(|u| std::ptr::eq(u.f, f))
        .expect("the kernel is a function of its unit");
    let written = &all[at];

    let shapes: Vec<Shape> = types_of
        .iter()
        .map(|t| ctype::shape(t, &type_binding, &types))
        .collect();
    for (i, s) in shapes.iter().enumerate() {
        if let Shape::Unsupported(reason) = s {
            return Err(NewError::Unsupported {
                file: label,
                line: f.params[i].span.line,
                kernel: kernel_name,
                index: i,
                name: f.params[i].name.clone(),
                reason: reason.clone(),
            });
        }
    }
    let scalars: HashSet<String> = shapes
        .iter()
        .zip(&f.params)
        .filter(|(s, _)| matches!(s, Shape::Scalar { elem } if !elem.is_float()))
        .map(|(_, p)| p.name.clone())
        .collect();
    let names = Names {
        scalars: &scalars,
        constants: &constants,
    };
    let args: Vec<DraftArg> = shapes
        .into_iter()
        .enumerate()
        .map(|(i, s)| {
            let p = &f.params[i];
            let kind = match s {
                Shape::Scalar { elem } => DraftKind::Scalar { elem: Some(elem) },
                Shape::UnknownScalar => DraftKind::Scalar { elem: None },
                Shape::Buffer {
                    elem,
                    lanes,
                    constant,
                } => DraftKind::Buffer {
                    elem: Some(elem),
                    lanes,
                    constant,
                    output: written[i].clone(),
                    bound: bounds::min_length(f, src, &p.name, lanes, &names),
                },
                Shape::UnknownBuffer { constant } => DraftKind::Buffer {
                    elem: None,
                    lanes: 1,
                    constant,
                    output: written[i].clone(),
                    bound: Err("the element type is unknown".into()),
                },
                Shape::Unsupported(_) => unreachable!("refused above"),
            };
            DraftArg {
                name: p.name.clone(),
                cxx: types_of[i].clone(),
                kind,
            }
        })
        .collect();

    // The block from `__launch_bounds__(N, ...)`.
    let block = f.launch_bounds.as_ref().and_then(|lb| {
        let first = lb.first()?.trim().to_string();
        let v =
            frontend::lex::parse_int_literal(&first).or_else(|| constants.get(&first).copied())?;
        (1..=1024).contains(&v).then_some((first, v))
    });
    // Dynamic shared memory the kernel declares or names.
    let dynamic_shared = f
        .shared
        .iter()
        .filter(|s| s.kind != SharedKind::Static)
        .map(|s| s.name.clone())
        .chain(
            file.shared
                .iter()
                .filter(|s| s.kind != SharedKind::Static)
                .filter(|s| f.idents.iter().any(|i| i.name == s.name))
                .map(|s| s.name.clone()),
        )
        .next();

    let mut w = Writer::default();
    let file_name = Path::new(&req.source_in_spec)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| req.source_in_spec.clone());
    let _ = writeln!(
        w.text,
        "# Launch spec of kernel `{kernel_name}` in {file_name}, drafted by `hip-unroll spec new` from its\n\
         # signature and body. `# FILL:` marks a value to give: `hip-unroll spec check` refuses the spec\n\
         # while one is left. `# GUESS:` marks a value read from the source: check it. Lengths count\n\
         # elements; `min-length` is what the launch reads and writes, checked against `length`."
    );
    w.plain("version = 1");
    w.plain(&format!("source = {}", quote(&req.source_in_spec)));
    match notes.first() {
        Some(n) => w.guess(&format!("kernel = {}", quote(&kernel_name)), n),
        None => w.plain(&format!("kernel = {}", quote(&kernel_name))),
    }
    w.fill(
        "grid",
        "grid = [0]",
        "blocks in the grid (1 to 3 numbers, x first)",
    );
    match &block {
        Some((written, v)) if written.parse::<i128>().is_ok() => w.guess(
            &format!("block = [{v}]"),
            &format!("__launch_bounds__({v}) is the largest block the kernel accepts; its indexing may need exactly this size"),
        ),
        Some((written, v)) => w.guess(
            &format!("block = [{v}]"),
            &format!("__launch_bounds__({written}) = {v} is the largest block the kernel accepts; its indexing may need exactly this size"),
        ),
        None => w.fill(
            "block",
            "block = [0]",
            "threads per block (1 to 3 numbers, x first)",
        ),
    }
    if let Some(name) = &dynamic_shared {
        w.fill(
            "shared-bytes",
            "shared-bytes = 0",
            &format!("bytes of dynamic shared memory per block (the kernel uses `{name}`)"),
        );
    }
    // The compiler needs the include directories the unit's headers were found in; `flags`
    // pass unchanged, so the paths are as the user gave them (from the working directory).
    let used: Vec<&PathBuf> = req
        .include_dirs
        .iter()
        .filter(|d| {
            let d = frontend::tu::normalize(d);
            unit.headers.iter().any(|h| h.path.starts_with(&d))
        })
        .collect();
    if !used.is_empty() {
        let flags: Vec<String> = used
            .iter()
            .map(|d| quote(&format!("-I{}", d.display())))
            .collect();
        w.guess(
            &format!("flags = [{}]", flags.join(", ")),
            "headers were found there; the compiler runs where `bench` and `tune` run: give the directories from there",
        );
    }
    for m in &unit.missing {
        if m.reason == frontend::tu::MissingReason::NotFound {
            let _ = writeln!(
                w.text,
                "# not found: `#include \"{}\"` ({}:{}): what it defines is unseen (the outputs \
                 may be incomplete); `spec new -I DIR` finds it",
                m.spelled,
                m.from.display(),
                m.line
            );
        }
    }
    for (i, a) in args.iter().enumerate() {
        w.text.push('\n');
        w.plain("[[args]]");
        w.plain(&format!("name = {}", quote(&a.name)));
        match &a.kind {
            DraftKind::Scalar { elem } => {
                match elem {
                    Some(e) => w.plain(&format!("scalar = \"{e}\"")),
                    None => w.fill(
                        &format!("scalar type of {}", a.name),
                        "scalar = \"FILL\"",
                        &format!("`{}` is a type hip-unroll does not know: its spec type (i8 to u64, f32, f64)", a.cxx),
                    ),
                }
                let zero = if elem.is_some_and(Elem::is_float) {
                    "0.0"
                } else {
                    "0"
                };
                let used: Vec<&str> = args
                    .iter()
                    .filter_map(|b| match &b.kind {
                        DraftKind::Buffer { bound: Ok(bd), .. }
                            if bd
                                .expr
                                .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                                .any(|t| t == a.name) =>
                        {
                            Some(b.name.as_str())
                        }
                        _ => None,
                    })
                    .collect();
                let why = if used.is_empty() {
                    format!("`{} {}`", a.cxx, a.name)
                } else {
                    format!(
                        "`{} {}` (the min-length of {} uses it)",
                        a.cxx,
                        a.name,
                        used.join(", ")
                    )
                };
                w.fill(
                    &format!("value of {}", a.name),
                    &format!("value = {zero}"),
                    &why,
                );
            }
            DraftKind::Buffer {
                elem,
                lanes,
                constant,
                output,
                bound,
            } => {
                match (elem, *lanes) {
                    (Some(e), 1) => w.plain(&format!("buffer = \"{e}\"")),
                    (Some(e), n) => w.guess(
                        &format!("buffer = \"{e}\""),
                        &format!("`{}` points to {n} x {e} per element: the buffer is {e}, and length and min-length count {e}s", a.cxx),
                    ),
                    (None, _) => w.fill(
                        &format!("element type of {}", a.name),
                        "buffer = \"FILL\"",
                        &format!("`{}` points to a type hip-unroll does not know: its element type (i8 to u64, f32, f64)", a.cxx),
                    ),
                }
                w.fill(
                    &format!("length of {}", a.name),
                    "length = 0",
                    &match bound {
                        Ok(_) => "elements, at least min-length".to_string(),
                        Err(_) => "elements: as many as the launch reads or writes".to_string(),
                    },
                );
                let float = elem.is_some_and(Elem::is_float);
                if float {
                    w.guess(
                        "init = \"uniform\"",
                        "uniform in [-1, 1): give the range the kernel expects (positive for sqrt or log)",
                    );
                    w.plain("low = -1.0");
                    w.plain("high = 1.0");
                    w.plain(&format!("seed = {}", i + 1));
                } else {
                    w.guess(
                        "init = \"zeros\"",
                        "integers may be indices or counts: zeros keep every index in bounds; give real ones with init = \"iota\" or init = \"file\"",
                    );
                }
                match bound {
                    Ok(b) => w.guess(
                        &format!("min-length = {}", quote(&b.expr)),
                        &format!("from {}", b.evidence),
                    ),
                    Err(why) => {
                        let _ = writeln!(
                            w.text,
                            "# min-length: none found ({why}); add one to have the length checked"
                        );
                    }
                }
                match output {
                    Some(o) => {
                        let tol = match elem {
                            Some(Elem::F32) => "{ rtol = 1e-5, atol = 1e-6 }",
                            Some(Elem::F64) => "{ rtol = 1e-12, atol = 1e-14 }",
                            _ => "\"exact\"",
                        };
                        let what = match o {
                            Written::Yes(e) => format!("written: {e}"),
                            Written::Maybe(e) => format!("maybe written (check): {e}"),
                        };
                        let what = if *constant {
                            format!("{what}; the parameter is const, written through a cast")
                        } else {
                            what
                        };
                        w.guess(&format!("output = {tol}"), &what);
                    }
                    None if !*constant => {
                        let _ = writeln!(
                            w.text,
                            "# an input: the kernel never writes through `{}`",
                            a.name
                        );
                    }
                    None => {}
                }
            }
        }
    }
    Ok(Draft {
        kernel: kernel_name,
        args,
        fills: w.fills,
        guesses: w.guesses,
        text: w.text,
    })
}

/// A TOML string.
fn quote(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

#[derive(Default)]
struct Writer {
    text: String,
    fills: Vec<String>,
    guesses: usize,
}

impl Writer {
    fn plain(&mut self, line: &str) {
        self.text.push_str(line);
        self.text.push('\n');
    }
    fn fill(&mut self, what: &str, line: &str, why: &str) {
        self.fills.push(what.to_string());
        let _ = writeln!(self.text, "{line}  {} {why}", crate::FILL);
    }
    fn guess(&mut self, line: &str, why: &str) {
        self.guesses += 1;
        let _ = writeln!(self.text, "{line}  {} {why}", crate::GUESS);
    }
}
