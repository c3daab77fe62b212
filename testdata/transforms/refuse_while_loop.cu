// hip-unroll-test: loop=5 factor=4 mode=manual expect=not-a-for-loop
// Manual mode needs a `for` loop.
__global__ void k(float* a, int n) {
    int i = 0;
    while (i < n) { a[i] = 0.0f; ++i; }
}
