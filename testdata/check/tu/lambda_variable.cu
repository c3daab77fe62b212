// Lambdas stored in variables: called in the loop, or passed to a helper that calls them.
#include "headers/helpers2.cuh"

template <class F>
__device__ void call_it(F f) { f(); }

__global__ void lambdas(float* a, float* s, int* c, int n) {
  auto sync_step = [&]() { __syncthreads(); };
  auto header_step = [&]() { s[0] = block_reduce(s[0], s); };
  auto macro_step = [&]() { BLOCK_SYNC(); };
  auto count_step = [&]() { deep_count(c); };
  auto plain_step = [&](int j) { a[j] = twice(a[j]); };
  for (int i = 0; i < n; i++) { a[i] += 1; sync_step(); }  // ~ blockers: barrier
  for (int i = 0; i < n; i++) { a[i] += 1; header_step(); }  // ~ blockers: barrier
  for (int i = 0; i < n; i++) { a[i] += 1; macro_step(); }  // ~ blockers: barrier
  for (int i = 0; i < n; i++) { a[i] += 1; count_step(); }  // ~ blockers: atomic
  for (int i = 0; i < n; i++) { a[i] += 1; call_it(sync_step); }  // ~ blockers: barrier
  for (int i = 0; i < n; i++) plain_step(i);  // ~ blockers: none
  for (int i = 0; i < n; i++) call_it(plain_step);  // ~ blockers: none
}
