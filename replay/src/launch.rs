//! `hip-unroll capture`: finds the capture tool library, makes sure the machine has a GPU the
//! HSA runtime can use (so that no application is started for nothing), runs the application
//! with `HSA_TOOLS_LIB` pointing at the tool, and reads the status file the tool leaves.
//! The only module of `replay` that spawns a process.

use crate::device::{self, DeviceError};
use serde::{Deserialize, Serialize};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The tool library's file name (the `hip-unroll-capture` crate's cdylib).
pub const TOOL_FILE: &str = "libhip_unroll_capture.so";
/// Overrides where `capture` looks for the tool.
pub const TOOL_ENV: &str = "HIP_UNROLL_CAPTURE_LIB";

/// The environment the tool reads (set by `capture`).
pub mod env {
    /// Regex over the kernel's demangled and mangled names.
    pub const KERNEL: &str = "HIP_UNROLL_CAPTURE_KERNEL";
    /// 0-based index among the dispatches of the matching kernel.
    pub const DISPATCH: &str = "HIP_UNROLL_CAPTURE_DISPATCH";
    /// The snapshot directory to create.
    pub const OUT: &str = "HIP_UNROLL_CAPTURE_OUT";
    /// Where the tool writes its [`super::CaptureStatus`] (JSON).
    pub const STATUS: &str = "HIP_UNROLL_CAPTURE_STATUS";
    /// Seconds to wait for the queue to drain before copying memory.
    pub const TIMEOUT: &str = "HIP_UNROLL_CAPTURE_TIMEOUT";
    /// rocm-perf-lab's names, read when hip-unroll's are absent.
    pub const ISOLATE_KERNEL: &str = "ISOLATE_KERNEL";
    pub const ISOLATE_DISPATCH_INDEX: &str = "ISOLATE_DISPATCH_INDEX";
}

