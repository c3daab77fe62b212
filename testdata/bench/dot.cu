// A dot product in two stages: each block reduces its grid-stride slice of a*b to one partial
// sum (partial[blockIdx.x]). The grid-stride loop is the one worth unrolling; the tree
// reduction after it has barriers and stays as it is.
#include <hip/hip_runtime.h>

#define BLOCK 256

__global__ void __launch_bounds__(BLOCK)
dot(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ partial, int n) {
    __shared__ float sums[BLOCK];
    const int stride = hipBlockDim_x * hipGridDim_x;
    float sum = 0.0f;
    for (int i = hipBlockIdx_x * hipBlockDim_x + hipThreadIdx_x; i < n; i += stride) {
        sum += a[i] * b[i];
    }
    sums[threadIdx.x] = sum;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) {
            sums[threadIdx.x] += sums[threadIdx.x + s];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        partial[blockIdx.x] = sums[0];
    }
}
