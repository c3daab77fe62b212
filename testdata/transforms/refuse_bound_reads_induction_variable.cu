// hip-unroll-test: loop=4 factor=4 mode=manual expect=bound-reads-induction-variable
// The bound moves with the induction variable.
__global__ void k(float* a, int n) {
    for (int i = 0; i < n - i; ++i) {
        a[i] = 1.0f;
    }
}
