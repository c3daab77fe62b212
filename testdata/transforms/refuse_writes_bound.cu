// hip-unroll-test: loop=4 factor=4 mode=manual expect=writes-bound
// The body changes the bound.
__global__ void k(float* a, int n) {
    for (int i = 0; i < n; ++i) {
        if (a[i] < 0.0f) n--;
    }
}
