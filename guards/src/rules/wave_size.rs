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
//!   a lane-named variable, or a local computed from them: `% 32` on a tile width is fine, and
//!   so is `a[r][si % 32]` into an array whose extent there is 32: the index wraps within the
//!   array, no lane is meant);
//! - the number of warps of a block: `blockDim.x / 32`, `hipBlockDim_x >> 5`, `nthreads / 32`
//!   (a block-size name or a local computed from one);
//! - warp-reduction loops that start at offset 16 or stop at 32 and feed a shuffle
//!   (`for (int o = 16; o > 0; o /= 2) v += __shfl_down(v, o);`);
//! - `#define WARP_SIZE 32` and `constexpr int WARP_SIZE = 32;` (any warp/wave-size-like name),
//!   unless the file also defines the same macro with another value (an `#if`/`#else` pair that
//!   already handles wave64); also in a header that holds no function.
//!
//! Nothing is reported in code an AMD compile never sees (`frontend::cond::inactive`): the
//! `#else` of `#ifdef __HIP_PLATFORM_AMD__` (or `__HIP__`, `USE_ROCM`, ...), and branches that
//! only NVIDIA compiles (`#ifdef __CUDA_ARCH__`, `__NVCC__`, `__CUDACC__`,
//! `__HIP_PLATFORM_NVIDIA__`, `#if !defined(USE_ROCM)`); `-D`/`-U` on the command line
//! (`-U __HIP_PLATFORM_AMD__`) count. A condition on other names (`#if MY_FLAG`) is unknown, and
//! its branches are checked.
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
//! which is the point, but a person should review them. They come all or none per file: when
//! some 32-lane assumption of the file's GPU code would stay after them (a finding without a fix,
//! a use of a 32-valued warp-size constant, or any other `32`/`31`/`5` of warp-like arithmetic:
//! `(blockDim.x + 31) / 32`, `warp * 32`, a loop `k < 32`), none is offered and each finding says
//! which, since a half-converted file indexes warps of 64 while it counts warps of 32. A line
//! marked `// hip-unroll: allow(wave-size)` is the author's, and holds nothing back.
//! - a shuffle width `32` becomes `warpSize`;
//! - a full mask `0xffffffff` passed to a warp intrinsic becomes the 64-bit
//!   `0xffffffffffffffffULL`;
//! - `% 32` and `/ 32` on a lane or thread id or a block size become `% warpSize` and
//!   `/ warpSize`, `& 31` becomes `& (warpSize - 1)`; where a constant expression is needed (an
//!   array size, a `constexpr` initialiser, `static_assert`, a `case` label, a template
//!   argument: `warpSize` is none) they become the project's own per-platform warp-size macro
//!   when the unit defines one with the value 64 (`#ifdef __HIP_PLATFORM_AMD__ #define
//!   WARP_SIZE 64 #else ... 32`), else `64` in a branch only gfx9 (CDNA, wave64) compiles
//!   (`#if defined(__gfx90a__) || defined(__gfx942__)`), else no fix (the message says why);
//! - a warp reduction that starts at `16` starts at `warpSize / 2`; one that stops at `32`
//!   stops at `warpSize`.
//!
//! No fix for `>> 5` (`/ warpSize` binds tighter than `>>`, so the operand would have to be
//! rewritten), for a ballot compared with `0xffffffff` (the right comparison depends on the
//! active lanes), nor for `#define WARP_SIZE 32`/`constexpr ... = 32` (array sizes and template
//! arguments need a constant, which `warpSize` is not: the message advises a per-platform
//! constant, 64 on gfx9/CDNA). Silence an intended wave32 path with
//! `// hip-unroll: allow(wave-size)`.

use std::collections::{HashMap, HashSet};

use frontend::{builtins, Function, FunctionKind, SourceFile, Span};

use crate::fix::Fix;
use crate::lint::{DiagnosticRule, Enable, FileCx, Finding};
use crate::util::within;

/// The rule's stable id.
pub const ID: &str = "wave-size";

/// One line: what the rule reports (`explain --list`, SARIF).
pub const SUMMARY: &str = "warp-level code assumes 32 lanes (shuffle widths, lane masks, `% 32`, `WARP_SIZE 32`); use `warpSize`";

