//! The data every reader produces: kernels, agents and dispatches in one [`Profile`].

use serde::Serialize;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Which tool wrote the input (the `source` key of the JSON report).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Source {
    /// A rocpd SQLite database (rocprofv3 `-f rocpd`, ROCm 7.0+).
    #[serde(rename = "rocpd")]
    Rocpd,
    /// rocprofv3 CSV files (`*_kernel_trace.csv`, `*_kernel_stats.csv`, `*_counter_collection.csv`).
    #[serde(rename = "rocprofv3-csv")]
    Rocprofv3Csv,
    /// Legacy rocprof: v1 `results.csv` and the v2 (`rocprofv2`) kernel CSV.
    #[serde(rename = "rocprof-v1")]
    RocprofV1,
    /// rocprof-compute (omniperf) workload directory: `timestamps.csv`, `pmc_perf.csv`.
    #[serde(rename = "rocprof-compute")]
    RocprofCompute,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Rocpd => "rocpd",
            Source::Rocprofv3Csv => "rocprofv3-csv",
            Source::RocprofV1 => "rocprof-v1",
            Source::RocprofCompute => "rocprof-compute",
        }
    }
}

/// A kernel symbol after name normalisation (see [`crate::names`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KernelInfo {
    pub name: String,
    /// `__amd_rocclr_*`: a HIP runtime kernel (blits, fills), kept but never ranked.
    pub runtime: bool,
}

/// A GPU agent, as far as the input describes it.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct AgentInfo {
    /// gfx target (`gfx90a`, `gfx942`), when known.
    pub arch: Option<String>,
    /// Marketing name (`AMD Instinct MI210`), when known.
    pub product: Option<String>,
}

/// One kernel dispatch with GPU timestamps in nanoseconds.
#[derive(Debug, Clone, PartialEq)]
pub struct Dispatch {
    /// Index into [`Profile::kernels`].
    pub kernel: u32,
    /// Which input file / process it came from (keeps queue ids of different runs apart).
    pub process: u32,
    /// Index into [`Profile::agents`] (or the tool's agent/GPU id when no agent table exists).
    pub agent: u32,
    pub queue: u64,
    /// HIP stream, when the format records it (rocprofv3 with Stream_Id, rocpd).
    pub stream: Option<u64>,
    pub dispatch_id: u64,
    pub start_ns: u64,
    pub end_ns: u64,
    /// Hardware counters of this dispatch (instances summed), by counter name.
    pub counters: Option<Box<BTreeMap<String, f64>>>,
}

impl Dispatch {
    pub fn duration_ns(&self) -> u64 {
        self.end_ns.saturating_sub(self.start_ns)
    }
    /// Add counter values to this dispatch's counters (a name already there is replaced).
    pub fn add_counters(&mut self, counters: impl IntoIterator<Item = (String, f64)>) {
        self.counters
            .get_or_insert_with(Default::default)
            .extend(counters);
    }
    /// The in-order lane this dispatch executes on: its stream when known, else its queue.
    pub fn lane(&self) -> (u32, u32, u64) {
        (
            self.process,
            self.agent,
            self.stream.map(|s| s | (1 << 63)).unwrap_or(self.queue),
        )
    }
}

/// Per-kernel figures that a tool precomputed (rocprofv3 `*_kernel_stats.csv`); used only when
/// no per-dispatch trace is available.
#[derive(Debug, Clone, PartialEq)]
pub struct PrecomputedStats {
    pub name: String,
    pub calls: u64,
    pub total_ns: f64,
    pub mean_ns: f64,
    pub min_ns: f64,
    pub max_ns: f64,
    pub stddev_ns: f64,
}

/// Everything read from one set of inputs.
#[derive(Debug, Clone)]
pub struct Profile {
    pub source: Source,
    /// Finer description of the format (e.g. `rocprofv3-kernel-trace-stream`, `rocpd-3`).
    pub format: String,
    pub inputs: Vec<PathBuf>,
    pub kernels: Vec<KernelInfo>,
    pub agents: Vec<AgentInfo>,
    pub dispatches: Vec<Dispatch>,
    pub precomputed: Vec<PrecomputedStats>,
    /// Dispatches left out because their end timestamp precedes their start (a clock or
    /// tool error: their duration is unknown, and counting them as 0 ns would skew every
    /// statistic). Readers drop them; the CLI says how many.
    pub inverted_dispatches: usize,
}

impl Profile {
    pub fn new(source: Source, format: impl Into<String>) -> Self {
        Profile {
            source,
            format: format.into(),
            inputs: Vec::new(),
            kernels: Vec::new(),
            agents: Vec::new(),
            dispatches: Vec::new(),
            precomputed: Vec::new(),
            inverted_dispatches: 0,
        }
    }

    /// The gfx target of the profiled GPU(s), if the input names exactly one.
    pub fn arch(&self) -> Option<&str> {
        let mut it = self
            .agents
            .iter()
            .filter_map(|a| a.arch.as_deref())
            .filter(|a| a.starts_with("gfx"));
        let first = it.next()?;
        it.all(|a| a == first).then_some(first)
    }

    pub fn product(&self) -> Option<&str> {
        self.agents
            .iter()
            .filter(|a| a.arch.as_deref().is_some_and(|s| s.starts_with("gfx")))
            .find_map(|a| a.product.as_deref())
    }

    /// Keep only dispatches whose (normalised) kernel name matches `re`.
    pub fn retain_kernels(&mut self, re: &regex::Regex) {
        let keep: Vec<bool> = self.kernels.iter().map(|k| re.is_match(&k.name)).collect();
        self.dispatches.retain(|d| keep[d.kernel as usize]);
        self.precomputed.retain(|p| re.is_match(&p.name));
    }

    /// Index into [`Profile::dispatches`] of each dispatch id of one process (input).
    pub fn dispatch_index(&self, process: u32) -> std::collections::HashMap<u64, usize> {
        self.dispatches
            .iter()
            .enumerate()
            .filter(|(_, d)| d.process == process)
            .map(|(k, d)| (d.dispatch_id, k))
            .collect()
    }

    pub fn has_counters(&self) -> bool {
        self.dispatches.iter().any(|d| d.counters.is_some())
    }
}

/// Interns kernel names so that a million dispatches share a few strings.
#[derive(Default)]
pub(crate) struct Interner {
    map: std::collections::HashMap<String, u32>,
}

impl Interner {
    /// Index of the kernel with this raw (tool-written) name, normalising and adding it if new.
    pub fn intern(&mut self, kernels: &mut Vec<KernelInfo>, raw: &str) -> u32 {
        if let Some(&i) = self.map.get(raw) {
            return i;
        }
        let name = crate::names::normalize(raw);
        let idx = match kernels.iter().position(|k| k.name == name) {
            Some(i) => i as u32,
            None => {
                kernels.push(KernelInfo {
                    runtime: crate::names::is_runtime_kernel(&name),
                    name,
                });
                (kernels.len() - 1) as u32
            }
        };
        self.map.insert(raw.to_string(), idx);
        idx
    }
}
