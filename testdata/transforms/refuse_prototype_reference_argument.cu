// hip-unroll-test: loop=5 factor=4 mode=manual expect=writes-bound
// A function only declared in this file takes the bound by non-const reference.
__device__ void shrink(int& x);
__global__ void k(int n, float* a) {
    for (int i = 0; i < n; ++i) {
        shrink(n);
        a[i] = 1.0f;
    }
}
