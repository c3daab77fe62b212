// hip-unroll-test: loop=4 factor=4 mode=manual expect=shadows-induction-variable
// The body declares another `i`.
__global__ void k(float* a, int n) {
    for (int i = 0; i < n; ++i) {
        for (int i = 0; i < 2; ++i) a[i] = 0.0f;
    }
}
