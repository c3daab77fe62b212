//! pipeline: guard -> rewrite -> verify for one HIP source file, the safety policy that every
//! rewrite goes through (`hip-unroll unroll`, the tuner).
//!
//! A [`Source`] is parsed once and guarded once; its loops are listed with their identity
//! ([`frontend::LoopId`]), verdict, blockers and existing pragma ([`Source::loops`]), and a
//! variant is produced for a loop, a factor and a mode, or refused with a typed [`Refusal`]
//! whose [`Refusal::id`] is stable ([`Source::variant`]). [`verify`] compiles the original and
//! the variant and compares every kernel's argument layout.
//!
//! The policy:
//! - every blocker rule (`barrier`, `atomic`, `dynamic-lds`, `early-exit`) applies, whatever a
//!   lint selection (`--select`, `--ignore`) or an inline `// hip-unroll: allow(...)` says:
//!   those quiet the lint, they never make a loop safe to rewrite;
//! - a loop whose pragma is a decision of the code's author (`#pragma unroll` with no count, a
//!   full unroll; `#pragma nounroll`, `#pragma unroll 1`, `#pragma clang loop
//!   unroll(disable)`/`unroll_count(N)`/...) is left as it is;
//! - only [`Policy::force`] overrides those two; the transform's own refusals (it cannot prove
//!   the rewrite equivalent) are never overridden.
//!
//! Loops are found by location in this parse ([`LoopLoc`]) or by what a user typed
//! ([`Source::resolve`]); verdicts are looked up by location, never by a re-formatted string.

mod verify;

use frontend::{FunctionKind, LoopKind, PragmaSyntax, SourceFile, UnrollHint};
use serde::Serialize;
use std::path::Path;

pub use frontend::tu::{Defines, HeaderCache, Includes, TranslationUnit};
pub use frontend::{Candidate, LookupError, LoopId, LoopLoc, LoopRef};
pub use guards::Verdict;
pub use transforms::{Edit, Mode, Variant, FULL, MAX_MANUAL_FACTOR};
pub use verify::{plan as verify_plan, verify, Plan, Vendor, VerifyError, VerifyOptions, Why};

/// One piece of evidence of a blocker: the rule, where, and what.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BlockerInfo {
    /// The rule id (`barrier`, `atomic`, `dynamic-lds`, `early-exit`).
    pub rule: &'static str,
    pub line: u32,
    /// What blocks (`` `__syncthreads()` ``, `` `step()`, which reaches `__syncthreads` (line 6) ``).
    pub what: String,
}

/// The unroll pragma a loop carries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PragmaInfo {
    /// As written (`#pragma clang loop unroll_count(4)`), continuation lines joined.
    pub text: String,
    /// What it asks: `unroll`, `unroll N` or `nounroll`.
    pub hint: String,
    pub line: u32,
    /// `#pragma unroll` (full unroll), `#pragma nounroll`, `#pragma unroll 1`, `#pragma clang
    /// loop ...`: the author's decision, which a rewrite does not replace (see
    /// [`Refusal::UserPragma`]).
    pub user_decision: bool,
}

/// What the tuner needs to know of one loop.
#[derive(Debug, Clone, Serialize)]
pub struct LoopInfo {
    /// `FUNCTION:INDEX`, unique in the file.
    pub id: LoopId,
    /// Where it is in this parse.
    #[serde(skip)]
    pub loc: LoopLoc,
    /// Line and column of its `for`/`while`/`do` keyword.
    pub line: u32,
    pub column: u32,
    pub kind: LoopKind,
    pub function_kind: FunctionKind,
    /// 0 for an outermost loop.
    pub depth: u32,
    /// 0 for a loop with no loop inside, else 1 + the largest height of its inner loops (the
    /// tuner's "innermost first" order).
    pub height: u32,
    /// Byte offset of its keyword in [`Source::bytes`] (the tuner maps it through accepted
    /// edits to find the loop again in the rewritten text).
    #[serde(skip)]
    pub offset: usize,
    pub trip_count: Option<u64>,
    /// `candidate` or `blocked` under the rewrite policy (every blocker, no suppression).
    pub verdict: guards::Verdict,
    /// Evidence per blocker (at most three per rule), blockers in id order.
    pub blockers: Vec<BlockerInfo>,
    pub pragma: Option<PragmaInfo>,
    /// Calls whose body is nowhere visible in the file or its headers (see
    /// `guards::LoopVerdict::unresolved`); absent from the JSON when empty.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unresolved: Vec<String>,
}

