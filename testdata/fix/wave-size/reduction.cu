// Warp reductions that start at 16 or stop at 32 cover a whole 64-lane wavefront once fixed.
__device__ float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset /= 2)
    v += __shfl_down(v, offset);
  return v;
}

__device__ float warp_sum_up(float v) {
  for (int m = 1; m < 32; m *= 2) v += __shfl_xor(v, m);
  return v;
}
