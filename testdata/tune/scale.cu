#if defined(__HIP__)
#include <hip/hip_runtime.h>
#endif

// A handful of multiply-adds per thread of one small block: microseconds of a run that takes
// tens of milliseconds, so whatever unrolling does to it cannot be measured.
__global__ void scale(int* v, const int* w, int n, int taps) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int s = 0;
    for (int k = 0; k < taps; ++k) {
        s += w[k] * (i + k);
    }
    v[i] = s;
}
