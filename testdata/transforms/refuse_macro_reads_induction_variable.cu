// hip-unroll-test: loop=5 factor=4 mode=manual expect=macro-in-body
// A macro reads `i` behind the transform's back.
#define LOAD_I (a[i])
__global__ void k(float* a, int n) {
    for (int i = 0; i < n; ++i) {
        a[0] += LOAD_I;
    }
}
