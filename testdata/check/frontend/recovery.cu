// Kernels the grammar cannot parse cleanly are still analysed: macro qualifiers, unknown
// launch-bounds macros, preprocessor conditionals, namespaces, extern "C", templates.
#define KERNEL __global__
#define KERNEL_LB(n) __global__ __launch_bounds__(n)
#define DEVICE_INLINE __device__ __forceinline__

KERNEL void via_macro(float* a, int n) {
  for (int i = 0; i < n; ++i) __syncthreads();  // ~ blockers: barrier
}

__global__ void LAUNCH_BOUNDS_UNKNOWN(256) via_unknown_macro(int* c, int n) {
  for (int i = 0; i < n; ++i) atomicAdd(c, 1);  // ~ blockers: atomic
}

DEVICE_INLINE float dev_inline(float* a) {
  float s = 0.f;
  for (int i = 0; i < 4; ++i) s += a[i];  // ~ blockers: none
  return s;
}

#ifdef __HIP_PLATFORM_AMD__
__global__ void in_ifdef(float* a) {
#if defined(FAST)
  for (int i = 0; i < 4; ++i) a[i] = 0.f;  // ~ blockers: none
#else
  for (int i = 0; i < 4; ++i) { a[i] = 1.f; __syncthreads(); }  // ~ blockers: barrier
#endif
}
#endif

namespace outer {
namespace {
template <typename T, int N>
__global__ void __launch_bounds__(256) templ(T* a) {
  for (int i = 0; i < N; ++i) a[i] = T(0);  // ~ blockers: none
}
}  // namespace
}  // namespace outer

extern "C" {
__global__ void c_linkage(float* a) {
  while (a[0] > 0.f) a[0] -= 1.f;  // ~ blockers: none
}
}

struct Functor {
  __device__ void operator()(float* a) const {
    for (int i = 0; i < 2; ++i) a[i] = 0.f;  // ~ blockers: none
  }
};

// Host code: never listed.
int main() {
  for (int i = 0; i < 10; ++i) {}
  via_macro<<<1, 64>>>(nullptr, 0);
  return 0;
}
