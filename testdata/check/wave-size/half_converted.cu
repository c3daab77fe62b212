// Every 32-lane assumption is reported; no fix is offered because `+ 31` (and the tile loop's
// `< 32`) would stay: converting the rest would mix wave sizes in one file.
__global__ void reduce(float* out, const float* in) {
  int warp = threadIdx.x / 32;  // ~ diag: wave-size
  int nwarps = (blockDim.x + 31) / 32;  // ~ diag: wave-size
  float v = 0.f;
  for (int k = 0; k < 32; ++k) v += in[k];  // ~ blockers: none
  out[warp] = v + nwarps;
}
