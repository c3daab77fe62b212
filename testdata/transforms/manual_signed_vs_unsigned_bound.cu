// hip-unroll-test: loop=4 factor=2 mode=manual
// A signed variable compared with an unsigned bound: the guard also checks the sign.
__global__ void mixed(float* a, int start, unsigned n) {
    for (int i = start; i < n; ++i) {
        a[i] = 1.0f;
    }
}
