//! `load`: turns the paths a user gives (`--from`) into one [`Profile`], whatever tool and
//! generation wrote them: finds the files in a directory, classifies each, reads them with the
//! matching reader, and joins counter passes onto the timed dispatches.

use crate::csvread::{self, CsvKind};
use crate::error::{Error, Result};
use crate::model::{Dispatch, Interner, Profile, Source};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

/// One classified input file.
#[derive(Debug, Clone)]
pub struct Input {
    pub path: PathBuf,
    pub kind: InputKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputKind {
    Rocpd,
    Csv(CsvKind),
}

impl Input {
    fn source(&self) -> Source {
        match self.kind {
            InputKind::Rocpd => Source::Rocpd,
            InputKind::Csv(k) => match k {
                CsvKind::Rocprofv3KernelTrace { .. }
                | CsvKind::Rocprofv3Stats
                | CsvKind::Rocprofv3Counters
                | CsvKind::Rocprofv3AgentInfo => Source::Rocprofv3Csv,
                CsvKind::RocprofV1Results => Source::RocprofV1,
                CsvKind::DispatchTimestamps if file_name(&self.path) == "timestamps.csv" => {
                    Source::RocprofCompute
                }
                CsvKind::DispatchTimestamps => Source::RocprofV1,
                CsvKind::PmcPerf | CsvKind::SysInfo => Source::RocprofCompute,
            },
        }
    }
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Classify one file.
pub fn classify(path: &Path) -> Result<Input> {
    if !path.exists() {
        return Err(Error::Io {
            path: path.to_path_buf(),
            error: std::io::Error::new(std::io::ErrorKind::NotFound, "no such file or directory"),
        });
    }
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    if ext == "csv" {
        let mut kind = csvread::classify(path)?;
        // rocprof-compute's pmc_perf.csv carries timestamps in some versions: still counters.
        if kind == CsvKind::DispatchTimestamps && file_name(path) == "pmc_perf.csv" {
            kind = CsvKind::PmcPerf;
        }
        return Ok(Input {
            path: path.to_path_buf(),
            kind: InputKind::Csv(kind),
        });
    }
    let is_db = ext == "db"
        || ext == "sqlite"
        || ext == "rpd"
        || crate::rocpd::sqlite_header(path).map_err(crate::error::io(path))?;
    if !is_db {
        return Err(Error::UnknownInput {
            path: path.to_path_buf(),
        });
    }
    Ok(Input {
        path: path.to_path_buf(),
        kind: InputKind::Rocpd,
    })
}

/// Files of interest under a directory (up to four levels deep), in sorted order.
pub fn discover(dir: &Path) -> Result<Vec<Input>> {
    let mut found = Vec::new();
    walk(dir, 0, &mut found)?;
    found.sort();
    let mut out = Vec::new();
    for p in found {
        let name = file_name(&p);
        let wanted = name.ends_with("_results.db")
            || name.ends_with("_kernel_trace.csv")
            || name.ends_with("_kernel_stats.csv")
            || name.ends_with("_counter_collection.csv")
            || name.ends_with("_agent_info.csv")
            || (name.starts_with("results") && name.ends_with(".csv"))
            || name == "timestamps.csv"
            || name == "pmc_perf.csv"
            || name == "sysinfo.csv";
        if wanted {
            out.push(classify(&p)?);
        }
    }
    if out.is_empty() {
        return Err(Error::NothingFound {
            path: dir.to_path_buf(),
        });
    }
    Ok(out)
}

fn walk(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) -> Result<()> {
    for e in std::fs::read_dir(dir).map_err(crate::error::io(dir))? {
        let e = e.map_err(crate::error::io(dir))?;
        let p = e.path();
        let ft = e.file_type().map_err(crate::error::io(&p))?;
        if ft.is_dir() && depth < 4 {
            walk(&p, depth + 1, out)?;
        } else if ft.is_file() {
            out.push(p);
        }
    }
    Ok(())
}

/// The pass number of a directory written by `hip-unroll profile` (`pass_N`) or by rocprofv3
/// itself for multi-pass input files (`pmc_N`, `pass_N`).
fn pass_number(dir: &Path) -> Option<u32> {
    let n = file_name(dir);
    n.strip_prefix("pass_")
        .or_else(|| n.strip_prefix("pmc_"))
        .and_then(|s| s.parse().ok())
}

/// Read everything the paths hold as one profile.
pub fn load(paths: &[PathBuf]) -> Result<Profile> {
    let mut inputs = Vec::new();
    for p in paths {
        if p.is_dir() {
            inputs.extend(discover(p)?);
        } else {
            // Regular files only: a FIFO would block the first read, a device never end.
            fsio::regular(p).map_err(|e| Error::Io {
                path: p.clone(),
                error: e.into_io(),
            })?;
            inputs.push(classify(p)?);
        }
    }
    // All inputs must come from one tool.
    let mut source: Option<Source> = None;
    for i in &inputs {
        let s = i.source();
        match source {
            None => source = Some(s),
            Some(f) if f != s => {
                // A rocprofv3 directory written with `-f rocpd csv` holds both: prefer rocpd.
                if (f == Source::Rocpd && s == Source::Rocprofv3Csv)
                    || (s == Source::Rocpd && f == Source::Rocprofv3Csv)
                {
                    source = Some(Source::Rocpd);
                } else {
                    return Err(Error::MixedSources {
                        first: f.as_str(),
                        second: s.as_str(),
                    });
                }
            }
            _ => {}
        }
    }
    let source = source.ok_or_else(|| Error::NoKernels {
        what: "the given inputs".into(),
    })?;
    inputs.retain(|i| i.source() == source);

    // Counter passes: files under pass_N / pmc_N directories. The lowest pass gives timings;
    // the others add their counters.
    let mut passes: BTreeMap<Option<u32>, Vec<Input>> = BTreeMap::new();
    for i in inputs {
        let pass = i.path.ancestors().skip(1).take(4).find_map(pass_number);
        passes.entry(pass).or_default().push(i);
    }
    let has_numbered = passes.keys().any(|k| k.is_some());
    let mut groups: Vec<Vec<Input>> = if has_numbered {
        passes.into_values().collect()
    } else {
        vec![passes.into_values().flatten().collect()]
    };
    let first = groups.remove(0);
    let mut profile = read_group(source, &first)?;
    for g in &groups {
        let other = read_group(source, g)?;
        merge_counters(&mut profile, &other);
        profile.inputs.extend(other.inputs);
    }
    // A dispatch that ends before it starts has no duration: leave it out of everything
    // (statistics, critical path, trace), and count it.
    let before = profile.dispatches.len();
    profile.dispatches.retain(|d| d.end_ns >= d.start_ns);
    profile.inverted_dispatches = before - profile.dispatches.len();
    if profile.dispatches.is_empty() && profile.precomputed.is_empty() {
        let what = paths
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ");
        if profile.inverted_dispatches > 0 {
            return Err(Error::AllInverted {
                what,
                count: profile.inverted_dispatches,
            });
        }
        return Err(Error::NoKernels { what });
    }
    Ok(profile)
}

/// Read one group of inputs from one tool.
fn read_group(source: Source, inputs: &[Input]) -> Result<Profile> {
    match source {
        Source::Rocpd => {
            let dbs: Vec<PathBuf> = inputs
                .iter()
                .filter(|i| i.kind == InputKind::Rocpd)
                .map(|i| i.path.clone())
                .collect();
            crate::rocpd::read(&dbs)
        }
        Source::Rocprofv3Csv => read_rocprofv3_csv(inputs),
        Source::RocprofV1 | Source::RocprofCompute => read_rows(source, inputs),
    }
}

fn process_of(dirs: &mut Vec<PathBuf>, path: &Path) -> u32 {
    let d = path.parent().map(Path::to_path_buf).unwrap_or_default();
    match dirs.iter().position(|x| *x == d) {
        Some(i) => i as u32,
        None => {
            dirs.push(d);
            (dirs.len() - 1) as u32
        }
    }
}

fn read_rocprofv3_csv(inputs: &[Input]) -> Result<Profile> {
    let gen = if inputs
        .iter()
        .any(|i| i.kind == InputKind::Csv(CsvKind::Rocprofv3KernelTrace { stream: true }))
    {
        "rocprofv3-kernel-trace-stream"
    } else if inputs
        .iter()
        .any(|i| matches!(i.kind, InputKind::Csv(CsvKind::Rocprofv3KernelTrace { .. })))
    {
        "rocprofv3-kernel-trace"
    } else if inputs
        .iter()
        .any(|i| i.kind == InputKind::Csv(CsvKind::Rocprofv3Counters))
    {
        "rocprofv3-counter-collection"
    } else {
        "rocprofv3-kernel-stats"
    };
    let mut p = Profile::new(Source::Rocprofv3Csv, gen);
    let mut names = Interner::default();
    let mut dirs = Vec::new();
    // Agents per directory (one rocprofv3 process writes one agent_info file).
    let mut agents: HashMap<u32, HashMap<u64, u32>> = HashMap::new();
    for i in inputs
        .iter()
        .filter(|i| i.kind == InputKind::Csv(CsvKind::Rocprofv3AgentInfo))
    {
        let proc_ = process_of(&mut dirs, &i.path);
        let m = csvread::read_agent_info(&i.path, &mut p)?;
        agents.entry(proc_).or_default().extend(m);
        p.inputs.push(i.path.clone());
    }
    let mut traced = std::collections::HashSet::new();
    for i in inputs
        .iter()
        .filter(|i| matches!(i.kind, InputKind::Csv(CsvKind::Rocprofv3KernelTrace { .. })))
    {
        let proc_ = process_of(&mut dirs, &i.path);
        csvread::read_kernel_trace(
            &i.path,
            &mut p,
            &mut names,
            proc_,
            agents.entry(proc_).or_default(),
        )?;
        traced.insert(proc_);
        p.inputs.push(i.path.clone());
    }
    for i in inputs
        .iter()
        .filter(|i| i.kind == InputKind::Csv(CsvKind::Rocprofv3Counters))
    {
        let proc_ = process_of(&mut dirs, &i.path);
        let rows = csvread::read_counter_collection(&i.path)?;
        p.inputs.push(i.path.clone());
        if traced.contains(&proc_) {
            let index = p.dispatch_index(proc_);
            for (did, row) in rows.by_dispatch {
                if let Some(&k) = index.get(&did) {
                    p.dispatches[k].add_counters(row.counters);
                }
            }
        } else {
            // No kernel trace: the counter rows carry timestamps in rocprofv3 1.0+.
            for (did, row) in rows.by_dispatch {
                let csvread::CounterRow {
                    kernel: name,
                    ts,
                    agent,
                    queue,
                    counters,
                } = row;
                let Some((s, e)) = ts else { continue };
                let agent = csvread::agent_index(&mut p, agents.entry(proc_).or_default(), agent);
                p.dispatches.push(Dispatch {
                    kernel: names.intern(&mut p.kernels, &name),
                    process: proc_,
                    agent,
                    queue,
                    stream: None,
                    dispatch_id: did,
                    start_ns: s,
                    end_ns: e,
                    counters: Some(Box::new(counters)),
                });
            }
        }
    }
    if p.dispatches.is_empty() {
        for i in inputs
            .iter()
            .filter(|i| i.kind == InputKind::Csv(CsvKind::Rocprofv3Stats))
        {
            p.precomputed.extend(csvread::read_stats(&i.path)?);
            p.inputs.push(i.path.clone());
        }
    }
    Ok(p)
}

fn read_rows(source: Source, inputs: &[Input]) -> Result<Profile> {
    let mut format = match source {
        Source::RocprofCompute => "rocprof-compute".to_string(),
        _ => String::new(),
    };
    let mut p = Profile::new(source, "");
    let mut names = Interner::default();
    let mut dirs = Vec::new();
    for i in inputs {
        let proc_ = process_of(&mut dirs, &i.path);
        match i.kind {
            InputKind::Csv(CsvKind::RocprofV1Results)
            | InputKind::Csv(CsvKind::DispatchTimestamps) => {
                if format.is_empty() {
                    format = if i.kind == InputKind::Csv(CsvKind::RocprofV1Results) {
                        "rocprof-v1-results"
                    } else {
                        "rocprofv2-kernel-csv"
                    }
                    .into();
                }
                csvread::read_dispatch_rows(&i.path, &mut p, &mut names, proc_)?;
                p.inputs.push(i.path.clone());
            }
            _ => {}
        }
    }
    // A rocprof-compute workload without timestamps.csv whose pmc_perf.csv has timestamps:
    // its rows are the dispatches (counters included).
    let timed_pmc: Vec<&Input> = inputs
        .iter()
        .filter(|i| i.kind == InputKind::Csv(CsvKind::PmcPerf) && csvread::has_timestamps(&i.path))
        .collect();
    let pmc_gives_dispatches = p.dispatches.is_empty() && !timed_pmc.is_empty();
    if pmc_gives_dispatches {
        for i in &timed_pmc {
            let proc_ = process_of(&mut dirs, &i.path);
            csvread::read_dispatch_rows(&i.path, &mut p, &mut names, proc_)?;
            p.inputs.push(i.path.clone());
        }
    }
    for i in inputs {
        let proc_ = process_of(&mut dirs, &i.path);
        match i.kind {
            InputKind::Csv(CsvKind::PmcPerf) if pmc_gives_dispatches => {}
            InputKind::Csv(CsvKind::SysInfo) => {
                let a = csvread::read_sysinfo(&i.path)?;
                // rocprof-compute profiles one GPU: every agent slot of this directory is it.
                for ag in p.agents.iter_mut() {
                    *ag = a.clone();
                }
                if p.agents.is_empty() {
                    p.agents.push(a);
                }
                p.inputs.push(i.path.clone());
            }
            InputKind::Csv(CsvKind::PmcPerf) => {
                let rows = csvread::read_pmc_perf(&i.path)?;
                p.inputs.push(i.path.clone());
                let index = p.dispatch_index(proc_);
                for (did, (name, counters)) in rows {
                    let Some(&k) = index.get(&did) else { continue };
                    if p.kernels[p.dispatches[k].kernel as usize].name == name {
                        p.dispatches[k].add_counters(counters);
                    }
                }
            }
            _ => {}
        }
    }
    p.format = format;
    Ok(p)
}

/// Join the counters of another pass onto `p`: the n-th dispatch of kernel K in `other` is
/// the n-th dispatch of K in `p` (dispatch ids may differ between runs; program order does not).
pub fn merge_counters(p: &mut Profile, other: &Profile) {
    let mut order: HashMap<&str, Vec<usize>> = HashMap::new();
    let mut idx: Vec<usize> = (0..p.dispatches.len()).collect();
    idx.sort_by_key(|&i| (p.dispatches[i].start_ns, p.dispatches[i].dispatch_id));
    for i in idx {
        order
            .entry(p.kernels[p.dispatches[i].kernel as usize].name.as_str())
            .or_default()
            .push(i);
    }
    let mut oidx: Vec<usize> = (0..other.dispatches.len()).collect();
    oidx.sort_by_key(|&i| {
        (
            other.dispatches[i].start_ns,
            other.dispatches[i].dispatch_id,
        )
    });
    let mut seen: HashMap<&str, usize> = HashMap::new();
    let mut updates: Vec<(usize, BTreeMap<String, f64>)> = Vec::new();
    for i in oidx {
        let d = &other.dispatches[i];
        let name = other.kernels[d.kernel as usize].name.as_str();
        let n = seen.entry(name).or_insert(0);
        if let (Some(list), Some(c)) = (order.get(name), d.counters.as_ref()) {
            if let Some(&target) = list.get(*n) {
                updates.push((target, (**c).clone()));
            }
        }
        *n += 1;
    }
    for (t, c) in updates {
        p.dispatches[t].add_counters(c);
    }
}
