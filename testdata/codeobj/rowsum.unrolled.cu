// Variant for the vgpr-pressure guard test: the loop of rowsum.cu unrolled by 4 (cheap).
#include <hip/hip_runtime.h>

__global__ void rowsum(const float* __restrict__ in, float* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float s = 0.0f;
#pragma unroll 4
  for (int j = 0; j < 16; ++j) s += in[i * 16 + j];
  out[i] = s;
}
