//! Static gates, before any build or run: the variant's file is compiled for the target
//! (through `codeobj::compile`, cached by content including headers), its kernel signatures
//! must equal the baseline's, and the register gate (`vgpr-pressure`) must not see new spills
//! or new scratch. (The transform's own refusal, the first gate, happens in
//! [`crate::discover`].)
//!
//! **What is vetoed, what is measured.** A gate refuses a variant without a run only for what is
//! wrong or near-certainly slow whatever the GPU does: a changed kernel signature, new spills
//! (AMD VGPR/SGPR spills, NVIDIA ptxas spill bytes), new scratch (AMD private segment) or a
//! larger stack frame (NVIDIA local memory). An occupancy loss from more registers is a
//! *prediction*: it is recorded on the variant ([`Report::occupancy`], the kernel whose
//! occupancy falls the most, registers and occupancy before and after) and the variant is
//! measured. Only when [`Gates::max_occupancy_loss`] is set (`[vgpr-pressure]
//! max-occupancy-loss`, also to 0) does a loss beyond it gate the variant, as `check --hsaco` and
//! `pressure` judge it. The same policy holds for every backend: the gates run in the lane
//! before any backend sees the variant.
//!
//! The compiler's output decides the target. An AMD code object: the signature is
//! `codeobj::signature`'s, the register gate the `codeobj::judge` (VGPR/SGPR spills, scratch,
//! waves per SIMD). An NVIDIA cubin ([`codeobj::compile::Output::Cubin`], nvcc with ptxas's
//! `-v` report): the signature is each kernel's parameter layout from `.nv.info`, the register
//! gate reads the cubin's registers and stack frame and ptxas's spill bytes
//! ([`runner::cubin`]), occupancy being the register-limited warps per SM. AMD's gates never
//! judge an NVIDIA tune.
//!
//! **What is compiled is what runs.** A bench spec may launch a template kernel that its file
//! never instantiates (`sgemm<64, 64, 8, 8>`): the file's own compile holds none of that kernel's
//! code, and a variant of its loops would look like the baseline (same machine code, no
//! registers, no spills). For each such spec ([`Gates::instances`]) the gates compile the
//! runner's instance wrapper instead ([`runner::build::instance_wrapper`]: the whole file and
//! the instantiation, the very compile the runner launches, shared through the cache), and
//! judge, compare and digest the kernels of those compiles ([`Units`]).
//!
//! When the baseline file itself cannot be compiled with the configured command (the
//! repository needs flags tune does not know, or the compiler is not installed here), the
//! code-object gates are `skipped` with the compiler's first error line: recorded, reported,
//! never passed silently.

use crate::occupancy::{Occupancy, OccupancyUnit, Registers};
use codeobj::compile::{Compiled, Compiler, Output};
use codeobj::judge::Thresholds;
use serde::Serialize;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// A template kernel a spec launches from a file of the tuned tree (`source`, relative to the
/// tree), which the gates instantiate where the file does not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instance {
    pub source: PathBuf,
    pub kernel: String,
}

/// The compiles the gates judge a file by: the file's own, or, when a spec's template kernel
/// is not in it, one instance wrapper per such kernel (each holds the whole file too), in the
/// order of [`Gates::instances`].
#[derive(Debug, Clone)]
pub struct Units(pub Vec<Compiled>);

impl Units {
    /// Whether a compile ran for them now (none came from the cache alone).
    pub fn compiled_now(&self) -> bool {
        self.0.iter().any(|c| !c.cached)
    }
}

/// The outcome of one gate.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", content = "detail", rename_all = "kebab-case")]
pub enum Outcome {
    Pass,
    Fail(String),
    Skipped(String),
}

impl Outcome {
    pub fn name(&self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::Fail(_) => "fail",
            Outcome::Skipped(_) => "skipped",
        }
    }

    pub fn detail(&self) -> Option<&str> {
        match self {
            Outcome::Pass => None,
            Outcome::Fail(d) | Outcome::Skipped(d) => Some(d),
        }
    }
}

