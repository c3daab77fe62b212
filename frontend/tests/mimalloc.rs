//! `use_mimalloc_for_tree_sitter` in a process of its own (it must run before any parse).

#[test]
fn parses_with_mimalloc() {
    // SAFETY: first thing in this test binary, which has no other test.
    unsafe { frontend::use_mimalloc_for_tree_sitter() };
    let src = "__global__ void k(float* a) { for (int i = 0; i < 8; ++i) a[i] = 0; }".repeat(2000);
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let s = src.clone();
            std::thread::spawn(move || frontend::parse(s.as_bytes()).functions.len())
        })
        .collect();
    for h in handles {
        assert_eq!(h.join().expect("no panic"), 2000);
    }
    unsafe { frontend::use_mimalloc_for_tree_sitter() }; // later calls do nothing
    assert_eq!(
        frontend::parse(b"__global__ void k() {}").functions.len(),
        1
    );
}
