// hip-unroll-test: loop=4 factor=4 mode=manual expect=shared-decl-in-body
// A __shared__ declaration in the body would be duplicated.
__global__ void k(float* a, int n) {
    for (int i = 0; i < n; ++i) {
        __shared__ float tile[64];
        tile[i % 64] = a[i];
    }
}
