// A plain header: tile loops under macro qualifiers, and a host helper.
#pragma once
#include "defs.cuh"
#include "math.cuh"

template <int N>
DINLINE void copy_tile(float* dst, const float* src) {
#pragma unroll
  for (int i = 0; i < N; ++i) dst[i] = src[i];
}

DINLINE void scale_tile(float* t, float f) {
  for (int i = 0; i < TILE; ++i) t[i] = t[i] * f;
}

inline int tiles_for(int n) { int t = 0; for (int i = 0; i < n; i += TILE) ++t; return t; }
