//! Where the work of a tune runs: lanes behind one [`Executor`] trait, as measurements run
//! behind [`crate::backend::Backend`]. The search hands a lane a [`Task`] and reads its
//! [`Event`]s; it never knows whether the lane is a thread of this process
//! ([`local`]: `--devices`) or a `hip-unroll tune-worker` process ([`slurm`]: in a Slurm job
//! step, or started here per `--devices` id for a backend that needs a process per lane),
//! speaking JSON lines over its stdio ([`worker`]).
//!
//! ## Contract for implementers
//! - [`Executor::lanes`] lists the lanes as started, with what each one measures on; the search
//!   refuses lanes whose device models differ (one tune, one model) and keys its decisions by
//!   the model.
//! - [`Executor::send`] gives a lane a task; a lane takes a new task only after the search saw
//!   [`Event::Done`] for the earlier one (two at a time where [`LaneInfo::overlap`] is set).
//!   It returns `false` when the lane is gone.
//! - [`Executor::recv`] returns the next message of any lane, in each lane's order, waiting at
//!   most `wait`. A lane that ends (its step was cancelled, its node failed) sends
//!   [`Message::Lost`] once, last: the search measures its comparisons in flight again, from
//!   scratch, on another lane.
//! - [`Executor::halt`] stops every lane as soon as it can (Ctrl-C, or an error that ends the
//!   tune); nothing is sent afterwards.
//! - Only the search writes the ledger: a lane reports, it never records.

pub mod local;
pub mod slurm;
pub mod worker;

use crate::lane::{Device, Event, Task};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// A started lane.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LaneInfo {
    pub device: Device,
    /// The backend's name (`command`, `bench`...).
    pub backend: String,
    /// The unit of its figures.
    pub unit: String,
    /// Whether the backend ranks loops by the baseline's profile.
    pub ranks: bool,
    /// Whether the lane prepares the next task while it measures (GPU backends).
    pub overlap: bool,
    /// What the lane's backend adds to the settings' fingerprint (the device's compile target
    /// and compiler), empty when nothing.
    pub fingerprint: String,
}

/// What a lane says.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    /// An event, and when the executor received it from the lane (the timing's clock).
    Event(Event, std::time::Instant),
    /// The lane is gone, with why (one line).
    Lost(String),
}

/// Lanes that run tasks. See the module documentation for the contract.
pub trait Executor {
    fn lanes(&self) -> &[LaneInfo];
    /// Hand `task` to `lane`; `false` when the lane is gone.
    fn send(&self, lane: usize, task: Task) -> bool;
    /// The next message of any lane, or `None` after `wait`.
    fn recv(&self, wait: Duration) -> Option<(usize, Message)>;
    /// Stop every lane.
    fn halt(&self);
}
