// A pragma macro before a loop (`_Pragma` in a `#define`, an undefined `CUTLASS_PRAGMA_UNROLL`,
// `__pragma(unroll)`) never swallows the loop: the loop is reported and guarded, and the macro
// is its pragma.
#define UNROLL_8 _Pragma("unroll 8")
#define NO_UNROLL _Pragma("nounroll")

__global__ void pragma_macros(float* a, float* s, int n) {
  UNROLL_8
  // ~^ diag: unroll-blocked
  for (int i = 0; i < n; ++i) {  // ~ blockers: barrier
    // ~^ pragma: unroll 8
    s[i] = a[i];
    __syncthreads();
  }
  CUTLASS_PRAGMA_UNROLL
  for (int i = 0; i < 8; ++i) a[i] *= 2.f;  // ~ blockers: none
  // ~^ pragma: unroll
  __pragma(unroll)
  // ~^ diag: unroll-blocked
  for (int i = 0; i < n; ++i) {  // ~ blockers: barrier
    // ~^ pragma: unroll
    s[i] = 0.f;
    __syncthreads();
  }
  NO_UNROLL
  for (int i = 0; i < n; ++i) a[i] += 1.f;  // ~ blockers: none
  // ~^ pragma: nounroll
  CUTLASS_PRAGMA_NO_UNROLL
  for (int i = 0; i < n; ++i) a[i] += 2.f;  // ~ blockers: none
  // ~^ pragma: nounroll
  for (int i = 0; i < n; ++i) a[i] += 3.f;  // ~ blockers: none
  // ~^ pragma: none
}
