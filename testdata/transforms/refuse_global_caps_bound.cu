// hip-unroll-test: loop=5 factor=4 mode=manual expect=bound-reads-global
// An ALL_CAPS name is a device global of this file, not a constant: the body writes it.
__device__ int LIMIT;
__global__ void k(float* a) {
    for (int i = 0; i < LIMIT; ++i) {
        LIMIT = 0;
        a[i] = 1.0f;
    }
}
