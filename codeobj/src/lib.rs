//! codeobj crate (see ARCHITECTURE.md).
