//! Readers for the CSV generations: rocprofv3 kernel trace (with and without `Stream_Id`),
//! kernel stats, counter collection and agent info; legacy rocprof v1 `results.csv` and the
//! rocprofv2 kernel CSV; rocprof-compute `timestamps.csv`, `pmc_perf.csv` and `sysinfo.csv`.
//! Every column is found by its header name, never by position.

use crate::error::{Error, Result};
use crate::model::{AgentInfo, Dispatch, Interner, PrecomputedStats, Profile};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

/// What a CSV file is, judged from its header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CsvKind {
    /// rocprofv3 `*_kernel_trace.csv`; `stream` is true for the generation with `Stream_Id`.
    Rocprofv3KernelTrace { stream: bool },
    /// rocprofv3 `*_kernel_stats.csv`.
    Rocprofv3Stats,
    /// rocprofv3 `*_counter_collection.csv` (one row per dispatch and counter).
    Rocprofv3Counters,
    /// rocprofv3 `*_agent_info.csv`.
    Rocprofv3AgentInfo,
    /// Legacy rocprof v1 `results.csv` (`KernelName`, `BeginNs`, `EndNs`, counters).
    RocprofV1Results,
    /// rocprofv2 kernel CSV and rocprof-compute `timestamps.csv` (`Dispatch_ID`,
    /// `Kernel_Name`, `Start_Timestamp`, `End_Timestamp`).
    DispatchTimestamps,
    /// rocprof-compute `pmc_perf.csv`: per-dispatch counters, maybe without timestamps.
    PmcPerf,
    /// rocprof-compute `sysinfo.csv`.
    SysInfo,
}

/// A parsed header: column name -> index.
pub(crate) struct Header {
    cols: HashMap<String, usize>,
    pub names: Vec<String>,
}

impl Header {
    fn new(rec: &csv::StringRecord) -> Self {
        let names: Vec<String> = rec
            .iter()
            .map(|s| s.trim().trim_start_matches('\u{feff}').to_string())
            .collect();
        let mut cols = HashMap::new();
        for (i, n) in names.iter().enumerate() {
            cols.entry(n.clone()).or_insert(i);
        }
        Header { cols, names }
    }
    fn get(&self, n: &str) -> Option<usize> {
        self.cols.get(n).copied()
    }
    fn has(&self, n: &str) -> bool {
        self.cols.contains_key(n)
    }
}

struct Csv {
    path: PathBuf,
    header: Header,
    reader: csv::Reader<std::fs::File>,
}

fn open(path: &Path) -> Result<Csv> {
    let file = std::fs::File::open(path).map_err(crate::error::io(path))?;
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(false)
        .from_reader(file);
    let rec = reader.headers().map_err(|e| bad(path, e))?.clone();
    if rec.is_empty() || rec.iter().all(|f| f.trim().is_empty()) {
        return Err(Error::EmptyCsv {
            path: path.to_path_buf(),
        });
    }
    Ok(Csv {
        path: path.to_path_buf(),
        header: Header::new(&rec),
        reader,
    })
}

fn bad(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::BadCsv {
        path: path.to_path_buf(),
        reason: e.to_string(),
    }
}

/// Classify a CSV file by its header.
pub fn classify(path: &Path) -> Result<CsvKind> {
    let c = open(path)?;
    if c.header.has("KernelName") && c.header.has("Index") && !c.header.has("BeginNs") {
        return Err(bad(
            path,
            "rocprof results without BeginNs/EndNs: rerun rocprof with --timestamp on",
        ));
    }
    classify_header(&c.header).ok_or_else(|| Error::UnknownCsv {
        path: path.to_path_buf(),
        header: c.header.names.join(",").chars().take(200).collect(),
    })
}

