// hip-unroll-test: loop=6 factor=4 mode=manual expect=writes-bound
// A forwarding reference binds the bound as an lvalue and writes it.
template <typename T>
__device__ void halve(T&& x) { x /= 2; }
__global__ void k(int n, float* a) {
    for (int i = 0; i < n; ++i) {
        halve(n);
        a[i] = 1.0f;
    }
}
