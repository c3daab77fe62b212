// A warp size chosen per platform is fine; a bare 32 is not.
#ifdef __HIP_PLATFORM_AMD__
#define WARP_SZ 64
#else
#define WARP_SZ 32
#endif
#define LANES_PER_WARP 32  // ~ diag: wave-size

__global__ void uses(float* out) {
  for (int i = 0; i < WARP_SZ; ++i) out[i] = LANES_PER_WARP;  // ~ blockers: none
}
