//! `check --hsaco FILE`: attaches per-kernel resources from a code object to a check report.

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
    let objects = codeobj::load(hsaco)?;
    if objects.is_empty() {
        anyhow::bail!("{}: no AMDGPU code object found", hsaco.display());
    }
    let mut diagnostics = Vec::new();
    for file in &mut output.files {
        for func in &mut file.functions {
            for co in &objects {
                for k in &co.kernels {
                    if codeobj::metadata::base_name(&k.meta.name) != func.name {
                        continue;
                    }
                    let occ = k.occupancy;
                    let res = KernelResources {
                        arch: co.arch.clone(),
                        vgpr_count: k.meta.vgpr_count,
                        agpr_count: k.meta.agpr_count.unwrap_or(0),
                        sgpr_count: k.meta.sgpr_count,
                        vgpr_spill_count: k.meta.vgpr_spill_count,
                        sgpr_spill_count: k.meta.sgpr_spill_count,
                        lds_bytes: k.meta.group_segment_fixed_size,
                        scratch_bytes: k.meta.private_segment_fixed_size,
                        waves_per_simd: occ.map(|o| o.waves_per_simd).unwrap_or(0),
                        limited_by: occ
                            .map(|o| o.limited_by.as_str().to_string())
                            .unwrap_or_else(|| "unknown".into()),
                    };
                    if !func.resources.contains(&res) {
                        func.resources.push(res);
                    }
                    if k.spills() {
                        diagnostics.push(Diagnostic {
                            path: file.path.clone(),
                            line: func.line,
                            column: 1,
                            rule: "vgpr-spill".into(),
                            severity: Severity::Warning,
                            message: format!(
                                "kernel `{}` already spills on {}: {} VGPRs and {} SGPRs spilled, {} bytes of scratch per work-item",
                                func.name,
                                co.arch,
                                k.meta.vgpr_spill_count,
                                k.meta.sgpr_spill_count,
                                k.meta.private_segment_fixed_size
                            ),
                            span: (0, 0),
                            related: Vec::new(),
                        });
                    }
                }
            }
        }
    }
    output.diagnostics.extend(diagnostics);
    Ok(())
}
