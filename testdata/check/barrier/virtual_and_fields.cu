// A method called through a pointer or reference to a base class may run a derived class's
// override (`virtual`): the overriders count. A data member of another object that holds a
// callable (`p.op(x)` for `struct Params { SyncOp op; }`) runs its type's `operator()`.
#include <hip/hip_runtime.h>

struct Stage {
  __device__ virtual float run(float x) { return x; }
};
struct SyncStage : Stage {
  __device__ float run(float x) override { __syncthreads(); return x; }
};
struct Scale {
  __device__ float scale(float x) const { return 2.f * x; }
};
struct Scale2 : Scale {};

struct SyncOp {
  __device__ float operator()(float a) const { __syncthreads(); return a; }
};
struct Twice {
  __device__ float operator()(float a) const { return 2.f * a; }
};
struct Params {
  SyncOp op;
  Twice twice;
};

__global__ void dispatch(Stage* stage, Params p, float* out, int n) {
  float v = out[0];
  for (int i = 0; i < n; ++i) v = stage->run(v);  // ~ blockers: barrier
  Scale2 s;
  for (int i = 0; i < n; ++i) v = s.scale(v);  // ~ blockers: none
  for (int i = 0; i < n; ++i) v = p.op(v);  // ~ blockers: barrier
  for (int i = 0; i < n; ++i) v = p.twice(v);  // ~ blockers: none
  out[0] = v;
}
