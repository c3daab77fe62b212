// Function pointers and references to known helpers (of this file and of a header): stored,
// assigned, and passed as arguments.
#include "headers/helpers2.cuh"

__device__ void local_sync(float* s) { __syncthreads(); }
__device__ void local_plain(float* s) { s[0] += 1.0f; }

__device__ void apply(void (*f)(float*), float* s) { f(s); }
// The same with a longer name: a call of a pointer parameter reaches what the call passes.
__device__ void apply_named(void (*step)(float*), float* s) { step(s); }

__global__ void pointers(float* a, float* s, int* c, int n) {
  void (*fp)(float*) = local_sync;
  auto fq = &local_sync;
  void (&fr)(float*) = local_sync;
  float (*hp)(float, float*) = block_reduce;
  void (*count)(int*) = deep_count;
  void (*later)(float*);
  later = local_sync;
  for (int i = 0; i < n; i++) { a[i] += 1; fp(s); }  // ~ blockers: barrier
  for (int i = 0; i < n; i++) { a[i] += 1; fq(s); }  // ~ blockers: barrier
  for (int i = 0; i < n; i++) { a[i] += 1; fr(s); }  // ~ blockers: barrier
  for (int i = 0; i < n; i++) a[i] = hp(a[i], s);  // ~ blockers: barrier
  for (int i = 0; i < n; i++) { a[i] += 1; count(c); }  // ~ blockers: atomic
  for (int i = 0; i < n; i++) { a[i] += 1; later(s); }  // ~ blockers: barrier
  for (int i = 0; i < n; i++) { a[i] += 1; apply(local_sync, s); }  // ~ blockers: barrier
  for (int i = 0; i < n; i++) { a[i] += 1; apply(&local_sync, s); }  // ~ blockers: barrier
}

__global__ void plain_pointer(float* a, float* s, int n) {
  void (*fp)(float*) = local_plain;
  for (int i = 0; i < n; i++) { a[i] += 1; fp(s); }  // ~ blockers: none
  for (int i = 0; i < n; i++) { a[i] += 1; apply(local_plain, s); }  // ~ blockers: none
  for (int i = 0; i < n; i++) { a[i] += 1; apply_named(local_plain, s); }  // ~ blockers: none
  for (int i = 0; i < n; i++) { a[i] += 1; apply_named(&local_sync, s); }  // ~ blockers: barrier
}

// A value a synchronising helper returned is no callable: passing it on reaches nothing.
struct Params { float offset; };
__device__ Params prepare(float* s) { __syncthreads(); return Params{s[0]}; }
__global__ void value_of_a_helper(float* a, float* s, int n) {
  Params p = prepare(s);
  auto q = prepare(s);
  for (int i = 0; i < n; i++) a[i] = expf(a[i] - p.offset) + fmaxf(q.offset, 0.0f);  // ~ blockers: none
}
