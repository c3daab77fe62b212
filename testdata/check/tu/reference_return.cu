// Helpers that return references (`T&`, `auto&`, `T&&`, trailing return types), in this file
// and in a header whose specifier macro (`DINLINE`) comes from a third header.
#include "headers/refs.cuh"

__device__ float& sync_get(float* a, int i) { __syncthreads(); return a[i]; }
__device__ auto& sync_auto(float* a) { __syncthreads(); return a[0]; }
__device__ float&& sync_rref(float* a) { __syncthreads(); return static_cast<float&&>(a[0]); }
__device__ auto sync_trailing(float* a) -> float& { __syncthreads(); return a[0]; }
DINLINE float& dinline_sync(float* a) { __syncthreads(); return a[0]; }
__device__ const float& plain_ref(const float* a, int i) { return a[i]; }

__global__ void refs(float* a, float* s, int* c, int n) {
  for (int i = 0; i < n; i++) sync_get(a, i) += 1.0f;  // ~ blockers: barrier
  for (int i = 0; i < n; i++) sync_auto(a) += 1.0f;  // ~ blockers: barrier
  for (int i = 0; i < n; i++) a[i] = sync_rref(a);  // ~ blockers: barrier
  for (int i = 0; i < n; i++) sync_trailing(a) += 1.0f;  // ~ blockers: barrier
  for (int i = 0; i < n; i++) dinline_sync(a) += 1.0f;  // ~ blockers: barrier
  for (int i = 0; i < n; i++) header_sync_ref(s, i) += 1.0f;  // ~ blockers: barrier
  for (int i = 0; i < n; i++) header_count_ref(c) += 1;  // ~ blockers: atomic
  for (int i = 0; i < n; i++) a[i] = plain_ref(a, i) + header_plain_ref(s, i);  // ~ blockers: none
}
