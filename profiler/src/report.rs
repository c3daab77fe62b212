//! report (in progress).
