// A specifier macro that ends with the function's return type (rocBLAS's
// `#define ROCBLAS_KERNEL(lb_) static __global__ __launch_bounds__((lb_)) void`, then
// `ROCBLAS_KERNEL(NB) name(...)`), defined in a header, qualifies the function it stands in
// front of: the kernel is parsed, its loops are reported and guarded. Used anywhere else (a
// variable), it is left to the grammar. Every rocBLAS kernel is written this way, and its
// macros come from a header: none was found before (the header's macro was no specifier).
#include "headers/blas_macros.cuh"

ROCBLAS_KERNEL_ILF void block_sync(float* s) {
  s[threadIdx.x] = 0.f;
  __syncthreads();
}

template <int NB, typename T>
ROCBLAS_KERNEL(NB)
copy_kernel(int n, const T* __restrict__ x, T* __restrict__ y, float* s)
{
  for (int i = 0; i < n; ++i) y[i] = x[i];  // ~ blockers: none
  for (int i = 0; i < n; ++i) block_sync(s);  // ~ blockers: barrier
}

ROCBLAS_KERNEL_NO_BOUNDS scal_kernel(int n, float* y)
{
  for (int i = 0; i < n; ++i) {  // ~ blockers: barrier
    y[i] *= 2.f;
    __syncthreads();
  }
}

DEVICE_INT launches = 0;

DEVICE_INT lane_count() {
  int c = 0;
  for (int i = 0; i < 32; ++i) c += i & 1;  // ~ blockers: none
  // ~^ trip: 32
  return c;
}