impl LoopInfo {
    /// True when the tuner may rewrite this loop without `force`.
    pub fn rewritable(&self) -> bool {
        self.verdict == guards::Verdict::Candidate
            && !self.pragma.as_ref().is_some_and(|p| p.user_decision)
    }
}

/// The height of every loop of `f` (0 with no loop inside, else 1 + the largest height of its
/// inner loops), in one backward pass: loops are listed outer before inner, so every inner
/// loop is final before its parent is read. No recursion, whatever the nesting depth.
fn heights(f: &frontend::Function) -> Vec<u32> {
    let mut h = vec![0u32; f.loops.len()];
    for (i, l) in f.loops.iter().enumerate().rev() {
        if let Some(p) = l.parent.filter(|&p| p < i) {
            h[p] = h[p].max(h[i] + 1);
        }
    }
    h
}

/// How a variant renumbers the loops of its file (see [`Source::renumbering`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Renumbering {
    /// The loop that was rewritten, and the loops it became, in order (a manual unroll: the
    /// unrolled loop, then the remainder; empty when the edits add no loop, as a pragma).
    pub rewritten: LoopId,
    pub became: Vec<LoopId>,
    /// The other loops whose id changed: (before, after).
    pub moved: Vec<(LoopId, LoopId)>,
}

/// The functions one kernel of a file reaches ([`Source::kernel_reach`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reached {
    /// The kernel's qualified name.
    pub kernel: String,
    /// Each function reached (the kernel first): `None` for the file itself, else the header's
    /// path as the unit found it ([`frontend::tu::Header::path`]), and its qualified name.
    pub functions: Vec<(Option<std::path::PathBuf>, String)>,
}

/// What may be overridden.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Policy {
    /// Rewrite even a loop a guard blocks or whose pragma is the author's decision. The
    /// transform's own refusals are never overridden.
    pub force: bool,
}

/// Why a loop is not rewritten. [`Refusal::id`] is stable (scripts, counts, the tuner's ledger).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Refusal {
    /// A blocker rule blocks the loop.
    #[error("blocked by {} ({}); see `hip-unroll explain RULE`", rules(.blockers), evidence(.blockers))]
    GuardBlocked { blockers: Vec<BlockerInfo> },
    /// The loop carries a pragma that is the author's decision.
    #[error(
        "the loop carries `{pragma}` (line {line}), its author's decision; it is not replaced"
    )]
    UserPragma { pragma: String, line: u32 },
    /// The transform cannot prove the rewrite equivalent.
    #[error(transparent)]
    Transform(transforms::Refusal),
    /// The compiled variant lays out some kernel's arguments differently (see [`verify`]).
    #[error("the variant changes kernel signatures: {}", join(.0))]
    SignatureChanged(Vec<codeobj::signature::Difference>),
}

fn rules(b: &[BlockerInfo]) -> String {
    let mut r: Vec<&str> = b.iter().map(|x| x.rule).collect();
    r.dedup();
    r.join(", ")
}

fn evidence(b: &[BlockerInfo]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut last = "";
    for x in b {
        if x.rule != last {
            out.push(format!("{} at line {}: {}", x.rule, x.line, x.what));
            last = x.rule;
        }
    }
    out.join("; ")
}

fn join(d: &[codeobj::signature::Difference]) -> String {
    d.iter()
        .map(|x| x.to_string())
        .collect::<Vec<_>>()
        .join("; ")
}

