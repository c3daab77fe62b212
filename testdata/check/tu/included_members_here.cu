// As tu/included_members.cu, with the class whose body includes the header defined in the
// analysed file itself.
namespace lib {
template <int N> struct group {
  __device__ static inline int lane() { return threadIdx.x; }
  struct sync {
#include "headers/group_sync.cuh"
  };
};
using warpgroup = group<4>;
}  // namespace lib

__global__ void k(float* bar, float* a, int n) {
  for (int i = 0; i < n; ++i) { lib::warpgroup::sync::arrive(bar); a[i] = 0.f; }  // ~ blockers: barrier
  for (int i = 0; i < n; ++i) { lib::warpgroup::sync::relax(bar); a[i] = 0.f; }  // ~ blockers: none
}
