// hip-unroll-test: loop=4 factor=4 mode=manual expect=preprocessor-in-body
// Conditional compilation inside the body.
__global__ void k(float* a, int n) {
    for (int i = 0; i < n; ++i) {
#if defined(FAST)
        a[i] = 0.0f;
#endif
    }
}
