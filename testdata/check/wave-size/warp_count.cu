// The number of warps of a block computed for 32-lane warps; a tile count is fine.
__global__ void counts(float* out, int width) {
  int nwarps = blockDim.x / 32;  // ~ diag: wave-size
  int nw2 = hipBlockDim_x >> 5;  // ~ diag: wave-size
  const int nthreads = blockDim.x * blockDim.y;
  int nw3 = nthreads / 32;  // ~ diag: wave-size
  // Clean: warpSize, and the same arithmetic on values that are no block size.
  int good = blockDim.x / warpSize;
  int tiles = width / 32;
  out[threadIdx.x] = nwarps + nw2 + nw3 + good + tiles;
}
