// The language server's fixture: a helper from a header found through `include-dirs` reaches
// a barrier (the pragma'd loop is blocked, through the header), a shuffle width assumes a
// 32-lane wave (an unsafe fix), and two loops can be unrolled.
#include "helpers.cuh"

__global__ void scale(float* out, const float* in, int n) {
  #pragma unroll 4
  for (int i = 0; i < 8; ++i) {
    out[i] = in[i];
    stage(out);
  }
  for (int j = 0; j < n; ++j) {
    out[j] = in[j] * 2.0f;
  }
  float x = out[threadIdx.x];
  x += __shfl_down(x, 2, 32);
  out[threadIdx.x] = x;
}

__global__ void sum(float* out, const float* in) {
  float acc = 0.0f;
  for (int k = 0; k < 16; ++k) {
    acc += in[k];
  }
  out[0] = acc;
}
