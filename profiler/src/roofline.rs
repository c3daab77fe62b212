//! roofline (in progress).