/// What the tool reports (written at the capture and again when the process ends).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CaptureStatus {
    pub tool: String,
    pub pid: u32,
    /// The API-table versions the runtime handed to `OnLoad`.
    #[serde(default)]
    pub tables: Option<TableInfo>,
    /// A problem that kept the tool from working at all.
    #[serde(default)]
    pub error: Option<String>,
    #[serde(default)]
    pub captured: Option<Captured>,
    /// The capture was attempted and failed.
    #[serde(default)]
    pub capture_error: Option<String>,
    /// Dispatches seen per kernel, in first-seen order.
    #[serde(default)]
    pub kernels: Vec<KernelCount>,
    /// Dispatch packets whose kernel object no symbol query named.
    #[serde(default)]
    pub unnamed_dispatches: u64,
    /// Allocations tracked when the status was written.
    #[serde(default)]
    pub live_regions: usize,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TableInfo {
    pub core_major: u32,
    pub core_size: u32,
    pub amd_ext_major: u32,
    pub amd_ext_size: u32,
    pub amd_ext_layout: String,
    /// Entries the runtime's tables lack (so those APIs are not tracked).
    pub absent: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Captured {
    pub dir: String,
    pub kernel: String,
    pub dispatch_index: u64,
    pub regions: usize,
    pub bytes: u64,
    /// Regions whose copy failed (recorded in the snapshot with the reason).
    pub failed_regions: usize,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct KernelCount {
    pub name: String,
    pub dispatches: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    #[error("the capture tool {TOOL_FILE} was not found (looked in: {0}); build it with `cargo build --release` (it is built beside hip-unroll) or set {TOOL_ENV}")]
    ToolMissing(String),
    #[error(transparent)]
    Device(#[from] DeviceError),
    /// The snapshot directory exists (the binary names the option that chooses another).
    #[error("{0} already exists; choose another snapshot directory")]
    OutputExists(String),
    #[error("cannot run {app}: {error}")]
    Spawn { app: String, error: std::io::Error },
    #[error("{0}")]
    Io(String),
    /// The drain time limit is out of bounds (the binary names its flag).
    #[error("the time limit must be 1 to 86400 seconds (got {0})")]
    BadTimeout(u64),
}

/// Where `capture` looks for the tool, in order: `$HIP_UNROLL_CAPTURE_LIB`; beside the running
/// executable (cargo puts `libhip_unroll_capture.so` next to `hip-unroll`); `../lib/` and
/// `../lib/hip-unroll/` relative to it (an installed layout); then cargo's `deps/` beside it,
/// where `cargo test` leaves the library without copying it up next to the binary.
pub fn tool_candidates(exe: Option<&Path>) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Some(p) = std::env::var_os(TOOL_ENV) {
        out.push(PathBuf::from(p));
        return out;
    }
    if let Some(dir) = exe.and_then(Path::parent) {
        out.push(dir.join(TOOL_FILE));
        out.push(dir.join("../lib").join(TOOL_FILE));
        out.push(dir.join("../lib/hip-unroll").join(TOOL_FILE));
        // Test binaries run from target/<profile>/deps.
        out.push(dir.join("..").join(TOOL_FILE));
        out.push(dir.join("deps").join(TOOL_FILE));
    }
    out
}

/// The first existing candidate.
pub fn find_tool(exe: Option<&Path>) -> Result<PathBuf, CaptureError> {
    let c = tool_candidates(exe);
    c.iter()
        .find(|p| p.is_file())
        .map(|p| std::fs::canonicalize(p).unwrap_or_else(|_| p.clone()))
        .ok_or_else(|| {
            CaptureError::ToolMissing(
                c.iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
            )
        })
}

/// One capture to make.
#[derive(Debug, Clone)]
pub struct Request {
    pub kernel: String,
    pub dispatch: u64,
    pub out: PathBuf,
    pub app: Vec<OsString>,
    /// Seconds the tool waits for the queue to drain.
    pub drain_timeout_secs: u64,
    pub runtime_library: Option<PathBuf>,
}

/// What happened.
#[derive(Debug)]
pub struct Outcome {
    pub tool: PathBuf,
    pub gpus: Vec<String>,
    pub app_status: std::process::ExitStatus,
    /// `None` when the tool never wrote one (it was not loaded).
    pub status: Option<CaptureStatus>,
}

/// The environment the application runs with.
pub fn tool_env(req: &Request, tool: &Path, status: &Path) -> Vec<(OsString, OsString)> {
    let mut tools: OsString = tool.as_os_str().to_owned();
    if let Some(prev) = std::env::var_os("HSA_TOOLS_LIB").filter(|p| !p.is_empty()) {
        // The runtime loads every library of the space-separated list.
        let mut v = prev;
        v.push(" ");
        v.push(&tools);
        tools = v;
    }
    vec![
        ("HSA_TOOLS_LIB".into(), tools),
        ("HSA_TOOLS_REPORT_LOAD_FAILURE".into(), "1".into()),
        (env::KERNEL.into(), req.kernel.clone().into()),
        (env::DISPATCH.into(), req.dispatch.to_string().into()),
        (env::OUT.into(), req.out.as_os_str().to_owned()),
        (env::STATUS.into(), status.as_os_str().to_owned()),
        (
            env::TIMEOUT.into(),
            req.drain_timeout_secs.to_string().into(),
        ),
    ]
}

/// Run the application under the capture tool. Fails before starting it when the tool is
/// missing, the output exists, or the runtime finds no GPU.
pub fn capture(req: &Request, exe: Option<&Path>) -> Result<Outcome, CaptureError> {
    if req.drain_timeout_secs == 0 || req.drain_timeout_secs > crate::run::MAX_TIMEOUT.as_secs() {
        return Err(CaptureError::BadTimeout(req.drain_timeout_secs));
    }
    let tool = find_tool(exe)?;
    if req.out.exists() {
        return Err(CaptureError::OutputExists(req.out.display().to_string()));
    }
    let gpus = device::probe(req.runtime_library.as_deref())?;
    let out_abs = std::path::absolute(&req.out).map_err(|e| CaptureError::Io(e.to_string()))?;
    let status_path = std::env::temp_dir().join(format!(
        "hip-unroll-capture-status-{}.json",
        std::process::id()
    ));
    let _ = std::fs::remove_file(&status_path);
    let mut req_abs = req.clone();
    req_abs.out = out_abs;
    let app = req
        .app
        .first()
        .ok_or_else(|| CaptureError::Io("no application given".into()))?;
    let mut cmd = Command::new(app);
    cmd.args(&req.app[1..]);
    if let Some(lib) = &req.runtime_library {
        cmd.env(crate::runtime::LIBRARY_ENV, lib);
    }
    for (k, v) in tool_env(&req_abs, &tool, &status_path) {
        cmd.env(k, v);
    }
    let app_status = cmd.status().map_err(|error| CaptureError::Spawn {
        app: app.to_string_lossy().into_owned(),
        error,
    })?;
    let status = std::fs::read(&status_path)
        .ok()
        .and_then(|b| serde_json::from_slice::<CaptureStatus>(&b).ok());
    let _ = std::fs::remove_file(&status_path);
    Ok(Outcome {
        tool,
        gpus,
        app_status,
        status,
    })
}
