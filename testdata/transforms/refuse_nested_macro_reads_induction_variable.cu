// hip-unroll-test: loop=6 factor=4 mode=manual expect=macro-in-body
// A macro reads `i` through another macro: the copies could not substitute it.
#define AT_I (a[i])
#define LOAD_AT_I AT_I
__global__ void k(float* a, int n) {
    for (int i = 0; i < n; ++i) {
        a[0] += LOAD_AT_I;
    }
}
