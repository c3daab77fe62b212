// hip-unroll-test: loop=5 factor=4 mode=manual expect=bound-reads-global
// The bound is a global that a called function may change.
__device__ int g_count;
__global__ void k(float* a) {
    for (int i = 0; i < g_count; ++i) {
        a[i] = 0.0f;
    }
}
