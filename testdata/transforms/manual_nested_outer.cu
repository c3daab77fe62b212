// hip-unroll-test: loop=4 factor=2 mode=manual
// Unroll the outer loop of a nest: each copy holds the whole inner loop.
__global__ void rows(float* m, int n, int w) {
    for (int r = 0; r < n; ++r) {
        for (int c = 0; c < w; ++c) {
            m[r * w + c] += (float)r;
        }
    }
}
