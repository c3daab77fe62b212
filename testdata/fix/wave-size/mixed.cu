// Several fixes in one call, a suppressed line left alone, and findings without a fix.
#define WARP_SIZE 32

__global__ void mixed(float* v) {
  float x = v[threadIdx.x];
  x += __shfl_xor_sync(0xffffffff, x, 1, 32);
  x += __shfl_xor(x, 2, 32);  // hip-unroll: allow(wave-size)
  if (__ballot(x > 0.f) == 0xffffffff) x = 0.f;
  int lane = threadIdx.x % 32; int warp = threadIdx.x / 32;
  v[threadIdx.x] = x + lane + warp + WARP_SIZE;
}
