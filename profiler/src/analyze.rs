//! `profile`'s analysis of a loaded profile: the critical path over every dispatch, then the
//! kernels a regex keeps, their statistics, the roofline peaks (named, or from the profiled
//! agent) and the roofline, or why there is none. The caller words the reasons and builds the
//! [`crate::report::Report`].

use crate::critical::CriticalPath;
use crate::model::Profile;
use crate::roofline::Roofline;
use crate::stats::KernelStats;
use crate::Error;

/// How to analyse.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Largest gap (ns) between one stream's kernel end and another's start read as a wait.
    pub wait_gap_ns: u64,
    /// Only the kernels whose name matches.
    pub kernel: Option<regex::Regex>,
    /// Peaks by GPU name (`mi210`, `mi250x`, `mi300x`) instead of the profiled agent's.
    pub gpu: Option<String>,
}

/// Why there is no roofline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoRoofline {
    /// The input has no hardware counters.
    NoCounters,
    /// The counters lack FLOP or DRAM counters.
    MissingCounters,
    /// No peak figures for this GPU (its architecture, if known).
    NoPeaks(Option<String>),
}

/// What the analysis gives.
#[derive(Debug, Clone)]
pub struct Analysis {
    pub kernels: Vec<KernelStats>,
    pub critical_path: Option<CriticalPath>,
    pub roofline: Result<Roofline, NoRoofline>,
}

/// Analyse `profile`, keeping only the kernels `opts.kernel` matches (the critical path is
/// computed over every dispatch first: a filtered-out kernel still delays the others).
/// Errors: no kernel matches ([`Error::NoKernelMatches`]), an unknown GPU name.
pub fn analyze(profile: &mut Profile, opts: &Options) -> Result<Analysis, Error> {
    let mut cp = (!profile.dispatches.is_empty()).then(|| {
        crate::critical::critical_path(
            profile,
            &crate::critical::Options {
                wait_gap_ns: opts.wait_gap_ns,
                extra: Vec::new(),
            },
        )
    });
    if let Some(re) = &opts.kernel {
        profile.retain_kernels(re);
        if profile.dispatches.is_empty() && profile.precomputed.is_empty() {
            return Err(Error::NoKernelMatches(re.as_str().to_string()));
        }
        if let Some(cp) = &mut cp {
            cp.kernels.retain(|k| re.is_match(&k.name));
        }
    }
    let kernels = crate::stats::summarize(profile);
    let peaks = match &opts.gpu {
        Some(g) => {
            Some(crate::roofline::peaks_named(g).ok_or_else(|| Error::UnknownGpu(g.clone()))?)
        }
        None => crate::roofline::peaks_for(profile.arch(), profile.product()),
    };
    let roofline = if !profile.has_counters() {
        Err(NoRoofline::NoCounters)
    } else if let Some(pk) = peaks {
        let r = crate::roofline::roofline(profile, pk);
        if r.kernels.is_empty() {
            Err(NoRoofline::MissingCounters)
        } else {
            Ok(r)
        }
    } else {
        Err(NoRoofline::NoPeaks(profile.arch().map(String::from)))
    };
    Ok(Analysis {
        kernels,
        critical_path: cp,
        roofline,
    })
}
