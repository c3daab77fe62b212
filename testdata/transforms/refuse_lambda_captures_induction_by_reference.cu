// hip-unroll-test: loop=7 factor=4 mode=manual expect=induction-variable-address-taken
// A lambda defined before the loop captures everything by reference and reads `i`: the copies
// would all see the same `i`.
__global__ void k(int n, float* a) {
    int i;
    auto store = [&]() { a[i] = 1.0f; };
    for (i = 0; i < n; ++i) {
        store();
    }
}