fn classify_header(h: &Header) -> Option<CsvKind> {
    let all = |ns: &[&str]| ns.iter().all(|n| h.has(n));
    if all(&["Kind", "Kernel_Name", "Start_Timestamp", "End_Timestamp"]) {
        return Some(CsvKind::Rocprofv3KernelTrace {
            stream: h.has("Stream_Id"),
        });
    }
    if all(&["Name", "Calls", "TotalDurationNs"]) {
        return Some(CsvKind::Rocprofv3Stats);
    }
    if all(&["Counter_Name", "Counter_Value", "Kernel_Name"]) {
        return Some(CsvKind::Rocprofv3Counters);
    }
    if all(&["Node_Id", "Agent_Type", "Name"]) {
        return Some(CsvKind::Rocprofv3AgentInfo);
    }
    if all(&["KernelName", "BeginNs", "EndNs"]) {
        return Some(CsvKind::RocprofV1Results);
    }
    if all(&["gpu_arch", "gpu_model"]) {
        return Some(CsvKind::SysInfo);
    }
    if all(&[
        "Dispatch_ID",
        "Kernel_Name",
        "Start_Timestamp",
        "End_Timestamp",
    ]) {
        // pmc_perf.csv may carry timestamps too; it has counter columns, timestamps.csv not.
        return Some(
            if h.names.iter().any(|n| counter_base(n).is_some()) && !h.has("Start_Timestamp") {
                CsvKind::PmcPerf
            } else {
                CsvKind::DispatchTimestamps
            },
        );
    }
    if all(&["Dispatch_ID", "Kernel_Name"]) && h.names.iter().any(|n| counter_base(n).is_some()) {
        return Some(CsvKind::PmcPerf);
    }
    None
}

/// Columns of the legacy and rocprof-compute layouts that look like counters but are not.
const NOT_COUNTERS: [&str; 6] = [
    "GPU_ID",
    "PID",
    "TID",
    "SGPR",
    "LDS_Per_Workgroup",
    "Queue_ID",
];

/// If this header names a hardware counter column, its counter name and whether it is one
/// instance (`TCC_EA_RDREQ[3]`) or an aggregate (`TCC_EA_RDREQ_sum`, `SQ_WAVES`).
pub(crate) fn counter_base(col: &str) -> Option<(String, CounterCol)> {
    if NOT_COUNTERS.contains(&col) {
        return None;
    }
    let (base, kind) = if let Some(open) = col
        .strip_suffix(']')
        .and_then(|c| c.rfind('[').map(|i| (c, i)))
    {
        let (c, i) = open;
        if !c[i + 1..].bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        (&c[..i], CounterCol::Instance)
    } else if let Some(b) = col.strip_suffix("_sum") {
        (b, CounterCol::Sum)
    } else {
        (col, CounterCol::Plain)
    };
    // Counter names are upper-case block-prefixed identifiers: SQ_WAVES, TCC_EA0_RDREQ, GRBM_COUNT.
    let mut parts = base.split('_');
    let block = parts.next()?;
    let ok = !block.is_empty()
        && block
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
        && block.as_bytes()[0].is_ascii_uppercase()
        && base.contains('_')
        && base
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_');
    ok.then(|| (base.to_string(), kind))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CounterCol {
    Plain,
    Sum,
    Instance,
}

fn parse_u64(path: &Path, line: u64, col: &str, s: &str) -> Result<u64> {
    let t = s.trim();
    if let Ok(v) = t.parse::<u64>() {
        return Ok(v);
    }
    // rocprofv3 writes agents as "Agent 4" / "GPU 0": take the trailing number.
    let digits: String = t
        .chars()
        .rev()
        .take_while(|c| c.is_ascii_digit())
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    if !digits.is_empty() && t.len() > digits.len() && t[..t.len() - digits.len()].ends_with(' ') {
        return digits.parse().map_err(|_| {
            bad(
                path,
                format!("line {line}: column {col}: not an integer: {s:?}"),
            )
        });
    }
    Err(bad(
        path,
        format!("line {line}: column {col}: not an integer: {s:?}"),
    ))
}

fn parse_f64(path: &Path, line: u64, col: &str, s: &str) -> Result<f64> {
    s.trim().parse::<f64>().map_err(|_| {
        bad(
            path,
            format!("line {line}: column {col}: not a number: {s:?}"),
        )
    })
}

fn required(c: &Csv, n: &str) -> Result<usize> {
    c.header
        .get(n)
        .ok_or_else(|| bad(&c.path, format!("missing column {n}")))
}

/// Builds counter maps from the counter columns of a wide CSV (rocprof v1 results.csv,
/// rocprof-compute pmc_perf.csv): `X_sum` wins over `X[i]` instances (summed), which win
/// over a plain `X`.
struct CounterCols {
    cols: Vec<(usize, String)>,
}

impl CounterCols {
    fn new(h: &Header) -> Self {
        let mut best: BTreeMap<String, CounterCol> = BTreeMap::new();
        let mut found: Vec<(usize, String, CounterCol)> = Vec::new();
        for (i, n) in h.names.iter().enumerate() {
            if let Some((base, kind)) = counter_base(n) {
                let rank = |k: CounterCol| match k {
                    CounterCol::Sum => 2,
                    CounterCol::Instance => 1,
                    CounterCol::Plain => 0,
                };
                let e = best.entry(base.clone()).or_insert(kind);
                if rank(kind) > rank(*e) {
                    *e = kind;
                }
                found.push((i, base, kind));
            }
        }
        CounterCols {
            cols: found
                .into_iter()
                .filter(|(_, b, k)| best[b] == *k)
                .map(|(i, b, _)| (i, b))
                .collect(),
        }
    }

    fn read(
        &self,
        path: &Path,
        line: u64,
        h: &Header,
        rec: &csv::StringRecord,
    ) -> Result<Option<Counters>> {
        if self.cols.is_empty() {
            return Ok(None);
        }
        let mut m = BTreeMap::new();
        for (i, base) in &self.cols {
            let s = rec.get(*i).unwrap_or("").trim();
            if s.is_empty() || s == "None" {
                continue;
            }
            *m.entry(base.clone()).or_insert(0.0) += parse_f64(path, line, &h.names[*i], s)?;
        }
        Ok(Some(m))
    }
}

fn records(
    c: &mut Csv,
) -> impl Iterator<Item = (u64, std::result::Result<csv::StringRecord, csv::Error>)> + '_ {
    c.reader
        .records()
        .enumerate()
        .map(|(i, r)| (i as u64 + 2, r))
}

