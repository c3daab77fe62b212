//! profiler crate (see ARCHITECTURE.md).