impl Refusal {
    /// Stable kebab-case id: `guard-blocked`, `user-pragma`, `signature-changed`, or the
    /// transform's own ([`transforms::Refusal::id`]).
    pub fn id(&self) -> &'static str {
        match self {
            Refusal::GuardBlocked { .. } => "guard-blocked",
            Refusal::UserPragma { .. } => "user-pragma",
            Refusal::Transform(r) => r.id(),
            Refusal::SignatureChanged(_) => "signature-changed",
        }
    }

    /// True for refusals [`Policy::force`] overrides.
    pub fn overridable(&self) -> bool {
        matches!(
            self,
            Refusal::GuardBlocked { .. } | Refusal::UserPragma { .. }
        )
    }
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Lookup(#[from] LookupError),
    /// The loop is not rewritten: `id` at `line`, in `mode` by `factor`.
    #[error("cannot unroll loop {id} ({mode} x{factor}): {refusal} [{}]", .refusal.id())]
    Refused {
        id: LoopId,
        line: u32,
        mode: Mode,
        factor: u32,
        refusal: Refusal,
    },
}

/// One source file, parsed once and guarded once under the rewrite policy, in its translation
/// unit (the headers it includes: their helpers and macros are in the guards' reach and in the
/// manual rewrite's proof).
#[derive(Debug, Clone)]
pub struct Source {
    bytes: Vec<u8>,
    file: std::sync::Arc<SourceFile>,
    tu: TranslationUnit,
    analysis: guards::FileAnalysis,
    /// Per function, per loop: see [`LoopInfo::height`].
    heights: Vec<Vec<u32>>,
}

impl Source {
    /// Parse and guard `bytes` (any bytes: parsing never fails) alone: no include is
    /// followed, so every name a header would define is unseen (and refused for a manual
    /// rewrite when it looks like a macro).
    pub fn new(bytes: Vec<u8>) -> Source {
        Source::with_unit(bytes, TranslationUnit::empty())
    }

    /// Parse `bytes`, the contents of the file at `path`, resolve its includes with
    /// `includes` (its directory, then the search directories; headers parsed once per run by
    /// the cache), and guard it in that unit.
    pub fn open(path: &Path, bytes: Vec<u8>, includes: &Includes) -> Source {
        let (file, tu) = includes.open(path, &bytes);
        Source::parsed(bytes, file, tu)
    }

    /// Parse and guard `bytes` in a unit already resolved (a rewritten text of a file whose
    /// unit is known: the tuner's accepted edits), with the specifier macros its headers
    /// define.
    pub fn with_unit(bytes: Vec<u8>, tu: TranslationUnit) -> Source {
        let file = std::sync::Arc::new(tu.parse(&bytes));
        Source::parsed(bytes, file, tu)
    }

    fn parsed(bytes: Vec<u8>, file: std::sync::Arc<SourceFile>, tu: TranslationUnit) -> Source {
        let analysis = guards::analyze_for_rewrite_in(&file, &tu);
        let heights = file.functions.iter().map(heights).collect();
        Source {
            bytes,
            file,
            tu,
            analysis,
            heights,
        }
    }

    /// The file's translation unit (its headers, and the includes not found).
    pub fn unit(&self) -> &TranslationUnit {
        &self.tu
    }

    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    pub fn file(&self) -> &SourceFile {
        &self.file
    }

    /// What each kernel of the file reaches through calls in its translation unit (the guards'
    /// call graph, [`guards::kernel_reach`]): which kernels run a loop of a header helper.
    pub fn kernel_reach(&self) -> Vec<Reached> {
        guards::kernel_reach(&self.file, &self.tu)
            .into_iter()
            .map(|k| Reached {
                kernel: self.file.functions[k.kernel].qualified_name.clone(),
                functions: k
                    .functions
                    .into_iter()
                    .map(|(file, i)| {
                        let (path, f) = match file {
                            0 => (None, &self.file.functions[i]),
                            h => {
                                let h = &self.tu.headers[h - 1];
                                (Some(h.path.clone()), &h.file().functions[i])
                            }
                        };
                        (path, f.qualified_name.clone())
                    })
                    .collect(),
            })
            .collect()
    }

