// hip-unroll's mapping of HIP's device-side names for nvcc: what `hip/hip_runtime.h` is on the
// NVIDIA path when nvcc compiles (hip-unroll puts a `hip/hip_runtime.h` that includes this file
// on the include path). Everything CUDA has is CUDA's own: this file only names what HIP spells
// differently, as HIP's own NVIDIA headers do, and re-declares nothing of CUDA's.
// Code with no CUDA meaning (AMD builtins, wave64-only masks) is refused before compiling, by
// `runner::prelude::refusals`. Only device code is mapped: host code that calls the HIP runtime
// API (hipMalloc...) does not compile here.
#ifndef HIP_UNROLL_NVCC_HIP_H
#define HIP_UNROLL_NVCC_HIP_H

#include <cuda_runtime.h>

#define __HIP_PLATFORM_NVIDIA__ 1
#define __HIP_PLATFORM_NVCC__ 1
#if defined(__CUDA_ARCH__)
#define __HIP_DEVICE_COMPILE__ 1
#endif
#define HIP_UNROLL_NVCC_HIP 1

// ---- work-item ids ---------------------------------------------------------------------------
#define hipThreadIdx_x (threadIdx.x)
#define hipThreadIdx_y (threadIdx.y)
#define hipThreadIdx_z (threadIdx.z)
#define hipBlockIdx_x (blockIdx.x)
#define hipBlockIdx_y (blockIdx.y)
#define hipBlockIdx_z (blockIdx.z)
#define hipBlockDim_x (blockDim.x)
#define hipBlockDim_y (blockDim.y)
#define hipBlockDim_z (blockDim.z)
#define hipGridDim_x (gridDim.x)
#define hipGridDim_y (gridDim.y)
#define hipGridDim_z (gridDim.z)

// ---- dynamic shared memory -------------------------------------------------------------------
#define HIP_DYNAMIC_SHARED_ATTRIBUTE
#define HIP_DYNAMIC_SHARED(type, var) extern __shared__ type var[];

// ---- HIP's warp functions without a mask: the whole warp (CUDA's `_sync` forms) --------------
// HIP's __ballot returns 64 bits; here the 32 lanes of a warp (wave64-only uses are refused).
#define __shfl(...) __shfl_sync(0xffffffffu, __VA_ARGS__)
#define __shfl_up(...) __shfl_up_sync(0xffffffffu, __VA_ARGS__)
#define __shfl_down(...) __shfl_down_sync(0xffffffffu, __VA_ARGS__)
#define __shfl_xor(...) __shfl_xor_sync(0xffffffffu, __VA_ARGS__)
#define __ballot(p) __ballot_sync(0xffffffffu, (p))
#define __any(p) __any_sync(0xffffffffu, (p))
#define __all(p) __all_sync(0xffffffffu, (p))

// ---- what HIP has and CUDA does not ----------------------------------------------------------
static __device__ __forceinline__ unsigned __lane_id() {
  unsigned r;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(r));
  return r;
}
static __device__ __forceinline__ long long wall_clock64() {
  long long r;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(r));
  return r;
}

#endif // HIP_UNROLL_NVCC_HIP_H
