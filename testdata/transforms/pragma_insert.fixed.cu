// hip-unroll-test: loop=4 factor=4
// A new pragma on its own line, with the loop's indentation.
__global__ void k(float* a, int n) {
    #pragma unroll 4
    for (int i = 0; i < n; ++i) {
        a[i] = 1.0f;
    }
}
