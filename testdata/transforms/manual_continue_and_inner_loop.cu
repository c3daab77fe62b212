// hip-unroll-test: loop=5 factor=4 mode=manual
// `continue` of the unrolled loop becomes a jump to the next copy; the inner loop's stays.
__global__ void sum_pos(const float* a, float* out, int n) {
    float acc = 0.0f;
    for (int i = 0; i < n; ++i) {
        if (a[i] < 0.0f) continue;
        for (int k = 0; k < 4; ++k) {
            if (k == 2) continue;
            acc += a[i] * (float)k;
        }
    }
    out[0] = acc;
}
