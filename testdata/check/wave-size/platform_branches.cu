// Code only a non-AMD platform compiles is no finding: the `#else` of `__HIP_PLATFORM_AMD__`,
// `__CUDA_ARCH__`/`__NVCC__`/`__CUDACC__` branches, `!defined(USE_ROCM)`. What both compile,
// or what the tool cannot decide (`#if SOME_FLAG`), is checked.
#ifdef __HIP_PLATFORM_AMD__
#define WARP 64
#else
#define WARP 32
#define WARP_SIZE 32
#endif
__global__ void k(float* a, float v) {
#ifdef __HIP_PLATFORM_AMD__
  int lane = threadIdx.x % warpSize;
#else
  int lane = threadIdx.x % 32;
  v += __shfl_down_sync(0xffffffff, v, 1, 32);
#endif
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700
  a[threadIdx.x & 31] = v;
#elif defined(__HIP_PLATFORM_AMD__)
  a[threadIdx.x & 63] = v;
#endif
#if !defined(USE_ROCM)
  v = __shfl_xor_sync(0xffffffff, v, 1);
#endif
#ifdef __NVCC__
  a[threadIdx.x / 32] = v;
#endif
#if SOME_FLAG
  a[threadIdx.x / 32] = v;
  // ~^ diag: wave-size
#endif
  a[lane] = v + (float)(threadIdx.x >> 5);
  // ~^ diag: wave-size
}
