//! hip-unroll's capture tool: an HSA tools library (`HSA_TOOLS_LIB`) whose `OnLoad` wraps the
//! runtime's API table so that it sees every device allocation, every code object loaded (from
//! memory, from a file, or deserialised), every kernel symbol looked up and every packet
//! submitted; at the chosen dispatch (kernel-name regex, 0-based dispatch index) it drains the
//! queue, then writes a version-1 snapshot (`replay::snapshot`) before the packet reaches the
//! hardware.
//!
//! Configuration comes from the environment `hip-unroll capture` sets
//! (`replay::launch::env`); rocm-perf-lab's `ISOLATE_KERNEL`/`ISOLATE_DISPATCH_INDEX` are read
//! when those are absent. Progress and failures go to a JSON status file, never to the
//! application's output.

mod hooks;
mod snap;
mod status;
pub mod track;

use regex::Regex;
use replay::ffi::{ApiTableVersion, HsaApiTable};
use replay::launch::{env, CaptureStatus, TableInfo};
use replay::table::{self, AmdLayout, Table};
use std::ffi::c_char;
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

/// What to capture.
#[derive(Debug)]
pub struct Config {
    pub kernel: Option<Regex>,
    pub dispatch: u64,
    pub out: PathBuf,
    pub status: Option<PathBuf>,
    pub drain_timeout: Duration,
}

impl Config {
    /// Read the configuration; an unusable value is an error for the status file.
    pub fn from_env() -> Result<Config, String> {
        let var = |a: &str, b: &str| std::env::var(a).or_else(|_| std::env::var(b)).ok();
        let kernel = match var(env::KERNEL, env::ISOLATE_KERNEL) {
            Some(k) => {
                Some(Regex::new(&k).map_err(|e| format!("{}: bad regex: {e}", env::KERNEL))?)
            }
            None => None,
        };
        let dispatch = match var(env::DISPATCH, env::ISOLATE_DISPATCH_INDEX) {
            Some(d) => d
                .trim()
                .parse()
                .map_err(|_| format!("{}: `{d}` is not a dispatch index", env::DISPATCH))?,
            None => 0,
        };
        let out = std::env::var_os(env::OUT)
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from(format!("isolate_capture_{}", std::process::id())));
        let drain_timeout = match std::env::var(env::TIMEOUT) {
            Ok(t) => Duration::from_secs_f64(
                t.trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|s| s.is_finite() && *s > 0.0)
                    .ok_or_else(|| format!("{}: `{t}` is not a number of seconds", env::TIMEOUT))?,
            ),
            Err(_) => Duration::from_secs(60),
        };
        Ok(Config {
            kernel,
            dispatch,
            out,
            status: std::env::var_os(env::STATUS).map(PathBuf::from),
            drain_timeout,
        })
    }
}

/// The tool's process-wide state.
pub(crate) struct Tool {
    pub core: Table,
    pub amd: Option<(Table, AmdLayout)>,
    pub real: hooks::Real,
    pub config: Option<Config>,
    pub state: Mutex<track::State>,
    /// Held for the whole capture; `done` once it happened (or failed).
    pub capture: Mutex<bool>,
    pub status: Mutex<CaptureStatus>,
}

static TOOL: OnceLock<Tool> = OnceLock::new();

pub(crate) fn tool() -> Option<&'static Tool> {
    TOOL.get()
}

/// Write the status file (temp file + rename), if one was asked for.
pub(crate) fn write_status(status: &CaptureStatus, path: Option<&PathBuf>) {
    let Some(path) = path else { return };
    let Ok(json) = serde_json::to_vec_pretty(status) else {
        return;
    };
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    if std::fs::write(&tmp, json).is_ok() {
        let _ = std::fs::rename(&tmp, path);
    }
}

/// Refresh the status counters and write it.
pub(crate) fn flush_status() {
    flush(false)
}

