// An unroll pragma (bare or N > 1) on a blocked loop is reported; nounroll / unroll 1 are not,
// nor an early exit alone (the compiler unrolls exits exactly; see early_exit.cu).
#define FACTOR 4
__global__ void pragmas(float* s, int* c, int n) {
  #pragma unroll
  // ~^ diag: unroll-blocked
  for (int i = 0; i < 8; ++i) { s[i] = 0.f; __syncthreads(); }  // ~ blockers: barrier
#pragma unroll 4
// ~^ diag: unroll-blocked
  for (int i = 0; i < n; ++i) atomicAdd(&c[0], 1);  // ~ blockers: atomic
  #pragma unroll(8)
  // ~^ diag: unroll-blocked
  for (int i = 0; i < n; ++i) { if (c[i]) break; __syncthreads(); }  // ~ blockers: barrier, early-exit
  #pragma unroll FACTOR
  for (int i = 0; i < n; ++i) { if (c[i]) return; }  // ~ blockers: early-exit
  _Pragma("unroll")
  // ~^ diag: unroll-blocked
  for (int i = 0; i < n; ++i) __syncthreads();  // ~ blockers: barrier
  #pragma unroll 1
  for (int i = 0; i < n; ++i) __syncthreads();  // ~ blockers: barrier
  #pragma nounroll
  for (int i = 0; i < n; ++i) __syncthreads();  // ~ blockers: barrier
  #pragma unroll 4
  for (int i = 0; i < 16; ++i) s[i] *= 2.f;  // ~ blockers: none
}
