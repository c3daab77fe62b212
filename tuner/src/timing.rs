//! Where a tune's wall time goes: the spans of work the lanes report ([`crate::lane::Event::Span`],
//! placed on the coordinator's clock when they arrive, less how long ago they ended), the time
//! lanes hold tasks, and the samples' own time, turned into [`crate::report::Timing`]: wall
//! time partitioned into phases by priority (each instant counts once, for the first phase some
//! lane was in; see `Timing`'s documentation), and the work summed per phase.

use crate::lane::Phase;
use crate::report::{Counts, Timing, Work};
use std::collections::HashMap;
use std::time::Instant;

/// The phases in the order they claim an instant: a lane measuring makes it `measure` whatever
/// the others do. `waiting` (a task held by a lane, nothing else) comes last.
const ORDER: [Phase; 4] = [Phase::Measure, Phase::Compile, Phase::Prepare, Phase::Gates];

fn rank(p: Phase) -> usize {
    ORDER
        .iter()
        .position(|x| *x == p)
        .expect("every phase is ranked")
}

/// The timeline of one tune, on the coordinator's clock.
#[derive(Debug)]
pub struct Timeline {
    start: Instant,
    /// `(rank, from, to)` in seconds since `start`; rank `ORDER.len()` is waiting.
    spans: Vec<(usize, f64, f64)>,
    /// Tasks sent and not yet done: id -> when sent.
    open: HashMap<u64, f64>,
    work: [f64; 4],
    samples: f64,
    sample_count: u32,
}

impl Timeline {
    pub fn new(start: Instant) -> Timeline {
        Timeline {
            start,
            spans: Vec::new(),
            open: HashMap::new(),
            work: [0.0; 4],
            samples: 0.0,
            sample_count: 0,
        }
    }

    fn at(&self, t: Instant) -> f64 {
        t.saturating_duration_since(self.start).as_secs_f64()
    }

    /// A span of `phase` that took `seconds` and ended `ago` seconds before `at`.
    pub fn span(&mut self, phase: Phase, seconds: f64, ago: f64, at: Instant) {
        let seconds = if seconds.is_finite() {
            seconds.max(0.0)
        } else {
            0.0
        };
        let ago = if ago.is_finite() { ago.max(0.0) } else { 0.0 };
        let end = (self.at(at) - ago).max(0.0);
        self.spans
            .push((rank(phase), (end - seconds).max(0.0), end));
        self.work[rank(phase)] += seconds;
    }

    /// One sample taken, which took `seconds`.
    pub fn sample(&mut self, seconds: f64) {
        if seconds.is_finite() && seconds > 0.0 {
            self.samples += seconds;
        }
        self.sample_count += 1;
    }

    /// A task handed to a lane at `at`.
    pub fn sent(&mut self, task: u64, at: Instant) {
        let t = self.at(at);
        self.open.insert(task, t);
    }

    /// A task done (or lost with its lane) at `at`.
    pub fn done(&mut self, task: u64, at: Instant) {
        if let Some(from) = self.open.remove(&task) {
            let to = self.at(at);
            self.spans.push((ORDER.len(), from, to.max(from)));
        }
    }

    /// The timing at `end`, with the run's counts of compiles and builds.
    pub fn finish(&mut self, end: Instant, compiles: u32, builds: u32) -> Timing {
        let wall = self.at(end);
        let open: Vec<u64> = self.open.keys().copied().collect();
        for id in open {
            self.done(id, end);
        }
        let p = partition(&self.spans, wall);
        Timing {
            wall,
            measure: p[0],
            compile: p[1],
            prepare: p[2],
            gates: p[3],
            waiting: p[4],
            other: p[5],
            work: Work {
                measure: self.work[0],
                compile: self.work[1],
                prepare: self.work[2],
                gates: self.work[3],
                samples: self.samples,
            },
            counts: Counts {
                compiles,
                builds,
                samples: self.sample_count,
            },
        }
    }
}

/// Partition `[0, wall]` by `spans` (`(rank, from, to)`, ranks 0..=4, the lowest active rank
/// claiming each instant): seconds per rank, then the rest (`other`) last. The six figures add
/// up to `wall` (up to rounding).
pub fn partition(spans: &[(usize, f64, f64)], wall: f64) -> [f64; 6] {
    let wall = if wall.is_finite() { wall.max(0.0) } else { 0.0 };
    let mut edges: Vec<(f64, usize, i32)> = Vec::with_capacity(spans.len() * 2);
    for &(r, from, to) in spans {
        let (from, to) = (from.clamp(0.0, wall), to.clamp(0.0, wall));
        if to > from && r < 5 {
            edges.push((from, r, 1));
            edges.push((to, r, -1));
        }
    }
    edges.sort_by(|a, b| a.0.total_cmp(&b.0).then(b.2.cmp(&a.2)));
    let mut out = [0.0; 6];
    let mut active = [0i64; 5];
    let mut last = 0.0;
    for (t, r, d) in edges {
        if t > last {
            let who = active.iter().position(|n| *n > 0).unwrap_or(5);
            out[who] += t - last;
            last = t;
        }
        active[r] += d as i64;
    }
    out[5] += wall - last;
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_phases_partition_the_wall_by_priority() {
        // measure 2..5 over compile 1..4 and prepare 0..3; waiting 0..8; wall 10.
        let spans = [(1, 1.0, 4.0), (2, 0.0, 3.0), (0, 2.0, 5.0), (4, 0.0, 8.0)];
        let p = partition(&spans, 10.0);
        assert_eq!(p, [3.0, 1.0, 1.0, 0.0, 3.0, 2.0]);
        assert!((p.iter().sum::<f64>() - 10.0).abs() < 1e-12);
        // Spans past the wall are cut; nothing at all is all `other`.
        assert_eq!(
            partition(&[(0, 8.0, 12.0)], 10.0),
            [2.0, 0.0, 0.0, 0.0, 0.0, 8.0]
        );
        assert_eq!(partition(&[], 3.0), [0.0, 0.0, 0.0, 0.0, 0.0, 3.0]);
    }

    #[test]
    fn a_timeline_places_spans_and_closes_open_tasks() {
        let t0 = Instant::now();
        let mut t = Timeline::new(t0);
        let at = t0 + std::time::Duration::from_secs(4);
        t.sent(1, t0 + std::time::Duration::from_secs(1));
        t.span(Phase::Measure, 2.0, 1.0, at);
        t.sample(0.5);
        t.sample(0.25);
        let timing = t.finish(t0 + std::time::Duration::from_secs(6), 3, 2);
        assert_eq!(timing.wall, 6.0);
        assert_eq!(timing.measure, 2.0);
        assert_eq!(timing.waiting, 3.0);
        assert_eq!(timing.other, 1.0);
        assert_eq!(timing.work.samples, 0.75);
        assert_eq!(
            (
                timing.counts.compiles,
                timing.counts.builds,
                timing.counts.samples
            ),
            (3, 2, 2)
        );
    }
}
