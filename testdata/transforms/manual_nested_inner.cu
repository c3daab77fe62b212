// hip-unroll-test: loop=5 factor=2 mode=manual
// Unroll the inner loop of a nest (its bound reads the outer variable, which it never writes).
__global__ void tri(float* m, int n) {
    for (int r = 0; r < n; ++r) {
        for (int c = 0; c <= r; ++c) {
            m[r * n + c] *= 0.5f;
        }
    }
}
