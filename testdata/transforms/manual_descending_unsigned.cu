// hip-unroll-test: loop=4 factor=3 mode=manual
// Descending unsigned loop that stops at 0 without wrapping.
__global__ void rev(float* a, unsigned n) {
    for (unsigned i = n; i > 0; --i) {
        a[i - 1] += 1.0f;
    }
}
