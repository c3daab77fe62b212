// Pointers to members (`(o.*pm)()`, `(p->*pm)()`) may call every method whose address the unit
// takes (`&Stage::sync_all`, here only in a file-scope initialiser). Namespace aliases resolve
// to their namespace: `B::step()` is `block_ops::step` (it syncs), `W::step()` is
// `warp_ops::step` (it only shuffles), not every `step` of the unit.
#include <hip/hip_runtime.h>

struct Stage {
  float* s;
  __device__ void sync_all() { __syncthreads(); }
  __device__ void load(int i) { s[i] = 0.f; }
};
__device__ void (Stage::*g_step)() = &Stage::sync_all;

namespace block_ops {
__device__ void step() { __syncthreads(); }
}
namespace warp_ops {
__device__ float step(float v) { return v + __shfl_xor(v, 1); }
}
namespace B = block_ops;
namespace W = ::warp_ops;

__global__ void member_pointers(float* a, int n) {
  Stage st{a};
  Stage* p = &st;
  for (int i = 0; i < n; ++i) (st.*g_step)();  // ~ blockers: barrier
  for (int i = 0; i < n; ++i) (p->*g_step)();  // ~ blockers: barrier
  for (int i = 0; i < n; ++i) st.load(i);  // ~ blockers: none
  for (int i = 0; i < n; ++i) B::step();  // ~ blockers: barrier
  float v = 0.f;
  for (int i = 0; i < n; ++i) v = W::step(v);  // ~ blockers: none
  a[0] = v;
}
