// Members a class body takes from a header it includes (`struct sync { #include "..." };`),
// called through the class or an alias of its specialisation (`warpgroup::sync::arrive`).
// The header's parse names them as free functions; the unit knows where the header is
// included, so they are the class's members: a call through the class reaches the header's
// function of that name, not another namespace's (`other::relax` synchronises, the group's
// `relax` does not), and a call inside the header reaches the class's members first
// (`gather` calls `sync::all`, a barrier, not `other::all`).
#include "headers/group_ops.cuh"

namespace other {
__device__ void relax(float* bar) { __syncthreads(); }
__device__ void all() {}
}  // namespace other

__global__ void k(float* bar, float* a, int n) {
  for (int i = 0; i < n; ++i) { lib::warpgroup::sync::arrive(bar); a[i] = 0.f; }  // ~ blockers: barrier
  for (int i = 0; i < n; ++i) { lib::group<2>::sync::arrive(bar); a[i] = 0.f; }  // ~ blockers: barrier
  for (int i = 0; i < n; ++i) { lib::warpgroup::sync::relax(bar); a[i] = 0.f; }  // ~ blockers: none
  for (int i = 0; i < n; ++i) { lib::warpgroup::sync::gather(bar); a[i] = 0.f; }  // ~ blockers: barrier
  for (int i = 0; i < n; ++i) { other::relax(bar); a[i] = 0.f; }  // ~ blockers: barrier
  for (int i = 0; i < n; ++i) { a[i] = 0.f; }  // ~ blockers: none
}
