//! Byte-range edits: the workspace's one edit type lives in `frontend` (the lowest crate) so that
//! `guards` fixes and `transforms` rewrites share it; re-exported here under its old path.

pub use frontend::edit::{apply, Edit};
