//! Benchmark: parse and summarise a generated one-million-dispatch rocpd database.
fn main() {}
