//! Critical path of a run: a petgraph DAG over the dispatches, its longest (busiest) path,
//! each kernel's share of that path and its slack.
//!
//! ## Edge rules
//! 1. **Program order**: dispatches on one lane (HIP stream when the input records it, else
//!    the HSA queue, per process and agent) run in order; each gets an edge from its
//!    predecessor on the lane (sorted by start, then dispatch id).
//! 2. **Overlap**: dispatches on different lanes that overlap in time get no edge: they ran
//!    concurrently, so neither waits for the other.
//! 3. **Inferred cross-lane wait**: dispatch `b` gets an edge from dispatch `a` on another lane
//!    of the same process when `a` ended at most `wait_gap_ns` before `b` started
//!    (`0 <= b.start - a.end <= wait_gap_ns`) and `b`'s own lane was already idle when `a`
//!    ended (its predecessor, if any, ended no later than `a`). That is the trace of
//!    `hipStreamWaitEvent`/`hipEventSynchronize` between streams: `b` was ready on its lane
//!    and started only once `a` finished. Of several such `a`, the one that ended last wins.
//!    Explicit dependencies (`Options::extra`) are added as given.
//!
//! Node weights are durations, edges have weight 0, so the critical path length is the GPU time
//! that cannot be overlapped: shortening a kernel off the path by less than its slack does not
//! shorten the run.

use crate::model::Profile;
use petgraph::graph::{DiGraph, NodeIndex};
use serde::Serialize;
use std::collections::HashMap;

/// Options of the graph construction.
#[derive(Debug, Clone)]
pub struct Options {
    /// Largest gap between `a.end` and `b.start` read as a cross-lane wait (rule 3).
    pub wait_gap_ns: u64,
    /// Explicit dependencies `(from, to)` as dispatch indices.
    pub extra: Vec<(usize, usize)>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            wait_gap_ns: 5_000,
            extra: Vec::new(),
        }
    }
}

/// A kernel's place on the critical path.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KernelShare {
    pub name: String,
    /// Time of this kernel's dispatches on the critical path.
    pub on_path_ns: u64,
    /// `on_path_ns` as a percentage of the critical path length.
    pub share: f64,
    /// Smallest slack of its dispatches: how much longer it could run without lengthening
    /// the critical path (0 when on it).
    pub slack_ns: u64,
    pub dispatches_on_path: u64,
    pub runtime: bool,
    /// 1 = largest `on_path_ns` among user kernels; `None` for runtime kernels.
    pub rank: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CriticalPath {
    pub length_ns: u64,
    /// First start to last end.
    pub span_ns: u64,
    /// Dispatch indices along the path, in order.
    pub path: Vec<usize>,
    /// Per-dispatch slack, indexed like `Profile::dispatches`.
    #[serde(skip)]
    pub slack_ns: Vec<u64>,
    pub program_order_edges: usize,
    pub cross_lane_edges: usize,
    pub kernels: Vec<KernelShare>,
}

/// Build the dependency graph of `p` (see the module doc for the rules).
pub fn graph(p: &Profile, opts: &Options) -> (DiGraph<usize, ()>, usize, usize) {
    let n = p.dispatches.len();
    let mut g = DiGraph::<usize, ()>::with_capacity(n, n * 2);
    for i in 0..n {
        g.add_node(i);
    }
    let mut lanes: HashMap<(u32, u32, u64), Vec<usize>> = HashMap::new();
    for (i, d) in p.dispatches.iter().enumerate() {
        lanes.entry(d.lane()).or_default().push(i);
    }
    let mut prev_on_lane: Vec<Option<usize>> = vec![None; n];
    let mut order_edges = 0;
    for v in lanes.values_mut() {
        v.sort_by_key(|&i| (p.dispatches[i].start_ns, p.dispatches[i].dispatch_id, i));
        for w in v.windows(2) {
            g.add_edge(NodeIndex::new(w[0]), NodeIndex::new(w[1]), ());
            prev_on_lane[w[1]] = Some(w[0]);
            order_edges += 1;
        }
    }
    // Rule 3: dispatches sorted by end; for each b, look back from the last end <= b.start.
    let mut by_end: Vec<usize> = (0..n).collect();
    by_end.sort_by_key(|&i| (p.dispatches[i].end_ns, i));
    let ends: Vec<u64> = by_end.iter().map(|&i| p.dispatches[i].end_ns).collect();
    let mut cross = 0;
    for (b, db) in p.dispatches.iter().enumerate() {
        let idle_since = prev_on_lane[b].map(|q| p.dispatches[q].end_ns);
        let mut k = ends.partition_point(|&e| e <= db.start_ns);
        while k > 0 {
            k -= 1;
            let a = by_end[k];
            let da = &p.dispatches[a];
            if db.start_ns - da.end_ns > opts.wait_gap_ns {
                break;
            }
            if da.lane() == db.lane() || da.process != db.process || a == b {
                continue;
            }
            if idle_since.is_some_and(|t| t > da.end_ns) {
                continue;
            }
            // Zero-length dispatches could otherwise form a cycle with the lane order.
            if da.start_ns == db.start_ns && da.end_ns == db.start_ns && a > b {
                continue;
            }
            g.add_edge(NodeIndex::new(a), NodeIndex::new(b), ());
            cross += 1;
            break;
        }
    }
    for &(a, b) in &opts.extra {
        if a < n && b < n && a != b {
            g.add_edge(NodeIndex::new(a), NodeIndex::new(b), ());
            cross += 1;
        }
    }
    (g, order_edges, cross)
}

