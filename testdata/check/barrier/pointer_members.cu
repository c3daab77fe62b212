// Calls through a function pointer held by a data member (`ops.apply(x)`, `p->step(x)`): the
// pointer may hold any function the unit names as a value (here `sync_fn` and `plain_fn`,
// named in initialisers and assignments), so such a call reaches all of them. A method of the
// same name on a class that has it is that method; a method call on an unknown type whose name
// is no data member of any class stays an unresolved call. A pointer parameter called by a
// one-letter name (`f(x)`, not a template parameter's cast `T(0)`) is a pointer call as well.
#include <hip/hip_runtime.h>

typedef float (*op_t)(float);
__device__ float sync_fn(float x) { __syncthreads(); return x; }
__device__ float plain_fn(float x) { return x + 1.f; }

struct Ops {
  op_t apply;
  float (*step)(float);
};
__constant__ Ops c_ops = {sync_fn, plain_fn};

struct Calc {
  __device__ float apply(float x) const { return 2.f * x; }
};

template <class Lib>
__device__ float external(Lib& lib, float v) {
  for (int i = 0; i < 4; ++i) v = lib.compute(v);  // ~ blockers: none
  // ~^ unresolved: lib.compute
  return v;
}

__global__ void k(float* a, const Ops* p, Ops o) {
  for (int i = 0; i < 4; ++i) a[i] = c_ops.apply(a[i]);  // ~ blockers: barrier
  for (int i = 0; i < 4; ++i) a[i] = p->step(a[i]);  // ~ blockers: barrier
  for (int i = 0; i < 4; ++i) a[i] = o.apply(a[i]);  // ~ blockers: barrier
  Calc c;
  for (int i = 0; i < 4; ++i) a[i] = c.apply(a[i]);  // ~ blockers: none
}

__global__ void by_parameter(float* a, op_t f, op_t fn) {
  for (int i = 0; i < 4; ++i) a[i] = f(a[i]);  // ~ blockers: barrier
  for (int i = 0; i < 4; ++i) a[i] = fn(a[i]);  // ~ blockers: barrier
}
