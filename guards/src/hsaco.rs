//! `check --hsaco FILE`: attaches per-kernel resources from a code object to a check report.

use crate::{CheckOutput, Diagnostic, FunctionReport, KernelResources, Severity};
use codeobj::CodeObject;
use std::path::{Path, PathBuf};

/// Why a code object could not be joined to a report.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The file could not be read or parsed (the error names the file).
    #[error(transparent)]
    Load(#[from] codeobj::LoadError),
    #[error("{}: no AMDGPU code object found", .0.display())]
    NoCodeObject(PathBuf),
}

/// Add [`KernelResources`] to every function of `output` found in the code object(s) at
/// `hsaco`, and push a diagnostic for each kernel that already spills (see [`attach_objects`]).
pub fn attach(output: &mut CheckOutput, hsaco: &Path) -> Result<(), Error> {
    let objects = codeobj::load(hsaco)?;
    if objects.is_empty() {
        return Err(Error::NoCodeObject(hsaco.to_path_buf()));
    }
    attach_objects(output, &objects);
    Ok(())
}

/// Add [`KernelResources`] to every function of `output` found among `objects`, and push a
/// `vgpr-spill` warning for each kernel that already spills.
///
/// Kernels are matched to source functions by bare name: the demangled name without namespace,
/// template arguments and parameters (`void scale<4>(float*)` matches `scale`), or the symbol
/// itself for `extern "C"` kernels. Every target in the file and every template instantiation
/// with distinct figures adds one entry. Occupancy stays unknown (`None`) on processors whose
/// occupancy rules are not known.
pub fn attach_objects(output: &mut CheckOutput, objects: &[CodeObject]) {
    // Every kernel of every target once, with the bare name functions are matched by.
    let kernels: Vec<(String, KernelResources)> = objects
        .iter()
        .flat_map(|co| co.kernels.iter().map(move |k| (co, k)))
        .map(|(co, k)| {
            (
                codeobj::metadata::base_name(&k.meta.name),
                KernelResources::of(co, k),
            )
        })
        .collect();
    for file in &mut output.files {
        for func in &mut file.functions {
            for (_, res) in kernels.iter().filter(|(name, _)| *name == func.name) {
                if !func.resources.contains(res) {
                    func.resources.push(res.clone());
                }
                if res.spills() {
                    output
                        .diagnostics
                        .push(spill_diagnostic(&file.path, func, res));
                }
            }
        }
    }
}

fn spill_diagnostic(path: &str, func: &FunctionReport, k: &KernelResources) -> Diagnostic {
    Diagnostic {
        path: path.to_string(),
        line: func.line,
        column: 1,
        rule: "vgpr-spill".into(),
        // `vgpr-spill` is reported under the `vgpr-pressure` rule's registered severity.
        severity: crate::rules::lookup(crate::rules::vgpr_pressure::ID)
            .map_or(Severity::Warning, |r| r.severity),
        message: format!(
            "kernel `{}` already spills on {}: {} VGPRs and {} SGPRs spilled, {} bytes of scratch per work-item",
            func.name, k.arch, k.vgpr_spill_count, k.sgpr_spill_count, k.scratch_bytes
        ),
        span: (0, 0),
        related: Vec::new(),
        fix: None,
    }
}
