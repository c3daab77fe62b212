// hip-unroll-test: loop=5 factor=2 mode=manual
// Body-local declarations: each copy is its own block.
__global__ void locals(const float* a, float* b, int n) {
    float acc = 0.0f;
    {
        int i = 0;
        for (; i <= 2147483646 && (i + 1) < n; i += 2) {
            {
                float t = a[i] * a[i];
                const int j = n - 1 - i;
                acc += t;
                b[j] = acc;
            }
            {
                float t = a[(i + 1)] * a[(i + 1)];
                const int j = n - 1 - (i + 1);
                acc += t;
                b[j] = acc;
            }
        }
        for (; i < n; i++) {
            float t = a[i] * a[i];
            const int j = n - 1 - i;
            acc += t;
            b[j] = acc;
        }
    }
}
