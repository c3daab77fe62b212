//! tuner: the closed loop of `hip-unroll tune`. Discovers the loops of a kernel repository,
//! gates every unrolled variant statically, builds and checks it in a private working copy,
//! measures it against the baseline in interleaved rounds through a [`backend::Backend`],
//! decides with [`stats`], records everything in a SQLite [`ledger`], and applies the accepted
//! edits to the user's files at the end. Reports are data ([`report`]) with renderers to strings.

pub mod apply;
pub mod devices;
pub mod error;
pub mod limits;
pub mod occupancy;
pub mod orphans;
pub mod shell;
pub mod sim;
pub mod stats;
pub mod workcopy;

pub use error::Error;
pub mod backend;
pub mod discover;
pub mod executor;
pub mod gates;
pub mod lane;
pub mod ledger;
pub mod report;
pub mod search;
pub mod setting;
pub mod settings;
pub mod setup;
pub mod timing;
