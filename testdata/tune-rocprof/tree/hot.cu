#if defined(__HIP__)
#include <hip/hip_runtime.h>
#endif

// The kernel the stand-in profiler reports as dispatched.
__global__ void hot(float* a, int n) {
    for (int i = 0; i < n; ++i) {
        a[i] = a[i] * 2.0f + 1.0f;
    }
}
