//! The settings of `tune` as data, for messages: which setting ([`Setting`]) is at fault and
//! where its value came from ([`Origin`]), the backend and executor kinds, and the setup's
//! errors ([`SetupError`]). A leaf module: the library names a setting by its config key, the
//! binary by its flag. Re-exported by [`crate::setup`].

use std::path::PathBuf;

/// A measurement backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BackendKind {
    Command,
    Rocprofv3,
    Bench,
    Replay,
}

impl BackendKind {
    pub const ALL: [BackendKind; 4] = [
        BackendKind::Command,
        BackendKind::Rocprofv3,
        BackendKind::Bench,
        BackendKind::Replay,
    ];

    pub fn name(self) -> &'static str {
        match self {
            BackendKind::Command => "command",
            BackendKind::Rocprofv3 => "rocprofv3",
            BackendKind::Bench => "bench",
            BackendKind::Replay => "replay",
        }
    }

    pub fn from_name(s: &str) -> Option<BackendKind> {
        BackendKind::ALL.into_iter().find(|k| k.name() == s)
    }

    /// Whether the backend builds, runs and checks the kernel itself (no user commands).
    pub fn in_process(self) -> bool {
        matches!(self, BackendKind::Bench | BackendKind::Replay)
    }
}

impl std::fmt::Display for BackendKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Which rewrites are tried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModeChoice {
    Pragma,
    Manual,
    Both,
}

/// Where lanes run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExecutorKind {
    /// Threads on this machine, one per device.
    Local,
    /// Slurm job steps.
    Slurm,
}

/// A setting of `tune`, as the config spells its key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Setting {
    Build,
    Run,
    Check,
    Backend,
    Spec,
    Snapshot,
    Source,
    TimeRegex,
    Kernel,
    Factors,
    Mode,
    Jobs,
    MaxNoise,
    Devices,
    Executor,
    Lanes,
    SlurmArgs,
    Timeout,
    MinRuns,
    MaxRuns,
    Confidence,
    MinSpeedup,
    State,
    Resume,
}

impl Setting {
    /// The key in `[tune]` (`[tune.slurm]` for the Slurm ones).
    pub fn key(self) -> &'static str {
        match self {
            Setting::Build => "build",
            Setting::Run => "run",
            Setting::Check => "check",
            Setting::Backend => "backend",
            Setting::Spec => "spec",
            Setting::Snapshot => "snapshot",
            Setting::Source => "source",
            Setting::TimeRegex => "time-regex",
            Setting::Kernel => "kernel",
            Setting::Factors => "factors",
            Setting::Mode => "mode",
            Setting::Jobs => "jobs",
            Setting::MaxNoise => "max-noise",
            Setting::Devices => "devices",
            Setting::Executor => "executor",
            Setting::Lanes => "lanes",
            Setting::SlurmArgs => "args",
            Setting::Timeout => "timeout",
            Setting::MinRuns => "min-runs",
            Setting::MaxRuns => "max-runs",
            Setting::Confidence => "confidence",
            Setting::MinSpeedup => "min-speedup",
            Setting::State => "state",
            Setting::Resume => "resume",
        }
    }
}

/// Where a setting's value came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// The command line.
    Given,
    /// The config file.
    Config,
}

/// Settings that do not fit together, or a value out of range.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SetupError {
    /// A setting the backend has no use for.
    #[error("`{}` does not apply to the {backend} backend", setting.key())]
    NotForBackend {
        setting: Setting,
        origin: Origin,
        backend: BackendKind,
    },
    /// A setting of the other executor.
    #[error("`{}` does not apply to the {} executor", setting.key(), match executor { ExecutorKind::Local => "local", ExecutorKind::Slurm => "slurm" })]
    NotForExecutor {
        setting: Setting,
        executor: ExecutorKind,
    },
    /// What the backend cannot do without.
    #[error("the {backend} backend needs {}", needs.iter().map(|s| format!("`{}`", s.key())).collect::<Vec<_>>().join(" and "))]
    Missing {
        backend: BackendKind,
        needs: &'static [Setting],
    },
    /// A config value that is not one of the names it may be.
    #[error("[tune] {} must be {expected}, not `{value}`", setting.key())]
    BadName {
        setting: Setting,
        value: String,
        expected: &'static str,
    },
    /// A number or list out of its range: `rule` completes "the setting ...".
    #[error("`{}` {rule}", setting.key())]
    OutOfRange { setting: Setting, rule: String },
    #[error("`{}`: `{pattern}` is not a regex: {reason}", setting.key())]
    Regex {
        setting: Setting,
        pattern: String,
        reason: String,
    },
    #[error("{}: no such file or directory", .0.display())]
    NoSuchPath(PathBuf),
}
