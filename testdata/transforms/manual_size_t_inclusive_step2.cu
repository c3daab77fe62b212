// hip-unroll-test: loop=4 factor=2 mode=manual
// size_t, `<=`, step 2.
__global__ void evens(float* a, size_t n) {
    for (size_t i = 0; i <= n; i += 2) {
        a[i] = 0.0f;
    }
}
