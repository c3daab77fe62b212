// hip-unroll-test: loop=7 factor=4 mode=manual expect=bound-reads-global
// The bound is a macro (through another macro) naming a device global, which the body writes.
__device__ int g_limit;
#define LIMIT_OF_G g_limit
#define LIMIT (LIMIT_OF_G)
__global__ void k(float* a) {
    for (int i = 0; i < LIMIT; ++i) {
        g_limit = 0;
        a[i] = 1.0f;
    }
}
