//! The runner's error type: each variant is one line for the user (the binary adds `error: `).

use crate::device::DeviceError;
use crate::prelude::Refusal;

#[derive(Debug, thiserror::Error)]
pub enum RunnerError {
    #[error(transparent)]
    Spec(#[from] crate::spec::SpecError),
    /// A usage error that no setting of the caller's is at fault for.
    #[error("{0}")]
    Usage(String),
    /// A setting of the caller's out of its bounds or unfit for the device: `setting` says
    /// which (the binary names its flag), `message` the rest (`must be 1 to 1000000 (got 0)`).
    #[error("{} {message}", .setting.noun())]
    Setting { setting: Setting, message: String },
    /// The spec does not fit the compiled kernel (arguments, unknown kernel, launch limits).
    #[error("{path}: {message}")]
    Invalid { path: String, message: String },
    /// The kernel uses constructs with no CUDA meaning (NVIDIA path).
    #[error("{file}: cannot run on NVIDIA: {}", .refusals.iter().map(|r| r.to_string()).collect::<Vec<_>>().join("; "))]
    Refused {
        file: String,
        refusals: Vec<Refusal>,
    },
    #[error("{}", compile_message(.0))]
    Compile(codeobj::compile::CompileError),
    #[error("{0}")]
    Build(String),
    #[error(transparent)]
    Device(#[from] DeviceError),
    #[error("{path}: {}", crate::spec::io_reason(.error))]
    Io { path: String, error: std::io::Error },
    /// A variant's outputs are not within the tolerance of the baseline's.
    #[error("outputs differ from the baseline's: {}", .0.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("; "))]
    OutputsDiffer(Vec<crate::compare::OutputDiff>),
    /// The kernel changed a buffer the spec does not mark as an output.
    #[error("{0}")]
    WroteInput(String),
}

/// The settings a [`RunnerError::Setting`] can be about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Setting {
    /// The time limit of the runtime's start and of every launch.
    Timeout,
    /// The number of timed launches.
    Iterations,
    /// The number of warm-up launches.
    Warmup,
    /// The compile target (`gfx90a`, `sm_90`).
    Arch,
}

impl Setting {
    /// The setting in words, for messages that do not come through the binary.
    pub fn noun(self) -> &'static str {
        match self {
            Setting::Timeout => "the time limit",
            Setting::Iterations => "the number of timed launches",
            Setting::Warmup => "the number of warm-up launches",
            Setting::Arch => "the target architecture",
        }
    }
}

fn compile_message(e: &codeobj::compile::CompileError) -> String {
    match e {
        codeobj::compile::CompileError::CompilerMissing { program, .. } => {
            let missing = match program.strip_prefix("neither ") {
                Some(both) => format!("neither {both} is installed here"),
                None => format!("{program} is not installed here"),
            };
            format!(
                "{missing} and the cache holds no object built from these inputs: compile on a machine that has it and bring its cache directory along"
            )
        }
        other => other.to_string(),
    }
}
