// Several fixes in one call, a suppressed line left alone, and a definition without a fix
// (used by no GPU code of the file, so it holds no fix back).
#define WARP_SIZE 32

__global__ void mixed(float* v) {
  float x = v[threadIdx.x];
  x += __shfl_xor_sync(0xffffffffffffffffULL, x, 1, warpSize);
  x += __shfl_xor(x, 2, 32);  // hip-unroll: allow(wave-size)
  int lane = threadIdx.x % warpSize; int warp = threadIdx.x / warpSize;
  v[threadIdx.x] = x + lane + warp;
}
