//! `hip-unroll capture --kernel RE [--dispatch N] [-o DIR] -- APP ARGS...`: runs the application
//! under the capture tool and reports what it captured (logic in `replay::launch`).
//!
//! Exit status: 0 a snapshot was written; 2 otherwise (bad arguments, the tool library not
//! found, no GPU — checked before the application starts —, the application never loaded the
//! tool, no dispatch matched, or the capture failed).

use anyhow::bail;
use replay::launch::{self, Request};
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct CaptureArgs {
    /// Regex over the kernel's demangled and mangled names (`scale<`, `^_Z5scale`).
    #[arg(long, value_name = "RE")]
    pub kernel: String,
    /// Which dispatch of the matching kernel to capture, counting from 0.
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub dispatch: u64,
    /// The snapshot directory to create (must not exist).
    #[arg(
        short = 'o',
        long = "output",
        value_name = "DIR",
        default_value = "hip-unroll-snapshot"
    )]
    pub out: PathBuf,
    /// Seconds to wait for the application's earlier GPU work to finish before copying memory.
    #[arg(long, default_value_t = 60, value_name = "SECS")]
    pub timeout: u64,
    /// The application and its arguments.
    #[arg(last = true, required = true, value_name = "APP ARGS")]
    pub app: Vec<OsString>,
}

pub fn run(args: CaptureArgs) -> anyhow::Result<ExitCode> {
    crate::cli::regex_arg("--kernel", &args.kernel)?;
    if args.timeout == 0 {
        bail!("--timeout must be at least 1 second");
    }
    let req = Request {
        kernel: args.kernel.clone(),
        dispatch: args.dispatch,
        out: args.out.clone(),
        app: args.app,
        drain_timeout_secs: args.timeout,
        runtime_library: None,
    };
    let exe = std::env::current_exe().ok();
    let o = launch::capture(&req, exe.as_deref()).map_err(capture_hint)?;
    let app_failed =
        (!o.app_status.success()).then(|| format!("the application exited with {}", o.app_status));
    let Some(st) = o.status else {
        bail!(
            "the application never loaded the capture tool {} (HSA_TOOLS_LIB); is it a HIP/HSA program?{}",
            o.tool.display(),
            app_failed.map(|a| format!(" ({a})")).unwrap_or_default()
        );
    };
    if let Some(e) = &st.error {
        if st.captured.is_none() {
            bail!("capture tool: {e}");
        }
    }
    let Some(c) = &st.captured else {
        if let Some(e) = &st.capture_error {
            bail!("capture failed: {e}");
        }
        let seen: Vec<String> = st
            .kernels
            .iter()
            .map(|k| format!("{} ({})", k.name, k.dispatches))
            .collect();
        bail!(
            "no dispatch {} of a kernel matching `{}` was seen; kernels dispatched: {}{}",
            args.dispatch,
            args.kernel,
            if seen.is_empty() {
                "none".to_string()
            } else {
                seen.join(", ")
            },
            app_failed.map(|a| format!(" ({a})")).unwrap_or_default()
        );
    };
    let mut text = format!(
        "captured {} dispatch {} into {}: {} regions, {} bytes\n",
        c.kernel, c.dispatch_index, c.dir, c.regions, c.bytes
    );
    if c.failed_regions > 0 {
        text.push_str(&format!(
            "warning: {} region(s) could not be copied (recorded in memory_regions.json; replay needs --force)\n",
            c.failed_regions
        ));
    }
    if let Some(a) = &app_failed {
        text.push_str(&format!("warning: {a}\n"));
    }
    crate::files::stdout(&text)?;
    if let Some(e) = &st.capture_error {
        bail!("the snapshot is not usable: {e}");
    }
    Ok(ExitCode::SUCCESS)
}

/// A capture error as `capture` words it: the option at fault named by its flag.
fn capture_hint(e: launch::CaptureError) -> anyhow::Error {
    use launch::CaptureError;
    match e {
        CaptureError::BadTimeout(secs) => {
            anyhow::anyhow!("--timeout must be 1 to 86400 seconds (got {secs})")
        }
        CaptureError::OutputExists(dir) => {
            anyhow::anyhow!("{dir} already exists; choose another -o")
        }
        e => e.into(),
    }
}
