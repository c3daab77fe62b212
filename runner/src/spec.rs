//! The launch spec (`bench.toml`, version 1): which kernel, how it is compiled, how it is launched
//! and with what arguments, and which buffers are outputs with what tolerance. [`Spec::load`]
//! checks everything that does not need the compiled kernel; `signature` checks the rest.
//!
//! ```toml
//! version = 1
//! source = "dot.cu"            # relative to this file
//! kernel = "dot"               # or `stencil<4>`, `ns::k`, or a mangled name
//! defines = { BLOCK = 256 }    # -DBLOCK=256 (optional)
//! grid = [1024]                # 1 to 3 numbers; a plain number is [n]
//! block = [256]
//! shared-bytes = 0             # dynamic shared memory per block
//! launches-per-sample = 8      # back-to-back launches timed as one sample (optional;
//!                              # default: as many as make a sample about 100 us, see
//!                              # `session::auto_batch`; 1 times every launch alone)
//!
//! [[args]]                     # in the kernel's parameter order
//! name = "a"                   # optional; checked against the kernel's name when it has one
//! buffer = "f32"               # element type: i8 u8 i16 u16 i32 u32 i64 u64 f32 f64
//! length = 1048576             # elements
//! init = "uniform"             # zeros (default), ones, iota, uniform (low, high, seed), file
//! low = -1.0
//! high = 1.0
//! seed = 1
//! min-length = "n"             # what the launch reads: checked against `length`
//!
//! [[args]]
//! name = "partial"
//! buffer = "f32"
//! length = 1024
//! output = { rtol = 1e-5, atol = 1e-6 }   # or "exact", or { ulps = 4 }
//! elements-per-thread = 0      # alternative to min-length: length >= threads * this
//!
//! [[args]]
//! name = "n"
//! scalar = "i32"
//! value = 1048576
//! ```

use crate::elem::{Elem, Fill, Number};
use serde::Deserialize;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

/// The spec format this hip-unroll reads.
pub const VERSION: u32 = 1;

/// Buffers larger than this are refused (a typo such as an extra zero should not allocate
/// all the host's memory).
pub const MAX_BUFFER_BYTES: u64 = 64 << 30;

/// A spec that failed to load or check: the file and the reason, and where in the file the
/// reason lies when a key or an argument is at fault (`spec check` turns it into a line).
#[derive(Debug, thiserror::Error)]
#[error("{path}: {message}")]
pub struct SpecError {
    pub path: String,
    pub message: String,
    pub place: Option<Place>,
}

