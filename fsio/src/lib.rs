//! The user's files, safely: the one home of hip-unroll's file I/O policy (atomic writes that
//! never overwrite a concurrent edit, outputs that refuse anything but a regular file, sets of
//! files replaced as one through a journal, bounded reads of regular files) and of the test
//! points that make kill and race tests deterministic. Errors are typed ([`Error`], one line
//! each); the binary decides what to do with them.

pub mod error;
pub mod read;
pub mod testpoint;
pub mod txn;
pub mod write;

pub use error::{reason, Error, Kind, Op};
pub use read::{
    digest, read, read_source, read_to_string, regular, OBJECT_CAP, SOURCE_CAP, TEXT_CAP,
};
pub use write::{check_output, process_gone, rewrite, write_output, TEMP_PREFIX};
