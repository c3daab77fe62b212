//! Static gates, before any build or run: the variant's file is compiled for the target
//! (through `codeobj::compile`, cached by content including headers), its kernel signatures
//! must equal the baseline's, and the register gate (`vgpr-pressure`) must not see new spills,
//! new scratch or an occupancy loss beyond the allowance. (The transform's own refusal, the
//! first gate, happens in [`crate::discover`].)
//!
//! The compiler's output decides the target. An AMD code object: the signature is
//! `codeobj::signature`'s, the register gate the `codeobj::judge` (VGPR/SGPR spills, scratch,
//! waves per SIMD). An NVIDIA cubin ([`codeobj::compile::Output::Cubin`], nvcc with ptxas's
//! `-v` report): the signature is each kernel's parameter layout from `.nv.info`, the register
//! gate reads the cubin's registers and stack frame and ptxas's spill bytes
//! ([`runner::cubin`]), occupancy being the register-limited warps per SM. AMD's gates never
//! judge an NVIDIA tune.
//!
//! When the baseline file itself cannot be compiled with the configured command (the
//! repository needs flags tune does not know, or the compiler is not installed here), the
//! code-object gates are `skipped` with the compiler's first error line: recorded, reported,
//! never passed silently.

use codeobj::compile::{Compiled, Compiler, Output};
use codeobj::judge::Thresholds;
use serde::Serialize;
use std::path::Path;

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
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Report {
    pub gates: Vec<(&'static str, Outcome)>,
    /// Whether the variant's code object was compiled now (not taken from the cache).
    pub compiled: bool,
    /// Every gate passed and the variant's machine code (the `.text` of every kernel) is
    /// byte-identical to the baseline's.
    pub same_code: bool,
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
    pub thresholds: Thresholds,
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
pub fn machine_code(c: &Compiled, output: Output) -> Option<Vec<(String, Vec<u8>)>> {
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
    (!m.is_empty()).then_some(m)
}

/// A cubin's kernels with ptxas's report, or why not.
fn cubin_kernels(c: &Compiled) -> Result<Vec<runner::cubin::CubinKernel>, String> {
    let bytes = std::fs::read(&c.object).map_err(|e| format!("{}: {e}", c.object.display()))?;
    runner::cubin::with_report(&bytes, c.log.as_deref())
        .map_err(|e| format!("{}: {e}", c.object.display()))
}

impl Gates {
    /// The NVIDIA signature and register gates of a variant's cubin against the baseline's.
    fn nvidia(&self, base: &Compiled, var: &Compiled, gates: &mut Vec<(&'static str, Outcome)>) {
        let (b, v) = match (cubin_kernels(base), cubin_kernels(var)) {
            (Ok(b), Ok(v)) => (b, v),
            (Err(e), _) | (_, Err(e)) => {
                gates.push((SIGNATURE, Outcome::Skipped(e.clone())));
                gates.push((PRESSURE, Outcome::Skipped(e)));
                return;
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
            return;
        }
        gates.push((SIGNATURE, Outcome::Pass));
        let arch = &self.compiler.arch;
        let mut why = Vec::new();
        for bk in &b {
            let Some(vk) = v.iter().find(|k| k.name == bk.name) else {
                continue;
            };
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
                if after.saturating_add(self.thresholds.max_occupancy_loss) < before {
                    reasons.push(format!(
                        "occupancy {before} -> {after} warps per SM ({} -> {} registers; at most {} may be lost)",
                        bk.registers, vk.registers, self.thresholds.max_occupancy_loss
                    ));
                }
            }
            if !reasons.is_empty() {
                let name = runner::signature::short_name(&bk.name);
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
    }

    /// Compile the baseline's copy of a file: `Err(first error line)` when it cannot be.
    pub fn baseline(&self, file: &Path) -> Result<Compiled, String> {
        if is_header(file) {
            return Err(format!(
                "{} is a header: not compiled on its own",
                file.display()
            ));
        }
        self.compiler.compile(file).map_err(|e| first_line(&e))
    }

    /// Run the code-object gates on a variant's copy of a file, against the baseline's
    /// compile (`Err` = the baseline could not be compiled: every gate is skipped). When every
    /// gate passed, [`Report::same_code`] says whether the variant's machine code is the
    /// baseline's ([`machine_code`]).
    pub fn check(&self, baseline: &Result<Compiled, String>, variant: &Path) -> Report {
        let mut var = None;
        let mut r = self.gates(baseline, variant, &mut var);
        if r.failure().is_none() && r.skipped().is_none() {
            if let (Ok(b), Some(v)) = (baseline, &var) {
                let out = self.compiler.output;
                r.same_code = machine_code(b, out).is_some_and(|m| Some(m) == machine_code(v, out));
            }
        }
        r
    }

    fn gates(
        &self,
        baseline: &Result<Compiled, String>,
        variant: &Path,
        out: &mut Option<Compiled>,
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
                    compiled: false,
                    same_code: false,
                };
            }
        };
        let var = match self.compiler.compile(variant) {
            Ok(v) => v,
            Err(e @ codeobj::compile::CompileError::CompilerMissing { .. }) => {
                // The carried-cache route: no compiler here and no object for this variant.
                let why = format!("not in the carried cache: {}", first_line(&e));
                for g in [COMPILE, SIGNATURE, PRESSURE] {
                    gates.push((g, Outcome::Skipped(why.clone())));
                }
                return Report {
                    gates,
                    compiled: false,
                    same_code: false,
                };
            }
            Err(e) => {
                gates.push((COMPILE, Outcome::Fail(first_line(&e))));
                return Report {
                    gates,
                    compiled: true,
                    same_code: false,
                };
            }
        };
        let compiled = !var.cached;
        *out = Some(var.clone());
        gates.push((COMPILE, Outcome::Pass));
        if self.compiler.output == Output::Cubin {
            self.nvidia(base, &var, &mut gates);
            return Report {
                same_code: false,
                gates,
                compiled,
            };
        }
        let mut diffs = Vec::new();
        if base.code_objects.len() != var.code_objects.len() {
            diffs.push(format!(
                "{} code objects, the variant {}",
                base.code_objects.len(),
                var.code_objects.len()
            ));
        }
        for (a, b) in base.code_objects.iter().zip(&var.code_objects) {
            diffs.extend(
                codeobj::signature::compare(a, b)
                    .into_iter()
                    .map(|d| d.to_string()),
            );
        }
        if !diffs.is_empty() {
            gates.push((SIGNATURE, Outcome::Fail(diffs.join("; "))));
            return Report {
                gates,
                compiled,
                same_code: false,
            };
        }
        gates.push((SIGNATURE, Outcome::Pass));
        let j = codeobj::judge::judge(
            &base.code_objects,
            &var.code_objects,
            &self.thresholds,
            None,
        );
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
                .collect();
            gates.push((PRESSURE, Outcome::Fail(why.join("; "))));
        } else {
            gates.push((PRESSURE, Outcome::Pass));
        }
        Report {
            gates,
            compiled,
            same_code: false,
        }
    }
}
