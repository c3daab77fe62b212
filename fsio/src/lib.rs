//! The user's files, safely: the one home of hip-unroll's file I/O policy (atomic writes that
//! never overwrite a concurrent edit, outputs that refuse anything but a regular file, bounded
//! reads of regular files) and of the test points that make kill and race tests deterministic.

pub mod testpoint;
