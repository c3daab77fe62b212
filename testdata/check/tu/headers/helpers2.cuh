// The headers of issue 17's reproductions: macros and helpers a kernel file includes.
#ifndef HELPERS2_CUH
#define HELPERS2_CUH
#include "sub/deep.cuh"
#include <hip/hip_runtime.h>

#define SKIP_IF(c) if (c) continue
#define BAIL_OUT break
#define AT(k) a[i + (k)]
#define BLOCK_SYNC() __syncthreads()
#define SYNC_TWICE() do { BLOCK_SYNC(); BLOCK_SYNC(); } while (0)
#define BUMP(p) atomicAdd((p), 1.0f)
#define LEAVE_IF(c) if (c) return

__device__ inline float block_reduce(float v, float* scratch) {
  scratch[threadIdx.x] = v;
  __syncthreads();
  return scratch[0];
}

__device__ inline void add_to(float* p, float v) { atomicAdd(p, v); }

__device__ inline float twice(float v) { return v * 2.0f; }

// Reaches a barrier through a helper of another header.
__device__ inline float reduce_via_deep(float v, float* s) { return deep_reduce(v, s); }

#endif
