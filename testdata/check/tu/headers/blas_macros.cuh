// rocBLAS-style kernel macros: each ends with the kernel's return type.
#pragma once
#define ROCBLAS_KERNEL(lb_) static __global__ __launch_bounds__((lb_)) void
#define ROCBLAS_KERNEL_NO_BOUNDS static __global__ void
#define ROCBLAS_KERNEL_ILF __device__ __attribute__((always_inline))
#define DEVICE_INT __device__ int
