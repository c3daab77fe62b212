// Same-named functions are everyday HIP (rocPRIM, composable_kernel, hipCUB): namespaces,
// anonymous namespaces, classes, overloads, templates and specialisations, both branches of an
// `#if`, macro-qualified kernels. Every loop gets its own id (checked by the pipeline's
// property test), and each verdict belongs to its own loop.
#define KERNEL __global__
namespace a { __global__ void k(float* x, int n) { for (int i = 0; i < n; ++i) { x[i] += 1.0f; } } }
// ~^ blockers: none
namespace b { __global__ void k(float* x, int n) { for (int i = 0; i < n; ++i) { __syncthreads(); x[i] += 1.0f; } } }
// ~^ blockers: barrier
__global__ void over(float* x, int n) { for (int i = 0; i < n; ++i) { x[i] += 1.0f; } }
// ~^ blockers: none
__global__ void over(int* x, int n) { for (int i = 0; i < n; ++i) { atomicAdd(x, 1); } }
// ~^ blockers: atomic
namespace { __global__ void k(float* x, int n) { for (int i = 0; i < n; ++i) { if (x[i] < 0) return; } } }
// ~^ blockers: early-exit
namespace a { namespace { __device__ void k(float* x, int n) { for (int i = 0; i < n; ++i) x[i] = 0; } } }
// ~^ blockers: none
struct Tile {
  __device__ void k(float* x, int n) { for (int i = 0; i < n; ++i) { __syncthreads(); } }
  // ~^ blockers: barrier
};
template <typename T> __global__ void t(T* x, int n) { for (int i = 0; i < n; ++i) x[i] = T(0); }
// ~^ blockers: none
template <> __global__ void t<float>(float* x, int n) { for (int i = 0; i < n; ++i) { __syncthreads(); } }
// ~^ blockers: barrier
#if defined(FAST)
KERNEL void twin(float* x, int n) { for (int i = 0; i < n; ++i) x[i] = 1; }
// ~^ blockers: none
#else
KERNEL void twin(float* x, int n) { for (int i = 0; i < n; ++i) { __syncthreads(); } }
// ~^ blockers: barrier
#endif