/// Append the dispatches of a rocprofv3 kernel-trace CSV (either column generation).
pub(crate) fn read_kernel_trace(
    path: &Path,
    p: &mut Profile,
    names: &mut Interner,
    process: u32,
    agents: &mut HashMap<u64, u32>,
) -> Result<()> {
    let mut c = open(path)?;
    let agent = required(&c, "Agent_Id")?;
    let queue = required(&c, "Queue_Id")?;
    let kname = required(&c, "Kernel_Name")?;
    let start = required(&c, "Start_Timestamp")?;
    let end = required(&c, "End_Timestamp")?;
    let stream = c.header.get("Stream_Id");
    let did = c.header.get("Dispatch_Id");
    let path = c.path.clone();
    for (line, rec) in records(&mut c) {
        let rec = rec.map_err(|e| bad(&path, e))?;
        let a = parse_u64(&path, line, "Agent_Id", &rec[agent])?;
        let agent = agent_index(p, agents, a);
        p.dispatches.push(Dispatch {
            kernel: names.intern(&mut p.kernels, &rec[kname]),
            process,
            agent,
            queue: parse_u64(&path, line, "Queue_Id", &rec[queue])?,
            stream: stream
                .map(|i| parse_u64(&path, line, "Stream_Id", &rec[i]))
                .transpose()?,
            dispatch_id: did
                .map(|i| parse_u64(&path, line, "Dispatch_Id", &rec[i]))
                .transpose()?
                .unwrap_or(line - 1),
            start_ns: parse_u64(&path, line, "Start_Timestamp", &rec[start])?,
            end_ns: parse_u64(&path, line, "End_Timestamp", &rec[end])?,
            counters: None,
        });
    }
    Ok(())
}

/// Map a tool's agent number to an index into `p.agents`. A number that `agents` does not know
/// (no agent-info file, or not a GPU there) gets one anonymous agent, remembered in `agents`.
pub(crate) fn agent_index(p: &mut Profile, agents: &mut HashMap<u64, u32>, a: u64) -> u32 {
    *agents.entry(a).or_insert_with(|| {
        p.agents.push(AgentInfo::default());
        (p.agents.len() - 1) as u32
    })
}

/// rocprofv3 `*_agent_info.csv`: GPU agents by `Node_Id` (the number `Agent_Id` carries).
pub(crate) fn read_agent_info(path: &Path, p: &mut Profile) -> Result<HashMap<u64, u32>> {
    let mut c = open(path)?;
    let node = required(&c, "Node_Id")?;
    let ty = required(&c, "Agent_Type")?;
    let name = required(&c, "Name")?;
    let product = c.header.get("Product_Name");
    let path = c.path.clone();
    let mut out = HashMap::new();
    for (line, rec) in records(&mut c) {
        let rec = rec.map_err(|e| bad(&path, e))?;
        if rec[ty].trim() != "GPU" {
            continue;
        }
        p.agents.push(AgentInfo {
            arch: Some(rec[name].trim().to_string()),
            product: product.map(|i| rec[i].trim().to_string()),
        });
        out.insert(
            parse_u64(&path, line, "Node_Id", &rec[node])?,
            (p.agents.len() - 1) as u32,
        );
    }
    Ok(out)
}

