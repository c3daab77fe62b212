// A 1-D blocktiled SGEMM in the style of siboehm's SGEMM_CUDA kernels (written for hip-unroll's
// tests): C = alpha * A * B + beta * C for row-major A (M x K), B (K x N); each thread computes
// TM results of a column. A template kernel over `const uint` tile sizes that the source does
// not instantiate: the spec names `sgemm_blocktiling<64, 64, 8, 8>`.
#include <algorithm>
#include <cassert>
#include <cuda_runtime.h>

typedef unsigned int uint;

#define CEIL_DIV(M, N) (((M) + (N)-1) / (N))

template <const uint BM, const uint BN, const uint BK, const uint TM>
__global__ void sgemm_blocktiling(int M, int N, int K, float alpha, const float* A,
                                  const float* B, float beta, float* C) {
    const uint cRow = blockIdx.y;
    const uint cCol = blockIdx.x;
    const uint threadCol = threadIdx.x % BN;
    const uint threadRow = threadIdx.x / BN;
    __shared__ float As[BM * BK];
    __shared__ float Bs[BK * BN];
    A += cRow * BM * K;
    B += cCol * BN;
    C += cRow * BM * N + cCol * BN;
    assert(BM * BK == blockDim.x);
    assert(BN * BK == blockDim.x);
    const uint innerColA = threadIdx.x % BK;
    const uint innerRowA = threadIdx.x / BK;
    const uint innerColB = threadIdx.x % BN;
    const uint innerRowB = threadIdx.x / BN;
    float threadResults[TM] = {0.0f};
    for (uint bkIdx = 0; bkIdx < K; bkIdx += BK) {
        As[innerRowA * BK + innerColA] = A[innerRowA * K + innerColA];
        Bs[innerRowB * BN + innerColB] = B[innerRowB * N + innerColB];
        __syncthreads();
        A += BK;
        B += BK * N;
        for (uint dotIdx = 0; dotIdx < BK; ++dotIdx) {
            float tmpB = Bs[dotIdx * BN + threadCol];
            for (uint resIdx = 0; resIdx < TM; ++resIdx) {
                threadResults[resIdx] += As[(threadRow * TM + resIdx) * BK + dotIdx] * tmpB;
            }
        }
        __syncthreads();
    }
    for (uint resIdx = 0; resIdx < TM; ++resIdx) {
        C[(threadRow * TM + resIdx) * N + threadCol] =
            alpha * threadResults[resIdx] + beta * C[(threadRow * TM + resIdx) * N + threadCol];
    }
}

// The launch geometry the host would use.
dim3 sgemm_grid(int M, int N) { return dim3(CEIL_DIV(N, 64), CEIL_DIV(M, 64)); }
int sgemm_threads() { return std::max((64 * 64) / 8, 1); }
