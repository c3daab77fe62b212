//! The `rocprofv3` backend: runs `--run` under rocprofv3 (command line from
//! `profiler::run::build`, kernel trace only), reads the per-kernel GPU times back through
//! `profiler::load` (rocpd or CSV, whichever the installed rocprofv3 writes), and takes as the
//! figure the total GPU time (ms) of the objective kernels: those matching `--kernel RE`, else
//! those defined in PATHS. The baseline's profile also gives the critical-path share of every
//! kernel (`profiler::critical`), by which the search ranks loops; kernels of PATHS that never
//! ran make their loops `not-run`.
//!
//! Preconditions, checked before anything is built: `rocprofv3` on PATH and the ROCm kernel
//! driver node (`/dev/kfd`, or `$HIP_UNROLL_KFD` where a container maps it elsewhere).
//!
//! Builds overlap measurement ([`Backend::overlaps`]): the figure is GPU time, which the CPU's
//! builds do not disturb; the runs on the GPU (a prepare's check run and a sample) take the
//! backend's `gpu` lock, so a check run never shares the device with a measured one.

use super::command::{build_and_check, run_cmd, Commands};
use super::{kernel_function_name, same_function, Backend, Failure, KernelShare, Slot};
use crate::error::Error;
use profiler::run::{Plan, Tool};
use profiler::Profile;
use regex::Regex;
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};

pub struct RocprofBackend {
    pub commands: Commands,
    /// `--kernel RE`: the objective kernels by (demangled) name.
    pub kernel_regex: Option<Regex>,
    /// Function names of the kernels defined in PATHS.
    pub path_kernels: BTreeSet<String>,
    tool: OnceLock<Tool>,
    /// Held by every run on the GPU: the builds of the next candidates overlap a measured run,
    /// the check runs of their preparation do not.
    gpu: Mutex<()>,
}

/// A prepared slot: the profile of its check run.
pub struct Prepared {
    pub profile: Profile,
}

/// The driver node that must exist for a GPU to be usable.
pub fn kfd_path() -> PathBuf {
    std::env::var_os("HIP_UNROLL_KFD")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/dev/kfd"))
}

impl RocprofBackend {
    pub fn new(
        commands: Commands,
        kernel_regex: Option<Regex>,
        path_kernels: BTreeSet<String>,
    ) -> Self {
        RocprofBackend {
            commands,
            kernel_regex,
            path_kernels,
            tool: OnceLock::new(),
            gpu: Mutex::new(()),
        }
    }

    /// Whether a dispatched kernel (normalised name) is an objective kernel.
    pub fn is_objective(&self, name: &str) -> bool {
        if profiler::names::is_runtime_kernel(name) {
            return false;
        }
        match &self.kernel_regex {
            Some(re) => re.is_match(name),
            None => {
                let f = kernel_function_name(name);
                self.path_kernels.iter().any(|k| same_function(&f, k))
            }
        }
    }

    /// The objective in ms: total GPU time of the objective kernels' dispatches; `None` when
    /// none ran.
    pub fn objective(&self, p: &Profile) -> Option<f64> {
        let mut total: u64 = 0;
        let mut any = false;
        for d in &p.dispatches {
            let name = &p.kernels[d.kernel as usize].name;
            if self.is_objective(name) {
                total += d.duration_ns();
                any = true;
            }
        }
        any.then(|| total as f64 / 1e6)
    }

    /// The rocprofv3 command line of one run of `--run` in `slot`, and its output directory.
    pub fn invocation(&self, tool: &Tool, slot: &Slot<'_>) -> (Vec<String>, PathBuf) {
        let out_dir = slot.root.parent().unwrap_or(slot.root).join("rocprofv3");
        let run = crate::shell::expand_device(
            &self.commands.run,
            slot.user_root,
            slot.root,
            slot.device.shown(),
        );
        let plan = Plan {
            counters: Vec::new(),
            out_dir,
            kernel_regex: None,
            app: vec!["sh".into(), "-c".into(), run],
        };
        let inv = profiler::run::build(tool, &plan)
            .into_iter()
            .next()
            .expect("one pass without counters");
        (inv.argv, inv.dir)
    }

