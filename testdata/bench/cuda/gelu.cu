// GELU (tanh approximation) forward over float4 packs, in the style of llm.c's kernels (written
// for hip-unroll's tests): vector types, streaming loads and stores (__ldcs, __stcs), tanhf,
// M_PI from <cmath>, a grid-stride loop and host code with <algorithm>.
#include <algorithm>
#include <cassert>
#include <cmath>
#include <cuda_runtime.h>

#define GELU_SCALING_FACTOR sqrtf(2.0f / M_PI)

__device__ inline float gelu(float x) {
    float cube = 0.044715f * x * x * x;
    return 0.5f * x * (1.0f + tanhf(GELU_SCALING_FACTOR * (x + cube)));
}

__global__ void gelu_forward(float4* out, const float4* inp, int packs) {
    assert(packs >= 0);
    int stride = blockDim.x * gridDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < packs; i += stride) {
        float4 v = __ldcs(inp + i);
        float4 r = make_float4(gelu(v.x), gelu(v.y), gelu(v.z), gelu(v.w));
        __stcs(out + i, r);
    }
}

// How the host would launch it (host code nvcc parses along with the kernel).
int gelu_blocks(int packs, int block_size, int max_blocks) {
    return std::min((packs + block_size - 1) / block_size, max_blocks);
}
