//! The tune-worker loop (to come).
