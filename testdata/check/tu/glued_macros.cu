// A statement macro written without `;` before a call of a global name (`SYNC_ALL` then
// `::ns::f(a);`, like ThunderKittens' `KITTENS_CHECK_WARP` then `::kittens::group<1>::copy(..)`)
// reads to the grammar as the call's first qualifier (`SYNC_ALL::ns::f`). The macro is used
// there (a barrier in it counts), and the call is a call of the global name (`::ns::g`
// synchronises: it counts too, and nothing is unresolved). Macros of this file and of a header.
#include "headers/statement_checks.cuh"
#define SYNC_ALL __syncthreads();
#define CHECK_ONLY static_assert(sizeof(float) == 4, "float");

namespace ns {
__device__ void f(float* a) { a[0] = 1.f; }
__device__ void g(float* a) {
  a[0] = 1.f;
  __syncthreads();
}
}  // namespace ns

__global__ void k(float* a, int n) {
  for (int i = 0; i < n; ++i) {  // ~ blockers: barrier
    SYNC_ALL
    ::ns::f(a);
  }
  for (int i = 0; i < n; ++i) {  // ~ blockers: barrier
    CHECK_ONLY
    ::ns::g(a);
  }
  for (int i = 0; i < n; ++i) {  // ~ blockers: none
    CHECK_ONLY
    ::ns::f(a);
  }
  for (int i = 0; i < n; ++i) {  // ~ blockers: barrier
    HEADER_SYNC
    ::ns::f(a);
  }
  for (int i = 0; i < n; ++i) {  // ~ blockers: barrier
    HEADER_CHECK
    ::ns::g(a);
  }
}
