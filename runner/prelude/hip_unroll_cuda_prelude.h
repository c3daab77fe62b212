// hip-unroll's prelude for compiling a HIP or CUDA kernel to NVIDIA PTX with clang when nvcc is
// not installed (-x cuda --cuda-device-only -nocudainc -nocudalib): what the CUDA headers would
// declare for device code, written without the CUDA toolkit. `runner` writes this file, its math
// header and shadow runtime headers (`hip/hip_runtime.h`, `cuda_runtime.h`, which include it)
// into the compile cache and passes `-include` for it. With nvcc none of this is used: nvcc
// compiles with CUDA's own headers. Code with no CUDA meaning (AMD builtins, wave64-only masks)
// is refused before compiling, by `runner::prelude::refusals`.
//
// What differs from nvcc (the README lists it too): float math is hip-unroll's own
// (hip_unroll_cuda_math.h, not libdevice: last-bit differences), no double-precision
// transcendentals, no half/bfloat16 types, no cooperative groups, no textures, and
// HIP's two-argument __launch_bounds__ keeps only the first. Only device code is supported:
// host functions that call the HIP or CUDA runtime do not compile here.
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

// ---- vector types (CUDA's vector_types.h: the same members, sizes and alignments) ------------
#define __HU_VEC(T, N, A1, A2, A4)                                                             \
  struct N##1 { T x; };                                                                        \
  struct __align__(A2) N##2 { T x, y; };                                                       \
  struct N##3 { T x, y, z; };                                                                  \
  struct __align__(A4) N##4 { T x, y, z, w; };                                                 \
  __HU_D N##1 make_##N##1(T x) { N##1 r; r.x = x; return r; }                                  \
  __HU_D N##2 make_##N##2(T x, T y) { N##2 r; r.x = x; r.y = y; return r; }                    \
  __HU_D N##3 make_##N##3(T x, T y, T z) { N##3 r; r.x = x; r.y = y; r.z = z; return r; }      \
  __HU_D N##4 make_##N##4(T x, T y, T z, T w) {                                                \
    N##4 r; r.x = x; r.y = y; r.z = z; r.w = w; return r;                                      \
  }
__HU_VEC(signed char, char, 1, 2, 4)
__HU_VEC(unsigned char, uchar, 1, 2, 4)
__HU_VEC(short, short, 2, 4, 8)
__HU_VEC(unsigned short, ushort, 2, 4, 8)
__HU_VEC(int, int, 4, 8, 16)
__HU_VEC(unsigned int, uint, 4, 8, 16)
__HU_VEC(long, long, 8, 16, 16)
__HU_VEC(unsigned long, ulong, 8, 16, 16)
__HU_VEC(long long, longlong, 8, 16, 16)
__HU_VEC(unsigned long long, ulonglong, 8, 16, 16)
__HU_VEC(float, float, 4, 8, 16)
__HU_VEC(double, double, 8, 16, 16)
#undef __HU_VEC
struct dim3 {
  unsigned int x, y, z;
  __host__ __device__ constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1)
      : x(vx), y(vy), z(vz) {}
  __host__ __device__ constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
  __host__ __device__ constexpr operator uint3() const { return uint3{x, y, z}; }
};
#define __HU_BUILTIN_CONVERSIONS(V)                                                             \
  __device__ inline V::operator dim3() const { return dim3(x, y, z); }                         \
  __device__ inline V::operator uint3() const { return uint3{x, y, z}; }
__HU_BUILTIN_CONVERSIONS(__cuda_builtin_threadIdx_t)
__HU_BUILTIN_CONVERSIONS(__cuda_builtin_blockIdx_t)
__HU_BUILTIN_CONVERSIONS(__cuda_builtin_blockDim_t)
__HU_BUILTIN_CONVERSIONS(__cuda_builtin_gridDim_t)
#undef __HU_BUILTIN_CONVERSIONS

// ---- what the driver provides at load time: printf, malloc/free, assert ----------------------
// (the same extern functions nvcc's PTX calls; `assert` from <assert.h> reaches __assert_fail,
// which on the device calls the driver's __assertfail, as in CUDA)
extern "C" {
__device__ int vprintf(const char*, const char*);
__device__ int printf(const char*, ...);
__device__ void* malloc(size_t) __attribute__((nothrow)) __attribute__((malloc));
__device__ void free(void*) __attribute__((nothrow));
__device__ void __assertfail(const char* message, const char* file, unsigned line,
                             const char* function, size_t char_size) __attribute__((noreturn));
__device__ static inline void __assert_fail(const char* message, const char* file, unsigned line,
                                            const char* function) {
  __assertfail(message, file, line, function, sizeof(char));
}
}
#include <assert.h>

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

