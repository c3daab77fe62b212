//! The rule registry: every rule id, its severity and its documentation, in one place.

pub mod vgpr_pressure;