/// Names taken as a thread's lane or local id by convention (beside the built-ins of
/// `frontend::builtins`).
const LANE_NAMES: &[&str] = &["tid", "tidx", "thread_id", "threadId", "thread_idx"];

fn is_lane_name(n: &str) -> bool {
    builtins::is_thread_index(n)
        || builtins::LANE_ID_FUNCTIONS.contains(&n)
        || LANE_NAMES.contains(&n)
        || n.to_ascii_lowercase().contains("lane")
}

/// A warp/wave-size-like constant name (the one definition is `frontend::builtins`).
pub use builtins::is_warp_size_name;

/// True when `source` may define a warp-size constant (a `32` with `warp` or `wave` before it
/// on its line, in any case): such a file is worth parsing even when it holds no GPU function
/// (a header of constants).
pub fn may_define_warp_size(source: &[u8]) -> bool {
    memchr::memmem::find_iter(source, b"32").any(|i| {
        let line_start = memchr::memrchr(b'\n', &source[..i]).map_or(0, |n| n + 1);
        let before = &source[line_start.max(i.saturating_sub(96))..i];
        before.windows(4).any(|w| {
            let w = w.to_ascii_lowercase();
            w == b"warp" || w == b"wave"
        })
    })
}

/// Names in `f` that hold (or derive from) a thread or lane id.
fn lane_names(f: &Function) -> HashSet<String> {
    derived_names(f, is_lane_name)
}

/// A block-size name: `blockDim` (its `.x`), `hipBlockDim_x`, `block_size`, `nthreads`, ...
fn is_block_size_name(n: &str) -> bool {
    if builtins::is_block_dim(n) {
        return true;
    }
    let c: String = n
        .chars()
        .filter(|c| *c != '_')
        .collect::<String>()
        .to_ascii_lowercase();
    [
        "blocksize",
        "threadsperblock",
        "nthreads",
        "numthreads",
        "blockthreads",
    ]
    .iter()
    .any(|k| c.contains(k))
}

/// Names in `f` that `seed` accepts, and the locals computed from them (transitively).
fn derived_names(f: &Function, seed: fn(&str) -> bool) -> HashSet<String> {
    let mut set: HashSet<String> = f
        .params
        .iter()
        .filter(|p| seed(&p.name))
        .map(|p| p.name.clone())
        .collect();
    for d in &f.decls {
        if seed(&d.name) {
            set.insert(d.name.clone());
        }
    }
    loop {
        let mut grew = false;
        for d in &f.decls {
            if !set.contains(&d.name) && d.init_idents.iter().any(|n| set.contains(n) || seed(n)) {
                set.insert(d.name.clone());
                grew = true;
            }
        }
        if !grew {
            return set;
        }
    }
}

/// A literal of warp arithmetic: `32` (divided, multiplied, compared, added), `31` (masked,
/// added), `5` (shifted).
fn is_width_literal(op: &str, constant: i128) -> bool {
    match constant {
        32 => matches!(
            op,
            "/" | "%" | "*" | "<" | "<=" | ">" | ">=" | "==" | "!=" | "+" | "-"
        ),
        31 => matches!(op, "&" | "+" | "-" | "%" | "<" | "<=" | "==" | "!="),
        5 => matches!(op, ">>" | "<<"),
        _ => false,
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

/// A 32-lane assumption in GPU code that a consistent conversion must rewrite: a literal in
/// warp arithmetic, a shuffle width, a use of a 32-valued warp-size constant, or a finding.
struct Width {
    span: Span,
    what: String,
    /// A finding without a fix (the others are literals, names and widths).
    finding: bool,
}

/// The rule's registry entry.
pub(crate) const DIAGNOSTIC: DiagnosticRule = DiagnosticRule {
    check,
    enable: Enable::Default,
};

fn check(cx: &FileCx<'_>) -> Vec<Finding> {
    let inactive = frontend::cond::inactive(cx.file, cx.tu);
    let platform = platform_constant(cx.file, cx.tu);
    let ctx = Context {
        inactive: &inactive,
        platform: platform.as_deref(),
    };
    findings(cx.file, &ctx, &|line| cx.suppressed(line))
}

/// What the rule knows of the file beyond its functions.
struct Context<'a> {
    /// What an AMD compile never sees (`frontend::cond::inactive`): the CUDA branch of
    /// `#ifdef __HIP_PLATFORM_AMD__ ... #else`, `#ifdef __CUDA_ARCH__`, ...
    inactive: &'a [Span],
    /// The unit's own per-platform warp-size constant (`#define WARP_SIZE 64` in one branch,
    /// `32` in another), for the fixes where `warpSize` cannot go.
    platform: Option<&'a str>,
}

impl Context<'_> {
    fn compiled(&self, at: usize) -> bool {
        !frontend::cond::within(self.inactive, at)
    }
}

