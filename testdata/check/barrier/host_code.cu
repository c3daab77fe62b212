// Host code around kernels: the parse skips the bodies of plain host functions (never
// analysed), but not a host body that holds device code (a `__device__` lambda passed to a
// kernel, a local class with device members, a lambda qualified by a macro), nor a function
// whose head has a macro that may make it device code; such a body is lowered. Their
// barriers are seen.
#include <hip/hip_runtime.h>
#include <vector>

#define HD __host__ __device__
#define DEVICE_LAMBDA __device__

template <typename F>
__global__ void apply(float* a, F op) {
  for (int i = 0; i < 4; ++i) a[i] = op(a[i]);  // ~ blockers: barrier
}

template <typename F>
__global__ void apply2(float* a, F op) {
  for (int i = 0; i < 4; ++i) a[i] = op(a[i]);  // ~ blockers: barrier
}

// Called with a functor class defined inside a host function (its body parses cleanly: it
// is lowered because it holds device code).
template <typename F>
__global__ void apply3(float* a, F op) {
  for (int i = 0; i < 4; ++i) a[i] = op(a[i]);  // ~ blockers: barrier
}

void launch_local(float* d) {
  struct SyncOp {
    __device__ float operator()(float x) const { __syncthreads(); return x; }
  };
  apply3<<<1, 4>>>(d, SyncOp{});
}

HD float helper(float x) {
  for (int i = 0; i < 4; ++i) x += 1.f;  // ~ blockers: none
  return x;
}

UNSEEN_DEVICE float unseen(float* s) {
  for (int i = 0; i < 4; ++i) { s[i] = 0.f; __syncthreads(); }  // ~ blockers: barrier
  return s[0];
}

static std::vector<float> make(int n) {
  std::vector<float> v(n);
  for (int i = 0; i < n; ++i) v[i] = float(i);
  return v;
}

int main() {
  std::vector<float> h = make(4);
  auto sync = [] __device__ (float x) { __syncthreads(); return x; };
  apply<<<1, 4>>>(nullptr, sync);
  auto sync2 = [] DEVICE_LAMBDA (float x) { __syncthreads(); return x; };
  apply2<<<1, 4>>>(nullptr, sync2);
  for (int i = 0; i < 4; ++i) h[i] += 1.f;
  return 0;
}

__global__ void after(float* a) {
  for (int i = 0; i < 4; ++i) a[i] = helper(a[i]) + unseen(a);  // ~ blockers: barrier
}
