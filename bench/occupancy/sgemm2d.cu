// A 2-D blocktiled SGEMM written for hip-unroll's GPU checks (bench/gpu_occupancy.sh): each
// thread of a 256-thread block keeps a TM x TN tile of C in registers, so unrolling its inner
// product loop trades registers (and warps per SM) for instruction-level parallelism: the case
// where a static occupancy gate would veto a variant a measurement may accept.
// C = alpha * A * B + beta * C, row-major A (M x K), B (K x N), M, N multiples of BM, BN.
#include <cuda_runtime.h>

template <int BM, int BN, int BK, int TM, int TN>
__global__ void __launch_bounds__((BM * BN) / (TM * TN))
    sgemm_2d(int M, int N, int K, float alpha, const float* A, const float* B, float beta,
             float* C) {
    constexpr int threads = (BM * BN) / (TM * TN);
    const int tid = threadIdx.x;
    const int tileRow = tid / (BN / TN);
    const int tileCol = tid % (BN / TN);
    __shared__ float As[BK * BM];  // transposed: As[k * BM + row]
    __shared__ float Bs[BK * BN];
    A += blockIdx.y * BM * K;
    B += blockIdx.x * BN;
    C += blockIdx.y * BM * N + blockIdx.x * BN;
    float acc[TM * TN] = {0.0f};
    float a[TM];
    float b[TN];
    for (int k0 = 0; k0 < K; k0 += BK) {
        for (int i = tid; i < BM * BK; i += threads) {
            As[(i % BK) * BM + i / BK] = A[(i / BK) * K + i % BK];
        }
        for (int i = tid; i < BK * BN; i += threads) {
            Bs[i] = B[(i / BN) * N + i % BN];
        }
        __syncthreads();
        A += BK;
        B += BK * N;
        for (int k = 0; k < BK; ++k) {
            for (int m = 0; m < TM; ++m) {
                a[m] = As[k * BM + tileRow * TM + m];
            }
            for (int n = 0; n < TN; ++n) {
                b[n] = Bs[k * BN + tileCol * TN + n];
            }
            for (int m = 0; m < TM; ++m) {
                for (int n = 0; n < TN; ++n) {
                    acc[m * TN + n] += a[m] * b[n];
                }
            }
        }
        __syncthreads();
    }
    for (int m = 0; m < TM; ++m) {
        for (int n = 0; n < TN; ++n) {
            float* c = &C[(tileRow * TM + m) * N + tileCol * TN + n];
            *c = alpha * acc[m * TN + n] + beta * *c;
        }
    }
}

// A runtime-depth variant: the same tile, but the K loop of each block runs over a runtime
// depth in steps of one (no shared memory), the kind of loop nvcc leaves rolled by default.
__global__ void __launch_bounds__(256)
    sgemm_regtile(int M, int N, int K, const float* A, const float* B, float* C) {
    const int row0 = (blockIdx.y * 16 + threadIdx.x / 16) * 8;
    const int col0 = (blockIdx.x * 16 + threadIdx.x % 16) * 8;
    float acc[64] = {0.0f};
    for (int k = 0; k < K; ++k) {
        float a[8];
        float b[8];
        for (int m = 0; m < 8; ++m) {
            a[m] = A[(row0 + m) * K + k];
        }
        for (int n = 0; n < 8; ++n) {
            b[n] = B[k * N + col0 + n];
        }
        for (int m = 0; m < 8; ++m) {
            for (int n = 0; n < 8; ++n) {
                acc[m * 8 + n] += a[m] * b[n];
            }
        }
    }
    for (int m = 0; m < 8; ++m) {
        for (int n = 0; n < 8; ++n) {
            C[(row0 + m) * N + col0 + n] = acc[m * 8 + n];
        }
    }
}
