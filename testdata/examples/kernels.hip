// Example HIP kernels for `hip-unroll check`: a mix of loops that can and cannot be unrolled.
#include <hip/hip_runtime.h>

#define TILE 16

// Tiled matrix multiply: the k-loop over tiles contains barriers, the inner product does not.
__global__ void matmul_tiled(const float* A, const float* B, float* C, int n) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int row = blockIdx.y * TILE + threadIdx.y;
    int col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.0f;
#pragma unroll 4
    for (int t = 0; t < n / TILE; ++t) {
        As[threadIdx.y][threadIdx.x] = A[row * n + t * TILE + threadIdx.x];
        Bs[threadIdx.y][threadIdx.x] = B[(t * TILE + threadIdx.y) * n + col];
        __syncthreads();
        for (int k = 0; k < TILE; ++k) {
            acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        }
        __syncthreads();
    }
    C[row * n + col] = acc;
}

__device__ void bump(int* counter) { atomicAdd(counter, 1); }

// Histogram: atomics through a helper block the loop.
__global__ void histogram(const int* data, int n, int* bins) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        bump(&bins[data[i] & 255]);
    }
}

// Wave reduction written for 32-lane warps: wrong on wave64 AMD GPUs.
__global__ void reduce_sum(const float* in, float* out, int n) {
    extern __shared__ float partial[];
    float v = 0.0f;
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        v += in[i];
    }
    for (int offset = 16; offset > 0; offset /= 2) {
        v += __shfl_down(v, offset, 32);
    }
    if (threadIdx.x % 32 == 0) {
        partial[threadIdx.x / 32] = v;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        float s = 0.0f;
        for (int w = 0; w < blockDim.x / 32; ++w) {
            s += partial[w];
        }
        *out = s;
    }
}

// Early exit: the search loop returns from inside.
__global__ void find_first(const int* keys, int n, int key, int* where) {
    for (int i = 0; i < n; ++i) {
        if (keys[i] == key) {
            *where = i;
            return;
        }
    }
}
