//! Occupancy (waves per SIMD) of a kernel from its VGPRs, SGPRs, LDS and workgroup size, per
//! architecture, following LLVM's AMDGPU backend:
//! `llvm/lib/Target/AMDGPU/Utils/AMDGPUBaseInfo.cpp` (`IsaInfo::getMaxWavesPerEU`,
//! `getVGPRAllocGranule`, `getTotalNumVGPRs`, `getAddressableNumVGPRs`,
//! `getNumWavesPerEUWithNumVGPRs`, `getOccupancyWithNumSGPRs`, `getEUsPerCU`,
//! `getMaxWorkGroupsPerCU`, `getLocalMemorySize`) and `AMDGPUSubtarget.cpp`
//! (`getOccupancyWithLocalMemSize`). Each function below names the LLVM function it mirrors.
//!
//! Inputs are the code object's own numbers: `.vgpr_count` (on gfx90a/gfx94x already arch VGPRs
//! rounded to 4 plus AGPRs, LLVM's `getTotalNumVGPRs(has90AInsts, AGPR, VGPR)`; elsewhere the
//! larger of the two files), `.sgpr_count` (including VCC/flat-scratch/XNACK extras),
//! `.group_segment_fixed_size` (static LDS only) and `.max_flat_workgroup_size`.

use serde::Serialize;

/// Register-file and scheduling family: the feature bits LLVM's formulas branch on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Family {
    /// gfx900..gfx908 (and gfx909, gfx90c): 256 VGPRs, granule 4, 10 waves.
    Gfx9,
    /// `FeatureGFX90AInsts`: gfx90a, gfx940/941/942, gfx950: unified 512-entry file, granule 8, 8 waves.
    Gfx90a,
    /// gfx1010..gfx1013: 20 waves per SIMD.
    Gfx10_1,
    /// gfx1030..gfx1036 (`hasGFX10_3Insts`): 16 waves per SIMD.
    Gfx10_3,
    /// gfx11 (also `hasGFX10_3Insts`): 16 waves per SIMD.
    Gfx11,
}

/// What LLVM knows about one processor that matters for occupancy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ArchInfo {
    pub family: Family,
    /// `Feature1_5xVGPRs` (gfx1100, gfx1101, gfx1151): 50% more VGPRs and a 50% larger granule.
    pub extra_vgprs: bool,
    /// LDS bytes per CU (`FeatureLocalMemorySize65536`, or 163840 on gfx950).
    pub lds_per_cu: u32,
}

/// The processors hip-unroll knows; `None` for others (gfx12 and older than gfx9 included).
pub fn arch_info(processor: &str) -> Option<ArchInfo> {
    use Family::*;
    let (family, extra_vgprs, lds_per_cu) = match processor {
        "gfx900" | "gfx902" | "gfx904" | "gfx906" | "gfx908" | "gfx909" | "gfx90c" => (Gfx9, false, 65536),
        "gfx90a" | "gfx940" | "gfx941" | "gfx942" => (Gfx90a, false, 65536),
        "gfx950" => (Gfx90a, false, 163840),
        "gfx1010" | "gfx1011" | "gfx1012" | "gfx1013" => (Gfx10_1, false, 65536),
        "gfx1030" | "gfx1031" | "gfx1032" | "gfx1033" | "gfx1034" | "gfx1035" | "gfx1036" => (Gfx10_3, false, 65536),
        "gfx1100" | "gfx1101" | "gfx1151" => (Gfx11, true, 65536),
        "gfx1102" | "gfx1103" | "gfx1150" => (Gfx11, false, 65536),
        _ => return None,
    };
    Some(ArchInfo { family, extra_vgprs, lds_per_cu })
}

impl ArchInfo {
    fn gfx10_plus(&self) -> bool {
        matches!(self.family, Family::Gfx10_1 | Family::Gfx10_3 | Family::Gfx11)
    }

    /// `IsaInfo::getMaxWavesPerEU`: 8 with GFX90AInsts, 10 before gfx10, 16 with GFX10_3Insts, else 20.
    pub fn max_waves_per_eu(&self) -> u32 {
        match self.family {
            Family::Gfx90a => 8,
            Family::Gfx9 => 10,
            Family::Gfx10_3 | Family::Gfx11 => 16,
            Family::Gfx10_1 => 20,
        }
    }