/// As [`flush_status`]; with `try_only`, give up rather than wait for a lock (at exit, another
/// thread may be inside a hook forever).
fn flush(try_only: bool) {
    let Some(t) = tool() else { return };
    let lock =
        |m: &'static Mutex<track::State>| -> Option<std::sync::MutexGuard<'static, track::State>> {
            if try_only {
                match m.try_lock() {
                    Ok(g) => Some(g),
                    Err(std::sync::TryLockError::Poisoned(e)) => Some(e.into_inner()),
                    Err(std::sync::TryLockError::WouldBlock) => None,
                }
            } else {
                Some(m.lock().unwrap_or_else(|e| e.into_inner()))
            }
        };
    let Some(s) = lock(&t.state) else { return };
    let (kernels, unnamed, live) = {
        (
            s.seen
                .iter()
                .map(|(n, c)| replay::launch::KernelCount {
                    name: n.clone(),
                    dispatches: *c,
                })
                .collect(),
            s.unnamed_dispatches,
            s.allocs.len(),
        )
    };
    drop(s);
    let mut st = match t.status.try_lock() {
        Ok(g) => g,
        Err(std::sync::TryLockError::Poisoned(e)) => e.into_inner(),
        Err(std::sync::TryLockError::WouldBlock) if try_only => return,
        Err(std::sync::TryLockError::WouldBlock) => {
            t.status.lock().unwrap_or_else(|e| e.into_inner())
        }
    };
    st.kernels = kernels;
    st.unnamed_dispatches = unnamed;
    st.live_regions = live;
    write_status(&st, t.config.as_ref().and_then(|c| c.status.as_ref()));
}

extern "C" fn at_exit() {
    let _ = std::panic::catch_unwind(|| flush(true));
}

fn tool_name() -> String {
    format!("hip-unroll-capture {}", env!("CARGO_PKG_VERSION"))
}

/// Called by the HSA runtime when it loads the tool.
///
/// # Safety
/// `table` must be the runtime's API table, valid for the life of the process.
#[no_mangle]
pub unsafe extern "C" fn OnLoad(
    table: *mut HsaApiTable,
    _runtime_version: u64,
    _failed_tool_count: u64,
    _failed_tool_names: *const *const c_char,
) -> bool {
    std::panic::catch_unwind(|| unsafe { on_load(table) }).unwrap_or(false)
}

unsafe fn on_load(table: *mut HsaApiTable) -> bool {
    let config = Config::from_env();
    let status_path = std::env::var_os(env::STATUS).map(PathBuf::from);
    let mut status = CaptureStatus {
        tool: tool_name(),
        pid: std::process::id(),
        ..Default::default()
    };
    let fail = |mut status: CaptureStatus, e: String| {
        status.error = Some(e);
        write_status(&status, status_path.as_ref());
        false
    };
    if table.is_null() {
        return fail(status, "the runtime passed no API table".into());
    }
    let root = &*table;
    let Some(core) = Table::new(root.core) else {
        return fail(status, table::LayoutError::Missing("core").to_string());
    };
    if let Err(e) = table::check_core(&core.version()) {
        return fail(status, e.to_string());
    }
    let amd_present =
        (std::mem::offset_of!(HsaApiTable, amd_ext) + 8) as u32 <= root.version.minor_id;
    let amd = if amd_present {
        Table::new(root.amd_ext)
    } else {
        None
    };
    let amd = match amd {
        Some(t) => match table::amd_layout(&t.version()) {
            Ok(l) => Some((t, l)),
            Err(e) => return fail(status, e.to_string()),
        },
        None => None,
    };
    let v = |t: &Table| -> ApiTableVersion { t.version() };
    let config = match config {
        Ok(c) => Some(c),
        Err(e) => {
            status.error = Some(e);
            None
        }
    };
    let (real, absent) = hooks::install(&core, amd.as_ref());
    status.tables = Some(TableInfo {
        core_major: v(&core).major_id,
        core_size: v(&core).minor_id,
        amd_ext_major: amd.as_ref().map_or(0, |(t, _)| v(t).major_id),
        amd_ext_size: amd.as_ref().map_or(0, |(t, _)| v(t).minor_id),
        amd_ext_layout: match amd {
            Some((_, AmdLayout::Legacy)) => "legacy (ROCm 5.2-5.5)".into(),
            Some((_, AmdLayout::Current)) => "current (ROCm 5.6+)".into(),
            None => "absent".into(),
        },
        absent,
    });
    if config.as_ref().is_some_and(|c| c.kernel.is_none()) {
        status.error = Some(format!("{} is not set: nothing to capture", env::KERNEL));
    }
    let tool = Tool {
        core,
        amd,
        real,
        config,
        state: Mutex::new(track::State::default()),
        capture: Mutex::new(false),
        status: Mutex::new(status),
    };
    if TOOL.set(tool).is_err() {
        // Loaded twice: the first instance keeps working.
        return true;
    }
    hooks::activate();
    libc::atexit(at_exit);
    flush_status();
    true
}

/// Called by the HSA runtime when it unloads the tool (`hsa_shut_down`).
#[no_mangle]
pub extern "C" fn OnUnload() {
    let _ = std::panic::catch_unwind(flush_status);
}
