// hip-unroll-test: loop=5 factor=4 mode=manual expect=bound-address-taken
// The bound is a local reference to memory the body writes: unrolling would read it too late.
__global__ void k(int* m, float* a) {
    int& len = m[0];
    for (int i = 0; i < len; ++i) {
        m[0] = 0;
        a[i] = 1.0f;
    }
}
