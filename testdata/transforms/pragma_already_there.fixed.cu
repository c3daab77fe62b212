// hip-unroll-test: loop=5 factor=4
// The loop already has exactly this pragma: nothing changes.
__global__ void k(float* a, int n) {
    #pragma unroll 4
    for (int i = 0; i < n; ++i) {
        a[i] = 1.0f;
    }
}
