// Member functions that synchronise or count, defined in the class (here or in a header) or
// outside it, called on an object, through a pointer, on `this`, or from another member.
#include "headers/members.cuh"

struct Stage {
  float* s;
  __device__ void sync_all();
  __device__ void fill(float v) { s[threadIdx.x] = v; sync_all(); }
  __device__ void step(float v) { s[0] = v; this->sync_all(); }
  __device__ float peek() const { return s[0]; }
};
__device__ void Stage::sync_all() { __syncthreads(); }

__global__ void members(float* a, float* s, int* c, int n) {
  Stage st{s};
  Stage* p = &st;
  Tile tile{s, c};
  for (int i = 0; i < n; i++) st.fill(a[i]);  // ~ blockers: barrier
  for (int i = 0; i < n; i++) p->step(a[i]);  // ~ blockers: barrier
  for (int i = 0; i < n; i++) tile.load(a[i]);  // ~ blockers: barrier
  for (int i = 0; i < n; i++) tile.tally();  // ~ blockers: atomic
  for (int i = 0; i < n; i++) a[i] = st.peek() + tile.value();  // ~ blockers: none
}
