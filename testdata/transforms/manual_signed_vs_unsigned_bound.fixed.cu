// hip-unroll-test: loop=4 factor=2 mode=manual
// A signed variable compared with an unsigned bound: the guard also checks the sign.
__global__ void mixed(float* a, int start, unsigned n) {
    {
        int i = start;
        for (; i <= 2147483646 && (i >= 0 || (i + 1) < 0) && (i + 1) < n; i += 2) {
            {
                a[i] = 1.0f;
            }
            {
                a[(i + 1)] = 1.0f;
            }
        }
        for (; i < n; ++i) {
            a[i] = 1.0f;
        }
    }
}
