// Shuffle widths written for 32 lanes become `warpSize`; a sub-warp width stays.
__global__ void widths(float* v) {
  float x = v[threadIdx.x];
  x += __shfl_xor(x, 1, warpSize);
  x += __shfl_down(x, 2, /* lanes */ warpSize);
  x += __shfl_up_sync(0xffffffffffffffffULL, x, 1, warpSize);
  x += __shfl_xor(x, 4, 16);
  v[threadIdx.x] = x;
}
