// hip-unroll-test: loop=4 factor=4 mode=manual expect=direction-mismatch
// Counting up against a `>` condition.
__global__ void k(float* a, int n) {
    for (int i = n; i > 0; ++i) {
        a[0] += 1.0f;
    }
}