/// What part of a spec a [`SpecError`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// A 1-based line and column (TOML syntax and type errors, from the parser's span).
    At { line: usize, column: usize },
    /// A top-level key (`grid`, `block`, `kernel`, `defines`, `shared-bytes`,
    /// `launches-per-sample`, `version`).
    Key(&'static str),
    /// The argument with this 0-based index (its `[[args]]` table).
    Arg(usize),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawSpec {
    version: u32,
    source: PathBuf,
    kernel: String,
    #[serde(default)]
    defines: BTreeMap<String, toml::Value>,
    #[serde(default)]
    flags: Vec<String>,
    /// A number or an array of 1 to 3 numbers (checked by [`dims`]).
    grid: toml::Value,
    block: toml::Value,
    #[serde(default)]
    shared_bytes: u64,
    launches_per_sample: Option<i64>,
    #[serde(default)]
    args: Vec<RawArg>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawArg {
    name: Option<String>,
    buffer: Option<Elem>,
    scalar: Option<Elem>,
    value: Option<Number>,
    length: Option<i64>,
    init: Option<String>,
    low: Option<f64>,
    high: Option<f64>,
    seed: Option<u64>,
    file: Option<PathBuf>,
    /// `"exact"` or a table (checked by [`tolerance`], which says what is wrong).
    output: Option<toml::Value>,
    /// An integer or an expression.
    min_length: Option<toml::Value>,
    elements_per_thread: Option<i64>,
}

/// A loaded, self-consistent spec.
#[derive(Debug, Clone)]
pub struct Spec {
    /// The spec file.
    pub path: PathBuf,
    /// The kernel source, resolved against the spec's directory.
    pub source: PathBuf,
    /// The kernel name as the user wrote it.
    pub kernel: String,
    /// `-DNAME=VALUE` pairs, sorted by name.
    pub defines: Vec<(String, String)>,
    /// Extra compiler flags, passed to both compilers.
    pub flags: Vec<String>,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub shared_bytes: u32,
    /// Launches timed back to back as one sample (`launches-per-sample`); `None`: chosen from
    /// the baseline's time ([`crate::session::auto_batch`]).
    pub launches_per_sample: Option<u32>,
    pub args: Vec<Arg>,
}

/// The most launches per sample a spec may ask for.
pub const MAX_LAUNCHES_PER_SAMPLE: u32 = 4096;

#[derive(Debug, Clone)]
pub struct Arg {
    pub name: Option<String>,
    pub kind: ArgKind,
}

impl Arg {
    /// `argument 2 (`partial`)`, for messages (1-based).
    pub fn label(&self, index: usize) -> String {
        match &self.name {
            Some(n) => format!("argument {} (`{n}`)", index + 1),
            None => format!("argument {}", index + 1),
        }
    }
}

#[derive(Debug, Clone)]
pub enum ArgKind {
    Scalar {
        elem: Elem,
        value: Number,
        bytes: Vec<u8>,
    },
    Buffer(Buffer),
}

#[derive(Debug, Clone)]
pub struct Buffer {
    pub elem: Elem,
    /// Elements.
    pub length: u64,
    pub init: Init,
    /// Set for outputs: compared after the launch with this tolerance.
    pub output: Option<Tolerance>,
    /// `min-length` as written (an integer or an expression).
    pub min_length: Option<String>,
    pub elements_per_thread: Option<u64>,
}

impl Buffer {
    pub fn bytes(&self) -> u64 {
        self.length * self.elem.size() as u64
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Init {
    Fill(Fill),
    /// Raw little-endian elements; the file must hold exactly `length` of them.
    File(PathBuf),
}

/// How closely an output of the variant must match the baseline's.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum Tolerance {
    /// Bit for bit (NaN equals NaN with the same bits).
    Exact,
    /// |variant - baseline| <= atol + rtol * |baseline| (numpy's `allclose`); NaN only matches NaN.
    Close { atol: f64, rtol: f64 },
    /// At most this many representable floats apart (integers: this far apart).
    Ulps { ulps: u64 },
}

impl std::fmt::Display for Tolerance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Tolerance::Exact => write!(f, "exact"),
            Tolerance::Close { atol, rtol } => write!(f, "atol {atol:e}, rtol {rtol:e}"),
            Tolerance::Ulps { ulps } => write!(f, "{ulps} ulps"),
        }
    }
}

impl Spec {
    /// Read and check the spec at `path`.
    pub fn load(path: &Path) -> Result<Spec, SpecError> {
        let err = |message: String| SpecError {
            path: path.display().to_string(),
            message,
            place: None,
        };
        let text = fsio::read_to_string(path, fsio::TEXT_CAP, "a launch spec")
            .map_err(|e| err(e.reason()))?;
        Spec::parse(&text, path)
    }

