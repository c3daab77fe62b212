#if defined(__HIP__)
#include <hip/hip_runtime.h>
#endif

// An integer recurrence: every step depends on the one before. Unrolled, the compiler folds
// several steps into one multiply-add, so the chain of dependent instructions gets shorter.
__global__ void chain(const int* in, int* out, int n, int iters) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int x = in[i];
    for (int k = 0; k < iters; ++k) {
        x = x * 3 + k;
    }
    out[i] = x;
}
