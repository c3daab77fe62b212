//! The `vgpr-pressure` judge (pure): compares a variant's compiled kernels with the baseline's
//! and blocks the variant if it spills more (VGPR or SGPR), needs new scratch, or loses more
//! occupancy than allowed. No I/O here; [`crate::compile`] produces the inputs.

use crate::{CodeObject, Kernel, KernelResources};
use serde::ser::SerializeStruct;
use serde::{Serialize, Serializer};

/// Thresholds of the guard (`[vgpr-pressure]` in `hip-unroll.toml`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Thresholds {
    /// Waves per SIMD the variant may lose before it is blocked (0: any loss blocks).
    pub max_occupancy_loss: u32,
}

/// `before` and `after` in `pressure --format json`: the [`KernelResources`] without `arch`
/// (the verdict names it once), `scratch_bytes` before `lds_bytes`, as this document has always
/// been written.
fn figures<S: Serializer>(r: &KernelResources, s: S) -> Result<S::Ok, S::Error> {
    let mut st = s.serialize_struct("Figures", 9)?;
    st.serialize_field("vgpr_count", &r.vgpr_count)?;
    st.serialize_field("agpr_count", &r.agpr_count)?;
    st.serialize_field("sgpr_count", &r.sgpr_count)?;
    st.serialize_field("vgpr_spill_count", &r.vgpr_spill_count)?;
    st.serialize_field("sgpr_spill_count", &r.sgpr_spill_count)?;
    st.serialize_field("scratch_bytes", &r.scratch_bytes)?;
    st.serialize_field("lds_bytes", &r.lds_bytes)?;
    st.serialize_field("waves_per_simd", &r.waves_per_simd)?;
    st.serialize_field("limited_by", &r.limited_by)?;
    st.end()
}

fn figures_opt<S: Serializer>(r: &Option<KernelResources>, s: S) -> Result<S::Ok, S::Error> {
    match r {
        Some(r) => s.serialize_some(&Figures(r)),
        None => s.serialize_none(),
    }
}

struct Figures<'a>(&'a KernelResources);

impl Serialize for Figures<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        figures(self.0, s)
    }
}

/// Why a variant is blocked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "reason", rename_all = "kebab-case")]
pub enum Reason {
    VgprSpill {
        before: u32,
        after: u32,
    },
    SgprSpill {
        before: u32,
        after: u32,
    },
    NewScratch {
        before: u32,
        after: u32,
    },
    OccupancyLoss {
        before: u32,
        after: u32,
        allowed: u32,
    },
    /// The kernel is in the baseline but not in the variant's code object.
    MissingKernel,
}

impl std::fmt::Display for Reason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Reason::VgprSpill { before, after } => {
                write!(f, "spills {after} VGPRs (baseline {before})")
            }
            Reason::SgprSpill { before, after } => {
                write!(f, "spills {after} SGPRs (baseline {before})")
            }
            Reason::NewScratch { before, after } => write!(
                f,
                "uses {after} bytes of scratch per work-item (baseline {before})"
            ),
            Reason::OccupancyLoss {
                before,
                after,
                allowed,
            } => {
                write!(
                    f,
                    "occupancy {before} -> {after} waves per SIMD (at most {allowed} may be lost)"
                )
            }
            Reason::MissingKernel => write!(f, "kernel missing from the variant"),
        }
    }
}

/// The verdict on one kernel on one target.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KernelVerdict {
    pub kernel: String,
    pub demangled: Option<String>,
    pub arch: String,
    #[serde(serialize_with = "figures")]
    pub before: KernelResources,
    #[serde(serialize_with = "figures_opt")]
    pub after: Option<KernelResources>,
    pub blocked: bool,
    pub reasons: Vec<Reason>,
}

/// The verdict on a variant.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Judgement {
    pub blocked: bool,
    pub kernels: Vec<KernelVerdict>,
}

/// Judge one kernel's figures.
pub fn judge_numbers(
    before: &KernelResources,
    after: &KernelResources,
    t: &Thresholds,
) -> Vec<Reason> {
    let mut reasons = Vec::new();
    if after.vgpr_spill_count > before.vgpr_spill_count {
        reasons.push(Reason::VgprSpill {
            before: before.vgpr_spill_count,
            after: after.vgpr_spill_count,
        });
    }
    if after.sgpr_spill_count > before.sgpr_spill_count {
        reasons.push(Reason::SgprSpill {
            before: before.sgpr_spill_count,
            after: after.sgpr_spill_count,
        });
    }
    if after.scratch_bytes > before.scratch_bytes {
        reasons.push(Reason::NewScratch {
            before: before.scratch_bytes,
            after: after.scratch_bytes,
        });
    }
    if let (Some(b), Some(a)) = (before.waves_per_simd, after.waves_per_simd) {
        if a.saturating_add(t.max_occupancy_loss) < b {
            reasons.push(Reason::OccupancyLoss {
                before: b,
                after: a,
                allowed: t.max_occupancy_loss,
            });
        }
    }
    reasons
}

/// Whether `k` is selected by `filter` (its mangled name, demangled name, or bare name).
pub fn matches(k: &Kernel, filter: &str) -> bool {
    k.meta.name == filter
        || k.demangled.as_deref() == Some(filter)
        || crate::metadata::base_name(&k.meta.name) == filter
}

/// Judge `variant` against `baseline`: every baseline kernel (optionally only those matching
/// `kernel`) on every target, matched by target and mangled name.
pub fn judge(
    baseline: &[CodeObject],
    variant: &[CodeObject],
    t: &Thresholds,
    kernel: Option<&str>,
) -> Judgement {
    let mut kernels = Vec::new();
    for bco in baseline {
        let vco = variant
            .iter()
            .find(|v| v.target_id == bco.target_id)
            .or_else(|| variant.iter().find(|v| v.arch == bco.arch));
        for bk in &bco.kernels {
            if let Some(f) = kernel {
                if !matches(bk, f) {
                    continue;
                }
            }
            let before = KernelResources::of(bco, bk);
            let vk = vco.and_then(|v| {
                v.kernels
                    .iter()
                    .find(|k| k.meta.name == bk.meta.name)
                    .map(|k| (v, k))
            });
            let (after, reasons) = match vk {
                Some((vco, vk)) => {
                    let after = KernelResources::of(vco, vk);
                    let r = judge_numbers(&before, &after, t);
                    (Some(after), r)
                }
                None => (None, vec![Reason::MissingKernel]),
            };
            kernels.push(KernelVerdict {
                kernel: bk.meta.name.clone(),
                demangled: bk.demangled.clone(),
                arch: bco.arch.clone(),
                before,
                after,
                blocked: !reasons.is_empty(),
                reasons,
            });
        }
    }
    Judgement {
        blocked: kernels.iter().any(|k| k.blocked),
        kernels,
    }
}
