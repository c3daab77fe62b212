// hip-unroll-test: loop=4 factor=2 mode=manual
// Descending by a loop-invariant parameter step.
__global__ void down(float* a, int n, unsigned s) {
    {
        int i = n - 1;
        const unsigned long long hu_unroll_4_step = (unsigned long long)(s);
        for (; hu_unroll_4_step <= 4294967295ull && (long long)(i) - (long long)(hu_unroll_4_step) >= -2147483648ll && ((int)((long long)(i) - (long long)(hu_unroll_4_step))) >= 0; i -= s) {
            {
                a[i] = 1.0f;
            }
            i -= s;
            {
                a[i] = 1.0f;
            }
        }
        for (; i >= 0; i -= s) {
            a[i] = 1.0f;
        }
    }
}
