// Row softmax with an online maximum, in the style of llm.c's kernels (written for hip-unroll's
// tests): one warp per row, expf and fmaxf, warp shuffles, assert.
#include <assert.h>
#include <cuda_runtime.h>
#include <float.h>

__device__ float warp_max(float v) {
    for (int o = 16; o > 0; o /= 2) {
        v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    }
    return v;
}

__device__ float warp_sum(float v) {
    for (int o = 16; o > 0; o /= 2) {
        v += __shfl_xor_sync(0xffffffffu, v, o);
    }
    return v;
}

__global__ void softmax_forward(float* out, const float* inp, int N, int C) {
    assert(C > 0);
    int lane = threadIdx.x % 32;
    int row = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    if (row >= N) {
        return;
    }
    const float* x = inp + (size_t)row * C;
    float maxval = -FLT_MAX;
    float sum = 0.0f;
    for (int i = lane; i < C; i += 32) {
        float m = fmaxf(maxval, x[i]);
        sum = sum * expf(maxval - m) + expf(x[i] - m);
        maxval = m;
    }
    float rowmax = warp_max(maxval);
    sum = warp_sum(sum * expf(maxval - rowmax));
    float norm = 1.0f / sum;
    for (int i = lane; i < C; i += 32) {
        out[(size_t)row * C + i] = expf(x[i] - rowmax) * norm;
    }
}
