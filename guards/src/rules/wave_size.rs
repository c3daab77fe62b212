//! `wave-size`: warp-level code that assumes 32 lanes, where AMD GPUs run 64-lane wavefronts.
//!
//! ## What it does
//! Reports, anywhere in a kernel or `__device__` function (not only in loops):
//! - shuffles with a hard-coded width of 32: `__shfl_xor(v, 1, 32)`, `__shfl_down_sync(m, v, d, 32)`;
//! - 32-bit full lane masks passed to warp intrinsics: `__shfl_sync(0xffffffff, ...)`,
//!   `__ballot_sync(0xffffffff, p)`, `__syncwarp(0xffffffff)`, and ballots compared with
//!   `0xffffffff`;
//! - lane and warp arithmetic on thread or lane ids: `threadIdx.x % 32`, `lane & 31`, `tid / 32`,
//!   `tid >> 5` (only when the operand involves `threadIdx`/`hipThreadIdx_*`, `__lane_id()`,
//!   a lane-named variable, or a local computed from them: `% 32` on a tile width is fine);
//! - warp-reduction loops that start at offset 16 or stop at 32 and feed a shuffle
//!   (`for (int o = 16; o > 0; o /= 2) v += __shfl_down(v, o);`);
//! - `#define WARP_SIZE 32` and `constexpr int WARP_SIZE = 32;` (any warp/wave-size-like name),
//!   unless the file also defines the same macro with another value (an `#if`/`#else` pair that
//!   already handles wave64).
//!
//! ## Why
//! CDNA GPUs (MI100 to MI300) execute 64 work-items per wavefront. Code written for 32-lane CUDA
//! warps then silently uses half a wavefront: reductions skip lanes 32-63, masks leave the upper
//! half inactive, lane ids wrap. The HIP built-in `warpSize` (or `__AMDGCN_WAVEFRONT_SIZE`) gives
//! the real width.
//!
//! ## Example
//! ```cpp
//! int lane = threadIdx.x % 32;                      // wave-size
//! for (int o = 16; o > 0; o /= 2)                   // wave-size
//!     v += __shfl_down(v, o, 32);                   // wave-size
//! ```
//! Use `threadIdx.x % warpSize`, start the reduction at `warpSize / 2`, drop the width argument
//! (it defaults to `warpSize`), and pass `__activemask()` or a 64-bit mask.
//!
//! ## Fix safety
//! Unsafe fixes (`check --unsafe-fixes`): they change what the code does on 64-lane wavefronts,
//! which is the point, but a person should review them:
//! - a shuffle width `32` becomes `warpSize`;
//! - a full mask `0xffffffff` passed to a warp intrinsic becomes the 64-bit
//!   `0xffffffffffffffffULL`;
//! - `% 32` and `/ 32` on a lane or thread id become `% warpSize` and `/ warpSize`, `& 31`
//!   becomes `& (warpSize - 1)`;
//! - a warp reduction that starts at `16` starts at `warpSize / 2`; one that stops at `32`
//!   stops at `warpSize`.
//!
//! No fix for `>> 5` (`/ warpSize` binds tighter than `>>`, so the operand would have to be
//! rewritten), for a ballot compared with `0xffffffff` (the right comparison depends on the
//! active lanes), nor for `#define WARP_SIZE 32`/`constexpr ... = 32` (array sizes and template
//! arguments need a constant, which `warpSize` is not). Silence an intended wave32 path with
//! `// hip-unroll: allow(wave-size)`.

use std::collections::HashSet;

use frontend::{Function, FunctionKind, SourceFile};

use super::Finding;
use crate::fix::Fix;
use crate::util::within;

/// The rule's stable id.
pub const ID: &str = "wave-size";

/// One line: what the rule reports (`explain --list`, SARIF).
pub const SUMMARY: &str = "warp-level code assumes 32 lanes (shuffle widths, lane masks, `% 32`, `WARP_SIZE 32`); use `warpSize`";

const SEEDS: &[&str] = &[
    "threadIdx",
    "hipThreadIdx_x",
    "hipThreadIdx_y",
    "hipThreadIdx_z",
    "__lane_id",
    "__builtin_amdgcn_workitem_id_x",
    "__builtin_amdgcn_mbcnt_lo",
    "__builtin_amdgcn_mbcnt_hi",
    "__ockl_get_local_id",
    "tid",
    "tidx",
    "thread_id",
    "threadId",
    "thread_idx",
];

