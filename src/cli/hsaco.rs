//! `check --hsaco FILE`: attaches per-kernel resources from a code object to a check report.

use std::path::Path;

/// Add [`guards::KernelResources`] to every function of `output` found in the code object(s)
/// at `hsaco`, and push a diagnostic for each kernel that already spills.
pub fn attach(output: &mut guards::CheckOutput, hsaco: &Path) -> anyhow::Result<()> {
    let _ = (output, hsaco);
    anyhow::bail!("`check --hsaco` is not built yet")
}