    /// Check spec text as if read from `path` (relative paths resolve against its directory).
    pub fn parse(text: &str, path: &Path) -> Result<Spec, SpecError> {
        let at = |place: Place| {
            move |message: String| SpecError {
                path: path.display().to_string(),
                message,
                place: Some(place),
            }
        };
        let err = at(Place::Key("version"));
        // A version other than 1 is reported as such, before any field of version 1 is checked.
        if let Ok(table) = text.parse::<toml::Table>() {
            match table.get("version") {
                Some(toml::Value::Integer(v)) if *v != VERSION as i64 => {
                    return Err(err(format!(
                    "spec version {v} is not supported (this hip-unroll reads version {VERSION})"
                )))
                }
                None => return Err(err(format!("missing `version = {VERSION}`"))),
                _ => {}
            }
        }
        let raw: RawSpec = toml::from_str(text).map_err(|e| {
            let (at, message) = toml_reason(text, &e);
            SpecError {
                path: match at {
                    Some((line, col)) => format!("{}:{line}:{col}", path.display()),
                    None => path.display().to_string(),
                },
                message,
                place: at.map(|(line, column)| Place::At { line, column }),
            }
        })?;
        if raw.version != VERSION {
            return Err(err(format!(
                "spec version {} is not supported (this hip-unroll reads version {VERSION})",
                raw.version
            )));
        }
        let dir = path.parent().unwrap_or(Path::new(""));
        let source = dir.join(&raw.source);
        if raw.kernel.trim().is_empty() {
            return Err(at(Place::Key("kernel"))("`kernel` is empty".into()));
        }
        let grid = dims(&raw.grid).map_err(|m| at(Place::Key("grid"))(format!("grid: {m}")))?;
        let block = dims(&raw.block).map_err(|m| at(Place::Key("block"))(format!("block: {m}")))?;
        let shared_bytes = u32::try_from(raw.shared_bytes).map_err(|_| {
            at(Place::Key("shared-bytes"))(format!(
                "shared-bytes {} is too large",
                raw.shared_bytes
            ))
        })?;
        let launches_per_sample = match raw.launches_per_sample {
            None => None,
            Some(n) if (1..=MAX_LAUNCHES_PER_SAMPLE as i64).contains(&n) => Some(n as u32),
            Some(n) => {
                return Err(at(Place::Key("launches-per-sample"))(format!(
                    "launches-per-sample must be 1 to {MAX_LAUNCHES_PER_SAMPLE} (got {n})"
                )))
            }
        };
        let err = at(Place::Key("defines"));
        let mut defines = Vec::new();
        for (k, v) in raw.defines {
            if k.is_empty()
                || !k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                || k.starts_with(|c: char| c.is_ascii_digit())
            {
                return Err(err(format!("defines: `{k}` is not a macro name")));
            }
            let v = match v {
                toml::Value::String(s) => s,
                toml::Value::Integer(i) => i.to_string(),
                toml::Value::Float(f) => format!("{f:?}"),
                toml::Value::Boolean(b) => (b as u8).to_string(),
                other => {
                    return Err(err(format!(
                        "defines: `{k}` must be a string, number or boolean, not {}",
                        other.type_str()
                    )))
                }
            };
            defines.push((k, v));
        }
        let mut args = Vec::new();
        for (i, a) in raw.args.into_iter().enumerate() {
            let label = match &a.name {
                Some(n) => format!("argument {} (`{n}`)", i + 1),
                None => format!("argument {}", i + 1),
            };
            let kind = arg_kind(&a, dir).map_err(|m| at(Place::Arg(i))(format!("{label}: {m}")))?;
            args.push(Arg { name: a.name, kind });
        }
        let spec = Spec {
            path: path.to_path_buf(),
            source,
            kernel: raw.kernel.trim().to_string(),
            defines,
            flags: raw.flags,
            grid,
            block,
            shared_bytes,
            launches_per_sample,
            args,
        };
        spec.lengths().map_err(|(i, m)| at(Place::Arg(i))(m))?;
        Ok(spec)
    }

    /// Work-items in the launch.
    pub fn threads(&self) -> u64 {
        self.blocks() * self.block.iter().map(|&b| b as u64).product::<u64>()
    }

    /// Blocks in the launch.
    pub fn blocks(&self) -> u64 {
        self.grid.iter().map(|&g| g as u64).product()
    }