/// A warp-size-like constant of the file or its headers defined with a value other than 32
/// (the project's per-platform constant: `#if __HIP_PLATFORM_AMD__ #define WARP_SIZE 64 #else
/// #define WARP_SIZE 32`).
fn platform_constant(file: &SourceFile, tu: &frontend::tu::TranslationUnit) -> Option<String> {
    let is_int = |body: &str, v: &str| body.trim().trim_matches(['(', ')']).trim() == v;
    let macros = file
        .macros
        .iter()
        .chain(tu.headers.iter().flat_map(|h| h.file().macros.iter()));
    macros
        .filter(|m| m.params.is_none() && is_warp_size_name(&m.name))
        .find(|m| is_int(&m.body, "64"))
        .map(|m| m.name.clone())
}

/// True when the branch holding `at` is compiled only for gfx9 (CDNA: wave64), by its own
/// condition (`#if defined(__gfx90a__) || defined(__gfx942__)`, `#ifdef __GFX9__`).
fn wave64_branch(file: &SourceFile, at: usize) -> bool {
    file.conditionals.iter().any(|b| {
        b.span.start <= at
            && at < b.span.end
            && b.directive != "else"
            && !b.directive.ends_with("ndef")
            && !b.condition.contains('!')
            && (b.condition.contains("__gfx9") || b.condition.contains("__GFX9__"))
            && !b.condition.contains("__gfx1")
            && !b.condition.contains("__GFX1")
    })
}

/// The advice where `warpSize` cannot go (a constant expression).
const CONSTANT_ADVICE: &str =
    "`warpSize` is no constant expression: use a per-platform constant (64 on gfx9/CDNA, wave64)";

/// All wave-size findings of a file, sorted by position; lines for which `suppressed` is true
/// (`// hip-unroll: allow(wave-size)`) are left out.
///
/// Fixes come all or none: when some 32-lane assumption of the file's GPU code would stay after
/// every fix (`blockDim.x + 31`, `tid >> 5`, a tile loop `k < 32`, a use of `WARP_SIZE`...), no
/// fix is offered, so that `--unsafe-fixes` never leaves a mix of wave sizes behind.
fn findings(
    file: &SourceFile,
    ctx: &Context<'_>,
    suppressed: &dyn Fn(u32) -> bool,
) -> Vec<Finding> {
    let mut out: Vec<Finding> = Vec::new();
    let is_32 = |body: &str| body.trim().trim_matches(['(', ')']).trim() == "32";
    let mut warp32: HashSet<&str> = HashSet::new();
    for m in file.macros.iter().filter(|m| ctx.compiled(m.span.start)) {
        // `#if __HIP_PLATFORM_AMD__ #define WARP 64 #else #define WARP 32`: wave64 is handled.
        let also_other_value = file
            .macros
            .iter()
            .any(|o| o.name == m.name && !is_32(&o.body));
        if m.params.is_none() && is_warp_size_name(&m.name) && is_32(&m.body) && !also_other_value {
            warp32.insert(&m.name);
            out.push(Finding {
                span: m.span,
                message: format!("`#define {} 32` hard-codes a 32-lane warp; wavefronts have 64 lanes on CDNA: define it per platform (64 on gfx9/CDNA, wave64: a macro stays a constant expression), or use `warpSize` where no constant is needed", m.name),
                related: Vec::new(),
                fix: None,
                also_at: None,
            });
        }
    }
    // Reported in any file, headers of constants included (no function needed).
    for g in file.globals.iter().filter(|g| ctx.compiled(g.span.start)) {
        if g.init_int == Some(32) && is_warp_size_name(&g.name) {
            warp32.insert(&g.name);
            out.push(Finding {
                span: g.span,
                message: format!("`{} = 32` hard-codes a 32-lane warp; wavefronts have 64 lanes on CDNA: make it per platform (64 on gfx9/CDNA, wave64), or use `warpSize` where no constant is needed", g.name),
                related: Vec::new(),
                fix: None,
                also_at: None,
            });
        }
    }
    let shared_dims: HashMap<&str, &[Option<i128>]> = file
        .shared
        .iter()
        .map(|d| (d.name.as_str(), d.dims.as_slice()))
        .collect();
    let mut widths: Vec<Width> = Vec::new();
    for f in file
        .functions
        .iter()
        .filter(|f| f.kind != FunctionKind::Host)
    {
        let mut dims = shared_dims.clone();
        dims.extend(
            f.shared
                .iter()
                .map(|d| (d.name.as_str(), d.dims.as_slice())),
        );
        let first = out.len();
        let first_width = widths.len();
        check_function(f, file, ctx, &warp32, &dims, &mut out, &mut widths);
        // What an AMD compile never sees is no finding and holds no fix back.
        let mut i = 0;
        out.retain(|x| {
            let keep = i < first || ctx.compiled(x.span.start);
            i += 1;
            keep
        });
        let mut i = 0;
        widths.retain(|w| {
            let keep = i < first_width || ctx.compiled(w.span.start);
            i += 1;
            keep
        });
        // A finding of this function without a fix is an assumption no fix converts.
        widths.extend(
            out[first..]
                .iter()
                .filter(|x| x.fix.is_none())
                .map(|x| Width {
                    span: x.span,
                    what: finding_subject(&x.message),
                    finding: true,
                }),
        );
    }
    out.retain(|x| !suppressed(x.span.line));
    out.sort_by_key(|x| x.span.start);
    out.dedup_by_key(|x| x.span.start);
    withhold_partial_fixes(&mut out, &widths, suppressed);
    out
}