/// The code-object gates of one variant: `(gate id, outcome)` in the order run; the first
/// failing gate ends the list.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct Report {
    pub gates: Vec<(&'static str, Outcome)>,
    /// Whether the variant's code object was compiled now (not taken from the cache).
    pub compiled: bool,
    /// Every gate passed and the variant's machine code (the `.text` of every kernel) is
    /// byte-identical to the baseline's.
    pub same_code: bool,
    /// The predicted occupancy change (the kernel whose occupancy falls the most; of equal
    /// falls the one whose registers grow the most), where both compiles give it.
    pub occupancy: Option<Occupancy>,
    /// A digest of the variant's machine code ([`machine_code`]) when every gate passed: two
    /// variants with one digest are one program.
    pub code: Option<String>,
    /// Seconds spent compiling the variant (0 when it came from the cache) and in the whole
    /// check (compile included).
    pub compile_seconds: f64,
    pub seconds: f64,
}

impl Report {
    /// The first failure: `(gate, detail)`.
    pub fn failure(&self) -> Option<(&'static str, &str)> {
        self.gates.iter().find_map(|(g, o)| match o {
            Outcome::Fail(d) => Some((*g, d.as_str())),
            _ => None,
        })
    }

    /// The first skip, for the report's notes.
    pub fn skipped(&self) -> Option<&str> {
        self.gates.iter().find_map(|(_, o)| match o {
            Outcome::Skipped(d) => Some(d.as_str()),
            _ => None,
        })
    }
}

/// Gate ids as recorded in the ledger.
pub const COMPILE: &str = "compile";
pub const SIGNATURE: &str = "signature";
pub const PRESSURE: &str = "vgpr-pressure";

/// The gate settings.
#[derive(Debug, Clone)]
pub struct Gates {
    pub compiler: Compiler,
    /// `None` (the default): an occupancy loss is a prediction, recorded and measured. `Some(n)`
    /// (`[vgpr-pressure] max-occupancy-loss = n`, also 0): a loss of more than `n` waves per SIMD
    /// (AMD) or register-limited warps per SM (NVIDIA) gates the variant.
    pub max_occupancy_loss: Option<u32>,
    /// The specs' template kernels ([`Instance`]): empty but for a bench tune.
    pub instances: Vec<Instance>,
}

fn is_header(p: &Path) -> bool {
    p.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| matches!(e, "h" | "hh" | "hpp" | "cuh" | "inc"))
}

fn first_line(e: &codeobj::compile::CompileError) -> String {
    match e {
        codeobj::compile::CompileError::Failed { stderr, .. } => {
            crate::shell::first_error_line(stderr).unwrap_or_else(|| e.to_string())
        }
        other => other
            .to_string()
            .lines()
            .next()
            .unwrap_or_default()
            .to_string(),
    }
}

/// The machine code of a compile, to tell a variant that changed nothing: the `.text` of every
/// code object after unbundling (with its target id) for AMD, the `.text` sections of a cubin,
/// or PTX without its comment lines. `None` when there is none to compare.
pub fn machine_code(units: &Units, output: Output) -> Option<Vec<(String, Vec<u8>)>> {
    let mut all: Vec<(String, Vec<u8>)> = Vec::new();
    for (i, c) in units.0.iter().enumerate() {
        for (name, code) in unit_code(c, output)? {
            // A wrapper holds the file's other kernels too: each kernel once. PTX is one text
            // per compile, named by its place.
            let name = if name == "ptx" {
                format!("ptx {i}")
            } else {
                name
            };
            if !all.iter().any(|(n, _)| *n == name) {
                all.push((name, code));
            }
        }
    }
    (!all.is_empty()).then_some(all)
}

/// [`machine_code`] of one compile.
fn unit_code(c: &Compiled, output: Output) -> Option<Vec<(String, Vec<u8>)>> {
    let m: Vec<(String, Vec<u8>)> = match output {
        Output::CodeObject => c
            .code_objects
            .iter()
            .flat_map(|o| {
                o.text
                    .iter()
                    .map(move |(n, b)| (format!("{} {n}", o.target_id), b.clone()))
            })
            .collect(),
        Output::Cubin => {
            let bytes = std::fs::read(&c.object).ok()?;
            codeobj::elf::text_sections(&bytes).ok()?
        }
        Output::Text(_) => {
            let bytes = std::fs::read(&c.object).ok()?;
            let code: Vec<u8> = bytes
                .split(|&b| b == b'\n')
                .filter(|l| !l.trim_ascii_start().starts_with(b"//"))
                .flat_map(|l| l.iter().copied().chain([b'\n']))
                .collect();
            vec![("ptx".into(), code)]
        }
    };
    Some(m)
}

