// Templates of this file that only an included header calls: what the header's calls bind
// (lambdas that synchronise or count, directly or through a template of the header) is what
// their loops call. (`check` resolves only what this file's verdicts can depend on: the
// header's callers of its templates must be among it.)
template <class F>
__device__ void each(F f, int n);
template <class F>
__device__ void each_pure(F f, int n);

#include "headers/template_callers.cuh"

template <class F>
__device__ void each(F f, int n) {
  for (int i = 0; i < n; i++) f(i);  // ~ blockers: barrier, atomic
}

template <class F>
__device__ void each_pure(F f, int n) {
  for (int i = 0; i < n; i++) f(i);  // ~ blockers: none
}

__global__ void plain(float* a, int n) {
  for (int i = 0; i < n; i++) a[i] += 1.0f;  // ~ blockers: none
}
