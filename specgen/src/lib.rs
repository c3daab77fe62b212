//! specgen: launch specs written for the user and checked without a GPU (`hip-unroll spec`).
//!
//! [`new_spec`] reads a kernel's signature and body in the IR of its translation unit and
//! drafts a launch spec (`runner`'s format, version 1): one `[[args]]` per parameter with its
//! name and element type ([`ctype`]), the pointers it writes through as outputs ([`writes`]),
//! `min-length` from its indexing ([`bounds`]), template kernels by their instantiation
//! ([`template`]), the block from `__launch_bounds__`; every value it cannot know is a marked
//! placeholder and every value it reads from the source a marked guess ([`draft`]).
//! [`check::check`] validates a spec: placeholders left, the spec's own checks, the kernel and
//! its parameters in the IR, and the compile for the chosen targets (`runner::build`).
//! [`coverage::kernels_without_spec`] lists the kernels of a tree that no spec launches.
//!
//! A library: it returns typed errors and data, and prints nothing.

pub mod bounds;
pub mod check;
pub mod coverage;
pub mod ctype;
pub mod draft;
pub mod template;
pub mod writes;

pub use check::{check, CheckError, CheckOptions, Checked, Problem};
pub use coverage::{kernels_without_spec, Uncovered};
pub use draft::{new_spec, Draft, DraftArg, DraftKind, NewError, NewRequest};

/// The comment that marks a value `spec new` could not know: `spec check` refuses the spec
/// while the value is still the placeholder it wrote (`0`, `0.0`, `[0]`, `"FILL"`).
pub const FILL: &str = "# FILL:";
/// The comment that marks a value `spec new` read from the source, to be checked.
pub const GUESS: &str = "# GUESS:";
