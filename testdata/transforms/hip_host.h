// Host stand-ins for HIP's kernel language, so that kernels compile as plain C++ with g++ and
// run sequentially over a grid of threads (for hip-unroll's differential tests).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __restrict__
#define __shared__ static
#define __constant__

struct hu_dim3 {
    unsigned x = 1, y = 1, z = 1;
};
static hu_dim3 threadIdx, blockIdx, blockDim, gridDim;
static const int warpSize = 64;
inline void __syncthreads() {}
using std::max;
using std::min;

// Run `kernel(args...)` for every thread of the grid, one after the other.
template <class K, class... A>
void hu_launch(hu_dim3 grid, hu_dim3 block, K kernel, A... args) {
    gridDim = grid;
    blockDim = block;
    for (unsigned bz = 0; bz < grid.z; ++bz)
        for (unsigned by = 0; by < grid.y; ++by)
            for (unsigned bx = 0; bx < grid.x; ++bx)
                for (unsigned tz = 0; tz < block.z; ++tz)
                    for (unsigned ty = 0; ty < block.y; ++ty)
                        for (unsigned tx = 0; tx < block.x; ++tx) {
                            blockIdx = {bx, by, bz};
                            threadIdx = {tx, ty, tz};
                            kernel(args...);
                        }
}

// ---- Observation helpers for generated loops ----------------------------------------------

// Every value the induction variable takes, in order (as 64-bit two's complement).
static std::vector<unsigned long long> hu_log;
static size_t hu_cap = 1 << 16;
struct hu_overrun {};

template <class T>
inline void hu_trace(T v) {
    if (hu_log.size() >= hu_cap) throw hu_overrun{};
    hu_log.push_back((unsigned long long)(long long)v);
}

// Marks the final value of an induction variable declared outside its loop.
template <class T>
inline void hu_trace_final(T v) {
    hu_log.push_back(0xF1A1F1A1F1A1F1A1ull);
    hu_log.push_back((unsigned long long)(long long)v);
}

template <class T>
inline unsigned hu_slot(T v) {
    return (unsigned)((unsigned long long)(long long)v % 61u);
}

template <class T>
inline bool hu_skip(T v) {
    return (((unsigned long long)(long long)v * 2654435761ull) >> 7) % 5u == 0;
}
