// Every group of HIP names the NVIDIA prelude maps, in one kernel: work-item ids, dynamic shared
// memory, shuffles with an explicit width and their _sync forms, votes, lane ids, atomics,
// fences, barriers and HIP's two-argument __launch_bounds__.
#include <hip/hip_runtime.h>

__global__ void __launch_bounds__(256, 2)
features(float* out, int* counts, unsigned long long* votes, double* sums) {
    HIP_DYNAMIC_SHARED(float, tile)
    const int i = hipBlockIdx_x * hipBlockDim_x + hipThreadIdx_x;
    float v = out[i];
    for (int o = warpSize / 2; o > 0; o /= 2) {
        v += __shfl_down(v, o);
    }
    v += __shfl_xor(v, 1, 16) + __shfl_up_sync(0xffffffffu, v, 1) + __shfl(v, 0);
    tile[hipThreadIdx_x] = v;
    __syncthreads();
    const unsigned long long b = __ballot(v > 0.0f);
    if (__lane_id() == 0) {
        votes[hipBlockIdx_x] = b;
        atomicAdd(counts, __popcll(b));
        atomicMax(counts + 1, (int)hipGridDim_x);
        atomicAdd(sums, (double)v);
    }
    __threadfence();
    out[i] = tile[(hipThreadIdx_x + 1) % hipBlockDim_x] + min(v, 1.0f) + sqrtf(fabsf(v));
}