fn is_lane_name(n: &str) -> bool {
    SEEDS.contains(&n) || n.to_ascii_lowercase().contains("lane")
}

/// A warp/wave-size-like constant name: `WARP_SIZE`, `kWarpSize`, `warp_sz`, `THREADS_PER_WARP`.
pub fn is_warp_size_name(n: &str) -> bool {
    let c: String = n
        .chars()
        .filter(|c| *c != '_')
        .collect::<String>()
        .to_ascii_lowercase();
    [
        "warpsize",
        "warpsz",
        "threadsperwarp",
        "wavesize",
        "wavefrontsize",
        "warplanes",
        "lanesperwarp",
    ]
    .iter()
    .any(|k| c.contains(k))
}

/// Names in `f` that hold (or derive from) a thread or lane id.
fn lane_names(f: &Function) -> HashSet<String> {
    let mut set: HashSet<String> = f
        .params
        .iter()
        .filter(|p| is_lane_name(&p.name))
        .map(|p| p.name.clone())
        .collect();
    for d in &f.decls {
        if is_lane_name(&d.name) {
            set.insert(d.name.clone());
        }
    }
    loop {
        let mut grew = false;
        for d in &f.decls {
            if !set.contains(&d.name)
                && d.init_idents
                    .iter()
                    .any(|n| set.contains(n) || is_lane_name(n))
            {
                set.insert(d.name.clone());
                grew = true;
            }
        }
        if !grew {
            return set;
        }
    }
}

fn is_shfl(name: &str) -> bool {
    name.starts_with("__shfl")
}

fn is_warp_intrinsic_with_mask(name: &str) -> bool {
    (name.ends_with("_sync")
        && [
            "__shfl", "__ballot", "__any", "__all", "__match", "__reduce", "__uni",
        ]
        .iter()
        .any(|p| name.starts_with(p)))
        || name == "__syncwarp"
}

const FULL_MASK: i128 = 0xffff_ffff;
/// Every lane of a 64-lane wavefront.
const FULL_MASK_64: &str = "0xffffffffffffffffULL";

/// All wave-size findings of a file, sorted by position.
pub fn check(file: &SourceFile) -> Vec<Finding> {
    let mut out: Vec<Finding> = Vec::new();
    let gpu: Vec<&Function> = file
        .functions
        .iter()
        .filter(|f| f.kind != FunctionKind::Host)
        .collect();
    if gpu.is_empty() {
        return out;
    }
    let is_32 = |body: &str| body.trim().trim_matches(['(', ')']).trim() == "32";
    for m in &file.macros {
        // `#if __HIP_PLATFORM_AMD__ #define WARP 64 #else #define WARP 32`: wave64 is handled.
        let also_other_value = file
            .macros
            .iter()
            .any(|o| o.name == m.name && !is_32(&o.body));
        if m.params.is_none() && is_warp_size_name(&m.name) && is_32(&m.body) && !also_other_value {
            out.push(Finding {
                span: m.span,
                message: format!("`#define {} 32` hard-codes a 32-lane warp; wavefronts have 64 lanes on CDNA: use `warpSize`", m.name),
                related: Vec::new(),
                fix: None,
            });
        }
    }
    for g in &file.globals {
        if g.init_int == Some(32) && is_warp_size_name(&g.name) {
            out.push(Finding {
                span: g.span,
                message: format!("`{} = 32` hard-codes a 32-lane warp; wavefronts have 64 lanes on CDNA: use `warpSize`", g.name),
                related: Vec::new(),
                fix: None,
            });
        }
    }
    for f in gpu {
        check_function(f, &mut out);
    }
    out.sort_by_key(|x| x.span.start);
    out.dedup_by_key(|x| x.span.start);
    out
}

