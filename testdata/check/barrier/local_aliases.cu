// A type alias declared in a function body (`using T = typename RV::dtype;`, the style of
// header-only tile libraries) belongs to that function: another function's `T`, or a class's
// member `T`, is a different type.
struct Syncer { __device__ void go() { __syncthreads(); } };
struct Quiet { __device__ void go() {} };

namespace lib {
struct Tile { using T = Syncer; };  // a member alias: not visible outside `Tile`

template <typename R> __device__ void loud(float* a, int n) {
  using T = Syncer;
  for (int i = 0; i < n; ++i) { T t; t.go(); a[i] = 0.f; }  // ~ blockers: barrier
}

template <typename R> __device__ void calm(float* a, int n) {
  using T = Quiet;
  for (int i = 0; i < n; ++i) { T t; t.go(); a[i] = 0.f; }  // ~ blockers: none
}

__device__ void plain(float* a, int n) {
  typedef Quiet T;
  for (int i = 0; i < n; ++i) { T t; t.go(); a[i] = 0.f; }  // ~ blockers: none
}
}  // namespace lib

__global__ void k(float* a, int n) {
  lib::loud<int>(a, n);
  lib::calm<int>(a, n);
  lib::plain(a, n);
}
