// hip-unroll-test: loop=5 factor=4 mode=manual expect=writes-bound
// The body may shrink the bound through a non-const reference parameter.
__device__ void shrink(int& m) { --m; }
__global__ void k(float* a, int n) {
    for (int i = 0; i < n; ++i) {
        a[i] = 0.0f;
        shrink(n);
    }
}
