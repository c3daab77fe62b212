//! Running a workload under rocprofv3 (or legacy rocprof): tool detection, counter presets,
//! splitting counters into passes, the exact command lines, and execution with a timeout.
//!
//! ## Passes
//! rocprofv3 fails a run whose `--pmc` set does not fit one pass ("job will fail if entire set
//! of counters cannot be collected in single pass", `--pmc` help in
//! `projects/rocprofiler-sdk/source/bin/rocprofv3.py`). Counters are therefore packed into
//! passes, first fit in the order given, with at most [`block_limit`] counters of one hardware
//! block per pass: SQ 8, TA 2, TD 2, TCP 4, TCC 4, CPC 2, CPF 2, SPI 6, GRBM 2, GDS 4 — the
//! `perfmon_config` of gfx908, gfx90a and gfx940-942 in rocprof-compute's
//! `src/utils/mi_gpu_spec.yaml` (copied there from aqlprofile's gfx9 block info). The block of
//! a counter is its name up to the first `_` (`TCC_EA0_RDREQ` -> TCC); unknown blocks get 2.
//! Each pass is one rocprofv3 run writing into `OUT/pass_N`; `load` takes timings from the
//! first pass and joins the counters of the others by kernel and occurrence.

use crate::error::{Error, Result};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Counter presets, mirroring what ROCm users know from rocprof-compute's panels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Preset {
    /// Kernel trace only, no counters: least perturbation.
    Lightweight,
    /// Kernel trace plus wave and busy counters.
    Kernel,
    /// VALU/SALU/MFMA instruction mix and wave counters (FLOP counters of the roofline).
    Compute,
    /// L2 (TCC), L1 (TCP), LDS and DRAM (TCC EA) counters (byte counters of the roofline).
    Memory,
    /// Compute and memory together: everything the roofline needs.
    Full,
}

impl std::str::FromStr for Preset {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        Ok(match s {
            "lightweight" => Preset::Lightweight,
            "kernel" => Preset::Kernel,
            "compute" => Preset::Compute,
            "memory" => Preset::Memory,
            "full" => Preset::Full,
            _ => return Err(Error::UnknownPreset(s.to_string())),
        })
    }
}

fn is_gfx94x(arch: &str) -> bool {
    arch.starts_with("gfx94") || arch.starts_with("gfx95")
}

/// The counters of a preset. `arch` picks the TCC EA names: gfx94x/gfx95x have `TCC_EA0_*`
/// and `TCC_BUBBLE` (used by the MI300 byte formula), gfx90a and older `TCC_EA_*`.
pub fn preset_counters(preset: Preset, arch: &str) -> Vec<String> {
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<String>>();
    let kernel = s(&[
        "SQ_WAVES",
        "SQ_BUSY_CYCLES",
        "GRBM_COUNT",
        "GRBM_GUI_ACTIVE",
    ]);
    let mut compute = s(&[
        "SQ_WAVES",
        "SQ_INSTS_VALU",
        "SQ_INSTS_SALU",
        "SQ_ACTIVE_INST_VALU",
        "GRBM_GUI_ACTIVE",
    ]);
    for t in ["F16", "F32", "F64"] {
        for op in ["ADD", "MUL", "FMA", "TRANS"] {
            compute.push(format!("SQ_INSTS_VALU_{op}_{t}"));
        }
    }
    compute.extend(s(&[
        "SQ_INSTS_VALU_MFMA_MOPS_F16",
        "SQ_INSTS_VALU_MFMA_MOPS_BF16",
        "SQ_INSTS_VALU_MFMA_MOPS_F32",
        "SQ_INSTS_VALU_MFMA_MOPS_F64",
    ]));
    let ea = if is_gfx94x(arch) {
        s(&[
            "TCC_EA0_RDREQ",
            "TCC_EA0_RDREQ_32B",
            "TCC_EA0_WRREQ",
            "TCC_EA0_WRREQ_64B",
            "TCC_BUBBLE",
        ])
    } else {
        s(&[
            "TCC_EA_RDREQ",
            "TCC_EA_RDREQ_32B",
            "TCC_EA_WRREQ",
            "TCC_EA_WRREQ_64B",
        ])
    };
    let mut memory = s(&["TCC_HIT", "TCC_MISS"]);
    memory.extend(ea);
    memory.extend(s(&[
        "TCP_TOTAL_CACHE_ACCESSES",
        "TCP_TCC_READ_REQ",
        "TCP_TCC_WRITE_REQ",
        "SQ_INSTS_VMEM_RD",
        "SQ_INSTS_VMEM_WR",
        "SQ_INSTS_LDS",
        "SQ_LDS_BANK_CONFLICT",
        "GRBM_GUI_ACTIVE",
    ]));
    let list: Vec<String> = match preset {
        Preset::Lightweight => vec![],
        Preset::Kernel => kernel,
        Preset::Compute => compute,
        Preset::Memory => memory,
        Preset::Full => compute.into_iter().chain(memory).collect(),
    };
    dedup(list.into_iter())
}