/// rocprofv3 `*_kernel_stats.csv`.
pub(crate) fn read_stats(path: &Path) -> Result<Vec<PrecomputedStats>> {
    let mut c = open(path)?;
    let ix: Vec<usize> = [
        "Name",
        "Calls",
        "TotalDurationNs",
        "AverageNs",
        "MinNs",
        "MaxNs",
        "StdDev",
    ]
    .iter()
    .map(|n| required(&c, n))
    .collect::<Result<_>>()?;
    let path = c.path.clone();
    let mut out: Vec<PrecomputedStats> = Vec::new();
    for (line, rec) in records(&mut c) {
        let rec = rec.map_err(|e| bad(&path, e))?;
        let f = |k: usize, n: &str| parse_f64(&path, line, n, &rec[ix[k]]);
        let name = crate::names::normalize(&rec[ix[0]]);
        let s = PrecomputedStats {
            name,
            calls: parse_u64(&path, line, "Calls", &rec[ix[1]])?,
            total_ns: f(2, "TotalDurationNs")?,
            mean_ns: f(3, "AverageNs")?,
            min_ns: f(4, "MinNs")?,
            max_ns: f(5, "MaxNs")?,
            stddev_ns: f(6, "StdDev")?,
        };
        out.push(s);
    }
    Ok(out)
}

/// rocprofv3 `*_counter_collection.csv`: counters by `Dispatch_Id` (values of one counter
/// name summed, as the writer already sums instances), plus timestamps when the generation
/// has them (used only when there is no kernel trace).
pub(crate) struct CounterRows {
    pub by_dispatch: BTreeMap<u64, CounterRow>,
}

/// Counter values by counter name.
pub(crate) type Counters = BTreeMap<String, f64>;

/// One dispatch of a counter-collection CSV.
pub(crate) struct CounterRow {
    pub kernel: String,
    /// (start, end) when the CSV generation has timestamps.
    pub ts: Option<(u64, u64)>,
    pub agent: u64,
    pub queue: u64,
    pub counters: Counters,
}

pub(crate) fn read_counter_collection(path: &Path) -> Result<CounterRows> {
    let mut c = open(path)?;
    let did = required(&c, "Dispatch_Id")?;
    let kname = required(&c, "Kernel_Name")?;
    let cname = required(&c, "Counter_Name")?;
    let cval = required(&c, "Counter_Value")?;
    let agent = c.header.get("Agent_Id");
    let queue = c.header.get("Queue_Id");
    let start = c.header.get("Start_Timestamp");
    let end = c.header.get("End_Timestamp");
    let path = c.path.clone();
    let mut by_dispatch = BTreeMap::new();
    for (line, rec) in records(&mut c) {
        let rec = rec.map_err(|e| bad(&path, e))?;
        let d = parse_u64(&path, line, "Dispatch_Id", &rec[did])?;
        let ts = match (start, end) {
            (Some(s), Some(e)) => Some((
                parse_u64(&path, line, "Start_Timestamp", &rec[s])?,
                parse_u64(&path, line, "End_Timestamp", &rec[e])?,
            )),
            _ => None,
        };
        let a = agent
            .map(|i| parse_u64(&path, line, "Agent_Id", &rec[i]))
            .transpose()?
            .unwrap_or(0);
        let q = queue
            .map(|i| parse_u64(&path, line, "Queue_Id", &rec[i]))
            .transpose()?
            .unwrap_or(0);
        let v = parse_f64(&path, line, "Counter_Value", &rec[cval])?;
        let e = by_dispatch.entry(d).or_insert_with(|| CounterRow {
            kernel: rec[kname].to_string(),
            ts,
            agent: a,
            queue: q,
            counters: BTreeMap::new(),
        });
        *e.counters
            .entry(rec[cname].trim().to_string())
            .or_insert(0.0) += v;
    }
    Ok(CounterRows { by_dispatch })
}

