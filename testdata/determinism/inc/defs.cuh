// Specifier macros that the other headers use without defining them.
#pragma once
#define DINLINE __device__ __forceinline__
#define HDINLINE __host__ __device__ inline
#define KERNEL_BOUNDS(n) __launch_bounds__(n)
#define TILE 64