fn dedup(it: impl Iterator<Item = String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for c in it {
        if !out.contains(&c) {
            out.push(c);
        }
    }
    out
}

/// Counters of one hardware block that fit in one pass (see the module doc for the source).
pub fn block_limit(block: &str) -> usize {
    match block {
        "SQ" => 8,
        "TA" | "TD" | "CPC" | "CPF" | "GRBM" => 2,
        "TCP" | "TCC" | "GDS" => 4,
        "SPI" => 6,
        _ => 2,
    }
}

/// The block a counter belongs to.
pub fn block_of(counter: &str) -> &str {
    counter.split('_').next().unwrap_or(counter)
}

/// Pack counters into passes: first fit, in order, at most [`block_limit`] per block and pass.
pub fn split_passes(counters: &[String]) -> Vec<Vec<String>> {
    let mut passes: Vec<Vec<String>> = Vec::new();
    for c in dedup(counters.iter().cloned()) {
        let block = block_of(&c).to_string();
        let lim = block_limit(&block);
        match passes
            .iter_mut()
            .find(|p| p.iter().filter(|x| block_of(x) == block).count() < lim)
        {
            Some(p) => p.push(c),
            None => passes.push(vec![c]),
        }
    }
    passes
}

/// Which profiler is installed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tool {
    /// rocprofv3; `version` as printed by `rocprofv3 --version` (`1.0.0`), when it printed one.
    Rocprofv3 {
        program: PathBuf,
        version: Option<String>,
    },
    /// Legacy rocprof (v1 command line).
    RocprofV1 { program: PathBuf },
}

impl Tool {
    pub fn program(&self) -> &Path {
        match self {
            Tool::Rocprofv3 { program, .. } | Tool::RocprofV1 { program } => program,
        }
    }
    /// rocpd output exists from rocprofiler-sdk 1.0 (ROCm 7.0).
    pub fn supports_rocpd(&self) -> bool {
        match self {
            Tool::Rocprofv3 {
                version: Some(v), ..
            } => v
                .split('.')
                .next()
                .and_then(|m| m.parse::<u32>().ok())
                .is_some_and(|m| m >= 1),
            _ => false,
        }
    }
}

/// What to run.
#[derive(Debug, Clone)]
pub struct Plan {
    pub counters: Vec<String>,
    pub out_dir: PathBuf,
    pub kernel_regex: Option<String>,
    pub app: Vec<String>,
}

/// One profiler invocation.
#[derive(Debug, Clone, PartialEq)]
pub struct Invocation {
    pub argv: Vec<String>,
    /// Directory this pass writes into.
    pub dir: PathBuf,
    /// A counter input file to write before running (legacy rocprof `-i`).
    pub input_file: Option<(PathBuf, String)>,
}

/// The output base name given to rocprofv3's `-o`.
pub const OUTPUT_NAME: &str = "run";

/// Build the command lines: one invocation per counter pass (one with no counters when the
/// preset has none). Pure: no I/O.
pub fn build(tool: &Tool, plan: &Plan) -> Vec<Invocation> {
    let passes = if plan.counters.is_empty() {
        vec![Vec::new()]
    } else {
        split_passes(&plan.counters)
    };
    let prog = tool.program().to_string_lossy().into_owned();
    passes
        .into_iter()
        .enumerate()
        .map(|(i, pass)| {
            let dir = plan.out_dir.join(format!("pass_{}", i + 1));
            let d = dir.to_string_lossy().into_owned();
            match tool {
                Tool::Rocprofv3 { .. } => {
                    let mut argv = vec![
                        prog.clone(),
                        "--kernel-trace".into(),
                        "--stats".into(),
                        "-f".into(),
                        "csv".into(),
                    ];
                    if tool.supports_rocpd() {
                        argv.push("rocpd".into());
                    }
                    argv.extend(["-d".into(), d.clone(), "-o".into(), OUTPUT_NAME.into()]);
                    if !pass.is_empty() {
                        argv.push("--pmc".into());
                        argv.extend(pass.iter().cloned());
                        if let Some(re) = &plan.kernel_regex {
                            argv.extend(["--kernel-include-regex".into(), re.clone()]);
                        }
                    }
                    argv.push("--".into());
                    argv.extend(plan.app.iter().cloned());
                    Invocation {
                        argv,
                        dir,
                        input_file: None,
                    }
                }
                Tool::RocprofV1 { .. } => {
                    let mut argv = vec![prog.clone()];
                    let mut input_file = None;
                    if !pass.is_empty() {
                        let f = dir.join("input.txt");
                        argv.extend(["-i".into(), f.to_string_lossy().into_owned()]);
                        input_file = Some((f, format!("pmc: {}\n", pass.join(" "))));
                    }
                    argv.extend([
                        "--timestamp".into(),
                        "on".into(),
                        "--stats".into(),
                        "-d".into(),
                        d.clone(),
                        "-o".into(),
                        dir.join("results.csv").to_string_lossy().into_owned(),
                    ]);
                    argv.extend(plan.app.iter().cloned());
                    Invocation {
                        argv,
                        dir,
                        input_file,
                    }
                }
            }
        })
        .collect()
}

