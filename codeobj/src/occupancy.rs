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
        "gfx900" | "gfx902" | "gfx904" | "gfx906" | "gfx908" | "gfx909" | "gfx90c" => {
            (Gfx9, false, 65536)
        }
        "gfx90a" | "gfx940" | "gfx941" | "gfx942" => (Gfx90a, false, 65536),
        "gfx950" => (Gfx90a, false, 163840),
        "gfx1010" | "gfx1011" | "gfx1012" | "gfx1013" => (Gfx10_1, false, 65536),
        "gfx1030" | "gfx1031" | "gfx1032" | "gfx1033" | "gfx1034" | "gfx1035" | "gfx1036" => {
            (Gfx10_3, false, 65536)
        }
        "gfx1100" | "gfx1101" | "gfx1151" => (Gfx11, true, 65536),
        "gfx1102" | "gfx1103" | "gfx1150" => (Gfx11, false, 65536),
        _ => return None,
    };
    Some(ArchInfo {
        family,
        extra_vgprs,
        lds_per_cu,
    })
}

impl ArchInfo {
    fn gfx10_plus(&self) -> bool {
        matches!(
            self.family,
            Family::Gfx10_1 | Family::Gfx10_3 | Family::Gfx11
        )
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
        let rounded = vgprs.div_ceil(granule).saturating_mul(granule);
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
    pub fn max_workgroups_per_cu(
        &self,
        workgroup_size: u32,
        wave_size: u32,
        wgp_mode: bool,
    ) -> u32 {
        let max_waves = self.max_waves_per_eu() * self.eus_per_cu(wgp_mode);
        let n = workgroup_size.max(1).div_ceil(wave_size.max(1));
        if n == 1 {
            return max_waves;
        }
        let barriers = if self.gfx10_plus() && wgp_mode {
            32
        } else {
            16
        };
        (max_waves / n).min(barriers)
    }

    /// `AMDGPUSubtarget::getOccupancyWithLocalMemSize`: workgroups that fit in LDS (at least one
    /// wave if none fits), capped by `max_workgroups_per_cu`, times waves per group, spread over
    /// the SIMDs (rounded up), capped by the maximum waves.
    pub fn waves_with_lds(
        &self,
        lds_bytes: u32,
        workgroup_size: u32,
        wave_size: u32,
        wgp_mode: bool,
    ) -> u32 {
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
        (groups * waves_per_group)
            .div_ceil(self.eus_per_cu(wgp_mode))
            .min(self.max_waves_per_eu())
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
#[serde(rename_all = "kebab-case")]
pub enum Limit {
    Vgpr,
    Sgpr,
    Lds,
    Workgroup,
    /// Nothing binds below the hardware's maximum waves per SIMD: the wave cap itself.
    WaveCap,
}

impl Limit {
    pub fn as_str(self) -> &'static str {
        match self {
            Limit::Vgpr => "vgpr",
            Limit::Sgpr => "sgpr",
            Limit::Lds => "lds",
            Limit::Workgroup => "workgroup",
            Limit::WaveCap => "wave-cap",
        }
    }
}

/// Waves per SIMD and each limit's own bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Occupancy {
    pub waves_per_simd: u32,
    /// The binding limit: `wave-cap` when nothing binds below the hardware's maximum waves per
    /// SIMD; else the first of vgpr, sgpr, workgroup, lds whose bound equals `waves_per_simd`
    /// (so `lds` only when LDS is strictly tighter than the workgroup limit, which it includes).
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
    let wave = if usage.wave_size == 0 {
        64
    } else {
        usage.wave_size
    };
    let wg = if usage.workgroup_size == 0 {
        1024
    } else {
        usage.workgroup_size
    };
    let by_vgpr = arch.waves_with_vgprs(usage.vgprs, wave32);
    let by_sgpr = arch.waves_with_sgprs(usage.sgprs);
    let by_workgroup = arch.waves_with_lds(0, wg, wave, usage.wgp_mode);
    let by_lds = arch.waves_with_lds(usage.lds_bytes, wg, wave, usage.wgp_mode);
    let waves = by_vgpr.min(by_sgpr).min(by_workgroup).min(by_lds);
    let limited_by = if waves == arch.max_waves_per_eu() {
        Limit::WaveCap
    } else if by_vgpr == waves {
        Limit::Vgpr
    } else if by_sgpr == waves {
        Limit::Sgpr
    } else if by_workgroup == waves {
        Limit::Workgroup
    } else {
        Limit::Lds
    };
    Occupancy {
        waves_per_simd: waves,
        limited_by,
        max_waves: arch.max_waves_per_eu(),
        by_vgpr,
        by_sgpr,
        by_workgroup,
        by_lds,
    }
}

#[cfg(test)]
mod tests {
    //! Expected values are computed by hand from the LLVM formulas cited above; each comment
    //! shows the arithmetic.
    use super::*;

