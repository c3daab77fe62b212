// hip-unroll-test: loop=4 factor=4 mode=manual expect=zero-step
// `i += 0` never moves.
__global__ void k(float* a, int n) {
    for (int i = 0; i < n; i += 0) {
        a[0] += 1.0f;
    }
}
