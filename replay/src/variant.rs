//! The code objects a replay runs: the snapshot's own (the baseline) and a variant, which must
//! have the same kernel signature and kernarg layout as the snapshot's kernel (checked through
//! `codeobj::signature` before anything runs), and the packet segment sizes each one needs:
//! the captured packet's sizes, with the static part swapped for the variant's own (dynamic
//! LDS and dynamic stack stay as captured).

use crate::hsaco;
use crate::snapshot::Snapshot;
use codeobj::signature::Difference;
use codeobj::KernelMeta;
use std::path::{Path, PathBuf};

/// LDS bytes a work-group may use on gfx9 (CDNA included).
pub const MAX_LDS: u32 = 65536;

/// A code object ready to load for the snapshot's dispatch.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// `None` for the snapshot's own `kernel.hsaco`.
    pub path: Option<PathBuf>,
    /// The bare ELF for the snapshot's processor.
    pub elf: Vec<u8>,
    pub kernel: KernelMeta,
    pub target_id: String,
    /// The symbol to look up in the loaded executable (`name.kd`).
    pub symbol: String,
    pub group_segment_size: u32,
    pub private_segment_size: u32,
}

#[derive(Debug, thiserror::Error)]
pub enum VariantError {
    #[error("{path}: {error}")]
    Io { path: String, error: std::io::Error },
    #[error("{path}: {what}")]
    Unusable { path: String, what: String },
    /// The variant's kernel cannot stand in for the captured one.
    #[error("{path}: refused: the variant's `{kernel}` differs from the captured kernel: {}", .differences.join("; "))]
    Refused {
        path: String,
        kernel: String,
        differences: Vec<String>,
    },
}

/// The snapshot's own code object.
pub fn baseline(s: &Snapshot) -> Result<Prepared, VariantError> {
    let path = s.dir.join(crate::snapshot::format::KERNEL_HSACO);
    prepare(s, &s.hsaco, &path, None)
}

/// A variant code object (a bare ELF or an offload bundle, e.g. `hipcc --genco` output),
/// checked against the snapshot's kernel.
pub fn variant(s: &Snapshot, path: &Path) -> Result<Prepared, VariantError> {
    let data = std::fs::read(path).map_err(|error| VariantError::Io {
        path: path.display().to_string(),
        error,
    })?;
    prepare(s, &data, path, Some(path.to_path_buf()))
}

fn prepare(
    s: &Snapshot,
    data: &[u8],
    path: &Path,
    variant_path: Option<PathBuf>,
) -> Result<Prepared, VariantError> {
    let shown = path.display().to_string();
    let unusable = |what: String| VariantError::Unusable {
        path: shown.clone(),
        what,
    };
    let processor = s.processor().to_string();
    let elf = hsaco::device_elf(data, &processor).map_err(unusable)?;
    let objects = codeobj::read(&elf, &shown).map_err(|e| unusable(e.to_string()))?;
    let (co, k) =
        hsaco::find_kernel(&objects, &processor, &s.dispatch.mangled_name).map_err(unusable)?;
    if variant_path.is_some() {
        if let Some(f) = feature_clash(&s.target_id, &co.target_id) {
            return Err(unusable(format!(
                "built for {} but the snapshot's code object is {} ({f})",
                co.target_id, s.target_id
            )));
        }
        let differences: Vec<String> =
            codeobj::signature::compare_kernels(&[&s.kernel], &[&k.meta])
                .into_iter()
                .filter(|d| {
                    !matches!(
                        d,
                        Difference::MissingKernel { .. } | Difference::ExtraKernel { .. }
                    )
                })
                .map(|d| d.to_string())
                .collect();
        if !differences.is_empty() {
            return Err(VariantError::Refused {
                path: shown,
                kernel: k.meta.name.clone(),
                differences,
            });
        }
    }
    let (group, private) = segment_sizes(
        s.dispatch.group_segment_size,
        s.dispatch.private_segment_size,
        &s.kernel,
        &k.meta,
    );
    if group > MAX_LDS {
        return Err(unusable(format!(
            "needs {group} bytes of LDS per work-group ({} static + the dispatch's {} dynamic); the limit is {MAX_LDS}",
            k.meta.group_segment_fixed_size,
            s.dispatch.group_segment_size - s.kernel.group_segment_fixed_size
        )));
    }
    let symbol = if k.meta.symbol.is_empty() {
        format!("{}.kd", k.meta.name)
    } else {
        k.meta.symbol.clone()
    };
    Ok(Prepared {
        path: variant_path,
        elf,
        kernel: k.meta.clone(),
        target_id: co.target_id.clone(),
        symbol,
        group_segment_size: group,
        private_segment_size: private,
    })
}

/// The packet's group and private segment sizes for `kernel`, given the captured packet's
/// sizes for `captured`: the dynamic part (packet minus static) is kept, the static part is the
/// kernel's own.
pub fn segment_sizes(
    packet_group: u32,
    packet_private: u32,
    captured: &KernelMeta,
    kernel: &KernelMeta,
) -> (u32, u32) {
    let dyn_group = packet_group.saturating_sub(captured.group_segment_fixed_size);
    let dyn_private = packet_private.saturating_sub(captured.private_segment_fixed_size);
    (
        kernel.group_segment_fixed_size.saturating_add(dyn_group),
        kernel
            .private_segment_fixed_size
            .saturating_add(dyn_private),
    )
}

/// A target feature (`xnack`, `sramecc`) set one way in `a` and the other in `b`.
fn feature_clash(a: &str, b: &str) -> Option<String> {
    let feats = |t: &str| -> Vec<(String, char)> {
        t.split(':')
            .skip(1)
            .filter_map(|f| {
                let sign = f.chars().last()?;
                matches!(sign, '+' | '-').then(|| (f[..f.len() - 1].to_string(), sign))
            })
            .collect()
    };
    let fb = feats(b);
    feats(a).into_iter().find_map(|(name, sa)| {
        fb.iter()
            .find(|(n, sb)| *n == name && *sb != sa)
            .map(|_| format!("{name} differs"))
    })
}

/// Byte offset of the kernarg `hidden_queue_ptr`, which must point at the queue the dispatch
/// runs on: replay rewrites it with its own queue's address.
pub fn queue_ptr_offset(kernel: &KernelMeta) -> Option<usize> {
    kernel
        .args
        .iter()
        .find(|a| a.value_kind == "hidden_queue_ptr" && a.size == 8)
        .map(|a| a.offset as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn features() {
        assert_eq!(
            feature_clash("gfx90a:sramecc+:xnack-", "gfx90a:sramecc+:xnack+"),
            Some("xnack differs".into())
        );
        assert_eq!(feature_clash("gfx90a:sramecc+:xnack-", "gfx90a"), None);
        assert_eq!(feature_clash("gfx90a", "gfx90a:xnack+"), None);
    }
}
