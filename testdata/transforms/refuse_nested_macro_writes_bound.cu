// hip-unroll-test: loop=6 factor=4 mode=manual expect=writes-bound
// The body's macro writes the bound through another macro.
#define SHRINK_N n -= 1
#define STEP_BACK SHRINK_N
__global__ void k(int n, float* a) {
    for (int i = 0; i < n; ++i) {
        STEP_BACK;
        a[i] = 1.0f;
    }
}
