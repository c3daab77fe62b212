// File-scope objects (`__device__ SyncOp g_op;`): a call of one is its class's `operator()`,
// a method call on one is resolved by its declared type, as for locals. A local or parameter
// of the same name hides it (its type unknown here: every candidate), and so do a data member
// and a method of the caller's class. Last, a data member called on an object of unknown type.
#include <hip/hip_runtime.h>

struct SyncOp {
  __device__ float operator()(float x) const { __syncthreads(); return x; }
};
struct PlainOp {
  __device__ float operator()(float x) const { return x + 1.f; }
};
struct BlockRed {
  __device__ float reduce(float x) { __syncthreads(); return x; }
};
struct WarpRed {
  __device__ float reduce(float x) { return x + __shfl_xor(x, 1); }
};

__device__ SyncOp g_op;
__device__ PlainOp g_plain;
__device__ BlockRed g_block;
__device__ WarpRed g_warp;
namespace ns {
__device__ SyncOp n_op;
}
namespace other {
__device__ PlainOp twin;
}
namespace mine {
__device__ float twin(float x) { __syncthreads(); return x; }
__device__ float use_twin(float v) {
  for (int i = 0; i < 4; ++i) v = twin(v);  // ~ blockers: barrier
  return v;
}
}

struct Holder {
  PlainOp g_op;  // hides ::g_op in Holder's members
  __device__ float run(float v) {
    for (int i = 0; i < 4; ++i) v = g_op(v);  // ~ blockers: none
    return v;
  }
};

struct Stepper {
  __device__ float g_plain(float x) { __syncthreads(); return x; }  // hides ::g_plain
  __device__ float run(float v) {
    for (int i = 0; i < 4; ++i) v = g_plain(v);  // ~ blockers: barrier
    return v;
  }
};

template <class R>
__device__ float shadowed(R g_warp, float v) {
  for (int i = 0; i < 4; ++i) v = g_warp.reduce(v);  // ~ blockers: barrier
  return v;
}

__global__ void k(float* a) {
  for (int i = 0; i < 4; ++i) a[i] = g_op(a[i]);  // ~ blockers: barrier
  for (int i = 0; i < 4; ++i) a[i] = g_plain(a[i]);  // ~ blockers: none
  for (int i = 0; i < 4; ++i) a[i] = g_block.reduce(a[i]);  // ~ blockers: barrier
  for (int i = 0; i < 4; ++i) a[i] = g_warp.reduce(a[i]);  // ~ blockers: none
  for (int i = 0; i < 4; ++i) a[i] = ns::n_op(a[i]);  // ~ blockers: barrier
  auto f = [&](float x) { return g_op(x); };
  for (int i = 0; i < 4; ++i) a[i] = f(a[i]);  // ~ blockers: barrier
}

// A functor held by a data member of an object whose type this file does not bind (a kernel
// template launched by the host with `Params<SyncFunctor>`): any functor, by name.
struct SyncFunctor {
  __device__ float operator()(float x) const { __syncthreads(); return x; }
};
template <typename Op>
struct Params {
  Op op;
  float* data;
};
template <class P>
__global__ void with_params(P p) {
  for (int i = 0; i < 4; ++i) p.data[i] = p.op(p.data[i]);  // ~ blockers: barrier
}
void launch(float* d) {
  Params<SyncFunctor> p{SyncFunctor{}, d};
  with_params<<<1, 4>>>(p);
}