    /// `IsaInfo::getVGPRAllocGranule`: 8 with GFX90AInsts; with 1.5x VGPRs 24 (wave32) / 12
    /// (wave64); with GFX10_3Insts 16 / 8; otherwise 8 / 4.
    pub fn vgpr_alloc_granule(&self, wave32: bool) -> u32 {
        if self.family == Family::Gfx90a {
            return 8;
        }
        if self.extra_vgprs {
            return if wave32 { 24 } else { 12 };
        }
        if matches!(self.family, Family::Gfx10_3 | Family::Gfx11) {
            return if wave32 { 16 } else { 8 };
        }
        if wave32 {
            8
        } else {
            4
        }
    }

    /// `IsaInfo::getTotalNumVGPRs`: 512 with GFX90AInsts, 256 before gfx10; gfx10+: 1536 / 768
    /// with 1.5x VGPRs, else 1024 / 512 (wave32 / wave64).
    pub fn total_num_vgprs(&self, wave32: bool) -> u32 {
        match self.family {
            Family::Gfx90a => 512,
            Family::Gfx9 => 256,
            _ if self.extra_vgprs => {
                if wave32 {
                    1536
                } else {
                    768
                }
            }
            _ => {
                if wave32 {
                    1024
                } else {
                    512
                }
            }
        }
    }

    /// `IsaInfo::getAddressableNumVGPRs`: 512 with GFX90AInsts, else 256.
    pub fn addressable_num_vgprs(&self) -> u32 {
        if self.family == Family::Gfx90a {
            512
        } else {
            256
        }
    }

    /// `IsaInfo::getNumWavesPerEUWithNumVGPRs`: fewer VGPRs than one granule gives the maximum;
    /// otherwise `min(max(total / alignTo(vgprs, granule), 1), max waves)`.
    pub fn waves_with_vgprs(&self, vgprs: u32, wave32: bool) -> u32 {
        let granule = self.vgpr_alloc_granule(wave32);
        let max = self.max_waves_per_eu();
        if vgprs < granule {
            return max;
        }
        let rounded = vgprs.div_ceil(granule) * granule;
        (self.total_num_vgprs(wave32) / rounded).max(1).min(max)
    }

    /// `getOccupancyWithNumSGPRs` (AMDGPUBaseInfo / GCNSubtarget), clamped to the maximum waves:
    /// gfx10+ has no SGPR limit; gfx8/gfx9 (800 SGPRs, granule 16): <= 80 -> 10, <= 88 -> 9,
    /// <= 100 -> 8, else 7.
    pub fn waves_with_sgprs(&self, sgprs: u32) -> u32 {
        let max = self.max_waves_per_eu();
        if self.gfx10_plus() {
            return max;
        }
        let w = match sgprs {
            0..=80 => 10,
            81..=88 => 9,
            89..=100 => 8,
            _ => 7,
        };
        w.min(max)
    }

    /// `IsaInfo::getEUsPerCU`: 2 SIMDs per CU on gfx10+ in CU mode; 4 otherwise (gfx9, or a WGP).
    pub fn eus_per_cu(&self, wgp_mode: bool) -> u32 {
        if self.gfx10_plus() && !wgp_mode {
            2
        } else {
            4
        }
    }

    /// `IsaInfo::getLocalMemorySize`: LDS per CU, doubled on gfx10+ in WGP mode.
    pub fn local_memory_size(&self, wgp_mode: bool) -> u32 {
        if self.gfx10_plus() && wgp_mode {
            self.lds_per_cu * 2
        } else {
            self.lds_per_cu
        }
    }

