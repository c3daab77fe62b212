// Macros and helpers that kernels of the transform fixtures include (issue 17's reproductions
// and their harmless counterparts).
#pragma once
#define SKIP_IF(c) if (c) continue
#define BAIL_OUT break
#define AT(k) a[i + (k)]
#define TU_SCALE(x) ((x) * 0.5f)
#define TU_TILE 4
#define TU_ACC(v) acc += (v)
__device__ inline float tu_twice(float v) { return v * 2.0f; }
__device__ void tu_bump(int& v);
__device__ inline void tu_accumulate(float& acc, float v) { acc += v; }
__device__ int tu_limit;
