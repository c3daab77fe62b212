// hip-unroll's prelude for compiling a HIP kernel to NVIDIA PTX with clang (-x cuda
// --cuda-device-only -nocudainc -nocudalib): the HIP device-side names a kernel may use, mapped
// to CUDA's, without the CUDA toolkit. `runner` writes this file (and `hip/hip_runtime.h`, which
// includes it) into the compile cache and passes `-include` for it. Code with no CUDA meaning
// (AMD builtins, wave64-only masks) is refused before compiling, by `runner::prelude::refusals`.
//
// Only device code is supported: host functions that call the HIP runtime do not compile here.
#ifndef HIP_UNROLL_CUDA_PRELUDE_H
#define HIP_UNROLL_CUDA_PRELUDE_H

#ifndef __CUDA__
#error "hip_unroll_cuda_prelude.h is for clang -x cuda device compiles only"
#endif

#include <stddef.h>
#include <stdint.h>

// ---- qualifiers (normally from CUDA's host_defines.h) ----------------------------------------
#define __host__ __attribute__((host))
#define __device__ __attribute__((device))
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
#define __managed__ __attribute__((managed))
#define __forceinline__ __inline__ __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __align__(n) __attribute__((aligned(n)))
// HIP's optional second argument is the minimum number of waves per execution unit, CUDA's is
// the minimum number of blocks per multiprocessor: only the first (the maximum block size, the
// one that affects correctness of the compile) is kept.
#define __hu_first_arg(first, ...) first
#define __launch_bounds__(...) __attribute__((launch_bounds(__hu_first_arg(__VA_ARGS__, 0))))

#define __HIP_PLATFORM_NVIDIA__ 1
#define __HIP_PLATFORM_NVCC__ 1
#define __HIP_DEVICE_COMPILE__ 1
#define HIP_UNROLL_CUDA_PRELUDE 1

#include <__clang_cuda_builtin_vars.h>

#define __HU_D static __device__ __forceinline__

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

// ---- synchronisation -------------------------------------------------------------------------
// __syncthreads is a clang builtin in CUDA mode.
__HU_D int __syncthreads_count(int p) { return __nvvm_bar0_popc(p); }
__HU_D int __syncthreads_and(int p) { return __nvvm_bar0_and(p); }
__HU_D int __syncthreads_or(int p) { return __nvvm_bar0_or(p); }
__HU_D void __threadfence() { __nvvm_membar_gl(); }
__HU_D void __threadfence_block() { __nvvm_membar_cta(); }
__HU_D void __threadfence_system() { __nvvm_membar_sys(); }
__HU_D void __syncwarp(unsigned long long mask = 0xffffffffu) {
  __nvvm_bar_warp_sync((unsigned)mask);
}

// ---- lanes and votes (a warp has 32 lanes here; masks wider than 32 bits are refused) ----------
__HU_D unsigned __lane_id() {
  unsigned r;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(r));
  return r;
}
__HU_D unsigned long long __activemask() {
  unsigned r;
  asm volatile("activemask.b32 %0;" : "=r"(r));
  return r;
}
__HU_D unsigned long long __ballot(int p) { return __nvvm_vote_ballot_sync(0xffffffffu, p); }
__HU_D unsigned long long __ballot_sync(unsigned long long m, int p) {
  return __nvvm_vote_ballot_sync((unsigned)m, p);
}
__HU_D int __any(int p) { return __nvvm_vote_any_sync(0xffffffffu, p); }
__HU_D int __all(int p) { return __nvvm_vote_all_sync(0xffffffffu, p); }
__HU_D int __any_sync(unsigned long long m, int p) { return __nvvm_vote_any_sync((unsigned)m, p); }
__HU_D int __all_sync(unsigned long long m, int p) { return __nvvm_vote_all_sync((unsigned)m, p); }

// ---- bit manipulation ------------------------------------------------------------------------
__HU_D int __popc(unsigned x) { return __builtin_popcount(x); }
__HU_D int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
__HU_D int __clz(int x) { return x == 0 ? 32 : __builtin_clz((unsigned)x); }
__HU_D int __clzll(long long x) {
  return x == 0 ? 64 : __builtin_clzll((unsigned long long)x);
}
__HU_D int __ffs(int x) { return x == 0 ? 0 : __builtin_ctz((unsigned)x) + 1; }
__HU_D int __ffsll(long long x) {
  return x == 0 ? 0 : __builtin_ctzll((unsigned long long)x) + 1;
}
__HU_D unsigned __brev(unsigned x) { return __builtin_bitreverse32(x); }
__HU_D unsigned long long __brevll(unsigned long long x) { return __builtin_bitreverse64(x); }

