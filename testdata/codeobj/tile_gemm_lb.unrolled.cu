// Variant for the vgpr-pressure guard test: tile_gemm_lb.cu with the k loop unrolled by 16;
// no spills, but more VGPRs and so fewer waves per SIMD.
#include <hip/hip_runtime.h>

__global__ void __launch_bounds__(256) tile_gemm(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int n, int K) {
  int row = (blockIdx.y * blockDim.y + threadIdx.y) * 8;
  int col = (blockIdx.x * blockDim.x + threadIdx.x) * 8;
  float acc[8][8] = {};
#pragma unroll 16
  for (int k = 0; k < K; ++k) {
    float a[8], b[8];
#pragma unroll
    for (int i = 0; i < 8; ++i) a[i] = A[(row + i) * K + k];
#pragma unroll
    for (int j = 0; j < 8; ++j) b[j] = B[k * n + col + j];
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
      for (int j = 0; j < 8; ++j) acc[i][j] += a[i] * b[j];
  }
#pragma unroll
  for (int i = 0; i < 8; ++i)
#pragma unroll
    for (int j = 0; j < 8; ++j) C[(row + i) * n + col + j] = acc[i][j];
}
