// hip-unroll-test: loop=5 factor=4 mode=manual expect=writes-bound
// A callable parameter of unknown signature may take the bound by reference.
template <class F>
__global__ void k(int n, float* a, F shrink) {
    for (int i = 0; i < n; ++i) {
        shrink(n);
        a[i] = 1.0f;
    }
}
