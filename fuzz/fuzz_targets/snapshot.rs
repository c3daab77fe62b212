//! cargo-fuzz target: `codeobj_fuzz::snapshot::check` must not panic on any input.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| codeobj_fuzz::snapshot::check(data));
