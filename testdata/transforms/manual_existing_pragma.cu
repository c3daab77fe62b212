// hip-unroll-test: loop=5 factor=2 mode=manual
// An unroll pragma before the loop is removed: it would no longer precede a loop.
__global__ void pragma(float* a, int n) {
    #pragma unroll 4
    for (int i = 0; i < n; ++i) {
        a[i] = 2.0f;
    }
}