/// Compute the critical path, slacks and per-kernel shares.
pub fn critical_path(p: &Profile, opts: &Options) -> CriticalPath {
    let n = p.dispatches.len();
    let (g, order_edges, cross) = graph(p, opts);
    let dur: Vec<u64> = p.dispatches.iter().map(|d| d.duration_ns()).collect();
    // Explicit edges could in principle form a cycle: fall back to dropping them.
    let topo = match petgraph::algo::toposort(&g, None) {
        Ok(t) => t,
        Err(_) => {
            return critical_path(
                p,
                &Options {
                    extra: Vec::new(),
                    ..opts.clone()
                },
            )
        }
    };
    let mut head = vec![0u64; n]; // longest path ending at v, v included
    let mut best_pred: Vec<Option<usize>> = vec![None; n];
    for &v in &topo {
        let vi = v.index();
        let mut m = 0;
        for u in g.neighbors_directed(v, petgraph::Direction::Incoming) {
            let ui = u.index();
            if head[ui] > m || (head[ui] == m && best_pred[vi].is_none()) {
                m = head[ui];
                best_pred[vi] = Some(ui);
            }
        }
        head[vi] = m.saturating_add(dur[vi]);
    }
    let mut tail = vec![0u64; n]; // longest path starting at v, v included
    for &v in topo.iter().rev() {
        let vi = v.index();
        let m = g
            .neighbors_directed(v, petgraph::Direction::Outgoing)
            .map(|w| tail[w.index()])
            .max()
            .unwrap_or(0);
        tail[vi] = m.saturating_add(dur[vi]);
    }
    let length = head.iter().copied().max().unwrap_or(0);
    let slack: Vec<u64> = (0..n)
        .map(|v| length.saturating_sub(head[v].saturating_add(tail[v]) - dur[v]))
        .collect();
    let mut path = Vec::new();
    if let Some(end) = (0..n).max_by_key(|&v| (head[v], std::cmp::Reverse(v))) {
        let mut cur = Some(end);
        while let Some(v) = cur {
            path.push(v);
            cur = best_pred[v];
        }
        path.reverse();
    }
    let mut on_path = vec![0u64; p.kernels.len()];
    let mut count = vec![0u64; p.kernels.len()];
    for &v in &path {
        let k = p.dispatches[v].kernel as usize;
        on_path[k] = on_path[k].saturating_add(dur[v]);
        count[k] += 1;
    }
    let mut kslack = vec![u64::MAX; p.kernels.len()];
    for (v, d) in p.dispatches.iter().enumerate() {
        let k = d.kernel as usize;
        kslack[k] = kslack[k].min(slack[v]);
    }
    let mut kernels: Vec<KernelShare> = (0..p.kernels.len())
        .filter(|&k| kslack[k] != u64::MAX)
        .map(|k| KernelShare {
            name: p.kernels[k].name.clone(),
            on_path_ns: on_path[k],
            share: if length > 0 {
                on_path[k] as f64 / length as f64 * 100.0
            } else {
                0.0
            },
            slack_ns: kslack[k],
            dispatches_on_path: count[k],
            runtime: p.kernels[k].runtime,
            rank: None,
        })
        .collect();
    kernels.sort_by(|a, b| {
        a.runtime
            .cmp(&b.runtime)
            .then(b.on_path_ns.cmp(&a.on_path_ns))
            .then(a.slack_ns.cmp(&b.slack_ns))
            .then(a.name.cmp(&b.name))
    });
    let mut r = 0;
    for k in &mut kernels {
        if !k.runtime {
            r += 1;
            k.rank = Some(r);
        }
    }
    CriticalPath {
        length_ns: length,
        span_ns: crate::stats::totals(p).1,
        path,
        slack_ns: slack,
        program_order_edges: order_edges,
        cross_lane_edges: cross,
        kernels,
    }
}
