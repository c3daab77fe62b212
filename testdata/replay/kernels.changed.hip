// "Variants" replay must refuse before running anything: saxpy keeps its mangled name but its
// Params struct grew (so the kernarg layout changed); scale's parameters changed, so its
// mangled name did too and the captured kernel is simply absent.
#include <hip/hip_runtime.h>

struct Params {
  double a;
  int n;
  int stride;
};

__global__ void saxpy(float* y, const float* x, Params p) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < p.n) y[i] = p.a * x[(i * p.stride) % p.n] + y[i];
}

__global__ void scale(float* out, const float* in, float s, int n, int stride) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  out[i] = in[(i * stride) % n] * s;
}
