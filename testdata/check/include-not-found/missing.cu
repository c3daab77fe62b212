// An include that is not found is named once per file (on the first such `#include` line),
// whatever the number of loops; calls whose body is nowhere visible are listed per loop.
#include <hip/hip_runtime.h>
#include "not_here.cuh"
// ~^ diag: include-not-found
#include "../tu/headers/helpers2.cuh"
#include "also_missing.h"

__device__ float known_helper(float v) { return v + external_fn(v); }

__global__ void k(float* a, int n) {
  for (int i = 0; i < n; i++) a[i] = MISSING_MACRO(a[i]);  // ~ blockers: none
  // ~^ unresolved: MISSING_MACRO
  for (int i = 0; i < n; i++) a[i] = expf(a[i]) + twice(a[i]);  // ~ blockers: none
  for (int i = 0; i < n; i++) a[i] = known_helper(a[i]);  // ~ blockers: none
  // ~^ unresolved: external_fn
  for (int i = 0; i < n; i++) {  // ~ blockers: none
    // ~^ unresolved: ext_a, ext_b
    for (int j = 0; j < n; j++) a[j] += ext_a(a[i]);  // ~ blockers: none
    // ~^ unresolved: ext_a
    a[i] = ext_b(a[i]);
  }
}
