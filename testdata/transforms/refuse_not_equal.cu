// hip-unroll-test: loop=4 factor=4 mode=manual expect=unsupported-comparison
// `!=` conditions are not supported.
__global__ void k(float* a, int n) {
    for (int i = 0; i != n; ++i) {
        a[i] = 0.0f;
    }
}
