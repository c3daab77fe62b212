// A lambda that touches dynamic shared memory (captured by reference from its kernel), passed
// to a template whose loop calls it: the template's loop touches it too. One that touches
// only static shared memory does not block.
#include <hip/hip_runtime.h>

template <class F>
__device__ void each_dynamic(F f) {
  for (int i = 0; i < 4; ++i) f(i);  // ~ blockers: dynamic-lds
}

template <class F>
__device__ void each_static(F f) {
  for (int i = 0; i < 4; ++i) f(i);  // ~ blockers: none
}

__global__ void tiles(float* out) {
  extern __shared__ float dyn[];
  __shared__ float tile[64];
  each_dynamic([&](int i) { dyn[threadIdx.x + i] = out[i]; });
  each_static([&](int i) { tile[threadIdx.x % 64] = out[i]; });
  out[threadIdx.x] = tile[threadIdx.x % 64];
}
