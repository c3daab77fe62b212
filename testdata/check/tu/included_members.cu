// Members a class body takes from a header it includes (`struct sync { #include "..." };`),
// called through the class or an alias of its specialisation (`warpgroup::sync::arrive`).
// The header's parse names them as free functions: a call through such a class reaches
// every function of that name.
#include "headers/group_ops.cuh"

__global__ void k(float* bar, float* a, int n) {
  for (int i = 0; i < n; ++i) { lib::warpgroup::sync::arrive(bar); a[i] = 0.f; }  // ~ blockers: barrier
  for (int i = 0; i < n; ++i) { lib::group<2>::sync::arrive(bar); a[i] = 0.f; }  // ~ blockers: barrier
  for (int i = 0; i < n; ++i) { lib::warpgroup::sync::relax(bar); a[i] = 0.f; }  // ~ blockers: none
  for (int i = 0; i < n; ++i) { a[i] = 0.f; }  // ~ blockers: none
}