    /// Why this file can only be compiled as CUDA, if it can (what [`verify_plan`] reads).
    pub fn cuda_only(&self) -> Option<frontend::tu::CudaOnly> {
        self.tu.cuda_only(&self.file)
    }

    /// Every loop of the kernels and `__device__` functions, in source order of the functions.
    pub fn loops(&self) -> Vec<LoopInfo> {
        self.file
            .all_loops()
            .filter(|(_, f, _)| f.kind != FunctionKind::Host)
            .map(|(loc, _, _)| self.info(loc))
            .collect()
    }

    /// The loop a user's reference names (see [`SourceFile::resolve`]).
    pub fn resolve(&self, r: &LoopRef) -> Result<LoopLoc, LookupError> {
        self.file.resolve(r)
    }

    /// What is known of the loop at `loc`. Panics when `loc` is not a loop of this file.
    pub fn info(&self, loc: LoopLoc) -> LoopInfo {
        let f = &self.file.functions[loc.function];
        let l = &f.loops[loc.index];
        let v = self.analysis.verdict(loc);
        let blockers: Vec<BlockerInfo> = v
            .evidence
            .iter()
            .map(|e| BlockerInfo {
                rule: e.rule.id(),
                line: e.span.line,
                what: e.label.clone(),
            })
            .collect();
        let verdict = if blockers.is_empty() {
            guards::Verdict::Candidate
        } else {
            guards::Verdict::Blocked
        };
        let pragma = l.pragma.as_ref().map(|p| {
            let raw = self.bytes.get(p.span.start..p.span.end).unwrap_or_default();
            let text = String::from_utf8_lossy(raw)
                .replace("\\\r\n", " ")
                .replace("\\\n", " ");
            PragmaInfo {
                text: text.split_whitespace().collect::<Vec<_>>().join(" "),
                hint: guards::pragma_text(&p.hint),
                line: p.span.line,
                user_decision: matches!(p.hint, UnrollHint::NoUnroll | UnrollHint::Unroll(None))
                    || p.syntax == PragmaSyntax::ClangLoop,
            }
        });
        LoopInfo {
            id: self.file.loop_id(loc),
            loc,
            line: l.keyword.line,
            column: l.keyword.column,
            kind: l.kind,
            function_kind: f.kind,
            depth: l.depth,
            height: self.heights[loc.function][loc.index],
            offset: l.keyword.start,
            trip_count: l.trip_count,
            verdict,
            blockers,
            pragma,
            unresolved: v.unresolved.clone(),
        }
    }

    /// Why the loop at `loc` may not be rewritten under `policy`, if it may not (the guard and
    /// the pragma policy; the transform's own checks run in [`Source::variant`]).
    pub fn policy_refusal(&self, loc: LoopLoc, policy: Policy) -> Option<Refusal> {
        if policy.force {
            return None;
        }
        let info = self.info(loc);
        if info.verdict == guards::Verdict::Blocked {
            return Some(Refusal::GuardBlocked {
                blockers: info.blockers,
            });
        }
        match info.pragma {
            Some(p) if p.user_decision => Some(Refusal::UserPragma {
                pragma: p.text,
                line: p.line,
            }),
            _ => None,
        }
    }