// ---- shuffles: HIP's __shfl*(var, lane_or_delta, width = warpSize) and the _sync forms -------
// The width is explicit as in HIP; the clamp value follows PTX's shfl.sync encoding.
#define __HU_SHFL_C(width, clamp) ((((int)warpSize - (int)(width)) << 8) | (clamp))
#define __HU_SHFL_ALL(NAME, KIND, CLAMP)                                                       \
  __HU_D int NAME##_sync(unsigned long long m, int v, int s, int w = warpSize) {              \
    return __nvvm_shfl_sync_##KIND##_i32((unsigned)m, v, s, __HU_SHFL_C(w, CLAMP));          \
  }                                                                                            \
  __HU_D float NAME##_sync(unsigned long long m, float v, int s, int w = warpSize) {          \
    return __nvvm_shfl_sync_##KIND##_f32((unsigned)m, v, s, __HU_SHFL_C(w, CLAMP));          \
  }                                                                                            \
  __HU_D unsigned NAME##_sync(unsigned long long m, unsigned v, int s, int w = warpSize) {    \
    return (unsigned)NAME##_sync(m, (int)v, s, w);                                           \
  }                                                                                            \
  __HU_D long long NAME##_sync(unsigned long long m, long long v, int s, int w = warpSize) {  \
    int lo = (int)(unsigned long long)v, hi = (int)((unsigned long long)v >> 32);            \
    lo = NAME##_sync(m, lo, s, w);                                                           \
    hi = NAME##_sync(m, hi, s, w);                                                           \
    return (long long)(((unsigned long long)(unsigned)hi << 32) | (unsigned)lo);             \
  }                                                                                            \
  __HU_D unsigned long long NAME##_sync(unsigned long long m, unsigned long long v, int s,    \
                                        int w = warpSize) {                                  \
    return (unsigned long long)NAME##_sync(m, (long long)v, s, w);                           \
  }                                                                                            \
  __HU_D long NAME##_sync(unsigned long long m, long v, int s, int w = warpSize) {            \
    return (long)NAME##_sync(m, (long long)v, s, w);                                         \
  }                                                                                            \
  __HU_D unsigned long NAME##_sync(unsigned long long m, unsigned long v, int s,              \
                                   int w = warpSize) {                                       \
    return (unsigned long)NAME##_sync(m, (long long)v, s, w);                                \
  }                                                                                            \
  __HU_D double NAME##_sync(unsigned long long m, double v, int s, int w = warpSize) {        \
    return __builtin_bit_cast(double, NAME##_sync(m, __builtin_bit_cast(long long, v), s, w)); \
  }                                                                                            \
  template <typename T>                                                                        \
  __HU_D T NAME(T v, int s, int w = warpSize) {                                                \
    return NAME##_sync(0xffffffffu, v, s, w);                                                \
  }
__HU_SHFL_ALL(__shfl, idx, 0x1f)
__HU_SHFL_ALL(__shfl_up, up, 0)
__HU_SHFL_ALL(__shfl_down, down, 0x1f)
__HU_SHFL_ALL(__shfl_xor, bfly, 0x1f)
#undef __HU_SHFL_ALL

// ---- atomics (device scope, relaxed, as HIP's and CUDA's unsuffixed forms) -------------------
#define __HU_ATOMIC(NAME, T, BUILTIN, CT) \
  __HU_D T NAME(T* p, T v) { return (T)BUILTIN((CT*)p, (CT)v); }
__HU_ATOMIC(atomicAdd, int, __nvvm_atom_add_gen_i, int)
__HU_ATOMIC(atomicAdd, unsigned, __nvvm_atom_add_gen_i, int)
__HU_ATOMIC(atomicAdd, unsigned long long, __nvvm_atom_add_gen_ll, long long)
__HU_ATOMIC(atomicAdd, float, __nvvm_atom_add_gen_f, float)
__HU_ATOMIC(atomicAdd, double, __nvvm_atom_add_gen_d, double)
__HU_ATOMIC(atomicExch, int, __nvvm_atom_xchg_gen_i, int)
__HU_ATOMIC(atomicExch, unsigned, __nvvm_atom_xchg_gen_i, int)
__HU_ATOMIC(atomicExch, unsigned long long, __nvvm_atom_xchg_gen_ll, long long)
__HU_ATOMIC(atomicMin, int, __nvvm_atom_min_gen_i, int)
__HU_ATOMIC(atomicMin, unsigned, __nvvm_atom_min_gen_ui, unsigned)
__HU_ATOMIC(atomicMin, long long, __nvvm_atom_min_gen_ll, long long)
__HU_ATOMIC(atomicMin, unsigned long long, __nvvm_atom_min_gen_ull, unsigned long long)
__HU_ATOMIC(atomicMax, int, __nvvm_atom_max_gen_i, int)
__HU_ATOMIC(atomicMax, unsigned, __nvvm_atom_max_gen_ui, unsigned)
__HU_ATOMIC(atomicMax, long long, __nvvm_atom_max_gen_ll, long long)
__HU_ATOMIC(atomicMax, unsigned long long, __nvvm_atom_max_gen_ull, unsigned long long)
__HU_ATOMIC(atomicAnd, int, __nvvm_atom_and_gen_i, int)
__HU_ATOMIC(atomicAnd, unsigned, __nvvm_atom_and_gen_i, int)
__HU_ATOMIC(atomicAnd, unsigned long long, __nvvm_atom_and_gen_ll, long long)
__HU_ATOMIC(atomicOr, int, __nvvm_atom_or_gen_i, int)
__HU_ATOMIC(atomicOr, unsigned, __nvvm_atom_or_gen_i, int)
__HU_ATOMIC(atomicOr, unsigned long long, __nvvm_atom_or_gen_ll, long long)
__HU_ATOMIC(atomicXor, int, __nvvm_atom_xor_gen_i, int)
__HU_ATOMIC(atomicXor, unsigned, __nvvm_atom_xor_gen_i, int)
__HU_ATOMIC(atomicXor, unsigned long long, __nvvm_atom_xor_gen_ll, long long)
__HU_ATOMIC(atomicInc, unsigned, __nvvm_atom_inc_gen_ui, unsigned)
__HU_ATOMIC(atomicDec, unsigned, __nvvm_atom_dec_gen_ui, unsigned)
#undef __HU_ATOMIC
__HU_D int atomicSub(int* p, int v) { return __nvvm_atom_add_gen_i(p, -v); }
__HU_D unsigned atomicSub(unsigned* p, unsigned v) {
  return (unsigned)__nvvm_atom_add_gen_i((int*)p, -(int)v);
}
__HU_D int atomicCAS(int* p, int c, int v) { return __nvvm_atom_cas_gen_i(p, c, v); }
__HU_D unsigned atomicCAS(unsigned* p, unsigned c, unsigned v) {
  return (unsigned)__nvvm_atom_cas_gen_i((int*)p, (int)c, (int)v);
}
__HU_D unsigned long long atomicCAS(unsigned long long* p, unsigned long long c,
                                    unsigned long long v) {
  return (unsigned long long)__nvvm_atom_cas_gen_ll((long long*)p, (long long)c, (long long)v);
}
__HU_D float atomicExch(float* p, float v) {
  return __builtin_bit_cast(float, __nvvm_atom_xchg_gen_i((int*)p, __builtin_bit_cast(int, v)));
}