/// Legacy rocprof v1 `results.csv`, the rocprofv2 kernel CSV, and rocprof-compute
/// `timestamps.csv`: one row per dispatch with timestamps; counter columns if any.
pub(crate) fn read_dispatch_rows(
    path: &Path,
    p: &mut Profile,
    names: &mut Interner,
    process: u32,
) -> Result<()> {
    let mut c = open(path)?;
    let h = &c.header;
    let (kname, start, end) = if h.has("KernelName") {
        ("KernelName", "BeginNs", "EndNs")
    } else {
        ("Kernel_Name", "Start_Timestamp", "End_Timestamp")
    };
    let kname = required(&c, kname)?;
    let start_c = required(&c, start)?;
    let end_c = required(&c, end)?;
    let h = &c.header;
    let gpu = ["gpu-id", "GPU_ID"].iter().find_map(|n| h.get(n));
    let queue = ["queue-id", "Queue_ID"].iter().find_map(|n| h.get(n));
    let did = ["Index", "Dispatch_ID"].iter().find_map(|n| h.get(n));
    let counters = CounterCols::new(h);
    let path = c.path.clone();
    let mut agents = HashMap::new();
    // Only keep the columns needed; a header copy for counter error messages.
    let header = Header {
        cols: c.header.cols.clone(),
        names: c.header.names.clone(),
    };
    for (line, rec) in records(&mut c) {
        let rec = rec.map_err(|e| bad(&path, e))?;
        let g = gpu
            .map(|i| parse_u64(&path, line, "gpu-id", &rec[i]))
            .transpose()?
            .unwrap_or(0);
        let agent = agent_index(p, &mut agents, g);
        p.dispatches.push(Dispatch {
            kernel: names.intern(&mut p.kernels, &rec[kname]),
            process,
            agent,
            queue: queue
                .map(|i| parse_u64(&path, line, "queue-id", &rec[i]))
                .transpose()?
                .unwrap_or(0),
            stream: None,
            dispatch_id: did
                .map(|i| parse_u64(&path, line, "Index", &rec[i]))
                .transpose()?
                .unwrap_or(line - 1),
            start_ns: parse_u64(&path, line, start, &rec[start_c])?,
            end_ns: parse_u64(&path, line, end, &rec[end_c])?,
            counters: counters.read(&path, line, &header, &rec)?.map(Box::new),
        });
    }
    Ok(())
}

/// rocprof-compute `pmc_perf.csv`: counters per `Dispatch_ID` (and kernel name, for checking
/// the join with timestamps.csv).
pub(crate) fn read_pmc_perf(path: &Path) -> Result<BTreeMap<u64, (String, Counters)>> {
    let mut c = open(path)?;
    let did = required(&c, "Dispatch_ID")?;
    let kname = required(&c, "Kernel_Name")?;
    let counters = CounterCols::new(&c.header);
    let header = Header {
        cols: c.header.cols.clone(),
        names: c.header.names.clone(),
    };
    let path = c.path.clone();
    let mut out = BTreeMap::new();
    for (line, rec) in records(&mut c) {
        let rec = rec.map_err(|e| bad(&path, e))?;
        let d = parse_u64(&path, line, "Dispatch_ID", &rec[did])?;
        let m = counters
            .read(&path, line, &header, &rec)?
            .unwrap_or_default();
        out.insert(d, (crate::names::normalize(&rec[kname]), m));
    }
    Ok(out)
}

/// Whether a CSV has `Start_Timestamp` and `End_Timestamp` columns.
pub(crate) fn has_timestamps(path: &Path) -> bool {
    open(path).is_ok_and(|c| c.header.has("Start_Timestamp") && c.header.has("End_Timestamp"))
}

/// rocprof-compute `sysinfo.csv`: the GPU's gfx target and model.
pub(crate) fn read_sysinfo(path: &Path) -> Result<AgentInfo> {
    let mut c = open(path)?;
    let arch = required(&c, "gpu_arch")?;
    let model = required(&c, "gpu_model")?;
    let path = c.path.clone();
    let rec = records(&mut c)
        .next()
        .ok_or_else(|| bad(&path, "no data row"))?
        .1
        .map_err(|e| bad(&path, e))?;
    Ok(AgentInfo {
        arch: Some(rec[arch].trim().to_string()),
        product: Some(rec[model].trim().to_string()),
    })
}
