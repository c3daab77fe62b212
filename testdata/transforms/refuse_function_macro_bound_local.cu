// hip-unroll-test: loop=6 factor=4 mode=manual expect=writes-bound
// A function-like macro in the bound reads the local `extra` (not one of its arguments),
// which the body writes.
#define PLUS_EXTRA(x) ((x) + extra)
__global__ void k(float* a, int n, int extra) {
    for (int i = 0; i < PLUS_EXTRA(n); ++i) {
        extra = 0;
        a[i] = 1.0f;
    }
}
