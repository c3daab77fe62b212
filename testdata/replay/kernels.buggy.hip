// kernels.hip plus a device variable named hip_unroll_fake_bug: the fake HSA runtime of the
// replay tests (fake_hsa.c) computes one element of scale wrong for a code object that has
// it, standing in for a miscompiled variant. On a real GPU this computes what kernels.hip does.
#include <hip/hip_runtime.h>

__device__ int hip_unroll_fake_bug = 0;

__global__ void scale(float* out, const float* in, int n, float s) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float acc = 0.0f;
#pragma unroll 2
  for (int k = 0; k < 8; ++k) acc += in[(i + k) % n] * s;
  out[i] = acc + hip_unroll_fake_bug;
}
