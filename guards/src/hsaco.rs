//! `check --hsaco FILE`: attaches per-kernel resources from a code object to a check report.

use codeobj::inspect::KernelRow;
use guards::{Diagnostic, KernelResources, Severity};
use std::path::Path;

/// Add [`guards::KernelResources`] to every function of `output` found in the code object(s)
/// at `hsaco`, and push a diagnostic for each kernel that already spills.
///
/// Kernels are matched to source functions by bare name: the demangled name without namespace,
/// template arguments and parameters (`void scale<4>(float*)` matches `scale`), or the symbol
/// itself for `extern "C"` kernels. Every target in the file and every template instantiation
/// with distinct figures adds one entry.
pub fn attach(output: &mut guards::CheckOutput, hsaco: &Path) -> anyhow::Result<()> {
    let objects =
        codeobj::load(hsaco).map_err(|e| anyhow::anyhow!(crate::files::load_error(&e)))?;
    if objects.is_empty() {
        anyhow::bail!("{}: no AMDGPU code object found", hsaco.display());
    }
    // Every kernel of every target once, with the bare name functions are matched by.
    let kernels: Vec<(String, KernelRow)> = objects
        .iter()
        .flat_map(|co| co.kernels.iter().map(move |k| (co, k)))
        .map(|(co, k)| {
            (
                codeobj::metadata::base_name(&k.meta.name),
                KernelRow::new(co, k),
            )
        })
        .collect();
    for file in &mut output.files {
        for func in &mut file.functions {
            for (_, k) in kernels.iter().filter(|(name, _)| *name == func.name) {
                let res = resources(k);
                if !func.resources.contains(&res) {
                    func.resources.push(res);
                }
                if k.vgpr_spill_count > 0 || k.sgpr_spill_count > 0 {
                    output
                        .diagnostics
                        .push(spill_diagnostic(&file.path, func, k));
                }
            }
        }
    }
    Ok(())
}

/// The figures of the check report (the `inspect` row, occupancy `0`/`unknown` when the
/// target's rules are not known).
fn resources(k: &KernelRow) -> KernelResources {
    KernelResources {
        arch: k.arch.clone(),
        vgpr_count: k.vgpr_count,
        agpr_count: k.agpr_count,
        sgpr_count: k.sgpr_count,
        vgpr_spill_count: k.vgpr_spill_count,
        sgpr_spill_count: k.sgpr_spill_count,
        lds_bytes: k.lds_bytes,
        scratch_bytes: k.scratch_bytes,
        waves_per_simd: k.occupancy.as_ref().map_or(0, |o| o.waves_per_simd),
        limited_by: k
            .occupancy
            .as_ref()
            .map_or("unknown", |o| o.limited_by)
            .to_string(),
    }
}

fn spill_diagnostic(path: &str, func: &guards::FunctionReport, k: &KernelRow) -> Diagnostic {
    Diagnostic {
        path: path.to_string(),
        line: func.line,
        column: 1,
        rule: "vgpr-spill".into(),
        severity: Severity::Warning,
        message: format!(
            "kernel `{}` already spills on {}: {} VGPRs and {} SGPRs spilled, {} bytes of scratch per work-item",
            func.name, k.arch, k.vgpr_spill_count, k.sgpr_spill_count, k.scratch_bytes
        ),
        span: (0, 0),
        related: Vec::new(),
    }
}
