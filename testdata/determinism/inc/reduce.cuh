// Includes math.cuh, which includes it back (a cycle), and syncs through a macro-qualified
// helper.
#pragma once
#include "math.cuh"
#include "defs.cuh"

DINLINE float block_sum(float v, float* smem) {
  smem[threadIdx.x] = v;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) smem[threadIdx.x] += smem[threadIdx.x + s];
    __syncthreads();
  }
  return smem[0];
}

DINLINE void accumulate(float* out, const float* in, int n) {
  for (int i = 0; i < n; ++i) atomicAdd(out, in[i]);
}