/// The kernel symbols of a compile (mangled), `None` when they cannot be read.
fn kernel_symbols(c: &Compiled, output: Output) -> Option<Vec<String>> {
    match output {
        Output::CodeObject => Some(
            c.code_objects
                .iter()
                .flat_map(|o| {
                    o.kernels
                        .iter()
                        .map(|k| runner::signature::from_amd(&k.meta).symbol)
                })
                .collect(),
        ),
        Output::Cubin => cubin_kernels(c)
            .ok()
            .map(|ks| ks.into_iter().map(|k| k.name).collect()),
        Output::Text(_) => {
            let text = std::fs::read_to_string(&c.object).ok()?;
            let m = runner::ptx::parse(&text).ok()?;
            Some(m.entries.into_iter().map(|e| e.name).collect())
        }
    }
}

/// A digest of machine code as [`machine_code`] gives it.
pub fn code_digest(code: &[(String, Vec<u8>)]) -> String {
    let mut h = blake3::Hasher::new();
    for (name, bytes) in code {
        h.update(&(name.len() as u64).to_le_bytes());
        h.update(name.as_bytes());
        h.update(&(bytes.len() as u64).to_le_bytes());
        h.update(bytes);
    }
    h.finalize().to_hex().to_string()
}

/// Of several kernels' predictions, the one to show: of the kernels the variant changed
/// (registers or occupancy; else those whose machine code changed, each prediction's flag), the
/// largest occupancy loss, then the largest register growth, then the first. A kernel the
/// rewrite did not touch says nothing about it (sgemm2d.cu's other kernel, 120 -> 120, was
/// shown for a variant of sgemm_2d whose registers fell, and for variants of sgemm_2d that
/// changed no register count); a variant that changed no kernel has no prediction.
fn worst(all: impl IntoIterator<Item = (Occupancy, bool)>) -> Option<Occupancy> {
    let all: Vec<(Occupancy, bool)> = all.into_iter().collect();
    let changed = |o: &Occupancy| o.before != o.after || o.registers.before != o.registers.after;
    let any_changed = all.iter().any(|(o, _)| changed(o));
    let mut best: Option<Occupancy> = None;
    for (o, _) in all
        .into_iter()
        .filter(|(o, code)| if any_changed { changed(o) } else { *code })
    {
        let key = |o: &Occupancy| {
            (
                o.before.saturating_sub(o.after),
                o.registers.after as i64 - o.registers.before as i64,
            )
        };
        if best.as_ref().is_none_or(|b| key(&o) > key(b)) {
            best = Some(o);
        }
    }
    best
}

/// Each kernel's machine code over every compile of `units` ([`machine_code`]'s `.text.<symbol>`
/// sections by symbol), empty when a cubin cannot be read.
fn kernel_texts(units: &Units) -> HashMap<String, Vec<u8>> {
    machine_code(units, Output::Cubin)
        .unwrap_or_default()
        .into_iter()
        .filter_map(|(section, code)| Some((section.strip_prefix(".text.")?.to_string(), code)))
        .collect()
}

/// A cubin's kernels with ptxas's report, or why not.
fn cubin_kernels(c: &Compiled) -> Result<Vec<runner::cubin::CubinKernel>, String> {
    let bytes = std::fs::read(&c.object).map_err(|e| format!("{}: {e}", c.object.display()))?;
    runner::cubin::with_report(&bytes, c.log.as_deref())
        .map_err(|e| format!("{}: {e}", c.object.display()))
}

