// Parse errors unless a unit's specifier macros are known: every line below uses one.
#pragma once
#include "defs.cuh"
#include "tiles.h"

DINLINE float lerp(float a, float b, float t) { return a + t * (b - a); }
DINLINE float smooth(float x) { return x * x * (3.f - 2.f * x); }
KERNEL_BOUNDS(128) DINLINE void blend(float* a, const float* b, int n, float t) {
  for (int i = 0; i < n; ++i) a[i] = lerp(a[i], b[i], t);
}
DINLINE void smooth_all(float* a, int n) {
  for (int i = 0; i < n; i += 2) { a[i] = smooth(a[i]); a[i + 1] = smooth(a[i + 1]); }
}