// ---- arithmetic HIP code uses without headers ------------------------------------------------
__HU_D int min(int a, int b) { return a < b ? a : b; }
__HU_D int max(int a, int b) { return a > b ? a : b; }
__HU_D unsigned min(unsigned a, unsigned b) { return a < b ? a : b; }
__HU_D unsigned max(unsigned a, unsigned b) { return a > b ? a : b; }
__HU_D long long min(long long a, long long b) { return a < b ? a : b; }
__HU_D long long max(long long a, long long b) { return a > b ? a : b; }
__HU_D unsigned long long min(unsigned long long a, unsigned long long b) { return a < b ? a : b; }
__HU_D unsigned long long max(unsigned long long a, unsigned long long b) { return a > b ? a : b; }
__HU_D float min(float a, float b) { return __builtin_fminf(a, b); }
__HU_D float max(float a, float b) { return __builtin_fmaxf(a, b); }
__HU_D double min(double a, double b) { return __builtin_fmin(a, b); }
__HU_D double max(double a, double b) { return __builtin_fmax(a, b); }
__HU_D float fminf(float a, float b) { return __builtin_fminf(a, b); }
__HU_D float fmaxf(float a, float b) { return __builtin_fmaxf(a, b); }
__HU_D double fmin(double a, double b) { return __builtin_fmin(a, b); }
__HU_D double fmax(double a, double b) { return __builtin_fmax(a, b); }
__HU_D float fabsf(float x) { return __builtin_fabsf(x); }
__HU_D double fabs(double x) { return __builtin_fabs(x); }
__HU_D float sqrtf(float x) { return __builtin_sqrtf(x); }
__HU_D double sqrt(double x) { return __builtin_sqrt(x); }
__HU_D float rsqrtf(float x) { return 1.0f / __builtin_sqrtf(x); }
__HU_D float fmaf(float a, float b, float c) { return __builtin_fmaf(a, b, c); }
__HU_D double fma(double a, double b, double c) { return __builtin_fma(a, b, c); }
__HU_D float floorf(float x) { return __builtin_floorf(x); }
__HU_D float ceilf(float x) { return __builtin_ceilf(x); }
__HU_D float truncf(float x) { return __builtin_truncf(x); }
__HU_D float rintf(float x) { return __builtin_rintf(x); }
__HU_D double floor(double x) { return __builtin_floor(x); }
__HU_D double ceil(double x) { return __builtin_ceil(x); }
__HU_D float __expf(float x) { return __nvvm_ex2_approx_f(x * 1.4426950408889634f); }
__HU_D float __logf(float x) { return __nvvm_lg2_approx_f(x) * 0.6931471805599453f; }
__HU_D float __fdividef(float a, float b) { return __nvvm_div_approx_f(a, b); }
__HU_D int abs(int x) { return x < 0 ? -x : x; }
__HU_D long long llabs(long long x) { return x < 0 ? -x : x; }

// ---- clocks ----------------------------------------------------------------------------------
__HU_D long long clock64() { return __nvvm_read_ptx_sreg_clock64(); }
__HU_D long long wall_clock64() { return __nvvm_read_ptx_sreg_globaltimer(); }

#undef __HU_D
#endif // HIP_UNROLL_CUDA_PRELUDE_H