    /// `IsaInfo::getMaxWorkGroupsPerCU`: single-wave workgroups are limited by wave slots only;
    /// otherwise `min(wave slots / waves per group, barriers)` with 16 barriers (32 in WGP mode).
    pub fn max_workgroups_per_cu(&self, workgroup_size: u32, wave_size: u32, wgp_mode: bool) -> u32 {
        let max_waves = self.max_waves_per_eu() * self.eus_per_cu(wgp_mode);
        let n = workgroup_size.max(1).div_ceil(wave_size.max(1));
        if n == 1 {
            return max_waves;
        }
        let barriers = if self.gfx10_plus() && wgp_mode { 32 } else { 16 };
        (max_waves / n).min(barriers)
    }

    /// `AMDGPUSubtarget::getOccupancyWithLocalMemSize`: workgroups that fit in LDS (at least one
    /// wave if none fits), capped by `max_workgroups_per_cu`, times waves per group, spread over
    /// the SIMDs (rounded up), capped by the maximum waves.
    pub fn waves_with_lds(&self, lds_bytes: u32, workgroup_size: u32, wave_size: u32, wgp_mode: bool) -> u32 {
        let max_groups = self.max_workgroups_per_cu(workgroup_size, wave_size, wgp_mode);
        if max_groups == 0 {
            return 0;
        }
        let groups = self.local_memory_size(wgp_mode) / lds_bytes.max(1);
        if groups == 0 {
            return 1;
        }
        let groups = groups.min(max_groups);
        let waves_per_group = workgroup_size.max(1).div_ceil(wave_size.max(1));
        (groups * waves_per_group).div_ceil(self.eus_per_cu(wgp_mode)).min(self.max_waves_per_eu())
    }
}

/// What a kernel uses, as read from its code object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Usage {
    pub vgprs: u32,
    pub sgprs: u32,
    pub lds_bytes: u32,
    pub workgroup_size: u32,
    pub wave_size: u32,
    /// gfx10+: workgroup-processor mode (LLVM's default unless `-mcumode`); ignored before gfx10.
    pub wgp_mode: bool,
}

/// The resource that binds occupancy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Limit {
    Vgpr,
    Sgpr,
    Lds,
    Workgroup,
}

impl Limit {
    pub fn as_str(self) -> &'static str {
        match self {
            Limit::Vgpr => "vgpr",
            Limit::Sgpr => "sgpr",
            Limit::Lds => "lds",
            Limit::Workgroup => "workgroup",
        }
    }
}

/// Waves per SIMD and each limit's own bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Occupancy {
    pub waves_per_simd: u32,
    /// The binding limit: the first of vgpr, sgpr, workgroup, lds whose bound equals
    /// `waves_per_simd` (so `lds` only when LDS is strictly tighter than the workgroup limit,
    /// which it includes). When nothing binds below the maximum, this is `vgpr`.
    pub limited_by: Limit,
    pub max_waves: u32,
    pub by_vgpr: u32,
    pub by_sgpr: u32,
    /// `getOccupancyWithLocalMemSize` with no LDS: the workgroup-size and barrier limit alone.
    pub by_workgroup: u32,
    pub by_lds: u32,
}

/// The occupancy of `usage` on `arch`.
pub fn occupancy(arch: &ArchInfo, usage: &Usage) -> Occupancy {
    let wave32 = usage.wave_size == 32;
    let wave = if usage.wave_size == 0 { 64 } else { usage.wave_size };
    let wg = if usage.workgroup_size == 0 { 1024 } else { usage.workgroup_size };
    let by_vgpr = arch.waves_with_vgprs(usage.vgprs, wave32);
    let by_sgpr = arch.waves_with_sgprs(usage.sgprs);
    let by_workgroup = arch.waves_with_lds(0, wg, wave, usage.wgp_mode);
    let by_lds = arch.waves_with_lds(usage.lds_bytes, wg, wave, usage.wgp_mode);
    let waves = by_vgpr.min(by_sgpr).min(by_workgroup).min(by_lds);
    let limited_by = if by_vgpr == waves {
        Limit::Vgpr
    } else if by_sgpr == waves {
        Limit::Sgpr
    } else if by_workgroup == waves {
        Limit::Workgroup
    } else {
        Limit::Lds
    };
    Occupancy { waves_per_simd: waves, limited_by, max_waves: arch.max_waves_per_eu(), by_vgpr, by_sgpr, by_workgroup, by_lds }
}
