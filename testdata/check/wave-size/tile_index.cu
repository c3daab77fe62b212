// `si % 32` as the index of a `[..][32]` shared array wraps within the array's own extent:
// no lane is meant (HeCBench qkv). The same arithmetic into a padded `[..][33]` tile is a lane
// index as far as the rule can tell.
__global__ void tiles(float* out, const float* in, int C) {
  __shared__ float lhs_s[128][32];
  __shared__ float pad_s[32][33];
  int si_start = 4 * (16 * threadIdx.y + threadIdx.x);
  for (int si = si_start; si < si_start + 32; si += 4) {  // ~ blockers: none
    lhs_s[threadIdx.y][si % 32] = in[si];
    lhs_s[threadIdx.y][(si & 31)] += 1.0f;
    pad_s[threadIdx.y][si % 32] = in[si];  // ~ diag: wave-size
  }
  out[threadIdx.x] = lhs_s[threadIdx.y][threadIdx.x % 32] + pad_s[0][0];
}
