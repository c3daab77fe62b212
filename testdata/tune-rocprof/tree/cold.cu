#if defined(__HIP__)
#include <hip/hip_runtime.h>
#endif

// A kernel that is never dispatched: its loop is not-run.
__global__ void cold(float* a, int n) {
    for (int i = 0; i < n; ++i) {
        a[i] += 1.0f;
    }
}
