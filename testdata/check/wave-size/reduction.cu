// Warp reductions whose offsets assume 32 lanes; the loops themselves are unrollable.
__device__ float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset /= 2)  // ~ diag: wave-size
    v += __shfl_down(v, offset);
  // ~^^ blockers: none
  return v;
}

__device__ float warp_sum_up(float v) {
  for (int m = 1; m < 32; m *= 2) v += __shfl_xor(v, m);  // ~ blockers: none
  // ~^ diag: wave-size
  return v;
}

__device__ float good_sum(float v) {
  for (int offset = warpSize / 2; offset > 0; offset /= 2) v += __shfl_down(v, offset);  // ~ blockers: none
  return v;
}

__device__ float not_a_reduction(float* a) {
  float s = 0.f;
  for (int i = 16; i > 0; --i) s += a[i];  // ~ blockers: none
  return s;
}