/// What a finding is about, for another finding's message: its leading `` `code` `` (`>> 5`,
/// `` `warp_size = 32` ``), else "a finding".
fn finding_subject(message: &str) -> String {
    message
        .strip_prefix('`')
        .and_then(|m| m.split_once('`'))
        .map_or("a finding".to_string(), |(code, _)| format!("`{code}`"))
}

/// Drops every fix when some assumption in `widths` (not on a suppressed line) is covered by
/// no fix, and says which in each message that loses its fix.
fn withhold_partial_fixes(out: &mut [Finding], widths: &[Width], suppressed: &dyn Fn(u32) -> bool) {
    let mut edits: Vec<(usize, usize)> = out
        .iter()
        .filter_map(|x| x.fix.as_ref())
        .flat_map(|f| f.edits.iter().map(|e| (e.range.start, e.range.end)))
        .collect();
    edits.sort_unstable();
    // Fix edits do not overlap (one per literal): the last one starting at or before the
    // assumption is the only one that can cover it.
    let covered = |w: &Width| {
        let k = edits.partition_point(|&(a, _)| a <= w.span.start);
        k > 0 && w.span.end <= edits[k - 1].1
    };
    let left: Vec<&Width> = widths
        .iter()
        .filter(|w| !suppressed(w.span.line))
        .filter(|w| !covered(w))
        .collect();
    // A literal inside a finding that has no fix is that finding, counted once.
    let mut findings: Vec<(usize, usize)> = left
        .iter()
        .filter(|w| w.finding)
        .map(|w| (w.span.start, w.span.end))
        .collect();
    findings.sort_unstable();
    let inner = |w: &Width| {
        let k = findings.partition_point(|&(a, _)| a <= w.span.start);
        !w.finding
            && findings[..k]
                .iter()
                .rev()
                .take(8)
                .any(|&(_, b)| w.span.end <= b)
    };
    let mut left: Vec<&Width> = left.iter().copied().filter(|w| !inner(w)).collect();
    left.sort_by_key(|w| w.span.start);
    let Some(first) = left.first() else { return };
    let more = match left.len() {
        1 => String::new(),
        2 => " (and 1 more)".to_string(),
        n => format!(" (and {} more)", n - 1),
    };
    for x in out.iter_mut().filter(|x| x.fix.is_some()) {
        x.fix = None;
        x.message.push_str(&format!(
            "; no fix offered: {} at line {}{more} would still assume 32 lanes, and a half-converted file mixes wave sizes",
            first.what, first.span.line
        ));
    }
}

