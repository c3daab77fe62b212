// A functor whose `operator()` synchronises or counts, declared in this file or a header, called
// through a variable of its type, one initialised from it, a parameter, or passed on.
#include "headers/functors.cuh"

struct LocalSync {
  __device__ void operator()(float* s) const { __syncthreads(); }
};

struct Scale {
  float k;
  __device__ float operator()(float v) const { return v * k; }
};

template <class F>
__device__ void apply(F f, float* s) { f(s); }

__global__ void functors(float* a, float* s, int* c, int n) {
  LocalSync ls;
  HeaderSync hs;
  auto made = HeaderSync();
  Counter counter{c};
  Scale scale{2.0f};
  for (int i = 0; i < n; i++) { a[i] += 1; ls(s); }  // ~ blockers: barrier
  for (int i = 0; i < n; i++) { a[i] += 1; hs(s); }  // ~ blockers: barrier
  for (int i = 0; i < n; i++) { a[i] += 1; made(s); }  // ~ blockers: barrier
  for (int i = 0; i < n; i++) { a[i] += 1; counter(); }  // ~ blockers: atomic
  for (int i = 0; i < n; i++) { a[i] += 1; apply(hs, s); }  // ~ blockers: barrier
  for (int i = 0; i < n; i++) a[i] = scale(a[i]);  // ~ blockers: none
}

__device__ void run_param(HeaderSync op, float* a, float* s, int n) {
  for (int i = 0; i < n; i++) { a[i] += 1; op(s); }  // ~ blockers: barrier
}
