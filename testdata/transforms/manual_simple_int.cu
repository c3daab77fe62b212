// hip-unroll-test: loop=4 factor=4 mode=manual
// Plain ascending loop: main loop of 4 copies, then the original loop as remainder.
__global__ void scale(float* a, int n) {
    for (int i = 0; i < n; ++i) {
        a[i] = a[i] * 2.0f; // keep this comment
    }
}
