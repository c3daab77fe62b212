//! Lanes on this machine: one thread per device (`--devices`), each with its own backend, its
//! own working copies (`STATE/slots` for the first lane, `STATE/slots/lane-N` for the others)
//! and its device's variables for every command it runs.

use super::{Executor, LaneInfo, Message};
use crate::backend::{Backend, LaneDevice};
use crate::error::Error;
use crate::lane::{Device, Lane, LaneContext, Task};
use crate::settings::Settings;
use crate::workcopy::Tree;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What local lanes need from the session.
pub struct LaneSetup<'a> {
    pub tree: &'a Tree,
    pub state_dir: &'a Path,
    pub records_dir: PathBuf,
    pub settings: &'a Settings,
}

/// One local lane: a backend opened on a device.
pub struct LocalLane<'b, B> {
    pub backend: &'b B,
    /// What decisions record.
    pub device: Device,
    /// What its commands see.
    pub lane: LaneDevice,
}

/// The working copies of local lane `i`.
pub fn slots_dir(state_dir: &std::path::Path, i: usize) -> std::path::PathBuf {
    let base = state_dir.join("slots");
    if i == 0 {
        base
    } else {
        base.join(format!("lane-{i}"))
    }
}

/// Local lanes, running in scoped threads.
pub struct Local<'s> {
    infos: Vec<LaneInfo>,
    senders: Vec<Mutex<Option<Sender<Task>>>>,
    events: Mutex<Receiver<(usize, Message)>>,
    halt: Arc<AtomicBool>,
    stop: &'s Arc<AtomicBool>,
}

impl<'s> Local<'s> {
    /// Start one thread per lane in `scope`. The backends must be preflighted.
    pub fn start<'scope, 'env, B: Backend>(
        scope: &'scope std::thread::Scope<'scope, 'env>,
        lanes: &'env [LocalLane<'env, B>],
        setup: &'env LaneSetup<'env>,
        stop: &'s Arc<AtomicBool>,
    ) -> Result<Local<'s>, Error> {
        let halt = Arc::new(AtomicBool::new(stop.load(Ordering::SeqCst)));
        let (etx, erx) = channel::<(usize, Message)>();
        let mut senders = Vec::new();
        let mut infos = Vec::new();
        for (i, l) in lanes.iter().enumerate() {
            let (ttx, trx) = channel::<Task>();
            senders.push(Mutex::new(Some(ttx)));
            infos.push(LaneInfo {
                device: l.device.clone(),
                backend: l.backend.name().to_string(),
                unit: l.backend.unit(),
                ranks: l.backend.ranks(),
                overlap: l.backend.overlaps(),
                fingerprint: String::new(),
            });
            let cx = LaneContext {
                tree: setup.tree,
                slots_dir: slots_dir(setup.state_dir, i),
                records: Some(setup.records_dir.clone()),
                halt: halt.clone(),
                plan: setup.settings.plan,
                jobs: setup.settings.jobs,
                gates: setup.settings.gates.clone(),
                device: l.lane.clone(),
                overlap: l.backend.overlaps(),
            };
            let etx = etx.clone();
            let backend = l.backend;
            std::thread::Builder::new()
                .name(format!("hip-unroll-lane-{i}"))
                .spawn_scoped(scope, move || {
                    let lane = Lane::new(backend, cx);
                    let emit = move |e| {
                        let _ = etx.send((i, Message::Event(e, std::time::Instant::now())));
                    };
                    lane.run(trx, &emit);
                })
                .map_err(|e| Error::Environment(format!("cannot start a lane thread: {e}")))?;
        }
        Ok(Local {
            infos,
            senders,
            events: Mutex::new(erx),
            halt,
            stop,
        })
    }
}

impl Executor for Local<'_> {
    fn lanes(&self) -> &[LaneInfo] {
        &self.infos
    }

    fn send(&self, lane: usize, task: Task) -> bool {
        let s = self.senders[lane].lock().unwrap_or_else(|p| p.into_inner());
        s.as_ref().is_some_and(|s| s.send(task).is_ok())
    }

    fn recv(&self, wait: Duration) -> Option<(usize, Message)> {
        if self.stop.load(Ordering::SeqCst) {
            self.halt.store(true, Ordering::SeqCst);
        }
        let r = self.events.lock().unwrap_or_else(|p| p.into_inner());
        r.recv_timeout(wait).ok()
    }

    fn halt(&self) {
        self.halt.store(true, Ordering::SeqCst);
        for s in &self.senders {
            s.lock().unwrap_or_else(|p| p.into_inner()).take();
        }
    }
}

impl Drop for Local<'_> {
    fn drop(&mut self) {
        // The lane threads end when their task channels close (the scope then joins them).
        self.halt();
    }
}
