//! What the session benchmark asks of a session beyond the API every version has: this
//! version's. `bench/session_host_base_api.rs` is the same for the session code before issue
//! 27 (`bench/session_host.sh` builds the benchmark against both).

use runner::session::{KernelId, Session};

/// The name the benchmark reports for this code.
pub const CODE: &str = "this tree";

/// Outputs of kernel `id` outside their tolerance of the baseline's.
pub fn differences(s: &Session, id: KernelId) -> usize {
    s.differences(id).len()
}

/// The session's own accounting of its host memory, where it has one.
pub fn host_bytes(s: &Session) -> Option<usize> {
    Some(s.host_bytes())
}