/// The kernels of every compile of `units`, each name once.
fn units_kernels(units: &Units) -> Result<Vec<runner::cubin::CubinKernel>, String> {
    let mut all: Vec<runner::cubin::CubinKernel> = Vec::new();
    for c in &units.0 {
        for k in cubin_kernels(c)? {
            if !all.iter().any(|a| a.name == k.name) {
                all.push(k);
            }
        }
    }
    Ok(all)
}

impl Gates {
    /// The NVIDIA signature and register gates of a variant's cubin against the baseline's;
    /// returns the occupancy prediction.
    fn nvidia(
        &self,
        base: &Units,
        var: &Units,
        gates: &mut Vec<(&'static str, Outcome)>,
    ) -> Option<Occupancy> {
        let (b, v) = match (units_kernels(base), units_kernels(var)) {
            (Ok(b), Ok(v)) => (b, v),
            (Err(e), _) | (_, Err(e)) => {
                gates.push((SIGNATURE, Outcome::Skipped(e.clone())));
                gates.push((PRESSURE, Outcome::Skipped(e)));
                return None;
            }
        };
        let mut diffs = Vec::new();
        for bk in &b {
            match v.iter().find(|k| k.name == bk.name) {
                None => diffs.push(format!("kernel {} missing from the variant", bk.name)),
                Some(vk) if vk.params != bk.params || vk.param_bytes != bk.param_bytes => diffs
                    .push(format!(
                        "kernel {}: parameters (ordinal, offset, size) {:?}, the variant {:?}",
                        bk.name, bk.params, vk.params
                    )),
                Some(_) => {}
            }
        }
        for vk in &v {
            if !b.iter().any(|k| k.name == vk.name) {
                diffs.push(format!("kernel {} is new in the variant", vk.name));
            }
        }
        if !diffs.is_empty() {
            gates.push((SIGNATURE, Outcome::Fail(diffs.join("; "))));
            return None;
        }
        gates.push((SIGNATURE, Outcome::Pass));
        let arch = &self.compiler.arch;
        let (base_text, var_text) = (kernel_texts(base), kernel_texts(var));
        let mut why = Vec::new();
        let mut predictions = Vec::new();
        for bk in &b {
            let Some(vk) = v.iter().find(|k| k.name == bk.name) else {
                continue;
            };
            let name = runner::signature::short_name(&bk.name);
            let mut reasons = Vec::new();
            match (bk.spills, vk.spills) {
                (Some((bs, bl)), Some((vs, vl))) if vs + vl > bs + bl => reasons.push(format!(
                    "spills {vs} bytes stored, {vl} loaded (baseline {bs}, {bl})"
                )),
                _ if vk.frame_bytes > bk.frame_bytes => reasons.push(format!(
                    "uses {} bytes of stack per thread (baseline {})",
                    vk.frame_bytes, bk.frame_bytes
                )),
                _ => {}
            }
            let occ = |r| runner::cubin::register_limited_warps(r, arch);
            if let (Some(before), Some(after)) = (occ(bk.registers), occ(vk.registers)) {
                // Unknown code (no section of that name) counts as changed.
                let code = base_text
                    .get(&bk.name)
                    .is_none_or(|b| var_text.get(&bk.name) != Some(b));
                predictions.push((
                    Occupancy {
                        kernel: name.clone(),
                        unit: OccupancyUnit::WarpsPerSm,
                        before,
                        after,
                        registers: Registers {
                            before: bk.registers,
                            after: vk.registers,
                        },
                    },
                    code,
                ));
                if let Some(allowed) = self.max_occupancy_loss {
                    if after.saturating_add(allowed) < before {
                        reasons.push(format!(
                            "occupancy {before} -> {after} warps per SM ({} -> {} registers; at most {allowed} may be lost)",
                            bk.registers, vk.registers
                        ));
                    }
                }
            }
            if !reasons.is_empty() {
                why.push(format!("{name} on {arch}: {}", reasons.join(", ")));
            }
        }
        gates.push((
            PRESSURE,
            if why.is_empty() {
                Outcome::Pass
            } else {
                Outcome::Fail(why.join("; "))
            },
        ));
        worst(predictions)
    }

    /// The same gates, compiling in `dir` (a working copy of the tree: [`Instance::source`] is
    /// relative to it).
    pub fn in_dir(&self, dir: &Path) -> Gates {
        Gates {
            compiler: self.compiler.in_dir(dir),
            ..self.clone()
        }
    }

    /// The specs' template kernels defined in `file` (a path in the compiler's directory).
    fn instances_of<'a>(&'a self, file: &'a Path) -> impl Iterator<Item = &'a str> + 'a {
        let rel = self
            .compiler
            .cwd
            .as_deref()
            .and_then(|d| file.strip_prefix(d).ok());
        self.instances
            .iter()
            .filter(move |i| rel == Some(i.source.as_path()))
            .map(|i| i.kernel.as_str())
    }

