// hip-unroll-test: loop=4 factor=3 mode=manual
// Descending unsigned loop that stops at 0 without wrapping.
__global__ void rev(float* a, unsigned n) {
    {
        unsigned i = n;
        for (; i >= 2u && (i - 2) > 0; i -= 3) {
            {
                a[i - 1] += 1.0f;
            }
            {
                a[(i - 1) - 1] += 1.0f;
            }
            {
                a[(i - 2) - 1] += 1.0f;
            }
        }
        for (; i > 0; --i) {
            a[i - 1] += 1.0f;
        }
    }
}