    /// The names a `min-length` expression may use.
    pub fn expr_names(&self) -> HashMap<String, i128> {
        let mut n = HashMap::new();
        for (i, axis) in ["x", "y", "z"].iter().enumerate() {
            n.insert(format!("grid.{axis}"), self.grid[i] as i128);
            n.insert(format!("block.{axis}"), self.block[i] as i128);
        }
        n.insert("threads".into(), self.threads() as i128);
        n.insert("blocks".into(), self.blocks() as i128);
        n.insert("shared-bytes".into(), self.shared_bytes as i128);
        for a in &self.args {
            if let (
                Some(name),
                ArgKind::Scalar {
                    value: Number::Int(v),
                    ..
                },
            ) = (&a.name, &a.kind)
            {
                n.insert(name.clone(), *v as i128);
            }
        }
        n
    }

    /// Every buffer is at least as long as its `min-length` / `elements-per-thread` says the
    /// launch reads or writes.
    pub fn check_lengths(&self) -> Result<(), String> {
        self.lengths().map_err(|(_, m)| m)
    }

    /// [`Spec::check_lengths`], with the index of the argument at fault.
    fn lengths(&self) -> Result<(), (usize, String)> {
        let names = self.expr_names();
        for (i, a) in self.args.iter().enumerate() {
            let ArgKind::Buffer(b) = &a.kind else {
                continue;
            };
            if let Some(e) = &b.min_length {
                let shown = if e.chars().count() > 64 {
                    format!("{}...", e.chars().take(61).collect::<String>())
                } else {
                    e.clone()
                };
                let need = crate::expr::eval(e, &names)
                    .map_err(|m| (i, format!("{}: min-length `{shown}`: {m}", a.label(i))))?;
                if (b.length as i128) < need {
                    return Err((
                        i,
                        format!(
                            "{}: buffer too short for the launch: length {} < min-length `{shown}` = {need}",
                            a.label(i),
                            b.length
                        ),
                    ));
                }
            }
            if let Some(k) = b.elements_per_thread {
                let need = self.threads() as u128 * k as u128;
                if (b.length as u128) < need {
                    return Err((
                        i,
                        format!(
                            "{}: buffer too short for the launch: length {} < {} threads x {k} elements-per-thread = {need}",
                            a.label(i),
                            b.length,
                            self.threads()
                        ),
                    ));
                }
            }
        }
        Ok(())
    }
}

fn arg_kind(a: &RawArg, dir: &Path) -> Result<ArgKind, String> {
    let buffer_only = [
        ("length", a.length.is_some()),
        ("init", a.init.is_some()),
        ("low", a.low.is_some()),
        ("high", a.high.is_some()),
        ("seed", a.seed.is_some()),
        ("file", a.file.is_some()),
        ("output", a.output.is_some()),
        ("min-length", a.min_length.is_some()),
        ("elements-per-thread", a.elements_per_thread.is_some()),
    ];
    match (a.buffer, a.scalar) {
        (Some(_), Some(_)) => Err("has both `buffer` and `scalar`; it is one or the other".into()),
        (None, None) => Err("needs `buffer = \"TYPE\"` or `scalar = \"TYPE\"`".into()),
        (None, Some(elem)) => {
            if let Some((k, _)) = buffer_only.iter().find(|(_, set)| *set) {
                return Err(format!("`{k}` is for buffers, not scalars"));
            }
            let value = a.value.ok_or("a scalar needs `value`")?;
            let bytes = elem.encode(&value)?;
            Ok(ArgKind::Scalar { elem, value, bytes })
        }
        (Some(elem), None) => {
            if a.value.is_some() {
                return Err("`value` is for scalars; a buffer has `init`".into());
            }
            let length = a.length.ok_or("a buffer needs `length` (elements)")?;
            if length <= 0 {
                return Err(format!("length must be at least 1 (got {length})"));
            }
            let length = length as u64;
            if length.saturating_mul(elem.size() as u64) > MAX_BUFFER_BYTES {
                return Err(format!(
                    "length {length} x {} bytes is over the {} GiB limit",
                    elem.size(),
                    MAX_BUFFER_BYTES >> 30
                ));
            }
            let init = init(a, elem, dir)?;
            if let Init::File(f) = &init {
                check_init_file(f, length, elem)?;
            }
            let output = a.output.as_ref().map(tolerance).transpose()?;
            if let Some(Tolerance::Close { .. } | Tolerance::Ulps { .. }) = output {
                if !elem.is_float() && matches!(output, Some(Tolerance::Close { .. })) {
                    return Err(format!(
                        "atol/rtol are for float outputs; a {elem} output is \"exact\" or {{ ulps = N }}"
                    ));
                }
            }
            let min_length = match &a.min_length {
                None => None,
                Some(toml::Value::Integer(i)) => Some(i.to_string()),
                Some(toml::Value::String(t)) => Some(t.clone()),
                Some(other) => {
                    return Err(format!(
                        "min-length must be an integer or an expression in a string, not {}",
                        other.type_str()
                    ))
                }
            };
            let elements_per_thread = match a.elements_per_thread {
                None => None,
                Some(k) if k < 0 => {
                    return Err(format!("elements-per-thread must be at least 0 (got {k})"))
                }
                Some(k) => Some(k as u64),
            };
            Ok(ArgKind::Buffer(Buffer {
                elem,
                length,
                init,
                output,
                min_length,
                elements_per_thread,
            }))
        }
    }
}

