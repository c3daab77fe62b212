// Kernels for the code-object tests (built with Debian's hipcc for gfx90a and gfx940, as a
// bundle, a multi-target bundle and a host executable): templates, extern "C", a namespace,
// static and dynamic LDS, launch bounds, by-value structs, and one kernel that spills.
#include <hip/hip_runtime.h>

struct Params {
  float scale;
  int offset;
  double bias;
};

template <int N>
__global__ void scale(float* __restrict__ a, const float* __restrict__ b, int n, float s) {
  __shared__ float tile[256];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  tile[threadIdx.x % 256] = b[i % n];
  __syncthreads();
  if (i < n) a[i] = tile[(threadIdx.x + N) % 256] * s;
}
template __global__ void scale<4>(float*, const float*, int, float);
template __global__ void scale<8>(float*, const float*, int, float);

extern "C" __global__ void __launch_bounds__(256) plain(double* x, long n, Params p) {
  long i = blockIdx.x * 256 + threadIdx.x;
  if (i < n) x[i] = x[i] * p.scale + p.bias + p.offset;
}

namespace ns {
__global__ void dyn_lds(const int* in, int* out) {
  extern __shared__ int buf[];
  buf[threadIdx.x] = in[threadIdx.x];
  __syncthreads();
  out[threadIdx.x] = buf[blockDim.x - 1 - threadIdx.x];
}
}  // namespace ns

// Keeps 320 floats live across a data-dependent loop: more than any VGPR budget, so it spills.
__global__ void spiller(const float* __restrict__ in, float* __restrict__ out, int iters) {
  float r[320];
#pragma unroll
  for (int k = 0; k < 320; ++k) r[k] = in[threadIdx.x * 320 + k];
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int k = 0; k < 320; ++k) r[k] = r[k] * r[(k + 1) % 320] + 1.0f;
  }
  float s = 0.0f;
#pragma unroll
  for (int k = 0; k < 320; ++k) s += r[k];
  out[threadIdx.x] = s;
}

int main() { return 0; }
