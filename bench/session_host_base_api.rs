//! The session benchmark's view of the session code before issue 27 (main 320f6ce and
//! earlier): `bench/session_host.sh` copies it over `runner/benches/session_host/api.rs` in an
//! export of that commit, so that one benchmark measures both. Not compiled in this tree.

use runner::session::{KernelId, Session};

/// The name the benchmark reports for this code.
pub const CODE: &str = "base";

/// Outputs of kernel `id` outside their tolerance of the baseline's.
pub fn differences(s: &Session, id: KernelId) -> usize {
    s.compare(0, id).len()
}

/// The session's own accounting of its host memory: none before issue 27.
pub fn host_bytes(_: &Session) -> Option<usize> {
    None
}