fn check_function(f: &Function, out: &mut Vec<Finding>) {
    for d in &f.decls {
        if d.init_int == Some(32) && is_warp_size_name(&d.name) {
            out.push(Finding {
                span: d.span,
                message: format!(
                    "`{} = 32` hard-codes a 32-lane warp: use `warpSize`",
                    d.name
                ),
                related: Vec::new(),
                fix: None,
            });
        }
    }
    for c in &f.calls {
        if is_shfl(&c.callee) {
            let idx = if c.callee.ends_with("_sync") { 3 } else { 2 };
            if c.arg_ints.get(idx) == Some(&Some(32)) {
                out.push(Finding {
                    span: c.arg_spans[idx],
                    message: format!("`{}` with width 32 shuffles within half a 64-lane wavefront: omit the width or use `warpSize`", c.callee),
                    related: vec![(c.span, "in this shuffle".into())],
                    fix: Some(Fix::unsafe_replace(
                        "Replace the width `32` with `warpSize`",
                        c.arg_spans[idx],
                        "warpSize",
                    )),
                });
            }
        }
        if is_warp_intrinsic_with_mask(&c.callee) && c.arg_ints.first() == Some(&Some(FULL_MASK)) {
            out.push(Finding {
                span: c.arg_spans[0],
                message: format!("32-bit lane mask `0xffffffff` passed to `{}` covers only lanes 0-31 of a 64-lane wavefront: use `__activemask()` or a 64-bit mask", c.callee),
                related: vec![(c.span, "in this call".into())],
                fix: Some(Fix::unsafe_replace(
                    "Use the 64-bit full mask `0xffffffffffffffffULL`",
                    c.arg_spans[0],
                    FULL_MASK_64,
                )),
            });
        }
    }
    let lanes = lane_names(f);
    for op in &f.const_ops {
        if op.constant == FULL_MASK
            && matches!(op.op.as_str(), "==" | "!=")
            && op
                .operand_names
                .iter()
                .any(|n| n.starts_with("__ballot") || n == "__activemask")
        {
            out.push(Finding {
                span: op.span,
                message: "a ballot compared with `0xffffffff` assumes 32 lanes; wavefront ballots are 64-bit".into(),
                related: Vec::new(),
                fix: None,
            });
            continue;
        }
        if !op.constant_on_right {
            continue;
        }
        let (what, with) = match (op.op.as_str(), op.constant) {
            ("%", 32) => ("a lane index", Some("warpSize")),
            ("&", 31) => ("a lane index", Some("(warpSize - 1)")),
            ("/", 32) => ("a warp index", Some("warpSize")),
            (">>", 5) => ("a warp index", None),
            _ => continue,
        };
        if let Some(n) = op
            .operand_names
            .iter()
            .find(|n| lanes.contains(*n) || is_lane_name(n))
        {
            out.push(Finding {
                span: op.span,
                message: format!(
                    "`{} {}` on `{}` computes {} for 32-lane warps; wavefronts have 64 lanes on CDNA: use `warpSize`",
                    op.op, op.constant, n, what
                ),
                related: Vec::new(),
                fix: with.map(|w| {
                    Fix::unsafe_replace(
                        format!("Replace `{}` with `{w}`", op.constant),
                        op.constant_span,
                        w,
                    )
                }),
            });
        }
    }
    // Warp-reduction loops: `for (int o = 16; o > 0; o /= 2) v += __shfl_down(v, o);`
    for l in &f.loops {
        let Some(init) = l.init else { continue };
        let starts_16 = within(&f.decls, |d| d.name_span.start, init)
            .iter()
            .find(|d| d.init_int == Some(16));
        let stops_32 = l.condition.and_then(|c| {
            within(&f.const_ops, |o| o.span.start, c)
                .iter()
                .find(|o| {
                    o.constant == 32
                        && matches!(o.op.as_str(), "<" | "<=" | "!=")
                        && o.constant_on_right
                })
                .filter(|o| !o.operand_names.is_empty())
        });
        let (var, fix) = match (starts_16, stops_32) {
            (Some(d), _) => (
                d.name.as_str(),
                d.init
                    .map(|s| Fix::unsafe_replace("Start at `warpSize / 2`", s, "warpSize / 2")),
            ),
            (None, Some(o)) => (
                o.operand_names[0].as_str(),
                Some(Fix::unsafe_replace(
                    "Stop at `warpSize`",
                    o.constant_span,
                    "warpSize",
                )),
            ),
            (None, None) => continue,
        };
        let shfl = within(&f.calls, |c| c.span.start, l.body).iter().find(|c| {
            is_shfl(&c.callee)
                && within(&f.idents, |i| i.span.start, c.args)
                    .iter()
                    .any(|i| i.name == var)
        });
        if let Some(c) = shfl {
            out.push(Finding {
                span: l.keyword,
                message: format!(
                    "warp reduction over `{var}` {} covers 32 lanes; a 64-lane wavefront needs offsets up to 32: loop from `warpSize / 2`",
                    if starts_16.is_some() { "starting at 16" } else { "stopping at 32" }
                ),
                related: vec![(c.span, format!("`{}` uses `{var}`", c.callee))],
                fix,
            });
        }
    }
}
