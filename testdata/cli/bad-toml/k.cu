// Fixture: kernels whose loops are all unrollable and carry no wrong pragma.
#include <hip/hip_runtime.h>

__global__ void axpy(float a, const float* x, float* y) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        y[threadIdx.x * 4 + i] += a * x[threadIdx.x * 4 + i];
    }
}

__global__ void copy(const float* in, float* out, int n) {
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        out[i] = in[i];
    }
}
