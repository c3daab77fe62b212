// hip-unroll-test: loop=5 factor=2 mode=manual
// Unroll the inner loop of a nest (its bound reads the outer variable, which it never writes).
__global__ void tri(float* m, int n) {
    for (int r = 0; r < n; ++r) {
        {
            int c = 0;
            for (; c <= 2147483646 && (c + 1) <= r; c += 2) {
                {
                    m[r * n + c] *= 0.5f;
                }
                {
                    m[r * n + (c + 1)] *= 0.5f;
                }
            }
            for (; c <= r; ++c) {
                m[r * n + c] *= 0.5f;
            }
        }
    }
}