    /// Compile `file` as the GPU will run it ([`Units`]): its own compile, or the instance
    /// wrappers of the specs' template kernels it does not instantiate itself. (The gates'
    /// compiles, also those made ahead of a variant's turn.)
    pub fn units(&self, file: &Path) -> Result<Units, codeobj::compile::CompileError> {
        let own = self.compiler.compile(file)?;
        let out = self.compiler.output;
        let symbols = kernel_symbols(&own, out);
        let missing: Vec<&str> = self
            .instances_of(file)
            .filter(|k| {
                symbols
                    .as_deref()
                    .is_none_or(|s| runner::signature::resolve(s, k).is_err())
            })
            .collect();
        if missing.is_empty() {
            return Ok(Units(vec![own]));
        }
        let mut units = Vec::with_capacity(missing.len());
        for kernel in missing {
            let wrapper = runner::build::instance_wrapper(file, kernel, &self.compiler.cache_dir)
                .map_err(|e| codeobj::compile::CompileError::Io {
                path: file.display().to_string(),
                error: std::io::Error::other(e.to_string()),
            })?;
            let c = self
                .compiler
                .clone()
                .with_args(runner::build::instance_args(file));
            let mut compiled = c.compile(&wrapper)?;
            // Compiled now: the wrapper's or the file's own compile.
            compiled.cached &= own.cached;
            units.push(compiled);
        }
        Ok(Units(units))
    }

    /// Compile the baseline's copy of a file: `Err(first error line)` when it cannot be.
    pub fn baseline(&self, file: &Path) -> Result<Units, String> {
        if is_header(file) {
            return Err(format!(
                "{} is a header: not compiled on its own",
                file.display()
            ));
        }
        self.units(file).map_err(|e| first_line(&e))
    }

    /// Run the code-object gates on a variant's copy of a file, against the baseline's
    /// compile (`Err` = the baseline could not be compiled: every gate is skipped). When every
    /// gate passed, [`Report::same_code`] says whether the variant's machine code is the
    /// baseline's ([`machine_code`]) and [`Report::code`] is its digest.
    pub fn check(&self, baseline: &Result<Units, String>, variant: &Path) -> Report {
        let t0 = Instant::now();
        let mut var = None;
        let mut r = self.gates(baseline, variant, &mut var);
        if r.failure().is_none() && r.skipped().is_none() {
            if let (Ok(b), Some(v)) = (baseline, &var) {
                let out = self.compiler.output;
                let code = machine_code(v, out);
                r.code = code.as_deref().map(code_digest);
                r.same_code = code.is_some() && machine_code(b, out) == code;
            }
        }
        r.seconds = t0.elapsed().as_secs_f64();
        r
    }

