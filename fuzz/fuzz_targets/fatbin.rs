//! cargo-fuzz target: `codeobj_fuzz::fatbin` must not panic on any input.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| codeobj_fuzz::fatbin(data));
