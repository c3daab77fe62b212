//! cargo-fuzz target: `codeobj_fuzz::bundle` must not panic on any input.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| codeobj_fuzz::bundle(data));