/// Find an executable on a PATH-like string.
pub fn which(name: &str, path_var: Option<&std::ffi::OsStr>) -> Option<PathBuf> {
    let path_var = path_var?;
    std::env::split_paths(path_var)
        .map(|d| d.join(name))
        .find(|p| {
            use std::os::unix::fs::PermissionsExt;
            p.metadata()
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// Parse `rocprofv3 --version` output (`         version: 1.0.0` among other keys).
pub fn parse_version(out: &str) -> Option<String> {
    out.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k.trim() == "version")
            .then(|| v.trim().to_string())
            .filter(|v| !v.is_empty())
    })
}

/// Detect rocprofv3 (preferred) or legacy rocprof on `PATH`.
pub fn detect() -> Result<Tool> {
    let path = std::env::var_os("PATH");
    if let Some(p) = which("rocprofv3", path.as_deref()) {
        let version = std::process::Command::new(&p)
            .arg("--version")
            .output()
            .ok()
            .and_then(|o| parse_version(&String::from_utf8_lossy(&o.stdout)));
        return Ok(Tool::Rocprofv3 {
            program: p,
            version,
        });
    }
    if let Some(p) = which("rocprof", path.as_deref()) {
        return Ok(Tool::RocprofV1 { program: p });
    }
    Err(Error::NoProfiler)
}

/// The gfx target of this machine's first GPU, from `rocm_agent_enumerator` on `PATH`; `None`
/// when it is not installed, or lists no GPU.
pub fn local_arch() -> Option<String> {
    local_arch_from(Path::new("rocm_agent_enumerator"))
}

/// [`local_arch`] with the enumerator at `program`.
pub fn local_arch_from(program: &Path) -> Option<String> {
    let out = std::process::Command::new(program).output().ok()?;
    first_gpu(&String::from_utf8_lossy(&out.stdout))
}

/// The first GPU target in `rocm_agent_enumerator`'s output: one agent per line, `gfx000`
/// being the CPU.
pub fn first_gpu(out: &str) -> Option<String> {
    out.lines()
        .map(str::trim)
        .find(|l| l.starts_with("gfx") && *l != "gfx000")
        .map(str::to_string)
}

/// The longest time limit of one profiled run (one day).
pub const MAX_TIMEOUT: Duration = Duration::from_secs(86_400);

/// Check a run's time limit: more than 0, at most [`MAX_TIMEOUT`].
pub fn check_timeout(timeout: Duration) -> Result<()> {
    if timeout.is_zero() || timeout > MAX_TIMEOUT {
        return Err(Error::BadTimeout(timeout.as_secs_f64()));
    }
    Ok(())
}

/// Run every pass in order (`before` is told each one first, 0-based), each within `timeout`;
/// the pass directories of this run, to read back (not stale ones of an earlier run).
pub fn execute_all(
    invocations: &[Invocation],
    timeout: Duration,
    mut before: impl FnMut(usize, &Invocation),
) -> Result<Vec<std::path::PathBuf>> {
    for (i, inv) in invocations.iter().enumerate() {
        before(i, inv);
        execute(inv, timeout)?;
    }
    Ok(invocations.iter().map(|inv| inv.dir.clone()).collect())
}

/// Run one invocation with a timeout; its stdout and stderr go to `DIR/profiler.log`.
/// It runs in its own process group (through `childproc`): on timeout the whole group is killed,
/// and so it is when hip-unroll dies, even by `kill -9` (rocprofv3 and the application it
/// started would otherwise run on, reparented to PID 1).
pub fn execute(inv: &Invocation, timeout: Duration) -> Result<()> {
    check_timeout(timeout)?;
    std::fs::create_dir_all(&inv.dir).map_err(crate::error::io(&inv.dir))?;
    if let Some((f, text)) = &inv.input_file {
        std::fs::write(f, text).map_err(crate::error::io(f))?;
    }
    let log_path = inv.dir.join("profiler.log");
    let program = inv.argv[0].clone();
    let out = childproc::Job::new(&inv.argv[0], timeout)
        .args(&inv.argv[1..])
        .group_dies_with_parent()
        .run(|_| {})
        .map_err(|e| match e {
            childproc::Error::Spawn { error, .. } => Error::Spawn {
                program: program.clone(),
                error,
            },
            _ => Error::Timeout {
                program: program.clone(),
                secs: timeout.as_secs(),
            },
        })?;
    let mut log = out.stdout.clone();
    if !out.stderr.is_empty() {
        log.push_str(&out.stderr);
    }
    std::fs::write(&log_path, &log).map_err(crate::error::io(&log_path))?;
    let status = out.status_text();
    if !out.success() {
        let text = log;
        let lines: Vec<&str> = text.lines().collect();
        let tail = lines[lines.len().saturating_sub(15)..].join("\n");
        return Err(Error::ProfilerFailed {
            program,
            status,
            tail,
            log: log_path,
        });
    }
    Ok(())
}
