// Loops inside a template that call what a template parameter holds (`op(v, x)` on `Op op`):
// the parameter is what the template's calls in this file bind it to. A functor bound by every
// call that only computes does not block, though another functor of the file syncs. Where a
// call binds nothing visible, where the template is named as a value or is a kernel, the
// parameter is still anything: every `operator()` of the unit, by name. (Lambdas:
// template_lambdas.cu.)
#include <hip/hip_runtime.h>

struct Sum {
  __device__ float operator()(float a, float b) const { return a + b; }
};
struct SyncSum {
  __device__ float operator()(float a, float b) const { __syncthreads(); return a + b; }
};

// Called with `Sum` only: the unit's syncing functor is not what `op` is.
template <class Op>
__device__ float warp_reduce(float v, Op op) {
  for (int o = 32; o > 0; o >>= 1) v = op(v, __shfl_xor(v, o));  // ~ blockers: none
  return v;
}

// Called with a syncing functor by one call and a plain one by another: blocked.
template <class Op>
__device__ float fold(const float* a, Op op) {
  float v = 0.f;
  for (int i = 0; i < 4; ++i) v = op(v, a[i]);  // ~ blockers: barrier
  return v;
}

// Called with an argument whose type nothing shows: every `operator()` by name.
template <class Op>
__device__ float unknown_op(float v, Op op) {
  for (int i = 0; i < 4; ++i) v = op(v, 1.f);  // ~ blockers: barrier
  return v;
}

// Named as a value as well as called: a pointer to it may be called with anything.
template <class Op>
__device__ float escapes(float v, Op op) {
  for (int i = 0; i < 4; ++i) v = op(v, 1.f);  // ~ blockers: barrier
  return v;
}

// Static members of the parameter (`Op::apply`), reached through another template that
// forwards its own parameter (`relay<Op>` calls `apply_all<Op>`): what the outermost calls bind.
struct SumStatic {
  __device__ static float apply(float v) { return v + 1.f; }
};
struct SyncStatic {
  __device__ static float apply(float v) { __syncthreads(); return v; }
};
template <class Op>
__device__ float apply_all(float v) {
  for (int i = 0; i < 4; ++i) v = Op::apply(v);  // ~ blockers: none
  return v;
}
template <class Op>
__device__ float relay(float v) { return apply_all<Op>(v); }
template <class Op>
__device__ float apply_all_sync(float v) {
  for (int i = 0; i < 4; ++i) v = Op::apply(v);  // ~ blockers: barrier
  return v;
}
template <class Op>
__device__ float relay_sync(float v) { return apply_all_sync<Op>(v); }

// Called with `Sum` only, but explicitly instantiated with the syncing functor too.
template <class Op>
__device__ float instantiated(float v, Op op) {
  for (int i = 0; i < 4; ++i) v = op(v, 1.f);  // ~ blockers: barrier
  return v;
}
template __device__ float instantiated<SyncSum>(float, SyncSum);

// A template kernel: launches elsewhere may bind `Op` to anything.
template <class Op>
__global__ void reduce_kernel(float* a, Op op) {
  float v = 0.f;
  for (int i = 0; i < 4; ++i) v = op(v, a[i]);  // ~ blockers: barrier
  a[0] = v;
}

// A data member holding a functor, called as `op(x)` or `this->op(x)`: its type's
// `operator()`, with the class template's parameter bound by the object's type.
template <class Op>
struct Folder {
  Op op;
  __device__ float run(const float* a) {
    float v = 0.f;
    for (int i = 0; i < 4; ++i) v = op(v, a[i]);  // ~ blockers: none
    return v;
  }
};
template <class Op>
struct SyncFolder {
  Op op;
  __device__ float run(const float* a) {
    float v = 0.f;
    for (int i = 0; i < 4; ++i) v = this->op(v, a[i]);  // ~ blockers: barrier
    return v;
  }
};
struct Plain {
  SyncSum op;
  __device__ float run(const float* a) {
    float v = 0.f;
    for (int i = 0; i < 4; ++i) v = op(v, a[i]);  // ~ blockers: barrier
    return v;
  }
};

__global__ void members(float* a) {
  Folder<Sum> f;
  SyncFolder<SyncSum> g;
  Plain p;
  a[0] = f.run(a) + g.run(a) + p.run(a);
}

__global__ void uses(float* a, float* out) {
  out[0] = warp_reduce(a[threadIdx.x], Sum{});
  Sum s;
  out[1] = warp_reduce(a[1], s);
  out[2] = fold(a, Sum{});
  out[3] = fold(a, SyncSum{});
  out[4] = unknown_op(a[0], *reinterpret_cast<Sum*>(out));
  out[6] = instantiated(a[0], Sum{});
  out[7] = relay<SumStatic>(a[0]) + relay_sync<SyncStatic>(a[1]) + relay_sync<SumStatic>(a[2]);
  auto fp = &escapes<Sum>;
  out[5] = escapes(a[0], Sum{}) + fp(a[1], Sum{});
  for (int i = 0; i < 4; ++i) out[i] = warp_reduce(out[i], s);  // ~ blockers: none
  for (int i = 0; i < 4; ++i) out[i] = fold(a, SyncSum{});  // ~ blockers: barrier
}
