//! Perfetto / Chrome trace-event JSON of the dispatches (open it in ui.perfetto.dev): one
//! complete event (`"ph": "X"`) per dispatch, `ts`/`dur` in microseconds from the first start,
//! one `pid` per (process, agent) and one `tid` per queue/stream, named by metadata events.

use crate::model::Profile;
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// The trace as a JSON value (`{"traceEvents": [...], "displayTimeUnit": "ns"}`).
pub fn chrome_trace(p: &Profile) -> Value {
    let t0 = p.dispatches.iter().map(|d| d.start_ns).min().unwrap_or(0);
    let mut pids: BTreeMap<(u32, u32), u64> = BTreeMap::new();
    let mut tids: BTreeMap<(u32, u32, u64), u64> = BTreeMap::new();
    for d in &p.dispatches {
        let n = pids.len() as u64;
        pids.entry((d.process, d.agent)).or_insert(n + 1);
        let n = tids.len() as u64;
        tids.entry(d.lane()).or_insert(n + 1);
    }
    let mut events = Vec::with_capacity(p.dispatches.len() + pids.len() + tids.len());
    for (&(process, agent), &pid) in &pids {
        let a = p.agents.get(agent as usize);
        let label = match a.and_then(|a| a.arch.clone()) {
            Some(arch) => format!("GPU agent {agent} ({arch}) process {process}"),
            None => format!("GPU agent {agent} process {process}"),
        };
        events.push(json!({"name": "process_name", "ph": "M", "pid": pid, "tid": 0, "args": {"name": label}}));
    }
    for (&(process, agent, lane), &tid) in &tids {
        let pid = pids[&(process, agent)];
        let label = if lane & (1 << 63) != 0 {
            format!("stream {}", lane & !(1 << 63))
        } else {
            format!("queue {lane}")
        };
        events.push(json!({"name": "thread_name", "ph": "M", "pid": pid, "tid": tid, "args": {"name": label}}));
    }
    let mut order: Vec<usize> = (0..p.dispatches.len()).collect();
    order.sort_by_key(|&i| (p.dispatches[i].start_ns, i));
    for i in order {
        let d = &p.dispatches[i];
        let k = &p.kernels[d.kernel as usize];
        events.push(json!({
            "name": k.name,
            "cat": if k.runtime { "runtime-kernel" } else { "kernel" },
            "ph": "X",
            "ts": (d.start_ns - t0) as f64 / 1000.0,
            "dur": d.duration_ns() as f64 / 1000.0,
            "pid": pids[&(d.process, d.agent)],
            "tid": tids[&d.lane()],
            "args": {"dispatch_id": d.dispatch_id, "queue": d.queue, "stream": d.stream, "start_ns": d.start_ns, "end_ns": d.end_ns},
        }));
    }
    json!({"traceEvents": events, "displayTimeUnit": "ns"})
}
