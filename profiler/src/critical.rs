//! critical (in progress).
