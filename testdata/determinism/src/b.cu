#include "reduce.cuh"
#include "broken.hpp"

__global__ void k_reduce(float* a, float* out, int n) {
  __shared__ float smem[256];
  for (int i = 0; i < n; ++i) out[i] = block_sum(a[i], smem);
}

__global__ void k_blend(float* a, const float* b, int n) {
  for (int r = 0; r < 8; ++r) blend(a, b, n, 0.5f);
  for (int r = 0; r < 8; ++r) smooth_all(a, n);
}
