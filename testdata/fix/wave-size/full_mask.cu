// 32-bit full masks passed to warp intrinsics become the 64-bit full mask.
__global__ void masks(float* v, unsigned long long m) {
  float x = v[threadIdx.x];
  x += __shfl_down_sync(0xffffffff, x, 1);
  unsigned long long b = __ballot_sync(0xFFFFFFFFu, x > 0.f);
  __syncwarp(0xffffffff);
  x += __shfl_sync(m, x, 0);
  v[threadIdx.x] = x + (float)b;
}
