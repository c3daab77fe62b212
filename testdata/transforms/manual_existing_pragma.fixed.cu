// hip-unroll-test: loop=5 factor=2 mode=manual
// An unroll pragma before the loop is removed: it would no longer precede a loop.
__global__ void pragma(float* a, int n) {
    {
        int i = 0;
        for (; i <= 2147483646 && (i + 1) < n; i += 2) {
            {
                a[i] = 2.0f;
            }
            {
                a[(i + 1)] = 2.0f;
            }
        }
        for (; i < n; ++i) {
            a[i] = 2.0f;
        }
    }
}
