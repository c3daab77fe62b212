//! transforms crate (see ARCHITECTURE.md).
