//! The runtime's own words for an HSA status (its `hsa_status_string`, else the status's name),
//! for the hooks' and the snapshot writer's messages.

use crate::tool;
use replay::ffi::{status_name, Status, STATUS_SUCCESS};
use std::ffi::c_char;

/// The runtime's name for a status.
pub(crate) fn describe(s: Status) -> String {
    if let Some(f) = tool().and_then(|t| t.real.status_string) {
        let mut p: *const c_char = std::ptr::null();
        // SAFETY: hsa_status_string stores a pointer to a static string.
        if unsafe { f(s, &mut p) } == STATUS_SUCCESS && !p.is_null() {
            // SAFETY: NUL-terminated static string.
            let text = unsafe { std::ffi::CStr::from_ptr(p) }.to_string_lossy();
            return text
                .split(". ")
                .next()
                .unwrap_or(&text)
                .trim_end_matches('.')
                .to_string();
        }
    }
    format!("{} ({s:#x})", status_name(s))
}
