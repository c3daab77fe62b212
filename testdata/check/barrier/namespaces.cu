// Qualified names respect namespaces and classes: `lib::copy` is not `mine::copy` (it has no
// visible body here: unresolved), `other::step` is not blocked through `mine::step`, and an
// unqualified call inside a namespace finds that namespace's function first.
namespace mine {
__device__ void copy(float* dst, const float* src) {
  dst[threadIdx.x] = src[threadIdx.x];
  __syncthreads();
}
__device__ void step(float* s) { __syncthreads(); }
__device__ float twice(float v) { return 2.f * v; }

__global__ void inside(float* a, float* s, int n) {
  for (int i = 0; i < n; ++i) step(s);  // ~ blockers: barrier
  for (int i = 0; i < n; ++i) a[i] = twice(a[i]);  // ~ blockers: none
}
}  // namespace mine

namespace lib {
__device__ void copy(float* dst, const float* src);
}

namespace other {
__device__ void step(float* s);
__device__ float twice(float v) { return v + v; }
namespace detail {
__device__ void step(float* s) { s[0] = 0.f; }
}
}  // namespace other

struct Ops {
  __device__ static void step(float* s) { __syncthreads(); }
};

__global__ void qualified(float* a, const float* b, float* s, int n) {
  for (int i = 0; i < n; ++i) lib::copy(a, b);  // ~ blockers: none
  // ~^ unresolved: lib::copy
  for (int i = 0; i < n; ++i) mine::copy(a, b);  // ~ blockers: barrier
  for (int i = 0; i < n; ++i) other::step(s);  // ~ blockers: none
  // ~^ unresolved: other::step
  for (int i = 0; i < n; ++i) other::detail::step(s);  // ~ blockers: none
  for (int i = 0; i < n; ++i) ::mine::step(s);  // ~ blockers: barrier
  for (int i = 0; i < n; ++i) Ops::step(s);  // ~ blockers: barrier
  for (int i = 0; i < n; ++i) a[i] = other::twice(a[i]);  // ~ blockers: none
}

// A namespace and a class nested in another class with the same path (`tk::tma::cluster`, the
// namespace; `tk::group::tma::cluster`, a struct of `group`): `tma::cluster::wait` written in
// `tk` (or under `using namespace tk;`) is the namespace's function, never the struct's.
namespace tk {
namespace tma {
namespace cluster {
__device__ void wait(float* s) { __syncthreads(); }
}  // namespace cluster
}  // namespace tma
struct group {
  struct tma {
    struct cluster {
      __device__ static void wait(float* s) { s[0] = 1.f; }
    };
  };
};
__global__ void nested(float* s, int n) {
  for (int i = 0; i < n; ++i) tma::cluster::wait(s);  // ~ blockers: barrier
  for (int i = 0; i < n; ++i) group::tma::cluster::wait(s);  // ~ blockers: none
}
}  // namespace tk

using namespace tk;
__global__ void directive(float* s, int n) {
  for (int i = 0; i < n; ++i) tma::cluster::wait(s);  // ~ blockers: barrier
}
