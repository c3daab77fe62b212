// hip-unroll-test: loop=4 factor=4 mode=manual expect=comma-in-header
// Two variables in the header.
__global__ void k(float* a, int n) {
    for (int i = 0, j = n; i < n; ++i) {
        a[i] = (float)j;
    }
}
