// hip-unroll-test: loop=4 factor=2 mode=manual
// Unroll the outer loop of a nest: each copy holds the whole inner loop.
__global__ void rows(float* m, int n, int w) {
    {
        int r = 0;
        for (; r <= 2147483646 && (r + 1) < n; r += 2) {
            {
                for (int c = 0; c < w; ++c) {
                    m[r * w + c] += (float)r;
                }
            }
            {
                for (int c = 0; c < w; ++c) {
                    m[(r + 1) * w + c] += (float)(r + 1);
                }
            }
        }
        for (; r < n; ++r) {
            for (int c = 0; c < w; ++c) {
                m[r * w + c] += (float)r;
            }
        }
    }
}
