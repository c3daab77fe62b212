// A pragma macro before a loop (`_Pragma` in a `#define`, an undefined `CUTLASS_PRAGMA_UNROLL`,
// `__pragma(unroll)`) never swallows the loop: the loop is reported and guarded, and the macro
// is its pragma. Nor after a `case` or `default` label, a label, an `if`/`else`, or the head
// of an outer loop without braces (tiny-cuda-nn's `case ...: TCNN_PRAGMA_UNROLL for`: those
// loops were lost, a barrier loop among them).
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

__device__ void pragma_macros_after_labels(int mode, float* a, float* s, int n) {
  switch (mode) {
    case 0:
      UNROLL_8
      // ~^ diag: unroll-blocked
      for (int i = 0; i < n; ++i) {  // ~ blockers: barrier
        // ~^ pragma: unroll 8
        s[i] = a[i];
        __syncthreads();
      }
      return;
    default:
      CUTLASS_PRAGMA_UNROLL
      for (int i = 0; i < 8; ++i) a[i] *= 2.f;  // ~ blockers: none
      // ~^ pragma: unroll
  }
  if (n > 8)
    UNROLL_8
    for (int i = 0; i < n; ++i) a[i] += 1.f;  // ~ blockers: none
    // ~^ pragma: unroll 8
  else
    NO_UNROLL
    for (int i = 0; i < n; ++i) a[i] += 2.f;  // ~ blockers: none
    // ~^ pragma: nounroll
  for (int j = 0; j < 4; ++j)  // ~ blockers: none
    UNROLL_8
    for (int i = 0; i < 8; ++i) a[j * 8 + i] = 0.f;  // ~ blockers: none
    // ~^ pragma: unroll 8
again:
  NO_UNROLL
  for (int i = 0; i < n; ++i) a[i] += 3.f;  // ~ blockers: none
  // ~^ pragma: nounroll
  if (a[0] > 0.f) goto again;
}

// A pragma macro for the device compile that is empty for the host one (tiny-cuda-nn's
// `TCNN_PRAGMA_UNROLL`) is the device's pragma; a macro that expands to nothing before a loop
// is no pragma. Both swallowed their loops.
#if defined(__CUDA_ARCH__)
#define DEV_UNROLL _Pragma("unroll")
#define DEV_NO_UNROLL _Pragma("unroll 1")
#else
#define DEV_UNROLL
#define DEV_NO_UNROLL
#endif
#define NOTHING_HERE

__device__ void pragma_macros_of_two_branches(float* a, float* s, int n) {
  DEV_UNROLL
  // ~^ diag: unroll-blocked
  for (int i = 0; i < 8; ++i) {  // ~ blockers: barrier
    // ~^ pragma: unroll
    s[i] = a[i];
    __syncthreads();
  }
  DEV_NO_UNROLL
  for (int i = 0; i < n; ++i) a[i] += 1.f;  // ~ blockers: none
  // ~^ pragma: nounroll
  NOTHING_HERE
  for (int i = 0; i < n; ++i) a[i] += 2.f;  // ~ blockers: none
  // ~^ pragma: none
}
