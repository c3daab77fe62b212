// More of the HIP/CUDA device API on the host, on top of testdata/transforms/hip_host.h, for
// bench/safety_corpus.py --execute: corpus kernels built as host C++ run one thread after the
// other. The stand-ins need not match the GPU (warp shuffles return the caller's own value,
// atomics are plain read-modify-writes): an original and its rewrite run under the same ones,
// deterministically, and must write the same bytes.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>

typedef hu_dim3 dim3;
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
#define __noinline__
#define __align__(n) alignas(n)
#define __CUDA_ARCH__ 800

template <class T> struct hu_v2 { T x, y; };
template <class T> struct hu_v3 { T x, y, z; };
template <class T> struct hu_v4 { T x, y, z, w; };
#define HU_VEC(name, T)                                                                          \
    typedef hu_v2<T> name##2;                                                                    \
    typedef hu_v3<T> name##3;                                                                    \
    typedef hu_v4<T> name##4;                                                                    \
    inline name##2 make_##name##2(T a, T b) { return {a, b}; }                                   \
    inline name##3 make_##name##3(T a, T b, T c) { return {a, b, c}; }                           \
    inline name##4 make_##name##4(T a, T b, T c, T d) { return {a, b, c, d}; }
HU_VEC(float, float)
HU_VEC(double, double)
HU_VEC(int, int)
HU_VEC(uint, unsigned)
HU_VEC(char, signed char)
HU_VEC(uchar, unsigned char)
HU_VEC(short, short)
HU_VEC(ushort, unsigned short)
HU_VEC(long, long)
HU_VEC(ulong, unsigned long)
HU_VEC(longlong, long long)
HU_VEC(ulonglong, unsigned long long)

template <class T> inline T atomicAdd(T* p, T v) { T o = *p; *p = o + v; return o; }
template <class T> inline T atomicSub(T* p, T v) { T o = *p; *p = o - v; return o; }
template <class T> inline T atomicMax(T* p, T v) { T o = *p; *p = o > v ? o : v; return o; }
template <class T> inline T atomicMin(T* p, T v) { T o = *p; *p = o < v ? o : v; return o; }
template <class T> inline T atomicExch(T* p, T v) { T o = *p; *p = v; return o; }
template <class T> inline T atomicCAS(T* p, T c, T v) { T o = *p; if (o == c) *p = v; return o; }
template <class T> inline T atomicAnd(T* p, T v) { T o = *p; *p = o & v; return o; }
template <class T> inline T atomicOr(T* p, T v) { T o = *p; *p = o | v; return o; }
template <class T> inline T atomicXor(T* p, T v) { T o = *p; *p = o ^ v; return o; }
template <class T> inline T atomicInc(T* p, T v) { T o = *p; *p = o >= v ? 0 : o + 1; return o; }

template <class T> inline T __ldg(const T* p) { return *p; }
template <class T> inline T __shfl(T v, int, int = 64) { return v; }
template <class T> inline T __shfl_up(T v, unsigned, int = 64) { return v; }
template <class T> inline T __shfl_down(T v, unsigned, int = 64) { return v; }
template <class T> inline T __shfl_xor(T v, int, int = 64) { return v; }
template <class M, class T> inline T __shfl_sync(M, T v, int, int = 32) { return v; }
template <class M, class T> inline T __shfl_up_sync(M, T v, unsigned, int = 32) { return v; }
template <class M, class T> inline T __shfl_down_sync(M, T v, unsigned, int = 32) { return v; }
template <class M, class T> inline T __shfl_xor_sync(M, T v, int, int = 32) { return v; }
template <class M> inline unsigned long long __ballot_sync(M m, int p) { return p ? (unsigned long long)m : 0; }
inline unsigned long long __ballot(int p) { return p ? 1ull : 0ull; }
template <class M> inline int __any_sync(M, int p) { return p; }
template <class M> inline int __all_sync(M, int p) { return p; }
inline int __any(int p) { return p; }
inline int __all(int p) { return p; }
inline void __syncwarp(unsigned = 0xffffffffu) {}
inline void __threadfence() {}
inline void __threadfence_block() {}
inline int __syncthreads_count(int p) { return p; }
inline int __syncthreads_and(int p) { return p; }
inline int __syncthreads_or(int p) { return p; }
inline int __popc(unsigned v) { return __builtin_popcount(v); }
inline int __popcll(unsigned long long v) { return __builtin_popcountll(v); }
inline int __clz(int v) { return v ? __builtin_clz((unsigned)v) : 32; }
inline int __ffs(int v) { return __builtin_ffs(v); }
inline unsigned __brev(unsigned v) {
    unsigned r = 0;
    for (int i = 0; i < 32; ++i) r |= ((v >> i) & 1u) << (31 - i);
    return r;
}
inline unsigned __lane_id() { return threadIdx.x % 64; }
inline float __fdividef(float a, float b) { return a / b; }
inline float __expf(float x) { return std::exp(x); }
inline float __logf(float x) { return std::log(x); }
inline float __sinf(float x) { return std::sin(x); }
inline float __cosf(float x) { return std::cos(x); }
inline float __powf(float a, float b) { return std::pow(a, b); }
inline float __frcp_rn(float x) { return 1.0f / x; }
inline float __fsqrt_rn(float x) { return std::sqrt(x); }
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fmaf_rn(float a, float b, float c) { return std::fma(a, b, c); }
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }
inline float __saturatef(float x) { return x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x); }
inline float __int_as_float(int v) { float f; std::memcpy(&f, &v, 4); return f; }
inline int __float_as_int(float f) { int v; std::memcpy(&v, &f, 4); return v; }
inline unsigned __float_as_uint(float f) { unsigned v; std::memcpy(&v, &f, 4); return v; }
inline float __uint_as_float(unsigned v) { float f; std::memcpy(&f, &v, 4); return f; }
inline int __float2int_rn(float x) { return (int)std::nearbyint(x); }
inline int __float2int_rz(float x) { return (int)x; }
inline int __mul24(int a, int b) { return a * b; }
inline unsigned __umul24(unsigned a, unsigned b) { return a * b; }
inline long long clock64() { return 0; }
using std::abs;
using std::ceil;
using std::exp;
using std::fabs;
using std::floor;
using std::log;
using std::pow;
using std::sqrt;