// ---- arithmetic (integer min/max, float and double overloads of C's math names) -------------
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
__HU_D int abs(int x) { return x < 0 ? -x : x; }
__HU_D long labs(long x) { return x < 0 ? -x : x; }
__HU_D long long llabs(long long x) { return x < 0 ? -x : x; }

// What PTX has an instruction for, float and double: correctly rounded, as nvcc's.
#define __HU_UNARY(NAME, BUILTIN)                                                               \
  __HU_D float NAME##f(float x) { return __builtin_##BUILTIN##f(x); }                           \
  __HU_D float NAME(float x) { return __builtin_##BUILTIN##f(x); }                              \
  __HU_D double NAME(double x) { return __builtin_##BUILTIN(x); }
__HU_UNARY(fabs, fabs)
__HU_UNARY(sqrt, sqrt)
__HU_UNARY(floor, floor)
__HU_UNARY(ceil, ceil)
__HU_UNARY(trunc, trunc)
__HU_UNARY(rint, rint)
__HU_UNARY(round, round)
__HU_UNARY(nearbyint, rint)
#undef __HU_UNARY
#define __HU_BINARY(NAME, BUILTIN)                                                              \
  __HU_D float NAME##f(float a, float b) { return __builtin_##BUILTIN##f(a, b); }               \
  __HU_D float NAME(float a, float b) { return __builtin_##BUILTIN##f(a, b); }                  \
  __HU_D double NAME(double a, double b) { return __builtin_##BUILTIN(a, b); }
__HU_BINARY(fmin, fmin)
__HU_BINARY(fmax, fmax)
__HU_BINARY(copysign, copysign)
#undef __HU_BINARY
// fma(float, float, float) is the float fma (fma.rn.f32), never a double one.
__HU_D float fmaf(float a, float b, float c) { return __builtin_fmaf(a, b, c); }
__HU_D float fma(float a, float b, float c) { return __builtin_fmaf(a, b, c); }
__HU_D double fma(double a, double b, double c) { return __builtin_fma(a, b, c); }
__HU_D float abs(float x) { return __builtin_fabsf(x); }
__HU_D double abs(double x) { return __builtin_fabs(x); }
__HU_D bool isnan(float x) { return __builtin_isnan(x); }
__HU_D bool isnan(double x) { return __builtin_isnan(x); }
__HU_D bool isinf(float x) { return __builtin_isinf(x); }
__HU_D bool isinf(double x) { return __builtin_isinf(x); }
__HU_D bool isfinite(float x) { return __builtin_isfinite(x); }
__HU_D bool isfinite(double x) { return __builtin_isfinite(x); }
__HU_D bool signbit(float x) { return __builtin_signbit(x); }
__HU_D bool signbit(double x) { return __builtin_signbit(x); }
// rsqrtf is PTX's rsqrt.approx.f32, as nvcc emits it (not 1 / sqrt).
__HU_D float rsqrtf(float x) { return __nvvm_rsqrt_approx_f(x); }
__HU_D double rsqrt(double x) { return __nvvm_rsqrt_approx_d(x); }

// Transcendental float functions: hip-unroll's own (see hip_unroll_cuda_math.h), with the C++
// float overloads nvcc has.
#include "hip_unroll_cuda_math.h"
#define __HU_OVERLOAD1(NAME) \
  __HU_D float NAME(float x) { return NAME##f(x); }
__HU_OVERLOAD1(exp)
__HU_OVERLOAD1(exp2)
__HU_OVERLOAD1(exp10)
__HU_OVERLOAD1(log)
__HU_OVERLOAD1(log2)
__HU_OVERLOAD1(log10)
__HU_OVERLOAD1(sin)
__HU_OVERLOAD1(cos)
__HU_OVERLOAD1(tan)
__HU_OVERLOAD1(tanh)
__HU_OVERLOAD1(sinh)
__HU_OVERLOAD1(cosh)
#undef __HU_OVERLOAD1
__HU_D float pow(float x, float y) { return powf(x, y); }
__HU_D void sincosf(float x, float* s, float* c) {
  *s = sinf(x);
  *c = cosf(x);
}

// CUDA's intrinsics: the fast approximations and the explicitly rounded operations.
__HU_D float __expf(float x) { return __nvvm_ex2_approx_ftz_f(x * 1.4426950408889634f); }
__HU_D float __exp10f(float x) { return __nvvm_ex2_approx_ftz_f(x * 3.3219280948873622f); }
__HU_D float __logf(float x) { return __nvvm_lg2_approx_ftz_f(x) * 0.6931471805599453f; }
__HU_D float __log2f(float x) { return __nvvm_lg2_approx_ftz_f(x); }
__HU_D float __log10f(float x) { return __nvvm_lg2_approx_ftz_f(x) * 0.30102999566398120f; }
__HU_D float __sinf(float x) { return __nvvm_sin_approx_ftz_f(x); }
__HU_D float __cosf(float x) { return __nvvm_cos_approx_ftz_f(x); }
__HU_D float __tanf(float x) { return __nvvm_sin_approx_ftz_f(x) / __nvvm_cos_approx_ftz_f(x); }
__HU_D float __powf(float x, float y) {
  return __nvvm_ex2_approx_ftz_f(y * __nvvm_lg2_approx_ftz_f(x));
}
__HU_D float __fdividef(float a, float b) { return __nvvm_div_approx_f(a, b); }
__HU_D float __saturatef(float x) { return __nvvm_saturate_f(x); }
__HU_D float __fadd_rn(float a, float b) { return __nvvm_add_rn_f(a, b); }
__HU_D float __fmul_rn(float a, float b) { return __nvvm_mul_rn_f(a, b); }
__HU_D float __fdiv_rn(float a, float b) { return __nvvm_div_rn_f(a, b); }
__HU_D float __frcp_rn(float x) { return __nvvm_rcp_rn_f(x); }
__HU_D float __fsqrt_rn(float x) { return __nvvm_sqrt_rn_f(x); }
__HU_D float __fmaf_rn(float a, float b, float c) { return __nvvm_fma_rn_f(a, b, c); }
__HU_D int __float_as_int(float x) { return __builtin_bit_cast(int, x); }
__HU_D unsigned __float_as_uint(float x) { return __builtin_bit_cast(unsigned, x); }
__HU_D float __int_as_float(int x) { return __builtin_bit_cast(float, x); }
__HU_D float __uint_as_float(unsigned x) { return __builtin_bit_cast(float, x); }
__HU_D long long __double_as_longlong(double x) { return __builtin_bit_cast(long long, x); }
__HU_D double __longlong_as_double(long long x) { return __builtin_bit_cast(double, x); }
__HU_D int __float2int_rn(float x) { return __nvvm_f2i_rn(x); }
__HU_D int __float2int_rz(float x) { return __nvvm_f2i_rz(x); }
__HU_D unsigned __float2uint_rn(float x) { return __nvvm_f2ui_rn(x); }
__HU_D float __int2float_rn(int x) { return __nvvm_i2f_rn(x); }

// ---- cache-hinted loads and stores (PTX ld/st with .cs .cg .ca .lu .cv, .wb .wt; nvcc's
// sm_32_intrinsics) -----------------------------------------------------------------------------
#define __HU_LD1(NAME, Q, T, PT, C)                                                               \
  __HU_D T NAME(const T* p) {                                                                     \
    T r;                                                                                          \
    asm volatile("ld.global." #Q "." #PT " %0, [%1];" : "=" C(r) : "l"(p));                      \
    return r;                                                                                     \
  }
#define __HU_ST1(NAME, Q, T, PT, C)                                                               \
  __HU_D void NAME(T* p, T v) { asm volatile("st.global." #Q "." #PT " [%0], %1;" ::"l"(p), C(v) : "memory"); }
#define __HU_LD2(NAME, Q, T, E, PT, C)                                                            \
  __HU_D T NAME(const T* p) {                                                                     \
    T r;                                                                                          \
    asm volatile("ld.global." #Q ".v2." #PT " {%0, %1}, [%2];" : "=" C(r.x), "=" C(r.y) : "l"(p)); \
    return r;                                                                                     \
  }
#define __HU_ST2(NAME, Q, T, E, PT, C)                                                            \
  __HU_D void NAME(T* p, T v) {                                                                   \
    asm volatile("st.global." #Q ".v2." #PT " [%0], {%1, %2};" ::"l"(p), C(v.x), C(v.y) : "memory"); \
  }
#define __HU_LD4(NAME, Q, T, E, PT, C)                                                            \
  __HU_D T NAME(const T* p) {                                                                     \
    T r;                                                                                          \
    asm volatile("ld.global." #Q ".v4." #PT " {%0, %1, %2, %3}, [%4];"                           \
                 : "=" C(r.x), "=" C(r.y), "=" C(r.z), "=" C(r.w)                                 \
                 : "l"(p));                                                                       \
    return r;                                                                                     \
  }
#define __HU_ST4(NAME, Q, T, E, PT, C)                                                            \
  __HU_D void NAME(T* p, T v) {                                                                   \
    asm volatile("st.global." #Q ".v4." #PT " [%0], {%1, %2, %3, %4};" ::"l"(p), C(v.x), C(v.y), \
                 C(v.z), C(v.w)                                                                   \
                 : "memory");                                                                     \
  }
#define __HU_LD_ALL(NAME, Q)                                                                      \
  __HU_LD1(NAME, Q, float, f32, "f") __HU_LD1(NAME, Q, double, f64, "d")                          \
  __HU_LD1(NAME, Q, int, s32, "r") __HU_LD1(NAME, Q, unsigned int, u32, "r")                      \
  __HU_LD1(NAME, Q, long long, s64, "l") __HU_LD1(NAME, Q, unsigned long long, u64, "l")          \
  __HU_LD2(NAME, Q, float2, float, f32, "f") __HU_LD4(NAME, Q, float4, float, f32, "f")           \
  __HU_LD2(NAME, Q, double2, double, f64, "d") __HU_LD2(NAME, Q, int2, int, s32, "r")             \
  __HU_LD4(NAME, Q, int4, int, s32, "r") __HU_LD2(NAME, Q, uint2, unsigned, u32, "r")             \
  __HU_LD4(NAME, Q, uint4, unsigned, u32, "r")
#define __HU_ST_ALL(NAME, Q)                                                                      \
  __HU_ST1(NAME, Q, float, f32, "f") __HU_ST1(NAME, Q, double, f64, "d")                          \
  __HU_ST1(NAME, Q, int, s32, "r") __HU_ST1(NAME, Q, unsigned int, u32, "r")                      \
  __HU_ST1(NAME, Q, long long, s64, "l") __HU_ST1(NAME, Q, unsigned long long, u64, "l")          \
  __HU_ST2(NAME, Q, float2, float, f32, "f") __HU_ST4(NAME, Q, float4, float, f32, "f")           \
  __HU_ST2(NAME, Q, double2, double, f64, "d") __HU_ST2(NAME, Q, int2, int, s32, "r")             \
  __HU_ST4(NAME, Q, int4, int, s32, "r") __HU_ST2(NAME, Q, uint2, unsigned, u32, "r")             \
  __HU_ST4(NAME, Q, uint4, unsigned, u32, "r")
__HU_LD_ALL(__ldg, nc)
__HU_LD_ALL(__ldcs, cs)
__HU_LD_ALL(__ldcg, cg)
__HU_LD_ALL(__ldca, ca)
__HU_LD_ALL(__ldlu, lu)
__HU_LD_ALL(__ldcv, cv)
__HU_ST_ALL(__stcs, cs)
__HU_ST_ALL(__stcg, cg)
__HU_ST_ALL(__stwb, wb)
__HU_ST_ALL(__stwt, wt)
#undef __HU_LD_ALL
#undef __HU_ST_ALL
#undef __HU_LD1
#undef __HU_ST1
#undef __HU_LD2
#undef __HU_ST2
#undef __HU_LD4
#undef __HU_ST4

// ---- clocks ----------------------------------------------------------------------------------
__HU_D long long clock64() { return __nvvm_read_ptx_sreg_clock64(); }
__HU_D long long wall_clock64() { return __nvvm_read_ptx_sreg_globaltimer(); }

#undef __HU_D
#endif // HIP_UNROLL_CUDA_PRELUDE_H