    fn gates(
        &self,
        baseline: &Result<Units, String>,
        variant: &Path,
        out: &mut Option<Units>,
    ) -> Report {
        let mut gates = Vec::new();
        let base = match baseline {
            Ok(b) => b,
            Err(why) => {
                let why = format!("the baseline does not compile to a code object: {why}");
                for g in [COMPILE, SIGNATURE, PRESSURE] {
                    gates.push((g, Outcome::Skipped(why.clone())));
                }
                return Report {
                    gates,
                    ..Report::default()
                };
            }
        };
        let t0 = Instant::now();
        let compiled = self.units(variant);
        let compile_seconds = t0.elapsed().as_secs_f64();
        let var = match compiled {
            Ok(v) => v,
            Err(e @ codeobj::compile::CompileError::CompilerMissing { .. }) => {
                // The carried-cache route: no compiler here and no object for this variant.
                let why = format!("not in the carried cache: {}", first_line(&e));
                for g in [COMPILE, SIGNATURE, PRESSURE] {
                    gates.push((g, Outcome::Skipped(why.clone())));
                }
                return Report {
                    gates,
                    ..Report::default()
                };
            }
            Err(e) => {
                gates.push((COMPILE, Outcome::Fail(first_line(&e))));
                return Report {
                    gates,
                    compiled: true,
                    compile_seconds,
                    ..Report::default()
                };
            }
        };
        let compiled = var.compiled_now();
        let compile_seconds = if compiled { compile_seconds } else { 0.0 };
        *out = Some(var.clone());
        gates.push((COMPILE, Outcome::Pass));
        let done = |gates, occupancy| Report {
            gates,
            compiled,
            occupancy,
            compile_seconds,
            ..Report::default()
        };
        if base.0.len() != var.0.len() {
            // A spec's template kernel the variant's file instantiates itself, or no longer.
            gates.push((
                SIGNATURE,
                Outcome::Fail(format!(
                    "the specs' template kernels need {} instance compiles of the baseline, {} of the variant",
                    base.0.len(),
                    var.0.len()
                )),
            ));
            return done(gates, None);
        }
        if self.compiler.output == Output::Cubin {
            let occupancy = self.nvidia(base, &var, &mut gates);
            return done(gates, occupancy);
        }
        let objects = |u: &Units| -> Vec<codeobj::CodeObject> {
            u.0.iter()
                .flat_map(|c| c.code_objects.iter().cloned())
                .collect()
        };
        let (base_objects, var_objects) = (objects(base), objects(&var));
        let mut diffs = Vec::new();
        if base_objects.len() != var_objects.len() {
            diffs.push(format!(
                "{} code objects, the variant {}",
                base_objects.len(),
                var_objects.len()
            ));
        }
        for (a, b) in base_objects.iter().zip(&var_objects) {
            diffs.extend(
                codeobj::signature::compare(a, b)
                    .into_iter()
                    .map(|d| d.to_string()),
            );
        }
        if !diffs.is_empty() {
            gates.push((SIGNATURE, Outcome::Fail(diffs.join("; "))));
            return done(gates, None);
        }
        gates.push((SIGNATURE, Outcome::Pass));
        // Unset, no occupancy loss can block: only spills, scratch and missing kernels do.
        let thresholds = Thresholds {
            max_occupancy_loss: self.max_occupancy_loss.unwrap_or(u32::MAX),
        };
        let j = codeobj::judge::judge(&base_objects, &var_objects, &thresholds, None);
        // A code object's kernels share one `.text`: each counts as changed.
        let occupancy = worst(j.kernels.iter().filter_map(|k| {
            let after = k.after.as_ref()?;
            Some((
                Occupancy {
                    kernel: k
                        .demangled
                        .as_deref()
                        .map(kernelname::function_of)
                        .unwrap_or_else(|| k.kernel.clone()),
                    unit: OccupancyUnit::WavesPerSimd,
                    before: k.before.waves_per_simd?,
                    after: after.waves_per_simd?,
                    registers: Registers {
                        before: k.before.vgpr_count,
                        after: after.vgpr_count,
                    },
                },
                true,
            ))
        }));
        if j.blocked {
            let why: Vec<String> = j
                .kernels
                .iter()
                .filter(|k| k.blocked)
                .map(|k| {
                    let name = k.demangled.as_deref().unwrap_or(&k.kernel);
                    let r: Vec<String> = k.reasons.iter().map(|r| r.to_string()).collect();
                    format!("{name} on {}: {}", k.arch, r.join(", "))
                })
                .fold(Vec::new(), |mut all: Vec<String>, w| {
                    // A kernel in several instance compiles is judged in each: said once.
                    if !all.contains(&w) {
                        all.push(w);
                    }
                    all
                });
            gates.push((PRESSURE, Outcome::Fail(why.join("; "))));
        } else {
            gates.push((PRESSURE, Outcome::Pass));
        }
        done(gates, occupancy)
    }
}
