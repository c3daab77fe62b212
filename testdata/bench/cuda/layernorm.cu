// LayerNorm forward in the style of llm.c's kernels (written for hip-unroll's tests): one warp
// per row of C channels, reduced with cooperative groups; a CUDA source that nvcc compiles as it
// is (cuda_runtime.h, cooperative groups, assert, rsqrtf, __stcs).
#include <assert.h>
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cuda_runtime.h>

namespace cg = cooperative_groups;

__global__ void layernorm_forward(float* __restrict__ out, float* __restrict__ mean,
                                  float* __restrict__ rstd, const float* __restrict__ inp,
                                  const float* __restrict__ weight,
                                  const float* __restrict__ bias, int N, int C) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    assert(blockDim.x % 32 == 0);
    int row = blockIdx.x * warp.meta_group_size() + warp.meta_group_rank();
    if (row >= N) {
        return;
    }
    const float* x = inp + row * C;
    float sum = 0.0f;
    for (int i = warp.thread_rank(); i < C; i += warp.size()) {
        sum += x[i];
    }
    float m = cg::reduce(warp, sum, cg::plus<float>{}) / C;
    float sq = 0.0f;
    for (int i = warp.thread_rank(); i < C; i += warp.size()) {
        float d = x[i] - m;
        sq += d * d;
    }
    float s = rsqrtf(cg::reduce(warp, sq, cg::plus<float>{}) / C + 1e-5f);
    if (warp.thread_rank() == 0) {
        __stcs(mean + row, m);
        __stcs(rstd + row, s);
    }
    float* o = out + row * C;
    for (int i = warp.thread_rank(); i < C; i += warp.size()) {
        __stcs(o + i, s * (__ldcs(x + i) - m) * weight[i] + bias[i]);
    }
}
