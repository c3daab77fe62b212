// hip-unroll-test: loop=5 factor=4 mode=manual expect=bound-calls-function
// The bound calls a function, which may return something else each time.
__device__ int limit(int n);
__global__ void k(float* a, int n) {
    for (int i = 0; i < limit(n); ++i) {
        a[i] = 0.0f;
    }
}
