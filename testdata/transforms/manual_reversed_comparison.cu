// hip-unroll-test: loop=4 factor=2 mode=manual
// Bound on the left: `n > i`.
__global__ void rev_cmp(float* a, long n) {
    for (long i = 0; n > i; ++i) {
        a[i] = 3.0f;
    }
}
