// The same kernels as kernels.hip with the loop unrolled and more static LDS: the signature
// and kernarg layout are unchanged, so replay accepts it as a variant.
#include <hip/hip_runtime.h>

__global__ void scale(float* out, const float* in, int n, float s) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float acc = 0.0f;
#pragma unroll 4
  for (int k = 0; k < 8; ++k) acc += in[(i + k) % n] * s;
  out[i] = acc;
}

namespace ns {
__global__ void dyn_lds(const int* in, int* out) {
  extern __shared__ int buf[];
  __shared__ int fixed[128];
  fixed[threadIdx.x % 128] = in[threadIdx.x];
  buf[threadIdx.x] = in[threadIdx.x] * 2;
  __syncthreads();
  out[threadIdx.x] = buf[blockDim.x - 1 - threadIdx.x] + fixed[(threadIdx.x + 1) % 128];
}
}  // namespace ns

struct Params {
  float a;
  int n;
};

__global__ void saxpy(float* y, const float* x, Params p) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < p.n) y[i] = p.a * x[i] + y[i];
}