fn check_function(
    f: &Function,
    file: &SourceFile,
    ctx: &Context<'_>,
    warp32: &HashSet<&str>,
    dims: &HashMap<&str, &[Option<i128>]>,
    out: &mut Vec<Finding>,
    widths: &mut Vec<Width>,
) {
    let mut warp32_here: HashSet<&str> = warp32.clone();
    for d in &f.decls {
        if d.init_int == Some(32) && is_warp_size_name(&d.name) {
            warp32_here.insert(&d.name);
            out.push(Finding {
                span: d.span,
                message: format!(
                    "`{} = 32` hard-codes a 32-lane warp: use `warpSize`",
                    d.name
                ),
                related: Vec::new(),
                fix: None,
                also_at: None,
            });
        }
    }
    // Uses of a 32-valued warp-size constant: converting the rest would mix wave sizes.
    for i in &f.idents {
        if i.access == frontend::Access::Read && warp32_here.contains(i.name.as_str()) {
            widths.push(Width {
                span: i.span,
                what: format!("`{}`", i.name),
                finding: false,
            });
        }
    }
    for r in &f.macro_refs {
        if warp32.contains(r.name.as_str())
            && !f.idents.iter().any(|i| i.span.start == r.span.start)
        {
            widths.push(Width {
                span: r.span,
                what: format!("`{}`", r.name),
                finding: false,
            });
        }
    }
    for c in &f.calls {
        if is_shfl(&c.callee) {
            let idx = if c.callee.ends_with("_sync") { 3 } else { 2 };
            if c.arg_ints.get(idx) == Some(&Some(32)) {
                widths.push(Width {
                    span: c.arg_spans[idx],
                    what: "a shuffle width `32`".into(),
                    finding: false,
                });
                out.push(Finding {
                    span: c.arg_spans[idx],
                    message: format!("`{}` with width 32 shuffles within half a 64-lane wavefront: omit the width or use `warpSize`", c.callee),
                    related: vec![(c.span, "in this shuffle".into())],
                    fix: Some(Fix::unsafe_replace(
                        "Replace the width `32` with `warpSize`",
                        c.arg_spans[idx],
                        "warpSize",
                    )),
                    also_at: None,
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
                also_at: None,
            });
        }
    }
    let lanes = lane_names(f);
    let blocks = derived_names(f, is_block_size_name);
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
                also_at: None,
            });
            continue;
        }
        // `tile[r][si % 32]` with `tile[..][32]`: the index wraps within the array's own
        // extent; no lane or warp is meant.
        let wraps_extent = matches!((op.op.as_str(), op.constant), ("%", 32) | ("&", 31))
            && op.constant_on_right
            && op.index_of.as_ref().is_some_and(|ix| {
                dims.get(ix.array.as_str())
                    .and_then(|d| d.get(ix.dim))
                    .is_some_and(|&n| n == Some(op.constant + i128::from(op.op == "&")))
            });
        if wraps_extent {
            continue;
        }
        if is_width_literal(&op.op, op.constant) {
            let what = if op.constant_on_right {
                format!("`{} {}`", op.op, op.constant)
            } else {
                format!("`{} {}`", op.constant, op.op)
            };
            widths.push(Width {
                span: op.constant_span,
                what,
                finding: false,
            });
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
        let lane = op
            .operand_names
            .iter()
            .find(|n| lanes.contains(*n) || is_lane_name(n));
        let block = op
            .operand_names
            .iter()
            .find(|n| blocks.contains(*n) || is_block_size_name(n));
        let (name, what) = match (lane, block) {
            (Some(n), _) => (n, what),
            // `blockDim.x / 32`: the number of warps of a block.
            (None, Some(n)) if what == "a warp index" => (n, "the number of warps"),
            (None, Some(n)) => (n, "a position within a warp"),
            (None, None) => continue,
        };
        // `warpSize` is no constant expression: where one is needed (an array size, a template
        // argument, `constexpr`, `static_assert`, a `case` label) the fix is the project's
        // per-platform constant, or `64` in a branch only gfx9 (wave64) compiles, else none.
        let (with, advice) = if op.in_constant {
            let constant = ctx
                .platform
                .map(str::to_string)
                .or_else(|| wave64_branch(file, op.span.start).then(|| "64".to_string()));
            let with = constant.and_then(|c| match (op.op.as_str(), op.constant) {
                ("%" | "/", 32) => Some(c),
                ("&", 31) => Some(format!("({c} - 1)")),
                _ => None,
            });
            let advice = match &with {
                Some(w) => format!("`warpSize` is no constant expression: use `{w}`"),
                None => CONSTANT_ADVICE.to_string(),
            };
            (with, advice)
        } else {
            (with.map(str::to_string), "use `warpSize`".to_string())
        };
        out.push(Finding {
            span: op.span,
            message: format!(
                "`{} {}` on `{}` computes {} for 32-lane warps; wavefronts have 64 lanes on CDNA: {advice}",
                op.op, op.constant, name, what
            ),
            related: Vec::new(),
            fix: with.map(|w| {
                Fix::unsafe_replace(
                    format!("Replace `{}` with `{w}`", op.constant),
                    op.constant_span,
                    &w,
                )
            }),
            also_at: None,
        });
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
                also_at: None,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::{check_source, Diagnostic, Settings};

    fn wave(src: &str) -> Vec<Diagnostic> {
        let (_, d) = check_source("k.cu", src.as_bytes(), &Settings::default());
        d.into_iter().filter(|d| d.rule == super::ID).collect()
    }

    fn fix_text(d: &Diagnostic) -> Option<String> {
        d.fix
            .as_ref()
            .map(|f| f.edits.iter().map(|e| String::from_utf8_lossy(&e.text).into_owned()).collect())
    }

    /// In a constant expression the advice and the fix are a constant: `64` in a branch only
    /// gfx9 compiles, the project's per-platform constant where it has one, else no fix.
    #[test]
    fn constant_contexts_get_constants() {
        let gfx9 = "__global__ void k(float* out) {\n  constexpr int kBlockSize = 256;\n#if defined(__gfx90a__) || defined(__gfx942__)\n  __shared__ float s[kBlockSize / 32];\n  out[0] = s[threadIdx.x % 32];\n#endif\n}\n";
        let d = wave(gfx9);
        assert_eq!(d.len(), 2, "{d:?}");
        assert_eq!(fix_text(&d[0]).as_deref(), Some("64"), "{}", d[0].message);
        assert!(d[0].message.contains("no constant expression: use `64`"), "{}", d[0].message);
        assert_eq!(fix_text(&d[1]).as_deref(), Some("warpSize"));
        // Outside such a branch, with no constant of its own: advice, no fix.
        let plain = gfx9.replace("#if defined(__gfx90a__) || defined(__gfx942__)\n", "").replace("#endif\n", "");
        let d = wave(&plain);
        assert_eq!(d.len(), 2, "{d:?}");
        assert!(d.iter().all(|x| x.fix.is_none()));
        assert!(d[0].message.contains("64 on gfx9/CDNA"), "{}", d[0].message);
        assert!(!d[0].message.contains("use `warpSize`"), "{}", d[0].message);
        // An RDNA target in the condition is not wave64.
        let mixed = gfx9.replace("defined(__gfx942__)", "defined(__gfx1100__)");
        assert!(wave(&mixed).iter().all(|x| x.fix.is_none()));
        // `#define WARP_SIZE 32` advises a per-platform constant.
        let d = wave("#define WARP_SIZE 32\n__global__ void k(float* a) { a[threadIdx.x % WARP_SIZE] = 0.f; }\n");
        assert!(d[0].message.contains("define it per platform (64 on gfx9/CDNA"), "{}", d[0].message);
    }

    /// The command line's `-U __HIP_PLATFORM_AMD__` turns the platform branches around.
    #[test]
    fn command_line_undefines_the_platform() {
        let src = "__global__ void k(float* a) {\n#ifdef __HIP_PLATFORM_AMD__\n  a[threadIdx.x % 32] = 0.f;\n#else\n  a[threadIdx.x / 32] = 1.f;\n#endif\n}\n";
        let lines = |settings: &Settings| -> Vec<u32> {
            let (_, d) = check_source("k.cu", src.as_bytes(), settings);
            d.iter().filter(|d| d.rule == super::ID).map(|d| d.line).collect()
        };
        assert_eq!(lines(&Settings::default()), [3]);
        let mut defs = frontend::tu::Defines::default();
        defs.undefine("__HIP_PLATFORM_AMD__").unwrap();
        let settings = Settings {
            includes: Some(frontend::tu::Includes::default().with_defines(&defs)),
            ..Settings::default()
        };
        assert_eq!(lines(&settings), [5]);
    }
}
