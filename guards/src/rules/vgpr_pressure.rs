//! `vgpr-pressure`: judges an unrolled variant by the registers, spills, scratch and occupancy
//! of its compiled code object against the baseline's.
//!
//! The rule runs on code objects, not on the IR, so this module holds only its id and its
//! documentation: [`DOC`] is the single source of the text (`## What it does`, `## Why`,
//! `## Example`, `## Fix safety`) that `hip-unroll explain vgpr-pressure` prints. The judge
//! itself is `codeobj::judge`; `hip-unroll pressure` and `check --hsaco` run it.

/// The rule's stable id.
pub const ID: &str = "vgpr-pressure";

/// One line: what the rule reports (`explain --list`, SARIF).
pub const SUMMARY: &str = "an unrolled variant spills, needs scratch or loses occupancy compared with the baseline code object";

/// The rule's documentation, as `hip-unroll explain vgpr-pressure` prints it.
pub const DOC: &str = "\
# vgpr-pressure

## What it does
Compiles the original kernel and the unrolled variant with the same command (default
`hipcc --offload-arch={arch} --genco -O3 {src} -o {out}`, set in `[compile]` of
`hip-unroll.toml`), reads each kernel's `.vgpr_count`, `.agpr_count`, `.sgpr_count`,
`.vgpr_spill_count`, `.sgpr_spill_count` and `.private_segment_fixed_size` from the AMDGPU
metadata note, computes waves per SIMD with LLVM's occupancy rules for the target, and
blocks the variant if, for any kernel on any target, it
- spills more VGPRs or SGPRs than the baseline,
- needs more scratch (private segment) per work-item than the baseline, or
- loses more waves per SIMD than `max-occupancy-loss` (`[vgpr-pressure]`, default 0).

`hip-unroll pressure BASELINE VARIANT` runs it; `hip-unroll check --hsaco FILE` reports
kernels that already spill (`vgpr-spill`). `hip-unroll tune` runs it as a gate on every
variant: new spills or scratch refuse the variant (`gated`), but an occupancy loss is a
prediction it records on the variant and measures, unless `max-occupancy-loss` is set in
`hip-unroll.toml` (also to 0): then a larger loss is `gated` too.

## Why
Unrolling trades registers for instruction-level parallelism. Past a point the register
allocator spills to scratch memory (hundreds of cycles per access) or the kernel's register
count crosses an allocation boundary and fewer waves fit on a SIMD, so less latency is
hidden. The source cannot tell where that point is; only the compiled code object can.

## Example
```text
// tile_gemm.cu: 8x8 accumulators per thread, k loop rolled      -> 118 VGPRs, no spills
#pragma unroll 1
for (int k = 0; k < K; ++k) { ... }
// tile_gemm.unrolled.cu: the same loop with `#pragma unroll 16`  -> 128 VGPRs, 27 spilled,
//                                                                    96 bytes of scratch
$ hip-unroll pressure tile_gemm.cu tile_gemm.unrolled.cu --arch gfx90a
BLOCKED: tile_gemm(float const*, float const*, float*, int, int) on gfx90a
  blocked: spills 27 VGPRs (baseline 0)
  blocked: uses 96 bytes of scratch per work-item (baseline 0)
```
Use a smaller unroll factor (or none), or reduce the live state per iteration.

## Fix safety
The guard never rewrites code: it only accepts or refuses a variant, so it has no fix.
Its verdict is as good as the compile command: compile with the flags and target of the
real build (headers a source includes are not part of the cache key).
";

#[cfg(test)]
mod tests {
    #[test]
    fn doc_has_the_four_sections_in_order() {
        let at = |h: &str| super::DOC.find(h).unwrap_or_else(|| panic!("missing {h}"));
        assert!(at("## What it does") < at("## Why"));
        assert!(at("## Why") < at("## Example"));
        assert!(at("## Example") < at("## Fix safety"));
    }
}
