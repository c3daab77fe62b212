// hip-unroll-test: loop=4 factor=2 mode=manual
// size_t, `<=`, step 2.
__global__ void evens(float* a, size_t n) {
    {
        size_t i = 0;
        for (; i <= 18446744073709551613ull && (i + 2) <= n; i += 4) {
            {
                a[i] = 0.0f;
            }
            {
                a[(i + 2)] = 0.0f;
            }
        }
        for (; i <= n; i += 2) {
            a[i] = 0.0f;
        }
    }
}