    fn arch(p: &str) -> ArchInfo {
        arch_info(p).unwrap()
    }

    fn usage(vgprs: u32, sgprs: u32, lds: u32, wg: u32, wave: u32, wgp: bool) -> Usage {
        Usage {
            vgprs,
            sgprs,
            lds_bytes: lds,
            workgroup_size: wg,
            wave_size: wave,
            wgp_mode: wgp,
        }
    }

    #[test]
    fn gfx90a_vgpr_boundaries() {
        // granule 8, 512 unified registers, at most 8 waves: min(8, max(1, 512 / alignTo(v, 8))).
        let a = arch("gfx90a");
        let cases = [
            (0, 8),   // < granule: max waves
            (7, 8),   // < granule
            (64, 8),  // 512/64 = 8
            (65, 7),  // 512/72 = 7.1
            (96, 5),  // 512/96 = 5.3
            (128, 4), // 512/128 = 4
            (129, 3), // 512/136 = 3.8
            (256, 2), // 512/256 = 2
            (257, 1), // 512/264 = 1.9
            (512, 1), // 512/512 = 1
        ];
        for (v, w) in cases {
            assert_eq!(a.waves_with_vgprs(v, false), w, "gfx90a vgpr {v}");
        }
        // gfx940/941/942 and gfx950 share the GFX90AInsts rules.
        for p in ["gfx940", "gfx941", "gfx942", "gfx950"] {
            assert_eq!(arch(p).waves_with_vgprs(129, false), 3, "{p}");
        }
    }

    #[test]
    fn absurd_register_counts_give_one_wave() {
        // A forged metadata note may claim any u32: rounding it up to the granule must not
        // overflow (to 0, then a division by zero).
        for p in ["gfx90a", "gfx908", "gfx1100"] {
            for wave32 in [false, true] {
                assert_eq!(arch(p).waves_with_vgprs(u32::MAX, wave32), 1, "{p}");
            }
        }
        assert_eq!(arch("gfx90a").waves_with_sgprs(u32::MAX), 7);
    }

    #[test]
    fn gfx908_vgpr_boundaries() {
        // granule 4, 256 VGPRs, at most 10 waves.
        let a = arch("gfx908");
        let cases = [
            (24, 10), // 256/24 = 10.7 -> 10
            (25, 9),  // 256/28 = 9.1
            (32, 8),  // 256/32
            (36, 7),  // 256/36 = 7.1
            (64, 4),  // 256/64
            (65, 3),  // 256/68 = 3.8
            (128, 2), // 256/128
            (129, 1), // 256/132 = 1.9
            (256, 1),
        ];
        for (v, w) in cases {
            assert_eq!(a.waves_with_vgprs(v, false), w, "gfx908 vgpr {v}");
        }
        assert_eq!(arch("gfx900").waves_with_vgprs(65, false), 3);
    }

