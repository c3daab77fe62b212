// Barrier intrinsics directly in the loop; an inner loop's barrier blocks the outer loop too.
#include <hip/hip_runtime.h>

__global__ void direct(float* out, const float* in, int n) {
  __shared__ float tile[256];
  for (int i = 0; i < n; i += 256) {  // ~ blockers: barrier
    tile[threadIdx.x] = in[i + threadIdx.x];
    __syncthreads();
    out[i + threadIdx.x] = tile[255 - threadIdx.x];
  }
  for (int i = 0; i < 8; ++i) {  // ~ blockers: barrier
    int c = __syncthreads_count(in[i] > 0.f);
    out[i] = c;
  }
  for (int i = 0; i < 8; ++i) if (__syncthreads_and(in[i] > 0.f)) out[i] = 1;  // ~ blockers: barrier
  while (n > 0) { n -= __syncthreads_or(in[n] > 0.f); }  // ~ blockers: barrier
  do { __builtin_amdgcn_s_barrier(); } while (--n > 0);  // ~ blockers: barrier
  for (int k = 0; k < 4; ++k) {  // ~ blockers: barrier
    for (int j = 0; j < 4; ++j) {  // ~ blockers: none
      out[k * 4 + j] = in[j];
    }
    for (int j = 0; j < 4; ++j) {  // ~ blockers: barrier
      __syncthreads();
    }
  }
  // Clean: no barrier, only a function whose name merely contains "sync".
  for (int i = 0; i < 16; ++i) {  // ~ blockers: none
    out[i] = in[i] * 2.f;
    my_syncthreads_counter += 1;
  }
}
