// Inline suppressions: allow(rule) on the line of the finding or the line before; allow-file.
// hip-unroll: allow-file(atomic)

__global__ void suppressed(float* s, int* c, int n) {
  // hip-unroll: allow(barrier)
  for (int i = 0; i < n; ++i) __syncthreads();  // ~ blockers: none
  /* hip-unroll: allow(early-exit) */ for (int i = 0; i < n; ++i) {  // ~ blockers: none
    if (c[i]) break;
  }
  for (int i = 0; i < n; ++i) atomicAdd(&c[0], 1);  // ~ blockers: none
  // hip-unroll: allow(unroll-blocked)
  #pragma unroll 4
  for (int i = 0; i < n; ++i) __syncthreads();  // ~ blockers: barrier
  for (int i = 0; i < n; ++i) {  // ~ blockers: none
    __syncthreads();  // hip-unroll: allow(barrier)
  }
  int lane = threadIdx.x % 32;  // hip-unroll: allow(wave-size)
  int lane2 = threadIdx.x % 32;  // ~ diag: wave-size
  const char* s2 = "hip-unroll: allow(barrier)";
  for (int i = 0; i < n; ++i) __syncthreads();  // ~ blockers: barrier
  s[0] = lane + lane2 + s2[0];
}