    fn profile_once(&self, slot: &Slot<'_>) -> Result<Result<Profile, Failure>, Error> {
        let tool = self
            .tool
            .get()
            .ok_or_else(|| Error::Environment("rocprofv3 backend used before preflight".into()))?;
        let (argv, dir) = self.invocation(tool, slot);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).map_err(crate::error::io_err(&dir))?;
        let quoted: Vec<String> = argv
            .iter()
            .map(|a| {
                shlex::try_quote(a)
                    .map(|c| c.into_owned())
                    .unwrap_or_else(|_| a.clone())
            })
            .collect();
        let o = match run_cmd(&quoted.join(" "), slot, self.commands.timeout)? {
            Err(why) => return Ok(Err(Failure::Check(why))),
            Ok(o) => o,
        };
        if !o.success() {
            return Ok(Err(Failure::Check(format!(
                "the run under rocprofv3 {}: {}",
                o.status_text(),
                o.last_line()
            ))));
        }
        match profiler::load(std::slice::from_ref(&dir)) {
            Ok(p) => Ok(Ok(p)),
            Err(e) => Ok(Err(Failure::Check(format!(
                "no kernel trace from rocprofv3 under {}: {e}",
                dir.display()
            )))),
        }
    }

    fn measure(&self, slot: &Slot<'_>) -> Result<Result<(Profile, f64), Failure>, Error> {
        let gpu = self.gpu.lock().unwrap_or_else(|p| p.into_inner());
        let p = self.profile_once(slot);
        drop(gpu);
        let p = match p? {
            Ok(p) => p,
            Err(f) => return Ok(Err(f)),
        };
        match self.objective(&p) {
            Some(ms) if ms > 0.0 => Ok(Ok((p, ms))),
            _ => Ok(Err(Failure::Check(match &self.kernel_regex {
                Some(re) => format!(
                    "no dispatched kernel matches the kernel regex `{}`",
                    re.as_str()
                ),
                None => "none of the kernels defined in PATHS was dispatched".to_string(),
            }))),
        }
    }
}

impl Backend for RocprofBackend {
    type Prepared = Prepared;

    fn name(&self) -> &'static str {
        "rocprofv3"
    }

    fn unit(&self) -> String {
        "ms".into()
    }

    fn preflight(&self) -> Result<(), Error> {
        crate::limits::check_timeout(self.commands.timeout)?;
        let path = std::env::var_os("PATH");
        if profiler::run::which("rocprofv3", path.as_deref()).is_none() {
            return Err(Error::Environment(
                "rocprofv3 is not on PATH: the rocprofv3 backend needs ROCm's profiler (install rocprofiler-sdk, or use the command backend)".into(),
            ));
        }
        let tool = profiler::run::detect().map_err(|e| Error::Environment(e.to_string()))?;
        if !matches!(tool, Tool::Rocprofv3 { .. }) {
            return Err(Error::Environment(
                "rocprofv3 is not on PATH (only legacy rocprof was found)".into(),
            ));
        }
        let kfd = kfd_path();
        if !kfd.exists() {
            return Err(Error::Environment(format!(
                "no AMD GPU: {} is missing, so rocprofv3 has nothing to profile (use the command backend to time the program on this machine)",
                kfd.display()
            )));
        }
        let _ = self.tool.set(tool);
        Ok(())
    }

    fn prepare(
        &self,
        slot: &Slot<'_>,
        _baseline: Option<&Prepared>,
    ) -> Result<Result<Prepared, Failure>, Error> {
        let mut profile = None;
        let r = build_and_check(&self.commands, slot, || {
            Ok(self.measure(slot)?.map(|(p, _)| {
                profile = Some(p);
            }))
        })?;
        Ok(r.map(|()| Prepared {
            profile: profile.expect("measured when the check passed"),
        }))
    }

    fn sample(&self, slot: &Slot<'_>, _prepared: &Prepared) -> Result<Result<f64, Failure>, Error> {
        Ok(self.measure(slot)?.map(|(_, ms)| ms))
    }

    fn ranks(&self) -> bool {
        true
    }

    fn overlaps(&self) -> bool {
        true
    }

    fn kernels(&self, baseline: &Prepared) -> Option<Vec<KernelShare>> {
        let cp = profiler::critical::critical_path(
            &baseline.profile,
            &profiler::critical::Options::default(),
        );
        let mut out: Vec<KernelShare> = Vec::new();
        for k in cp.kernels.iter().filter(|k| !k.runtime) {
            let function = kernel_function_name(&k.name);
            match out.iter_mut().find(|s| s.function == function) {
                Some(s) => s.share += k.share,
                None => out.push(KernelShare {
                    function,
                    share: k.share,
                }),
            }
        }
        // Kernels that ran but never lay on the critical path still ran.
        for d in &baseline.profile.dispatches {
            let name = &baseline.profile.kernels[d.kernel as usize].name;
            if profiler::names::is_runtime_kernel(name) {
                continue;
            }
            let function = kernel_function_name(name);
            if !out.iter().any(|s| s.function == function) {
                out.push(KernelShare {
                    function,
                    share: 0.0,
                });
            }
        }
        Some(out)
    }
}