    #[test]
    fn gfx10_3_and_gfx11_vgpr_boundaries() {
        // gfx1030: wave32 granule 16 of 1024, wave64 granule 8 of 512; at most 16 waves.
        let a = arch("gfx1030");
        for (v, w) in [(64, 16), (65, 12), (128, 8), (129, 7), (256, 4)] {
            // 1024/64=16; 1024/80=12.8; 1024/128=8; 1024/144=7.1; 1024/256=4
            assert_eq!(a.waves_with_vgprs(v, true), w, "gfx1030 w32 vgpr {v}");
        }
        for (v, w) in [(32, 16), (33, 12), (64, 8), (65, 7), (256, 2)] {
            // 512/32=16; 512/40=12.8; 512/64=8; 512/72=7.1; 512/256=2
            assert_eq!(a.waves_with_vgprs(v, false), w, "gfx1030 w64 vgpr {v}");
        }
        // gfx1100 (1.5x VGPRs): wave32 granule 24 of 1536, wave64 granule 12 of 768.
        let a = arch("gfx1100");
        for (v, w) in [(96, 16), (97, 12), (192, 8), (193, 7), (256, 5)] {
            // 1536/96=16; 1536/120=12.8; 1536/192=8; 1536/216=7.1; 1536/264=5.8
            assert_eq!(a.waves_with_vgprs(v, true), w, "gfx1100 w32 vgpr {v}");
        }
        for (v, w) in [(48, 16), (49, 12), (96, 8), (97, 7)] {
            // 768/48=16; 768/60=12.8; 768/96=8; 768/108=7.1
            assert_eq!(a.waves_with_vgprs(v, false), w, "gfx1100 w64 vgpr {v}");
        }
        // gfx1102 has no extra VGPRs: the gfx1030 numbers.
        assert_eq!(arch("gfx1102").waves_with_vgprs(65, true), 12);
        assert_eq!(arch("gfx1102").waves_with_vgprs(97, true), 9); // 1024/112 = 9.1
                                                                   // gfx1010: wave32 granule 8 of 1024, wave64 granule 4 of 512; at most 20 waves.
        let a = arch("gfx1010");
        assert_eq!(a.waves_with_vgprs(48, true), 20); // 1024/48 = 21.3 -> 20
        assert_eq!(a.waves_with_vgprs(51, true), 18); // 1024/56 = 18.3
        assert_eq!(a.waves_with_vgprs(24, false), 20); // 512/24 = 21.3 -> 20
        assert_eq!(a.waves_with_vgprs(25, false), 18); // 512/28 = 18.3
    }

    #[test]
    fn sgpr_limits() {
        // gfx8/9: <= 80 -> 10, <= 88 -> 9, <= 100 -> 8, else 7; clamped to the max waves.
        let a = arch("gfx908");
        for (s, w) in [
            (80, 10),
            (81, 9),
            (88, 9),
            (89, 8),
            (100, 8),
            (101, 7),
            (102, 7),
        ] {
            assert_eq!(a.waves_with_sgprs(s), w, "gfx908 sgpr {s}");
        }
        let a = arch("gfx90a");
        assert_eq!(a.waves_with_sgprs(80), 8); // min(10, 8)
        assert_eq!(a.waves_with_sgprs(101), 7);
        // gfx10+: no SGPR limit.
        assert_eq!(arch("gfx1030").waves_with_sgprs(106), 16);
        assert_eq!(arch("gfx1100").waves_with_sgprs(106), 16);
        let o = occupancy(&arch("gfx908"), &usage(32, 101, 0, 256, 64, false));
        assert_eq!((o.waves_per_simd, o.limited_by), (7, Limit::Sgpr)); // vgpr 8, sgpr 7
    }

