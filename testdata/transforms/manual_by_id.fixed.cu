// hip-unroll-test: loop=two:1 factor=2 mode=manual
// The loop named by its `function:index` id.
__global__ void two(float* a, int n) {
    for (int i = 0; i < n; ++i) a[i] = 0.0f;
    {
        int j = 0;
        for (; j <= 2147483646 && (j + 1) < n; j += 2) {
            {
                a[j] += 1.0f;
            }
            {
                a[(j + 1)] += 1.0f;
            }
        }
        for (; j < n; ++j) {
            a[j] += 1.0f;
        }
    }
}
