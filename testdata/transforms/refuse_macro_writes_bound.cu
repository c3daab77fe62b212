// hip-unroll-test: loop=5 factor=4 mode=manual expect=writes-bound
// A macro in the body assigns the bound.
#define RESET_LIMIT n = 0
__global__ void k(int n, float* a) {
    for (int i = 0; i < n; ++i) {
        RESET_LIMIT;
        a[i] = 1.0f;
    }
}
