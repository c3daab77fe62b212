#if defined(__HIP__)
#include <hip/hip_runtime.h>
#endif

// A block-wide exchange through shared memory: the barriers inside the loop make every thread
// of the block wait for the others, so the loop must not be unrolled (a guard blocks it).
__global__ void tile(const float* in, float* out, int n, int steps) {
    __shared__ float buf[64];
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    float acc = 0.0f;
    for (int s = 0; s < steps; ++s) {
        buf[t] = (i < n ? in[i] : 0.0f) + s;
        __syncthreads();
        acc += buf[(t + 1) % 64];
        __syncthreads();
    }
    if (i < n) out[i] = acc;
}
