// hip-unroll-test: loop=4 factor=2 mode=manual
// Descending by a loop-invariant parameter step.
__global__ void down(float* a, int n, unsigned s) {
    for (int i = n - 1; i >= 0; i -= s) {
        a[i] = 1.0f;
    }
}
