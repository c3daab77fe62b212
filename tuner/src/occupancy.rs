//! A variant's predicted occupancy change, as the gates find it and the report shows it (a
//! leaf module: the gates and the report both use it, and neither imports the other).

use serde::{Deserialize, Serialize};

/// What an occupancy figure counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OccupancyUnit {
    /// AMD: waves per SIMD (`codeobj::occupancy`, from VGPRs, SGPRs, LDS, workgroup size).
    WavesPerSimd,
    /// NVIDIA: register-limited warps per SM (`runner::cubin`).
    WarpsPerSm,
}

impl OccupancyUnit {
    pub fn as_str(self) -> &'static str {
        match self {
            OccupancyUnit::WavesPerSimd => "waves per SIMD",
            OccupancyUnit::WarpsPerSm => "warps per SM",
        }
    }

    /// What `registers` counts.
    pub fn registers(self) -> &'static str {
        match self {
            OccupancyUnit::WavesPerSimd => "VGPRs",
            OccupancyUnit::WarpsPerSm => "registers",
        }
    }
}

/// Registers per work-item before and after (AMD: `.vgpr_count`, AGPRs included on gfx90a;
/// NVIDIA: registers per thread).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Registers {
    pub before: u32,
    pub after: u32,
}

/// A variant's predicted occupancy change, from the gates' compiles of the baseline and the
/// variant: a prediction, recorded and measured (a veto only with `[vgpr-pressure]
/// max-occupancy-loss`). JSON: `{"kernel": "k", "unit": "waves-per-simd", "before": 8,
/// "after": 6, "registers": {"before": 56, "after": 76}}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Occupancy {
    /// The kernel shown: the one whose occupancy falls the most (then whose registers grow the
    /// most) of the compiled file.
    pub kernel: String,
    pub unit: OccupancyUnit,
    pub before: u32,
    pub after: u32,
    pub registers: Registers,
}

impl Occupancy {
    /// Occupancy lost (0 when it stays or grows): the search measures lower losses first.
    pub fn loss(&self) -> u32 {
        self.before.saturating_sub(self.after)
    }

    /// `8 -> 6 waves per SIMD (56 -> 76 VGPRs)`.
    pub fn shown(&self) -> String {
        format!(
            "{} -> {} {} ({} -> {} {})",
            self.before,
            self.after,
            self.unit.as_str(),
            self.registers.before,
            self.registers.after,
            self.unit.registers()
        )
    }
}
