// hip-unroll-test: loop=4 factor=2 mode=manual
// Bound on the left: `n > i`.
__global__ void rev_cmp(float* a, long n) {
    {
        long i = 0;
        for (; i <= 9223372036854775806ll && n > (i + 1); i += 2) {
            {
                a[i] = 3.0f;
            }
            {
                a[(i + 1)] = 3.0f;
            }
        }
        for (; n > i; ++i) {
            a[i] = 3.0f;
        }
    }
}