    #[test]
    fn lds_limits() {
        // gfx90a, 256-thread groups of wave64: 4 waves per group, 4 SIMDs, 32 wave slots per CU,
        // max groups per CU = min(32/4, 16 barriers) = 8; 64 KiB of LDS per CU.
        let a = arch("gfx90a");
        let lds = |b| a.waves_with_lds(b, 256, 64, false);
        assert_eq!(lds(0), 8); // min(8, 65536) groups * 4 waves / 4 SIMDs = 8
        assert_eq!(lds(16384), 4); // 4 groups * 4 / 4
        assert_eq!(lds(16385), 3); // 65536/16385 = 3 groups -> 12 waves / 4
        assert_eq!(lds(32768), 2);
        assert_eq!(lds(65536), 1);
        assert_eq!(lds(65537), 1); // nothing fits: LLVM assumes 1
        let o = occupancy(&a, &usage(32, 20, 16385, 256, 64, false));
        assert_eq!((o.waves_per_simd, o.limited_by), (3, Limit::Lds));
        // 1024-thread groups: 16 waves, max groups = min(32/16, 16) = 2.
        assert_eq!(a.waves_with_lds(32768, 1024, 64, false), 8); // 2 groups * 16 / 4
        assert_eq!(a.waves_with_lds(32769, 1024, 64, false), 4); // 1 group * 16 / 4
                                                                 // gfx950 has 160 KiB: 163840/40960 = 4 groups of 256 -> 4 waves; gfx942 fits 1.
        assert_eq!(arch("gfx950").waves_with_lds(40960, 256, 64, false), 4);
        assert_eq!(arch("gfx942").waves_with_lds(40960, 256, 64, false), 1);
        // gfx1030 wave32, 256 threads = 8 waves. WGP mode: 4 SIMDs, 64 slots, 32 barriers,
        // 128 KiB: groups = min(64/8, 32) = 8. CU mode: 2 SIMDs, 32 slots, 16 barriers, 64 KiB:
        // groups = min(32/8, 16) = 4.
        let a = arch("gfx1030");
        assert_eq!(a.waves_with_lds(0, 256, 32, true), 16); // 8*8/4
        assert_eq!(a.waves_with_lds(32768, 256, 32, true), 8); // 131072/32768 = 4 groups -> 32/4
        assert_eq!(a.waves_with_lds(0, 256, 32, false), 16); // 4*8/2
        assert_eq!(a.waves_with_lds(16384, 256, 32, false), 16); // 65536/16384 = 4 -> 32/2
        assert_eq!(a.waves_with_lds(32768, 256, 32, false), 8); // 2 groups -> 16/2
    }

    #[test]
    fn workgroup_limits() {
        // gfx908, 1024 threads wave64 = 16 waves; 40 slots per CU: min(40/16, 16) = 2 groups
        // -> 32 waves / 4 SIMDs = 8 < 10.
        let o = occupancy(&arch("gfx908"), &usage(16, 16, 0, 1024, 64, false));
        assert_eq!(
            (o.waves_per_simd, o.limited_by, o.by_vgpr),
            (8, Limit::Workgroup, 10)
        );
        // gfx908, 128 threads = 2 waves: min(40/2, 16 barriers) = 16 groups -> 32 / 4 = 8.
        let o = occupancy(&arch("gfx908"), &usage(16, 16, 0, 128, 64, false));
        assert_eq!((o.waves_per_simd, o.limited_by), (8, Limit::Workgroup));
        // gfx908, 64 threads = 1 wave: no barrier limit, 40 groups -> 10.
        let o = occupancy(&arch("gfx908"), &usage(16, 16, 0, 64, 64, false));
        assert_eq!(o.waves_per_simd, 10);
        // gfx90a, 768 threads = 12 waves: min(32/12, 16) = 2 groups -> 24 / 4 = 6.
        let o = occupancy(&arch("gfx90a"), &usage(16, 16, 0, 768, 64, false));
        assert_eq!((o.waves_per_simd, o.limited_by), (6, Limit::Workgroup));
        // gfx1100 wave32, 1024 threads = 32 waves; CU mode: 32 slots -> 1 group -> 32/2 = 16.
        let o = occupancy(&arch("gfx1100"), &usage(16, 16, 0, 1024, 32, false));
        assert_eq!(o.waves_per_simd, 16);
        // Nothing binds below the maximum: the hardware wave cap is the limiter (it was
        // reported as `vgpr`), also when the VGPR bound equals the cap exactly.
        let o = occupancy(&arch("gfx90a"), &usage(64, 16, 0, 256, 64, false));
        assert_eq!((o.waves_per_simd, o.limited_by), (8, Limit::WaveCap));
        assert_eq!(o.by_vgpr, 8);
        let o = occupancy(&arch("gfx90a"), &usage(4, 16, 0, 64, 64, false));
        assert_eq!((o.waves_per_simd, o.limited_by), (8, Limit::WaveCap));
        // One VGPR granule more and the registers bind.
        let o = occupancy(&arch("gfx90a"), &usage(72, 16, 0, 256, 64, false));
        assert_eq!((o.waves_per_simd, o.limited_by), (7, Limit::Vgpr));
        // Unknown processors have no rules.
        assert!(arch_info("gfx1200").is_none());
        assert!(arch_info("gfx803").is_none());
    }
}
