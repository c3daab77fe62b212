// No GPU keyword of its own: its functions are device functions only through DINLINE, which
// defs.cuh defines. A unit that includes defs.cuh first sees them; the header alone does not.
#pragma once
#include "defs.cuh"
#include "reduce.cuh"

DINLINE float sq(float x) { return x * x; }

DINLINE void square_all(float* a, int n) {
  for (int i = 0; i < n; ++i) a[i] = sq(a[i]);
}

HDINLINE int clamp_index(int i, int n) { return i < 0 ? 0 : (i >= n ? n - 1 : i); }

DINLINE float dot(const float* a, const float* b, int n) {
  float s = 0.f;
  for (int i = 0; i < n; ++i) s += a[i] * b[i];
  return s;
}
