#include "broken.hpp"
#include "reduce.cuh"
#include "missing_on_purpose.h"

KERNEL_BOUNDS(256) __global__ void k_mix(float* a, float* out, const float* b, int n) {
  for (int i = 0; i < n; ++i) accumulate(out, a, n);
  for (int i = 0; i < n; ++i) a[i] = dot(a, b, n);
  for (int t = 0; t < 4; ++t) scale_tile(a + t * TILE, 2.f);
}
