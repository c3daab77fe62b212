// hip-unroll-test: loop=5 factor=2
// `#pragma nounroll` is an unroll pragma too.
__global__ void k(float* a, int n) {
    #pragma nounroll
    for (int i = 0; i < n; ++i) {
        a[i] = 1.0f;
    }
}
