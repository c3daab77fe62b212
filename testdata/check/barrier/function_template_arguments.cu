// A function passed as a non-type template argument (`run<step>()`, `run<&step>()`) is what the
// template's call of its parameter (`F()`) reaches: the loop that runs the syncing step is
// blocked, the one that runs a step that only computes is not. A lambda or functor passed as an
// argument is covered by template_lambdas.cu and functors.cu.
#include <hip/hip_runtime.h>

__device__ void sync_step() { __syncthreads(); }
__device__ void local_step() {}

template <void (*F)()>
__device__ void run() {
  F();
}

template <void (*F)()>
__device__ void repeat(int n) {
  for (int i = 0; i < n; ++i) F();  // ~ blockers: barrier
}

__global__ void non_type_arguments(float* a, int n) {
  for (int i = 0; i < n; ++i) { a[i] += 1.f; run<sync_step>(); }  // ~ blockers: barrier
  for (int i = 0; i < n; ++i) { a[i] += 1.f; run<&sync_step>(); }  // ~ blockers: barrier
  for (int i = 0; i < n; ++i) { a[i] += 1.f; run<local_step>(); }  // ~ blockers: none
  repeat<sync_step>(n);
}