fn init(a: &RawArg, elem: Elem, dir: &Path) -> Result<Init, String> {
    let word = a
        .init
        .as_deref()
        .unwrap_or(if a.file.is_some() { "file" } else { "zeros" });
    let extra = |allowed: &[&str]| -> Result<(), String> {
        for (k, set) in [
            ("low", a.low.is_some()),
            ("high", a.high.is_some()),
            ("seed", a.seed.is_some()),
            ("file", a.file.is_some()),
        ] {
            if set && !allowed.contains(&k) {
                return Err(format!("`{k}` does not apply to init = \"{word}\""));
            }
        }
        Ok(())
    };
    match word {
        "zeros" | "ones" | "iota" => {
            extra(&[])?;
            Ok(Init::Fill(match word {
                "zeros" => Fill::Zeros,
                "ones" => Fill::Ones,
                _ => Fill::Iota,
            }))
        }
        "uniform" => {
            extra(&["low", "high", "seed"])?;
            let (low, high) = (a.low.unwrap_or(0.0), a.high.unwrap_or(1.0));
            if !(low.is_finite() && high.is_finite() && low < high) {
                return Err(format!(
                    "uniform needs finite low < high (got {low}, {high})"
                ));
            }
            if !elem.is_float() && (low.fract() != 0.0 || high.fract() != 0.0) {
                return Err(format!("uniform {elem} needs integer low and high"));
            }
            Ok(Init::Fill(Fill::Uniform {
                low,
                high,
                seed: a.seed.unwrap_or(0),
            }))
        }
        "file" => {
            extra(&["file"])?;
            let f = a
                .file
                .as_ref()
                .ok_or("init = \"file\" needs `file = \"PATH\"`")?;
            Ok(Init::File(dir.join(f)))
        }
        other => Err(format!(
            "unknown init `{other}` (zeros, ones, iota, uniform, file)"
        )),
    }
}

