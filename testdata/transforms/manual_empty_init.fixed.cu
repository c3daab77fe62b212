// hip-unroll-test: loop=5 factor=2 mode=manual
// No init clause: the variable is set before the loop and read after it.
__device__ int count_up(float* a, int i, int n) {
    a[0] = 0.0f;
    {
        for (; i <= 2147483646 && (i + 1) < n; i += 2) {
            {
                a[i] += 1.0f;
            }
            {
                a[(i + 1)] += 1.0f;
            }
        }
        for (; i < n; i++) {
            a[i] += 1.0f;
        }
    }
    return i;
}
