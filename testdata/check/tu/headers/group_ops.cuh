// A library's group-scoped operations: a class template whose nested structs take their
// members from headers included in their bodies.
namespace lib {
template <int N> struct group {
  __device__ static inline int lane() { return threadIdx.x; }
  struct sync {
    __device__ static inline void all() { __syncthreads(); }
#include "group_sync.cuh"
  };
};
using warpgroup = group<4>;
}  // namespace lib
