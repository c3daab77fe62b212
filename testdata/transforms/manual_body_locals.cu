// hip-unroll-test: loop=5 factor=2 mode=manual
// Body-local declarations: each copy is its own block.
__global__ void locals(const float* a, float* b, int n) {
    float acc = 0.0f;
    for (int i = 0; i < n; i++) {
        float t = a[i] * a[i];
        const int j = n - 1 - i;
        acc += t;
        b[j] = acc;
    }
}