fn tolerance(t: &toml::Value) -> Result<Tolerance, String> {
    const FORMS: &str = "expected \"exact\", { atol = A, rtol = R } or { ulps = N }";
    let t = match t {
        toml::Value::String(w) if w == "exact" => return Ok(Tolerance::Exact),
        toml::Value::String(w) => return Err(format!("output = \"{w}\": {FORMS}")),
        toml::Value::Table(t) => t,
        other => return Err(format!("output is {}: {FORMS}", other.type_str())),
    };
    if let Some(k) = t
        .keys()
        .find(|k| !matches!(k.as_str(), "atol" | "rtol" | "ulps"))
    {
        return Err(format!("output: unknown key `{k}` ({FORMS})"));
    }
    let float = |k: &str| -> Result<Option<f64>, String> {
        match t.get(k) {
            None => Ok(None),
            Some(toml::Value::Float(f)) => Ok(Some(*f)),
            Some(toml::Value::Integer(i)) => Ok(Some(*i as f64)),
            Some(v) => Err(format!(
                "output: {k} must be a number, not {}",
                v.type_str()
            )),
        }
    };
    let (atol, rtol) = (float("atol")?, float("rtol")?);
    let ulps = match t.get("ulps") {
        None => None,
        Some(toml::Value::Integer(u)) if *u >= 0 => Some(*u as u64),
        Some(toml::Value::Integer(u)) => {
            return Err(format!(
                "output: ulps must be a whole number >= 0 (got {u})"
            ))
        }
        Some(v) => {
            return Err(format!(
                "output: ulps must be a whole number >= 0, not {}",
                v.type_str()
            ))
        }
    };
    match (atol, rtol, ulps) {
        (None, None, Some(ulps)) => Ok(Tolerance::Ulps { ulps }),
        (a, r, None) if a.is_some() || r.is_some() => {
            let (atol, rtol) = (a.unwrap_or(0.0), r.unwrap_or(0.0));
            if !(atol >= 0.0 && rtol >= 0.0 && atol.is_finite() && rtol.is_finite()) {
                return Err(format!(
                    "atol and rtol must be finite and >= 0 (got {atol}, {rtol})"
                ));
            }
            Ok(Tolerance::Close { atol, rtol })
        }
        (_, _, Some(_)) => Err("output: ulps cannot be combined with atol/rtol".into()),
        _ => Err("output = {}: give atol/rtol or ulps".into()),
    }
}

fn dims(d: &toml::Value) -> Result<[u32; 3], String> {
    let v: Vec<&toml::Value> = match d {
        toml::Value::Array(v) => v.iter().collect(),
        one => vec![one],
    };
    if v.is_empty() || v.len() > 3 {
        return Err(format!("1 to 3 numbers (got {})", v.len()));
    }
    let mut out = [1u32; 3];
    for (i, n) in v.iter().enumerate() {
        let toml::Value::Integer(n) = n else {
            return Err(format!("sizes are whole numbers, not {}", n.type_str()));
        };
        out[i] = u32::try_from(*n)
            .ok()
            .filter(|n| *n >= 1)
            .ok_or_else(|| format!("each size must be 1 to {} (got {n})", u32::MAX))?;
    }
    Ok(out)
}

/// A toml error as one line and where it is (1-based line and column): toml's own message
/// is a multi-line code frame.
fn toml_reason(text: &str, e: &toml::de::Error) -> (Option<(usize, usize)>, String) {
    let reason = e
        .message()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    let at = e.span().map(|span| {
        let before = text.get(..span.start).unwrap_or(text);
        let line = before.matches('\n').count() + 1;
        let col = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
        (line, col)
    });
    (at, reason)
}

/// An `init = "file"` file exists, is a regular file and holds exactly the buffer's bytes
/// (checked when the spec loads, so that `--compile-only` catches it).
fn check_init_file(f: &Path, length: u64, elem: Elem) -> Result<(), String> {
    let meta =
        std::fs::metadata(f).map_err(|e| format!("file {}: {}", f.display(), io_reason(&e)))?;
    if !meta.is_file() {
        return Err(format!("file {}: not a regular file", f.display()));
    }
    let bytes = length * elem.size() as u64;
    if meta.len() != bytes {
        return Err(format!(
            "file {} holds {} bytes, the buffer is {length} x {elem} = {bytes} bytes",
            f.display(),
            meta.len()
        ));
    }
    Ok(())
}

pub(crate) use fsio::reason as io_reason;
