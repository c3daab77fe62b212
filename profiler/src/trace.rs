//! trace (in progress).
