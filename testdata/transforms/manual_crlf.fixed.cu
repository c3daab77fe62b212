// hip-unroll-test: loop=4 factor=2 mode=manual
// CRLF line endings are kept, and used for the new lines.
__global__ void crlf(float* a, int n) {
    {
        int i = 0;
        for (; i <= 2147483646 && (i + 1) < n; i += 2) {
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