    /// The loop at `loc` unrolled by `factor` in `mode`, or why not: the guard (unless
    /// forced), the author's pragma (unless forced), then the transform's proof of equivalence
    /// (never overridden). The variant has been re-parsed. `factor` [`FULL`] is a full unroll
    /// by pragma (`#pragma unroll` with no count), refused by the transform where the trip
    /// count is not a compile-time constant (`not-constant-trip`) and in manual mode.
    pub fn variant(
        &self,
        loc: LoopLoc,
        factor: u32,
        mode: Mode,
        policy: Policy,
    ) -> Result<Variant, Error> {
        let f = self.file.functions.get(loc.function);
        if f.is_none_or(|f| loc.index >= f.loops.len()) {
            return Err(Error::Lookup(LookupError::NoSuchLoop {
                function: f.map_or(format!("#{}", loc.function), |f| f.id.to_string()),
                index: loc.index,
                count: f.map_or(0, |f| f.loops.len()),
                candidates: Vec::new(),
            }));
        }
        let refused = |refusal| Error::Refused {
            id: self.file.loop_id(loc),
            line: self.file.functions[loc.function].loops[loc.index]
                .keyword
                .line,
            mode,
            factor,
            refusal,
        };
        if let Some(r) = self.policy_refusal(loc, policy) {
            return Err(refused(r));
        }
        match transforms::unroll_in(&self.bytes, &self.file, &self.tu, loc, factor, mode) {
            Ok(v) => Ok(v),
            Err(transforms::Error::Refused(r)) => Err(refused(Refusal::Transform(r))),
            Err(transforms::Error::Lookup(e)) => Err(Error::Lookup(e)),
        }
    }

    /// How the loop ids of this file change with `variant` of the loop at `loc` (a manual
    /// unroll adds loops, so the ids after it in its function move).
    pub fn renumbering(&self, loc: LoopLoc, variant: &Variant) -> Renumbering {
        // The rewritten text in the same unit: ids carry what its headers make them (the
        // namespaces their macros open).
        let new = self.tu.parse(&variant.source);
        let new_at = |offset: usize| {
            new.all_loops()
                .find(|(_, _, l)| l.keyword.start == offset)
                .map(|(nloc, _, _)| new.loop_id(nloc))
        };
        let mut moved = Vec::new();
        for (oloc, f, l) in self.file.all_loops() {
            if f.kind == FunctionKind::Host {
                continue;
            }
            let Some(o) = frontend::edit::map_offset(l.keyword.start, &variant.edits) else {
                continue; // the rewritten loop or a loop inside it
            };
            let old = self.file.loop_id(oloc);
            if let Some(n) = new_at(o).filter(|n| *n != old) {
                moved.push((old, n));
            }
        }
        // The loops the rewritten one became: those that start in the replaced text, at its
        // depth (the unrolled loop first, the remainder last).
        let target = &self.file.functions[loc.function].loops[loc.index];
        let mut shift: isize = 0;
        let mut spans = Vec::new();
        let mut edits: Vec<&Edit> = variant.edits.iter().collect();
        edits.sort_by_key(|e| e.range.start);
        for e in edits {
            let start = (e.range.start as isize + shift) as usize;
            spans.push(start..start + e.text.len());
            shift += e.text.len() as isize - e.range.len() as isize;
        }
        let became = new
            .all_loops()
            .filter(|(_, _, l)| {
                l.depth == target.depth && spans.iter().any(|r| r.contains(&l.keyword.start))
            })
            .map(|(nloc, _, _)| new.loop_id(nloc))
            .collect();
        Renumbering {
            rewritten: self.file.loop_id(loc),
            became,
            moved,
        }
    }

    /// Every variant of the loop at `loc` for `factors` in both modes (manual factor 1 is the
    /// original and is left out), each with its refusal when refused.
    pub fn variants(
        &self,
        loc: LoopLoc,
        factors: &[u32],
        policy: Policy,
    ) -> Vec<(Mode, u32, Result<Variant, Error>)> {
        let mut out = Vec::new();
        for &f in factors {
            for mode in [Mode::Pragma, Mode::Manual] {
                if mode == Mode::Manual && f == 1 {
                    continue;
                }
                out.push((mode, f, self.variant(loc, f, mode, policy)));
            }
        }
        out
    }
}
