// Shuffle widths and lane masks that assume 32 lanes.
__global__ void shuffles(float* v, unsigned long long mask64) {
  float x = v[threadIdx.x];
  x += __shfl_xor(x, 1, 32);  // ~ diag: wave-size
  x += __shfl_down_sync(0xffffffff, x, 1);  // ~ diag: wave-size
  x += __shfl_up_sync(mask64, x, 1, 32);  // ~ diag: wave-size
  unsigned b = __ballot_sync(0xFFFFFFFFu, x > 0.f);  // ~ diag: wave-size
  __syncwarp(0xffffffff);  // ~ diag: wave-size
  // Clean: default width, warpSize, 64-bit masks, a width of 16 for sub-warp tiles.
  x += __shfl_xor(x, 1);
  x += __shfl_down(x, 2, warpSize);
  x += __shfl_xor(x, 4, 16);
  x += __shfl_down_sync(mask64, x, 1);
  x += __shfl_sync(__activemask(), x, 0);
  v[threadIdx.x] = x + b;
}
