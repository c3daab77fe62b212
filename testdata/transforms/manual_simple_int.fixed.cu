// hip-unroll-test: loop=4 factor=4 mode=manual
// Plain ascending loop: main loop of 4 copies, then the original loop as remainder.
__global__ void scale(float* a, int n) {
    {
        int i = 0;
        for (; i <= 2147483644 && (i + 3) < n; i += 4) {
            {
                a[i] = a[i] * 2.0f; // keep this comment
            }
            {
                a[(i + 1)] = a[(i + 1)] * 2.0f; // keep this comment
            }
            {
                a[(i + 2)] = a[(i + 2)] * 2.0f; // keep this comment
            }
            {
                a[(i + 3)] = a[(i + 3)] * 2.0f; // keep this comment
            }
        }
        for (; i < n; ++i) {
            a[i] = a[i] * 2.0f; // keep this comment
        }
    }
}
