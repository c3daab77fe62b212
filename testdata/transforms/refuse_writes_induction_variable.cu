// hip-unroll-test: loop=4 factor=4 mode=manual expect=writes-induction-variable
// The body moves the induction variable.
__global__ void k(float* a, int n) {
    for (int i = 0; i < n; ++i) {
        if (a[i] < 0.0f) i++;
    }
}
